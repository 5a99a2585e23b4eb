//! The write tool through the whole pipeline, with the real read tool
//! stamping files: codes 2 and 3, the execute-time recheck, the preview,
//! what the filesystem keeps, and a writer killed mid-write.

use std::fs;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agentcore::GateDecision;
use agentcore::TypedTool;
use agentcore::fs::read_state::FileReadState;
use agentcore::fs::workspace::Workspace;
use agentcore::stages::gate::gate_fn;
use agentcore::tools::write::WriteTool;
use agentcore::{Call, Outcome, Pipeline, ToolRegistry};
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::support::files::{Env, ok_no_error_code, refused_saying};
use crate::support::test_name;

const NOT_READ: &str = "File has not been read yet. Read it first before writing to it.";
const MODIFIED: &str = "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.";
const UNEXPECTED: &str =
    "File has been unexpectedly modified. Read it again before attempting to write it.";

#[tokio::test]
async fn a_new_file_needs_no_read_and_missing_directories_are_created() {
    let env = Env::new();
    let r = env.write("deep/er/new.txt", "hello\r\nworld").await;
    assert_eq!(
        ok_no_error_code(&r),
        "File created successfully at: deep/er/new.txt"
    );
    // Exactly as given: no line-ending or trailing-newline changes.
    assert_eq!(env.bytes("deep/er/new.txt"), b"hello\r\nworld");
}

#[tokio::test]
async fn overwriting_an_unread_file_is_code_2() {
    let env = Env::new();
    env.put("a.txt", "old\n");
    refused_saying(&env.write("a.txt", "new\n").await, 2, NOT_READ);
    assert_eq!(env.bytes("a.txt"), b"old\n");
}

#[tokio::test]
async fn a_partial_read_is_not_enough_to_overwrite() {
    let env = Env::new();
    env.put("a.txt", "1\n2\n3\n");
    let r = env
        .call("read", json!({"file_path": "a.txt", "limit": 1}))
        .await;
    ok_no_error_code(&r);
    // Code 2 with its own text (issue 13, item 16), not the never-read one.
    refused_saying(
        &env.write("a.txt", "new\n").await,
        2,
        "File has only been read in part (lines 1\u{2013}1 of 3). Read all of it before overwriting it, or change it with edit.",
    );
    // ...while edit accepts it.
    let r = env
        .call(
            "edit",
            json!({"file_path": "a.txt", "old_string": "1", "new_string": "one"}),
        )
        .await;
    ok_no_error_code(&r);
}

#[tokio::test]
async fn a_file_changed_since_the_read_is_code_3() {
    let env = Env::new();
    env.put("a.txt", "old\n");
    env.read("a.txt").await;
    env.put("a.txt", "changed by a linter\n");
    refused_saying(&env.write("a.txt", "new\n").await, 3, MODIFIED);
    assert_eq!(env.bytes("a.txt"), b"changed by a linter\n");
}

#[tokio::test]
async fn overwriting_after_a_full_read_and_write_after_write() {
    let env = Env::new();
    env.put("a.txt", "old\n");
    env.read("a.txt").await;
    assert_eq!(
        ok_no_error_code(&env.write("a.txt", "new\n").await),
        "The file a.txt has been updated successfully."
    );
    assert_eq!(env.bytes("a.txt"), b"new\n");
    // The tool's own write left a full stamp.
    ok_no_error_code(&env.write("a.txt", "newer\n").await);
    assert_eq!(env.bytes("a.txt"), b"newer\n");
}

#[tokio::test]
async fn a_change_while_the_gate_waits_gives_the_execute_time_message() {
    let env = Env::new();
    env.put("a.txt", "original\n");
    env.read("a.txt").await;
    let gate = env.gate_that_writes("a.txt", "edited in the editor meanwhile\n");
    let r = env
        .call_with(
            "write",
            json!({"file_path": "a.txt", "content": "mine\n"}),
            Some(gate),
        )
        .await;
    assert_eq!(r.outcome, Outcome::Failed);
    assert_eq!(r.text(), UNEXPECTED);
    assert_eq!(env.bytes("a.txt"), b"edited in the editor meanwhile\n");
}

