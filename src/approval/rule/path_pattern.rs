//! Path patterns: gitignore-style globs relative to the workspace root
//! (`read(./secrets/**)`, `write(src/**)`), absolute (`//etc/**`) or from
//! the home directory (`~/…`); the path a rule names literally; and the
//! session grant of one exact path.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::gitignore::{Gitignore, GitignoreBuilder};

use super::{Rule, RuleTarget, Specifier};
use crate::fs::home_dir;

impl Rule {
    /// The path a path rule names literally, absolute (`read(//srv/x/**)`,
    /// `read(~/private)`) or anchored at `root` (`read(./secrets/**)`,
    /// `read(config/keys)`): its specifier without glob characters, once a
    /// trailing `/**` is taken off. A bare name (`read(.env)`) matches at
    /// any depth and names no one path.
    pub(crate) fn literal_path(&self, root: &Path) -> Option<PathBuf> {
        if let Some(path) = self.literal_absolute_path() {
            return Some(path);
        }
        let spec = self.path_specifier()?;
        if spec.contains(['*', '?', '[', ']', '{', '}', '\\', '!']) || spec.starts_with("//") {
            return None;
        }
        let relative = match spec.strip_prefix("./") {
            Some(rest) => rest,
            None if spec.trim_end_matches('/').contains('/') => spec.trim_start_matches('/'),
            None => return None,
        };
        (!relative.is_empty() && !relative.split('/').any(|part| part == ".."))
            .then(|| root.join(relative))
    }

    /// The specifier of a path rule (`write(src/**)` gives `src`): the text
    /// between the parentheses, a trailing `/**` taken off.
    fn path_specifier(&self) -> Option<&str> {
        let spec = self
            .text
            .strip_prefix(self.tool.as_str())?
            .strip_prefix('(')?
            .strip_suffix(')')?;
        Some(spec.strip_suffix("/**").unwrap_or(spec))
    }

    /// The absolute path a path rule names literally (`read(//srv/x/**)`,
    /// `read(~/private)`): its specifier without glob characters, once a
    /// trailing `/**` is taken off.
    pub(crate) fn literal_absolute_path(&self) -> Option<PathBuf> {
        let spec = self.path_specifier()?;
        if spec.contains(['*', '?', '[', ']', '{', '}', '\\', '!']) {
            return None;
        }
        if let Some(abs) = spec.strip_prefix("//") {
            return Some(PathBuf::from(format!("/{abs}")));
        }
        let rest = spec.strip_prefix("~/")?;
        Some(home_dir()?.join(rest))
    }

    /// A rule matching exactly one path (root-relative, `/`-separated, or
    /// absolute), for session grants.
    pub(crate) fn exact_path(tool: &str, key: &str, absolute: bool) -> Self {
        let escaped = escape_glob(key);
        let text = if absolute {
            format!("{tool}(//{escaped})")
        } else {
            format!("{tool}(/{escaped})")
        };
        let pattern = if absolute {
            PathPattern::build(&format!("//{escaped}"))
        } else {
            PathPattern::build(&format!("/{escaped}"))
        };
        match pattern {
            Ok(p) => Self {
                text,
                tool: tool.to_owned(),
                target: RuleTarget::of(tool),
                specifier: Some(Specifier::Path(p)),
                outside_sandbox: false,
            },
            // An escaped literal always compiles; if not, grant nothing
            // broader than the tool name with an impossible path.
            Err(_) => Self {
                text,
                tool: tool.to_owned(),
                target: RuleTarget::of(tool),
                specifier: Some(Specifier::ExactCommand(String::new())),
                outside_sandbox: false,
            },
        }
    }

    /// Whether the rule's path pattern matches one of the path keys.
    pub(crate) fn matches_path(&self, keys: &PathKeys) -> Option<bool> {
        match self.path_scope() {
            PathScope::Every => Some(true),
            PathScope::Matching(p) => Some(p.matches(keys)),
            PathScope::NoPath => None,
        }
    }

    /// Which paths the rule covers.
    pub(crate) fn path_scope(&self) -> PathScope<'_> {
        match &self.specifier {
            None => PathScope::Every,
            Some(Specifier::Path(p)) | Some(Specifier::Either(_, Some(p))) => {
                PathScope::Matching(p)
            }
            _ => PathScope::NoPath,
        }
    }
}

/// Which paths a rule covers ([`Rule::path_scope`]).
pub(crate) enum PathScope<'a> {
    /// Every path: the rule names its tool alone (`read`).
    Every,
    /// The paths its pattern matches.
    Matching(&'a PathPattern),
    /// None: the rule is not about paths (a command pattern).
    NoPath,
}

/// One path as the matchers see it.
#[derive(Clone, Debug, Default)]
pub(crate) struct PathKeys {
    /// Root-relative forms (`src/a.rs`), lexical and through symlinks,
    /// for paths inside the workspace root.
    pub relative: Vec<PathBuf>,
    /// Absolute forms without the leading `/` (`etc/passwd`).
    pub absolute: Vec<PathBuf>,
    /// Whether the path is an existing directory.
    pub is_dir: bool,
    /// Whether every directory above the path (up to the root, and in
    /// each form) was judged already and no pattern covered it, as in a
    /// walk that descends only into directories it let through: then only
    /// the path itself is matched, not each of its parents again.
    pub parents_judged: bool,
}

