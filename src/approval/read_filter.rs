//! [`ReadFilter`]: read-deny rules for the search tools' results.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::engine::ApprovalEngine;
use super::mode::Mode;
use super::paths::PathResolver;
use super::rule::{PathKeys, PathPattern, PathScope, Rule};
use crate::fs::workspace::EntryKind;

/// Entries [`ReadFilter::hidden_paths`] looks at, at most, per session.
pub const HIDDEN_WALK_LIMIT: usize = 200_000;

/// The `read(…)` deny rules of a policy, for tools that list or search many
/// files (glob, grep, ls): a denied file is left out of their results, and
/// a denied directory is not descended into.
///
/// The gate already denies a search *rooted* inside a denied path; this is
/// for what a search rooted elsewhere walks over. Cheap to clone; get one
/// from [`ApprovalEngine::read_filter`](super::ApprovalEngine::read_filter).
///
/// ```
/// use std::path::Path;
/// use agentcore::approval::ApprovalEngine;
/// use agentcore::config::Policy;
///
/// let root = std::env::temp_dir();
/// let policy = Policy::from_toml(r#"deny = ["read(./secrets/**)"]"#).unwrap();
/// let filter = ApprovalEngine::new(&root).with_policy(&policy).read_filter();
/// assert!(filter.is_denied(&root.join("secrets/key.pem")));
/// assert!(!filter.is_denied(&root.join("src/main.rs")));
/// ```
#[derive(Clone)]
pub struct ReadFilter {
    resolver: Arc<PathResolver>,
    rules: Arc<[Rule]>,
}

impl ReadFilter {
    pub(crate) fn new(resolver: Arc<PathResolver>, rules: Vec<Rule>) -> Self {
        Self {
            resolver,
            rules: rules.into(),
        }
    }

    /// A filter that denies nothing.
    pub fn none() -> Self {
        Self::new(Arc::new(PathResolver::new(Path::new("/"))), Vec::new())
    }

    /// True when there are no read-deny rules: a tool may skip the checks.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// What a command sandbox hides for these rules: under each of `roots`,
    /// the topmost files and directories a rule covers (as they exist now;
    /// at most [`HIDDEN_WALK_LIMIT`] entries are looked at, symbolic links
    /// not followed), and the paths the rules name literally, whether or
    /// not they exist yet (`read(./secrets/**)`, `read(//srv/secrets/**)`,
    /// `read(~/private)`).
    pub fn hidden_paths(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        // What the rules name literally, also before it exists: hidden from
        // the first command that starts after it appears.
        let root = self.resolver.root();
        let mut hidden: Vec<PathBuf> = self
            .rules
            .iter()
            .filter_map(|rule| rule.literal_path(root))
            .collect();
        if self.rules.is_empty() {
            return hidden;
        }
        let mut seen = 0usize;
        let mut stack: Vec<PathBuf> = roots.to_vec();
        while let Some(dir) = stack.pop() {
            let Ok(entries) = fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                seen += 1;
                if seen > HIDDEN_WALK_LIMIT {
                    return hidden;
                }
                let path = entry.path();
                if self.is_denied(&path) {
                    hidden.push(path);
                } else if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    stack.push(path);
                }
            }
        }
        hidden
    }

    /// Whether a read-deny rule covers `path` (absolute, or relative to the
    /// workspace root). One `lstat`; a symlink is also judged by its
    /// target. For a directory, true means skip it and everything in it.
    pub fn is_denied(&self, path: &Path) -> bool {
        if self.rules.is_empty() {
            return false;
        }
        let meta = fs::symlink_metadata(self.resolver.lexical(path));
        let symlink = meta.as_ref().is_ok_and(|m| m.file_type().is_symlink());
        let keys = if symlink {
            self.resolver.keys(path, true)
        } else {
            let is_dir = meta.as_ref().is_ok_and(fs::Metadata::is_dir);
            self.resolver
                .keys_of(&[self.resolver.lexical(path)], is_dir)
        };
        self.rules
            .iter()
            .any(|rule| rule.matches_path(&keys) == Some(true))
    }
}

