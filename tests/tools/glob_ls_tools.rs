//! glob and ls through the pipeline: gitignore-aware walks that include
//! hidden files, skip VCS directories and symlinks pointing out, order and
//! cap their results as docs/tools.md says.

#![cfg(unix)]

use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::Arc;

use agentcore::TypedTool;
use agentcore::fs::workspace::Workspace;
use agentcore::tools::glob::GlobTool;
use agentcore::tools::ls::LsTool;
use agentcore::{Call, InterruptBehavior, Outcome, Pipeline, Tool, ToolRegistry, ToolResult};
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::support::files::{age, write};

/// A tree with ignored, hidden, VCS and symlinked entries. Returns the
/// workspace dir and a dir outside it.
fn tree() -> (tempfile::TempDir, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let r = dir.path();
    write(r, ".gitignore", "target/\n*.log\n");
    write(r, "src/main.rs", "fn main() {}\n");
    write(r, "src/lib.rs", "pub fn lib() {}\n");
    write(r, "src/nested/deep.rs", "// deep\n");
    write(r, "target/out.rs", "// build output\n");
    write(r, "debug.log", "log\n");
    write(r, ".hidden/config.rs", "// hidden\n");
    write(r, ".git/HEAD", "ref: refs/heads/main\n");
    write(r, ".git/hooks/hook.rs", "// vcs\n");
    write(r, ".jj/store.rs", "// vcs\n");
    write(r, "README.md", "# readme\n");
    write(outside.path(), "secret.rs", "// secret\n");
    symlink(outside.path().join("secret.rs"), r.join("link_out.rs")).unwrap();
    symlink(outside.path(), r.join("linkdir_out")).unwrap();
    symlink("src/lib.rs", r.join("link_in.rs")).unwrap();
    age(r, "src/main.rs", 10);
    age(r, "src/lib.rs", 20);
    age(r, "src/nested/deep.rs", 30);
    age(r, ".hidden/config.rs", 40);
    (dir, outside)
}

async fn run(root: &Path, tool: Arc<dyn Tool>, args: Value) -> ToolResult {
    let name = tool.name().to_owned();
    let registry = ToolRegistry::new().with(tool).unwrap();
    Pipeline::builder()
        .registry(Arc::new(registry))
        .build()
        .service()
        .oneshot(Call::new("g1", name, args))
        .await
        .unwrap_or_else(|_| panic!("pipeline failed in {}", root.display()))
}

async fn glob(root: &Path, args: Value) -> ToolResult {
    let ws = Workspace::new(root).unwrap();
    run(root, GlobTool::new(ws).into_dyn(), args).await
}

async fn ls(root: &Path, args: Value) -> ToolResult {
    let ws = Workspace::new(root).unwrap();
    run(root, LsTool::new(ws).into_dyn(), args).await
}

#[tokio::test]
async fn glob_lists_newest_first_skipping_ignored_vcs_and_outward_links() {
    let (dir, _outside) = tree();
    let r = glob(dir.path(), json!({"pattern": "**/*.rs"})).await;
    assert_eq!(r.outcome, Outcome::Success);
    // link_in.rs has its target's mtime (src/lib.rs, 20 s ago).
    assert_eq!(
        r.text(),
        "src/main.rs\nlink_in.rs\nsrc/lib.rs\nsrc/nested/deep.rs\n.hidden/config.rs"
    );
}

#[tokio::test]
async fn glob_breaks_mtime_ties_by_path() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["b.txt", "a.txt", "c/a.txt"] {
        write(dir.path(), name, "x");
        age(dir.path(), name, 100);
    }
    let r = glob(dir.path(), json!({"pattern": "*.txt"})).await;
    assert_eq!(r.text(), "a.txt\nb.txt\nc/a.txt");
}

#[tokio::test]
async fn glob_under_a_path_and_anchored_patterns() {
    let (dir, _outside) = tree();
    let r = glob(dir.path(), json!({"pattern": "*.rs", "path": "src"})).await;
    assert_eq!(r.text(), "src/main.rs\nsrc/lib.rs\nsrc/nested/deep.rs");
    let r = glob(dir.path(), json!({"pattern": "src/*.rs"})).await;
    assert_eq!(r.text(), "src/main.rs\nsrc/lib.rs");
    let r = glob(dir.path(), json!({"pattern": "*.nothing"})).await;
    assert_eq!(r.outcome, Outcome::Success);
    assert_eq!(r.text(), "No files found");
}

