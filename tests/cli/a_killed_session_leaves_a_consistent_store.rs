//! SIGKILL at any moment of recording or of rewinding leaves the store and
//! the tree consistent: the next start finishes what was cut off, and a
//! rewind then puts the tree back byte for byte.
//!
//! The kills land at spread-out moments of a measured run (the first look
//! at the tree, the command, the look after it, the log records), so some
//! hit each phase; each is checked whatever it hit.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::cli::turn;

type Tree = BTreeMap<String, (u32, Vec<u8>)>;

/// Every file and folder below `root`: mode and bytes.
fn tree(root: &Path) -> Tree {
    let mut out = Tree::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = fs::symlink_metadata(&path).unwrap();
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            let mode = meta.permissions().mode();
            if meta.is_dir() {
                todo.push(path);
                out.insert(rel, (mode, Vec::new()));
            } else {
                out.insert(rel, (mode, fs::read(&path).unwrap()));
            }
        }
    }
    out
}

/// A tree big enough that looking at it takes a while: 20 folders of 100
/// files.
fn make_tree(root: &Path) {
    for d in 0..20 {
        let dir = root.join(format!("d{d}"));
        fs::create_dir(&dir).unwrap();
        for f in 0..100 {
            fs::write(
                dir.join(format!("f{f}.txt")),
                format!("{d}/{f}\n").repeat(20),
            )
            .unwrap();
        }
    }
}

/// The command: modifies 40 files, creates 100, deletes 10, chmods 5, with
/// markers saying it started and ended (in the root: the sandbox confines
/// its writes there, and kills it with the session).
const COMMAND: &str = "echo > started.mark; for i in $(seq 0 39); do echo changed >> d1/f$i.txt; done; \
     mkdir made; for i in $(seq 0 99); do echo $i > made/n$i.txt; done; \
     rm d2/f1*.txt; chmod 600 d3/f1.txt d3/f2.txt d3/f3.txt d3/f4.txt d3/f5.txt; \
     echo > done.mark";

