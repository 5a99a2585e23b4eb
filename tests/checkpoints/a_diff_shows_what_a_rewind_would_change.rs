//! `Checkpoints::diff`: what a rewind would change, file by file, with
//! nothing written to the tree or the store; a link planted in place of a
//! folder is not followed, and bytes that are not text are named, not
//! shown.

use std::fs;
use std::path::Path;

use agentcore::checkpoint::{RewindMode, RewindTo, State};
use serde_json::json;

use super::every_change_is_recorded_and_rewound::{call, session, tree};

/// Every file of the store with its bytes, to see that a diff adds nothing.
fn store_files(store: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![store.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else if path.file_name().is_some_and(|n| n != "lock") {
                out.push((path.display().to_string(), fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_diff_is_the_rewind_to_come_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let store = tempfile::tempdir().unwrap();
    fs::write(root.join("a.txt"), "one\ntwo\nthree\n").unwrap();
    fs::write(root.join("gone.txt"), "kept\n").unwrap();
    fs::write(root.join("bin.dat"), b"\x00\x01\x02").unwrap();
    let session = session(&root, store.path());
    call(&session, "r", "read", json!({"file_path": "a.txt"})).await;
    call(
        &session,
        "e",
        "edit",
        json!({"file_path": "a.txt", "old_string": "two", "new_string": "TWO"}),
    )
    .await;
    call(
        &session,
        "b",
        "bash",
        json!({"command": "echo new > new.txt; rm gone.txt; printf '\\000\\003' > bin.dat"}),
    )
    .await;
    let recorder = session.checkpoint_recorder().unwrap();
    let (tree_before, store_before) = (tree(&root), store_files(store.path()));

    let diff = recorder.diff(&RewindTo::Call("e".into())).unwrap();
    assert_eq!(
        tree(&root),
        tree_before,
        "a diff writes nothing to the tree"
    );
    assert_eq!(store_files(store.path()), store_before, "nor to the store");
    let text = diff.describe(&root);
    let part = |name: &str| {
        diff.paths
            .iter()
            .find(|p| p.path == root.join(name))
            .unwrap_or_else(|| panic!("{name} in {text}"))
    };
    assert_eq!(
        part("a.txt").diff,
        "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-TWO\n+two\n three"
    );
    assert_eq!(part("new.txt").before, State::Absent);
    assert!(part("new.txt").diff.ends_with("\n-new"), "{text}");
    assert!(part("gone.txt").diff.ends_with("\n+kept"), "{text}");
    assert_eq!(
        part("bin.dat").note.as_deref(),
        Some("now a binary file; a rewind puts back a binary file")
    );
    assert!(
        text.starts_with(&format!(
            "A rewind to before checkpoint #{} would change 4 path(s):\n",
            diff.to
        )),
        "{text}"
    );

    // The rewind then does what the diff said.
    let report = session
        .rewind(RewindTo::Call("e".into()), RewindMode::Safe)
        .unwrap();
    assert!(report.applied, "{report:#?}");
    assert_eq!(
        fs::read_to_string(root.join("a.txt")).unwrap(),
        "one\ntwo\nthree\n"
    );
    assert_eq!(fs::read_to_string(root.join("gone.txt")).unwrap(), "kept\n");
    assert!(!root.join("new.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_diff_never_reads_through_a_planted_link() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("f.txt"), "the secret outside\n").unwrap();
    let store = tempfile::tempdir().unwrap();
    fs::create_dir(root.join("d")).unwrap();
    fs::write(root.join("d/f.txt"), "f0\n").unwrap();
    let session = session(&root, store.path());
    call(&session, "rm", "bash", json!({"command": "rm -r d"})).await;
    std::os::unix::fs::symlink(outside.path(), root.join("d")).unwrap();

    let diff = session
        .checkpoint_recorder()
        .unwrap()
        .diff(&RewindTo::Call("rm".into()))
        .unwrap();
    let text = diff.describe(&root);
    assert!(!text.contains("secret"), "{text}");
    let file = diff
        .paths
        .iter()
        .find(|p| p.path == root.join("d/f.txt"))
        .unwrap();
    // Through real folders nothing is at d/f.txt: all of it comes back.
    assert_eq!(
        file.diff,
        "--- a/d/f.txt\n+++ b/d/f.txt\n@@ -0,0 +1 @@\n+f0"
    );
    let folder = diff
        .paths
        .iter()
        .find(|p| p.path == root.join("d"))
        .unwrap();
    assert!(
        folder.note.as_deref().unwrap_or("").contains("a link to"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forced_conflict_is_said_to_be_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let store = tempfile::tempdir().unwrap();
    fs::write(root.join("a.txt"), "a0\n").unwrap();
    let session = session(&root, store.path());
    call(&session, "b", "bash", json!({"command": "echo a1 > a.txt"})).await;
    fs::write(root.join("a.txt"), "the user's own\n").unwrap();
    let skipped = session
        .rewind(RewindTo::Call("b".into()), RewindMode::Skip)
        .unwrap();
    assert!(
        skipped.describe(&root).contains(
            &"conflict a.txt: changed since by something not recorded (left as it is)".to_owned()
        ),
        "{:?}",
        skipped.describe(&root)
    );
    let forced = session
        .rewind(RewindTo::Call("b".into()), RewindMode::Force)
        .unwrap();
    assert!(
        forced.describe(&root).contains(
            &"conflict a.txt: changed since by something not recorded (overwritten)".to_owned()
        ),
        "{:?}",
        forced.describe(&root)
    );
    assert_eq!(fs::read_to_string(root.join("a.txt")).unwrap(), "a0\n");
}
