//! Issue 18, item 1: `--hooks FILE` (repeatable) on `agentcore run` and
//! `agentcore mcp`: the hooks run, a settings file that does not parse
//! stops the start naming the file and the place, and what is configured
//! but not run gets one notice on stderr.
#![cfg(target_os = "linux")]

use std::process::{Command, Stdio};

use serde_json::json;

use crate::support::{cli, hook_fixture};

fn settings(dir: &std::path::Path, name: &str, value: serde_json::Value) -> String {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(&value).unwrap()).unwrap();
    path.display().to_string()
}

#[test]
fn run_runs_the_hooks_of_every_file_given() {
    let root = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let guard = settings(
        config.path(),
        "guard.json",
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash",
            "hooks": [{"type": "command", "command": hook_fixture("block_rm_rf.sh")}]}]}}),
    );
    let remind = settings(
        config.path(),
        "remind.json",
        json!({"hooks": {"PostToolUse": [{"matcher": "Bash",
            "hooks": [{"type": "command", "command": hook_fixture("remind_tests.sh")}]}]}}),
    );
    std::fs::create_dir(root.path().join("build")).unwrap();
    let input = [
        json!({"turn": [{"id": "c1", "name": "bash", "args": {"command": "rm -rf build"}}]}),
        json!({"turn": [{"id": "c2", "name": "bash", "args": {"command": "echo fine"}}]}),
    ]
    .map(|v| v.to_string())
    .join("\n");
    let output = cli::agentcore_run(
        root.path(),
        "jsonl",
        &["--mode", "bypass", "--hooks", &guard, "--hooks", &remind],
        &input,
    );
    assert!(output.status.success(), "{output:?}");
    assert!(output.stderr.is_empty(), "no notice: {output:?}");
    let events = cli::events(&output);
    let end = |id: &str| {
        events
            .iter()
            .find(|e| e["type"] == "tool_exec_end" && e["tool_id"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(end("c1")["outcome"], "denied");
    assert!(root.path().join("build").is_dir());
    assert_eq!(end("c2")["outcome"], "success");
    let c2 = end("c2");
    let texts: Vec<&str> = c2["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect();
    assert_eq!(
        texts.last(),
        Some(&"Reminder from the project: run the tests after editing.")
    );
    let hooks: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_exec_update" && e["kind"] == "hook")
        .collect();
    assert_eq!(hooks.len(), 3, "{hooks:?}");
    assert_eq!(hooks[0]["tool_id"], "c1");
    assert_eq!(hooks[0]["payload"]["exit"], 2);
    assert_eq!(hooks[0]["payload"]["effect"], "deny");
}

#[test]
fn a_settings_file_that_does_not_parse_stops_run_and_mcp_naming_file_and_place() {
    let root = tempfile::tempdir().unwrap();
    let bad = root.path().join("settings.json");
    std::fs::write(
        &bad,
        "{\n  \"hooks\": {\n    \"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": 7}]}]\n  }\n}\n",
    )
    .unwrap();
    let output = cli::agentcore_run(
        root.path(),
        "jsonl",
        &["--hooks", &bad.display().to_string()],
        "",
    );
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with(&format!(
            "agentcore run: invalid hooks settings file {}: invalid type: integer `7`, expected a string at line 3",
            bad.display()
        )),
        "{stderr}"
    );

    let output = Command::new(env!("CARGO_BIN_EXE_agentcore"))
        .args(["mcp", "--root"])
        .arg(root.path())
        .arg("--hooks")
        .arg(&bad)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with(&format!(
            "agentcore mcp: invalid hooks settings file {}: ",
            bad.display()
        )),
        "{stderr}"
    );

    let missing = root.path().join("missing.json");
    let output = cli::agentcore_run(
        root.path(),
        "jsonl",
        &["--hooks", &missing.display().to_string()],
        "",
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr).starts_with(&format!(
            "agentcore run: cannot read hooks settings file {}: ",
            missing.display()
        ))
    );
}

#[test]
fn other_events_and_hook_types_get_one_notice_on_stderr() {
    let root = tempfile::tempdir().unwrap();
    let file = settings(
        root.path(),
        "settings.json",
        json!({"hooks": {
            "Stop": [{"hooks": [{"type": "command", "command": "true"}]}],
            "SessionStart": [{"hooks": [{"type": "command", "command": "true"}]}],
            "PreToolUse": [{"matcher": "*", "hooks": [
                {"type": "prompt", "prompt": "Is this safe?"},
                {"type": "command", "command": "true"}
            ]}]
        }}),
    );
    let output = cli::agentcore_run(root.path(), "jsonl", &["--hooks", &file], "");
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "agentcore: hooks: ignoring the events SessionStart, Stop and hooks of type \"prompt\"; agentcore runs command hooks of PreToolUse, PostToolUse and PostToolUseFailure only\n"
    );
}

#[test]
fn mcp_runs_the_hooks_of_its_hooks_file() {
    use std::io::{BufRead, BufReader, Write};

    let root = tempfile::tempdir().unwrap();
    let file = settings(
        root.path(),
        "settings.json",
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash",
            "hooks": [{"type": "command", "command": hook_fixture("block_rm_rf.sh")}]}]}}),
    );
    std::fs::create_dir(root.path().join("build")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentcore"))
        .args(["mcp", "--mode", "bypass", "--root"])
        .arg(root.path())
        .args(["--hooks", &file])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = Some(child.stdin.take().unwrap());
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = |message: serde_json::Value| {
        let pipe = stdin.as_mut().unwrap();
        writeln!(pipe, "{message}").unwrap();
        pipe.flush().unwrap();
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "hooks-test", "version": "1"}}}),
    );
    let mut response = |id: i64| loop {
        let line = lines.next().unwrap().unwrap();
        let message: serde_json::Value = serde_json::from_str(&line).unwrap();
        if message["id"] == id {
            return message;
        }
    };
    assert!(response(1)["result"].is_object());
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "bash", "arguments": {"command": "rm -rf build"}}}),
    );
    let result = response(2)["result"].clone();
    assert_eq!(result["isError"], true, "{result}");
    assert!(
        result["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("Blocked: rm -rf is not allowed")),
        "{result}"
    );
    assert!(root.path().join("build").is_dir());
    // End of input ends the server.
    drop(stdin.take());
    assert!(child.wait().unwrap().success());
}