#[tokio::test]
async fn a_file_created_while_the_gate_waits_is_not_overwritten() {
    let env = Env::new();
    let gate = env.gate_that_writes("late.txt", "someone else's\n");
    let r = env
        .call_with(
            "write",
            json!({"file_path": "late.txt", "content": "mine\n"}),
            Some(gate),
        )
        .await;
    assert_eq!(r.text(), UNEXPECTED);
    assert_eq!(env.bytes("late.txt"), b"someone else's\n");
}

async fn preview_of(env: &Env, args: Value) -> Option<String> {
    let seen = Arc::new(Mutex::new(None));
    let s = seen.clone();
    let gate = gate_fn(move |req| {
        *s.lock().unwrap() = req.preview.clone();
        async { Ok(GateDecision::Deny(None)) }
    });
    let r = env.call_with("write", args, Some(Arc::new(gate))).await;
    assert_eq!(r.outcome, Outcome::Denied);
    seen.lock().unwrap().clone()
}

#[tokio::test]
async fn the_preview_is_all_added_for_a_new_file_and_a_diff_for_an_old_one() {
    let env = Env::new();
    let p = preview_of(&env, json!({"file_path": "n.txt", "content": "a\nb\n"})).await;
    assert_eq!(
        p.as_deref(),
        Some("--- a/n.txt\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+a\n+b")
    );
    env.put("o.txt", "a\nb\nc\n");
    env.read("o.txt").await;
    let p = preview_of(&env, json!({"file_path": "o.txt", "content": "a\nB\nc"})).await;
    assert_eq!(
        p.as_deref(),
        Some(
            "--- a/o.txt\n+++ b/o.txt\n@@ -1,3 +1,3 @@\n a\n-b\n-c\n+B\n+c\n\\ No newline at end of file"
        )
    );
}

#[cfg(unix)]
#[tokio::test]
async fn mode_is_kept_and_hard_links_survive() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let env = Env::new();
    env.put("tool.sh", "#!/bin/sh\n");
    fs::set_permissions(env.path("tool.sh"), fs::Permissions::from_mode(0o700)).unwrap();
    env.read("tool.sh").await;
    ok_no_error_code(&env.write("tool.sh", "#!/bin/sh\nexit 0\n").await);
    let meta = fs::metadata(env.path("tool.sh")).unwrap();
    assert_eq!(meta.permissions().mode() & 0o7777, 0o700);

    env.put("a.txt", "linked\n");
    fs::hard_link(env.path("a.txt"), env.path("b.txt")).unwrap();
    env.read("a.txt").await;
    ok_no_error_code(&env.write("a.txt", "both see this\n").await);
    assert_eq!(env.bytes("b.txt"), b"both see this\n");
    assert_eq!(fs::metadata(env.path("b.txt")).unwrap().nlink(), 2);
}

