//! The command sandbox: what it confines, directly and through the bash tool,
//! and the sessions' own folders and processes.
//!
//! One test binary; each module is a former `tests/NAME.rs` (run one with
//! `cargo test --test sandbox NAME`). What the binaries share is in
//! tests/support/.

#[path = "../support/mod.rs"]
mod support;

mod a_days_work_offline;
mod commands_are_born_in_their_cgroups;
mod git_commits_inside_the_sandbox;
mod network_allowlist_is_set_up_or_refused;
mod proxy_filters_by_domain;
mod resource_limits_hold;
mod sandbox_confines_commands;
mod sandboxed_commands_through_bash;
mod sessions_die_with_agentcore_and_hide_from_each_other;
mod terminal_sessions_stay_confined;
mod the_library_confines_bash_by_default;
mod the_probe_is_kept_while_the_circumstances_hold;
mod toolchains_reach_registries_through_the_proxy;
