//! The policy file (`--policy FILE`): mode, rules, extra roots, the
//! sandbox, hooks and MCP servers, read from TOML into [`Policy`].
//!
//! Layer: above the parts it configures ([`approval`](crate::approval),
//! [`sandbox`](crate::sandbox), [`hooks`](crate::hooks),
//! [`mcp::client`](crate::mcp::client), the [`fs`](crate::fs) workspace),
//! below the [`session`](crate::session) that reads it. The parts know
//! nothing of the file: each takes its own table, and
//! [`ApprovalEngine::with_policy`] is defined here.

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::approval::{ApprovalEngine, Mode, Rule, RuleKind};
use crate::fs::home_dir;
use crate::fs::workspace::Workspace;
#[cfg(feature = "mcp-client")]
use crate::mcp::client::McpServerConfig;
use crate::sandbox::SandboxPolicy;

impl ApprovalEngine {
    /// This engine with a policy's mode, rules and read-only roots (the
    /// roots themselves go to the Workspace: [`Policy::apply_roots`]).
    pub fn with_policy(self, policy: &Policy) -> Self {
        let mut engine = self
            .with_mode(policy.mode)
            .with_auto_allow(policy.sandbox.auto_allow);
        for rule in &policy.allow {
            engine = engine.with_rule(RuleKind::Allow, rule.clone());
        }
        for rule in &policy.allow_unsandboxed {
            engine = engine.with_unsandboxed_rule(rule.clone());
        }
        for rule in &policy.ask {
            engine = engine.with_rule(RuleKind::Ask, rule.clone());
        }
        for rule in &policy.deny {
            engine = engine.with_rule(RuleKind::Deny, rule.clone());
        }
        let root = engine.root().to_path_buf();
        for (path, access) in policy.resolved_roots(&root) {
            if access == RootAccess::ReadOnly {
                engine = engine.with_read_only_root(path);
            }
        }
        engine
    }
}

/// A policy: mode, rules, extra roots.
///
/// The policy file (`--policy FILE`) is TOML:
///
/// ```toml
/// # default | accept-edits | plan | bypass (default: "default")
/// mode = "default"
/// allow = ["bash(cargo test *)", "bash(git status *)", "write(src/**)"]
/// ask = ["bash(git push *)"]
/// deny = ["read(./secrets/**)", "bash(rm *)"]
/// # Commands that may run outside the sandbox (dangerously_disable_sandbox)
/// # without asking; `allow` never implies this.
/// allow_unsandboxed = ["bash(npm publish)"]
///
/// # Extra workspace roots, added when the session starts.
/// [[roots]]
/// path = "../shared-docs"      # relative to the workspace root, or absolute, or ~/…
/// access = "read-only"         # or "read-write" (default: "read-only")
///
/// # How commands are confined (see `SandboxPolicy`).
/// [sandbox]
/// mode = "auto"                # "auto" | "required" | "off"
/// network = false
/// writable = ["~/.cargo/registry", "~/.cargo/git"]
/// auto_allow = true
///
/// # Claude Code command hooks, as in a settings file's "hooks" section.
/// [hooks]
/// fail_closed = true           # a hook that fails blocks (default: false)
/// [[hooks.PreToolUse]]
/// matcher = "Bash"
/// [[hooks.PreToolUse.hooks]]
/// type = "command"
/// command = "./.claude/hooks/guard.sh"
///
/// # External MCP servers whose tools join the session as mcp__NAME__TOOL
/// # (see `McpServerConfig`).
/// [[mcp_servers]]
/// name = "github"
/// command = "github-mcp-server"
/// args = ["stdio"]
/// env = { GITHUB_TOKEN = "…" }
/// ```
///
/// Every field is optional; an unknown field, an unknown mode or a rule
/// that does not parse is an error naming the line and how to fix it.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Policy {
    /// The mode the session starts in.
    #[serde(default)]
    pub mode: Mode,
    /// Rules that allow.
    #[serde(default)]
    pub allow: Vec<Rule>,
    /// Rules that allow a command to run outside the sandbox
    /// (`dangerously_disable_sandbox`) without asking, written like allow
    /// rules. An `allow` rule, a session grant of the confined command, a
    /// PreToolUse hook's `allow` and bypass mode never do: a command that
    /// asks to run unconfined asks unless one of these (or a session grant
    /// given for that unconfined command) names it. A rule here also
    /// allows the command confined, as `allow` would.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow_unsandboxed: Vec<Rule>,
    /// Rules that ask.
    #[serde(default)]
    pub ask: Vec<Rule>,
    /// Rules that deny.
    #[serde(default)]
    pub deny: Vec<Rule>,
    /// Extra workspace roots.
    #[serde(default)]
    pub roots: Vec<ExtraRoot>,
    /// How commands are confined: the `[sandbox]` table.
    #[serde(default)]
    pub sandbox: SandboxPolicy,
    /// Claude Code command hooks, as in a settings file's `hooks`, and
    /// `fail_closed` ([`HookConfig`](crate::hooks::HookConfig)).
    #[serde(default)]
    pub hooks: crate::hooks::HookConfig,
    /// External MCP servers to mount: the `[[mcp_servers]]` tables (feature
    /// `mcp-client`; without it the table is refused as unknown).
    #[cfg(feature = "mcp-client")]
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcp_servers: Vec<McpServerConfig>,
    /// `[checkpoints]`: a table turns checkpoints on (`enabled = false`
    /// keeps them off) with its store, bounds and exclusions
    /// (docs/checkpoints.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoints: Option<crate::checkpoint::CheckpointConfig>,
    /// `[loop_guard]`: the repeated-call guard's settings
    /// ([`crate::loop_guard`]); on by default in every mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loop_guard: Option<crate::loop_guard::LoopGuardConfig>,
    /// `[tool_search]`: when mounted MCP tools are listed by name and one
    /// line only, with `tool_search` for their full definitions
    /// (docs/mcp.md).
    #[cfg(feature = "mcp-client")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_search: Option<crate::mcp::client::ToolSearchConfig>,
}

