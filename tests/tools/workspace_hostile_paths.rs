//! Every hostile path is refused with the documented message, none reads a
//! byte outside the roots, and ordinary unusual names work.

#![cfg(unix)]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agentcore::TypedTool;
use agentcore::fs::read_state::FileReadState;
use agentcore::fs::workspace::{PathError, Workspace};
use agentcore::tools::read::ReadTool;
use agentcore::{Call, Outcome, Pipeline, ToolRegistry};
use serde_json::json;
use tower::ServiceExt;

const SECRET: &str = "TOP-SECRET-CONTENTS";

/// `outer/` holds the workspace `ws/`, a sibling `ws-evil/`, and secrets.
struct Fixture {
    _dir: tempfile::TempDir,
    outer: PathBuf,
    ws: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let outer = fs::canonicalize(dir.path()).expect("canonical");
    let ws = outer.join("ws");
    fs::create_dir_all(ws.join("inside")).unwrap();
    fs::create_dir_all(outer.join("ws-evil")).unwrap();
    fs::create_dir_all(outer.join("secretdir/sub")).unwrap();
    fs::write(outer.join("secret.txt"), SECRET).unwrap();
    fs::write(outer.join("ws-evil/x.txt"), SECRET).unwrap();
    fs::write(outer.join("secretdir/s.txt"), SECRET).unwrap();
    // A decoy: lexical `..` handling would land here instead of outside.
    fs::write(ws.join("s.txt"), "decoy").unwrap();
    fs::write(ws.join("inside/ok.txt"), "fine").unwrap();

    symlink(outer.join("secret.txt"), ws.join("link_file")).unwrap();
    symlink("chain2", ws.join("chain1")).unwrap();
    symlink("inside/../chain3", ws.join("chain2")).unwrap();
    symlink(outer.join("secret.txt"), ws.join("chain3")).unwrap();
    symlink(outer.join("secretdir"), ws.join("linkdir")).unwrap();
    symlink(outer.join("secretdir/sub"), ws.join("deep")).unwrap();
    symlink(outer.join("nowhere.txt"), ws.join("dangling_out")).unwrap();
    symlink("inside/ok.txt", ws.join("link_in")).unwrap();
    Fixture {
        _dir: dir,
        outer,
        ws,
    }
}

fn hostile_table(f: &Fixture) -> Vec<(&'static str, String)> {
    let o = f.outer.display();
    vec![
        ("dot-dot escape", "../secret.txt".into()),
        ("deep dot-dot escape", "inside/../../secret.txt".into()),
        ("absolute outside", format!("{o}/secret.txt")),
        ("absolute system file", "/etc/passwd".into()),
        ("symlinked file pointing out", "link_file".into()),
        ("chain of symlinks pointing out", "chain1".into()),
        ("symlinked directory pointing out", "linkdir/s.txt".into()),
        ("dot-dot after a symlink", "deep/../s.txt".into()),
        (
            "sibling sharing the root's prefix",
            format!("{o}/ws-evil/x.txt"),
        ),
        ("sibling through dot-dot", "../ws-evil/x.txt".into()),
    ]
}

#[test]
fn hostile_paths_are_outside_the_workspace() {
    let f = fixture();
    let ws = Workspace::new(&f.ws).unwrap();
    for (case, path) in hostile_table(&f) {
        let err = ws.resolve(&path).expect_err(case);
        assert_eq!(
            err.to_string(),
            format!("path \"{path}\" is outside the workspace"),
            "{case}"
        );
        let err = ws.resolve_new(&path).expect_err(case);
        assert!(matches!(err, PathError::Outside(_)), "{case}: {err}");
    }
}

