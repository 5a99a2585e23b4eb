//! `agentcore mcp --checkpoints --tools …,checkpoints,rewind` records what
//! each call changes and serves the two tools: `tools/list` shows them
//! (`checkpoints` hinted read-only, `rewind` destructive), `checkpoints`
//! lists what an edit changed, and `rewind` puts the file back. Through
//! the built binary over its stdio.

use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::support::mcp_stdio::serve;

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
