//! The `agentcore` binary end to end: the JSONL protocol of docs/cli.md, exit
//! codes, and `agentcore tools`.

use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::support::cli::{self, of_type, workspace};

fn agentcore() -> Command {
    Command::new(env!("CARGO_BIN_EXE_agentcore"))
}

/// Runs `agentcore run --format jsonl` in `root` with `input` on stdin.
fn run(root: &std::path::Path, extra: &[&str], input: &str) -> (Vec<Value>, Output) {
    let output = cli::agentcore_run(root, "jsonl", extra, input);
    (cli::events(&output), output)
}

#[test]
fn hello_comes_first_and_a_user_line_starts_a_run() {
    let dir = workspace();
    let (events, output) = run(dir.path(), &[], "{\"user\": \"hi\"}\n");
    assert!(output.status.success());
    // The hello line of docs/cli.md, with the sandbox status that [3/8] adds
    // (it depends on the machine, so only its form is pinned here).
    let sandbox = events[0]["sandbox"].as_str().unwrap_or_default().to_owned();
    assert!(
        sandbox.starts_with("auto: ") || sandbox.starts_with("off: "),
        "{sandbox}"
    );
    assert_eq!(
        events[0],
        json!({"type": "hello", "protocol": 1, "version": env!("CARGO_PKG_VERSION"), "sandbox": sandbox})
    );
    assert_eq!(events[1], json!({"type": "run_start"}));
    assert_eq!(events.len(), 2);
    // The fields come in the order the documentation shows them.
    let first = String::from_utf8_lossy(&output.stdout);
    let first = first.lines().next().unwrap_or_default();
    let expected = format!(
        "{{\"type\":\"hello\",\"protocol\":1,\"version\":\"{}\",\"sandbox\":",
        env!("CARGO_PKG_VERSION")
    );
    assert!(first.starts_with(&expected), "{first}");
}

#[test]
fn a_turn_emits_start_end_messages_and_a_model_response() {
    let dir = workspace();
    let input = r#"{"turn": [{"id": "c1", "name": "read", "args": {"file_path": "a.txt"}}]}"#;
    let (events, _) = run(dir.path(), &[], &format!("{input}\n"));
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "hello",
            "tool_exec_start",
            "tool_exec_end",
            "message_start",
            "message_end",
            "model_response"
        ]
    );
    assert_eq!(
        events[1],
        json!({"type": "tool_exec_start", "tool_id": "c1", "tool": "read", "label": "Read File",
               "args": {"file_path": "a.txt"}})
    );
    let end = &events[2];
    assert_eq!(end["outcome"], "success");
    assert_eq!(end["is_error"], false);
    assert_eq!(end["error_code"], Value::Null);
    assert_eq!(end["coercions"], json!([]));
    assert!(end["duration_ms"].is_u64());
    assert_eq!(end["content"][0]["type"], "text");
    assert!(
        end["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("     1\talpha")
    );
    assert_eq!(
        events[4]["message"],
        json!({"role": "tool", "tool_call_id": "c1", "tool": "read",
               "content": end["content"], "is_error": false})
    );
    assert_eq!(events[5]["tool_results"][0]["tool_call_id"], "c1");
    assert_eq!(events[5]["tool_results"][0]["outcome"], "success");
}

#[test]
fn bad_lines_get_input_errors_with_physical_line_numbers_and_the_run_goes_on() {
    let dir = workspace();
    let input = "\n{nope\n\n[1]\n{\"turn\": [{\"id\": \"x\", \"name\": \"ls\", \"args\": {\"path\": \".\"}}, {\"id\": \"x\", \"name\": \"ls\", \"args\": {\"path\": \".\"}}]}\n{\"user\": \"still here\"}\n";
    let (events, output) = run(dir.path(), &[], input);
    assert!(output.status.success());
    let errors = of_type(&events, "input_error");
    let lines: Vec<u64> = errors.iter().map(|e| e["line"].as_u64().unwrap()).collect();
    assert_eq!(lines, [2, 4, 5]);
    assert!(errors[2]["message"].as_str().unwrap().contains("repeated"));
    assert_eq!(of_type(&events, "run_start").len(), 1);
}

#[test]
fn empty_turns_and_assistant_messages_without_calls_get_empty_model_responses() {
    let dir = workspace();
    let input = "{\"turn\": []}\n{\"role\": \"assistant\", \"content\": \"done\"}\n{\"role\": \"assistant\", \"content\": null, \"tool_calls\": []}\n";
    let (events, _) = run(dir.path(), &[], input);
    let responses = of_type(&events, "model_response");
    assert_eq!(responses.len(), 3);
    for r in responses {
        assert_eq!(r["tool_results"], json!([]));
    }
}

