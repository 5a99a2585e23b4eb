//! The MCP client asks for the newest protocol revision that still has the
//! `initialize` handshake (2025-11-25, not rmcp's LATEST 2026-07-28, which
//! has none), accepts a server answering an older one it speaks, and
//! refuses to mount one answering a version it does not speak, naming it.

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

use crate::support::cli;

const SERVER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/mcp_client/version_server.py"
);

/// Runs one turn calling `mcp__v__hello` with the server answering
/// `answer` (empty: the version asked for).
fn run(dir: &Path, answer: &str) -> (Vec<Value>, Output, Vec<Value>) {
    let log = dir.join("initialize.log");
    let _ = std::fs::remove_file(&log);
    let policy = dir.join("policy.toml");
    std::fs::write(
        &policy,
        format!(
            "[[mcp_servers]]\nname = \"v\"\ncommand = \"python3\"\nargs = [{:?}]\n\
             env = {{ VERSION_LOG = {:?}, ANSWER_VERSION = {:?} }}\n",
            SERVER,
            log.to_string_lossy(),
            answer
        ),
    )
    .unwrap();
    let root = tempfile::tempdir().unwrap();
    let input = format!(
        "{}\n",
        json!({"turn": [{"id": "h", "name": "mcp__v__hello", "args": {}}]})
    );
    let output = cli::agentcore_run(
        root.path(),
        "jsonl",
        &["--policy", &policy.to_string_lossy()],
        &input,
    );
    let asked = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (cli::events(&output), output, asked)
}

fn hello_text(events: &[Value]) -> String {
    events
        .iter()
        .find(|e| e["type"] == "tool_exec_end" && e["tool_id"] == "h")
        .map(|e| e["content"].to_string())
        .unwrap_or_default()
}

#[test]
fn initialize_asks_for_2025_11_25_the_newest_revision_with_the_handshake() {
    let dir = tempfile::tempdir().unwrap();
    let (events, output, asked) = run(dir.path(), "");
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["protocolVersion"], "2025-11-25", "{asked:?}");
    assert!(
        hello_text(&events).contains("hello from version-server"),
        "{events:#?} {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn a_server_answering_an_older_revision_is_mounted_at_it() {
    for older in ["2025-06-18", "2025-03-26", "2024-11-05"] {
        let dir = tempfile::tempdir().unwrap();
        let (events, output, _) = run(dir.path(), older);
        assert!(
            hello_text(&events).contains("hello from version-server"),
            "{older}: {events:#?} {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

#[test]
fn a_server_answering_a_version_the_client_does_not_speak_is_not_mounted() {
    for unknown in ["2026-07-28", "2099-01-01", "1.0"] {
        let dir = tempfile::tempdir().unwrap();
        let (events, output, _) = run(dir.path(), unknown);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(&format!("protocol version {unknown:?}")),
            "{unknown}: {stderr}"
        );
        assert!(stderr.contains("MCP server \"v\""), "{stderr}");
        assert!(stderr.contains("2025-11-25"), "{stderr}");
        assert!(!hello_text(&events).contains("hello from"), "{events:#?}");
    }
}

#[test]
fn an_answer_over_the_line_limit_fails_its_call_at_once_naming_the_server_and_size() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("initialize.log");
    let policy = dir.path().join("policy.toml");
    let size = 17 * 1024 * 1024;
    std::fs::write(
        &policy,
        format!(
            "[[mcp_servers]]\nname = \"v\"\ncommand = \"python3\"\nargs = [{:?}]\n\
             call_timeout_secs = 60\n\
             env = {{ VERSION_LOG = {:?}, BIG_ANSWER = \"{size}\" }}\n",
            SERVER,
            log.to_string_lossy(),
        ),
    )
    .unwrap();
    let root = tempfile::tempdir().unwrap();
    let input = format!(
        "{}\n{}\n",
        json!({"turn": [{"id": "b", "name": "mcp__v__big", "args": {}}]}),
        json!({"turn": [{"id": "h", "name": "mcp__v__hello", "args": {}}]})
    );
    let started = std::time::Instant::now();
    let output = cli::agentcore_run(
        root.path(),
        "jsonl",
        &["--policy", &policy.to_string_lossy()],
        &input,
    );
    let took = started.elapsed();
    let events = cli::events(&output);
    let big = events
        .iter()
        .find(|e| e["type"] == "tool_exec_end" && e["tool_id"] == "b")
        .unwrap_or_else(|| panic!("{events:#?}"));
    let text = big["content"].to_string();
    assert_eq!(big["is_error"], true, "{big}");
    assert!(text.contains("MCP server \\\"v\\\""), "{text}");
    // The line without its newline.
    assert!(text.contains(&format!("{} bytes", size - 1)), "{text}");
    assert!(text.contains("16777216"), "{text}");
    assert!(
        took < std::time::Duration::from_secs(30),
        "the call waited {took:?} (its timeout is 60 s)"
    );
    // The connection goes on.
    assert!(
        hello_text(&events).contains("hello from version-server"),
        "{events:#?}"
    );
}
