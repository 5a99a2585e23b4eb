//! The event guard: outermost stage, pairs every Start with exactly one End.
//!
//! `ToolExecStart` is emitted in `call()` itself. The End is emitted when
//! the inner stages return, when any of them panics, and when the response
//! future is dropped: a drop guard then cancels the call's token (so work in
//! spawned tasks stops) and reports `Cancelled`.

mod future;
mod layer;
mod service;

pub use future::ResponseFuture;
pub use layer::EventGuardLayer;
pub use service::EventGuard;