#[test]
fn new_files_under_links_pointing_out_are_refused() {
    let f = fixture();
    let ws = Workspace::new(&f.ws).unwrap();
    for path in ["linkdir/new.txt", "dangling_out", "deep/../new.txt"] {
        let err = ws.resolve_new(path).expect_err(path);
        assert_eq!(
            err.to_string(),
            format!("path \"{path}\" is outside the workspace")
        );
    }
    assert_eq!(
        ws.resolve_new("inside/new/deeper.txt").unwrap(),
        f.ws.join("inside/new/deeper.txt")
    );
}

#[test]
fn malformed_paths_have_clear_messages() {
    let f = fixture();
    let ws = Workspace::new(&f.ws).unwrap();
    let cases: Vec<(String, &str)> = vec![
        (String::new(), "path is empty"),
        ("inside/\0/ok.txt".into(), "NUL byte"),
        ("a/".repeat(2100), "too long"),
        ("x".repeat(300), "too long"),
    ];
    for (path, needle) in cases {
        let err = ws.resolve(&path).expect_err(needle).to_string();
        assert!(err.contains(needle), "{err:?} lacks {needle:?}");
    }
}

#[test]
fn symlinks_inside_the_workspace_are_fine() {
    let f = fixture();
    let ws = Workspace::new(&f.ws).unwrap();
    let p = ws.resolve("link_in").unwrap();
    assert_eq!(p, f.ws.join("inside/ok.txt"));
    assert_eq!(ws.display(&p), "inside/ok.txt");
}

#[test]
fn root_given_through_a_symlink_accepts_both_forms() {
    let f = fixture();
    let link = f.outer.join("ws-link");
    symlink(&f.ws, &link).unwrap();
    let ws = Workspace::new(&link).unwrap();
    assert_eq!(ws.root(), f.ws.as_path());
    let via_link = ws
        .resolve(link.join("inside/ok.txt").to_str().unwrap())
        .unwrap();
    let via_real = ws
        .resolve(f.ws.join("inside/ok.txt").to_str().unwrap())
        .unwrap();
    assert_eq!(via_link, via_real);
    assert_eq!(ws.display(&via_link), "inside/ok.txt");
    let new = ws
        .resolve_new(link.join("fresh.txt").to_str().unwrap())
        .unwrap();
    assert_eq!(new, f.ws.join("fresh.txt"));
}

#[test]
fn names_with_spaces_percent_accents_and_cjk_work() {
    let f = fixture();
    let ws = Workspace::new(&f.ws).unwrap();
    for name in [
        "with space.txt",
        "100% done.txt",
        "%2e%2e%2fsecret",
        "café résumé.md",
        "日本語のファイル.txt",
        "dir with space/ünïcødé 文件.rs",
    ] {
        let path = f.ws.join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, name).unwrap();
        let resolved = ws.resolve(name).expect(name);
        assert_eq!(resolved, path);
        assert_eq!(ws.display(&resolved), name);
    }
}

async fn read(ws: &Path, path: &str) -> agentcore::ToolResult {
    let workspace = Workspace::new(ws).unwrap();
    let tool = ReadTool::new(workspace, FileReadState::new()).into_dyn();
    let registry = ToolRegistry::new().with(tool).unwrap();
    let service = Pipeline::builder()
        .registry(Arc::new(registry))
        .build()
        .service();
    service
        .oneshot(Call::new("t1", "read", json!({ "file_path": path })))
        .await
        .expect("pipeline is infallible")
}

#[tokio::test]
async fn the_read_tool_reads_no_byte_outside_the_roots() {
    let f = fixture();
    for (case, path) in hostile_table(&f) {
        let result = read(&f.ws, &path).await;
        assert_eq!(result.outcome, Outcome::Failed, "{case}");
        assert_eq!(
            result.text(),
            format!("path \"{path}\" is outside the workspace"),
            "{case}"
        );
        assert!(!result.text().contains(SECRET), "{case}");
    }
    let result = read(&f.ws, "link_in").await;
    assert_eq!(result.outcome, Outcome::Success);
    assert_eq!(result.text(), "     1\tfine");
}
