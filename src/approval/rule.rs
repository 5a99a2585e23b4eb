//! Rules written `tool` or `tool(specifier)`.
//!
//! - `bash` with no specifier binds every call of `bash`; so does any bare
//!   tool name.
//! - `bash(cargo test *)`: a command pattern, matched word by word against
//!   each part of a command (see [`CommandAnalysis`](super::CommandAnalysis)).
//!   A `*` word at the end matches any further words (none included); a `*`
//!   inside a word matches any characters in that word. `cargo test:*` is
//!   read as `cargo test *`.
//! - `write(src/**)`, `read(./secrets/**)`: gitignore-style path globs,
//!   relative to the workspace root: a pattern with a slash (or starting
//!   with `./` or `/`) is anchored at the root, one without matches at any
//!   depth, `**` crosses directories, and a pattern that matches a
//!   directory covers everything inside it. `//etc/**` is the absolute path
//!   `/etc/**`; `~/…` starts at the home directory.
//!
//! Which calls a rule binds: `read(…)` binds every call that reads (read,
//! glob, grep, ls, and any tool describing itself as a read);
//! `write(…)` and `edit(…)` bind every call that writes (write, edit, …);
//! any other name binds the tool of that name only. The name is read once,
//! into a [`RuleTarget`].
//!
//! Mounted MCP tools (`mcp__SERVER__TOOL`) can also be named by server:
//! `mcp__github` binds every tool of the server `github`, and a `*` in a
//! name starting with `mcp__` matches any characters (`mcp__github__*`,
//! `mcp__*__search`). Names not starting with `mcp__` are never globs.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::access::{Access, Capability};
use crate::fs::home_dir;
use crate::shell::CommandPart;

/// Which list a rule is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RuleKind {
    /// Allows what it matches.
    Allow,
    /// Asks about what it matches, even where a mode or allow rule allows.
    Ask,
    /// Denies what it matches, in every mode.
    Deny,
}

impl RuleKind {
    /// `"allow"`, `"ask"` or `"deny"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            RuleKind::Allow => "allow",
            RuleKind::Ask => "ask",
            RuleKind::Deny => "deny",
        }
    }
}

impl fmt::Display for RuleKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a rule could not be read. The text says how to write it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid rule {rule:?}: {message}")]
pub struct RuleError {
    /// The rule as written.
    pub rule: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// Which calls a rule binds, read once from the name it is written for.
///
/// ```
/// use agentcore::approval::{Rule, RuleTarget};
/// use agentcore::access::Capability;
///
/// let read: Rule = "read(./secrets/**)".parse().unwrap();
/// assert_eq!(read.target(), &RuleTarget::Class(Capability::Read));
/// let edit: Rule = "edit(src/**)".parse().unwrap();
/// assert_eq!(edit.target(), &RuleTarget::Class(Capability::Write));
/// let grep: Rule = "grep".parse().unwrap();
/// assert_eq!(grep.target(), &RuleTarget::Tool("grep".into()));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RuleTarget {
    /// `read`, or `write` and `edit`: every call that declares this
    /// capability (read, glob, grep, ls; write, edit; any tool describing
    /// itself so), and every call of a tool with the name written.
    Class(Capability),
    /// Any other name: the calls of the tool of that name only.
    Tool(String),
}

impl RuleTarget {
    /// The target a rule written for `name` has.
    fn of(name: &str) -> Self {
        match name {
            "read" => RuleTarget::Class(Capability::Read),
            "write" | "edit" => RuleTarget::Class(Capability::Write),
            other => RuleTarget::Tool(other.to_owned()),
        }
    }
}

/// How a rule's specifier is read, by the name it is written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Grammar {
    /// `bash(cargo test *)`: a command pattern.
    Command,
    /// `read(./secrets/**)` and the other file tools: a path glob.
    Path,
    /// Any other tool: whichever of the two parses, and applies to the
    /// call.
    Either,
}

