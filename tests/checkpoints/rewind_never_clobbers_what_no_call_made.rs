//! A path changed since its checkpoint by something agentcore did not
//! record is a conflict: a safe rewind changes nothing and lists it, skip
//! leaves it and rewinds the rest, force overwrites it. A link planted in
//! place of a folder never makes a rewind write outside the root.

use std::fs;

use agentcore::checkpoint::{RewindMode, RewindTo};
use serde_json::json;

use super::every_change_is_recorded_and_rewound::{call, session, tree};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_edit_after_the_call_is_a_conflict_and_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let store = tempfile::tempdir().unwrap();
    fs::write(root.join("a.txt"), "a0\n").unwrap();
    fs::write(root.join("b.txt"), "b0\n").unwrap();
    let session = session(&root, store.path());
    call(
        &session,
        "b",
        "bash",
        json!({"command": "echo a1 > a.txt; echo b1 > b.txt"}),
    )
    .await;
    // The user's editor, outside the session.
    fs::write(root.join("a.txt"), "the user's own\n").unwrap();
    let before = tree(&root);

    let report = session
        .rewind(RewindTo::Call("b".into()), RewindMode::Safe)
        .unwrap();
    assert!(!report.applied, "{report:#?}");
    assert_eq!(report.conflicts.len(), 1, "{report:#?}");
    assert_eq!(report.conflicts[0].path, root.join("a.txt"));
    assert_eq!(
        tree(&root),
        before,
        "a safe rewind with a conflict changes nothing"
    );
    assert!(
        report.describe(&root)[0].starts_with("Nothing was changed"),
        "{:?}",
        report.describe(&root)
    );

    let report = session
        .rewind(RewindTo::Call("b".into()), RewindMode::Skip)
        .unwrap();
    assert!(report.applied);
    assert_eq!(fs::read(root.join("a.txt")).unwrap(), b"the user's own\n");
    assert_eq!(fs::read(root.join("b.txt")).unwrap(), b"b0\n");
    assert_eq!(report.restored, vec![root.join("b.txt")]);

    let report = session
        .rewind(RewindTo::Call("b".into()), RewindMode::Force)
        .unwrap();
    assert!(report.applied, "{report:#?}");
    assert_eq!(fs::read(root.join("a.txt")).unwrap(), b"a0\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_planted_for_a_folder_never_leads_a_rewind_outside() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let outside = tempfile::tempdir().unwrap();
    let store = tempfile::tempdir().unwrap();
    fs::create_dir(root.join("d")).unwrap();
    fs::write(root.join("d/f.txt"), "f0\n").unwrap();
    let session = session(&root, store.path());
    call(&session, "rm", "bash", json!({"command": "rm -r d"})).await;
    // Something outside the session plants d -> OUTSIDE.
    std::os::unix::fs::symlink(outside.path(), root.join("d")).unwrap();

    let report = session
        .rewind(RewindTo::Call("rm".into()), RewindMode::Safe)
        .unwrap();
    assert!(
        !report.applied,
        "the planted link is a conflict: {report:#?}"
    );
    let report = session
        .rewind(RewindTo::Call("rm".into()), RewindMode::Force)
        .unwrap();
    assert!(report.applied, "{report:#?}");
    assert_eq!(
        fs::read_dir(outside.path()).unwrap().count(),
        0,
        "nothing written outside"
    );
    assert!(
        fs::symlink_metadata(root.join("d")).unwrap().is_dir(),
        "{report:#?}"
    );
    assert_eq!(fs::read(root.join("d/f.txt")).unwrap(), b"f0\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_denied_file_is_never_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let store = tempfile::tempdir().unwrap();
    fs::write(root.join(".env"), "SECRET=1\n").unwrap();
    let mut config = agentcore::session::SessionConfig::new(&root);
    config.mode = Some(agentcore::approval::Mode::Bypass);
    config.sandbox = Some(agentcore::sandbox::SandboxPolicy::off());
    config.policy =
        Some(agentcore::config::Policy::from_toml("deny = [\"read(./.env)\"]\n").unwrap());
    config.checkpoints = agentcore::checkpoint::CheckpointConfig {
        store: Some(store.path().to_path_buf()),
        ..Default::default()
    };
    let session = agentcore::session::Session::start(config).unwrap();
    call(
        &session,
        "b",
        "bash",
        json!({"command": "echo SECRET=2 > .env; echo x > x.txt"}),
    )
    .await;
    let listing = session.checkpoints().unwrap().unwrap();
    let paths: Vec<_> = listing
        .checkpoints
        .iter()
        .flat_map(|c| c.changes.iter().map(|c| c.path.clone()))
        .collect();
    assert_eq!(paths, [root.join("x.txt")], "{listing:#?}");
    // No kept version holds the secret (the log holds the command line).
    let mut todo = vec![store.path().join("objects")];
    while let Some(d) = todo.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let bytes = fs::read(&p).unwrap();
                assert!(
                    !String::from_utf8_lossy(&bytes).contains("SECRET"),
                    "{}",
                    p.display()
                );
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the command sandbox"]
async fn confined_commands_cannot_see_the_store() {
    crate::support::require::require_sandbox();
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let store = tempfile::tempdir().unwrap();
    let store = fs::canonicalize(store.path()).unwrap();
    fs::write(root.join("a.txt"), "kept in the store\n").unwrap();
    let mut config = agentcore::session::SessionConfig::new(&root);
    config.mode = Some(agentcore::approval::Mode::Bypass);
    config.checkpoints = agentcore::checkpoint::CheckpointConfig {
        store: Some(store.clone()),
        ..Default::default()
    };
    let session = agentcore::session::Session::start(config).unwrap();
    assert!(session.sandbox().is_some());
    assert!(store.join("meta.json").exists());
    let text = call(
        &session,
        "b",
        "bash",
        json!({"command": format!("ls -A {0}; cat {0}/meta.json; echo x > a.txt; echo done", store.display())}),
    )
    .await;
    assert!(
        !text.contains("log.jsonl") && !text.contains("\"roots\""),
        "{text}"
    );
    assert!(text.contains("done"), "{text}");
    // Recorded all the same.
    let listing = session.checkpoints().unwrap().unwrap();
    assert_eq!(listing.checkpoints[0].describe(&root), ["modified a.txt"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_job_writing_while_a_rewind_runs_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let store = tempfile::tempdir().unwrap();
    fs::write(root.join("a.txt"), "a0\n").unwrap();
    let start = tree(&root);
    let session = session(&root, store.path());
    call(
        &session,
        "b",
        "bash",
        json!({"command": "echo a1 > a.txt; echo b1 > b.txt"}),
    )
    .await;
    call(
        &session,
        "j",
        "bash",
        json!({
            "command": "for i in $(seq 1 300); do echo $i >> j.txt; sleep 0.005; done; echo > j.done",
            "run_in_background": true
        }),
    )
    .await;
    let wait_for = |name: &str| {
        let path = root.join(name);
        async move {
            let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
            while !path.exists() {
                assert!(std::time::Instant::now() < until, "the job wrote nothing");
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
        }
    };
    wait_for("j.txt").await;

    // The rewind runs while the job appends to j.txt every few ms.
    let report = session
        .rewind(RewindTo::Call("b".into()), RewindMode::Safe)
        .unwrap();
    assert!(report.applied, "{report:#?}");
    assert_eq!(fs::read(root.join("a.txt")).unwrap(), b"a0\n");
    assert!(!root.join("b.txt").exists());
    let j = root.join("j.txt");
    let removed = report.removed.contains(&j);
    let left = report.not_restored.iter().find(|(p, _)| p == &j);
    assert!(
        removed != left.is_some(),
        "j.txt is either removed or said to be left: {report:#?}"
    );
    if let Some((_, why)) = left {
        assert!(why.contains("changed while the rewind ran"), "{why}");
    }

    // The job goes on; what it writes after the rewind is its own
    // checkpoint, so a rewind to the start still gets the first tree.
    wait_for("j.done").await;
    session.end_jobs().await;
    let listing = session.checkpoints().unwrap().unwrap();
    let rewind_id = report.checkpoint.unwrap();
    assert!(
        listing
            .checkpoints
            .iter()
            .any(|cp| cp.id > rewind_id && cp.call_id == "job-1"),
        "{listing:#?}"
    );
    let report = session
        .rewind(RewindTo::Call("b".into()), RewindMode::Safe)
        .unwrap();
    assert!(report.applied, "{report:#?}");
    assert_eq!(tree(&root), start, "{report:#?}");
}
