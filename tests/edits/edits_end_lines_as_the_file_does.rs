//! Issue 25 item 11 (b) and (f): text the model gives is written with the
//! file's own line endings, whichever ending the model used: a CRLF
//! new_string into an LF file, an LF one into a CRLF file, either into a
//! file of old Mac CR endings; and apply_patch keeps a line's CR ending.

use serde_json::json;

use crate::support::files::{Env, ok};

#[tokio::test]
async fn a_crlf_new_string_into_an_lf_file_is_written_with_lf() {
    let env = Env::new();
    env.put("a.txt", "one\ntwo\nthree\n");
    env.read("a.txt").await;
    ok(&env.edit("a.txt", "two\n", "2\r\n2b\r\n").await);
    assert_eq!(env.bytes("a.txt"), b"one\n2\n2b\nthree\n");
    // An old_string quoted with CRLF finds the LF lines.
    ok(&env.edit("a.txt", "2\r\n2b\r\n", "two\n").await);
    assert_eq!(env.bytes("a.txt"), b"one\ntwo\nthree\n");
    // multi_edit, and write is left alone (it writes what it is given).
    let r = env
        .call(
            "multi_edit",
            json!({"file_path": "a.txt", "edits": [{"old_string": "one", "new_string": "1\r\n1b"}]}),
        )
        .await;
    ok(&r);
    assert_eq!(env.bytes("a.txt"), b"1\n1b\ntwo\nthree\n");
}

#[tokio::test]
async fn an_lf_new_string_into_a_crlf_file_is_written_with_crlf() {
    let env = Env::new();
    env.put("a.txt", "one\r\ntwo\r\n");
    env.read("a.txt").await;
    ok(&env.edit("a.txt", "one\n", "1\n1b\r\n").await);
    assert_eq!(env.bytes("a.txt"), b"1\r\n1b\r\ntwo\r\n");
}

#[tokio::test]
async fn a_file_of_cr_endings_keeps_them() {
    let env = Env::new();
    env.put("mac.txt", "one\rtwo\rthree\r");
    env.read("mac.txt").await;
    ok(&env.edit("mac.txt", "two\n", "2\n2b\r\n").await);
    assert_eq!(env.bytes("mac.txt"), b"one\r2\r2b\rthree\r");
    let patch = "*** Begin Patch\n*** Update File: mac.txt\n@@\n one\n-2\n+TWO\n*** End Patch";
    ok(&env.call("apply_patch", json!({"patch": patch})).await);
    assert_eq!(env.bytes("mac.txt"), b"one\rTWO\r2b\rthree\r");
}

#[tokio::test]
async fn apply_patch_keeps_a_lines_cr_ending_in_a_file_of_mixed_endings() {
    let env = Env::new();
    env.put("mixed.txt", "a\nb\r\nc\n");
    env.read("mixed.txt").await;
    let patch =
        "*** Begin Patch\n*** Update File: mixed.txt\n@@\n a\n-b\n+B\n+B2\n c\n*** End Patch";
    ok(&env.call("apply_patch", json!({"patch": patch})).await);
    assert_eq!(env.bytes("mixed.txt"), b"a\nB\r\nB2\r\nc\n");
    // An LF file stays LF, a CRLF file CRLF.
    env.put("lf.txt", "a\nb\n");
    env.put("crlf.txt", "a\r\nb\r\n");
    env.read("lf.txt").await;
    env.read("crlf.txt").await;
    let patch = "*** Begin Patch\n*** Update File: lf.txt\n@@\n-b\n+B\n*** Update File: crlf.txt\n@@\n-b\n+B\n*** End Patch";
    ok(&env.call("apply_patch", json!({"patch": patch})).await);
    assert_eq!(env.bytes("lf.txt"), b"a\nB\n");
    assert_eq!(env.bytes("crlf.txt"), b"a\r\nB\r\n");
}
