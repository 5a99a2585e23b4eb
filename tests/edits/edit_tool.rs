//! The edit tool through the whole pipeline, with the real read tool
//! stamping files: every code and string of docs/tools.md, the execute-time
//! recheck, line endings and encodings, and what the filesystem keeps.

use std::fs;
use std::sync::{Arc, Mutex};

use agentcore::GateDecision;
use agentcore::TypedTool;
use agentcore::fs::read_state::Freshness;
use agentcore::fs::workspace::Workspace;
use agentcore::message::ToolCall;
use agentcore::scheduler::{Scheduler, SchedulerConfig};
use agentcore::stages::gate::gate_fn;
use agentcore::tools::edit::EditTool;
use agentcore::turn::Turn;
use agentcore::{EventSink, Outcome, Pipeline};
use serde_json::json;

use crate::support::files::{Env, numbered, ok_no_error_code, refused_saying, utf16le};

const NOT_READ: &str = "File has not been read yet. Read it first before writing to it.";
const MODIFIED: &str = "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.";
const UNEXPECTED: &str =
    "File has been unexpectedly modified. Read it again before attempting to write it.";
const NOT_TEXT: &str = "File is not valid text (UTF-8, UTF-16, or a legacy encoding such as windows-1252 or Shift_JIS); refusing to edit it so that nothing is corrupted.";

#[tokio::test]
async fn edit_after_read_replaces_and_shows_the_changed_lines_with_four_lines_of_context() {
    let env = Env::new();
    env.put("src/lib.rs", numbered(1..=20));
    env.read("src/lib.rs").await;
    let r = env.edit("src/lib.rs", "line 10\n", "ten\nTEN\n").await;
    assert_eq!(
        ok_no_error_code(&r),
        "The file src/lib.rs has been updated successfully.\n     6\tline 6\n     7\tline 7\n     8\tline 8\n     9\tline 9\n    10\tten\n    11\tTEN\n    12\tline 11\n    13\tline 12\n    14\tline 13\n    15\tline 14"
    );
    assert_eq!(
        env.bytes("src/lib.rs"),
        numbered(1..=20)
            .replace("line 10\n", "ten\nTEN\n")
            .into_bytes()
    );
}

#[tokio::test]
async fn edit_without_a_read_is_code_2_and_changes_nothing() {
    let env = Env::new();
    env.put("a.txt", "hello\n");
    refused_saying(&env.edit("a.txt", "hello", "bye").await, 2, NOT_READ);
    assert_eq!(env.bytes("a.txt"), b"hello\n");
}

#[tokio::test]
async fn a_partial_read_is_enough_for_edit() {
    let env = Env::new();
    env.put("a.txt", numbered(1..=50));
    let r = env
        .call(
            "read",
            json!({"file_path": "a.txt", "offset": 10, "limit": 5}),
        )
        .await;
    ok_no_error_code(&r);
    assert_eq!(
        env.state
            .freshness(&env.path("a.txt").canonicalize().unwrap())
            .unwrap(),
        Freshness::Partial
    );
    ok_no_error_code(&env.edit("a.txt", "line 12\n", "twelve\n").await);
    assert!(
        String::from_utf8(env.bytes("a.txt"))
            .unwrap()
            .contains("twelve\nline 13")
    );
}

#[tokio::test]
async fn an_external_change_after_the_read_is_code_3() {
    let env = Env::new();
    env.put("a.txt", "one\n");
    env.read("a.txt").await;
    env.put("a.txt", "two\n");
    refused_saying(&env.edit("a.txt", "two", "three").await, 3, MODIFIED);
    assert_eq!(env.bytes("a.txt"), b"two\n");
}

#[tokio::test]
async fn a_touched_file_with_the_same_bytes_is_still_fresh() {
    let env = Env::new();
    env.put("a.txt", "same\n");
    env.read("a.txt").await;
    let f = fs::File::options()
        .write(true)
        .open(env.path("a.txt"))
        .unwrap();
    f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(10))
        .unwrap();
    ok_no_error_code(&env.edit("a.txt", "same", "other").await);
}

#[tokio::test]
async fn old_string_not_found_is_code_4_with_the_string() {
    let env = Env::new();
    env.put("a.txt", "alpha\nbeta\n");
    env.read("a.txt").await;
    refused_saying(
        &env.edit("a.txt", "gamma\ndelta", "x").await,
        4,
        "String to replace not found in file.\nString: gamma\ndelta",
    );
}

