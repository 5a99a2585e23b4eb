//! Every tool and a bash command that creates, modifies, deletes, renames
//! and chmods files, then a rewind to each checkpoint in turn: the tree is
//! what it was, byte for byte and mode for mode; a rewind is undone too;
//! a restored file must be read again before it is edited.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use agentcore::approval::Mode;
use agentcore::checkpoint::{CheckpointConfig, RewindMode, RewindTo};
use agentcore::message::ToolCall;
use agentcore::sandbox::SandboxPolicy;
use agentcore::session::{Session, SessionConfig};
use agentcore::{EventSink, Outcome};
use serde_json::{Value, json};

/// What a tree holds: per path, its kind, mode and bytes (or link target).
pub(crate) type Tree = BTreeMap<PathBuf, (char, u32, Vec<u8>)>;

/// The tree under `root`, every entry.
pub(crate) fn tree(root: &Path) -> Tree {
    let mut out = Tree::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let meta = fs::symlink_metadata(&path).unwrap();
            let rel = path.strip_prefix(root).unwrap().to_path_buf();
            let mode = meta.permissions().mode() & 0o7777;
            if meta.file_type().is_symlink() {
                let target = fs::read_link(&path).unwrap();
                out.insert(rel, ('l', 0, target.into_os_string().into_encoded_bytes()));
            } else if meta.is_dir() {
                out.insert(rel, ('d', mode, Vec::new()));
                todo.push(path);
            } else {
                out.insert(rel, ('f', mode, fs::read(&path).unwrap()));
            }
        }
    }
    out
}

/// A session over `root` in bypass mode, unconfined, recording into
/// `store`.
pub(crate) fn session(root: &Path, store: &Path) -> Session {
    let mut config = SessionConfig::new(root);
    config.mode = Some(Mode::Bypass);
    config.sandbox = Some(SandboxPolicy::off());
    config.tools = "read,write,edit,multi_edit,apply_patch,bash,bash_output,kill_shell"
        .parse()
        .unwrap();
    config.checkpoints = CheckpointConfig {
        store: Some(store.to_path_buf()),
        ..CheckpointConfig::default()
    };
    Session::start(config).unwrap()
}

