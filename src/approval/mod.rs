//! The approval engine: the policy a harness plugs into the kernel's gate.
//!
//! The kernel only calls a [`Gate`](crate::Gate); [`ApprovalEngine`] is an
//! ordinary one. It decides allow / ask / deny for each call from:
//!
//! - **what the call touches** ([`Access`]): capability read / write /
//!   exec and the paths or command, computed by the [`Permissions`] value
//!   the tool carries in its typed extensions. A tool without one is
//!   treated as exec of an unknown kind (fail closed).
//! - **the [`Mode`]**: `default` (reads allowed; writes and commands ask),
//!   `accept-edits` (reads and writes allowed; commands ask), `plan`
//!   (writes and commands denied with a reason telling the model it is
//!   planning), `bypass` (everything allowed except deny rules).
//! - **[`Rule`]s** allow / ask / deny written `tool(specifier)`:
//!   `bash(cargo test *)`, `write(src/**)`, `read(./secrets/**)`, `grep`.
//!   Deny, then ask, then allow, then the mode.
//! - **protected paths** ([`PROTECTED_PATHS`]): `.git` (file or
//!   directory) and what is under it, `.env*`, `**/.ssh/**`, Claude Code's
//!   `.claude/settings.json`, `.claude/settings.local.json` and
//!   `.claude/hooks/`, and a git
//!   directory that a `.git` file points to, ask even where a rule or the
//!   mode allows, except in bypass.
//! - **commands by their parts** ([`CommandAnalysis`]): each part of
//!   `a; b && c | d $(e)` must be allowed on its own (and so must the
//!   command a wrapper such as `timeout 5 e` runs), a redirection makes the
//!   call ask, and a construct that can run code the analysis cannot see
//!   (arithmetic, `[[ ]]`, array subscripts, `eval`, `bash -c`, a command
//!   name in a variable, …) is never covered by an allow rule; where a
//!   deny rule binds `bash`, such a command asks even in bypass mode.
//! - **session grants**: an [`Approver`] answering
//!   [`ApprovalAnswer::AllowSession`] (or
//!   [`ApprovalEngine::grant_session`]) allows the same tool and
//!   specifier for the rest of the session.
//!
//! Without an approver (the CLI; the MCP server when its client cannot ask
//! the user) "ask" is a deny whose reason starts `approval required: `,
//! with a sentence saying why no one can be asked when the engine was told
//! ([`ApprovalEngine::set_no_approver_reason`]). An approver can be bound
//! late ([`ApprovalEngine::set_approver`]: the MCP server binds its
//! client's elicitation), and a question it leaves unanswered past the ask
//! timeout ([`ApprovalEngine::with_ask_timeout`]) is a deny. Every [`Decision`] carries its
//! [`DecisionSource`], and its reason reaches the model in the `Denied`
//! result.
//!
//! # Wiring
//!
//! ```no_run
//! use std::sync::Arc;
//! use agentcore::approval::{ApprovalEngine, Mode};
//! use agentcore::config::Policy;
//! use agentcore::fs::workspace::Workspace;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let policy = Policy::load("policy.toml")?;           // --policy FILE
//! let mut workspace = Workspace::new(".")?;
//! policy.apply_roots(&mut workspace)?;                   // extra roots
//! let engine = ApprovalEngine::new(workspace.root())
//!     .with_policy(&policy)
//!     .with_mode(Mode::Default);                         // --mode overrides the file
//! let read_filter = engine.read_filter();                // to glob, grep, ls
//! let gate: Arc<dyn agentcore::Gate> = Arc::new(engine);
//! # let _ = (gate, read_filter); Ok(()) }
//! ```
//!
//! The policy file format is in [`Policy`]. A tool attaches its
//! permissions in its extensions, from its typed arguments; each built-in
//! tool does it in its own file (e.g. [`tools::edit::permissions`]):
//! `Permissions::typed(|args: &EditArgs| Access::write([args.file_path.as_str()])).into_extensions()`.
//! Search tools consult a [`ReadFilter`] to leave read-denied files out of
//! their results.
//!
//! [`tools::edit::permissions`]: crate::tools::edit::permissions
//! [`Access`]: crate::access::Access
//! [`Permissions`]: crate::access::Permissions
//! [`PROTECTED_PATHS`]: crate::access::PROTECTED_PATHS
//! [`CommandAnalysis`]: crate::shell::CommandAnalysis
//! [`Policy`]: crate::config::Policy
//!
//! # Limits
//!
//! Command rules trust the program they name: `bash(git *)` allows
//! whatever git can be told to run (and a program the model can write to,
//! or configure, runs what the model wrote). Allow rules cover only
//! commands the analysis fully understood ([`CommandAnalysis`]); deny
//! rules see through the common wrappers (`env`, `timeout`, `xargs`,
//! `find -exec`, `find -delete` as `rm`, `bash -c`, …) and make a command
//! they cannot see through ask, but they are a guard against mistakes, not
//! a sandbox: a program not known as a wrapper, a script file, or a
//! configuration file can still run a denied command. Read-deny rules
//! bind the file tools; `bash(cat secrets/x)` is judged as a command, not
//! as a read.

mod approver;
mod decision;
mod engine;
mod mode;
pub(crate) mod paths;
mod read_filter;
mod rule;

pub use approver::{
    ApprovalAnswer, ApprovalRequest, Approver, ElicitationAnswer, ElicitationRequest, FnApprover,
    MAX_ELICITATION_CHARS, MAX_ELICITATION_SCHEMA_BYTES, approver_fn,
};
pub use decision::{Decision, DecisionSource, Verdict};
pub use engine::ApprovalEngine;
pub(crate) use engine::gate_decision;
pub use mode::{Mode, ModeError};
pub use read_filter::{HIDDEN_WALK_LIMIT, ReadFilter, WalkFilter};
pub use rule::{Rule, RuleError, RuleKind, RuleTarget};
