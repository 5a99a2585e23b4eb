//! `edit_lines` keeps the ledger's rules as `edit` does (a file not read
//! is refused with code 2, one changed since the read with code 3, the
//! tool's own write is stamped), never writes read's anchor column into
//! the file, and answers hostile input — anchor garbage, line 0, lines
//! past the end, huge operation lists, overlapping operations, a missing
//! or binary file — with a sentence that says the fix, writing nothing.

use std::fs;

use agentcore::tools::edit_lines::anchor::line_hash;
use serde_json::{Value, json};

use crate::support::files::{Env, ok, refused};

fn anchor(n: usize, content: &str) -> String {
    format!("{n}:{}", line_hash(content.as_bytes()))
}

/// Refused with the pipeline's code for arguments that do not
/// deserialize, saying `says`.
fn refused_args(r: &agentcore::ToolResult, says: &str) {
    let text = refused(r, agentcore::stages::DESERIALIZE_FAILURE_CODE);
    assert!(text.contains(says), "{text}");
}

#[tokio::test]
async fn a_file_not_read_or_changed_since_is_refused_as_edit_refuses_it() {
    let env = Env::anchored();
    env.put("a.txt", "one\ntwo\n");
    let op = json!([{"op": "delete", "start": anchor(1, "one")}]);
    let text = refused(&env.edit_lines("a.txt", op.clone()).await, 2);
    assert_eq!(
        text,
        "File has not been read yet. Read it first before writing to it."
    );
    env.read_anchors("a.txt").await;
    fs::write(env.path("a.txt"), "one\ntwo\nthree\n").unwrap();
    let text = refused(&env.edit_lines("a.txt", op.clone()).await, 3);
    assert!(
        text.starts_with("File has been modified since read"),
        "{text}"
    );
    assert_eq!(env.bytes("a.txt"), b"one\ntwo\nthree\n");
    // Read again: allowed, and the tool's own write is stamped, so the next
    // call needs no read.
    env.read_anchors("a.txt").await;
    ok(&env.edit_lines("a.txt", op).await);
    ok(&env
        .edit_lines(
            "a.txt",
            json!([{"op": "delete", "start": anchor(2, "three")}]),
        )
        .await);
    assert_eq!(env.bytes("a.txt"), b"two\n");
}

#[tokio::test]
async fn the_anchor_column_never_reaches_the_file() {
    let env = Env::anchored();
    env.put("a.txt", "one\ntwo\n");
    env.read_anchors("a.txt").await;
    // Text that merely contains colons and tabs is written verbatim.
    let text = "key: value\n12:30\tlunch\nplain";
    ok(&env
        .edit_lines(
            "a.txt",
            json!([{"op": "replace", "start": anchor(2, "two"), "text": text}]),
        )
        .await);
    assert_eq!(
        env.bytes("a.txt"),
        b"one\nkey: value\n12:30\tlunch\nplain\n"
    );
    // read's own output pasted as the text is refused, not written.
    let shown = env.call("read", json!({"file_path": "a.txt"})).await.text();
    let pasted: Vec<&str> = shown.lines().take(2).collect();
    let r = env
        .edit_lines(
            "a.txt",
            json!([{"op": "insert_after", "anchor": anchor(1, "one"), "text": pasted.join("\n")}]),
        )
        .await;
    refused_args(&r, "the text holds read's LINE:HASH prefixes");
    assert_eq!(
        env.bytes("a.txt"),
        b"one\nkey: value\n12:30\tlunch\nplain\n"
    );
    // And what edit_lines writes never has a hash column: every line of
    // the file is a line the model gave or one that was there.
    for line in String::from_utf8(env.bytes("a.txt")).unwrap().lines() {
        assert!(!line.contains(&format!(":{}\t", line_hash(line.as_bytes()))));
    }
}

#[tokio::test]
async fn hostile_operations_are_refused_with_the_fix() {
    let env = Env::anchored();
    env.put("a.txt", "one\ntwo\nthree\n");
    env.read_anchors("a.txt").await;
    let a1 = anchor(1, "one");
    for (ops, says) in [
        (
            json!([{"op": "delete", "start": "one"}]),
            "anchor \"one\" has no ':'",
        ),
        (
            json!([{"op": "delete", "start": "1:xyz"}]),
            "does not end in a hash of 3 hex digits",
        ),
        (
            json!([{"op": "delete", "start": "0:"}]),
            "line 0 is not a line",
        ),
        (
            json!([{"op": "delete", "start": "1:abc\u{0}"}]),
            "LINE:HASH",
        ),
        (
            json!([{"op": "delete", "start": "18446744073709551616:abc"}]),
            "too large",
        ),
        (
            json!([{"op": "replace", "start": a1, "end": a1, "text": "x"},
                {"op": "delete", "start": a1}]),
            "overlap",
        ),
        (json!([{"op": "frobnicate", "start": a1}]), "frobnicate"),
        (json!([]), "less than 1 item"),
    ] {
        let r = env.edit_lines("a.txt", ops.clone()).await;
        assert_eq!(r.outcome, agentcore::Outcome::Failed, "{ops}");
        assert!(r.text().contains(says), "{ops}: {}", r.text());
    }
    let many: Vec<Value> = (0..10_000)
        .map(|i| json!({"op": "delete", "start": format!("{}:abc", i + 1)}))
        .collect();
    let r = env.edit_lines("a.txt", Value::Array(many)).await;
    assert_eq!(r.outcome, agentcore::Outcome::Failed);
    assert!(
        r.text().contains("has more than 100 items"),
        "{}",
        &r.text()[..200.min(r.text().len())]
    );
    // Past the end: code 14, with the last lines shown.
    let text = refused(
        &env.edit_lines(
            "a.txt",
            json!([{"op": "delete", "start": "4:abc", "end": "99:abc"}]),
        )
        .await,
        14,
    );
    assert!(
        text.contains("4:abc is past the end: the file has 3 lines."),
        "{text}"
    );
    assert!(
        text.contains(&format!("     3:{}\tthree", line_hash(b"three"))),
        "{text}"
    );
    assert_eq!(env.bytes("a.txt"), b"one\ntwo\nthree\n");
}

