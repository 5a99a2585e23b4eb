//! The bash tool: a command in a fresh shell at the workspace root, in a
//! session and process group of its own, with a timeout, output kept
//! bounded in memory, and nothing left running when the call ends.
//!
//! - [`BashTool`]: the tool (`bash`, "Run Command"), its arguments
//!   [`BashArgs`], and [`permissions`]: what a call touches.
//! - [`bash_output`] and [`kill_shell`]: the tools that read and stop a
//!   command run in the background ([`Jobs`]).
//! - [`OutputDir`]: the session's folder of full outputs, which `read` may
//!   open.
//! - [`adopt_orphans`] and [`make_undumpable`]: process-wide settings (the
//!   `agentcore` binary makes both at startup; [`BashTool::new`] makes
//!   this process non-dumpable).
//!
//! Every process a command starts is killed when its call ends (normal
//! exit, timeout, cancellation, or a dropped future), also one that moved
//! to a group or session of its own: they are found in `/proc` by a marker
//! variable (`AGENTCORE_CALL_ID`), by session, and by descent from the
//! shell, which runs as a child subreaper. Until commands run in a PID
//! namespace this is tracking, not containment: a process that scrubs its
//! environment, leaves the session and is orphaned at the very moment the
//! shell exits is found only when this process adopts orphans in
//! [`OrphanScope::Process`]; one that changes its user (setuid) may not be
//! signalled at all.
//!
//! The result text starts with a status line (`Exit code: N`,
//! `Killed by signal S`, `Timed out after T ms` or `Interrupted`), then,
//! only when the output was cut,
//! `[Output truncated: L lines (B bytes) omitted from the middle. Full output: PATH]`
//! and, when the output was saved,
//! `Read it again with bash_output {"call_id": "ID", "pattern": "REGEX"} or {"call_id": "ID", "offset": N, "limit": M}.`,
//! then the output's head and tail, at most 30,000 characters.
//! [`bash_output`] reads a saved output again, by call id or job id, a page
//! of lines or the lines a pattern matches at a time.
//!
//! [`OutputDir`]: crate::process::OutputDir
//! [`adopt_orphans`]: crate::process::adopt_orphans
//! [`make_undumpable`]: crate::process::make_undumpable
//! [`OrphanScope::Process`]: crate::process::OrphanScope::Process

pub mod bash_output;
mod jobs;
mod kept;
pub mod kill_shell;
mod output;
mod pipe;
mod progress;
mod prompt;
mod run;
mod spawn;
mod spool;
#[cfg(target_os = "linux")]
mod terminal;
mod tool;
pub mod write_stdin;

pub use jobs::{JobExit, JobLimits, JobStatus, Jobs};
pub use progress::BashProgress;
pub use tool::{BashArgs, BashTool, SPEC, permissions, permissions_in};
