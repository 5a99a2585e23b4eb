//! Claude Code hooks: the CLI's options, the scripts, and model-written code
//! run only confined.
//!
//! One test binary; each module is a former `tests/NAME.rs` (run one with
//! `cargo test --test hooks NAME`). What the binaries share is in
//! tests/support/.

#[path = "../support/mod.rs"]
mod support;

mod hooks_cli_options;
mod hooks_run_claude_code_scripts;
mod hooks_run_model_written_code_only_confined;
