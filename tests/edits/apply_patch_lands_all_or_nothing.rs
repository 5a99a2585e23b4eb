//! `apply_patch` lands a patch over several files all or nothing: every
//! hunk placed and every refusal found before anything is written; files
//! updated, moved or deleted need a read stamp (codes 2 and 3), added
//! files must not exist (code 7); errors name the file and the hunk, with
//! the closest lines; one preview diff over every file; every path the
//! patch names goes through the workspace and the approval engine.

use std::fs;
use std::sync::{Arc, Mutex};

use agentcore::approval::{ApprovalEngine, Mode};
use agentcore::stages::gate::gate_fn;
use agentcore::{GateDecision, Outcome, ToolResult};
use serde_json::json;

use crate::support::files::{Env, ok, refused};

fn patch(body: &str) -> String {
    format!("*** Begin Patch\n{body}*** End Patch\n")
}

async fn apply(env: &Env, body: &str) -> ToolResult {
    env.call("apply_patch", json!({"patch": patch(body)})).await
}

const MAIN: &str = "fn main() {\n    let a = 1;\n    let b = 2;\n    println!(\"{a} {b}\");\n}\n";
const LIB: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\npub fn sub(a: i32, b: i32) -> i32 {\n    a - b\n}\n";

/// A workspace with src/main.rs, src/lib.rs and old.txt, all read.
async fn project() -> Env {
    let env = Env::new();
    env.put("src/main.rs", MAIN);
    env.put("src/lib.rs", LIB);
    env.put("old.txt", "obsolete\n");
    for name in ["src/main.rs", "src/lib.rs", "old.txt"] {
        env.read(name).await;
    }
    env
}

fn unchanged(env: &Env) {
    assert_eq!(env.bytes("src/main.rs"), MAIN.as_bytes());
    assert_eq!(env.bytes("src/lib.rs"), LIB.as_bytes());
    assert_eq!(env.bytes("old.txt"), b"obsolete\n");
}

const EVERY_OPERATION: &str = concat!(
    "*** Add File: docs/notes.md\n",
    "+# Notes\n",
    "+\n",
    "+Added by a patch.\n",
    "*** Update File: src/main.rs\n",
    "@@ fn main() {\n",
    "     let a = 1;\n",
    "-    let b = 2;\n",
    "+    let b = 3;\n",
    "*** Delete File: old.txt\n",
    "*** Update File: src/lib.rs\n",
    "*** Move to: src/math.rs\n",
    "@@ pub fn sub(a: i32, b: i32) -> i32 {\n",
    "-    a - b\n",
    "+    a.wrapping_sub(b)\n",
    " }\n",
    "*** End of File\n",
);

#[tokio::test]
async fn every_operation_lands_with_one_preview_and_fresh_stamps() {
    let env = project().await;
    let seen = Arc::new(Mutex::new(None));
    let s = seen.clone();
    let gate = gate_fn(move |req| {
        *s.lock().unwrap() = req.preview.clone();
        async { Ok(GateDecision::Allow) }
    });
    let r = env
        .call_gated(
            "apply_patch",
            json!({"patch": patch(EVERY_OPERATION)}),
            Arc::new(gate),
        )
        .await;
    assert_eq!(
        ok(&r),
        "The patch was applied:\nA docs/notes.md\nM src/main.rs\nD old.txt\nR src/lib.rs -> src/math.rs"
    );
    assert_eq!(
        env.bytes("docs/notes.md"),
        b"# Notes\n\nAdded by a patch.\n"
    );
    assert_eq!(
        env.bytes("src/main.rs"),
        MAIN.replace("let b = 2", "let b = 3").as_bytes()
    );
    assert!(!env.path("old.txt").exists());
    assert!(!env.path("src/lib.rs").exists());
    assert_eq!(
        env.bytes("src/math.rs"),
        LIB.replace("a - b", "a.wrapping_sub(b)").as_bytes()
    );
    let preview = seen.lock().unwrap().clone().expect("a preview");
    for header in [
        "--- /dev/null\n+++ b/docs/notes.md\n",
        "--- a/src/main.rs\n+++ b/src/main.rs\n",
        "--- a/old.txt\n+++ /dev/null\n",
        "--- a/src/lib.rs\n+++ b/src/math.rs\n",
    ] {
        assert!(preview.contains(header), "{header} in:\n{preview}");
    }
    assert!(
        preview.contains("-    let b = 2;\n+    let b = 3;"),
        "{preview}"
    );
    // The tool's own writes are stamped: the next patch needs no read.
    let r = apply(
        &env,
        "*** Update File: src/math.rs\n@@\n-    a + b\n+    a.wrapping_add(b)\n",
    )
    .await;
    ok(&r);
}

