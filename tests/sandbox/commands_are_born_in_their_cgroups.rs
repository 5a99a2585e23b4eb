//! On cgroup v1, a confined command is forked by a thread already in the
//! cgroup made for it (the spawner), so it skips the move into it; what
//! that must never change: every command is in a cgroup of its own,
//! however it was spawned; agentcore's own threads are not left in it
//! (the spawner leaves right after the fork, and the command's process
//! limit is its own again); the cgroup goes when the command does (off
//! the call's path, within moments).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use agentcore::sandbox::{Sandbox, SandboxLimits};

use crate::support::require::require_root;

/// This process's v1 folder of `controller` (e.g. `memory`), from
/// `/proc/self/cgroup` and the mounts; fails the test without one.
fn v1_root(controller: &str) -> PathBuf {
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap();
    let path = own
        .lines()
        .find_map(|l| {
            let mut parts = l.splitn(3, ':');
            let (_, names, path) = (parts.next()?, parts.next()?, parts.next()?);
            names
                .split(',')
                .any(|n| n == controller)
                .then(|| path.to_owned())
        })
        .unwrap_or_else(|| panic!("this test needs cgroup v1's {controller} hierarchy"));
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
    let mount = mounts
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() > 3 && f[2] == "cgroup" && f[3].split(',').any(|o| o == controller))
                .then(|| f[1].to_owned())
        })
        .unwrap_or_else(|| panic!("this test needs cgroup v1's {controller} hierarchy"));
    Path::new(&mount).join(path.trim_start_matches('/'))
}

/// The `agentcore-PID-N` name of the v1 `controller` line of a
/// `/proc/…/cgroup` text, if it names one.
fn command_cgroup(text: &str, controller: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, names, path) = (parts.next()?, parts.next()?, parts.next()?);
        if !names.split(',').any(|n| n == controller) {
            return None;
        }
        let name = path.rsplit('/').next()?;
        name.starts_with("agentcore-").then(|| name.to_owned())
    })
}

/// The `memory` cgroups the spawner threads of this process are in now
/// (those in a command cgroup).
fn spawner_cgroups() -> Vec<String> {
    let mut found = Vec::new();
    for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if comm.trim() == "agentcore-spawn" {
            let text = std::fs::read_to_string(task.path().join("cgroup")).unwrap_or_default();
            found.extend(command_cgroup(&text, "memory"));
        }
    }
    found
}

/// A sandbox writing under `ws`, with a memory and a process limit (so a
/// cgroup of each kind per command).
fn limited(ws: &Path) -> Sandbox {
    Sandbox::builder()
        .writable([ws])
        .limits(limits())
        .build()
        .unwrap()
}

fn limits() -> SandboxLimits {
    let mut limits = SandboxLimits::default();
    limits.memory = Some(1 << 30);
    limits.processes = Some(200);
    limits
}

/// A confined `bash -c script` with its output piped; the confinement.
fn confined(
    sandbox: &Sandbox,
    script: &str,
) -> (tokio::process::Command, agentcore::sandbox::Confinement) {
    let mut cmd = tokio::process::Command::new("/bin/bash");
    cmd.arg("-c")
        .arg(script)
        .env("TMPDIR", sandbox.tmpdir())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let confinement = sandbox.confine(&mut cmd).unwrap();
    (cmd, confinement)
}

