//! Issue 13 item 3: a neighbour process exchanging a directory of the
//! workspace with a symbolic link to a directory outside it
//! (`renameat2(RENAME_EXCHANGE)` in a loop) while the model reads, writes
//! and edits through that directory. Every file operation is done beneath
//! the root's handle with no link followed, so no call may read a byte from
//! outside nor write a byte there; calls that meet the swapped state fail
//! with "changed while it was being opened; … try again".

use std::fs;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use agentcore::{Call, Outcome};
use serde_json::json;
use tower::ServiceExt;

use crate::support::files::Env;

const OUTSIDE: &str = "OUTSIDE-SECRET\n";

/// Exchanges `a` and `b` until `stop` is set.
fn swapper(a: &Path, b: &Path, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<u64> {
    let (a, b) = (a.to_path_buf(), b.to_path_buf());
    std::thread::spawn(move || {
        let mut swaps = 0;
        while !stop.load(Ordering::Relaxed) {
            if nix::fcntl::renameat2(
                nix::fcntl::AT_FDCWD,
                &a,
                nix::fcntl::AT_FDCWD,
                &b,
                nix::fcntl::RenameFlags::RENAME_EXCHANGE,
            )
            .is_ok()
            {
                swaps += 1;
            }
            std::thread::yield_now();
        }
        swaps
    })
}

/// The outside directory holds exactly its one file, unchanged.
fn outside_untouched(outside: &Path) {
    let names: Vec<_> = fs::read_dir(outside)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec!["t.txt"], "something was written outside");
    assert_eq!(fs::read_to_string(outside.join("t.txt")).unwrap(), OUTSIDE);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_swapping_neighbour_never_gets_a_read_or_a_write_outside() {
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("t.txt"), OUTSIDE).unwrap();
    let env = Env::new();
    env.put("d/t.txt", "inside 0\n");
    std::os::unix::fs::symlink(outside.path(), env.path("dl")).unwrap();
    // A fresh pipeline per call: the kernel disables a tool after three
    // consecutive errors, and many calls here fail by design.
    let call = |tool: &str, args: serde_json::Value| {
        let service = env.pipeline(None).service();
        let call = Call::new("c", tool, args);
        async move { service.oneshot(call).await.unwrap() }
    };

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = swapper(&env.path("d"), &env.path("dl"), stop.clone());
    let (mut reads, mut writes, mut edits, mut refused_changed) = (0, 0, 0, 0);
    let mut outside_bytes = 0usize;
    for i in 0..3000u32 {
        let r = call("read", json!({"file_path": "d/t.txt"})).await;
        let text = r.text();
        if text.contains("OUTSIDE") {
            outside_bytes += text.len();
        }
        if r.outcome == Outcome::Success {
            reads += 1;
            // Edit what was just read.
            let old = text
                .lines()
                .next()
                .and_then(|l| l.split('\t').nth(1))
                .unwrap_or("")
                .to_owned();
            let r = call(
                "edit",
                json!({"file_path": "d/t.txt", "old_string": old, "new_string": format!("inside {i}")}),
            )
            .await;
            if r.outcome == Outcome::Success {
                edits += 1;
            }
        } else if text.contains("changed while it was being opened") {
            refused_changed += 1;
        } else if i % 500 == 0 {
            println!("read refused: {text}");
        }
        let r = call(
            "write",
            json!({"file_path": format!("d/new{i}.txt"), "content": "written\n"}),
        )
        .await;
        if r.outcome == Outcome::Success {
            writes += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swaps.join().unwrap();
    println!(
        "swaps {swaps}, reads ok {reads}, edits ok {edits}, writes ok {writes}, refused as changed {refused_changed}"
    );
    assert_eq!(outside_bytes, 0, "bytes from outside were read");
    outside_untouched(outside.path());
    assert!(swaps > 0, "the neighbour never swapped");
    assert!(
        reads > 0 && writes > 0,
        "nothing got through at all (reads {reads}, writes {writes})"
    );
}

/// The same through a deeper path (the swapped directory is a middle
/// component), for write creating a missing parent under it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creating_parents_under_a_swapped_directory_stays_inside() {
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("t.txt"), OUTSIDE).unwrap();
    let env = Env::new();
    env.put("d/t.txt", "inside\n");
    std::os::unix::fs::symlink(outside.path(), env.path("dl")).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = swapper(&env.path("d"), &env.path("dl"), stop.clone());
    for i in 0..1500u32 {
        let call = Call::new(
            "c",
            "write",
            json!({"file_path": format!("d/sub{i}/deep/f.txt"), "content": "x"}),
        );
        let _ = env.pipeline(None).service().oneshot(call).await.unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    swaps.join().unwrap();
    outside_untouched(outside.path());
}