#[tokio::test]
async fn a_hunk_that_is_not_found_changes_no_file_and_shows_the_closest_lines() {
    let env = project().await;
    let r = apply(
        &env,
        concat!(
            "*** Update File: src/main.rs\n",
            "@@\n",
            "-    let a = 1;\n",
            "+    let a = 10;\n",
            "*** Update File: src/lib.rs\n",
            "@@\n",
            "-    a + b\n",
            "+    b + a\n",
            "@@\n",
            "-    a - c\n",
            "+    c - a\n",
        ),
    )
    .await;
    let text = refused(&r, 4);
    assert!(
        text.starts_with("Update File src/lib.rs, hunk 2: context not found in the file."),
        "{text}"
    );
    assert!(text.contains("\nContext:\n    a - c\n"), "{text}");
    assert!(text.contains("The closest text is at lines 6–6:"), "{text}");
    unchanged(&env);
}

#[tokio::test]
async fn a_hunk_that_matches_two_places_is_refused() {
    let env = Env::new();
    env.put("a.py", "def f():\n    pass\n\ndef g():\n    pass\n");
    env.read("a.py").await;
    let r = apply(
        &env,
        "*** Update File: a.py\n@@\n-    pass\n+    return 1\n",
    )
    .await;
    let text = refused(&r, 5);
    assert!(
        text.starts_with("Update File a.py, hunk 1: the hunk's lines match 2 places."),
        "{text}"
    );
    // An @@ line picks the place.
    let r = apply(
        &env,
        "*** Update File: a.py\n@@ def g():\n-    pass\n+    return 1\n",
    )
    .await;
    ok(&r);
    assert_eq!(
        env.bytes("a.py"),
        b"def f():\n    pass\n\ndef g():\n    return 1\n"
    );
}

#[tokio::test]
async fn tolerant_context_lands_and_keeps_the_files_own_lines() {
    let env = Env::new();
    // Tabs and trailing spaces in the file, a CRLF file and a BOM.
    env.put(
        "m.go",
        b"\xEF\xBB\xBFfunc f() {\r\n\tx := 1   \r\n\treturn x\r\n}\r\n",
    );
    env.read("m.go").await;
    let r = apply(
        &env,
        "*** Update File: m.go\n@@\n     x := 1\n-    return x\n+    return x + 1\n",
    )
    .await;
    ok(&r);
    assert_eq!(
        env.bytes("m.go"),
        b"\xEF\xBB\xBFfunc f() {\r\n\tx := 1   \r\n\treturn x + 1\r\n}\r\n"
    );
}

#[tokio::test]
async fn files_not_read_or_changed_since_are_refused_with_codes_2_and_3() {
    let env = Env::new();
    env.put("a.txt", "a\n");
    env.put("b.txt", "b\n");
    let r = apply(&env, "*** Delete File: a.txt\n").await;
    assert_eq!(
        refused(&r, 2),
        "Delete File a.txt: File has not been read yet. Read it first before writing to it."
    );
    let r = apply(&env, "*** Update File: a.txt\n*** Move to: c.txt\n").await;
    assert!(refused(&r, 2).starts_with("Update File a.txt: File has not been read yet."));
    env.read("a.txt").await;
    env.read("b.txt").await;
    env.put("b.txt", "b, changed by someone else\n");
    let r = apply(
        &env,
        "*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: b.txt\n@@\n-b\n+B\n",
    )
    .await;
    assert!(
        refused(&r, 3).starts_with("Update File b.txt: File has been modified since read"),
        "{}",
        r.text()
    );
    assert_eq!(env.bytes("a.txt"), b"a\n");
    assert!(!env.path("c.txt").exists());
}

#[tokio::test]
async fn an_added_file_must_not_exist_nor_a_move_target() {
    let env = project().await;
    let r = apply(&env, "*** Add File: src/lib.rs\n+overwritten\n").await;
    assert!(
        refused(&r, 7).starts_with("Add File src/lib.rs: the file exists already."),
        "{}",
        r.text()
    );
    let r = apply(&env, "*** Update File: old.txt\n*** Move to: src/main.rs\n").await;
    assert!(
        refused(&r, 7).contains("cannot move it to src/main.rs"),
        "{}",
        r.text()
    );
    unchanged(&env);
}

#[tokio::test]
async fn a_file_named_twice_is_refused() {
    let env = project().await;
    let r = apply(
        &env,
        "*** Update File: src/main.rs\n@@\n-    let a = 1;\n+    let a = 2;\n*** Delete File: ./src/main.rs\n",
    )
    .await;
    assert!(
        refused(&r, 1).contains("names src/main.rs twice"),
        "{}",
        r.text()
    );
    unchanged(&env);
}

