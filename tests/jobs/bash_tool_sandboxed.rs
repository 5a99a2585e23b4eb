//! Every behaviour of tests/jobs/bash_tool.rs (timeouts, cancellation, dropped
//! futures, leftovers, pipes held open, output bounds, progress, the
//! environment, signal deaths) again with the commands confined by the
//! sandbox: its PID namespace and its three processes must change nothing
//! a caller sees.
#![cfg(target_os = "linux")]

/// Read by the fixture of the included tests (`super::SANDBOXED`).
const SANDBOXED: bool = true;

// The same file as tests/jobs/main.rs's `bash_tool`, on purpose.
#[allow(clippy::duplicate_mod)]
#[path = "bash_tool.rs"]
mod bash_tool;

/// Without a sandbox on the machine the included tests run unconfined (the
/// sandbox's `auto` mode) and prove only what tests/jobs/bash_tool.rs does;
/// this test is the one that says so, so it needs the sandbox.
#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces)"]
fn the_included_tests_run_confined() {
    let status = agentcore::sandbox::check();
    println!("sandbox: {}", status.enforced());
    assert_ne!(
        status.enforced(),
        "unconfined",
        "the sandboxed run of tests/jobs/bash_tool.rs would prove nothing here"
    );
}
