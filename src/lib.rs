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
//! # Where things live
//!
//! | Module | What it holds |
//! |---|---|
//! | [`stages`] (and the re-exports at this crate's root) | One call's pipeline: [`Tool`], [`TypedTool`], [`Call`] and its states, the stages, [`Pipeline`], [`ToolRegistry`], [`Event`], [`Gate`] |
//! | [`tools`] | The built-in tools, one file (or folder) per tool: its `Args` type (the schema the model sees), its `permissions()` (what a call touches) and its execution; the workspace, the read-before-write ledger and the shared file helpers beside them; bash's background jobs in `tools::bash` (the job table, `Jobs`), read and stopped by `bash_output` and `kill_shell`; which of them a session registers, `tools::set` (`--tools`) |
//! | [`approval`] | The approval engine, an ordinary [`Gate`]: rules and their typed targets, modes, policy files, the bash command analysis, permissions |
//! | [`hooks`] | Claude Code command hooks run unchanged: PreToolUse in the gate before the approval engine, PostToolUse and PostToolUseFailure as a tower layer after Execute; their configuration (settings files, the policy's `[hooks]` table) and their processes |
//! | [`scheduler`] | A tower service around the pipeline that admits calls in arrival order: concurrency-safe calls side by side, unsafe calls alone |
//! | [`turn`] | One assistant message's calls in, results in source order, tool-result messages and a `ModelResponse` out; steering and abort |
//! | [`session`] | The built-in tools, approval engine, pipeline and scheduler wired together, and built from the CLI's options, as `agentcore run` and `agentcore mcp` use them; the session owns the background jobs and kills them when it ends |
//! | [`message`] | Tool calls and results in each provider's shape: one file per provider (Anthropic, OpenAI, MCP) |
//! | [`mcp`] | The built-in tools served over MCP (`tools/list`, `tools/call`, progress, cancellation, approvals asked through the client's elicitation); in [`mcp::http`], the same over streamable HTTP (`agentcore mcp --http`: one session per MCP session id, bearer token, `Origin` check, caps); in [`mcp::client`], external MCP servers mounted into a session as `mcp__SERVER__TOOL` tools (`[[mcp_servers]]`, `Session::connect`) |
//! | [`sandbox`] | The command sandbox: a [`sandbox::Sandbox`] confines a spawned process with the kernel (Linux: user, mount, PID and network namespaces, Landlock, seccomp), and says what this machine offers |
//!
//! The `agentcore` binary (`run`, `demo`, `tools`, `mcp`) is built on these
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
// - `sandbox::linux::install` and `tools::bash::process::prepare_child`:
//   the `pre_exec` hooks of a confined command and of every shell.
// The `agentcore` binary (src/main.rs) has one more: `set_var` before any
// thread starts.
#![deny(unsafe_code)]
#![warn(
    clippy::undocumented_unsafe_blocks,
    clippy::multiple_unsafe_ops_per_block
)]
#![warn(missing_docs)]

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

pub mod approval;
pub mod hooks;
pub mod judged;
// The bounded JSON Lines reader the binary's `run` and the MCP server
// share; public for the binary, not part of the library's API.
#[doc(hidden)]
pub mod lines;
pub mod mcp;
pub mod message;
pub mod sandbox;
pub mod scheduler;
pub mod session;
pub mod tools;
pub mod turn;
