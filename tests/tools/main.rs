//! The tools one by one (read, write, glob, ls, grep), their definitions and
//! tool sets, provider messages, the scheduler and turns.
//!
//! One test binary; each module is a former `tests/NAME.rs` (run one with
//! `cargo test --test tools NAME`). What the binaries share is in
//! tests/support/.

#[path = "../support/mod.rs"]
mod support;

mod a_session_takes_tools_of_its_own;
mod arguments_are_coerced_once;
mod fn_tool_runs_through_a_pipeline;
mod glob_ls_tools;
mod grep_content_streams_the_same_output;
mod grep_matches_ripgrep;
mod grep_stops_once_the_window_is_full;
mod grep_tool;
mod ls_fills_its_budget_breadth_first;
mod provider_messages;
mod read_denied_paths_tell_nothing;
mod read_then_write_partial;
mod read_tool;
mod repeated_walks_are_never_stale;
mod scheduler_admission;
mod scheduler_admits_without_its_worker;
mod the_loop_guard_stops_repeats;
mod tool_definitions_are_pinned;
mod tool_sets_choose_what_the_model_sees;
mod turn_runs_instant_calls_in_its_own_task;
mod turn_steering;
mod workspace_hostile_paths;
mod write_tool;
