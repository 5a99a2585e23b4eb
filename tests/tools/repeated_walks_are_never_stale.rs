//! Issue 33 item 4: a walk keeps what it learned for the next call
//! (directory listings, and each file's verdict for a pattern), keyed by
//! identity and stamp. Between two calls this changes a file (same size),
//! adds one, changes a matching one (whose lines content mode kept),
//! removes one, renames a folder and swaps a folder for a symbolic link;
//! every second call must give what a fresh tool, with nothing learned,
//! gives.

use std::fs;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agentcore::TypedTool;
use agentcore::fs::workspace::Workspace;
use agentcore::tools::glob::GlobTool;
use agentcore::tools::grep::GrepTool;
use agentcore::tools::ls::LsTool;
use agentcore::{CallContext, EventSink, GatedArgs, Tool};
use serde_json::{Value, json};

async fn call(tool: &dyn Tool, args: &Value) -> String {
    let cx = CallContext::for_test("walk", EventSink::noop());
    let out = tool
        .execute(GatedArgs::for_test(args.clone()), &cx)
        .await
        .unwrap_or_else(|e| panic!("{args}: {e:?}"));
    out.content[0].as_text().unwrap_or_default().to_owned()
}

/// The tools that keep what they learned, and the calls compared.
struct Kept {
    grep: Arc<dyn Tool>,
    glob: Arc<dyn Tool>,
    ls: Arc<dyn Tool>,
}

impl Kept {
    fn new(root: &Path) -> Self {
        let ws = Workspace::new(root).unwrap();
        Self {
            grep: GrepTool::new(ws.clone()).into_dyn(),
            glob: GlobTool::new(ws.clone()).into_dyn(),
            ls: LsTool::new(ws).into_dyn(),
        }
    }

    /// Every call, by the kept tools (twice) and by fresh ones.
    async fn check(&self, root: &Path, step: &str) {
        let fresh = Kept::new(root);
        let greps = [
            json!({"pattern": "needle"}),
            json!({"pattern": "needle", "output_mode": "content"}),
            json!({"pattern": "needle", "output_mode": "count"}),
            json!({"pattern": "needle", "output_mode": "content", "head_limit": 1}),
            json!({"pattern": "needle", "output_mode": "content", "-C": 1}),
            json!({"pattern": "needle", "output_mode": "content", "head_limit": 0}),
        ];
        for args in &greps {
            let want = call(&*fresh.grep, args).await;
            for _ in 0..2 {
                assert_eq!(call(&*self.grep, args).await, want, "{step}: grep {args}");
            }
        }
        let glob = json!({"pattern": "**/*.txt"});
        let want = call(&*fresh.glob, &glob).await;
        assert_eq!(call(&*self.glob, &glob).await, want, "{step}: glob");
        let ls = json!({"path": "."});
        let want = call(&*fresh.ls, &ls).await;
        assert_eq!(call(&*self.ls, &ls).await, want, "{step}: ls");
    }
}

#[tokio::test]
async fn every_change_between_two_searches_is_seen() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("out.txt"), "needle outside\n").unwrap();
    let r = dir.path().join("ws");
    for (path, body) in [
        ("a/one.txt", "needle one\n"),
        ("a/two.txt", "nothing\n"),
        ("b/three.txt", "needle three\n"),
        ("c/d/four.txt", "needle four\n"),
        ("c/d/five.txt", "nothing\n"),
        ("e/six.txt", "nothing\n"),
    ] {
        let p = r.join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, body).unwrap();
    }
    // Only what changed more than a few seconds ago is kept: let the tree
    // settle, so that the first calls keep everything.
    std::thread::sleep(Duration::from_millis(3_300));
    let kept = Kept::new(&r);
    kept.check(&r, "first").await;

    // The same size: only the change time tells.
    fs::write(r.join("a/two.txt"), "needle!\n").unwrap();
    kept.check(&r, "changed in place").await;
    assert!(
        call(&*kept.grep, &json!({"pattern": "needle"}))
            .await
            .contains("a/two.txt")
    );

    // A matching file changed in place, the same size: the lines content
    // mode kept of it must not be shown again.
    fs::write(r.join("b/three.txt"), "needle THREE\n").unwrap();
    kept.check(&r, "matching file changed in place").await;
    let content = json!({"pattern": "needle", "output_mode": "content"});
    let lines = call(&*kept.grep, &content).await;
    assert!(
        lines.contains("needle THREE") && !lines.contains("needle three"),
        "{lines}"
    );

    fs::write(r.join("e/new.txt"), "needle new\n").unwrap();
    kept.check(&r, "added").await;

    fs::remove_file(r.join("a/one.txt")).unwrap();
    kept.check(&r, "removed").await;

    fs::rename(r.join("c"), r.join("renamed")).unwrap();
    kept.check(&r, "folder renamed").await;
    let files = call(&*kept.grep, &json!({"pattern": "needle"})).await;
    assert!(
        files.contains("renamed/d/four.txt") && !files.contains("c/d"),
        "{files}"
    );

    fs::rename(r.join("b"), dir.path().join("b_moved")).unwrap();
    std::os::unix::fs::symlink(outside.path(), r.join("b")).unwrap();
    kept.check(&r, "folder swapped for a symbolic link").await;
    let files = call(&*kept.grep, &json!({"pattern": "needle"})).await;
    assert!(
        !files.contains("three") && !files.contains("out.txt"),
        "{files}"
    );

    // And a file swapped for a symbolic link to one outside.
    fs::remove_file(r.join("e/six.txt")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("out.txt"), r.join("e/six.txt")).unwrap();
    kept.check(&r, "file swapped for a symbolic link").await;
}

#[tokio::test]
async fn a_change_to_a_settled_tree_is_seen_at_once() {
    // Everything kept (settled), then one file changed in place with the
    // same size and its times set back: its change time still moves.
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    for i in 0..50 {
        fs::write(r.join(format!("f{i:02}.txt")), "plain line\n").unwrap();
    }
    std::thread::sleep(Duration::from_millis(3_300));
    let kept = Kept::new(r);
    let args = json!({"pattern": "needle"});
    assert_eq!(call(&*kept.grep, &args).await, "No matches found");
    assert_eq!(call(&*kept.grep, &args).await, "No matches found");
    let path = r.join("f17.txt");
    let before = fs::metadata(&path).unwrap().modified().unwrap();
    fs::write(&path, "needle line\n").unwrap();
    fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(before)
        .unwrap();
    assert_eq!(fs::metadata(&path).unwrap().modified().unwrap(), before);
    assert_eq!(call(&*kept.grep, &args).await, "Found 1 file\nf17.txt");
}
