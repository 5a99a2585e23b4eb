//! `agentcore sandbox exec -- CMD`: the command runs in the sandbox a
//! session gives bash (writes outside the workspace fail), with its exit
//! status passed on; where the sandbox cannot confine, it is not run.

use std::process::{Command, Output, Stdio};

use crate::support::require::require_sandbox;

fn exec(root: &std::path::Path, extra: &[&str], command: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agentcore"))
        .args(["sandbox", "exec", "--root"])
        .arg(root)
        .args(extra)
        .arg("--")
        .args(command)
        .stdin(Stdio::null())
        .output()
        .expect("agentcore runs")
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces)"]
fn a_write_outside_the_workspace_fails() {
    require_sandbox();
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("outside-x");
    let script = format!("echo hi > '{}'", target.display());
    let out = exec(root.path(), &[], &["sh", "-c", &script]);
    assert_ne!(out.status.code(), Some(0), "the write succeeded");
    assert!(!target.exists(), "{} was written", target.display());
    // Inside the workspace the same write works.
    let inside = exec(root.path(), &[], &["sh", "-c", "echo hi > inside-x"]);
    assert_eq!(inside.status.code(), Some(0));
    assert_eq!(
        std::fs::read_to_string(root.path().join("inside-x")).unwrap(),
        "hi\n"
    );
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces)"]
fn the_commands_exit_status_is_the_exit_status() {
    require_sandbox();
    let root = tempfile::tempdir().unwrap();
    assert_eq!(exec(root.path(), &[], &["true"]).status.code(), Some(0));
    assert_eq!(
        exec(root.path(), &[], &["sh", "-c", "exit 3"])
            .status
            .code(),
        Some(3)
    );
    // Killed by a signal: 128 + its number.
    let killed = exec(root.path(), &[], &["sh", "-c", "kill -9 $$"]);
    assert_eq!(killed.status.code(), Some(128 + 9));
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces)"]
fn stdin_stdout_and_stderr_pass_through() {
    require_sandbox();
    let root = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentcore"))
        .args(["sandbox", "exec", "--root"])
        .arg(root.path())
        .args(["--", "sh", "-c", "cat; echo to-stderr >&2"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), b"through\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "through\n");
    assert!(String::from_utf8_lossy(&out.stderr).contains("to-stderr"));
}

/// Runs `sandbox exec -- sh -c 'touch MARKER'` with `sandbox_table` as the
/// policy's `[sandbox]` table, and checks that it exits 1 without running
/// the command; gives back its stderr.
fn refused_under(sandbox_table: &str) -> String {
    let root = tempfile::tempdir().unwrap();
    let marker = root.path().join("ran");
    let policy = root.path().join("policy.toml");
    std::fs::write(&policy, format!("[sandbox]\n{sandbox_table}")).unwrap();
    let script = format!("touch '{}'", marker.display());
    let policy = policy.to_str().unwrap();
    let out = exec(root.path(), &["--policy", policy], &["sh", "-c", &script]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        !marker.exists(),
        "the command ran without the sandbox: {stderr}"
    );
    stderr
}

#[test]
fn a_session_without_a_sandbox_refuses_to_run_the_command() {
    let stderr = refused_under("mode = \"off\"\n");
    assert!(stderr.contains("the command was not run"), "{stderr}");
}

#[test]
fn a_required_sandbox_missing_a_feature_refuses_to_run_the_command() {
    refused_under("mode = \"required\"\nassume_missing = [\"landlock\"]\n");
}

#[test]
fn an_auto_sandbox_that_enforces_nothing_refuses_to_run_the_command() {
    refused_under(
        "mode = \"auto\"\nassume_missing = [\"landlock\", \"user-namespace\", \
         \"mount-namespace\", \"pid-namespace\", \"network-namespace\", \"seccomp\"]\n",
    );
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces)"]
fn an_auto_sandbox_missing_one_feature_runs_the_command_and_says_so() {
    require_sandbox();
    let root = tempfile::tempdir().unwrap();
    let policy = root.path().join("policy.toml");
    std::fs::write(
        &policy,
        "[sandbox]\nmode = \"auto\"\nassume_missing = [\"seccomp\"]\n",
    )
    .unwrap();
    let policy = policy.to_str().unwrap();
    let out = exec(
        root.path(),
        &["--policy", policy],
        &["sh", "-c", "echo ran"],
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ran\n");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("partly confined") && stderr.contains("seccomp"),
        "{stderr}"
    );
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces)"]
fn the_command_gets_the_environment_a_bash_command_would() {
    require_sandbox();
    let root = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_agentcore"))
        .args(["sandbox", "exec", "--root"])
        .arg(root.path())
        .args([
            "--",
            "sh",
            "-c",
            "echo \"[$GITHUB_TOKEN][$AGENTCORE_MCP_TOKEN][$CI][$PLAIN]\"",
        ])
        .env("GITHUB_TOKEN", "ghp_secret_value")
        .env("AGENTCORE_MCP_TOKEN", "0123456789abcdef0123")
        .env("PLAIN", "kept")
        .env_remove("CI")
        .stdin(Stdio::null())
        .output()
        .expect("agentcore runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "[][][1][kept]\n");
}
