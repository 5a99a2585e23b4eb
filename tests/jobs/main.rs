//! The bash tool and its processes: timeouts, cancellation, output, the
//! environment, background jobs, commands that never wait for input,
//! read-only commands side by side. tests/attack_bash_processes.rs is a
//! binary of its own (it makes the process a child subreaper that reaps every
//! zombie child).
//!
//! One test binary; each module is a former `tests/NAME.rs` (run one with
//! `cargo test --test jobs NAME`). What the binaries share is in
//! tests/support/.

#[path = "../support/mod.rs"]
mod support;

mod background_jobs_outlive_calls_not_sessions;
/// Whether tests/jobs/bash_tool.rs runs its commands in the sandbox (its
/// fixture reads `super::SANDBOXED`): not here, where it is mounted as
/// `bash_tool`; yes in tests/jobs/bash_tool_sandboxed.rs, which mounts the
/// same file again as `bash_tool_sandboxed::bash_tool`.
#[cfg(target_os = "linux")]
const SANDBOXED: bool = false;

mod bash_tool;
mod bash_tool_sandboxed;
mod commands_never_wait_for_input;
mod outputs_can_be_read_again;
mod read_only_commands_run_side_by_side;
mod terminal_sessions;
