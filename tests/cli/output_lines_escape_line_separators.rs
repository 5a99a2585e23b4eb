//! Every line `agentcore run --format jsonl` and `agentcore mcp` write
//! carries U+2028 and U+2029 escaped (`\u2028`, `\u2029`): valid JSON
//! either way, but line splitters (JavaScript's among them) break lines at
//! them. The escaped text parses back to the same string.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::support::cli;

const TEXT: &str = "before\u{2028}between\u{2029}after";

/// Whether `line` holds either separator raw.
fn raw_separator(line: &str) -> bool {
    line.contains('\u{2028}') || line.contains('\u{2029}')
}

#[test]
fn run_jsonl_escapes_line_and_paragraph_separators_in_a_tool_result() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("sep.txt"), format!("{TEXT}\n")).unwrap();
    let input = format!(
        "{}\n{}\n",
        json!({"user": format!("read {TEXT}")}),
        json!({"turn": [
            {"id": "r", "name": "read", "args": {"file_path": "sep.txt"}},
            {"id": "b", "name": "bash", "args": {"command": format!("printf '%s' '{TEXT}'")}}
        ]})
    );
    let output = cli::agentcore_run(root.path(), "jsonl", &["--mode", "bypass"], &input);
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        stdout.contains(r"before\u2028between\u2029after"),
        "{stdout}"
    );
    // Split as a JavaScript reader would, at \n, U+2028 and U+2029: every
    // piece is still a whole JSON line.
    for line in stdout.split(['\n', '\u{2028}', '\u{2029}']) {
        if !line.is_empty() {
            serde_json::from_str::<Value>(line).expect("each piece is a whole JSON line");
        }
    }
    assert!(!raw_separator(&stdout), "{stdout}");
    // The text parses back exactly.
    let results: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "message_start")
        .collect();
    let decoded: Vec<String> = results
        .iter()
        .flat_map(|v| {
            v["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|c| c["text"].as_str().map(str::to_owned))
        .collect();
    assert!(
        decoded.iter().filter(|t| t.contains(TEXT)).count() >= 2,
        "{decoded:?}"
    );
}

#[test]
fn mcp_stdio_escapes_line_and_paragraph_separators_in_a_tool_result() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("sep.txt"), format!("{TEXT}\n")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentcore"))
        .args(["mcp", "--mode", "bypass", "--root"])
        .arg(root.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "sep-test", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "read", "arguments": {"file_path": "sep.txt"}}}),
        // An unknown tool named with both: the error names it back.
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": TEXT, "arguments": {}}}),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    stdin.flush().unwrap();
    let mut answers = Vec::new();
    while answers.len() < 3 {
        let mut line = Vec::new();
        stdout.read_until(b'\n', &mut line).unwrap();
        assert!(!line.is_empty(), "the server closed early");
        let line = String::from_utf8(line).unwrap();
        assert!(!raw_separator(&line), "{line}");
        answers.push(serde_json::from_str::<Value>(&line).unwrap());
    }
    let text = |id: u64| {
        answers
            .iter()
            .find(|a| a["id"] == id)
            .and_then(|a| a["result"]["content"][0]["text"].as_str())
            .unwrap_or_default()
            .to_owned()
    };
    assert!(text(2).contains(TEXT), "{answers:?}");
    assert!(text(3).contains(TEXT), "{answers:?}");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}
