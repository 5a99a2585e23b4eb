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
//!
//! One concept per file: the rule and what it binds here; reading a rule
//! from its text in `syntax`; command patterns (`bash(cargo test *)`) in
//! `command_pattern`; path patterns (`read(./secrets/**)`) in
//! `path_pattern`.

mod command_pattern;
mod path_pattern;
mod syntax;

use std::fmt;

use crate::access::{Access, Capability};

pub(crate) use self::path_pattern::{PathKeys, PathPattern, PathScope};
pub use self::syntax::RuleError;

use self::command_pattern::{CommandPattern, wildcard};

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
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
