//! Issue 30, item 4: `agentcore mcp` serves terminal sessions: `bash` with
//! `tty` comes back waiting for input, `write_stdin` answers it, and the
//! session's status comes back; `tools/list` shows `write_stdin`.

use serde_json::json;

use crate::support::mcp_stdio::serve;

/// `agentcore mcp` in bypass mode on an empty root: the folders it
/// needs (kept alive by the caller), the process and its client.
fn bypass_server() -> (
    [tempfile::TempDir; 2],
    std::process::Child,
    crate::support::mcp_stdio::Client,
) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    let (child, client) = serve(
        &["--root", root.to_str().unwrap(), "--mode", "bypass"],
        state.path(),
    );
    ([dir, state], child, client)
}

#[test]
fn mcp_serves_a_terminal_session_and_write_stdin() {
    let (_dirs, mut child, mut client) = bypass_server();
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

/// Issue 30, items 3 and 4: over MCP, a cut `bash` result names the call
/// id under which its full output is kept, and `bash_output` with that id
/// and a pattern returns exactly the matching lines.
#[test]
fn mcp_reads_a_cut_output_again_by_the_call_id_it_names() {
    let (_dirs, mut child, mut client) = bypass_server();
    let (text, is_error) = client.call("bash", json!({"command": "seq 1 100000"}));
    assert!(!is_error, "{text}");
    let hint = text
        .lines()
        .find(|l| l.starts_with("Read it again with bash_output {\"call_id\": \""))
        .unwrap_or_else(|| panic!("no hint in the cut result: {text}"));
    let call_id = hint
        .trim_start_matches("Read it again with bash_output {\"call_id\": \"")
        .split('"')
        .next()
        .unwrap()
        .to_owned();
    let (text, is_error) = client.call(
        "bash_output",
        json!({"call_id": call_id, "pattern": "^9999[0-9]$"}),
    );
    assert!(!is_error, "{text}");
    let found: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    assert_eq!(found.len(), 10, "{text}");
    for (i, line) in found.iter().enumerate() {
        assert!(line.ends_with(&format!("9999{i}")), "{text}");
    }
    let (text, is_error) = client.call(
        "bash_output",
        json!({"call_id": "no-such-call", "pattern": "x"}),
    );
    assert!(is_error, "{text}");
    drop(client);
    let _ = child.wait();
}
