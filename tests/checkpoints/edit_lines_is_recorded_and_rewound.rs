//! A session offering `edit_lines` records its change as a checkpoint of
//! the one file it names, and a rewind puts the file back byte for byte.

use std::fs;

use agentcore::approval::Mode;
use agentcore::checkpoint::{CheckpointConfig, RewindMode, RewindTo};
use agentcore::sandbox::SandboxPolicy;
use agentcore::session::{Session, SessionConfig};
use agentcore::tools::edit_lines::anchor::line_hash;
use serde_json::json;

use crate::every_change_is_recorded_and_rewound::call;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_lines_call_is_a_checkpoint_a_rewind_undoes() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let store = tempfile::tempdir().unwrap();
    fs::write(root.join("a.txt"), "alpha\r\nbravo\r\n").unwrap();
    let mut config = SessionConfig::new(&root);
    config.mode = Some(Mode::Bypass);
    config.sandbox = Some(SandboxPolicy::off());
    config.tools = "default,edit_lines".parse().unwrap();
    config.checkpoints = CheckpointConfig {
        store: Some(store.path().to_path_buf()),
        ..CheckpointConfig::default()
    };
    let session = Session::start(config).unwrap();
    let read = call(&session, "r", "read", json!({"file_path": "a.txt"})).await;
    let bravo = format!("2:{}", line_hash(b"bravo"));
    assert!(read.contains(&format!("     {bravo}\tbravo")), "{read}");
    call(
        &session,
        "e",
        "edit_lines",
        json!({"file_path": "a.txt", "operations": [{"op": "replace", "start": bravo, "text": "BRAVO\nCHARLIE"}]}),
    )
    .await;
    assert_eq!(
        fs::read(root.join("a.txt")).unwrap(),
        b"alpha\r\nBRAVO\r\nCHARLIE\r\n"
    );
    let listing = session.checkpoints().unwrap().unwrap();
    let checkpoint = listing
        .checkpoints
        .iter()
        .find(|c| c.tool == "edit_lines")
        .expect("edit_lines is recorded");
    let report = session
        .rewind(RewindTo::Checkpoint(checkpoint.id), RewindMode::Safe)
        .unwrap();
    assert!(report.applied, "{report:#?}");
    assert_eq!(fs::read(root.join("a.txt")).unwrap(), b"alpha\r\nbravo\r\n");
}
