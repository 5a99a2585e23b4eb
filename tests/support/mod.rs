//! What the test binaries share. Each binary (`tests/AREA/main.rs`) mounts
//! this folder as `crate::support`; its test modules use what they need
//! from it, so one binary leaves most of it unused (hence `dead_code` is
//! allowed here, and only here).
//!
//! - [`cli`]: `agentcore run` as a child process, and its JSON events;
//! - [`files`]: a scratch workspace with the file tools over one ledger,
//!   and the small file helpers of the read, write and edit tests;
//! - [`http`]: `agentcore mcp --http` as a child process, and a raw
//!   HTTP/1.1 client;
//! - [`mcp_stdio`]: `agentcore mcp` over its stdio and a JSON-RPC client;
//! - [`procs`]: processes found by a unique number in their argv, pids,
//!   and the environment the bash tool's commands start with;
//! - [`python`]: the Python with the official MCP SDK;
//! - [`registry`]: registries on loopback (npm, git over dumb HTTP, a
//!   PyPI simple index, a cargo sparse registry) with a log of the
//!   requests they were sent;
//! - [`require`]: what a test needs beyond a Rust toolchain, checked: an
//!   `#[ignore = "needs …"]` test run without it fails naming it;
//! - [`sandbox`]: the scene of a sandbox test through `agentcore run`;
//! - [`scheduler`]: the probe tool and scheduler of the scheduler and turn
//!   tests.
#![allow(dead_code)]

pub mod cli;
pub mod files;
pub mod http;
pub mod mcp_stdio;
pub mod procs;
pub mod python;
pub mod registry;
pub mod require;
pub mod sandbox;
pub mod scheduler;

/// The text blocks of a tool's content, joined by newlines.
pub fn text_of(blocks: &[agentcore::Content]) -> String {
    blocks
        .iter()
        .filter_map(|b| b.as_text())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The path of a hook script in `tests/fixtures/hooks/`.
pub fn hook_fixture(name: &str) -> String {
    format!("{}/tests/fixtures/hooks/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The name the test harness knows test `name` of the module at
/// `module_path` (`module_path!()`) by: the module's path without the
/// binary's crate name, then the test. A test that runs another test of
/// its binary in a child process passes it with `--exact`.
pub fn test_name(module_path: &str, name: &str) -> String {
    match module_path.split_once("::") {
        Some((_, module)) => format!("{module}::{name}"),
        None => name.to_owned(),
    }
}