fn agentcore(state: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_agentcore"));
    cmd.env("XDG_STATE_HOME", state)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Starts `agentcore run --checkpoints` on `root` with the command's turn
/// on stdin; stdin is closed when `close` (the run then ends by itself).
fn start_run(root: &Path, state: &Path, close: bool) -> Child {
    let mut child = agentcore(state)
        .args([
            "run",
            "--format",
            "jsonl",
            "--mode",
            "bypass",
            "--checkpoints",
            "--root",
        ])
        .arg(root)
        .spawn()
        .unwrap();
    let input = turn(&[("b", "bash", json!({"command": COMMAND}))]);
    let mut stdin = child.stdin.take().unwrap();
    use std::io::Write;
    stdin.write_all(input.as_bytes()).unwrap();
    if !close {
        // Kept open: the run waits for more input until it is killed.
        std::mem::forget(stdin);
    }
    child
}

fn checkpoints(root: &Path, state: &Path, args: &[&str]) -> std::process::Output {
    agentcore(state)
        .arg("checkpoints")
        .args(args)
        .arg("--root")
        .arg(root)
        .output()
        .unwrap()
}

/// The listing, which also finishes what a kill cut off.
fn listing(root: &Path, state: &Path) -> Value {
    let out = checkpoints(root, state, &["ls", "--json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("no store at") {
        return json!({"checkpoints": []});
    }
    assert!(out.status.success(), "ls after a kill: {stderr}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Waits for the command a killed run left behind to end: killed with the
/// session (the sandbox's init dies with it), or run to its end (an
/// orphan, unconfined): until it is done or the tree stays the same for
/// 300 ms.
fn settle(root: &Path) {
    let until = Instant::now() + Duration::from_secs(60);
    let mut last = tree(root);
    while !root.join("done.mark").exists() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(300));
        let now = tree(root);
        if now == last {
            break;
        }
        last = now;
    }
}

fn kill(child: &mut Child) {
    // SIGKILL: no destructor, no saved index, the flock dropped by the
    // kernel.
    let _ = child.kill();
    let _ = child.wait();
}

/// Spread-out moments within `span`.
fn moments(span: Duration, n: u32) -> Vec<Duration> {
    (0..n).map(|k| span * k / n).collect()
}

#[test]
fn a_kill_while_recording_leaves_a_store_whose_rewind_restores_the_tree() {
    // How long a whole run takes here, to spread the kills over it.
    let span = {
        let (dir, state) = (temp(), temp());
        let root = fs::canonicalize(dir.path()).unwrap();
        make_tree(&root);
        let started = Instant::now();
        let out = start_run(&root, state.path(), true)
            .wait_with_output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        started.elapsed()
    };
    for at in moments(span, 10) {
        let (dir, state) = (temp(), temp());
        let root = fs::canonicalize(dir.path()).unwrap();
        make_tree(&root);
        let before = tree(&root);
        let mut child = start_run(&root, state.path(), false);
        std::thread::sleep(at);
        kill(&mut child);
        settle(&root);

        let listed = listing(&root, state.path());
        let kept = listed["checkpoints"].as_array().unwrap().clone();
        if root.join("started.mark").exists() {
            // The command ran: what it changed is a checkpoint (recorded
            // by the run, or after the kill by the next start).
            assert!(!kept.is_empty(), "killed at {at:?}: {listed:#}");
            let first = kept[0]["id"].as_u64().unwrap().to_string();
            let out = checkpoints(&root, state.path(), &["rewind", "--to", &first]);
            assert!(
                out.status.success(),
                "killed at {at:?}: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        } else {
            assert!(
                kept.iter()
                    .all(|cp| cp["changes"].as_array().is_none_or(Vec::is_empty)),
                "killed at {at:?} before the command: {listed:#}"
            );
        }
        assert!(
            tree(&root) == before,
            "killed at {at:?}: the tree is not back as it was"
        );
    }
}

#[test]
fn a_kill_while_rewinding_is_finished_by_the_next_start() {
    let (dir, state) = (temp(), temp());
    let root = fs::canonicalize(dir.path()).unwrap();
    make_tree(&root);
    let original = tree(&root);
    let out = start_run(&root, state.path(), true)
        .wait_with_output()
        .unwrap();
    assert!(out.status.success());
    let changed = tree(&root);
    assert!(changed != original);
    let first = listing(&root, state.path())["checkpoints"][0]["id"]
        .as_u64()
        .unwrap()
        .to_string();

    // How long a rewind and the rewind of that rewind take.
    let span = {
        let started = Instant::now();
        assert!(
            checkpoints(&root, state.path(), &["rewind", "--to", &first])
                .status
                .success()
        );
        let span = started.elapsed();
        assert!(tree(&root) == original);
        let undo = listing(&root, state.path())["checkpoints"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()["id"]
            .as_u64()
            .unwrap()
            .to_string();
        assert!(
            checkpoints(&root, state.path(), &["rewind", "--to", &undo])
                .status
                .success()
        );
        assert!(tree(&root) == changed, "the rewind was undone");
        span
    };
    for at in moments(span, 10) {
        let mut child = agentcore(state.path())
            .args(["checkpoints", "rewind", "--to", &first, "--root"])
            .arg(&root)
            .spawn()
            .unwrap();
        std::thread::sleep(at);
        kill(&mut child);
        // The next start finishes a rewind that was cut off, or finds none
        // begun: the tree is whole, before or after.
        listing(&root, state.path());
        let now = tree(&root);
        assert!(
            now == original || now == changed,
            "killed at {at:?}: a rewind half done: {} path(s) not as before, {} not as after, e.g. {:?}",
            differ(&now, &original).len(),
            differ(&now, &changed).len(),
            differ(&now, &original)
                .into_iter()
                .take(5)
                .collect::<Vec<_>>()
        );
        // Back to the changed tree for the next kill: rewind the rewind.
        if now == original {
            let undo = listing(&root, state.path())["checkpoints"]
                .as_array()
                .unwrap()
                .last()
                .unwrap()["id"]
                .as_u64()
                .unwrap()
                .to_string();
            let out = checkpoints(&root, state.path(), &["rewind", "--to", &undo]);
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stdout)
            );
            assert!(tree(&root) == changed, "killed at {at:?}: the undo");
        }
    }
    // And at the end a rewind still goes all the way back.
    assert!(
        checkpoints(&root, state.path(), &["rewind", "--to", &first])
            .status
            .success()
    );
    assert!(tree(&root) == original);
}

/// The paths where two trees differ.
fn differ(a: &Tree, b: &Tree) -> Vec<String> {
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .cloned()
        .collect()
}

fn temp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}