impl Grammar {
    fn of(name: &str) -> Self {
        match name {
            "bash" => Grammar::Command,
            "read" | "glob" | "grep" | "ls" | "edit" | "write" => Grammar::Path,
            _ => Grammar::Either,
        }
    }
}

/// A parsed rule, `tool` or `tool(specifier)`.
///
/// ```
/// use agentcore::approval::Rule;
///
/// let rule: Rule = "bash(cargo test *)".parse().unwrap();
/// assert_eq!(rule.tool(), "bash");
/// assert_eq!(rule.to_string(), "bash(cargo test *)");
/// assert!("bash(cargo test".parse::<Rule>().is_err());
/// ```
#[derive(Clone, Debug)]
pub struct Rule {
    text: String,
    tool: String,
    target: RuleTarget,
    specifier: Option<Specifier>,
    /// A session grant given for a call that ran outside the sandbox: it
    /// covers that command unconfined too (see [`Rule::is_outside_sandbox`]).
    outside_sandbox: bool,
}

#[derive(Clone, Debug)]
enum Specifier {
    Command(CommandPattern),
    Path(PathPattern),
    /// For a tool that is neither a known file tool nor `bash`: whichever
    /// applies to the call.
    Either(Option<CommandPattern>, Option<PathPattern>),
    /// A session grant of one whole command line, exactly as normalized.
    ExactCommand(String),
}

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
        let spec = self
            .text
            .strip_prefix(self.tool.as_str())?
            .strip_prefix('(')?
            .strip_suffix(')')?;
        let spec = spec.strip_suffix("/**").unwrap_or(spec);
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

    /// The absolute path a path rule names literally (`read(//srv/x/**)`,
    /// `read(~/private)`): its specifier without glob characters, once a
    /// trailing `/**` is taken off.
    pub(crate) fn literal_absolute_path(&self) -> Option<PathBuf> {
        let spec = self
            .text
            .strip_prefix(self.tool.as_str())?
            .strip_prefix('(')?
            .strip_suffix(')')?;
        let spec = spec.strip_suffix("/**").unwrap_or(spec);
        if spec.contains(['*', '?', '[', ']', '{', '}', '\\', '!']) {
            return None;
        }
        if let Some(abs) = spec.strip_prefix("//") {
            return Some(PathBuf::from(format!("/{abs}")));
        }
        let rest = spec.strip_prefix("~/")?;
        Some(home_dir()?.join(rest))
    }

    /// The tool name the rule is written for.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// Which calls the rule binds.
    pub fn target(&self) -> &RuleTarget {
        &self.target
    }

    /// Whether the rule is written for `read`: a read-deny or read-ask
    /// rule, which the search tools' filters use.
    pub(crate) fn is_read_rule(&self) -> bool {
        self.target == RuleTarget::Class(Capability::Read)
    }

    /// The rule as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether the rule has no specifier (binds every call of its tool).
    pub fn is_bare(&self) -> bool {
        self.specifier.is_none()
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

    /// A rule matching one command part word for word, for session grants.
    pub(crate) fn exact_part(tool: &str, part: &CommandPart) -> Self {
        let words: Vec<WordPattern> = part
            .words
            .iter()
            .map(|w| WordPattern::Literal(w.clone()))
            .collect();
        Self {
            text: format!("{tool}({})", part.text()),
            tool: tool.to_owned(),
            target: RuleTarget::of(tool),
            specifier: Some(Specifier::Command(CommandPattern { words, rest: false })),
            outside_sandbox: false,
        }
    }

    /// A rule matching one whole command line exactly, for session grants.
    pub(crate) fn exact_command(tool: &str, command: &str) -> Self {
        let normalized = normalize_command(command);
        Self {
            text: format!("{tool}({normalized})"),
            tool: tool.to_owned(),
            target: RuleTarget::of(tool),
            specifier: Some(Specifier::ExactCommand(normalized)),
            outside_sandbox: false,
        }
    }

    /// This session grant, given for a call that ran outside the sandbox
    /// (`dangerously_disable_sandbox`): it covers the command unconfined as
    /// well as confined, and says so in its text (`bash(make deploy)
    /// (outside the sandbox)`), which is what the person is shown.
    pub(crate) fn outside_sandbox(mut self) -> Self {
        if !self.outside_sandbox {
            self.outside_sandbox = true;
            self.text.push_str(" (outside the sandbox)");
        }
        self
    }

    /// Whether this is a session grant that covers running its command
    /// outside the sandbox. Rules written in a policy never are: running
    /// unconfined is allowed by the policy's `allow_unsandboxed` list only.
    pub fn is_outside_sandbox(&self) -> bool {
        self.outside_sandbox
    }

    /// A bare rule for `tool`.
    pub(crate) fn bare(tool: &str) -> Self {
        Self {
            text: tool.to_owned(),
            tool: tool.to_owned(),
            target: RuleTarget::of(tool),
            specifier: None,
            outside_sandbox: false,
        }
    }

    /// Whether the rule is about the call of `tool` with `access` at all
    /// (before looking at its specifier).
    pub(crate) fn binds(&self, tool: &str, access: &Access) -> bool {
        if self.tool == tool || names_mcp_tool(&self.tool, tool) {
            return true;
        }
        match self.target {
            RuleTarget::Class(capability) => access.described && access.capability == capability,
            RuleTarget::Tool(_) => false,
        }
    }

    /// Whether the rule's path pattern matches one of the path keys.
    pub(crate) fn matches_path(&self, keys: &PathKeys) -> Option<bool> {
        match &self.specifier {
            None => Some(true),
            Some(Specifier::Path(p)) | Some(Specifier::Either(_, Some(p))) => Some(p.matches(keys)),
            _ => None,
        }
    }

    /// Whether the rule's command pattern matches a part. `loose` also
    /// tries the part without leading assignments and with the program's
    /// directory stripped (`/bin/rm` as `rm`): used for deny and ask rules,
    /// where matching more is the safe side.
    pub(crate) fn matches_part(&self, part: &CommandPart, loose: bool) -> Option<bool> {
        let pattern = match &self.specifier {
            None => return Some(true),
            Some(Specifier::Command(c)) | Some(Specifier::Either(Some(c), _)) => c,
            Some(Specifier::ExactCommand(_)) => return Some(false),
            _ => return None,
        };
        if pattern.matches(&part.words) {
            return Some(true);
        }
        if loose {
            let bare = part.without_assignments();
            if pattern.matches(bare) {
                return Some(true);
            }
            if let Some((first, rest)) = bare.split_first() {
                let base = first.rsplit('/').next().unwrap_or(first);
                if base != first {
                    let mut words = vec![base.to_owned()];
                    words.extend(rest.iter().cloned());
                    return Some(pattern.matches(&words));
                }
            }
        }
        Some(false)
    }

    /// Whether the rule is a whole-command grant matching `command`.
    pub(crate) fn matches_whole_command(&self, command: &str) -> bool {
        match &self.specifier {
            Some(Specifier::ExactCommand(c)) => !c.is_empty() && *c == normalize_command(command),
            _ => false,
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl FromStr for Rule {
    type Err = RuleError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let error = |message: &str| RuleError {
            rule: text.to_owned(),
            message: message.to_owned(),
        };
        let trimmed = text.trim();
        let (tool, specifier) = match trimmed.find('(') {
            None => (trimmed, None),
            Some(open) => {
                let Some(inner) = trimmed[open + 1..].strip_suffix(')') else {
                    return Err(error(
                        "the specifier is not closed; write `tool(specifier)`, e.g. `bash(cargo test *)`",
                    ));
                };
                (&trimmed[..open], Some(inner.trim()))
            }
        };
        if tool.is_empty() {
            return Err(error(
                "the tool name is missing; write `tool` or `tool(specifier)`, e.g. `write(src/**)`",
            ));
        }
        if tool.contains(|c: char| c.is_whitespace() || c == ')') {
            return Err(error(
                "a tool name has no spaces or parentheses; write `tool(specifier)`, e.g. `read(./secrets/**)`",
            ));
        }
        let specifier = match specifier {
            None => None,
            Some("") | Some("*") | Some("**") => None,
            Some(spec) => Some(match Grammar::of(tool) {
                Grammar::Command => {
                    Specifier::Command(CommandPattern::parse(spec).map_err(|m| error(&m))?)
                }
                Grammar::Path => Specifier::Path(PathPattern::build(spec).map_err(|m| error(&m))?),
                Grammar::Either => {
                    let c = CommandPattern::parse(spec);
                    let p = PathPattern::build(spec);
                    match (c, p) {
                        (Err(m), Err(_)) => return Err(error(&m)),
                        (c, p) => Specifier::Either(c.ok(), p.ok()),
                    }
                }
            }),
        };
        Ok(Self {
            text: trimmed.to_owned(),
            tool: tool.to_owned(),
            target: RuleTarget::of(tool),
            specifier,
            outside_sandbox: false,
        })
    }
}

impl serde::Serialize for Rule {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> serde::Deserialize<'de> for Rule {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// A command pattern: words, `*` wildcards.
#[derive(Clone, Debug)]
struct CommandPattern {
    words: Vec<WordPattern>,
    /// A trailing `*` word: any further words.
    rest: bool,
}

#[derive(Clone, Debug)]
enum WordPattern {
    Literal(String),
    Wildcard(Vec<String>),
}

impl CommandPattern {
    fn parse(spec: &str) -> Result<Self, String> {
        let spec = match spec.strip_suffix(":*") {
            Some(prefix) => format!("{prefix} *"),
            None => spec.to_owned(),
        };
        // Parse with the same parser as commands, so a rule and a command
        // are normalized alike (quotes removed, spaces collapsed).
        let Some(pattern_words) = crate::shell::pattern_words(&spec) else {
            return Err(
                "a command rule names one simple command with no `;`, `&&`, `|`, substitutions or redirections; write one rule per command, e.g. `bash(cargo test *)`"
                    .to_owned(),
            );
        };
        let mut words: Vec<WordPattern> = pattern_words
            .iter()
            .map(|w| {
                if w.contains('*') {
                    WordPattern::Wildcard(w.split('*').map(str::to_owned).collect())
                } else {
                    WordPattern::Literal(w.clone())
                }
            })
            .collect();
        let rest = matches!(words.last(), Some(WordPattern::Wildcard(pieces)) if pieces.iter().all(String::is_empty));
        if rest {
            words.pop();
        }
        Ok(Self { words, rest })
    }

    fn matches(&self, words: &[String]) -> bool {
        if words.len() < self.words.len() || (!self.rest && words.len() != self.words.len()) {
            return false;
        }
        self.words.iter().zip(words).all(|(p, w)| p.matches(w))
    }
}

impl WordPattern {
    fn matches(&self, word: &str) -> bool {
        match self {
            WordPattern::Literal(l) => l == word,
            WordPattern::Wildcard(pieces) => wildcard(pieces, word),
        }
    }
}

/// Whether a rule written for `name` names the MCP tool `tool` by server
/// (`mcp__github` for `mcp__github__TOOL`) or by a glob (`mcp__github__*`).
fn names_mcp_tool(name: &str, tool: &str) -> bool {
    const MCP: &str = "mcp__";
    let Some(server) = name.strip_prefix(MCP) else {
        return false;
    };
    if !tool.starts_with(MCP) {
        return false;
    }
    if name.contains('*') {
        let pieces: Vec<String> = name.split('*').map(str::to_owned).collect();
        return wildcard(&pieces, tool);
    }
    !server.is_empty()
        && !server.contains("__")
        && tool
            .strip_prefix(name)
            .is_some_and(|rest| rest.len() > 2 && rest.starts_with("__"))
}

/// `pieces` are the literal text between `*`s.
fn wildcard(pieces: &[String], word: &str) -> bool {
    let Some((first, rest)) = pieces.split_first() else {
        return word.is_empty();
    };
    let Some(mut remaining) = word.strip_prefix(first.as_str()) else {
        return false;
    };
    let Some((last, middle)) = rest.split_last() else {
        return remaining.is_empty();
    };
    for piece in middle {
        match remaining.find(piece.as_str()) {
            Some(i) => remaining = &remaining[i + piece.len()..],
            None => return false,
        }
    }
    remaining.len() >= last.len() && remaining.ends_with(last.as_str())
}

/// Whitespace runs collapsed, ends trimmed.
pub(crate) fn normalize_command(command: &str) -> String {
    command.split_whitespace().collect::<Vec<_>>().join(" ")
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
}

/// A gitignore-style path glob.
#[derive(Clone, Debug)]
pub(crate) struct PathPattern {
    matcher: Gitignore,
    absolute: bool,
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
        Ok(Self { matcher, absolute })
    }

    /// Whether any form of the path, or a directory containing it, matches.
    pub(crate) fn matches(&self, keys: &PathKeys) -> bool {
        let forms = if self.absolute {
            &keys.absolute
        } else {
            &keys.relative
        };
        forms.iter().any(|key| self.matches_key(key, keys.is_dir))
    }

    fn matches_key(&self, key: &Path, is_dir: bool) -> bool {
        if key.as_os_str().is_empty() || key.has_root() {
            // The root itself: only a pattern covering every name in it.
            return !key.has_root() && self.matches_key(Path::new(PROBE), false);
        }
        if self
            .matcher
            .matched_path_or_any_parents(key, is_dir)
            .is_ignore()
        {
            return true;
        }
        is_dir
            && self
                .matcher
                .matched_path_or_any_parents(key.join(PROBE), false)
                .is_ignore()
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
    #[test]
    fn mcp_tools_are_named_by_server_or_glob() {
        use super::names_mcp_tool as names;
        assert!(names("mcp__github__*", "mcp__github__create_issue"));
        assert!(names("mcp__github", "mcp__github__create_issue"));
        assert!(names("mcp__*__search", "mcp__docs__search"));
        assert!(!names("mcp__github__*", "mcp__gitlab__create_issue"));
        assert!(!names("mcp__git", "mcp__github__create_issue"));
        assert!(!names("mcp__github", "mcp__github__"));
        assert!(!names("mcp__github__create", "mcp__github__create_issue"));
        // Globs only for MCP names, and only over MCP tools.
        assert!(!names("mcp__*", "bash"));
        assert!(!names("ba*", "bash"));
        assert!(!names("*", "mcp__github__create_issue"));

        let access = super::Access::unknown();
        let rule: super::Rule = "mcp__github__*".parse().unwrap();
        assert!(rule.binds("mcp__github__create_issue", &access));
        assert!(!rule.binds("mcp__other__create_issue", &access));
        let exact: super::Rule = "mcp__github__create_issue".parse().unwrap();
        assert!(exact.binds("mcp__github__create_issue", &access));
        assert!(!exact.binds("mcp__github__list_issues", &access));
    }

    use super::*;

    fn keys(rel: &str, is_dir: bool) -> PathKeys {
        PathKeys {
            relative: vec![PathBuf::from(rel)],
            absolute: vec![PathBuf::from("ws").join(rel)],
            is_dir,
        }
    }

    fn part(s: &str) -> CommandPart {
        CommandPart {
            words: s.split(' ').map(str::to_owned).collect(),
        }
    }

    #[test]
    fn targets_bind_a_capability_class_or_one_tool() {
        let rule = |text: &str| text.parse::<Rule>().unwrap();
        let read = Access::read(["a"]);
        let write = Access::write(["a"]);
        let command = Access::command("ls");
        // `read` binds every described read, whatever the tool.
        assert!(rule("read(a)").binds("grep", &read));
        assert!(rule("read").binds("my_reader", &read));
        assert!(!rule("read").binds("write", &write));
        // `write` and `edit` both bind every described write.
        for name in ["write(a)", "edit(a)"] {
            assert!(rule(name).binds("write", &write));
            assert!(rule(name).binds("edit", &write));
            assert!(!rule(name).binds("read", &read));
        }
        // Any other name binds its own tool only, described or not.
        assert!(rule("grep(a)").binds("grep", &read));
        assert!(!rule("grep(a)").binds("read", &read));
        assert!(rule("bash").binds("bash", &command));
        assert!(!rule("bash").binds("my_shell", &command));
        // A class binds a tool of its name even when it declares nothing.
        assert!(rule("read").binds("read", &Access::unknown()));
        assert!(!rule("read").binds("other", &Access::unknown()));
        assert!(rule("read").is_read_rule());
        assert!(!rule("edit").is_read_rule());
        assert!(!rule("grep").is_read_rule());
    }

    #[test]
    fn parses_and_prints() {
        let rule: Rule = " write(src/**) ".parse().unwrap();
        assert_eq!(rule.to_string(), "write(src/**)");
        assert!("grep".parse::<Rule>().unwrap().is_bare());
        assert!("bash()".parse::<Rule>().unwrap().is_bare());
    }

    #[test]
    fn bad_rules_say_how_to_fix_them() {
        for bad in [
            "bash(cargo",
            "(x)",
            "ba sh(x)",
            "bash(a; b)",
            "read(!x)",
            "read()x",
        ] {
            let err = bad.parse::<Rule>().unwrap_err();
            assert!(err.to_string().contains("invalid rule"), "{err}");
        }
    }

    #[test]
    fn command_patterns() {
        let rule: Rule = "bash(cargo test *)".parse().unwrap();
        assert_eq!(rule.matches_part(&part("cargo test"), false), Some(true));
        assert_eq!(
            rule.matches_part(&part("cargo test --release"), false),
            Some(true)
        );
        assert_eq!(rule.matches_part(&part("cargo testx"), false), Some(false));
        assert_eq!(rule.matches_part(&part("cargo build"), false), Some(false));
        let colon: Rule = "bash(npm run test:*)".parse().unwrap();
        assert_eq!(
            colon.matches_part(&part("npm run test x"), false),
            Some(true)
        );
        let inner: Rule = "bash(git log --format=*)".parse().unwrap();
        assert_eq!(
            inner.matches_part(&part("git log --format=%H"), false),
            Some(true)
        );
        assert_eq!(
            inner.matches_part(&part("git log --format=%H x"), false),
            Some(false)
        );
    }

    #[test]
    fn loose_matching_for_deny() {
        let rule: Rule = "bash(rm *)".parse().unwrap();
        assert_eq!(
            rule.matches_part(&part("/bin/rm -rf x"), false),
            Some(false)
        );
        assert_eq!(rule.matches_part(&part("/bin/rm -rf x"), true), Some(true));
        assert_eq!(rule.matches_part(&part("X=1 rm -rf x"), true), Some(true));
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

    #[test]
    fn wildcards() {
        let w =
            |p: &str, s: &str| wildcard(&p.split('*').map(str::to_owned).collect::<Vec<_>>(), s);
        assert!(w("a*c", "abc"));
        assert!(w("a*c", "ac"));
        assert!(!w("a*c", "ab"));
        assert!(w("*", ""));
        assert!(w("a*b*c", "aXbYc"));
        assert!(!w("ab*ba", "aba"));
    }
}
