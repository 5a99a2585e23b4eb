//! Execute: run the tool on gated arguments, and the boundary that lets
//! user middleware with ordinary tower errors sit in front of it.
//!
//! The tool's progress reports become `ToolExecUpdate{kind: progress}`; a
//! panic becomes `Failed` (`tool "NAME" panicked: MSG`); a cancellation
//! mid-run becomes `Cancelled` (`Tool execution cancelled.`).

mod boundary;
mod future;
mod service;

pub use boundary::{Boundary, BoundaryLayer};
pub use future::{BoundaryFuture, ResponseFuture};
pub use service::Execute;
