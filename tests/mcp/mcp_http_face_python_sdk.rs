//! `agentcore mcp --http` driven by the official Python MCP SDK's
//! streamable-HTTP client (tests/mcp_sdk/test_mcp_http.py): tools/list, a
//! call, progress, cancellation, a background job ended by the client's
//! DELETE, refusals without or with a wrong token (bound off loopback), and
//! SIGTERM.
//!
//! The SDK's Python is `AGENTCORE_MCP_SDK_PYTHON` (.ci/run sets it; then it
//! must work), or `python3` when it has the SDK. The test is ignored by a
//! plain `cargo test` and fails, saying so, when run without either.

use std::process::Command;

use crate::support::python;

#[test]
#[ignore = "needs the Python MCP SDK (AGENTCORE_MCP_SDK_PYTHON)"]
fn the_python_sdk_drives_the_http_face() {
    let python = python::require_sdk_python(
        "mcp.client.streamable_http, httpx2",
        "the MCP SDK's streamable-HTTP client",
    );
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/mcp_sdk/test_mcp_http.py"
    );
    let output = Command::new(&python)
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_agentcore"))
        .output()
        .expect("run the SDK script");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains("all checks passed"),
        "{stdout}\n{stderr}"
    );
}