/// A workspace root the policy adds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExtraRoot {
    /// Absolute, `~/…`, or relative to the workspace root.
    pub path: PathBuf,
    /// Whether the tools may change files there.
    #[serde(default)]
    pub access: RootAccess,
}

/// What the tools may do in an extra root.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RootAccess {
    /// Read and search only: writes there are denied.
    #[default]
    ReadOnly,
    /// Read and write, like the workspace root.
    ReadWrite,
}

/// Why a policy could not be loaded. The text names the file, the place
/// and the fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// The file could not be read.
    #[error("cannot read policy file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
    /// The TOML is invalid or a field is wrong (rules, mode, roots).
    #[error("invalid policy{}: {message}", path.as_ref().map(|p| format!(" file {}", p.display())).unwrap_or_default())]
    Parse {
        /// The file, when loaded from one.
        path: Option<PathBuf>,
        /// The parser's message, with line and column.
        message: String,
    },
    /// An extra root could not be added to the workspace.
    #[error("cannot add workspace root {path}: {source}; check that the directory exists")]
    Root {
        /// The root as resolved.
        path: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
}

impl Policy {
    /// Parses a policy from TOML text.
    ///
    /// ```
    /// use agentcore::approval::Mode;
    /// use agentcore::config::Policy;
    /// let policy = Policy::from_toml(r#"
    ///     mode = "accept-edits"
    ///     allow = ["bash(cargo test *)"]
    ///     deny = ["read(./secrets/**)"]
    /// "#).unwrap();
    /// assert_eq!(policy.mode, Mode::AcceptEdits);
    /// let err = Policy::from_toml(r#"allow = ["bash(cargo test"]"#).unwrap_err();
    /// assert!(err.to_string().contains("specifier is not closed"));
    /// ```
    pub fn from_toml(text: &str) -> Result<Self, PolicyError> {
        toml::from_str(text).map_err(|e| PolicyError::Parse {
            path: None,
            message: e.to_string(),
        })
    }

    /// Reads and parses a policy file.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, PolicyError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| PolicyError::Read {
            path: path.to_owned(),
            source,
        })?;
        #[allow(unused_mut)]
        let mut policy = Self::from_toml(&text).map_err(|e| match e {
            PolicyError::Parse { message, .. } => PolicyError::Parse {
                path: Some(path.to_owned()),
                message,
            },
            other => other,
        })?;
        // The file a server came from, for the sign-in command its
        // messages give (`agentcore mcp login NAME --policy FILE`).
        #[cfg(feature = "mcp-client")]
        for server in &mut policy.mcp_servers {
            server.policy_file =
                Some(std::path::absolute(path).unwrap_or_else(|_| path.to_owned()));
        }
        Ok(policy)
    }

    /// The extra roots resolved against `root`, with their access.
    pub fn resolved_roots(&self, root: &Path) -> Vec<(PathBuf, RootAccess)> {
        self.roots
            .iter()
            .map(|r| (resolve_root(&r.path, root), r.access))
            .collect()
    }

    /// Adds the extra roots to `workspace` (at session start). Writes into
    /// read-only roots are denied by the engine built
    /// [`with_policy`](crate::approval::ApprovalEngine::with_policy).
    pub fn apply_roots(&self, workspace: &mut Workspace) -> Result<(), PolicyError> {
        let root = workspace.root().to_path_buf();
        for (path, _) in self.resolved_roots(&root) {
            workspace
                .add_root(&path)
                .map_err(|source| PolicyError::Root { path, source })?;
        }
        Ok(())
    }
}

fn resolve_root(path: &Path, root: &Path) -> PathBuf {
    if let Ok(rest) = path.strip_prefix("~")
        && let Some(home) = home_dir()
    {
        return home.join(rest);
    }
    crate::approval::paths::normalize(&root.join(path))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::Policy;

    #[cfg(feature = "mcp-client")]
    #[test]
    fn the_policy_file_lists_servers_and_refuses_unknown_fields() {
        let policy = Policy::from_toml(
            r#"
            [[mcp_servers]]
            name = "github"
            command = "github-mcp-server"
            args = ["stdio"]
            env = { GITHUB_TOKEN = "t" }
            startup_timeout_secs = 5
            "#,
        )
        .unwrap();
        let server = &policy.mcp_servers[0];
        assert_eq!(server.command.as_deref(), Some("github-mcp-server"));
        assert_eq!(server.args, ["stdio"]);
        assert_eq!(server.env["GITHUB_TOKEN"], "t");
        assert_eq!(server.startup_timeout(), Duration::from_secs(5));
        let err = Policy::from_toml("[[mcp_servers]]\nname = \"x\"\ncomand = \"y\"\n").unwrap_err();
        assert!(err.to_string().contains("comand"), "{err}");
    }

    #[test]
    fn a_bad_hooks_table_in_the_policy_names_the_line() {
        let err = Policy::from_toml(
            "mode = \"default\"\n[hooks]\n[[hooks.PreToolUse]]\nmatcher = \"(\"\n",
        )
        .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("line 4"), "{text}");
        assert!(text.contains("not a valid regular expression"), "{text}");
    }
}
