//! `edit` and `multi_edit` read the file once per call (validate keeps the
//! bytes for the preview and the write while the file's metadata is
//! unchanged), and a file changed by another program between that read
//! and the write is still refused: whether the change keeps the size,
//! puts the modification time back, or lands in the same clock tick.

use std::fs;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use agentcore::stages::gate::gate_fn;
use agentcore::{Gate, GateDecision, Outcome, ToolResult};
use serde_json::{Value, json};

use crate::support::files::Env;

const UNEXPECTED: &str =
    "File has been unexpectedly modified. Read it again before attempting to write it.";

fn refused_unexpected(r: &ToolResult) {
    assert_eq!(r.outcome, Outcome::Failed, "{}", r.text());
    assert_eq!(r.error_code, None, "{}", r.text());
    assert_eq!(r.text(), UNEXPECTED);
}

/// A gate that, while the person decides, overwrites `name` in place with
/// `text` (the same inode) and, if `keep_mtime`, puts the modification
/// time back to what it was.
fn gate_that_rewrites(
    env: &Env,
    name: &str,
    text: &'static str,
    keep_mtime: bool,
) -> Arc<dyn Gate> {
    let path = env.path(name);
    Arc::new(gate_fn(move |_req| {
        let path = path.clone();
        async move {
            let before = fs::metadata(&path).unwrap().modified().unwrap();
            fs::write(&path, text).unwrap();
            if keep_mtime {
                let file = fs::File::options().write(true).open(&path).unwrap();
                file.set_modified(before).unwrap();
            }
            Ok(GateDecision::Allow)
        }
    }))
}

fn edit_args(old: &str, new: &str) -> Value {
    json!({"file_path": "a.txt", "old_string": old, "new_string": new})
}

fn multi_edit_args(old: &str, new: &str) -> Value {
    json!({"file_path": "a.txt", "edits": [{"old_string": old, "new_string": new}]})
}

async fn same_size_change_between_read_and_write_is_refused(
    tool: &str,
    args: Value,
    keep_mtime: bool,
) {
    let env = Env::new();
    env.put("a.txt", "alpha beta gamma\n");
    env.read("a.txt").await;
    // Same length as the original: only the bytes tell them apart.
    let gate = gate_that_rewrites(&env, "a.txt", "ALPHA BETA GAMMA\n", keep_mtime);
    let r = env.call_gated(tool, args, gate).await;
    refused_unexpected(&r);
    assert_eq!(env.bytes("a.txt"), b"ALPHA BETA GAMMA\n");
}

#[tokio::test]
async fn edit_refuses_a_same_size_change_made_after_its_read() {
    same_size_change_between_read_and_write_is_refused("edit", edit_args("beta", "BETA"), false)
        .await;
}

#[tokio::test]
async fn edit_refuses_a_same_size_change_that_puts_the_mtime_back() {
    same_size_change_between_read_and_write_is_refused("edit", edit_args("beta", "BETA"), true)
        .await;
}

#[tokio::test]
async fn multi_edit_refuses_a_same_size_change_made_after_its_read() {
    same_size_change_between_read_and_write_is_refused(
        "multi_edit",
        multi_edit_args("beta", "BETA"),
        false,
    )
    .await;
}

#[tokio::test]
async fn multi_edit_refuses_a_same_size_change_that_puts_the_mtime_back() {
    same_size_change_between_read_and_write_is_refused(
        "multi_edit",
        multi_edit_args("beta", "BETA"),
        true,
    )
    .await;
}

#[tokio::test]
async fn an_old_file_changed_in_place_with_its_times_restored_is_still_refused() {
    // A file last changed long ago: the write's own recheck has no reason
    // to compare bytes, so the kept bytes must not stand for the file once
    // its change time moved (ctime cannot be set back).
    let env = Env::new();
    env.put("a.txt", "alpha beta gamma\n");
    let old = SystemTime::now() - std::time::Duration::from_secs(3600);
    fs::File::options()
        .write(true)
        .open(env.path("a.txt"))
        .unwrap()
        .set_modified(old)
        .unwrap();
    env.read("a.txt").await;
    let gate = gate_that_rewrites(&env, "a.txt", "ALPHA BETA GAMMA\n", true);
    let r = env
        .call_gated("edit", edit_args("beta", "BETA"), gate)
        .await;
    refused_unexpected(&r);
    assert_eq!(env.bytes("a.txt"), b"ALPHA BETA GAMMA\n");
}

#[tokio::test]
async fn the_preview_and_the_write_agree_with_the_bytes_read_once() {
    // Edited in place (plain UTF-8), with a byte-order mark, and with more
    // places than are spliced (the new text is built): the same results
    // as ever, and the preview the gate sees is the change written.
    let lines: String = (1..=400).map(|i| format!("row {i} x\n")).collect();
    for (content, args, expected) in [
        (
            lines.clone(),
            json!({"file_path": "a.txt", "old_string": "row 200 x\n", "new_string": "two hundred\n"}),
            lines.replace("row 200 x\n", "two hundred\n"),
        ),
        (
            format!("\u{FEFF}{lines}"),
            json!({"file_path": "a.txt", "old_string": "row 1 x\n", "new_string": "first\n"}),
            format!("\u{FEFF}{}", lines.replacen("row 1 x\n", "first\n", 1)),
        ),
        (
            lines.clone(),
            json!({"file_path": "a.txt", "old_string": " x\n", "new_string": " y\n", "replace_all": true}),
            lines.replace(" x\n", " y\n"),
        ),
    ] {
        let env = Env::new();
        env.put("a.txt", &content);
        env.read("a.txt").await;
        let seen = Arc::new(Mutex::new(None));
        let s = seen.clone();
        let gate = Arc::new(gate_fn(move |req| {
            *s.lock().unwrap() = req.preview.clone();
            async { Ok(GateDecision::Allow) }
        }));
        let r = env.call_gated("edit", args.clone(), gate).await;
        assert_eq!(r.outcome, Outcome::Success, "{args}: {}", r.text());
        assert_eq!(env.bytes("a.txt"), expected.as_bytes(), "{args}");
        let preview = seen.lock().unwrap().clone().unwrap_or_default();
        let removed = preview
            .lines()
            .filter(|l| l.starts_with('-') && !l.starts_with("---"))
            .count();
        let added = preview
            .lines()
            .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
            .count();
        let changed = if args["replace_all"] == true { 400 } else { 1 };
        assert_eq!((removed, added), (changed, changed), "{args}: {preview}");
        // The ledger's stamp is the file as written: a second edit needs
        // no read.
        let again = env
            .call("edit", json!({"file_path": "a.txt", "old_string": "row 300", "new_string": "row three hundred"}))
            .await;
        assert_eq!(again.outcome, Outcome::Success, "{args}: {}", again.text());
    }
}
