//! `agentcore mcp --checkpoints --tools …,checkpoints,rewind` records what
//! each call changes and serves the two tools: `tools/list` shows them
//! (`checkpoints` hinted read-only, `rewind` destructive), `checkpoints`
//! lists what an edit changed, and `rewind` puts the file back. Through
//! the built binary over its stdio.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

/// A line-by-line JSON-RPC client over the child's stdio.
struct Client {
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    next_id: i64,
}

impl Client {
    /// The result of `method`, skipping notifications.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.input, "{message}").unwrap();
        self.input.flush().unwrap();
        loop {
            let mut line = String::new();
            assert!(
                self.output.read_line(&mut line).unwrap() > 0,
                "the server closed the connection"
            );
            let answer: Value = serde_json::from_str(&line).unwrap();
            if answer["id"] == id {
                return answer
                    .get("result")
                    .cloned()
                    .unwrap_or_else(|| panic!("expected a result: {answer}"));
            }
        }
    }

    fn notify(&mut self, method: &str) {
        writeln!(
            self.input,
            "{}",
            json!({"jsonrpc": "2.0", "method": method})
        )
        .unwrap();
        self.input.flush().unwrap();
    }

    /// The text of a `tools/call` result, and whether it is an error.
    fn call(&mut self, tool: &str, args: Value) -> (String, bool) {
        let result = self.request("tools/call", json!({"name": tool, "arguments": args}));
        let text = result["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        (text, result["isError"] == true)
    }
}

/// `agentcore mcp ARGS` with its state directory (the default store's
/// home) in `state`, initialized.
fn serve(args: &[&str], state: &std::path::Path) -> (Child, Client) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentcore"))
        .arg("mcp")
        .args(args)
        .env("XDG_STATE_HOME", state)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("agentcore mcp starts");
    let mut client = Client {
        input: child.stdin.take().unwrap(),
        output: BufReader::new(child.stdout.take().unwrap()),
        next_id: 1,
    };
    client.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "checkpoints-test", "version": "0"}}),
    );
    client.notify("notifications/initialized");
    (child, client)
}

#[test]
fn mcp_with_checkpoints_lists_and_rewinds_an_edit() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::write(root.join("a.txt"), "alpha\n").unwrap();
    let (mut child, mut client) = serve(
        &[
            "--root",
            root.to_str().unwrap(),
            "--mode",
            "bypass",
            "--checkpoints",
            "--tools",
            "read,edit,write,checkpoints,rewind",
        ],
        state.path(),
    );

    let list = client.request("tools/list", json!({}));
    let tools = list["tools"].as_array().unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort_unstable();
    assert_eq!(names, ["checkpoints", "edit", "read", "rewind", "write"]);
    let hints = |name: &str| {
        let tool = tools.iter().find(|t| t["name"] == name).unwrap();
        (
            tool["annotations"]["readOnlyHint"].clone(),
            tool["annotations"]["destructiveHint"].clone(),
        )
    };
    assert_eq!(hints("checkpoints"), (json!(true), Value::Null));
    assert_eq!(hints("rewind"), (json!(false), json!(true)));

    let (text, error) = client.call("read", json!({"file_path": "a.txt"}));
    assert!(!error, "{text}");
    let (text, error) = client.call(
        "edit",
        json!({"file_path": "a.txt", "old_string": "alpha", "new_string": "ALPHA"}),
    );
    assert!(!error, "{text}");

    let (listed, error) = client.call("checkpoints", json!({}));
    assert!(!error, "{listed}");
    let mut lines = listed.lines();
    let head = lines.next().unwrap();
    assert!(
        head.starts_with("#1  turn 1  edit  Editing a.txt  (call "),
        "{listed}"
    );
    assert_eq!(lines.next(), Some("    modified a.txt"), "{listed}");

    let (report, error) = client.call("rewind", json!({"to": 1}));
    assert!(!error, "{report}");
    assert!(
        report.starts_with("Rewound to before checkpoint #1: 1 restored, 0 removed"),
        "{report}"
    );
    assert_eq!(std::fs::read(root.join("a.txt")).unwrap(), b"alpha\n");

    drop(client);
    assert!(child.wait().unwrap().success());
}

#[test]
fn mcp_naming_them_without_checkpoints_does_not_start() {
    let dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_agentcore"))
        .args(["mcp", "--root"])
        .arg(dir.path())
        .args(["--tools", "read,rewind"])
        .env("XDG_STATE_HOME", state.path())
        .stdin(Stdio::null())
        .output()
        .expect("agentcore mcp runs");
    assert_eq!(output.status.code(), Some(2));
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(
        err.contains(
            "agentcore mcp: rewind works only with checkpoints on: add --checkpoints or a [checkpoints] table to the policy"
        ),
        "{err}"
    );
    assert!(output.stdout.is_empty());
}