/// A gitignore-style path glob.
#[derive(Clone, Debug)]
pub(crate) struct PathPattern {
    matcher: Gitignore,
    absolute: bool,
    /// The gitignore lines the matcher was built from (one, but for a
    /// [`PathPattern::any_of`] union).
    lines: Arc<[Box<str>]>,
}

/// A file name no real pattern targets: if it matches inside a directory,
/// the pattern covers every name in that directory.
const PROBE: &str = "\u{1}agentcore-probe";

impl PathPattern {
    pub(crate) fn build(spec: &str) -> Result<Self, String> {
        if spec.starts_with('!') {
            return Err(
                "negated patterns (`!…`) are not supported; write an allow rule for what you want to let through instead"
                    .to_owned(),
            );
        }
        let (line, absolute) = if let Some(abs) = spec.strip_prefix("//") {
            (format!("/{abs}"), true)
        } else if let Some(home) = spec.strip_prefix("~/") {
            let Some(dir) = home_dir() else {
                return Err(
                    "`~/` was used but the home directory is unknown (HOME is not set); write the absolute path as `//path/**`"
                        .to_owned(),
                );
            };
            let dir = dir.to_string_lossy();
            (format!("{}/{home}", dir.trim_end_matches('/')), true)
        } else if let Some(rel) = spec.strip_prefix("./") {
            (format!("/{rel}"), false)
        } else {
            (spec.to_owned(), false)
        };
        if line.contains('\0') {
            return Err("a path pattern cannot contain a NUL byte".to_owned());
        }
        let mut builder = GitignoreBuilder::new(".");
        builder
            .add_line(None, &line)
            .map_err(|e| format!("the path pattern is not a valid glob ({e}); write a gitignore-style glob such as `src/**` or `./secrets/**`"))?;
        let matcher = builder
            .build()
            .map_err(|e| format!("the path pattern is not a valid glob ({e}); write a gitignore-style glob such as `src/**`"))?;
        Ok(Self {
            matcher,
            absolute,
            lines: Arc::new([line.into_boxed_str()]),
        })
    }

    /// Patterns that match a path exactly when one of `patterns` does,
    /// with one matcher for the relative ones and one for the absolute
    /// ones: a path is then matched twice at most, not once per pattern.
    ///
    /// Sound because no pattern is negated (`build` refuses `!…`): in a
    /// gitignore without whitelist lines, a path is ignored exactly when
    /// one of its lines matches it (or a parent). Where a union cannot be
    /// built (its program would pass the size limit), its patterns are
    /// kept one by one.
    pub(crate) fn any_of<'a>(patterns: impl IntoIterator<Item = &'a PathPattern>) -> Vec<Self> {
        let patterns: Vec<&PathPattern> = patterns.into_iter().collect();
        let mut out = Vec::new();
        for absolute in [false, true] {
            let side: Vec<&PathPattern> = patterns
                .iter()
                .copied()
                .filter(|p| p.absolute == absolute)
                .collect();
            match side.as_slice() {
                [] => {}
                [one] => out.push((*one).clone()),
                _ => match Self::union(&side, absolute) {
                    Some(union) => out.push(union),
                    None => out.extend(side.into_iter().cloned()),
                },
            }
        }
        out
    }

    fn union(patterns: &[&PathPattern], absolute: bool) -> Option<Self> {
        let lines: Arc<[Box<str>]> = patterns
            .iter()
            .flat_map(|p| p.lines.iter().cloned())
            .collect();
        let mut builder = GitignoreBuilder::new(".");
        for line in lines.iter() {
            builder.add_line(None, line).ok()?;
        }
        let matcher = builder.build().ok()?;
        Some(Self {
            matcher,
            absolute,
            lines,
        })
    }

    /// Whether any form of the path, or a directory containing it, matches.
    pub(crate) fn matches(&self, keys: &PathKeys) -> bool {
        let forms = if self.absolute {
            &keys.absolute
        } else {
            &keys.relative
        };
        forms
            .iter()
            .any(|key| self.matches_key(key, keys.is_dir, keys.parents_judged))
    }

    fn matches_key(&self, key: &Path, is_dir: bool, parents_judged: bool) -> bool {
        if key.as_os_str().is_empty() || key.has_root() {
            // The root itself: only a pattern covering every name in it.
            return !key.has_root() && self.matches_key(Path::new(PROBE), false, false);
        }
        // With the parents judged already, a match on one of them cannot
        // be: the path alone decides (and a directory's probe, whose
        // parents are the directory and its own).
        let matched = |path: &Path, is_dir: bool| {
            if parents_judged {
                self.matcher.matched(path, is_dir).is_ignore()
            } else {
                self.matcher
                    .matched_path_or_any_parents(path, is_dir)
                    .is_ignore()
            }
        };
        if matched(key, is_dir) {
            return true;
        }
        is_dir && matched(&key.join(PROBE), false)
    }
}