#[tokio::test]
async fn a_patch_that_does_not_parse_is_code_10_with_its_line() {
    let env = project().await;
    let r = env
        .call(
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Update File: src/main.rs\n@@\n let a = 1;\n~oops\n*** End Patch"}),
        )
        .await;
    let text = refused(&r, 10);
    assert!(text.starts_with("Invalid patch, line 5: "), "{text}");
    unchanged(&env);
}

#[cfg(unix)]
#[tokio::test]
async fn paths_outside_the_workspace_are_refused_and_nothing_is_written() {
    let env = project().await;
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.txt");
    fs::write(&secret, "keep me\n").unwrap();
    std::os::unix::fs::symlink(&secret, env.path("escape.txt")).unwrap();
    let given = outside.path().join("new.txt");
    for body in [
        "*** Update File: escape.txt\n@@\n-keep me\n+lost\n".to_owned(),
        "*** Add File: ../evil.txt\n+x\n".to_owned(),
        format!("*** Add File: {}\n+x\n", given.display()),
        "*** Update File: src/main.rs\n*** Move to: ../moved.rs\n".to_owned(),
    ] {
        // A good change first: it must not land either.
        let body = format!("*** Add File: fine.txt\n+fine\n{body}");
        let r = apply(&env, &body).await;
        let text = refused(&r, 1);
        assert!(text.contains("is outside the workspace"), "{text}");
    }
    assert_eq!(fs::read(&secret).unwrap(), b"keep me\n");
    assert!(!given.exists());
    assert!(!env.path("fine.txt").exists());
    assert!(!env.root().parent().unwrap().join("evil.txt").exists());
    unchanged(&env);
}

#[tokio::test]
async fn a_protected_path_anywhere_in_the_patch_makes_the_whole_call_ask() {
    let env = project().await;
    env.put(".env", "KEY=1\n");
    env.read(".env").await;
    let engine = ApprovalEngine::new(env.root()).with_mode(Mode::AcceptEdits);
    let body = "*** Update File: src/main.rs\n@@\n-    let a = 1;\n+    let a = 2;\n*** Update File: .env\n@@\n-KEY=1\n+KEY=2\n";
    let r = env
        .call_gated(
            "apply_patch",
            json!({"patch": patch(body)}),
            Arc::new(engine.clone()),
        )
        .await;
    assert_eq!(r.outcome, Outcome::Denied, "{}", r.text());
    assert!(
        r.text().contains("\".env\" is a protected path"),
        "{}",
        r.text()
    );
    assert_eq!(env.bytes(".env"), b"KEY=1\n");
    unchanged(&env);
    // Without the protected path, accept-edits lets it through.
    let body = "*** Update File: src/main.rs\n@@\n-    let a = 1;\n+    let a = 2;\n";
    let r = env
        .call_gated(
            "apply_patch",
            json!({"patch": patch(body)}),
            Arc::new(engine),
        )
        .await;
    ok(&r);
}

#[tokio::test]
async fn a_change_while_the_gate_waits_writes_no_file() {
    let env = project().await;
    let gate = env.gate_that_writes("src/lib.rs", "rewritten by someone else\n");
    let body = "*** Update File: src/main.rs\n@@\n-    let a = 1;\n+    let a = 2;\n*** Update File: src/lib.rs\n@@\n-    a + b\n+    b + a\n";
    let r = env
        .call_gated("apply_patch", json!({"patch": patch(body)}), gate)
        .await;
    assert_eq!(r.outcome, Outcome::Failed, "{}", r.text());
    assert!(
        r.text()
            .starts_with("Update File src/lib.rs: File has been unexpectedly modified"),
        "{}",
        r.text()
    );
    assert_eq!(env.bytes("src/main.rs"), MAIN.as_bytes());
    assert_eq!(env.bytes("src/lib.rs"), b"rewritten by someone else\n");
}

#[tokio::test]
async fn a_file_added_by_someone_while_the_gate_waits_is_not_overwritten() {
    let env = project().await;
    let gate = env.gate_that_writes("new.txt", "theirs\n");
    let body = "*** Update File: src/main.rs\n@@\n-    let a = 1;\n+    let a = 2;\n*** Add File: new.txt\n+ours\n";
    let r = env
        .call_gated("apply_patch", json!({"patch": patch(body)}), gate)
        .await;
    assert_eq!(r.outcome, Outcome::Failed, "{}", r.text());
    assert_eq!(env.bytes("new.txt"), b"theirs\n");
    assert_eq!(env.bytes("src/main.rs"), MAIN.as_bytes());
}
