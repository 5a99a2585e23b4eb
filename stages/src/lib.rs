//! The per-call pipeline of agentcore as typed tower layers.
//!
//! A model proposes a tool call; this crate decides, in a fixed order,
//! whether and how it runs, and turns every outcome into a [`ToolResult`]
//! the model can read. The call's state is its type:
//!
//! ```text
//! Call<Unvalidated> ─ EventGuard ─▶ Call<Started>    Start emitted, End guaranteed
//!                   ─ Admit ──────▶ Call<Admitted>   not cancelled, breaker closed
//!                   ─ Resolve ────▶ Call<Resolved>   the tool found
//!                   ─ Coerce ─────▶ Call<Coerced>    args parsed and repaired
//!                   ─ Validate ───▶ Call<Validated>  schema, then the tool's check
//!                   ─ Preview ────▶ Call<Previewed>  e.g. a diff, emitted
//!                   ─ Gate ───────▶ Call<Gated>      allowed (or rewritten, re-checked)
//!                   ─ your layers ▶ Call<Gated>      audit, timeout, rate limit …
//!                   ─ Execute ────▶ Call<Executed>   the tool's result
//! ```
//!
//! Every stage is a tower [`Layer`](tower::Layer) whose service has
//! `Error = Infallible`: failures become results, never errors. Stages in
//! the wrong order do not compile (see [`StageStack`]).
//!
//! Every behaviour and every text a model reads is specified in
//! `docs/semantics.md` of the agentcore repository, which the module docs
//! cite by section (`docs/semantics.md` §2 is the pipeline table).
//!
//! # One stage shape
//!
//! Each stage lives in its own folder with the same files: `mod.rs` (what
//! the stage decides), `layer.rs` (`XLayer::new(…)`), `service.rs`
//! (`X::new(inner, …)`, with `get_ref` / `get_mut` / `into_inner`) and
//! `future.rs` (`x::ResponseFuture`). A stage moves a call on only with
//! the next state (the fields of a call are private to this crate), and
//! [`Stage`] and [`Executable`] are sealed: only the Gate stage can claim to
//! produce a `Call<Gated>`.
//!
//! Readiness follows one contract: a stage that decides in `call()`
//! (Admit, Resolve, Coerce, Validate, Preview, Gate) is ready when its inner
//! service is; a stage that wraps its inner service's whole run (the event
//! guard, the Boundary) is always ready and readies its inner service
//! inside its future, and Execute is always ready. The standard pipeline is
//! therefore always ready; put backpressure in front of it.
//!
//! The stages' futures are named types, not boxes: Validate and Preview
//! settle a tool's hook in `call()` when its future holds no state (the
//! defaults' do not), and Gate allows in `call()` when no gate is set; they
//! box an `async` block only to await a hook or a gate. Execute boxes its
//! future, which holds the tool's (borrowing the tool and the context).
//! A call's id and tool name are shared (`Arc<str>`), not copied per stage.
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use agentcore_stages::{BoxFuture, Call, CallContext, GatedArgs, Outcome, Pipeline,
//!     Tool, ToolError, ToolOutput, ToolRegistry};
//! use serde_json::{json, Value};
//! use tower::ServiceExt;
//!
//! struct Add { schema: Value }
//! impl Tool for Add {
//!     fn name(&self) -> &str { "add" }
//!     fn description(&self) -> &str { "Adds a and b." }
//!     fn schema(&self) -> &Value { &self.schema }
//!     fn execute<'a>(&'a self, args: GatedArgs, _cx: &'a CallContext)
//!         -> BoxFuture<'a, Result<ToolOutput, ToolError>>
//!     {
//!         Box::pin(async move {
//!             let v = args.value();
//!             let sum = v["a"].as_i64().unwrap_or(0) + v["b"].as_i64().unwrap_or(0);
//!             Ok(ToolOutput::text(sum.to_string()))
//!         })
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let schema = json!({"type": "object", "required": ["a", "b"],
//!     "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}});
//! let registry = Arc::new(ToolRegistry::new().with(Arc::new(Add { schema })).unwrap());
//! let pipeline = Pipeline::builder().registry(registry).build();
//! // "2" is coerced to 2: it has exactly one reading under the schema.
//! let call = Call::new("c1", "add", r#"{"a": 1, "b": "2"}"#);
//! let result = pipeline.service().oneshot(call).await.unwrap();
//! assert_eq!(result.outcome, Outcome::Success);
//! assert_eq!(result.text(), "3");
//! # });
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod admit;
mod breaker;
mod call;
pub mod coerce;
mod event;
pub mod execute;
mod future;
pub mod gate;
pub mod guard;
mod outcome;
mod panic;
mod pipeline;
pub mod preview;
mod registry;
pub mod resolve;
mod stack;
pub mod texts;
mod tool;
mod typed;
pub mod validate;

pub use breaker::Breaker;
pub use call::{
    Admitted, Call, CallContext, CancelReason, Cancellation, Coerced, Executed, GateVerdict, Gated,
    GatedArgs, Previewed, ProgressReporter, RawArgs, Resolved, Started, Unvalidated, Validated,
};
pub use coerce::Coercion;
pub use event::{Event, EventSink, ToolResultMessage, ToolResultSummary, UpdateKind};
pub use futures::future::BoxFuture;
pub use gate::{Gate, GateDecision, GateRequest};
pub use http::Extensions;
pub use outcome::{Content, Outcome, ToolError, ToolOutput, ToolResult};
pub use pipeline::{Pipeline, PipelineService};
pub use registry::{RegisteredTool, RegistryError, ToolRegistry};
pub use stack::{Executable, Stage, StageStack};
pub use tool::{
    InterruptBehavior, Tool, ValidationFailure, WithExtensions, is_concurrency_safe, listing,
};
pub use tower::BoxError;
pub use typed::{DESERIALIZE_FAILURE_CODE, Typed, TypedTool, schema_for};
