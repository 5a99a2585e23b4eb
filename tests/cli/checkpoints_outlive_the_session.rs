//! `agentcore run --checkpoints` records every call that can write, and
//! `agentcore checkpoints ls|diff|rewind --root DIR` works on the store
//! after the session ended: the diff shows what a rewind would change, the
//! tree comes back byte for byte, a file the user
//! changed since is a conflict (exit 1, nothing changed) unless forced.

use std::fs;
use std::process::Command;

use serde_json::json;

use crate::support::cli::{end, events, text, turn};

/// `agentcore checkpoints ARGS…` with the state directory `state`.
fn checkpoints(state: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_agentcore"))
        .arg("checkpoints")
        .args(args)
        .env("XDG_STATE_HOME", state)
        .output()
        .unwrap()
}

/// `agentcore run --format jsonl --mode bypass --checkpoints EXTRA… --root
/// ROOT` with `input` on stdin and the state directory `state` (a run of
/// its own, not `agentcore_run`: the store goes under the test's state
/// directory).
fn run_checkpointed(
    root: &std::path::Path,
    state: &std::path::Path,
    extra: &[&str],
    input: &str,
) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentcore"))
        .args([
            "run",
            "--format",
            "jsonl",
            "--mode",
            "bypass",
            "--checkpoints",
        ])
        .args(extra)
        .arg("--root")
        .arg(root)
        .env("XDG_STATE_HOME", state)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn a_rewind_after_the_session_restores_the_tree_and_keeps_user_edits_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    fs::write(root.join("a.txt"), "alpha\n").unwrap();
    let input = turn(&[
        (
            "w",
            "write",
            json!({"file_path": "new.txt", "content": "new\n"}),
        ),
        (
            "b",
            "bash",
            json!({"command": "echo changed > a.txt; echo made > made.txt"}),
        ),
    ]);
    let output = run_checkpointed(&root, state.path(), &[], &input);
    let evs = events(&output);
    assert_eq!(
        end(&evs, "b")["outcome"],
        "success",
        "{}",
        text(end(&evs, "b"))
    );

    let root_arg = root.to_str().unwrap();
    let ls = checkpoints(state.path(), &["ls", "--root", root_arg]);
    let shown = String::from_utf8_lossy(&ls.stdout);
    assert!(
        ls.status.success(),
        "{shown}{}",
        String::from_utf8_lossy(&ls.stderr)
    );
    assert!(
        shown.contains("write") && shown.contains("    created new.txt"),
        "{shown}"
    );
    assert!(
        shown.contains("    modified a.txt") && shown.contains("    created made.txt"),
        "{shown}"
    );

    // What a rewind to before the bash call would change, as a diff.
    let diff = checkpoints(state.path(), &["diff", "--call", "b", "--root", root_arg]);
    let shown = String::from_utf8_lossy(&diff.stdout);
    assert!(diff.status.success(), "{shown}");
    assert!(
        shown.contains("--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-changed\n+alpha"),
        "{shown}"
    );
    assert!(
        shown.contains("--- a/made.txt\n+++ b/made.txt\n@@ -1 +0,0 @@\n-made"),
        "{shown}"
    );
    assert!(!shown.contains("new.txt"), "the write came before: {shown}");
    assert_eq!(fs::read(root.join("a.txt")).unwrap(), b"changed\n");
    let nowhere = checkpoints(state.path(), &["diff", "--root", root_arg]);
    assert_eq!(nowhere.status.code(), Some(2), "a diff needs a target");

    // The user edits a.txt after the session.
    fs::write(root.join("a.txt"), "the user's\n").unwrap();
    let listing: serde_json::Value = serde_json::from_slice(
        &checkpoints(state.path(), &["ls", "--json", "--root", root_arg]).stdout,
    )
    .unwrap();
    let first = listing["checkpoints"][0]["id"]
        .as_u64()
        .unwrap()
        .to_string();
    let safe = checkpoints(
        state.path(),
        &["rewind", "--to", &first, "--root", root_arg],
    );
    assert_eq!(
        safe.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&safe.stdout)
    );
    assert!(String::from_utf8_lossy(&safe.stdout).contains("conflict a.txt"));
    assert!(
        root.join("new.txt").exists(),
        "a stopped rewind changes nothing"
    );
    assert_eq!(fs::read(root.join("a.txt")).unwrap(), b"the user's\n");

    let forced = checkpoints(
        state.path(),
        &["rewind", "--to", &first, "--force", "--root", root_arg],
    );
    assert!(
        forced.status.success(),
        "{}",
        String::from_utf8_lossy(&forced.stdout)
    );
    assert!(!root.join("new.txt").exists());
    assert!(!root.join("made.txt").exists());
    assert_eq!(fs::read(root.join("a.txt")).unwrap(), b"alpha\n");
}

