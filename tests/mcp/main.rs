//! `agentcore mcp` (stdio and HTTP) and the MCP client: mounted servers,
//! protocol versions, approvals asked through the client, the official Python
//! SDK.
//!
//! One test binary; each module is a former `tests/NAME.rs` (run one with
//! `cargo test --test mcp NAME`). What the binaries share is in
//! tests/support/.

#[path = "../support/mod.rs"]
mod support;

mod mcp_approvals_asked_through_the_client;
mod mcp_client_forwards_questions_to_the_person;
mod mcp_client_lists_many_tools_by_name_and_searches_them;
mod mcp_client_mounts_an_http_server;
mod mcp_client_mounts_an_https_server;
mod mcp_client_mounts_external_servers;
mod mcp_client_negotiates_the_protocol_version;
mod mcp_client_refuses_answers_over_the_bound;
mod mcp_client_signs_in_with_oauth;
mod mcp_http_face_python_sdk;
mod mcp_http_serves_the_stateless_revision;
mod mcp_http_sessions_end_like_stdio;
mod mcp_http_unused_sessions_expire;
mod mcp_server;
mod mcp_serves_checkpoints_and_rewind;
mod mcp_serves_terminal_sessions;
