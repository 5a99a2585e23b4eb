//! Runs the `agentcore` binary on a workspace with input on stdin, for the
//! tests that drive `agentcore run`.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

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

/// Runs `agentcore ARGS…` with no input and waits for it to end.
pub fn agentcore_output(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agentcore"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("agentcore runs")
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

/// A workspace with `a.txt` ("alpha", "beta").
pub fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\nbeta\n").unwrap();
    dir
}

/// The events of type `kind`.
pub fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

/// One input line: a turn of `(id, tool, args)` calls.
pub fn turn(calls: &[(&str, &str, Value)]) -> String {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, args)| json!({"id": id, "name": name, "args": args}))
        .collect();
    format!("{}\n", json!({ "turn": calls }))
}

/// The `tool_exec_end` event of call `id`.
pub fn end<'a>(events: &'a [Value], id: &str) -> &'a Value {
    events
        .iter()
        .find(|e| e["type"] == "tool_exec_end" && e["tool_id"] == id)
        .unwrap_or_else(|| panic!("no end for {id} in {events:#?}"))
}

/// The text blocks of an end event, joined by newlines.
pub fn text(end: &Value) -> String {
    end["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}