/// What the walks of glob, grep and ls leave out: every path whose
/// reading through the `read` tool would not simply be allowed.
///
/// It mirrors the engine's verdict on a read of one path, rule by rule:
/// a `read` deny rule covering it (every mode); unless the session is in
/// bypass mode (read at each call, so a mode switch applies at once), a
/// `read` ask rule covering it or a protected path ([`PROTECTED_PATHS`]:
/// `.git/**`, `.env*`, `**/.ssh/**`). A walk that listed such a file, or
/// printed its lines, would hand out what `read` asks the user for. A
/// directory left out is not descended into.
///
/// Get one from [`ApprovalEngine::walk_filter`]; cheap to clone.
///
/// ```
/// use std::path::Path;
/// use agentcore::approval::{ApprovalEngine, Mode};
/// use agentcore::config::Policy;
///
/// let root = std::env::temp_dir();
/// let policy = Policy::from_toml(r#"deny = ["read(./secrets/**)"]"#).unwrap();
/// let engine = ApprovalEngine::new(&root).with_policy(&policy);
/// let filter = engine.walk_filter();
/// assert!(filter.excludes(&root.join("secrets/key.pem")));
/// assert!(filter.excludes(&root.join(".env")));
/// assert!(!filter.excludes(&root.join("src/main.rs")));
/// engine.set_mode(Mode::Bypass);
/// assert!(!filter.excludes(&root.join(".env")));
/// assert!(filter.excludes(&root.join("secrets/key.pem")));
/// ```
///
/// [`PROTECTED_PATHS`]: crate::access::PROTECTED_PATHS
#[derive(Clone)]
pub struct WalkFilter {
    engine: ApprovalEngine,
    resolver: Arc<PathResolver>,
    deny: Arc<[Rule]>,
    ask: Arc<[Rule]>,
    /// What the deny rules cover, and what the ask rules and the protected
    /// paths do, each matched as one ([`Cover`]).
    covers: Arc<(Cover, Cover)>,
}

/// The paths a set of rules covers, matched as one: a rule without a path
/// covers every path, and the patterns of the others are joined
/// ([`PathPattern::any_of`]), so an entry is matched once per form, not
/// once per rule.
struct Cover {
    every: bool,
    patterns: Vec<PathPattern>,
}

impl Cover {
    fn of<'a>(rules: &'a [Rule], more: impl IntoIterator<Item = &'a PathPattern>) -> Self {
        let mut every = false;
        let mut patterns = Vec::new();
        for rule in rules {
            match rule.path_scope() {
                PathScope::Every => every = true,
                PathScope::Matching(p) => patterns.push(p),
                PathScope::NoPath => {}
            }
        }
        patterns.extend(more);
        Self {
            every,
            patterns: PathPattern::any_of(patterns),
        }
    }

    fn is_empty(&self) -> bool {
        !self.every && self.patterns.is_empty()
    }

    fn covers(&self, keys: &PathKeys) -> bool {
        self.every || self.patterns.iter().any(|p| p.matches(keys))
    }
}

impl WalkFilter {
    pub(crate) fn new(
        engine: ApprovalEngine,
        resolver: Arc<PathResolver>,
        deny: Vec<Rule>,
        ask: Vec<Rule>,
        protected: Vec<(PathPattern, PathPattern)>,
    ) -> Self {
        let covers = (
            Cover::of(&deny, []),
            Cover::of(
                &ask,
                protected
                    .iter()
                    .flat_map(|(relative, absolute)| [relative, absolute]),
            ),
        );
        Self {
            engine,
            resolver,
            deny: deny.into(),
            ask: ask.into(),
            covers: Arc::new(covers),
        }
    }

    /// Whether walks leave `path` (absolute, or relative to the workspace
    /// root) out: reading it would be denied or would ask. One `lstat`; a
    /// symlink is also judged by its target, as a read of it would be. For
    /// a directory, true means skip it and everything in it.
    pub fn excludes(&self, path: &Path) -> bool {
        self.excludes_with(|| self.keys(path))
    }

    /// [`WalkFilter::excludes`] for an entry a walk met, of `kind` (from
    /// its directory's listing, symbolic links not followed), in a walk
    /// that judged every directory above it and descends only into those
    /// let through (and whose start was not left out): no `lstat` of the
    /// path, and the rules are matched against the path alone, not each
    /// of its parents again. A symlink is judged by its target too, as
    /// always.
    pub fn excludes_entry(&self, path: &Path, kind: EntryKind) -> bool {
        self.excludes_with(|| match kind {
            EntryKind::Symlink => self.resolver.keys(path, true),
            kind => {
                let mut keys = self
                    .resolver
                    .keys_of(&[self.resolver.lexical(path)], kind == EntryKind::Dir);
                keys.parents_judged = true;
                keys
            }
        })
    }

    fn excludes_with(&self, keys: impl FnOnce() -> PathKeys) -> bool {
        let bypass = self.engine.mode() == Mode::Bypass;
        let (deny, ask) = &*self.covers;
        if deny.is_empty() && (bypass || ask.is_empty()) {
            return false;
        }
        let keys = keys();
        if deny.covers(&keys) {
            return true;
        }
        !bypass && ask.covers(&keys)
    }

