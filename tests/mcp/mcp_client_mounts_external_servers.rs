//! The MCP client with real processes: `agentcore run` sessions that mount
//! external MCP servers (a second `agentcore mcp`, and a small Python
//! server speaking JSON-RPC by hand, tests/mcp_client/fake_server.py) and
//! call their tools through the pipeline: approval rules on `mcp__…`
//! names, every content kind, progress, cancellation, a server that
//! crashes mid-call, hangs, or never starts.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::support::cli::{self, end, text, turn};
use crate::support::python;

const FAKE_SERVER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/mcp_client/fake_server.py"
);

/// A TOML string literal.
fn toml_str(text: &str) -> String {
    toml_value(&json!(text))
}

fn toml_value(value: &Value) -> String {
    // JSON strings and arrays of strings are valid TOML.
    value.to_string()
}

/// An `[[mcp_servers]]` table running the fake server in `mode`.
fn fake(name: &str, mode: &str, extra: &str) -> String {
    format!(
        "[[mcp_servers]]\nname = {}\ncommand = \"python3\"\nargs = {}\n{extra}\n",
        toml_str(name),
        toml_value(&json!([FAKE_SERVER, mode])),
    )
}

/// Writes `policy` into `dir` and runs `agentcore run --policy` on `root`.
fn run(root: &Path, dir: &Path, policy: &str, input: &str) -> (Vec<Value>, Output) {
    let file = dir.join("policy.toml");
    std::fs::write(&file, policy).unwrap();
    let file = file.to_string_lossy().into_owned();
    let output = cli::agentcore_run(root, "jsonl", &["--policy", &file], input);
    (cli::events(&output), output)
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

struct Dirs {
    work: tempfile::TempDir,
    etc: tempfile::TempDir,
}

impl Dirs {
    fn new() -> Self {
        let work = tempfile::tempdir().unwrap();
        std::fs::write(work.path().join("a.txt"), "alpha\nbeta\n").unwrap();
        Self {
            work,
            etc: tempfile::tempdir().unwrap(),
        }
    }
    fn root(&self) -> &Path {
        self.work.path()
    }
    fn etc(&self) -> &Path {
        self.etc.path()
    }
    fn log(&self) -> PathBuf {
        self.etc.path().join("fake.log")
    }
}

#[test]
fn an_agentcore_mcp_mounted_in_a_run_reads_then_edits_a_file_through_it() {
    let dirs = Dirs::new();
    let inner = tempfile::tempdir().unwrap();
    std::fs::write(inner.path().join("notes.txt"), "one\ntwo\n").unwrap();
    let policy = format!(
        "allow = [\"mcp__inner__*\"]\n[[mcp_servers]]\nname = \"inner\"\ncommand = {}\nargs = {}\n",
        toml_str(env!("CARGO_BIN_EXE_agentcore")),
        toml_value(&json!([
            "mcp",
            "--root",
            inner.path(),
            "--mode",
            "accept-edits"
        ])),
    );
    let edit = json!({"file_path": "notes.txt", "old_string": "two", "new_string": "deux"});
    let input = [
        // Before a read: the inner session's read-before-write refuses.
        turn(&[("e1", "mcp__inner__edit", edit.clone())]),
        turn(&[("r1", "mcp__inner__read", json!({"file_path": "notes.txt"}))]),
        turn(&[("e2", "mcp__inner__edit", edit)]),
    ]
    .concat();
    let (events, output) = run(dirs.root(), dirs.etc(), &policy, &input);
    assert!(output.status.success(), "{}", stderr(&output));

    let start = events
        .iter()
        .find(|e| e["type"] == "tool_exec_start" && e["tool_id"] == "e1")
        .unwrap();
    assert_eq!(start["tool"], "mcp__inner__edit");
    let refused = end(&events, "e1");
    assert_eq!(refused["outcome"], "failed", "{refused:#}");
    assert!(
        text(refused).contains("File has not been read yet. Read it first"),
        "{refused:#}"
    );
    let read = end(&events, "r1");
    assert_eq!(read["outcome"], "success", "{read:#}");
    assert!(text(read).contains("two"), "{read:#}");
    let edited = end(&events, "e2");
    assert_eq!(edited["outcome"], "success", "{edited:#}");
    assert_eq!(
        std::fs::read_to_string(inner.path().join("notes.txt")).unwrap(),
        "one\ndeux\n"
    );
    // The outer workspace is untouched: the edit happened over there.
    assert_eq!(
        std::fs::read_to_string(dirs.root().join("a.txt")).unwrap(),
        "alpha\nbeta\n"
    );
}

#[test]
fn approval_rules_name_mounted_tools_exactly_by_glob_and_by_server() {
    let dirs = Dirs::new();
    let policy = format!(
        "allow = [\"mcp__gh__create_issue\"]\ndeny = [\"mcp__gh__delete_repo\"]\n{}",
        fake("gh", "normal", "")
    );
    let input = turn(&[
        ("c", "mcp__gh__create_issue", json!({"title": "bug"})),
        ("d", "mcp__gh__delete_repo", json!({})),
        ("f", "mcp__gh__fail", json!({})),
        ("e", "mcp__gh__echo", json!({"text": "hi"})),
    ]);
    let (events, output) = run(dirs.root(), dirs.etc(), &policy, &input);
    assert!(output.status.success(), "{}", stderr(&output));
    let created = end(&events, "c");
    assert_eq!(created["outcome"], "success", "{created:#}");
    assert_eq!(text(created), "created issue: bug");
    let deleted = end(&events, "d");
    assert_eq!(deleted["outcome"], "denied", "{deleted:#}");
    assert!(
        text(deleted).contains("deny \"mcp__gh__delete_repo\""),
        "{deleted:#}"
    );
    // No rule: a tool that is not read-only asks, and `run` cannot ask.
    let unruled = end(&events, "f");
    assert_eq!(unruled["outcome"], "denied", "{unruled:#}");
    // The gate was shown the server, the tool, its destructive mark and
    // the arguments.
    let preview = |id: &str| {
        events
            .iter()
            .find(|e| {
                e["type"] == "tool_exec_update" && e["tool_id"] == id && e["kind"] == "preview"
            })
            .map(|e| e["payload"].clone())
    };
    assert_eq!(
        preview("d"),
        Some(json!(
            "MCP server \"gh\", tool \"delete.repo\" (the server marks it destructive)\narguments: {}"
        ))
    );
    assert_eq!(
        preview("c"),
        Some(json!(
            "MCP server \"gh\", tool \"create_issue\" (the server marks it not read-only, not destructive)\narguments: {\n  \"title\": \"bug\"\n}"
        ))
    );
    assert_eq!(preview("e"), None, "read-only tools show no preview");
    // A read-only tool (readOnlyHint) is allowed like a read.
    assert_eq!(end(&events, "e")["outcome"], "success");

    // A glob and a server name deny every tool of the server.
    for rule in ["mcp__gh__*", "mcp__gh"] {
        let policy = format!("deny = [\"{rule}\"]\n{}", fake("gh", "normal", ""));
        let input = turn(&[("e", "mcp__gh__echo", json!({"text": "hi"}))]);
        let (events, _) = run(dirs.root(), dirs.etc(), &policy, &input);
        let echo = end(&events, "e");
        assert_eq!(echo["outcome"], "denied", "{rule}: {echo:#}");
        assert!(text(echo).contains(rule), "{echo:#}");
    }
    // ... and not another server's.
    let policy = format!(
        "deny = [\"mcp__gh__*\"]\n{}{}",
        fake("gh", "normal", ""),
        fake("docs", "normal", "")
    );
    let input = turn(&[("e", "mcp__docs__echo", json!({"text": "hi"}))]);
    let (events, _) = run(dirs.root(), dirs.etc(), &policy, &input);
    assert_eq!(end(&events, "e")["outcome"], "success");
}

#[test]
fn results_map_every_content_kind_progress_and_is_error() {
    let dirs = Dirs::new();
    let policy = format!(
        "allow = [\"mcp__fake__fail\"]\n{}",
        fake("fake", "normal", "")
    );
    let input = turn(&[
        ("k", "mcp__fake__kinds", json!({})),
        // "3" is coerced to 3 against the server's schema.
        ("n", "mcp__fake__count", json!({"n": "3"})),
        ("f", "mcp__fake__fail", json!({})),
        ("v", "mcp__fake__echo", json!({})),
    ]);
    let (events, output) = run(dirs.root(), dirs.etc(), &policy, &input);
    assert!(output.status.success(), "{}", stderr(&output));

    let kinds = end(&events, "k");
    assert_eq!(kinds["outcome"], "success", "{kinds:#}");
    assert_eq!(
        kinds["content"],
        json!([
            {"type": "text", "text": "plain words"},
            {"type": "image", "media_type": "image/png", "data": "iVBORw0KGgo="},
            {"type": "text", "text": "[audio (audio/wav, 4 bytes): audio is not shown to the model]"},
            {"type": "text", "text": "[resource link: notes.md <file:///notes.md>]"},
            {"type": "text", "text": "[resource <mem://readme> (text/plain)]\nembedded text"},
            {"type": "json", "value": {"answer": 42}},
        ])
    );

    let count = end(&events, "n");
    assert_eq!(count["outcome"], "success", "{count:#}");
    assert_eq!(text(count), "counted to 3");
    assert_eq!(count["coercions"].as_array().map(Vec::len), Some(1));
    let progress: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_exec_update" && e["tool_id"] == "n")
        .filter(|e| e["kind"] == "progress")
        .collect();
    assert_eq!(progress.len(), 3, "{events:#?}");
    assert_eq!(
        progress[2]["payload"],
        json!({"progress": 3.0, "total": 3.0, "message": "step 3"})
    );

    let failed = end(&events, "f");
    assert_eq!(failed["outcome"], "failed", "{failed:#}");
    assert_eq!(text(failed), "the widget is jammed");

    // Arguments missing a required property never reach the server.
    let invalid = end(&events, "v");
    assert_eq!(invalid["outcome"], "failed", "{invalid:#}");
    assert!(text(invalid).contains("text"), "{invalid:#}");
}

#[test]
fn a_server_that_crashes_mid_call_fails_its_calls_by_name_and_others_go_on() {
    let dirs = Dirs::new();
    let policy = format!(
        "allow = [\"mcp__fake__crash\"]\n{}{}",
        fake("fake", "normal", ""),
        fake("other", "normal", "")
    );
    let input = [
        turn(&[("c", "mcp__fake__crash", json!({}))]),
        turn(&[("e", "mcp__fake__echo", json!({"text": "still there?"}))]),
        turn(&[("e2", "mcp__fake__echo", json!({"text": "?"}))]),
        turn(&[("e3", "mcp__fake__echo", json!({"text": "?"}))]),
        turn(&[("e4", "mcp__fake__echo", json!({"text": "?"}))]),
        turn(&[("o", "mcp__other__echo", json!({"text": "yes"}))]),
    ]
    .concat();
    let (events, output) = run(dirs.root(), dirs.etc(), &policy, &input);
    assert!(output.status.success(), "{}", stderr(&output));
    let crashed = end(&events, "c");
    assert_eq!(crashed["outcome"], "failed", "{crashed:#}");
    let message = text(crashed);
    assert!(
        message.contains("MCP server \"fake\" is not running"),
        "{message}"
    );
    assert!(
        message.contains("segmentation fault in crash()"),
        "{message}"
    );
    let after = end(&events, "e");
    assert_eq!(after["outcome"], "failed", "{after:#}");
    assert!(text(after).contains("MCP server \"fake\" is not running"));
    // The failures count for the breaker like any other: the third in a
    // row disables the tool.
    assert_eq!(end(&events, "e2")["outcome"], "failed");
    assert_eq!(end(&events, "e3")["outcome"], "failed");
    assert_eq!(end(&events, "e4")["outcome"], "disabled");
    let other = end(&events, "o");
    assert_eq!(other["outcome"], "success", "{other:#}");
    assert_eq!(text(other), "echo: yes");
}

#[test]
fn a_server_that_never_starts_is_named_with_its_cause_and_the_session_goes_on() {
    let dirs = Dirs::new();
    // 3 s: long enough for Python to start and say why on a loaded machine
    // (at load 10 it did not always within 1 s), short enough for a test.
    let policy = format!(
        "{}{}[[mcp_servers]]\nname = \"missing\"\ncommand = \"/nonexistent/mcp-server\"\n{}",
        fake("slow", "slow-start", "startup_timeout_secs = 3"),
        fake("dead", "exit-at-start", ""),
        fake("fake", "normal", ""),
    );
    let input = turn(&[
        ("e", "mcp__fake__echo", json!({"text": "hi"})),
        ("s", "mcp__slow__echo", json!({"text": "hi"})),
    ]);
    let (events, output) = run(dirs.root(), dirs.etc(), &policy, &input);
    assert!(output.status.success(), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(
        err.contains("MCP server \"slow\" did not complete the MCP handshake within the startup timeout of 3 s"),
        "{err}"
    );
    assert!(err.contains("warming up the flux capacitor"), "{err}");
    assert!(
        err.contains("MCP server \"dead\" failed the MCP handshake"),
        "{err}"
    );
    assert!(err.contains("missing FAKE_TOKEN"), "{err}");
    assert!(
        err.contains("MCP server \"missing\" could not be started: `/nonexistent/mcp-server`"),
        "{err}"
    );
    assert_eq!(end(&events, "e")["outcome"], "success");
    let slow = end(&events, "s");
    assert_eq!(slow["outcome"], "failed");
    assert!(text(slow).contains("not found"), "{slow:#}");
}

#[test]
fn a_cancelled_call_tells_the_server_and_a_hung_one_times_out_by_name() {
    let dirs = Dirs::new();
    let log = dirs.log();
    let env = format!(
        "env = {{ FAKE_MCP_LOG = {} }}",
        toml_str(&log.to_string_lossy())
    );
    let policy = format!(
        "allow = [\"mcp__fake__hang\", \"mcp__stuck__hang\"]\n{}{}",
        fake("fake", "normal", &env),
        fake("stuck", "normal", "call_timeout_secs = 1"),
    );
    let aborted = format!(
        "{}\n",
        json!({"turn": [{"id": "h", "name": "mcp__fake__hang", "args": {}}], "abort_after_ms": 500})
    );
    let input = [aborted, turn(&[("t", "mcp__stuck__hang", json!({}))])].concat();
    let (events, output) = run(dirs.root(), dirs.etc(), &policy, &input);
    assert!(output.status.success(), "{}", stderr(&output));
    let hang = end(&events, "h");
    assert_eq!(hang["outcome"], "cancelled", "{hang:#}");
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    let started = log
        .lines()
        .find_map(|l| l.strip_prefix("hang started "))
        .unwrap_or_else(|| panic!("{log}"));
    assert!(
        log.lines().any(|l| l == format!("cancelled {started}")),
        "notifications/cancelled for request {started}: {log}"
    );
    let stuck = end(&events, "t");
    assert_eq!(stuck["outcome"], "failed", "{stuck:#}");
    assert!(
        text(stuck).contains("MCP server \"stuck\" sent no answer and no progress for 1 s"),
        "{stuck:#}"
    );
}

#[test]
fn agentcore_tools_lists_mounted_tools_with_their_schemas_and_hints() {
    let dirs = Dirs::new();
    let file = dirs.etc().join("policy.toml");
    std::fs::write(&file, fake("fake", "normal", "")).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_agentcore"))
        .args(["tools", "--policy"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let listed: Value = serde_json::from_slice(&output.stdout).unwrap();
    let tools = listed["tools"].as_array().unwrap();
    let find = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} in {listed:#}"))
    };
    assert!(tools.iter().any(|t| t["name"] == "read"));
    let echo = find("mcp__fake__echo");
    assert_eq!(
        echo["inputSchema"],
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
    );
    assert_eq!(echo["annotations"]["readOnlyHint"], true);
    assert_eq!(
        find("mcp__fake__delete_repo")["annotations"]["readOnlyHint"],
        false
    );
}

#[test]
fn a_tool_the_server_stops_offering_fails_by_name_after_its_list_changed() {
    let dirs = Dirs::new();
    let policy = fake("fake", "normal", "");
    let input = [
        turn(&[("e1", "mcp__fake__echo", json!({"text": "one"}))]),
        // Within one turn the registry stays as it was: the call after the
        // list changed (behind `fail`, which runs alone) is refused by the
        // client, naming the server.
        turn(&[
            ("r", "mcp__fake__retire", json!({})),
            ("f", "mcp__fake__fail", json!({})),
            ("e2", "mcp__fake__echo", json!({"text": "two"})),
        ]),
        // Between turns the server's tools are mounted again: echo is gone.
        turn(&[("e3", "mcp__fake__echo", json!({"text": "three"}))]),
        turn(&[("k", "mcp__fake__kinds", json!({}))]),
    ]
    .concat();
    let (events, output) = run(dirs.root(), dirs.etc(), &policy, &input);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(end(&events, "e1")["outcome"], "success");
    assert_eq!(end(&events, "r")["outcome"], "success");
    let gone = end(&events, "e2");
    assert_eq!(gone["outcome"], "failed", "{gone:#}");
    assert!(
        text(gone).contains("MCP server \"fake\" no longer offers the tool \"echo\""),
        "{gone:#}"
    );
    let unmounted = end(&events, "e3");
    assert!(
        text(unmounted).contains("tool \"mcp__fake__echo\" not found"),
        "{unmounted:#}"
    );
    assert_eq!(end(&events, "k")["outcome"], "success");
}

#[test]
fn a_tool_the_server_adds_is_mounted_for_the_next_turn_with_its_schema() {
    let dirs = Dirs::new();
    let policy = fake("fake", "normal", "");
    let input = [
        turn(&[("early", "mcp__fake__fresh", json!({"n": 1}))]),
        turn(&[("h", "mcp__fake__hire", json!({}))]),
        // Coerced against the new tool's schema ("2" → 2), then called.
        turn(&[("late", "mcp__fake__fresh", json!({"n": "2"}))]),
        turn(&[("bad", "mcp__fake__fresh", json!({}))]),
        turn(&[("e", "mcp__fake__echo", json!({"text": "still here"}))]),
    ]
    .concat();
    let (events, output) = run(dirs.root(), dirs.etc(), &policy, &input);
    assert!(output.status.success(), "{}", stderr(&output));
    let early = end(&events, "early");
    assert!(
        text(early).contains("tool \"mcp__fake__fresh\" not found"),
        "{early:#}"
    );
    assert_eq!(end(&events, "h")["outcome"], "success");
    let late = end(&events, "late");
    assert_eq!(late["outcome"], "success", "{late:#}");
    assert!(text(late).contains("fresh 2"), "{late:#}");
    // Validated against the new schema: `n` is required.
    let bad = end(&events, "bad");
    assert_eq!(bad["outcome"], "failed", "{bad:#}");
    assert!(
        text(bad).contains("The required parameter `n` is missing"),
        "{bad:#}"
    );
    let echo = end(&events, "e");
    assert_eq!(echo["outcome"], "success", "{echo:#}");
}

#[test]
#[ignore = "needs the Python MCP SDK (AGENTCORE_MCP_SDK_PYTHON)"]
fn an_sdk_server_mounted_in_a_run_gives_text_images_progress_and_failures() {
    let python = python::require_sdk_python("mcp.server.mcpserver", "the MCP SDK");
    let dirs = Dirs::new();
    let server = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/mcp_sdk/external_server.py"
    );
    let policy = format!(
        "allow = [\"mcp__sdk__explode\"]\n[[mcp_servers]]\nname = \"sdk\"\ncommand = {}\nargs = {}\nstartup_timeout_secs = 60\n",
        toml_str(&python),
        toml_value(&json!([server])),
    );
    let input = turn(&[
        ("t", "mcp__sdk__shout", json!({"text": "quiet"})),
        ("i", "mcp__sdk__pixel", json!({})),
        ("p", "mcp__sdk__steps", json!({"n": 3})),
        ("x", "mcp__sdk__explode", json!({"reason": "on purpose"})),
    ]);
    let (events, output) = run(dirs.root(), dirs.etc(), &policy, &input);
    assert!(output.status.success(), "{}", stderr(&output));
    let shout = end(&events, "t");
    assert_eq!(shout["outcome"], "success", "{shout:#} {}", stderr(&output));
    assert_eq!(shout["content"], json!([{"type": "text", "text": "QUIET"}]));
    let pixel = end(&events, "i");
    assert_eq!(pixel["outcome"], "success", "{pixel:#}");
    assert_eq!(pixel["content"][0]["type"], "image", "{pixel:#}");
    assert_eq!(pixel["content"][0]["media_type"], "image/png", "{pixel:#}");
    let steps = end(&events, "p");
    assert_eq!(steps["outcome"], "success", "{steps:#}");
    assert_eq!(text(steps), "3 steps done");
    let progress: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_exec_update" && e["tool_id"] == "p")
        .filter(|e| e["kind"] == "progress")
        .collect();
    assert_eq!(progress.len(), 3, "{events:#?}");
    assert_eq!(progress[0]["payload"]["message"], "step 1 of 3");
    let explode = end(&events, "x");
    assert_eq!(explode["outcome"], "failed", "{explode:#}");
    assert!(
        text(explode).contains("exploded: on purpose"),
        "{explode:#}"
    );
}

#[test]
fn attack_a_server_cannot_shadow_built_ins_or_mount_broken_tools() {
    let dirs = Dirs::new();
    let file = dirs.etc().join("policy.toml");
    std::fs::write(&file, fake("h q", "hostile", "")).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_agentcore"))
        .args(["tools", "--policy"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let listed: Value = serde_json::from_slice(&output.stdout).unwrap();
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    // The server's "read" is mcp__h_q__read; the built-in read is itself.
    let read = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "read")
        .unwrap();
    assert_ne!(read["description"], "Not the built-in read.");
    for name in ["mcp__h_q__read", "mcp__h_q__a_b", "mcp__h_q__ok"] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    assert_eq!(names.iter().filter(|n| **n == "mcp__h_q__a_b").count(), 1);
    assert!(!names.contains(&"mcp__h_q__bad"), "{names:?}");
    let err = stderr(&output);
    assert!(
        err.contains(
            "the tool \"a b\" of MCP server \"h q\" is left out: its name becomes \"mcp__h_q__a_b\""
        ),
        "{err}"
    );
    assert!(
        err.contains("the tool \"mcp__h_q__bad\" of MCP server \"h q\" is left out: the schema"),
        "{err}"
    );
}

#[test]
fn agentcore_mcp_serves_the_mounted_tools_of_its_policy_too() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;

    let dirs = Dirs::new();
    let file = dirs.etc().join("policy.toml");
    std::fs::write(&file, fake("fake", "normal", "")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentcore"))
        .args(["mcp", "--root"])
        .arg(dirs.root())
        .arg("--policy")
        .arg(&file)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |message: Value| {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    };
    let mut answer = |id: i64| loop {
        let mut line = String::new();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "the server closed"
        );
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["id"] == id {
            return message;
        }
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}}),
    );
    answer(1);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let listed = answer(2);
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"mcp__fake__echo"), "{names:?}");
    send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "mcp__fake__echo", "arguments": {"text": "through two hops"}}}));
    let called = answer(3);
    assert_eq!(
        called["result"]["content"][0]["text"], "echo: through two hops",
        "{called:#}"
    );
    // Closing the connection ends the session (and the mounted server).
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success());
}

