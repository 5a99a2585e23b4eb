//! The turn scheduler: a tower [`Service`](tower::Service) around the whole
//! per-call pipeline that admits calls strictly in arrival order.
//!
//! - `poll_ready` reserves a place in a bounded queue (backpressure); `call`
//!   enqueues at once, so queue order is call order.
//! - Calls are admitted with head-of-line blocking: concurrency-safe calls
//!   run side by side up to `max_concurrency`, an unsafe call runs alone.
//!   Admission happens under one lock wherever the queue changes: in the
//!   handle's `call` (a lone call starts there, each call in its own task),
//!   when a call ends (the next ones start), and on steering and abort.
//! - A turn's call that may start on arrival (nothing queued before it, a
//!   slot free) starts in the turn's task: its first poll runs there, and
//!   only a call that does not end on it (it waits on I/O, a timer, the
//!   blocking pool) goes on in a task of its own with a reply channel. So
//!   a call that ends at once costs no task, and every started call still
//!   runs on without its caller polling, safe calls side by side on the
//!   runtime's threads.
//! - Safety is decided when a call enters, from a pure parse + coerce of its
//!   arguments: `concurrency_safe(args)`, else `read_only(args)`; an unknown
//!   tool, unparsable arguments or a panicking capability method count as
//!   unsafe. The call keeps that parse + coerce for the pipeline's Coerce
//!   stage ([`Call::coerce_for`](agentcore_stages::Call::coerce_for)), so
//!   its arguments are parsed and coerced once.
//! - The whole pipeline of a call, gate included, runs inside its admission
//!   slot, so a read and then an edit of the same file in one turn pass
//!   read-before-write.
//! - Steering and abort act on the queue and on in-flight calls' child
//!   cancellations, and are noticed at once.
//!
//! The shape is tower's `Buffer`: a cloneable handle ([`Scheduler`]) and a
//! worker task ([`Worker`]), which here only keeps the scheduler's lifetime:
//! dropping it ends every call.

mod safety;
pub(crate) mod service;
mod worker;

pub use service::{ResponseFuture, Scheduler, SchedulerConfig, SchedulerError, SteeringPolicy};
pub use worker::Worker;