/// Runs one call; its result's text, after checking it succeeded.
pub(crate) async fn call(session: &Session, id: &str, tool: &str, args: Value) -> String {
    let (sink, _events) = EventSink::channel();
    let result = session
        .turn(sink)
        .run(vec![ToolCall::new(id, tool, args)])
        .await
        .unwrap();
    let result = &result.results[0];
    let text = result.text();
    assert_eq!(result.outcome, Outcome::Success, "{tool} {id}: {text}");
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_checkpoint_rewinds_to_the_tree_before_it_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let store = tempfile::tempdir().unwrap();
    fs::write(root.join("a.txt"), "alpha\n").unwrap();
    fs::write(root.join("b.txt"), "bravo\n").unwrap();
    fs::create_dir(root.join("dir")).unwrap();
    fs::write(root.join("dir/c.txt"), "charlie\n").unwrap();
    fs::write(root.join("run.sh"), "echo hi\n").unwrap();
    fs::set_permissions(root.join("run.sh"), fs::Permissions::from_mode(0o644)).unwrap();
    // Ignored: never recorded, never touched by a rewind.
    fs::write(root.join(".gitignore"), "build/\n").unwrap();
    let session = session(&root, store.path());
    let mut trees = vec![tree(&root)];

    call(
        &session,
        "w1",
        "write",
        json!({"file_path": "new/deep/n.txt", "content": "november\n"}),
    )
    .await;
    trees.push(tree(&root));
    call(&session, "r1", "read", json!({"file_path": "a.txt"})).await;
    call(
        &session,
        "e1",
        "edit",
        json!({"file_path": "a.txt", "old_string": "alpha", "new_string": "ALPHA"}),
    )
    .await;
    trees.push(tree(&root));
    call(&session, "r2", "read", json!({"file_path": "dir/c.txt"})).await;
    call(
        &session,
        "m1",
        "multi_edit",
        json!({"file_path": "dir/c.txt", "edits": [
        {"old_string": "charlie", "new_string": "CHARLIE"},
        {"old_string": "CHARLIE", "new_string": "delta"}]}),
    )
    .await;
    trees.push(tree(&root));
    call(&session, "r3", "read", json!({"file_path": "b.txt"})).await;
    call(&session, "p1", "apply_patch", json!({"patch":
        "*** Begin Patch\n*** Add File: patched.txt\n+papa\n*** Update File: b.txt\n@@\n-bravo\n+BRAVO\n*** End Patch"})).await;
    trees.push(tree(&root));
    call(&session, "b1", "bash", json!({"command":
        "mv b.txt b2.txt && chmod 755 run.sh && rm dir/c.txt && echo x > made.txt && mkdir -p nd/sub && echo y > nd/sub/f && ln -s a.txt link && mkdir -p build && echo junk > build/out"})).await;
    let after = tree(&root);

    let listing = session.checkpoints().unwrap().unwrap();
    let tools: Vec<&str> = listing
        .checkpoints
        .iter()
        .map(|c| c.tool.as_str())
        .collect();
    assert_eq!(
        tools,
        ["write", "edit", "multi_edit", "apply_patch", "bash"],
        "{listing:#?}"
    );
    let bash = &listing.checkpoints[4];
    let lines = bash.describe(&root);
    for expected in [
        "renamed b.txt -> b2.txt",
        "mode of run.sh 644 -> 755",
        "deleted dir/c.txt",
        "created made.txt",
        "created folder nd",
        "created nd/sub/f",
        "created link",
    ] {
        assert!(
            lines.iter().any(|l| l == expected),
            "{expected:?} in {lines:#?}"
        );
    }
    assert!(
        !lines.iter().any(|l| l.contains("build")),
        "ignored paths are not recorded: {lines:#?}"
    );
    let ids: Vec<u64> = listing.checkpoints.iter().map(|c| c.id).collect();

    // Newest first: each rewind lands on the tree before that checkpoint.
    for (i, id) in ids.iter().enumerate().rev() {
        let report = session
            .rewind(RewindTo::Checkpoint(*id), RewindMode::Safe)
            .unwrap();
        assert!(report.applied, "{report:#?}");
        assert!(report.conflicts.is_empty(), "{report:#?}");
        let mut expected = trees[i].clone();
        // The ignored build output stays as the command left it.
        for (k, v) in &after {
            if k.starts_with("build") {
                expected.insert(k.clone(), v.clone());
            }
        }
        assert_eq!(
            tree(&root),
            expected,
            "rewound to before #{id}: {report:#?}"
        );
    }

    // The last rewind is a checkpoint: undoing it brings back the write.
    let listing = session.checkpoints().unwrap().unwrap();
    let last = listing.checkpoints.last().unwrap();
    assert_eq!(last.tool, "rewind");
    session
        .rewind(RewindTo::Checkpoint(last.id), RewindMode::Safe)
        .unwrap();
    assert_eq!(
        fs::read(root.join("new/deep/n.txt")).unwrap(),
        b"november\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restored_file_must_be_read_again_before_an_edit() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let store = tempfile::tempdir().unwrap();
    fs::write(root.join("a.txt"), "one\n").unwrap();
    let session = session(&root, store.path());
    call(&session, "r", "read", json!({"file_path": "a.txt"})).await;
    call(
        &session,
        "e",
        "edit",
        json!({"file_path": "a.txt", "old_string": "one", "new_string": "two"}),
    )
    .await;
    session
        .rewind(RewindTo::Call("e".into()), RewindMode::Safe)
        .unwrap();
    assert_eq!(fs::read(root.join("a.txt")).unwrap(), b"one\n");
    let (sink, _events) = EventSink::channel();
    let result = session
        .turn(sink)
        .run(vec![ToolCall::new(
            "e2",
            "edit",
            json!({"file_path": "a.txt", "old_string": "one", "new_string": "three"}),
        )])
        .await
        .unwrap();
    assert_eq!(
        result.results[0].outcome,
        Outcome::Failed,
        "{}",
        result.results[0].text()
    );
    assert_eq!(fs::read(root.join("a.txt")).unwrap(), b"one\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_jobs_later_writes_are_its_own_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let store = tempfile::tempdir().unwrap();
    let session = session(&root, store.path());
    call(
        &session,
        "j",
        "bash",
        json!({"command": "sleep 2; echo late > late.txt; sleep 30", "run_in_background": true}),
    )
    .await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !root.join("late.txt").exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the job wrote nothing"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let listing = session.checkpoints().unwrap().unwrap();
    let job = listing
        .checkpoints
        .iter()
        .find(|c| c.describe(&root).iter().any(|l| l == "created late.txt"))
        .unwrap_or_else(|| panic!("{listing:#?}"));
    assert_eq!(job.call_id, "job-1");
    assert!(
        job.label.starts_with("background job job-1"),
        "{}",
        job.label
    );
    session.end_jobs().await;
    session
        .rewind(RewindTo::Checkpoint(job.id), RewindMode::Safe)
        .unwrap();
    assert!(!root.join("late.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_that_ended_before_the_next_look_still_owns_its_writes() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let store = tempfile::tempdir().unwrap();
    let session = session(&root, store.path());
    call(
        &session,
        "j",
        "bash",
        json!({"command": "sleep 1.5; echo quick > quick.txt", "run_in_background": true}),
    )
    .await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !root.join("quick.txt").exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the job wrote nothing"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    session.end_jobs().await;
    // Only now does anything look: the job has ended.
    let listing = session.checkpoints().unwrap().unwrap();
    let job = listing
        .checkpoints
        .iter()
        .find(|c| c.describe(&root).iter().any(|l| l == "created quick.txt"))
        .unwrap_or_else(|| panic!("{listing:#?}"));
    assert_eq!(job.call_id, "job-1", "{listing:#?}");
    assert_eq!(
        job.label,
        "background job job-1: sleep 1.5; echo quick > quick.txt"
    );
    // A change after that look is nobody's: not recorded as the job's.
    fs::write(root.join("later.txt"), "the user's\n").unwrap();
    let listing = session.checkpoints().unwrap().unwrap();
    assert!(
        !listing
            .checkpoints
            .iter()
            .any(|c| c.describe(&root).iter().any(|l| l.contains("later.txt"))),
        "{listing:#?}"
    );
}