#[cfg(unix)]
#[tokio::test]
async fn symlinks_are_written_through_inside_and_refused_outside() {
    let env = Env::new();
    env.put("real.txt", "in\n");
    std::os::unix::fs::symlink("real.txt", env.path("alias.txt")).unwrap();
    env.read("alias.txt").await;
    ok_no_error_code(&env.write("alias.txt", "through\n").await);
    assert_eq!(env.bytes("real.txt"), b"through\n");
    assert!(
        fs::symlink_metadata(env.path("alias.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );

    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("x.txt"), "outside\n").unwrap();
    std::os::unix::fs::symlink(outside.path().join("x.txt"), env.path("out.txt")).unwrap();
    std::os::unix::fs::symlink(outside.path(), env.path("outdir")).unwrap();
    for name in ["out.txt", "outdir/x.txt", "outdir/new.txt", "../escape.txt"] {
        let r = env.write(name, "pwned\n").await;
        assert_eq!(r.outcome, Outcome::Failed, "{name}");
        assert_eq!(r.error_code, Some(1), "{name}");
        assert_eq!(
            r.text(),
            format!("path \"{name}\" is outside the workspace")
        );
    }
    assert_eq!(
        fs::read(outside.path().join("x.txt")).unwrap(),
        b"outside\n"
    );
    assert!(!outside.path().join("new.txt").exists());
}

#[tokio::test]
async fn a_directory_is_refused() {
    let env = Env::new();
    fs::create_dir(env.path("d")).unwrap();
    let r = env.write("d", "x").await;
    assert_eq!(r.outcome, Outcome::Failed);
    assert_eq!(r.error_code, Some(1));
}

#[tokio::test]
async fn the_tool_describes_itself() {
    let env = Env::new();
    let tool = WriteTool::new(Workspace::new(env.root()).unwrap(), env.state.clone()).into_dyn();
    let args = json!({"file_path": "src/main.rs", "content": ""});
    assert_eq!(tool.label(), Some("Write File"));
    assert!(!tool.read_only(&args));
    assert_eq!(tool.concurrency_safe(&args), Some(false));
    assert_eq!(
        tool.interrupt_behavior(&args),
        agentcore::InterruptBehavior::Block
    );
    assert_eq!(tool.activity(&args).as_deref(), Some("Writing src/main.rs"));
}

// --- A writer killed with SIGKILL mid-write -------------------------------

const CHILD_DIR: &str = "AGENTCORE_TEST_WRITE_CHILD_DIR";
// Both under the pipeline's argument cap (`MAX_ARGS_BYTES`, 4 MiB): a
// larger `content` is refused before the tool runs, and the file would
// stay old whatever the write did.
const OLD_LEN: usize = 2 * 1024 * 1024;
const NEW_LEN: usize = 3 * 1024 * 1024;
const _: () = assert!(NEW_LEN + 1024 < agentcore::stages::coerce::MAX_ARGS_BYTES);

/// Not a test of its own: the body the SIGKILL test runs in a child
/// process (it does nothing when run normally).
#[tokio::test(flavor = "multi_thread")]
async fn sigkill_writer_child() {
    let Some(dir) = std::env::var_os(CHILD_DIR) else {
        return;
    };
    let ws = Workspace::new(&dir).unwrap();
    let state = FileReadState::new();
    // The file is one 24 MiB line, too long to read whole with the read
    // tool; record the full stamp a full read would leave.
    let path = ws.resolve("big.txt").unwrap();
    state
        .record_after_write(&path, &fs::read(&path).unwrap())
        .unwrap();
    let registry = ToolRegistry::new()
        .with(WriteTool::new(ws, state).into_dyn())
        .unwrap();
    let content = "n".repeat(NEW_LEN - 1) + "\n";
    let r = Pipeline::builder()
        .registry(Arc::new(registry))
        .build()
        .service()
        .oneshot(Call::new(
            "w",
            "write",
            json!({"file_path": "big.txt", "content": content}),
        ))
        .await
        .unwrap();
    assert_eq!(r.outcome, Outcome::Success, "{}", r.text());
}

#[cfg(unix)]
#[test]
fn a_writer_killed_mid_write_leaves_the_old_or_the_new_content() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("big.txt");
    let old = "o".repeat(OLD_LEN - 1) + "\n";
    let exe = std::env::current_exe().unwrap();
    let mut outcomes = Vec::new();
    for delay_ms in [0u64, 10, 50, 200, 1000, 5000] {
        fs::write(&target, &old).unwrap();
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                &test_name(module_path!(), "sigkill_writer_child"),
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_DIR, dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Wait for the temporary file to appear (the write has begun), or
        // for the child to finish.
        let start = Instant::now();
        loop {
            // An entry that cannot be read this time (a temporary file
            // coming and going) is looked at again on the next round.
            let writing = fs::read_dir(dir.path())
                .unwrap()
                .filter_map(Result::ok)
                .any(|e| e.file_name().to_string_lossy().ends_with(".tmp"));
            if writing || child.try_wait().unwrap().is_some() {
                break;
            }
            assert!(
                start.elapsed() < Duration::from_secs(120),
                "child never wrote"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        let now = fs::read(&target).unwrap();
        let is_old = now.len() == OLD_LEN && now[..OLD_LEN - 1].iter().all(|&b| b == b'o');
        let is_new = now.len() == NEW_LEN && now[..NEW_LEN - 1].iter().all(|&b| b == b'n');
        assert!(
            is_old || is_new,
            "after a kill at +{delay_ms} ms the file is neither old nor new ({} bytes)",
            now.len()
        );
        outcomes.push(if is_new { "new" } else { "old" });
        // Remove the stray temporary file a killed writer leaves.
        for e in fs::read_dir(dir.path()).unwrap().filter_map(Result::ok) {
            if e.file_name().to_string_lossy().ends_with(".tmp") {
                let _ = fs::remove_file(e.path());
            }
        }
    }
    eprintln!("outcomes: {outcomes:?}");
    // Five seconds is time enough to finish: the write did happen, so the
    // kills before it tested a real write.
    assert_eq!(outcomes.last(), Some(&"new"), "{outcomes:?}");
}
