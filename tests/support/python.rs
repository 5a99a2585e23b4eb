//! The Python with the official MCP SDK, for the tests that drive
//! `agentcore mcp` through it or mount servers written with it. Those
//! tests are `#[ignore = "needs the Python MCP SDK (AGENTCORE_MCP_SDK_PYTHON)"]`.

use std::process::Command;

/// The Python that can `import MODULES` of the official MCP SDK (2.x):
/// `AGENTCORE_MCP_SDK_PYTHON` (set by .ci/run, which installs the SDK), or
/// `python3` when it can. Fails the test, saying it cannot import `what`,
/// when neither can.
pub fn require_sdk_python(modules: &str, what: &str) -> String {
    let has_sdk = |python: &str| {
        Command::new(python)
            .args(["-c", &format!("import {modules}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if let Ok(python) = std::env::var("AGENTCORE_MCP_SDK_PYTHON") {
        assert!(
            has_sdk(&python),
            "this test needs the Python MCP SDK: AGENTCORE_MCP_SDK_PYTHON={python} cannot import {what}"
        );
        return python;
    }
    assert!(
        has_sdk("python3"),
        "this test needs the Python MCP SDK: AGENTCORE_MCP_SDK_PYTHON is not set and python3 cannot \
         import {what} (install it with `python3 -m venv .venv && .venv/bin/pip install \"mcp==2.3.0\"`, \
         then set AGENTCORE_MCP_SDK_PYTHON=$PWD/.venv/bin/python)"
    );
    "python3".to_owned()
}
