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

/// An `agentcore run --format jsonl` fed one turn at a time, for tests
/// whose next call depends on an earlier result (a path it named).
pub struct RunChild {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    stdout: std::io::BufReader<std::process::ChildStdout>,
}

/// Starts `agentcore run --format FORMAT --root ROOT EXTRA…` with piped
/// stdin and stdout.
pub fn agentcore_run_child(root: &Path, format: &str, extra: &[&str]) -> RunChild {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentcore"))
        .args(["run", "--format", format, "--root"])
        .arg(root)
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn agentcore run");
    let stdin = child.stdin.take();
    let stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    RunChild {
        child,
        stdin,
        stdout,
    }
}

impl RunChild {
    /// Sends one turn of `calls` and returns its events, up to and with
    /// its `model_response`.
    pub fn turn(&mut self, calls: &[(&str, &str, Value)]) -> Vec<Value> {
        use std::io::BufRead;
        let stdin = self.stdin.as_mut().expect("the run's input is open");
        stdin
            .write_all(turn(calls).as_bytes())
            .expect("write a turn");
        stdin.flush().expect("flush");
        let mut events = Vec::new();
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).expect("read an event");
            assert!(n > 0, "the run ended before the turn did: {events:#?}");
            let event: Value = serde_json::from_str(&line).expect("one JSON event a line");
            let done = event["type"] == "model_response";
            events.push(event);
            if done {
                return events;
            }
        }
    }

    /// Closes the input and waits for the run to end successfully.
    pub fn finish(mut self) {
        drop(self.stdin.take());
        let status = self.child.wait().expect("agentcore ends");
        assert!(status.success(), "{status}");
    }
}

/// Writes `policy` to a file of its own and runs `agentcore run --format
/// jsonl --policy FILE` on an empty workspace with `input`: its events and
/// output.
pub fn run_with_policy(policy: &str, input: &str) -> (Vec<Value>, Output) {
    let root = tempfile::tempdir().unwrap();
    let etc = tempfile::tempdir().unwrap();
    let file = etc.path().join("policy.toml");
    std::fs::write(&file, policy).unwrap();
    let file = file.to_string_lossy().into_owned();
    let output = agentcore_run(root.path(), "jsonl", &["--policy", &file], input);
    (events(&output), output)
}