#[tokio::test]
async fn glob_caps_at_100_with_the_note() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..150 {
        write(dir.path(), &format!("f{i:03}.txt"), "x");
        age(dir.path(), &format!("f{i:03}.txt"), 1000 - i);
    }
    let r = glob(dir.path(), json!({"pattern": "*.txt"})).await;
    let text = r.text();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 101);
    assert_eq!(lines[0], "f149.txt");
    assert_eq!(lines[99], "f050.txt");
    assert_eq!(
        lines[100],
        "(Results are truncated. Consider using a more specific path or pattern.)"
    );
}

#[tokio::test]
async fn glob_refuses_paths_outside_and_bad_patterns() {
    let (dir, _outside) = tree();
    let r = glob(dir.path(), json!({"pattern": "*", "path": "linkdir_out"})).await;
    assert_eq!(r.outcome, Outcome::Failed);
    assert_eq!(r.text(), "path \"linkdir_out\" is outside the workspace");
    let r = glob(dir.path(), json!({"pattern": "a[b"})).await;
    assert_eq!(r.outcome, Outcome::Failed);
    assert!(
        r.text().starts_with("Invalid glob pattern \"a[b\""),
        "{}",
        r.text()
    );
}

#[tokio::test]
async fn ls_draws_the_tree_dirs_first_then_files_by_name() {
    let (dir, _outside) = tree();
    let r = ls(dir.path(), json!({"path": "."})).await;
    assert_eq!(r.outcome, Outcome::Success);
    assert_eq!(
        r.text(),
        "- ./
  - .hidden/
    - config.rs
  - src/
    - nested/
      - deep.rs
    - lib.rs
    - main.rs
  - .gitignore
  - README.md
  - link_in.rs"
    );
}

#[tokio::test]
async fn ls_of_a_subdirectory_with_ignore_globs() {
    let (dir, _outside) = tree();
    let r = ls(dir.path(), json!({"path": "src", "ignore": ["nested"]})).await;
    assert_eq!(r.text(), "- src/\n  - lib.rs\n  - main.rs");
    let r = ls(dir.path(), json!({"path": ".", "ignore": ["*.rs", ".*"]})).await;
    assert_eq!(r.text(), "- ./\n  - src/\n    - nested/\n  - README.md");
}

#[tokio::test]
async fn ls_caps_at_1000_entries_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..1200 {
        write(dir.path(), &format!("f{i:04}"), "");
    }
    let r = ls(dir.path(), json!({"path": "."})).await;
    let text = r.text();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1002);
    assert_eq!(lines[1000], "  - f0999");
    assert_eq!(
        lines[1001],
        "(Results are truncated: showing 1000 of 1200 entries. List a subdirectory, add ignore patterns, or use glob to narrow the listing.)"
    );
}

#[tokio::test]
async fn ls_refuses_files_and_outside_paths() {
    let (dir, _outside) = tree();
    let r = ls(dir.path(), json!({"path": "README.md"})).await;
    assert_eq!(r.outcome, Outcome::Failed);
    assert_eq!(
        r.text(),
        "path \"README.md\" is not a directory; use read for files"
    );
    let r = ls(dir.path(), json!({"path": ".."})).await;
    assert_eq!(r.text(), "path \"..\" is outside the workspace");
}

#[test]
fn metadata_matches_the_tools_table() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    let glob = GlobTool::new(ws.clone()).into_dyn();
    let ls = LsTool::new(ws).into_dyn();
    let g = json!({"pattern": "**/*.rs"});
    let l = json!({"path": "src"});
    assert_eq!(glob.label(), Some("Find Files"));
    assert_eq!(ls.label(), Some("List Directory"));
    assert_eq!(
        glob.activity(&g).as_deref(),
        Some("Finding files matching **/*.rs")
    );
    assert_eq!(ls.activity(&l).as_deref(), Some("Listing src"));
    for (tool, args) in [(glob.as_ref(), &g), (ls.as_ref(), &l)] {
        assert!(tool.read_only(args));
        assert_eq!(tool.concurrency_safe(args), Some(true));
        assert_eq!(tool.interrupt_behavior(args), InterruptBehavior::Cancel);
        let schema = tool.schema();
        assert_eq!(schema["additionalProperties"], json!(false));
        for (name, prop) in schema["properties"].as_object().unwrap() {
            assert!(prop["description"].is_string(), "{name}");
        }
    }
}
