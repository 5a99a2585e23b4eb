//! Issue 30, item 4: `agentcore mcp` serves terminal sessions: `bash` with
//! `tty` comes back waiting for input, `write_stdin` answers it, and the
//! session's status comes back; `tools/list` shows `write_stdin`.

use serde_json::json;

use crate::support::mcp_stdio::serve;

#[test]
fn mcp_serves_a_terminal_session_and_write_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    let (mut child, mut client) = serve(
        &["--root", root.to_str().unwrap(), "--mode", "bypass"],
        state.path(),
    );
    let list = client.request("tools/list", json!({}));
    let names: Vec<&str> = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"write_stdin"), "{names:?}");
    let (text, is_error) = client.call(
        "bash",
        json!({"command": "python3 -c 'n = input(\"name? \"); print(\"hello \" + n)'",
               "tty": true, "yield_ms": 20_000}),
    );
    assert!(!is_error, "{text}");
    assert!(
        text.starts_with("Started terminal session job-1 "),
        "{text}"
    );
    assert!(text.contains("name? "), "{text}");
    assert!(
        text.contains("Status: running, waiting for input"),
        "{text}"
    );
    let (text, is_error) = client.call(
        "write_stdin",
        json!({"session_id": "job-1", "text": "ada\n", "yield_ms": 20_000}),
    );
    assert!(!is_error, "{text}");
    assert!(text.contains("hello ada"), "{text}");
    assert!(text.ends_with("Status: exited with code 0"), "{text}");
    let (text, is_error) = client.call(
        "write_stdin",
        json!({"session_id": "job-1", "text": "again\n"}),
    );
    assert!(is_error, "{text}");
    assert!(text.contains("has ended; nothing was typed"), "{text}");
    drop(client);
    let _ = child.wait();
}