#[test]
fn a_root_without_checkpoints_says_how_to_get_them() {
    let dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let out = checkpoints(
        state.path(),
        &["ls", "--root", dir.path().to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("run sessions with --checkpoints"));
}

#[test]
fn run_lists_and_rewinds_on_input_lines() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    let input = format!(
        "{}{}\n{}\n{}\n{}\n",
        turn(&[("b", "bash", json!({"command": "echo made > made.txt"}))]),
        json!({"checkpoints": {}}),
        json!({"rewind": {"call": "b"}, "mode": "sideways"}),
        json!({"rewind": {"call": "b"}}),
        json!({"rewind": {"to": 99}}),
    );
    let output = run_checkpointed(&root, state.path(), &[], &input);
    let evs = events(&output);
    let listed = evs.iter().find(|e| e["type"] == "checkpoints").unwrap();
    assert_eq!(listed["checkpoints"][0]["call_id"], "b", "{listed:#}");
    let bad = evs.iter().find(|e| e["type"] == "input_error").unwrap();
    assert!(bad.to_string().contains("\\\"mode\\\" must be"), "{bad}");
    let rewinds: Vec<_> = evs.iter().filter(|e| e["type"] == "rewind").collect();
    assert_eq!(rewinds.len(), 2, "{evs:#?}");
    assert_eq!(rewinds[0]["applied"], true, "{:#}", rewinds[0]);
    assert_eq!(
        rewinds[0]["removed"][0],
        root.join("made.txt").to_str().unwrap()
    );
    assert!(
        rewinds[1]["error"]
            .as_str()
            .unwrap()
            .contains("no checkpoint #99"),
        "{:#}",
        rewinds[1]
    );
    assert!(!root.join("made.txt").exists());
}

#[test]
fn a_rewind_after_the_session_reaches_the_policys_other_writable_roots() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let other_dir = tempfile::tempdir().unwrap();
    let other = fs::canonicalize(other_dir.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    fs::write(other.join("kept.txt"), "before\n").unwrap();
    let policy = root.join("policy.toml");
    fs::write(
        &policy,
        format!(
            "[[roots]]\npath = {:?}\naccess = \"read-write\"\n",
            other.to_str().unwrap()
        ),
    )
    .unwrap();
    let input = turn(&[(
        "b",
        "bash",
        json!({"command": format!("echo after > {0}/kept.txt; echo new > {0}/new.txt", other.display())}),
    )]);
    let output = run_checkpointed(
        &root,
        state.path(),
        &["--policy", policy.to_str().unwrap()],
        &input,
    );
    let evs = events(&output);
    assert_eq!(
        end(&evs, "b")["outcome"],
        "success",
        "{}",
        text(end(&evs, "b"))
    );
    assert_eq!(fs::read(other.join("kept.txt")).unwrap(), b"after\n");

    let out = checkpoints(
        state.path(),
        &["rewind", "--call", "b", "--root", root.to_str().unwrap()],
    );
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(fs::read(other.join("kept.txt")).unwrap(), b"before\n");
    assert!(!other.join("new.txt").exists());
}