#[tokio::test]
async fn several_matches_without_replace_all_is_code_5_and_replace_all_replaces_them() {
    let env = Env::new();
    env.put("a.txt", "x = 1\ny = x\nz = x\n");
    env.read("a.txt").await;
    refused_saying(
        &env.edit("a.txt", "x", "w").await,
        5,
        "Found 3 matches of the string to replace, but replace_all is false. To replace all occurrences, set replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the instance.",
    );
    let r = env
        .call(
            "edit",
            json!({"file_path": "a.txt", "old_string": "x", "new_string": "w", "replace_all": true}),
        )
        .await;
    ok_no_error_code(&r);
    assert_eq!(env.bytes("a.txt"), b"w = 1\ny = w\nz = w\n");
}

#[tokio::test]
async fn identical_strings_are_code_6() {
    let env = Env::new();
    env.put("a.txt", "a\n");
    env.read("a.txt").await;
    refused_saying(
        &env.edit("a.txt", "a", "a").await,
        6,
        "No changes to make: old_string and new_string are exactly the same.",
    );
}

#[tokio::test]
async fn empty_old_string_on_an_existing_file_is_code_7() {
    let env = Env::new();
    env.put("a.txt", "content\n");
    env.read("a.txt").await;
    refused_saying(
        &env.edit("a.txt", "", "new").await,
        7,
        "Cannot create new file - file already exists.",
    );
    assert_eq!(env.bytes("a.txt"), b"content\n");
}

#[tokio::test]
async fn invalid_utf8_is_code_8_and_left_untouched() {
    let env = Env::new();
    // Not UTF-8, and a control character no text encoding explains.
    let bytes = b"valid line\n\xFF\xFEbroken \xC3\x01(\n".to_vec();
    env.put("bad.txt", &bytes);
    env.read("bad.txt").await;
    refused_saying(&env.edit("bad.txt", "valid", "x").await, 8, NOT_TEXT);
    assert_eq!(env.bytes("bad.txt"), bytes);
    // Without the control character it may be text in a legacy encoding,
    // but three non-ASCII bytes do not tell which: code 13, untouched.
    let maybe = b"valid line\n\xFF\xFEbroken \xC3(\n".to_vec();
    env.put("maybe.txt", &maybe);
    env.read("maybe.txt").await;
    let r = env.edit("maybe.txt", "valid", "x").await;
    assert_eq!(r.error_code, Some(13), "{}", r.text());
    assert!(
        r.text()
            .starts_with("File is not UTF-8 and its encoding is not known for sure"),
        "{}",
        r.text()
    );
    assert_eq!(env.bytes("maybe.txt"), maybe);
    // UTF-16 with a lone surrogate is not text either.
    let bad16 = [0xFF, 0xFE, b'a', 0, 0x00, 0xD8, b'b', 0];
    env.put("bad16.txt", bad16);
    refused_saying(&env.edit("bad16.txt", "a", "x").await, 8, NOT_TEXT);
    assert_eq!(env.bytes("bad16.txt"), bad16);
}

#[tokio::test]
async fn empty_old_string_creates_a_missing_file_without_a_read() {
    let env = Env::new();
    let r = env.edit("new/dir/f.txt", "", "fresh\ncontent\n").await;
    assert_eq!(
        ok_no_error_code(&r),
        "The file new/dir/f.txt has been updated successfully.\n     1\tfresh\n     2\tcontent"
    );
    assert_eq!(env.bytes("new/dir/f.txt"), b"fresh\ncontent\n");
}

#[tokio::test]
async fn editing_a_missing_file_with_an_old_string_is_refused() {
    let env = Env::new();
    let r = env.edit("nope.txt", "a", "b").await;
    assert_eq!(r.outcome, Outcome::Failed);
    assert_eq!(r.error_code, Some(1));
    assert!(r.text().contains("does not exist"), "{}", r.text());
}

#[tokio::test]
async fn read_edit_edit_needs_no_second_read() {
    let env = Env::new();
    env.put("a.txt", "one two three\n");
    env.read("a.txt").await;
    ok_no_error_code(&env.edit("a.txt", "one", "1").await);
    ok_no_error_code(&env.edit("a.txt", "two", "2").await);
    ok_no_error_code(&env.edit("a.txt", "three", "3").await);
    assert_eq!(env.bytes("a.txt"), b"1 2 3\n");
    // But an outside change after the tool's own write is still caught.
    env.put("a.txt", "1 2 3 4\n");
    refused_saying(&env.edit("a.txt", "4", "four").await, 3, MODIFIED);
}

