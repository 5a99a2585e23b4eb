//! The Python with the official MCP SDK, for the tests that drive
//! `agentcore mcp` through it or mount servers written with it.

use std::process::Command;

/// The Python that can `import MODULES` of the official MCP SDK (2.x):
/// `AGENTCORE_MCP_SDK_PYTHON` (set by .ci/run, which installs the SDK; then
/// it must work, or the test fails saying it cannot import `what`), or
/// `python3` when it can. `None` when neither can.
pub fn sdk_python(modules: &str, what: &str) -> Option<String> {
    let has_sdk = |python: &str| {
        Command::new(python)
            .args(["-c", &format!("import {modules}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if let Ok(python) = std::env::var("AGENTCORE_MCP_SDK_PYTHON") {
        assert!(
            has_sdk(&python),
            "AGENTCORE_MCP_SDK_PYTHON={python} cannot import {what}"
        );
        return Some(python);
    }
    has_sdk("python3").then(|| "python3".to_owned())
}

/// [`sdk_python`]; when there is none, says `NOT RUN` and `why` (the test
/// then passes), except under CI (`CI` set), where that fails.
pub fn sdk_python_or_not_run(modules: &str, what: &str, why: &str) -> Option<String> {
    let python = sdk_python(modules, what);
    if python.is_none() {
        assert!(std::env::var_os("CI").is_none(), "NOT RUN under CI: {why}");
        eprintln!("NOT RUN: {why}");
    }
    python
}