#[tokio::test]
async fn missing_binary_and_unchanged_are_told() {
    let env = Env::anchored();
    let text = refused(
        &env.edit_lines(
            "nope.txt",
            json!([{"op": "insert_after", "anchor": "0:", "text": "x"}]),
        )
        .await,
        1,
    );
    assert!(text.starts_with("File does not exist: nope.txt."), "{text}");
    assert!(text.contains("use the write tool"), "{text}");
    env.put("bin.dat", b"\xFF\xFEa\x00\x00\xD8");
    let r = env
        .edit_lines(
            "bin.dat",
            json!([{"op": "insert_after", "anchor": "0:", "text": "x"}]),
        )
        .await;
    refused(&r, 8);
    env.put("same.txt", "a\nb\n");
    env.read_anchors("same.txt").await;
    let text = refused(
        &env.edit_lines(
            "same.txt",
            json!([{"op": "replace", "start": anchor(2, "b"), "text": "b"}]),
        )
        .await,
        6,
    );
    assert_eq!(
        text,
        "No changes to make: the operations leave every line as it is."
    );
}

#[tokio::test]
async fn an_empty_file_takes_lines_at_the_top() {
    let env = Env::anchored();
    env.put("e.txt", "");
    env.read("e.txt").await;
    ok(&env
        .edit_lines(
            "e.txt",
            json!([{"op": "insert_after", "anchor": "0:", "text": "first\nsecond"}]),
        )
        .await);
    assert_eq!(env.bytes("e.txt"), b"first\nsecond\n");
}

#[tokio::test]
async fn one_preview_diff_and_a_change_at_the_gate_is_a_lost_update_refused() {
    use std::sync::{Arc, Mutex};

    use agentcore::stages::gate::gate_fn;
    use agentcore::{GateDecision, Outcome};

    let env = Env::anchored();
    env.put("a.txt", "one\r\ntwo\r\nthree\r\n");
    env.read_anchors("a.txt").await;
    let seen = Arc::new(Mutex::new(None));
    let s = seen.clone();
    let gate = gate_fn(move |req| {
        *s.lock().unwrap() = req.preview.clone();
        async { Ok(GateDecision::Allow) }
    });
    let ops = json!([
        {"op": "replace", "start": anchor(2, "two"), "text": "TWO"},
        {"op": "delete", "start": anchor(3, "three")},
    ]);
    let r = env
        .call_gated(
            "edit_lines",
            json!({"file_path": "a.txt", "operations": ops}),
            Arc::new(gate),
        )
        .await;
    ok(&r);
    let preview = seen.lock().unwrap().clone().expect("a preview");
    assert!(preview.contains("-two\n-three\n+TWO"), "{preview}");
    assert!(!preview.contains('\r'), "{preview}");
    assert_eq!(env.bytes("a.txt"), b"one\r\nTWO\r\n");
    // Someone writes the file while a person decides: nothing is written
    // over it.
    let gate = env.gate_that_writes("a.txt", "theirs\n");
    let r = env
        .call_gated(
            "edit_lines",
            json!({"file_path": "a.txt", "operations": [{"op": "delete", "start": anchor(1, "one")}]}),
            gate,
        )
        .await;
    assert_eq!(r.outcome, Outcome::Failed, "{}", r.text());
    assert!(r.text().contains("unexpectedly modified"), "{}", r.text());
    assert_eq!(env.bytes("a.txt"), b"theirs\n");
}

#[tokio::test]
async fn a_line_read_cuts_is_anchored_by_all_of_it() {
    let env = Env::anchored();
    let long = "x".repeat(5_000);
    env.put("l.txt", format!("a\n{long}\nb\n"));
    let shown = env.read_anchors("l.txt").await;
    assert!(
        shown[1].1.ends_with("[… 3000 more characters]"),
        "cut as read cuts"
    );
    assert_eq!(shown[1].0, anchor(2, &long));
    ok(&env
        .edit_lines(
            "l.txt",
            json!([{"op": "replace", "start": shown[1].0, "text": "short"}]),
        )
        .await);
    assert_eq!(env.bytes("l.txt"), b"a\nshort\nb\n");
}