/// Issue 32, item 4: a mounted tool's result is bounded as our own tools'
/// are. 100,000 lines come back as head and tail within 30,000 characters
/// and a note naming the file that keeps the whole text, which `read`
/// pages through in the same session; past eight images, the others are
/// kept as files and named, and `read` shows one as an image.
#[test]
fn a_huge_mounted_result_is_cut_and_kept_where_read_reaches_it() {
    let dirs = Dirs::new();
    let policy = dirs.etc().join("policy.toml");
    std::fs::write(&policy, fake("fake", "normal", "")).unwrap();
    // The kept files go with their session, and their paths are known only
    // from the results: one run, fed a turn at a time.
    let mut child = cli::agentcore_run_child(
        dirs.root(),
        "jsonl",
        &["--policy", policy.to_str().unwrap()],
    );
    let flood = child.turn(&[("f", "mcp__fake__flood", json!({"n": 100_000}))]);
    let cut = end(&flood, "f");
    assert_eq!(cut["outcome"], "success", "{cut:#}");
    let shown = text(cut);
    assert!(shown.starts_with("line 1\nline 2\n"), "{}", &shown[..40]);
    assert!(
        shown.ends_with("line 100000\n"),
        "{}",
        &shown[shown.len() - 40..]
    );
    assert!(shown.chars().count() <= 30_500, "{}", shown.chars().count());
    let note = shown
        .lines()
        .find(|l| l.starts_with("[Result truncated: "))
        .unwrap_or_else(|| panic!("no note: {}", &shown[..200]));
    let path = note
        .split("Full result: ")
        .nth(1)
        .and_then(|rest| rest.split(" (read it").next())
        .unwrap_or_else(|| panic!("{note}"))
        .to_owned();
    let read = child.turn(&[(
        "r",
        "read",
        json!({"file_path": path, "offset": 50_000, "limit": 2}),
    )]);
    let page = end(&read, "r");
    assert_eq!(page["outcome"], "success", "{page:#}");
    assert!(text(page).contains("line 50000\n"), "{page:#}");
    assert!(text(page).contains("line 50001"), "{page:#}");

    let pictures = child.turn(&[("p", "mcp__fake__pictures", json!({"n": 10}))]);
    let p = end(&pictures, "p");
    assert_eq!(p["outcome"], "success", "{p:#}");
    let blocks = p["content"].as_array().unwrap();
    let images = blocks.iter().filter(|b| b["type"] == "image").count();
    assert_eq!(images, 8, "{p:#}");
    let notes = text(p);
    let kept: Vec<&str> = notes
        .lines()
        .filter_map(|l| l.split("Kept at: ").nth(1))
        .filter_map(|rest| rest.split(" (read it").next())
        .collect();
    assert_eq!(kept.len(), 2, "{notes}");
    assert!(
        notes.contains("[Image 9 (image/png) left out: a result shows at most 8 images."),
        "{notes}"
    );
    let read = child.turn(&[("ri", "read", json!({"file_path": kept[0]}))]);
    let image = end(&read, "ri");
    assert_eq!(image["outcome"], "success", "{image:#}");
    assert_eq!(image["content"][0]["type"], "image", "{image:#}");
    assert_eq!(image["content"][0]["data"], "iVBORw0KGgpGQUtF", "{image:#}");
    child.finish();
}