#[tokio::test]
async fn a_change_while_the_gate_waits_gives_the_execute_time_message() {
    let env = Env::new();
    env.put("a.txt", "original\n");
    env.read("a.txt").await;
    let gate = env.gate_that_writes("a.txt", "rewritten by someone else\n");
    let r = env
        .call_gated(
            "edit",
            json!({"file_path": "a.txt", "old_string": "original", "new_string": "mine"}),
            gate,
        )
        .await;
    assert_eq!(r.outcome, Outcome::Failed);
    assert_eq!(r.error_code, None);
    assert_eq!(r.text(), UNEXPECTED);
    assert_eq!(env.bytes("a.txt"), b"rewritten by someone else\n");
}

#[tokio::test]
async fn the_preview_is_the_unified_diff_handed_to_the_gate() {
    let env = Env::new();
    env.put("src/m.rs", numbered(1..=10));
    env.read("src/m.rs").await;
    let seen = Arc::new(Mutex::new(None));
    let s = seen.clone();
    let gate = gate_fn(move |req| {
        *s.lock().unwrap() = req.preview.clone();
        async { Ok(GateDecision::Allow) }
    });
    let r = env
        .call_gated(
            "edit",
            json!({"file_path": "src/m.rs", "old_string": "line 5\n", "new_string": "five\n"}),
            Arc::new(gate),
        )
        .await;
    ok_no_error_code(&r);
    assert_eq!(
        seen.lock().unwrap().as_deref(),
        Some(
            "--- a/src/m.rs\n+++ b/src/m.rs\n@@ -2,7 +2,7 @@\n line 2\n line 3\n line 4\n-line 5\n+five\n line 6\n line 7\n line 8"
        )
    );
}

#[tokio::test]
async fn crlf_files_are_matched_with_lf_and_written_back_crlf_byte_for_byte() {
    let env = Env::new();
    let before = b"first\r\nsecond\r\nthird\r\n";
    env.put("w.txt", before);
    env.read("w.txt").await;
    // The model quotes lines as read shows them: without CR.
    let r = env.edit("w.txt", "first\nsecond", "1st\n2nd\n2.5").await;
    assert_eq!(
        ok_no_error_code(&r),
        "The file w.txt has been updated successfully.\n     1\t1st\n     2\t2nd\n     3\t2.5\n     4\tthird"
    );
    assert_eq!(env.bytes("w.txt"), b"1st\r\n2nd\r\n2.5\r\nthird\r\n");
}

#[tokio::test]
async fn a_utf8_bom_is_kept() {
    let env = Env::new();
    env.put("bom.txt", b"\xEF\xBB\xBFname = 1\n");
    env.read("bom.txt").await;
    ok_no_error_code(&env.edit("bom.txt", "1", "2").await);
    assert_eq!(env.bytes("bom.txt"), b"\xEF\xBB\xBFname = 2\n");
}

fn utf16be(s: &str) -> Vec<u8> {
    let mut out = vec![0xFE, 0xFF];
    for u in s.encode_utf16() {
        out.extend_from_slice(&u.to_be_bytes());
    }
    out
}

#[tokio::test]
async fn utf16_files_are_edited_and_written_back_as_utf16() {
    let env = Env::new();
    env.put("le.txt", utf16le("Grüße\r\nWelt 😀\r\n"));
    env.read("le.txt").await;
    ok_no_error_code(&env.edit("le.txt", "Welt", "world").await);
    assert_eq!(env.bytes("le.txt"), utf16le("Grüße\r\nworld 😀\r\n"));

    env.put("be.txt", utf16be("a\nb\n"));
    env.read("be.txt").await;
    ok_no_error_code(&env.edit("be.txt", "b", "ß").await);
    assert_eq!(env.bytes("be.txt"), utf16be("a\nß\n"));
}

