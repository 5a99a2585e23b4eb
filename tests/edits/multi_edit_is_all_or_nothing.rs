//! `multi_edit` applies its edits in order, each to the result of the ones
//! before it, and all or nothing: when one edit cannot be applied nothing
//! is written and the message names it (`Edit K of N: …` with its code).
//! One preview diff, one atomic write, one fresh stamp; the same
//! read-before-write rules, path confinement and approval as `edit`.

use std::fs;
use std::sync::{Arc, Mutex};

use agentcore::approval::{ApprovalEngine, Mode};
use agentcore::stages::gate::gate_fn;
use agentcore::{GateDecision, Outcome, ToolResult};
use serde_json::{Value, json};

use crate::support::files::{Env, ok_no_error_code, refused};

fn edit(old: &str, new: &str) -> Value {
    json!({"old_string": old, "new_string": new})
}

async fn multi(env: &Env, path: &str, edits: Vec<Value>) -> ToolResult {
    env.call("multi_edit", json!({"file_path": path, "edits": edits}))
        .await
}

const FILE: &str = "fn main() {\n    let a = 1;\n    let b = 2;\n    println!(\"{a} {b}\");\n}\n";

#[tokio::test]
async fn edits_apply_in_order_with_one_write_and_a_fresh_stamp() {
    let env = Env::new();
    env.put("src/main.rs", FILE);
    env.read("src/main.rs").await;
    let r = multi(
        &env,
        "src/main.rs",
        vec![
            edit("let a = 1;", "let a = 10;"),
            edit("let b = 2;", "let b = 20;\n    let c = a + b;"),
            // Sees the line the edit before it wrote.
            edit("let c = a + b;", "let c = a * b;"),
        ],
    )
    .await;
    assert_eq!(
        ok_no_error_code(&r),
        "The file src/main.rs has been updated successfully (3 edits).\n     1\tfn main() {\n     2\t    let a = 10;\n     3\t    let b = 20;\n     4\t    let c = a * b;\n     5\t    println!(\"{a} {b}\");\n     6\t}"
    );
    assert_eq!(
        env.bytes("src/main.rs"),
        b"fn main() {\n    let a = 10;\n    let b = 20;\n    let c = a * b;\n    println!(\"{a} {b}\");\n}\n"
    );
    // The tool's own write is stamped: another call needs no read.
    ok_no_error_code(&multi(&env, "src/main.rs", vec![edit("a * b", "a - b")]).await);
    assert!(
        String::from_utf8(env.bytes("src/main.rs"))
            .unwrap()
            .contains("a - b")
    );
}

#[tokio::test]
async fn an_edit_that_invalidates_a_later_edits_target_writes_nothing() {
    let env = Env::new();
    env.put("src/main.rs", FILE);
    env.read("src/main.rs").await;
    let r = multi(
        &env,
        "src/main.rs",
        vec![
            edit("let a = 1;", "let a = 10;"),
            edit("let b = 2;", "let beta = 2;"),
            edit("let b = 2;", "let b = 3;"),
        ],
    )
    .await;
    let text = refused(&r, 4);
    assert!(
        text.starts_with("Edit 3 of 3: String to replace not found in file.\nString: let b = 2;"),
        "{text}"
    );
    assert_eq!(env.bytes("src/main.rs"), FILE.as_bytes());
}

#[tokio::test]
async fn overlapping_edits_are_refused_not_guessed() {
    let env = Env::new();
    env.put("a.txt", "alpha beta gamma\n");
    env.read("a.txt").await;
    // The second edit quotes text the first one changed.
    let r = multi(
        &env,
        "a.txt",
        vec![edit("alpha beta", "ALPHA BETA"), edit("beta gamma", "B G")],
    )
    .await;
    assert!(refused(&r, 4).starts_with("Edit 2 of 2: "), "{}", r.text());
    assert_eq!(env.bytes("a.txt"), b"alpha beta gamma\n");

    // An edit that makes a later quote ambiguous: code 5 from that edit.
    let r = multi(
        &env,
        "a.txt",
        vec![edit("alpha", "gamma"), edit("gamma", "delta")],
    )
    .await;
    let text = refused(&r, 5);
    assert!(text.starts_with("Edit 2 of 2: Found 2 matches"), "{text}");
    assert_eq!(env.bytes("a.txt"), b"alpha beta gamma\n");
}

