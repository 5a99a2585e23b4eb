//! agentcore: the tool-execution kernel of an AI coding agent.
//!
//! This crate re-exports the per-call pipeline of [`agentcore_stages`] and
//! adds what lives around one call.

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
