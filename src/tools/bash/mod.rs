//! The bash tool: a command in a fresh shell at the workspace root, in a
//! session and process group of its own, with a timeout, output kept
//! bounded in memory, and nothing left running when the call ends.
//!
//! - [`BashTool`]: the tool (`bash`, "Run Command").
//! - [`OutputDir`]: the session's folder of full outputs, which `read` may
//!   open.
//!
//! The result text starts with a status line (`Exit code: N`,
//! `Killed by signal S`, `Timed out after T ms` or `Interrupted`), then,
//! only when the output was cut,
//! `[Output truncated: L lines (B bytes) omitted from the middle. Full output: PATH]`,
//! then the output's head and tail, at most 30,000 characters.

mod env;
mod output;
mod output_dir;
mod process;
mod progress;
mod run;
mod spool;
mod tool;

pub use output_dir::OutputDir;
pub use tool::{BashTool, DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS};
