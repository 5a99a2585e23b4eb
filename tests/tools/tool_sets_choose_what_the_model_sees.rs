//! Harnesses choose which built-in tools a model sees: `--tools a,b,c` on
//! `agentcore run`, `agentcore mcp` and `agentcore tools` (which prints the
//! chosen set). The default is every built-in tool but the ones offered
//! only on request; an unknown name stops the program before it starts,
//! naming it and listing the valid names. Through the binary.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::support::cli;

const VALID: &str = "the built-in tools are read, glob, grep, ls, edit, multi_edit, write, apply_patch, edit_lines, bash, bash_output, kill_shell, write_stdin, checkpoints, rewind";

fn agentcore(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agentcore"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run agentcore")
}

/// The tool names `agentcore tools --format FORMAT EXTRA…` prints, sorted.
fn printed(format: &str, extra: &[&str]) -> Vec<String> {
    let mut args = vec!["tools", "--format", format];
    args.extend_from_slice(extra);
    let out = agentcore(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let value: Value = serde_json::from_slice(&out.stdout).unwrap();
    let list = match format {
        "mcp" => value["tools"].as_array().unwrap().clone(),
        _ => value.as_array().unwrap().clone(),
    };
    let mut names: Vec<String> = list
        .iter()
        .map(|t| {
            let name = match format {
                "openai" => &t["function"]["name"],
                _ => &t["name"],
            };
            name.as_str().unwrap().to_owned()
        })
        .collect();
    names.sort();
    names
}

fn sorted(names: &[&str]) -> Vec<String> {
    let mut names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    names.sort();
    names
}

#[test]
fn the_default_set_is_the_tools_of_before_and_multi_edit() {
    let default = sorted(&[
        "read",
        "glob",
        "grep",
        "ls",
        "edit",
        "multi_edit",
        "write",
        "bash",
        "bash_output",
        "kill_shell",
        "write_stdin",
    ]);
    for format in ["mcp", "anthropic", "openai"] {
        assert_eq!(printed(format, &[]), default, "{format}");
    }
}

#[test]
fn tools_prints_the_chosen_set_in_every_shape() {
    let chosen = "read,grep,glob,ls,edit,multi_edit,write,bash";
    for format in ["mcp", "anthropic", "openai"] {
        assert_eq!(
            printed(format, &["--tools", chosen]),
            sorted(&chosen.split(',').collect::<Vec<_>>()),
            "{format}"
        );
    }
    assert_eq!(
        printed("mcp", &["--tools", " ls , read,ls"]),
        sorted(&["ls", "read"])
    );
}

#[test]
fn an_unknown_name_stops_every_command_naming_it_and_the_valid_names() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    for args in [
        vec!["tools", "--tools", "read,nope"],
        vec!["run", "--root", root, "--tools", "read,nope"],
        vec!["mcp", "--root", root, "--tools", "read,nope"],
    ] {
        let out = agentcore(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("unknown tool \"nope\""), "{args:?}: {err}");
        assert!(err.contains(VALID), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing starts");
    }
}

#[test]
fn an_empty_choice_or_a_job_tool_without_bash_is_refused() {
    let out = agentcore(&["tools", "--tools", ","]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no tools chosen; name at least one of"));
    let out = agentcore(&["tools", "--tools", "read,bash_output"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains(
        "bash_output works only beside bash: add bash to the tools, or leave bash_output out"
    ));
}

#[test]
fn a_run_calls_only_the_chosen_tools() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let input = json!({"turn": [
        {"id": "r", "name": "read", "args": {"file_path": "a.txt"}},
        {"id": "e", "name": "edit", "args": {"file_path": "a.txt", "old_string": "alpha", "new_string": "beta"}}
    ]});
    let output = cli::agentcore_run(
        dir.path(),
        "jsonl",
        &["--tools", "read,ls"],
        &format!("{input}\n"),
    );
    assert!(output.status.success());
    let ends: Vec<Value> = cli::events(&output)
        .into_iter()
        .filter(|e| e["type"] == "tool_exec_end")
        .collect();
    let end = |id: &str| ends.iter().find(|e| e["tool_id"] == id).unwrap().clone();
    assert_eq!(end("r")["outcome"], "success");
    assert_eq!(end("e")["outcome"], "failed");
    assert_eq!(end("e")["content"][0]["text"], "tool \"edit\" not found");
    assert_eq!(std::fs::read(dir.path().join("a.txt")).unwrap(), b"alpha\n");
}

#[test]
fn mcp_lists_only_the_chosen_tools() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentcore"))
        .args(["mcp", "--root"])
        .arg(dir.path())
        .args(["--tools", "read,grep,glob,ls,edit"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("agentcore mcp starts");
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap());
    let mut send = |message: Value| {
        writeln!(input, "{message}").unwrap();
        input.flush().unwrap();
    };
    let mut answer = || -> Value {
        let mut line = String::new();
        output.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap()
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "tool-sets-test", "version": "0"}}}),
    );
    assert_eq!(answer()["id"], 1);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let list = answer();
    assert_eq!(list["id"], 2, "{list}");
    let mut names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["edit", "glob", "grep", "ls", "read"]);
    drop(input);
    assert!(child.wait().unwrap().success());
}

#[test]
fn apply_patch_is_offered_on_request_and_works_in_a_run() {
    assert!(!printed("mcp", &[]).contains(&"apply_patch".to_owned()));
    let chosen = "read,grep,glob,ls,apply_patch,bash";
    assert_eq!(
        printed("anthropic", &["--tools", chosen]),
        sorted(&chosen.split(',').collect::<Vec<_>>())
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-alpha\n+beta\n*** Add File: b.txt\n+new\n*** End Patch";
    let read = json!({"turn": [{"id": "r", "name": "read", "args": {"file_path": "a.txt"}}]});
    let apply = json!({"turn": [{"id": "p", "name": "apply_patch", "args": {"patch": patch}}]});
    let output = cli::agentcore_run(
        dir.path(),
        "jsonl",
        &["--tools", chosen, "--mode", "bypass"],
        &format!("{read}\n{apply}\n"),
    );
    assert!(output.status.success());
    let end = cli::events(&output)
        .into_iter()
        .find(|e| e["type"] == "tool_exec_end" && e["tool_id"] == "p")
        .unwrap();
    assert_eq!(end["outcome"], "success", "{end}");
    assert_eq!(std::fs::read(dir.path().join("a.txt")).unwrap(), b"beta\n");
    assert_eq!(std::fs::read(dir.path().join("b.txt")).unwrap(), b"new\n");
}

#[test]
fn edit_lines_is_offered_on_request_and_default_names_the_default_set() {
    let default = printed("mcp", &[]);
    assert!(!default.contains(&"edit_lines".to_owned()));
    let mut with = default.clone();
    with.push("edit_lines".to_owned());
    with.sort();
    assert_eq!(printed("mcp", &["--tools", "default,edit_lines"]), with);
    let mut with = default.clone();
    with.push("apply_patch".to_owned());
    with.sort();
    assert_eq!(printed("openai", &["--tools", "default,apply_patch"]), with);
    assert_eq!(printed("anthropic", &["--tools", "default"]), default);
}
