//! agentcore: the tool-execution kernel of an AI coding agent.
//!
//! The model proposes tool calls; agentcore runs them and turns every
//! outcome into a result the model can read. The per-call pipeline is the
//! [`stages`] crate (one call, from `Call<Unvalidated>` to its
//! [`ToolResult`]: coerce, validate, preview, gate, execute; see its docs
//! for the stage diagram); the items used daily are re-exported at this
//! crate's root, everything else is under [`stages`]. This crate adds what
//! lives around one call:
//!
//! ```text
//!  assistant message ─▶ Turn ─▶ Scheduler ─▶ Pipeline (per call) ─▶ Tool
//!  (ToolCall, …)         │       arrival order;     EventGuard … Gate,
//!                        │       safe calls side    your layers, Execute
//!                        │       by side, unsafe
//!                        │       calls alone
//!                        ▼
//!  events: tool_exec_start / _update / _end, message_start / _end, model_response
//! ```
//!
//! # Layers
//!
//! The crate is built in layers, from the bottom; each module imports
//! only the modules of its own row and the rows above it in this table
//! (the unit test `layers` checks every `crate::` path), so no two parts
//! import each other:
//!
//! | Layer | Modules | What it holds | May import |
//! |---|---|---|---|
//! | pipeline | [`stages`] (re-exported at this crate's root) | One call's pipeline: [`Tool`], [`TypedTool`], [`Call`] and its states, the stages, [`Pipeline`], [`ToolRegistry`], [`Event`], [`Gate`] | — |
//! | access | [`access`], [`error_code`] | What a call touches: [`access::Access`], [`access::Permissions`], and the protected-path vocabulary the engine, the sandbox and the hooks share; [`ErrorCode`](error_code::ErrorCode), the numbers 1–10 of the built-in tools' refusals | pipeline |
//! | harness | [`message`], [`scheduler`], [`turn`] | Tool calls and results in each provider's shape, JSON Lines; the scheduler (safe calls side by side, unsafe alone); one assistant message's calls as a turn | pipeline |
//! | fs | [`fs`] | The [`fs::workspace::Workspace`], handle-based resolution below a root, walks, atomic writes, the read-before-write ledger, the paths the gate judged | access |
//! | process | [`process`] | Starting, tracking and killing a command's processes; the environment scrub; the session's output folders | — |
//! | sandbox | [`sandbox`] | The command sandbox (Linux: namespaces, Landlock, seccomp) and what this machine offers | access, fs, process |
//! | shell | [`shell`] | Bash commands read before they run: their parts, wrappers seen through, read-only programs | access |
//! | tools | [`tools`] | The built-in tools, one folder or file per family; which of them a session registers (`tools::set`) | all of the above |
//! | approval | [`approval`] | The approval engine, an ordinary [`Gate`]: rules, modes, session grants, the read filter | all of the above |
//! | hooks | [`hooks`] | Claude Code command hooks: PreToolUse in the gate, PostToolUse as a tower layer | all of the above |
//! | mcp client | [`mcp::client`] | External MCP servers' tools mounted as `mcp__SERVER__TOOL` | all of the above |
//! | config | [`config`] | The policy file (`--policy`): every part's table, read from TOML | all of the above |
//! | session | [`session`] | The built-in tools, approval engine, hooks, pipeline and scheduler wired together, as `agentcore run` and `agentcore mcp` use them | all of the above |
//! | mcp server | [`mcp`] (not `mcp::client`) | The session served over MCP: stdio, and streamable HTTP in [`mcp::http`] | all of the above |
//!
//! The `agentcore` binary (`run`, `demo`, `tools`, `mcp`, `sandbox check`) is built on these
//! modules; its command-line code is private to it.
//!
//! # Example
//!
//! A typed tool run as one turn through a pipeline and a scheduler:
//!
//! ```
//! use std::sync::Arc;
//! use agentcore::message::ToolCall;
//! use agentcore::scheduler::{Scheduler, SchedulerConfig};
//! use agentcore::turn::Turn;
//! use agentcore::{
//!     CallContext, Event, Outcome, Pipeline, ToolError, ToolOutput, ToolRegistry, TypedTool,
//! };
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use serde_json::json;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct ShoutArgs {
//!     /// What to shout.
//!     text: String,
//! }
//!
//! struct Shout;
//!
//! impl TypedTool for Shout {
//!     type Args = ShoutArgs;
//!     fn name(&self) -> &str { "shout" }
//!     fn description(&self) -> &str { "Upper-cases `text`." }
//!     async fn execute(&self, args: ShoutArgs, _cx: &CallContext) -> Result<ToolOutput, ToolError> {
//!         Ok(ToolOutput::text(args.text.to_uppercase()))
//!     }
//!     fn read_only(&self, _args: &ShoutArgs) -> bool { true }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let registry = Arc::new(ToolRegistry::new().with(Shout.into_dyn()).unwrap());
//! let pipeline = Pipeline::builder().registry(registry.clone()).build();
//! let scheduler = Scheduler::new(pipeline.service(), registry, SchedulerConfig::default());
//!
//! let (turn, mut events) = Turn::with_channel(&scheduler);
//! let result = turn
//!     .run([
//!         ToolCall::new("c1", "shout", json!({"text": "hi"})),
//!         ToolCall::new("c2", "whisper", "{}"),
//!     ])
//!     .await
//!     .unwrap();
//! assert_eq!(result.results[0].text(), "HI");
//! assert_eq!(result.results[1].outcome, Outcome::Failed); // unknown tool
//! // Every call's Start is paired with one End; the turn ends with the
//! // model response.
//! let mut last = None;
//! while let Ok(event) = events.try_recv() {
//!     last = Some(event);
//! }
//! assert!(matches!(last, Some(Event::ModelResponse { .. })));
//! # });
//! ```
//!
//! More in `examples/`: `custom_tool`, `middleware` (audit, timeout and a
//! rate limit at the insertion point), `axum_service` (events as
//! server-sent events), `subagent_tool` and `hook_layer` (Claude Code hooks
//! run unchanged, and the same formatter as a tower layer).
//!
//! The specification is in the repository's `docs/` folder:
//! `docs/architecture.md` (the layout and the call's life as types),
//! `docs/semantics.md` (the pipeline, coercion, validation messages, the
//! scheduler), `docs/tools.md` (the built-in tools and the table of
//! [`ErrorCode`](error_code::ErrorCode)s) and `docs/cli.md` (the binary, its
//! JSONL protocol, the policy file, the MCP server).

// `unsafe` is denied everywhere but in the modules that allow it, all of
// them about processes started by fork, and every block there says why it
// is sound (`// SAFETY:`, one unsafe operation per block):
// - `sandbox::linux::sys`: the system calls rustix does not wrap, on libc
//   (fork, _exit, signal dispositions, close_range, ioctl, mount_setattr,
//   the Landlock calls, a read-only remount);
// - `sandbox::linux::child`: the code that runs between fork and exec,
//   behind the `unsafe fn enter` (forks, `unshare`);
// - `sandbox::linux::probe` and `sandbox::linux::session_net`: the fork of
//   the probe's trial child and of the session's namespace helper;
// - `sandbox::linux::install` and `process::child::prepare_child`:
//   the `pre_exec` hooks of a confined command and of every shell.
// The `agentcore` binary (src/main.rs) has one more: `set_var` before any
// thread starts.
#![deny(unsafe_code)]
#![warn(
    clippy::undocumented_unsafe_blocks,
    clippy::multiple_unsafe_ops_per_block
)]
#![warn(missing_docs)]
#![warn(unreachable_pub)]