#[test]
fn anthropic_and_openai_assistant_messages_are_turns() {
    let dir = workspace();
    let input = concat!(
        r#"{"role": "assistant", "content": [{"type": "text", "text": "looking"}, {"type": "tool_use", "id": "t1", "name": "ls", "input": {"path": "."}}]}"#,
        "\n",
        r#"{"role": "assistant", "tool_calls": [{"id": "k1", "type": "function", "function": {"name": "read", "arguments": "{\"file_path\":\"a.txt\"}"}}]}"#,
        "\n"
    );
    let (events, _) = run(dir.path(), &[], input);
    let ends = of_type(&events, "tool_exec_end");
    assert_eq!(ends.len(), 2);
    assert_eq!(ends[0]["tool_id"], "t1");
    assert_eq!(ends[0]["outcome"], "success");
    assert_eq!(ends[1]["tool_id"], "k1");
    assert_eq!(ends[1]["outcome"], "success");
    // JSON-text args are shown as sent.
    let starts = of_type(&events, "tool_exec_start");
    assert_eq!(starts[1]["args"], json!("{\"file_path\":\"a.txt\"}"));
}

#[test]
fn default_mode_denies_writes_because_nobody_can_approve() {
    let dir = workspace();
    let input = r#"{"turn": [{"id": "w", "name": "write", "args": {"file_path": "new.txt", "content": "x"}}]}"#;
    let (events, _) = run(dir.path(), &[], &format!("{input}\n"));
    let end = of_type(&events, "tool_exec_end")[0];
    assert_eq!(end["outcome"], "denied");
    assert!(
        end["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("approval required"),
        "{end}"
    );
    assert!(!dir.path().join("new.txt").exists());
}

#[test]
fn a_policy_file_allows_what_it_says() {
    let dir = workspace();
    let policy = dir.path().join("policy.toml");
    std::fs::write(&policy, "allow = [\"write(out/**)\"]\n").unwrap();
    let input = r#"{"turn": [{"id": "w", "name": "write", "args": {"file_path": "out/new.txt", "content": "x"}}]}"#;
    let (events, _) = run(
        dir.path(),
        &["--policy", policy.to_str().unwrap()],
        &format!("{input}\n"),
    );
    let end = of_type(&events, "tool_exec_end")[0];
    assert_eq!(end["outcome"], "success", "{end}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out/new.txt")).unwrap(),
        "x"
    );
}

