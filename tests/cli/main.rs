//! The `agentcore` binary's command line: `run`'s protocol and formats,
//! escaped line separators, the signals that end a session, a closed stdout,
//! terminals and colour, exit statuses, completions and the man page,
//! `sandbox exec`, and `mcp` whose client stops reading.
//!
//! One test binary; each module is a former `tests/NAME.rs` (run one with
//! `cargo test --test cli NAME`). What the binaries share is in
//! tests/support/.

#[path = "../support/mod.rs"]
mod support;

mod a_killed_session_leaves_a_consistent_store;
mod checkpoints_outlive_the_session;
mod cli_run;
mod output_lines_escape_line_separators;
mod pretty_activity_reads_coerced_arguments;
mod signals_end_a_session_waiting_for_input;
mod terminal;

mod a_closed_stdout_ends_quietly;
mod completions_and_man_page;
mod exit_statuses;
mod mcp_ends_when_its_client_stops_reading;
mod pretty_output_fits_the_terminal;
mod run_hints_when_reading_a_terminal;
mod run_offers_edit_lines_on_request;
mod run_results_are_the_next_request;
mod sandbox_exec_confines_one_command;