#[tokio::test]
async fn each_edits_code_is_its_own() {
    let env = Env::new();
    env.put("a.txt", "one\ntwo\n");
    env.read("a.txt").await;
    let cases: [(Vec<Value>, i64, &str); 4] = [
        (
            vec![edit("one", "1"), edit("two", "two")],
            6,
            "Edit 2 of 2: No changes to make: old_string and new_string are exactly the same.",
        ),
        (
            vec![edit("one", "1"), edit("  \n", "x")],
            9,
            "Edit 2 of 2: old_string must contain non-whitespace text.",
        ),
        (
            vec![edit("", "x")],
            7,
            "Edit 1 of 1: Cannot create new file - file already exists.",
        ),
        (
            vec![edit("one", "two"), edit("two", "2"), edit("2", "3")],
            5,
            "Edit 2 of 3: Found 2 matches",
        ),
    ];
    for (edits, code, start) in cases {
        let r = multi(&env, "a.txt", edits).await;
        let text = refused(&r, code);
        assert!(text.starts_with(start), "{code}: {text}");
        assert_eq!(env.bytes("a.txt"), b"one\ntwo\n");
    }
}

#[tokio::test]
async fn a_tolerant_edit_is_named_by_its_number() {
    let env = Env::new();
    env.put("a.py", "def f():\n\treturn 1   \n\nx = \u{201C}s\u{201D}\n");
    env.read("a.py").await;
    let r = multi(
        &env,
        "a.py",
        vec![
            edit("    return 1\n", "    return 2\n"),
            edit("x = \"s\"", "x = \"t\""),
        ],
    )
    .await;
    let text = ok_no_error_code(&r);
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("The file a.py has been updated successfully (2 edits).")
    );
    assert_eq!(
        lines.next(),
        Some("Edit 1 of 2: (matched after normalising indentation; new_string re-indented)")
    );
    assert_eq!(
        lines.next(),
        Some("Edit 2 of 2: (matched after folding look-alike characters)")
    );
    assert_eq!(env.bytes("a.py"), b"def f():\n\treturn 2\n\nx = \"t\"\n");
}

#[tokio::test]
async fn more_than_a_hundred_edits_or_none_are_refused_before_anything() {
    let env = Env::new();
    let text: String = (0..101).map(|i| format!("line {i};\n")).collect();
    env.put("a.txt", &text);
    env.read("a.txt").await;
    let edits: Vec<Value> = (0..101)
        .map(|i| edit(&format!("line {i};"), &format!("LINE {i};")))
        .collect();
    let r = multi(&env, "a.txt", edits.clone()).await;
    assert!(
        r.text().ends_with("has more than 100 items"),
        "{}",
        r.text()
    );
    assert_eq!(r.outcome, Outcome::Failed, "{}", r.text());
    assert_eq!(env.bytes("a.txt"), text.as_bytes());
    let r = multi(&env, "a.txt", Vec::new()).await;
    assert!(r.text().ends_with("has less than 1 item"), "{}", r.text());
    assert_eq!(r.outcome, Outcome::Failed, "{}", r.text());
    // A hundred is the most, and lands.
    ok_no_error_code(&multi(&env, "a.txt", edits[..100].to_vec()).await);
    assert!(
        String::from_utf8(env.bytes("a.txt"))
            .unwrap()
            .ends_with("LINE 99;\nline 100;\n")
    );
}

#[tokio::test]
async fn a_file_not_read_or_changed_since_is_refused_with_codes_2_and_3() {
    let env = Env::new();
    env.put("a.txt", "one\n");
    let r = multi(&env, "a.txt", vec![edit("one", "1")]).await;
    assert_eq!(
        refused(&r, 2),
        "File has not been read yet. Read it first before writing to it."
    );
    env.read("a.txt").await;
    env.put("a.txt", "one, changed by someone else\n");
    let r = multi(&env, "a.txt", vec![edit("one", "1")]).await;
    assert!(refused(&r, 3).starts_with("File has been modified since read"));
    assert_eq!(env.bytes("a.txt"), b"one, changed by someone else\n");
}

#[tokio::test]
async fn a_change_while_the_gate_waits_writes_nothing() {
    let env = Env::new();
    env.put("a.txt", "one\ntwo\n");
    env.read("a.txt").await;
    let gate = env.gate_that_writes("a.txt", "rewritten by someone else\n");
    let r = env
        .call_gated(
            "multi_edit",
            json!({"file_path": "a.txt", "edits": [edit("one", "1"), edit("two", "2")]}),
            gate,
        )
        .await;
    assert_eq!(r.outcome, Outcome::Failed, "{}", r.text());
    assert!(
        r.text().starts_with("File has been unexpectedly modified"),
        "{}",
        r.text()
    );
    assert_eq!(env.bytes("a.txt"), b"rewritten by someone else\n");
}

