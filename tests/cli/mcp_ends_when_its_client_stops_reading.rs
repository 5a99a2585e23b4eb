//! `agentcore mcp` on stdio whose client stops reading (closes its end of
//! stdout) ends its session and exits 0 quietly, even while the client
//! holds stdin open: background jobs are killed, nothing panics.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::procs::{alive_with_arg, unique};

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

/// `agentcore mcp` on `root` with `TMPDIR` a folder of `tmp`'s own: its
/// start sweeps only that folder for dead sessions, so the folders of
/// sessions other tests kill on purpose (SIGKILL tests run beside these)
/// are not swept, and said on stderr, by this one.
fn mcp(root: &std::path::Path, tmp: &std::path::Path, stdout: Stdio) -> Child {
    Command::new(env!("CARGO_BIN_EXE_agentcore"))
        .args(["mcp", "--mode", "bypass", "--root"])
        .arg(root)
        .env("TMPDIR", tmp)
        .stdin(Stdio::piped())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn agentcore mcp")
}

/// Waits up to `limit` for `child` to exit; its status code, or `None`
/// (the child is then killed).
fn exit_within(child: &mut Child, limit: Duration) -> Option<i32> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return status.code();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

fn stderr_of(child: &mut Child) -> String {
    let mut text = String::new();
    if let Some(mut stderr) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
    }
    text
}

#[test]
fn a_client_that_stops_reading_ends_the_session_and_its_jobs() {
    let root = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut child = mcp(root.path(), tmp.path(), Stdio::piped());
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    writeln!(stdin, "{INITIALIZE}").unwrap();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("\"id\":1"), "{line}");
    // A background job that only the end of the session kills.
    let marker = unique();
    let call = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "bash", "arguments": {
            "command": format!("sleep 1000 {marker}"), "run_in_background": true}}});
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    writeln!(stdin, "{call}").unwrap();
    line.clear();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("\"id\":2"), "{line}");
    let start = Instant::now();
    while alive_with_arg(&marker).is_empty() && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive_with_arg(&marker).is_empty(), "the job started");
    // The client stops reading, keeps stdin open, and asks once more.
    drop(stdout);
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":3,"method":"tools/list"}}"#).unwrap();
    let code = exit_within(&mut child, Duration::from_secs(20));
    let stderr = stderr_of(&mut child);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        alive_with_arg(&marker).is_empty(),
        "the background job outlived the session"
    );
    drop(stdin);
}

#[test]
fn a_client_gone_before_the_handshake_answer_is_a_quiet_end() {
    let root = tempfile::tempdir().unwrap();
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let tmp = tempfile::tempdir().unwrap();
    let mut child = mcp(root.path(), tmp.path(), Stdio::from(writer));
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{INITIALIZE}").unwrap();
    let code = exit_within(&mut child, Duration::from_secs(20));
    let stderr = stderr_of(&mut child);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
    drop(stdin);
}
