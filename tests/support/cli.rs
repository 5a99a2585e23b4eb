//! Runs the `agentcore` binary on a workspace with input on stdin, for the
//! tests that drive `agentcore run`.
#![allow(dead_code)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// Runs `agentcore run --format FORMAT --root ROOT EXTRA…` with `input` on
/// stdin and waits for it to end.
pub fn agentcore_run(root: &Path, format: &str, extra: &[&str], input: &str) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_agentcore"));
    cmd.args(["run", "--format", format, "--root"])
        .arg(root)
        .args(extra);
    spawn_with_input(&mut cmd, input)
        .wait_with_output()
        .expect("agentcore ends")
}

/// The JSON events `agentcore run --format jsonl` wrote.
pub fn events(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("one JSON event a line"))
        .collect()
}

/// Spawns `cmd` with stdin, stdout and stderr piped, writes `input` and
/// closes stdin; the child is still running.
pub fn spawn_with_input(cmd: &mut Command, input: &str) -> std::process::Child {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write the input");
    child
}