/// Polls `check` for up to 5 s.
fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !check() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[tokio::test]
#[ignore = "needs root and cgroup v1's memory and pids hierarchies"]
async fn a_command_is_born_in_its_cgroup_which_the_spawner_leaves_at_once() {
    require_root();
    let memory_root = v1_root("memory");
    let pids_root = v1_root("pids");
    let ws = tempfile::tempdir().unwrap();
    let sandbox = limited(ws.path());
    let mut born_in = 0;
    for _ in 0..20 {
        // The cgroup made ahead; other tests of this binary may take it
        // first, so the command's is compared with it, not assumed.
        eventually("no spawner moved into a cgroup made ahead", || {
            !spawner_cgroups().is_empty()
        });
        let ahead = spawner_cgroups();
        let (mut cmd, confinement) = confined(
            &sandbox,
            "cat /proc/self/cgroup; echo ready; read -t 5 _ || true",
        );
        cmd.stdin(Stdio::piped());
        let mut child = confinement.spawn(&mut cmd).unwrap();
        drop(cmd);
        let mut stdout = child.stdout.take().unwrap();
        let mut text = Vec::new();
        let mut chunk = [0u8; 4096];
        while !String::from_utf8_lossy(&text).contains("ready") {
            use tokio::io::AsyncReadExt;
            let n = stdout.read(&mut chunk).await.unwrap();
            assert!(
                n > 0,
                "the command ended early: {}",
                String::from_utf8_lossy(&text)
            );
            text.extend_from_slice(&chunk[..n]);
        }
        let text = String::from_utf8_lossy(&text).into_owned();
        let memory = command_cgroup(&text, "memory").expect("no memory cgroup of its own");
        let pids = command_cgroup(&text, "pids").expect("no pids cgroup of its own");
        assert_eq!(memory, pids, "{text}");
        if ahead.contains(&memory) {
            born_in += 1;
        }
        // While the command runs: no thread of this process stays in its
        // cgroup, and its process limit is the command's own (200 and M
        // and G), not one more for the spawner.
        let own = std::process::id().to_string();
        eventually(
            "a thread of agentcore stayed in the command's cgroup",
            || {
                let procs = std::fs::read_to_string(memory_root.join(&memory).join("cgroup.procs"))
                    .unwrap_or_default();
                let pid_procs = std::fs::read_to_string(pids_root.join(&pids).join("cgroup.procs"))
                    .unwrap_or_default();
                !procs.lines().chain(pid_procs.lines()).any(|p| p == own)
            },
        );
        eventually("the process limit stayed raised for the spawner", || {
            std::fs::read_to_string(pids_root.join(&pids).join("pids.max"))
                .is_ok_and(|max| max.trim() == "202")
        });
        drop(child.stdin.take());
        assert!(child.wait().await.unwrap().success());
        drop(confinement);
        eventually("the command's cgroup outlived it", || {
            !memory_root.join(&memory).exists() && !pids_root.join(&pids).exists()
        });
    }
    assert!(
        born_in > 0,
        "no command of twenty was forked in the cgroup the spawner had made ahead"
    );
}

#[tokio::test]
#[ignore = "needs root and cgroup v1's memory and pids hierarchies"]
async fn a_command_spawned_elsewhere_still_joins_its_own_cgroup() {
    require_root();
    let memory_root = v1_root("memory");
    let ws = tempfile::tempdir().unwrap();
    let sandbox = limited(ws.path());
    for _ in 0..5 {
        eventually("no spawner moved into a cgroup made ahead", || {
            !spawner_cgroups().is_empty()
        });
        // `cmd.spawn()` on this thread, not the confinement's: M is not
        // born in the cgroup, finds that out and joins it.
        let (mut cmd, confinement) = confined(&sandbox, "cat /proc/self/cgroup");
        let output = cmd.output().await.unwrap();
        drop(cmd);
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(output.status.success(), "{text}");
        let memory = command_cgroup(&text, "memory").expect("no memory cgroup of its own");
        assert_eq!(
            command_cgroup(&text, "pids").as_deref(),
            Some(memory.as_str())
        );
        let own = command_cgroup(
            &std::fs::read_to_string("/proc/self/cgroup").unwrap(),
            "memory",
        );
        assert_ne!(
            own.as_deref(),
            Some(memory.as_str()),
            "agentcore is in the command's cgroup"
        );
        drop(confinement);
        eventually("the command's cgroup outlived it", || {
            !memory_root.join(&memory).exists()
        });
    }
}
