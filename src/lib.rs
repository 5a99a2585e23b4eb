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
//! | harness | [`message`], [`scheduler`], [`turn`], [`loop_guard`] | Tool calls and results in each provider's shape, JSON Lines; the scheduler (safe calls side by side, unsafe alone); one assistant message's calls as a turn; the guard that stops a model repeating the same call | pipeline |
//! | fs | [`fs`] | The [`fs::workspace::Workspace`], handle-based resolution below a root, walks, atomic writes, the read-before-write ledger, the paths the gate judged | access |
//! | checkpoint | [`checkpoint`] | Checkpoints of every change a call makes, in a store outside the workspace, and the rewind that never clobbers what no call made | access, fs |
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
//! A tool from a closure, listed for the model, then one assistant message's
//! calls run as a turn through a pipeline and a scheduler, and answered:
//!
//! ```
//! use std::sync::Arc;
//! use agentcore::message::anthropic;
//! use agentcore::scheduler::{Scheduler, SchedulerConfig};
//! use agentcore::schemars::JsonSchema;
//! use agentcore::tools::fn_tool;
//! use agentcore::turn::Turn;
//! use agentcore::{Event, Outcome, Pipeline, ToolOutput, ToolRegistry};
//! use serde::Deserialize;
//! use serde_json::json;
//!
//! #[derive(Deserialize, JsonSchema)]
//! #[schemars(crate = "agentcore::schemars")] // the schemars agentcore re-exports
//! struct ShoutArgs {
//!     /// What to shout.
//!     text: String,
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let shout = fn_tool("shout", "Upper-cases `text`.", |args: ShoutArgs, _cx| async move {
//!     Ok(ToolOutput::text(args.text.to_uppercase()))
//! })
//! .read_only(); // no side effects: may run beside other read-only calls
//!
//! let registry = Arc::new(ToolRegistry::new().with(shout.into_dyn())?);
//! // No gate: every call is allowed. To decide per call, add
//! // `.gate(Arc::new(gate_fn(..)))` or the approval engine (`approval`).
//! let pipeline = Pipeline::builder().registry(registry).build();
//! let scheduler = Scheduler::from_pipeline(&pipeline, SchedulerConfig::default());
//!
//! // The request's `tools`; the model answers with calls.
//! let tools = anthropic::tool_definitions(pipeline.registry());
//! assert_eq!(tools[0]["name"], "shout");
//! let reply = json!({"role": "assistant", "content": [
//!     {"type": "tool_use", "id": "toolu_1", "name": "shout", "input": {"text": "hi"}},
//!     {"type": "tool_use", "id": "toolu_2", "name": "whisper", "input": {}}
//! ]});
//! let calls = anthropic::parse_tool_calls(&reply)?;
//!
//! let (turn, mut events) = Turn::with_channel(&scheduler);
//! let result = turn.run(calls).await?;
//! assert_eq!(result.results[0].text(), "HI");
//! assert_eq!(result.results[1].outcome, Outcome::Failed); // unknown tool
//! // The next request's user message carries every result.
//! let answer = anthropic::user_message(&result.results);
//! assert_eq!(answer["content"][1]["is_error"], true);
//!
//! // Every call's Start is paired with one End; the turn ends with the
//! // model response.
//! let mut last = None;
//! while let Ok(event) = events.try_recv() {
//!     last = Some(event);
//! }
//! assert!(matches!(last, Some(Event::ModelResponse { .. })));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! A tool with more to say (a validation of its own, a preview for the
//! gate, arguments-dependent read-only) implements [`TypedTool`];
//! `examples/custom_tool.rs` shows one. With layers of your own before
//! Execute, build the service with [`Pipeline::service_with`] and give it
//! to [`Scheduler::new`](scheduler::Scheduler::new) with the pipeline's
//! registry. The OpenAI shapes, Chat Completions and the Responses API,
//! are in [`message::openai`].
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
pub use agentcore_stages::gate::gate_fn;
pub use agentcore_stages::{
    Event, EventSink, Gate, GateDecision, GateRequest, ToolResultMessage, UpdateKind,
};
// Writing middleware: the states before and after Execute, where
// `Pipeline::service_with` puts your layers (`Service<Call<Gated>,
// Response = Call<Executed>>`).
pub use agentcore_stages::{Executed, Gated};
/// The schemars version this crate derives schemas with, so a tool's
/// `Args` can derive [`JsonSchema`](schemars::JsonSchema) without a
/// dependency of its own (and without a second, mismatched schemars).
/// Without `schemars` in your own `Cargo.toml`, tell the derive where the
/// crate is:
///
/// ```
/// use agentcore::schemars::JsonSchema;
///
/// #[derive(serde::Deserialize, JsonSchema)]
/// #[schemars(crate = "agentcore::schemars")]
/// struct Args {
///     /// The file to read.
///     path: String,
/// }
/// # let _ = agentcore::stages::schema_for::<Args>(true);
/// ```
pub use schemars;
// The fixed texts a model reads (cancelled, skipped, denied, …).
pub use agentcore_stages::texts;

// The modules are the layers of the crate docs' table (rustfmt sorts them
// here); the `layers` test checks that each imports only its own layer and
// those below it. The pipeline, `stages`, is below them all.
pub mod access;
pub mod approval;
pub mod checkpoint;
pub mod config;
mod diff;
pub mod error_code;
pub mod fs;
pub mod hooks;
pub mod limits;
pub mod loop_guard;
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
