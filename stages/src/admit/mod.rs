//! Admit: the call's cancellation and the circuit breaker.
//!
//! A cancelled call ends here with its reason (`Cancelled` for an abort,
//! `Skipped` for steering); a tool whose consecutive failures reached
//! `max_tool_errors` ends `Disabled`. The breaker is checked when the call is
//! admitted, not when it was queued, and every call this stage lets through
//! is accounted when it ends.

mod future;
mod layer;
mod service;

pub use future::ResponseFuture;
pub use layer::AdmitLayer;
pub use service::Admit;