#[test]
fn a_read_deny_rule_binds_glob_grep_and_ls() {
    let dir = workspace();
    std::fs::create_dir(dir.path().join("secrets")).unwrap();
    std::fs::write(dir.path().join("secrets/key.txt"), "alpha secret\n").unwrap();
    let policy = dir.path().join("policy.toml");
    std::fs::write(&policy, "deny = [\"read(./secrets/**)\"]\n").unwrap();
    let input = concat!(
        r#"{"turn": [{"id": "g", "name": "glob", "args": {"pattern": "**/*.txt"}},"#,
        r#" {"id": "s", "name": "grep", "args": {"pattern": "alpha"}},"#,
        r#" {"id": "l", "name": "ls", "args": {"path": "."}},"#,
        r#" {"id": "d", "name": "grep", "args": {"pattern": "alpha", "path": "secrets"}},"#,
        r#" {"id": "r", "name": "read", "args": {"file_path": "secrets/key.txt"}}]}"#,
        "\n"
    );
    let (events, _) = run(dir.path(), &["--policy", policy.to_str().unwrap()], input);
    let end = |id: &str| {
        of_type(&events, "tool_exec_end")
            .into_iter()
            .find(|e| e["tool_id"] == id)
            .unwrap()
            .clone()
    };
    for id in ["g", "s", "l"] {
        let e = end(id);
        assert_eq!(e["outcome"], "success", "{e}");
        let text = e["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("a.txt"), "{id}: {text}");
        assert!(
            !text.contains("key.txt"),
            "{id} shows a denied file: {text}"
        );
    }
    assert_eq!(end("d")["outcome"], "denied");
    assert_eq!(end("r")["outcome"], "denied");
}

#[test]
fn steering_skips_what_has_not_started_and_abort_cancels() {
    let dir = workspace();
    let input = concat!(
        r#"{"turn": [{"id": "s", "name": "bash", "args": {"command": "sleep 20"}}, {"id": "r", "name": "read", "args": {"file_path": "a.txt"}}], "steer_after_ms": 300}"#,
        "\n",
        r#"{"turn": [{"id": "s2", "name": "bash", "args": {"command": "sleep 20"}}, {"id": "r2", "name": "read", "args": {"file_path": "a.txt"}}], "abort_after_ms": 300}"#,
        "\n"
    );
    let started = std::time::Instant::now();
    let (events, _) = run(dir.path(), &["--mode", "bypass"], input);
    assert!(started.elapsed() < std::time::Duration::from_secs(15));
    let outcome = |id: &str| {
        of_type(&events, "tool_exec_end")
            .into_iter()
            .find(|e| e["tool_id"] == id)
            .map(|e| e["outcome"].as_str().unwrap().to_owned())
    };
    assert_eq!(outcome("s").as_deref(), Some("cancelled"));
    assert_eq!(outcome("r").as_deref(), Some("skipped"));
    assert_eq!(outcome("s2").as_deref(), Some("cancelled"));
    assert_eq!(outcome("r2").as_deref(), Some("cancelled"));
}

#[test]
fn coercions_show_in_the_end_event() {
    let dir = workspace();
    let input = r#"{"turn": [{"id": "c", "name": "read", "args": "{\"file_path\": \"a.txt\", \"limit\": \"1\"}"}]}"#;
    let (events, _) = run(dir.path(), &[], &format!("{input}\n"));
    let end = of_type(&events, "tool_exec_end")[0];
    assert_eq!(
        end["coercions"],
        json!([{"path": "limit", "from": "\"1\"", "to": "1"}])
    );
}

#[test]
fn an_unreadable_file_or_a_bad_option_exits_2() {
    let out = agentcore()
        .args(["run", "/definitely/not/here.jsonl"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read"));
    let out = agentcore()
        .args(["run", "--max-concurrency", "many"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = agentcore()
        .args(["run", "--mode", "yolo"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn input_from_a_file_argument() {
    let dir = workspace();
    let file = dir.path().join("in.jsonl");
    std::fs::write(&file, "{\"user\": \"x\"}\n").unwrap();
    let out = agentcore()
        .args(["run", "--format", "jsonl", "--root"])
        .arg(dir.path())
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 2);
}

#[test]
fn tools_prints_three_shapes() {
    let tools = |format: &str| -> Value {
        let out = agentcore()
            .args(["tools", "--format", format])
            .output()
            .unwrap();
        assert!(out.status.success());
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let mcp = tools("mcp");
    let list = mcp["tools"].as_array().unwrap();
    // The default set: every built-in tool but apply_patch, checkpoints
    // and rewind (write_stdin made it 11).
    assert_eq!(list.len(), 11);
    let by_name = |name: &str| list.iter().find(|t| t["name"] == name).unwrap().clone();
    assert_eq!(by_name("read")["annotations"]["readOnlyHint"], true);
    assert_eq!(by_name("bash")["annotations"]["readOnlyHint"], false);
    assert_eq!(by_name("bash")["annotations"]["destructiveHint"], true);
    assert_eq!(by_name("bash_output")["annotations"]["readOnlyHint"], true);
    assert_eq!(by_name("kill_shell")["annotations"]["readOnlyHint"], false);
    assert_eq!(by_name("write_stdin")["annotations"]["readOnlyHint"], false);
    assert_eq!(
        by_name("edit")["inputSchema"]["additionalProperties"],
        false
    );
    let anthropic = tools("anthropic");
    assert_eq!(anthropic.as_array().unwrap().len(), 11);
    assert!(anthropic[0]["input_schema"].is_object());
    let openai = tools("openai");
    assert_eq!(openai[0]["type"], "function");
    assert!(openai[0]["function"]["parameters"].is_object());
}

#[test]
fn demo_runs_without_setup() {
    let out = agentcore().arg("demo").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for expected in [
        "File has not been read yet",
        "has been updated successfully",
        "coerced limit",
        "denied",
        "Timed out after 1000 ms",
        "Skipped due to queued user message.",
    ] {
        assert!(
            text.contains(expected),
            "demo output lacks {expected:?}:\n{text}"
        );
    }
}

#[test]
fn help_names_no_wrong_count_of_built_in_tools() {
    let output = agentcore().arg("--help").output().unwrap();
    assert!(output.status.success());
    let help = String::from_utf8_lossy(&output.stdout).to_lowercase();
    assert!(help.contains("built-in"), "{help}");
    // There are thirteen (read, glob, grep, ls, edit, multi_edit, write,
    // apply_patch, edit_lines, bash, bash_output, kill_shell, write_stdin, checkpoints, rewind): a
    // count would drift.
    for count in [
        "seven", "eight", "nine", "ten ", "eleven", "twelve", " 7 ", " 10 ", " 11 ",
    ] {
        assert!(!help.contains(&format!("{count} built-in")), "{help}");
        assert!(!help.contains(&format!("{count}built-in")), "{help}");
    }
    assert!(
        !env!("CARGO_PKG_DESCRIPTION").contains("seven"),
        "the package description counts the tools"
    );
}
