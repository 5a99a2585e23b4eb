//! Issue 13 item 6 (hard links, for read, write and edit): a hard link is
//! the same file under another name, so a link placed in the workspace
//! can make a file outside it (or a read-denied one) readable and
//! writable in place. The rule chosen: a file with more than one link is
//! read or written only when a bounded scan of its root finds every one
//! of its names inside the workspace and none of them is a path walks
//! leave out (read-denied); otherwise it is refused, failing closed.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agentcore::TypedTool;
use agentcore::fs::read_state::FileReadState;
use agentcore::fs::workspace::Workspace;
use agentcore::tools::edit::EditTool;
use agentcore::tools::read::ReadTool;
use agentcore::tools::write::WriteTool;
use agentcore::{Call, Outcome, Pipeline, ToolRegistry, ToolResult};
use serde_json::{Value, json};
use tower::ServiceExt;

struct Ws {
    dir: tempfile::TempDir,
    state: FileReadState,
}

impl Ws {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
            state: FileReadState::new(),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// read, edit and write over a workspace whose `secrets/` is denied.
    async fn call(&self, tool: &str, args: Value) -> ToolResult {
        let secrets = fs::canonicalize(self.dir.path()).unwrap().join("secrets");
        let ws = Workspace::new(self.dir.path())
            .unwrap()
            .with_exclusions(Arc::new(move |p: &Path| p.starts_with(&secrets)));
        let registry = ToolRegistry::new()
            .with(ReadTool::new(ws.clone(), self.state.clone()).into_dyn())
            .unwrap()
            .with(EditTool::new(ws.clone(), self.state.clone()).into_dyn())
            .unwrap()
            .with(WriteTool::new(ws, self.state.clone()).into_dyn())
            .unwrap();
        Pipeline::builder()
            .registry(Arc::new(registry))
            .build()
            .service()
            .oneshot(Call::new("c", tool, args))
            .await
            .unwrap()
    }
}

fn failed(r: &ToolResult, message: &str) {
    assert_eq!(r.outcome, Outcome::Failed, "{}", r.text());
    assert_eq!(r.text(), message);
}

#[tokio::test]
async fn a_hard_link_to_a_file_outside_is_neither_read_nor_written() {
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("shadow");
    fs::write(&target, "OUTSIDE SECRET\n").unwrap();
    let ws = Ws::new();
    fs::hard_link(&target, ws.path("x.txt")).unwrap();

    let unproven = |verb: &str| {
        format!(
            "Cannot {verb} x.txt: it has 2 hard links and only 1 of them were found inside the workspace, so it may be the same file as one outside. Hard-linked files are read and written only when every name is inside the workspace; work on a copy instead."
        )
    };
    let r = ws.call("read", json!({"file_path": "x.txt"})).await;
    failed(&r, &unproven("read"));
    let r = ws
        .call("write", json!({"file_path": "x.txt", "content": "pwned\n"}))
        .await;
    assert_eq!(r.error_code, Some(1));
    failed(&r, &unproven("write"));
    let r = ws
        .call(
            "edit",
            json!({"file_path": "x.txt", "old_string": "OUTSIDE", "new_string": "pwned"}),
        )
        .await;
    assert_eq!(r.error_code, Some(1));
    failed(&r, &unproven("edit"));
    assert_eq!(fs::read_to_string(&target).unwrap(), "OUTSIDE SECRET\n");
}

#[tokio::test]
async fn a_file_read_before_it_was_linked_outside_is_not_written_in_place() {
    let ws = Ws::new();
    fs::write(ws.path("a.txt"), "mine\n").unwrap();
    let r = ws.call("read", json!({"file_path": "a.txt"})).await;
    assert_eq!(r.outcome, Outcome::Success, "{}", r.text());
    // A neighbour links it from outside after the read.
    let outside = tempfile::tempdir().unwrap();
    fs::hard_link(ws.path("a.txt"), outside.path().join("a")).unwrap();
    let r = ws
        .call(
            "edit",
            json!({"file_path": "a.txt", "old_string": "mine", "new_string": "changed"}),
        )
        .await;
    assert_eq!(r.outcome, Outcome::Failed, "{}", r.text());
    assert!(r.text().contains("2 hard links"), "{}", r.text());
    assert_eq!(
        fs::read_to_string(outside.path().join("a")).unwrap(),
        "mine\n"
    );
}

#[tokio::test]
async fn a_hard_link_to_a_denied_file_is_not_read() {
    let ws = Ws::new();
    fs::create_dir(ws.path("secrets")).unwrap();
    fs::write(ws.path("secrets/x"), "API_KEY=123\n").unwrap();
    fs::hard_link(ws.path("secrets/x"), ws.path("notes.txt")).unwrap();
    let r = ws.call("read", json!({"file_path": "notes.txt"})).await;
    failed(
        &r,
        "Cannot read notes.txt: it is a hard link to a file that also has a name you may not read.",
    );
    assert!(!r.text().contains("API_KEY"));
    let r = ws
        .call("write", json!({"file_path": "notes.txt", "content": "x"}))
        .await;
    assert_eq!(r.outcome, Outcome::Failed, "{}", r.text());
    assert_eq!(
        fs::read_to_string(ws.path("secrets/x")).unwrap(),
        "API_KEY=123\n"
    );
}

#[tokio::test]
async fn hard_links_whose_names_are_all_inside_are_read_and_edited_in_place() {
    let ws = Ws::new();
    fs::create_dir(ws.path("deep")).unwrap();
    fs::write(ws.path("a.txt"), "one\n").unwrap();
    fs::hard_link(ws.path("a.txt"), ws.path("deep/b.txt")).unwrap();
    let r = ws.call("read", json!({"file_path": "a.txt"})).await;
    assert_eq!(r.outcome, Outcome::Success, "{}", r.text());
    let r = ws
        .call(
            "edit",
            json!({"file_path": "a.txt", "old_string": "one", "new_string": "two"}),
        )
        .await;
    assert_eq!(r.outcome, Outcome::Success, "{}", r.text());
    assert_eq!(fs::read_to_string(ws.path("deep/b.txt")).unwrap(), "two\n");
}