/// The per-call pipeline crate, whole: every stage, the call states, the
/// futures. The items a harness or a tool uses daily are re-exported below.
pub use agentcore_stages as stages;

// Writing a tool.
pub use agentcore_stages::{
    BoxFuture, CallContext, Content, Extensions, GatedArgs, InterruptBehavior, Tool, ToolError,
    ToolOutput, TypedTool, ValidationFailure,
};
// Running calls.
pub use agentcore_stages::{
    BoxError, Call, CancelReason, Cancellation, Outcome, Pipeline, RawArgs, RegistryError,
    ToolRegistry, ToolResult,
};
// Watching and gating them.
pub use agentcore_stages::{
    Event, EventSink, Gate, GateDecision, GateRequest, ToolResultMessage, UpdateKind,
};
// The fixed texts a model reads (cancelled, skipped, denied, …).
pub use agentcore_stages::texts;

// The modules are the layers of the crate docs' table (rustfmt sorts them
// here); the `layers` test checks that each imports only its own layer and
// those below it. The pipeline, `stages`, is below them all.
pub mod access;
pub mod approval;
pub mod config;
pub mod error_code;
pub mod fs;
pub mod hooks;
pub mod limits;
#[cfg(any(feature = "mcp-server", feature = "mcp-client"))]
pub mod mcp;
pub mod message;
pub mod process;
pub mod sandbox;
pub mod scheduler;
pub mod session;
pub mod shell;
pub mod tools;
pub mod turn;

#[cfg(test)]
mod layers;
