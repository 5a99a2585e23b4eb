//! A reader of stdout that goes away (`agentcore demo | head -1`) ends
//! every printing subcommand quietly: exit status 0, no panic on stderr.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Output, Stdio};

fn agentcore(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_agentcore"));
    cmd.args(args);
    cmd
}

/// Runs `cmd` with stdout a pipe whose read end is already closed, so the
/// first write fails with a broken pipe; `input` on stdin.
fn into_a_closed_pipe(cmd: &mut Command, input: &str) -> Output {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    // The command may end before it reads its input.
    let _ = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes());
    child.wait_with_output().expect("agentcore ends")
}

/// Runs `cmd`, reads the first line of its stdout and closes it, as
/// `| head -1` does.
fn first_line_then_close(cmd: &mut Command, input: &str) -> (String, Output) {
    let mut child = crate::support::cli::spawn_with_input(cmd, input);
    let stdout = child.stdout.take().expect("stdout");
    let mut first = String::new();
    BufReader::new(stdout)
        .read_line(&mut first)
        .expect("a first line");
    // The reader (and so the pipe's read end) is dropped here.
    (first, child.wait_with_output().expect("agentcore ends"))
}

fn assert_quiet(what: &str, out: &Output) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
        "{what}: {stderr}"
    );
    assert_eq!(out.status.code(), Some(0), "{what}: {stderr}");
}

#[test]
fn demo_piped_into_head_exits_0_without_a_panic() {
    let (first, out) = first_line_then_close(&mut agentcore(&["demo"]), "");
    assert!(first.starts_with("agentcore "), "{first}");
    assert_quiet("demo | head -1", &out);
    let out = into_a_closed_pipe(&mut agentcore(&["demo"]), "");
    assert_quiet("demo > closed pipe", &out);
}

#[test]
fn sandbox_check_into_a_closed_pipe_exits_0_without_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let out = into_a_closed_pipe(&mut agentcore(&["sandbox", "check", "--root", root]), "");
    assert_quiet("sandbox check", &out);
}

#[test]
fn tools_man_and_completions_into_a_closed_pipe_exit_0_without_a_panic() {
    for args in [
        &["tools"][..],
        &["tools", "--format", "openai"],
        &["man"],
        &["completions", "bash"],
        &["--help"],
        &["--version"],
    ] {
        let out = into_a_closed_pipe(&mut agentcore(args), "");
        assert_quiet(&format!("{args:?}"), &out);
    }
}

#[test]
fn run_into_a_closed_pipe_stops_reading_and_exits_0() {
    let dir = crate::support::cli::workspace();
    let turn = "{\"turn\": [{\"id\": \"c1\", \"name\": \"read\", \"args\": {\"file_path\": \"a.txt\"}}]}\n";
    let input = turn.repeat(200);
    for format in ["jsonl", "pretty"] {
        let mut cmd = agentcore(&["run", "--format", format, "--fail-on-error", "--root"]);
        cmd.arg(dir.path());
        let out = into_a_closed_pipe(&mut cmd, &input);
        assert_quiet(&format!("run --format {format}"), &out);
        let (first, out) = first_line_then_close(&mut cmd, &input);
        assert!(!first.is_empty());
        assert_quiet(&format!("run --format {format} | head -1"), &out);
    }
}

#[test]
fn output_lost_to_a_full_disk_is_exit_status_1_with_a_message() {
    // Every Linux has /dev/full; without it the test fails rather than pass unrun.
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("this test needs /dev/full");
    let out = agentcore(&["tools"])
        .stdout(full)
        .output()
        .expect("agentcore runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("cannot write to stdout"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