    fn keys(&self, path: &Path) -> PathKeys {
        let lexical = self.resolver.lexical(path);
        let meta = fs::symlink_metadata(&lexical);
        if meta.as_ref().is_ok_and(|m| m.file_type().is_symlink()) {
            self.resolver.keys(path, true)
        } else {
            let is_dir = meta.as_ref().is_ok_and(fs::Metadata::is_dir);
            self.resolver.keys_of(&[lexical], is_dir)
        }
    }
}

impl fmt::Debug for WalkFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WalkFilter")
            .field(
                "deny",
                &self.deny.iter().map(Rule::as_str).collect::<Vec<_>>(),
            )
            .field(
                "ask",
                &self.ask.iter().map(Rule::as_str).collect::<Vec<_>>(),
            )
            .field(
                "matchers",
                &(self.covers.0.patterns.len() + self.covers.1.patterns.len()),
            )
            .finish()
    }
}

impl Default for ReadFilter {
    fn default() -> Self {
        Self::none()
    }
}

impl fmt::Debug for ReadFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.rules.iter().map(Rule::as_str))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::Access;
    use crate::approval::{RuleKind, Verdict};

    /// The filter agrees with the engine's verdict on a `read` of each
    /// path, in every mode: it leaves out exactly what would not simply be
    /// allowed.
    #[test]
    fn the_walk_filter_mirrors_the_verdict_on_a_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let files = [
            ".env",
            ".env.local",
            "app/.env.production",
            "home/.ssh/id_rsa",
            ".git/config",
            "secrets/x",
            "private/notes.txt",
            "src/main.rs",
            "src/env.rs",
            "docs/.envelope",
        ];
        for f in files {
            let p = root.join(f);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, "x").unwrap();
        }
        let rule = |text: &str| text.parse::<Rule>().unwrap();
        let engine = ApprovalEngine::new(root)
            .with_rule(RuleKind::Ask, rule("read(./private/**)"))
            .with_rule(RuleKind::Deny, rule("read(./secrets/**)"))
            .with_rule(RuleKind::Deny, rule("bash(rm *)"));
        let filter = engine.walk_filter();
        let dirs = [
            "app",
            "home",
            "home/.ssh",
            "secrets",
            "private",
            "src",
            ".git",
        ];
        for mode in Mode::ALL {
            engine.set_mode(mode);
            for path in files.iter().chain(&dirs) {
                let verdict = engine
                    .evaluate_access("read", &Access::read([root.join(path).to_string_lossy()]))
                    .verdict;
                assert_eq!(
                    filter.excludes(&root.join(path)),
                    verdict != Verdict::Allow,
                    "{path} in {mode} ({verdict:?})"
                );
            }
        }
    }

    /// The walks' form, given the entry's kind from the listing, decides
    /// as the path's own `lstat` does, symlinks judged by their target.
    #[test]
    fn the_entry_form_decides_as_the_path_form() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for f in [".env", "secrets/x", "src/main.rs", "private/p"] {
            let p = root.join(f);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, "x").unwrap();
        }
        std::os::unix::fs::symlink(root.join("secrets/x"), root.join("src/link")).unwrap();
        std::os::unix::fs::symlink(root.join("secrets"), root.join("src/dirlink")).unwrap();
        std::os::unix::fs::symlink(root.join("src/main.rs"), root.join("ok_link")).unwrap();
        let rule = |text: &str| text.parse::<Rule>().unwrap();
        let engine = ApprovalEngine::new(root)
            .with_rule(RuleKind::Ask, rule("read(./private/**)"))
            .with_rule(RuleKind::Deny, rule("read(./secrets/**)"));
        let filter = engine.walk_filter();
        let entries = [
            (".env", EntryKind::File),
            ("secrets", EntryKind::Dir),
            ("secrets/x", EntryKind::File),
            ("private", EntryKind::Dir),
            ("src", EntryKind::Dir),
            ("src/main.rs", EntryKind::File),
            ("src/link", EntryKind::Symlink),
            ("src/dirlink", EntryKind::Symlink),
            ("ok_link", EntryKind::Symlink),
        ];
        for mode in Mode::ALL {
            engine.set_mode(mode);
            for (path, kind) in entries {
                let path = root.join(path);
                assert_eq!(
                    filter.excludes_entry(&path, kind),
                    filter.excludes(&path),
                    "{} in {mode}",
                    path.display()
                );
            }
        }
        engine.set_mode(Mode::Default);
        assert!(filter.excludes_entry(&root.join("src/link"), EntryKind::Symlink));
        assert!(!filter.excludes_entry(&root.join("ok_link"), EntryKind::Symlink));
    }
}