fn escape_glob(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\' | '!' | '#' | '{' | '}') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(rel: &str, is_dir: bool) -> PathKeys {
        PathKeys {
            relative: vec![PathBuf::from(rel)],
            absolute: vec![PathBuf::from("ws").join(rel)],
            is_dir,
            parents_judged: false,
        }
    }

    #[test]
    fn literal_paths_of_rules() {
        let root = Path::new("/w");
        let lit = |r: &str| r.parse::<Rule>().unwrap().literal_path(root);
        assert_eq!(lit("read(./secrets/**)"), Some(PathBuf::from("/w/secrets")));
        assert_eq!(
            lit("read(config/keys)"),
            Some(PathBuf::from("/w/config/keys"))
        );
        assert_eq!(lit("read(//srv/x/**)"), Some(PathBuf::from("/srv/x")));
        assert_eq!(lit("read(.env)"), None, "any depth");
        assert_eq!(lit("read(**/*.pem)"), None);
        assert_eq!(lit("read(./a/*/b)"), None);
        assert_eq!(lit("read(./../up)"), None);
    }

    #[test]
    fn path_patterns() {
        let p = PathPattern::build("./secrets/**").unwrap();
        assert!(p.matches(&keys("secrets/a.txt", false)));
        assert!(p.matches(&keys("secrets", true)));
        assert!(p.matches(&keys("secrets/deep", true)));
        assert!(!p.matches(&keys("src/secrets", true)));
        assert!(!p.matches(&keys("", true)));
        let any = PathPattern::build("*.key").unwrap();
        assert!(any.matches(&keys("a/b/c.key", false)));
        assert!(!any.matches(&keys("a", true)));
        let dir = PathPattern::build("target").unwrap();
        assert!(dir.matches(&keys("target/debug/x", false)));
        let abs = PathPattern::build("//ws/secrets/**").unwrap();
        assert!(abs.matches(&keys("secrets/x", false)));
    }

    /// Patterns any of which may match, as the walk filter joins them.
    const JOINABLE: [&str; 12] = [
        "./secrets/**",
        "*.key",
        "target",
        ".env*",
        "**/.ssh/**",
        ".git/**",
        "./a/*/c",
        "//ws/secrets/**",
        "//**/.git",
        "b/c",
        "/top",
        "[ab]?/**",
    ];

    proptest::proptest! {
        /// The joined patterns match a path exactly when one of the
        /// patterns does, in every form a walk gives: a file or a folder,
        /// its parents judged or not, the root itself.
        #[test]
        fn joined_patterns_match_when_one_of_them_does(
            chosen in proptest::collection::vec(proptest::bool::ANY, JOINABLE.len()),
            parts in proptest::collection::vec(
                proptest::sample::select(vec!["a", "b", "c", "ab", "secrets", "top", ".git", ".ssh", ".env.x", "x.key", "target", "src", "bc"]),
                0..5,
            ),
            is_dir in proptest::bool::ANY,
            parents_judged in proptest::bool::ANY,
        ) {
            let patterns: Vec<PathPattern> = JOINABLE
                .iter()
                .zip(&chosen)
                .filter(|(_, on)| **on)
                .map(|(spec, _)| PathPattern::build(spec).unwrap())
                .collect();
            let joined = PathPattern::any_of(&patterns);
            proptest::prop_assert!(joined.len() <= 2);
            let mut keys = keys(&parts.join("/"), is_dir);
            keys.parents_judged = parents_judged;
            let one_by_one = patterns.iter().any(|p| p.matches(&keys));
            let as_one = joined.iter().any(|p| p.matches(&keys));
            proptest::prop_assert_eq!(as_one, one_by_one, "{:?} on {:?}", chosen, keys);
        }
    }

    /// With its parents judged (as a walk judges each level before it
    /// descends), a path matches exactly when it would with them, given
    /// that none of them matched.
    #[test]
    fn a_path_whose_parents_were_judged_matches_alone() {
        let patterns = &JOINABLE[..7];
        let paths = [
            ("secrets", true),
            ("src", true),
            ("src/a.key", false),
            ("src/.env.local", false),
            ("home", true),
            ("home/.ssh", true),
            ("home/.ssh/id", false),
            ("a", true),
            ("a/b", true),
            ("a/b/c", false),
            ("a/b/d", false),
            ("deep/er/target", true),
            ("deep/er/x.rs", false),
        ];
        for pattern in patterns {
            let p = PathPattern::build(pattern).unwrap();
            for (path, is_dir) in paths {
                let parents_pass = Path::new(path)
                    .ancestors()
                    .skip(1)
                    .filter(|a| !a.as_os_str().is_empty())
                    .all(|a| !p.matches(&keys(&a.to_string_lossy(), true)));
                if !parents_pass {
                    continue;
                }
                let mut judged = keys(path, is_dir);
                judged.parents_judged = true;
                assert_eq!(
                    p.matches(&judged),
                    p.matches(&keys(path, is_dir)),
                    "{pattern} on {path}"
                );
            }
        }
    }
}
