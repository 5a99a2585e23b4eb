//! Attacks: the ways found around the permissions, the sandbox, the file
//! tools, the hooks and the protocols, each with what stops it.
//! tests/attack_bash_processes.rs is a binary of its own (it makes the
//! process a child subreaper that reaps every zombie child).
//!
//! One test binary; each module is a former `tests/NAME.rs` (run one with
//! `cargo test --test attacks NAME`). What the binaries share is in
//! tests/support/.

#[path = "../support/mod.rs"]
mod support;

mod attack_bash_allow_rules;
mod attack_bash_deny_wrappers;
mod attack_bash_git_bare_repository;
mod attack_bash_secrets;
mod attack_cancel_truth;
mod attack_elicitation_answers;
mod attack_gate_judges_what_the_tool_opens;
mod attack_git_file;
mod attack_grep_regex_bounds;
mod attack_hard_links;
mod attack_hooks;
mod attack_lost_updates;
mod attack_mcp_http_exhaustion;
mod attack_mcp_http_face;
mod attack_permissions;
mod attack_protocol_mcp;
mod attack_protocol_pretty;
mod attack_protocol_run;
mod attack_sandbox_claude_settings;
mod attack_sandbox_escapes;
mod attack_sandbox_metadata;
mod attack_sandbox_unix_sockets;
mod attack_special_files;
mod attack_swapped_directory;
mod attack_swapped_directory_walks;
mod attack_walks_protected_paths;
