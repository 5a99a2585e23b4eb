//! The sandbox's probe (a forked child trying each namespace) is made once
//! per set of circumstances: a trial that found everything is kept under
//! the state folder (a hash of its circumstances), a later start in the
//! same circumstances makes none, and a start whose circumstances are not
//! kept (here, the file forged) makes it again.
//! `agentcore sandbox check` always makes it.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::require::require_sandbox;

fn agentcore(state: &Path, args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_agentcore"))
        .args(args)
        .env("XDG_STATE_HOME", state)
        .stdin(Stdio::null())
        .output()
        .expect("agentcore runs");
    assert!(
        out.status.success(),
        "agentcore {args:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces)"]
fn a_start_in_the_same_circumstances_makes_no_trial_and_another_one_does() {
    require_sandbox();
    let state = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let root = root.path().to_str().unwrap();
    let kept = state.path().join("agentcore/sandbox-probe");
    let exec = ["sandbox", "exec", "--root", root, "--", "true"];

    agentcore(state.path(), &["sandbox", "check"]);
    let first = std::fs::read_to_string(&kept).expect("a full trial is kept");
    // One line: the hash of the circumstances (64 hex digits).
    assert_eq!(first.len(), 65, "{first:?}");
    assert!(
        first.trim_end().bytes().all(|b| b.is_ascii_hexdigit()),
        "{first:?}"
    );
    let inode = std::fs::metadata(&kept).unwrap().ino();

    // A trial that found everything rewrites the file (a new one renamed
    // into place): the same file means no trial was made.
    agentcore(state.path(), &exec);
    assert_eq!(
        std::fs::metadata(&kept).unwrap().ino(),
        inode,
        "a trial was made"
    );
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), first);

    // Other circumstances only: the trial is made, and the file then says
    // that these hold too (first), besides what was there.
    let forged = format!("{}\n", "0".repeat(64));
    std::fs::write(&kept, &forged).unwrap();
    agentcore(state.path(), &exec);
    assert_eq!(
        std::fs::read_to_string(&kept).unwrap(),
        format!("{first}{forged}")
    );

    // `sandbox check` makes the trial whatever is kept.
    let inode = std::fs::metadata(&kept).unwrap().ino();
    agentcore(state.path(), &["sandbox", "check"]);
    assert_ne!(
        std::fs::metadata(&kept).unwrap().ino(),
        inode,
        "no trial was made"
    );
}
