//! agentcore: the tool-execution kernel of an AI coding agent.
//!
//! The model proposes tool calls; agentcore runs them and turns every
//! outcome into a result the model can read. This crate re-exports the
//! per-call pipeline of [`agentcore_stages`] (one call, from
//! `Call<Unvalidated>` to its [`ToolResult`]: coerce, validate, preview,
//! gate, execute; see that crate's docs for the stage diagram) and adds
//! what lives around one call:
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
//! - [`turn`]: one assistant message's calls in, results in source order,
//!   tool-result messages and a `ModelResponse` out; steering and abort.
//! - [`scheduler`]: a tower service around the pipeline that admits calls
//!   in arrival order (concurrency-safe calls together, unsafe ones alone).
//! - [`session`]: the built-in tools, approval gate, pipeline and scheduler
//!   wired together, as the CLI and the MCP server use them.
//! - [`tools`]: the built-in tools (read, write, edit, bash, grep, glob, ls).
//! - [`approval`]: the approval engine, an ordinary [`Gate`].
//! - [`message`]: tool calls and results in the shapes providers use.
//! - [`mcp`] and [`cli`]: the built-in tools over MCP, and the binary.
//! - [`typed`]: write a tool with typed arguments and a derived schema.
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
//! use agentcore::typed::TypedTool;
//! use agentcore::{CallContext, Event, Outcome, Pipeline, ToolError, ToolOutput, ToolRegistry};
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
//! server-sent events) and `subagent_tool`.

// `unsafe` is allowed only for the process-group syscalls of the bash tool.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub use agentcore_stages as stages;
pub use agentcore_stages::*;

pub mod approval;
pub mod cli;
pub mod mcp;
pub mod message;
pub mod scheduler;
pub mod session;
pub mod tools;
pub mod turn;
