//! `agentcore run` against hostile input lines: a line over 16 MiB is
//! answered with an `input_error` without being kept in memory, and a line
//! holding both `user` and `turn` is refused instead of half run. Driven
//! through the built binary.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::support::cli::{of_type, workspace};

const LIMIT: usize = 16 * 1024 * 1024;

fn agentcore_run(root: &std::path::Path) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_agentcore"))
        .args(["run", "--format", "jsonl", "--root"])
        .arg(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn agentcore")
}

/// Runs `agentcore run` with `input` written from another thread (it may
/// be larger than a pipe holds) and returns its events.
fn run(root: &std::path::Path, input: Vec<u8>) -> Vec<Value> {
    let mut child = agentcore_run(root);
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        // The process may stop reading early only by failing, which the
        // assertions below report.
        let _ = stdin.write_all(&input);
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect()
}

const READ_TURN: &str =
    r#"{"turn": [{"id": "c1", "name": "read", "args": {"file_path": "a.txt"}}]}"#;

#[test]
fn a_line_over_16_mib_gets_an_input_error_and_the_run_goes_on() {
    let dir = workspace();
    let mut input = Vec::new();
    input.extend_from_slice(b"{\"user\": \"first\"}\n");
    // Valid JSON, one byte over the limit.
    let pad = LIMIT + 1 - br#"{"user": ""}"#.len();
    input.extend_from_slice(format!(r#"{{"user": "{}"}}"#, "x".repeat(pad)).as_bytes());
    input.push(b'\n');
    input.extend_from_slice(READ_TURN.as_bytes());
    input.push(b'\n');
    // Garbage far over the limit, ended by the end of input, no newline.
    input.extend_from_slice(&vec![b'{'; 3 * LIMIT]);
    let events = run(dir.path(), input);

    let errors = of_type(&events, "input_error");
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert_eq!(errors[0]["line"], 2);
    assert_eq!(errors[1]["line"], 4);
    let message = errors[0]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("{} bytes long", LIMIT + 1)),
        "{message}"
    );
    assert!(message.contains("16 MiB"), "{message}");
    assert!(
        errors[1]["message"]
            .as_str()
            .unwrap()
            .contains(&format!("{} bytes long", 3 * LIMIT)),
        "{errors:?}"
    );
    // The prompt before and the turn after ran.
    assert_eq!(of_type(&events, "run_start").len(), 1);
    let end = of_type(&events, "tool_exec_end");
    assert_eq!(end.len(), 1);
    assert_eq!(end[0]["outcome"], "success");
}

#[test]
fn a_line_of_exactly_16_mib_is_read_whole() {
    let dir = workspace();
    let pad = LIMIT - br#"{"user": ""}"#.len();
    let mut input = format!(r#"{{"user": "{}"}}"#, "x".repeat(pad)).into_bytes();
    assert_eq!(input.len(), LIMIT);
    input.push(b'\n');
    let events = run(dir.path(), input);
    assert!(of_type(&events, "input_error").is_empty(), "{events:?}");
    assert_eq!(of_type(&events, "run_start").len(), 1);
}

/// Peak resident memory of process `pid`, in bytes (Linux).
fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/PID/status");
    kb * 1024
}

#[test]
fn an_endless_line_is_not_kept_in_memory() {
    // 256 MiB with no newline used to be buffered whole. Now at most one
    // line of 16 MiB is kept: measured while the process still runs.
    let dir = workspace();
    let mut child = agentcore_run(dir.path());
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let chunk = vec![b'a'; 1 << 20];
    for _ in 0..256 {
        stdin.write_all(&chunk).unwrap();
    }
    stdin.write_all(b"\n{\"user\": \"after\"}\n").unwrap();
    stdin.flush().unwrap();
    let mut seen = Vec::new();
    while !seen.iter().any(|e: &Value| e["type"] == "run_start") {
        let mut line = String::new();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "output ended early: {seen:?}"
        );
        seen.push(serde_json::from_str(&line).unwrap());
    }
    let peak = peak_rss(child.id());
    drop(stdin);
    assert!(child.wait().unwrap().success());
    let error = seen.iter().find(|e| e["type"] == "input_error").unwrap();
    assert_eq!(error["line"], 1);
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains(&format!("{} bytes long", 256 << 20)),
        "{error}"
    );
    println!("peak RSS after a 256 MiB line: {} MiB", peak >> 20);
    assert!(
        peak < 128 << 20,
        "peak RSS {} MiB: the line was kept",
        peak >> 20
    );
}

#[test]
fn a_line_with_both_user_and_turn_is_refused_and_its_turn_does_not_run() {
    let dir = workspace();
    let both = json!({
        "user": "please read",
        "turn": [{"id": "c1", "name": "read", "args": {"file_path": "a.txt"}}]
    });
    let reversed = r#"{"turn": [{"id": "c2", "name": "ls", "args": {"path": "."}}], "user": "x"}"#;
    let with_role = r#"{"user": "x", "role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "ls", "input": {"path": "."}}]}"#;
    let input = format!("{both}\n{reversed}\n{with_role}\n{READ_TURN}\n");
    let events = run(dir.path(), input.into_bytes());

    let errors = of_type(&events, "input_error");
    let lines: Vec<u64> = errors.iter().map(|e| e["line"].as_u64().unwrap()).collect();
    assert_eq!(lines, [1, 2, 3]);
    let message = errors[0]["message"].as_str().unwrap();
    assert!(message.contains("both \"user\" and \"turn\""), "{message}");
    assert!(message.contains("separate lines"), "{message}");
    // Neither half of a refused line ran: no prompt, no calls.
    assert!(of_type(&events, "run_start").is_empty(), "{events:?}");
    let started: Vec<&Value> = of_type(&events, "tool_exec_start");
    assert_eq!(started.len(), 1, "{started:?}");
    assert_eq!(started[0]["tool_id"], "c1");
    // The separate lines the message asks for work.
    let split = format!(
        "{}\n{}\n",
        json!({"user": "please read"}),
        json!({"turn": both["turn"]})
    );
    let events = run(dir.path(), split.into_bytes());
    assert!(of_type(&events, "input_error").is_empty(), "{events:?}");
    assert_eq!(of_type(&events, "run_start").len(), 1);
    assert_eq!(of_type(&events, "tool_exec_end")[0]["outcome"], "success");
}

#[test]
fn a_line_of_millions_of_small_values_gets_an_input_error_and_the_run_goes_on() {
    // Under 16 MiB, but parsing it cost 570 MB.
    let dir = workspace();
    let zeros = vec!["0"; 4_000_000].join(",");
    let input = format!(
        "{{\"turn\": [{{\"id\": \"c0\", \"name\": \"read\", \"args\": {{\"file_path\": \"a.txt\", \"x\": [{zeros}]}}}}]}}\n{READ_TURN}\n"
    );
    let events = run(dir.path(), input.into_bytes());
    let errors = of_type(&events, "input_error");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0]["line"], 1);
    assert!(
        errors[0]["message"]
            .as_str()
            .unwrap()
            .contains("more than 100000 JSON values"),
        "{errors:?}"
    );
    let started = of_type(&events, "tool_exec_start");
    assert_eq!(started.len(), 1);
    assert_eq!(started[0]["tool_id"], "c1");
}