#[cfg(unix)]
#[tokio::test]
async fn mode_is_kept() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    env.put("run.sh", "#!/bin/sh\necho hi\n");
    fs::set_permissions(env.path("run.sh"), fs::Permissions::from_mode(0o754)).unwrap();
    env.read("run.sh").await;
    ok_no_error_code(&env.edit("run.sh", "hi", "there").await);
    let mode = fs::metadata(env.path("run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o7777, 0o754);
    assert_eq!(env.bytes("run.sh"), b"#!/bin/sh\necho there\n");
}

#[cfg(unix)]
#[tokio::test]
async fn hard_links_survive_an_edit() {
    use std::os::unix::fs::MetadataExt;
    let env = Env::new();
    env.put("a.txt", "shared text\n");
    fs::hard_link(env.path("a.txt"), env.path("b.txt")).unwrap();
    let inode = fs::metadata(env.path("a.txt")).unwrap().ino();
    env.read("a.txt").await;
    ok_no_error_code(&env.edit("a.txt", "shared", "common").await);
    assert_eq!(env.bytes("b.txt"), b"common text\n");
    assert_eq!(fs::metadata(env.path("a.txt")).unwrap().ino(), inode);
    assert_eq!(fs::metadata(env.path("a.txt")).unwrap().nlink(), 2);
}

#[cfg(unix)]
#[tokio::test]
async fn a_single_link_file_is_replaced_atomically_with_a_new_inode() {
    use std::os::unix::fs::MetadataExt;
    let env = Env::new();
    env.put("a.txt", "x\n");
    let inode = fs::metadata(env.path("a.txt")).unwrap().ino();
    env.read("a.txt").await;
    ok_no_error_code(&env.edit("a.txt", "x", "y").await);
    assert_ne!(fs::metadata(env.path("a.txt")).unwrap().ino(), inode);
    // No temporary file is left behind.
    let names: Vec<_> = fs::read_dir(env.root())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("a.txt")]);
}

#[cfg(unix)]
#[tokio::test]
async fn a_symlink_inside_the_workspace_is_written_through() {
    let env = Env::new();
    env.put("real/target.txt", "value = 1\n");
    std::os::unix::fs::symlink("real/target.txt", env.path("link.txt")).unwrap();
    env.read("link.txt").await;
    ok_no_error_code(&env.edit("link.txt", "1", "2").await);
    assert_eq!(env.bytes("real/target.txt"), b"value = 2\n");
    assert!(
        fs::symlink_metadata(env.path("link.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[cfg(unix)]
#[tokio::test]
async fn a_symlink_pointing_out_of_the_workspace_is_refused() {
    let env = Env::new();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.txt");
    fs::write(&secret, "keep me\n").unwrap();
    std::os::unix::fs::symlink(&secret, env.path("escape.txt")).unwrap();
    let r = env.edit("escape.txt", "keep", "lose").await;
    assert_eq!(r.outcome, Outcome::Failed);
    assert_eq!(r.error_code, Some(1));
    assert_eq!(r.text(), "path \"escape.txt\" is outside the workspace");
    assert_eq!(fs::read(&secret).unwrap(), b"keep me\n");
}

#[tokio::test]
async fn the_tool_describes_itself() {
    let env = Env::new();
    let tool = EditTool::new(Workspace::new(env.root()).unwrap(), env.state.clone()).into_dyn();
    let args = json!({"file_path": "src/main.rs", "old_string": "a", "new_string": "b"});
    assert_eq!(tool.label(), Some("Edit File"));
    assert!(!tool.read_only(&args));
    assert_eq!(tool.concurrency_safe(&args), Some(false));
    assert_eq!(
        tool.interrupt_behavior(&args),
        agentcore::InterruptBehavior::Block
    );
    assert_eq!(tool.activity(&args).as_deref(), Some("Editing src/main.rs"));
    assert_eq!(tool.schema()["additionalProperties"], json!(false));
}

#[tokio::test]
async fn read_then_edit_of_the_same_file_in_one_turn_through_the_scheduler() {
    let env = Env::new();
    env.put("turn.txt", "before\n");
    let registry = env.registry();
    let pipeline = Pipeline::builder().registry(registry.clone()).build();
    let scheduler = Scheduler::new(pipeline.service(), registry, SchedulerConfig::default());
    let result = Turn::new(&scheduler, EventSink::noop())
        .run(vec![
            ToolCall::new("r", "read", json!({"file_path": "turn.txt"})),
            ToolCall::new(
                "e",
                "edit",
                json!({"file_path": "turn.txt", "old_string": "before", "new_string": "after"}),
            ),
        ])
        .await
        .unwrap();
    assert_eq!(result.results.len(), 2);
    assert_eq!(result.results[0].outcome, Outcome::Success);
    ok_no_error_code(&result.results[1]);
    assert_eq!(env.bytes("turn.txt"), b"after\n");
}
