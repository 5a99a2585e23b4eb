//! The law of rewind, over random sequences of calls: after calls 1..=n,
//! each recorded, a rewind to before call k leaves the tree exactly as it
//! was before call k, whatever the calls created, changed, deleted,
//! renamed or chmodded.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use agentcore::checkpoint::{CheckpointConfig, Checkpoints, RewindMode, RewindTo};
use agentcore::fs::workspace::Workspace;
use proptest::prelude::*;

use super::every_change_is_recorded_and_rewound::tree;

/// One change a call makes.
#[derive(Clone, Debug)]
enum Op {
    Write(usize, Vec<u8>),
    Delete(usize),
    Rename(usize, usize),
    Chmod(usize, bool),
    MkdirWrite(usize, usize, Vec<u8>),
    RemoveDir(usize),
}

const NAMES: [&str; 5] = ["a", "b", "c.txt", "d", "e.rs"];
const DIRS: [&str; 3] = ["x", "y", "x/z"];

fn op() -> impl Strategy<Value = Op> {
    let bytes = proptest::collection::vec(any::<u8>(), 0..64);
    prop_oneof![
        (0..NAMES.len(), bytes.clone()).prop_map(|(i, b)| Op::Write(i, b)),
        (0..NAMES.len()).prop_map(Op::Delete),
        (0..NAMES.len(), 0..NAMES.len()).prop_map(|(a, b)| Op::Rename(a, b)),
        (0..NAMES.len(), any::<bool>()).prop_map(|(i, x)| Op::Chmod(i, x)),
        (0..DIRS.len(), 0..NAMES.len(), bytes).prop_map(|(d, i, b)| Op::MkdirWrite(d, i, b)),
        (0..DIRS.len()).prop_map(Op::RemoveDir),
    ]
}

/// Applies `op` as a command would (errors, such as a missing file, are
/// what a failing command leaves: nothing).
fn apply(root: &Path, op: &Op) {
    let _ = match op {
        Op::Write(i, b) => fs::write(root.join(NAMES[*i]), b),
        Op::Delete(i) => fs::remove_file(root.join(NAMES[*i])),
        Op::Rename(a, b) => fs::rename(root.join(NAMES[*a]), root.join(NAMES[*b])),
        Op::Chmod(i, x) => fs::set_permissions(
            root.join(NAMES[*i]),
            fs::Permissions::from_mode(if *x { 0o755 } else { 0o600 }),
        ),
        Op::MkdirWrite(d, i, b) => fs::create_dir_all(root.join(DIRS[*d]))
            .and_then(|()| fs::write(root.join(DIRS[*d]).join(NAMES[*i]), b)),
        Op::RemoveDir(d) => fs::remove_dir_all(root.join(DIRS[*d])),
    };
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn a_rewind_to_before_call_k_restores_the_tree_before_it(
        calls in proptest::collection::vec(proptest::collection::vec(op(), 1..4), 1..6),
        pick in any::<prop::sample::Index>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let store = tempfile::tempdir().unwrap();
        fs::write(root.join("a"), "first\n").unwrap();
        fs::create_dir(root.join("x")).unwrap();
        fs::write(root.join("x/b"), "second\n").unwrap();
        let config = CheckpointConfig { store: Some(store.path().to_path_buf()), ..CheckpointConfig::default() };
        let recorder = Checkpoints::open(&config, &Workspace::new(&root).unwrap(), vec![root.clone()]).unwrap();
        let mut trees = Vec::new();
        for (n, ops) in calls.iter().enumerate() {
            trees.push(tree(&root));
            let recording = recorder.begin(&format!("c{n}"), "bash", "ops", None).unwrap();
            for op in ops {
                apply(&root, op);
            }
            recorder.end(recording).unwrap();
        }
        let k = pick.index(calls.len());
        let report = recorder.rewind(RewindTo::Call(format!("c{k}")), RewindMode::Safe);
        match report {
            Ok(report) => {
                prop_assert!(report.applied, "{:#?}", report);
                prop_assert!(report.not_restored.is_empty(), "{:#?}", report);
                prop_assert_eq!(tree(&root), trees[k].clone());
            }
            // Call k and every later one changed nothing: no checkpoint.
            Err(_) => prop_assert_eq!(tree(&root), trees[k].clone()),
        }
    }
}
