//! A supervisor's SIGTERM (and SIGINT, SIGHUP) ends `agentcore run` and
//! `agentcore mcp` at once while their input is still open and they are
//! waiting for the next line: the background jobs are killed, the session's
//! folders removed, and the exit status is 128 + the signal (143 for
//! SIGTERM). The input stays open throughout: nothing here closes it before
//! the exit is seen.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::procs::{Leftovers, alive_with_arg, unique};

/// The longest a signalled process may take to exit.
const PROMPTLY: Duration = Duration::from_secs(2);

/// How the child's stdin and stdout are connected.
#[derive(Clone, Copy, Debug)]
enum Wire {
    /// Two pipes (stdin's write end kept open by the test).
    Pipes,
    /// One end of a socket pair on both (kept open by the test).
    Socket,
}

/// The input end the test keeps open, and where the output is read.
struct Ends {
    input: Box<dyn Write>,
    output: Box<dyn BufRead>,
}

fn spawn(
    args: &[&str],
    root: &std::path::Path,
    tmp: &std::path::Path,
    wire: Wire,
) -> (Child, Ends) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_agentcore"));
    cmd.args(args)
        .arg("--root")
        .arg(root)
        .env("TMPDIR", tmp)
        .stderr(Stdio::null());
    match wire {
        Wire::Pipes => {
            let mut child = cmd
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let input = Box::new(child.stdin.take().unwrap());
            let output = Box::new(BufReader::new(child.stdout.take().unwrap()));
            (child, Ends { input, output })
        }
        Wire::Socket => {
            let (ours, theirs) = UnixStream::pair().unwrap();
            let child = cmd
                .stdin(Stdio::from(std::os::fd::OwnedFd::from(
                    theirs.try_clone().unwrap(),
                )))
                .stdout(Stdio::from(std::os::fd::OwnedFd::from(theirs)))
                .spawn()
                .unwrap();
            let output = Box::new(BufReader::new(ours.try_clone().unwrap()));
            (
                child,
                Ends {
                    input: Box::new(ours),
                    output,
                },
            )
        }
    }
}

fn send(ends: &mut Ends, line: &serde_json::Value) {
    writeln!(ends.input, "{line}").unwrap();
    ends.input.flush().unwrap();
}

/// Reads output lines until one contains `needle`.
fn read_until(ends: &mut Ends, needle: &str) {
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            ends.output.read_line(&mut line).unwrap() > 0,
            "the output ended before {needle:?}"
        );
        if line.contains(needle) {
            return;
        }
    }
}

/// Sends `signal`, then waits (at most [`PROMPTLY`]) for the exit, the
/// input still open; returns the status code and how long it took.
fn signal_and_wait(child: &mut Child, signal: &str) -> (Option<i32>, Duration) {
    let sent = Instant::now();
    let ok = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return (status.code(), sent.elapsed());
        }
        if sent.elapsed() > PROMPTLY {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running {PROMPTLY:?} after SIG{signal}, its input open");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn folders(tmp: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(tmp)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// `agentcore run` with a background job started by its one line, then
/// `signal`, its input open.
fn run_case(signal: &str, number: i32, wire: Wire) {
    let root = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let n = unique();
    let _left = Leftovers(vec![n.clone()]);
    let (mut child, mut ends) = spawn(
        &["run", "--format", "jsonl", "--mode", "bypass"],
        root.path(),
        tmp.path(),
        wire,
    );
    read_until(&mut ends, "\"hello\"");
    send(
        &mut ends,
        &json!({"turn": [{"id": "b", "name": "bash",
            "args": {"command": format!("exec sleep {n}"), "run_in_background": true}}]}),
    );
    read_until(&mut ends, "Started background job");
    assert!(!alive_with_arg(&n).is_empty(), "the job runs");
    assert!(
        !folders(tmp.path()).is_empty(),
        "the session's folders exist"
    );
    let (code, took) = signal_and_wait(&mut child, signal);
    assert_eq!(code, Some(128 + number), "SIG{signal} over {wire:?}");
    assert!(took < PROMPTLY, "{took:?}");
    assert_eq!(alive_with_arg(&n), Vec::<u32>::new(), "the job is gone");
    assert_eq!(folders(tmp.path()), Vec::<String>::new(), "folders removed");
    drop(ends);
}

#[test]
fn sigterm_ends_a_run_waiting_for_its_next_line_with_143() {
    run_case("TERM", 15, Wire::Pipes);
}

#[test]
fn sigterm_ends_a_run_whose_input_is_a_socket() {
    run_case("TERM", 15, Wire::Socket);
}

#[test]
fn sigint_and_sighup_end_a_waiting_run_too() {
    run_case("INT", 2, Wire::Pipes);
    run_case("HUP", 1, Wire::Pipes);
}

#[test]
fn sigterm_ends_a_run_without_a_job_waiting_for_its_first_line() {
    let root = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let (mut child, mut ends) = spawn(
        &["run", "--format", "jsonl"],
        root.path(),
        tmp.path(),
        Wire::Pipes,
    );
    read_until(&mut ends, "\"hello\"");
    let (code, _) = signal_and_wait(&mut child, "TERM");
    assert_eq!(code, Some(143));
    assert_eq!(folders(tmp.path()), Vec::<String>::new());
}

/// `agentcore mcp` with a background job started by a `tools/call`, then
/// SIGTERM, the connection open.
fn mcp_case(wire: Wire) {
    let root = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let n = unique();
    let _left = Leftovers(vec![n.clone()]);
    let (mut child, mut ends) = spawn(&["mcp", "--mode", "bypass"], root.path(), tmp.path(), wire);
    send(
        &mut ends,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "signals-test", "version": "0"}}}),
    );
    read_until(&mut ends, "\"id\":1");
    send(
        &mut ends,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    send(
        &mut ends,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "bash", "arguments": {"command": format!("exec sleep {n}"),
            "run_in_background": true}}}),
    );
    read_until(&mut ends, "Started background job");
    assert!(!alive_with_arg(&n).is_empty(), "the job runs");
    let (code, took) = signal_and_wait(&mut child, "TERM");
    assert_eq!(code, Some(143), "over {wire:?}");
    assert!(took < PROMPTLY, "{took:?}");
    assert_eq!(alive_with_arg(&n), Vec::<u32>::new(), "the job is gone");
    assert_eq!(folders(tmp.path()), Vec::<String>::new(), "folders removed");
    drop(ends);
}

#[test]
fn sigterm_ends_mcp_over_pipes_with_143() {
    mcp_case(Wire::Pipes);
}

#[test]
fn sigterm_ends_mcp_over_a_socket_with_143() {
    mcp_case(Wire::Socket);
}
