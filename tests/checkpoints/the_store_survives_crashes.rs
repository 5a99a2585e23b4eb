//! A crash in the middle of recording or rewinding leaves the store and
//! the tree consistent: a torn log line is dropped, a call begun and never
//! ended gets what changed as its checkpoint on the next start, and a
//! second session on the same root does not record into a store in use.

use std::fs;
use std::io::Write;

use agentcore::checkpoint::{CheckpointConfig, Checkpoints, RewindMode, RewindTo};
use agentcore::fs::workspace::Workspace;

fn open(root: &std::path::Path, store: &std::path::Path) -> Checkpoints {
    let config = CheckpointConfig {
        store: Some(store.to_path_buf()),
        ..CheckpointConfig::default()
    };
    Checkpoints::open(
        &config,
        &Workspace::new(root).unwrap(),
        vec![root.to_path_buf()],
    )
    .unwrap()
}

#[test]
fn a_call_cut_off_by_a_crash_is_recorded_on_the_next_start() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let store = tempfile::tempdir().unwrap();
    fs::write(root.join("a.txt"), "before\n").unwrap();
    let recorder = open(&root, store.path());
    let recording = recorder
        .begin("c1", "bash", "echo after > a.txt", None)
        .unwrap();
    fs::write(root.join("a.txt"), "after\n").unwrap();
    // The process dies here: no end, no saved index.
    std::mem::forget(recording);
    drop(recorder);
    // A torn line at the end of the log, as a kill mid-write leaves.
    let mut log = fs::OpenOptions::new()
        .append(true)
        .open(store.path().join("log.jsonl"))
        .unwrap();
    log.write_all(b"{\"t\":\"checkpoint\",\"id\":9").unwrap();
    drop(log);

    let recorder = open(&root, store.path());
    let listing = recorder.list().unwrap();
    assert_eq!(listing.checkpoints.len(), 1, "{listing:#?}");
    let cp = &listing.checkpoints[0];
    assert_eq!(cp.call_id, "c1");
    assert!(cp.notes[0].contains("after a crash"), "{cp:#?}");
    let report = recorder
        .rewind(RewindTo::Call("c1".into()), RewindMode::Safe)
        .unwrap();
    assert!(report.applied, "{report:#?}");
    assert_eq!(fs::read(root.join("a.txt")).unwrap(), b"before\n");
}

#[test]
fn a_store_in_use_is_not_opened_twice() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let store = tempfile::tempdir().unwrap();
    let _first = open(&root, store.path());
    let config = CheckpointConfig {
        store: Some(store.path().to_path_buf()),
        ..CheckpointConfig::default()
    };
    let error = Checkpoints::open(&config, &Workspace::new(&root).unwrap(), vec![root.clone()])
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("in use by another agentcore session"),
        "{error}"
    );
}

#[test]
fn a_store_inside_a_writable_root_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let config = CheckpointConfig {
        store: Some(root.join(".state")),
        ..CheckpointConfig::default()
    };
    let error = Checkpoints::open(&config, &Workspace::new(&root).unwrap(), vec![root.clone()])
        .unwrap_err()
        .to_string();
    assert!(error.contains("which commands may write"), "{error}");
}

#[test]
fn the_index_of_an_ended_session_spares_reading_unchanged_files() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let store = tempfile::tempdir().unwrap();
    for i in 0..50 {
        fs::write(root.join(format!("f{i}")), format!("{i}\n")).unwrap();
    }
    let recorder = open(&root, store.path());
    recorder.save().unwrap();
    drop(recorder);
    // A change while no session ran is nobody's: no checkpoint claims it.
    fs::write(root.join("f3"), "changed\n").unwrap();
    let recorder = open(&root, store.path());
    assert!(recorder.list().unwrap().checkpoints.is_empty());
    let r = recorder.begin("c", "bash", "rm f4", None).unwrap();
    fs::remove_file(root.join("f4")).unwrap();
    let cp = recorder.end(r).unwrap().unwrap();
    assert_eq!(cp.describe(&root), ["deleted f4"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_checkpoints_table_in_the_policy_turns_them_on() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let store = tempfile::tempdir().unwrap();
    let policy = agentcore::config::Policy::from_toml(&format!(
        "mode = \"bypass\"\n[sandbox]\nmode = \"off\"\n[checkpoints]\nstore = {:?}\nexclude = [\"*.log\"]\n",
        store.path().to_string_lossy()
    ))
    .unwrap();
    let mut config = agentcore::session::SessionConfig::new(&root);
    config.policy = Some(policy);
    let session = agentcore::session::Session::start(config).unwrap();
    super::every_change_is_recorded_and_rewound::call(
        &session,
        "b",
        "bash",
        serde_json::json!({"command": "echo x > x.txt; echo y > y.log"}),
    )
    .await;
    let listing = session.checkpoints().expect("on").unwrap();
    assert_eq!(listing.checkpoints[0].describe(&root), ["created x.txt"]);
    assert!(
        listing.excluded.iter().any(|e| e.contains("*.log")),
        "{:?}",
        listing.excluded
    );
    let off = agentcore::config::Policy::from_toml("[checkpoints]\nenabled = false\n").unwrap();
    let mut config = agentcore::session::SessionConfig::new(&root);
    config.policy = Some(off);
    assert!(
        agentcore::session::Session::start(config)
            .unwrap()
            .checkpoints()
            .is_none()
    );
    assert!(
        agentcore::config::Policy::from_toml("[checkpoints]\nmax_bytes = 1\n")
            .unwrap_err()
            .to_string()
            .contains("max_bytes")
    );
}