#[tokio::test]
async fn one_preview_diff_covers_every_edit() {
    let env = Env::new();
    let text: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    env.put("m.txt", &text);
    env.read("m.txt").await;
    let seen = Arc::new(Mutex::new(None));
    let s = seen.clone();
    let gate = gate_fn(move |req| {
        *s.lock().unwrap() = req.preview.clone();
        async { Ok(GateDecision::Deny(None)) }
    });
    let r = env
        .call_gated(
            "multi_edit",
            json!({"file_path": "m.txt", "edits": [edit("line 2\n", "two\n"), edit("line 29\n", "")]}),
            Arc::new(gate),
        )
        .await;
    assert_eq!(r.outcome, Outcome::Denied);
    let preview = seen.lock().unwrap().clone().expect("a preview");
    assert!(
        preview.starts_with("--- a/m.txt\n+++ b/m.txt\n"),
        "{preview}"
    );
    assert!(preview.contains("-line 2\n+two\n"), "{preview}");
    assert!(preview.contains("-line 29\n"), "{preview}");
    assert_eq!(env.bytes("m.txt"), text.as_bytes());
}

#[tokio::test]
async fn the_first_edit_may_create_a_missing_file() {
    let env = Env::new();
    let r = multi(&env, "new/f.txt", vec![edit("", "a\nb\n"), edit("b", "B")]).await;
    ok_no_error_code(&r);
    assert_eq!(env.bytes("new/f.txt"), b"a\nB\n");
    let r = multi(&env, "missing.txt", vec![edit("a", "b")]).await;
    assert!(refused(&r, 1).starts_with("File does not exist: missing.txt."));
    assert!(!env.path("missing.txt").exists());
}

#[tokio::test]
async fn crlf_and_bom_are_kept() {
    let env = Env::new();
    env.put("w.txt", b"\xEF\xBB\xBFfirst\r\nsecond\r\n");
    env.read("w.txt").await;
    ok_no_error_code(
        &multi(
            &env,
            "w.txt",
            vec![edit("first\nsecond", "1\n2"), edit("2", "two")],
        )
        .await,
    );
    assert_eq!(env.bytes("w.txt"), b"\xEF\xBB\xBF1\r\ntwo\r\n");
}

#[cfg(unix)]
#[tokio::test]
async fn paths_outside_the_workspace_are_refused_as_edit_refuses_them() {
    let env = Env::new();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.txt");
    fs::write(&secret, "keep me\n").unwrap();
    std::os::unix::fs::symlink(&secret, env.path("escape.txt")).unwrap();
    let r = multi(&env, "escape.txt", vec![edit("keep", "lose")]).await;
    assert_eq!(
        refused(&r, 1),
        "path \"escape.txt\" is outside the workspace"
    );
    let given = secret.to_str().unwrap();
    let r = multi(&env, given, vec![edit("keep", "lose")]).await;
    refused(&r, 1);
    let r = multi(&env, "../x/secret.txt", vec![edit("keep", "lose")]).await;
    refused(&r, 1);
    assert_eq!(fs::read(&secret).unwrap(), b"keep me\n");
}

#[tokio::test]
async fn a_protected_path_asks_even_in_accept_edits_mode() {
    let env = Env::new();
    env.put(".env", "KEY=1\n");
    env.put("src/a.rs", "a\n");
    env.read(".env").await;
    env.read("src/a.rs").await;
    let engine = ApprovalEngine::new(env.root()).with_mode(Mode::AcceptEdits);
    let r = env
        .call_gated(
            "multi_edit",
            json!({"file_path": ".env", "edits": [edit("KEY=1", "KEY=2")]}),
            Arc::new(engine.clone()),
        )
        .await;
    assert_ne!(r.outcome, Outcome::Success, "{}", r.text());
    assert_eq!(env.bytes(".env"), b"KEY=1\n");
    // A plain file is an edit accept-edits allows.
    let r = env
        .call_gated(
            "multi_edit",
            json!({"file_path": "src/a.rs", "edits": [edit("a", "b")]}),
            Arc::new(engine),
        )
        .await;
    ok_no_error_code(&r);
    assert_eq!(env.bytes("src/a.rs"), b"b\n");
}
