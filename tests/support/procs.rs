//! Processes of the tests' commands, found in /proc by a number no other
//! process has in its argv, and the environment those commands start with.

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

/// A number no other process has in its argv: this process's id and a
/// counter that every test of the binary shares, so that no two tests of
/// one binary get the same number.
pub fn unique() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("7{:05}{:03}", std::process::id() % 100_000, n % 1000)
}

/// Pids of live (not zombie) processes with `arg` as one of their arguments.
pub fn alive_with_arg(arg: &str) -> Vec<u32> {
    alive_with_arg_and_cmdline(arg)
        .into_iter()
        .map(|(pid, _)| pid)
        .collect()
}

/// [`alive_with_arg`], each pid with its command line (arguments joined by
/// spaces).
pub fn alive_with_arg_and_cmdline(arg: &str) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        if !cmdline.split(|b| *b == 0).any(|a| a == arg.as_bytes()) {
            continue;
        }
        // Bytes: a process's name need not be UTF-8.
        let state = std::fs::read(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| {
                let s = String::from_utf8_lossy(&s);
                let rest = &s[s.rfind(')')? + 1..];
                rest.split_whitespace().next()?.chars().next()
            });
        if matches!(state, Some('Z' | 'X') | None) {
            continue;
        }
        out.push((pid, String::from_utf8_lossy(&cmdline).replace('\0', " ")));
    }
    out
}

/// Kills what a failed test left (by its argv number).
pub struct Leftovers(pub Vec<String>);

impl Drop for Leftovers {
    fn drop(&mut self) {
        for n in &self.0 {
            for pid in alive_with_arg(n) {
                let _ = Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status();
            }
        }
    }
}

/// Whether `pid` names a live process (a zombie is dead).
pub fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .unwrap_or("X");
        !matches!(state, "Z" | "X" | "x")
    })
}

/// Whether the tests run as root (effective user id 0).
pub fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// `PATH` and `HOME` of this process: the base environment the bash tool's
/// commands get in the tests that build the tool themselves.
pub fn path_and_home() -> Vec<(String, String)> {
    std::env::vars()
        .filter(|(k, _)| k == "PATH" || k == "HOME")
        .collect()
}

/// Copies the executable `from` to `to` with `cp`, so that this process
/// never holds the copy open for writing: a child that another test of the
/// binary forked meanwhile would inherit that descriptor until its exec,
/// and running the copy then fails with ETXTBSY ("Text file busy").
pub fn copy_executable(from: impl AsRef<Path>, to: impl AsRef<Path>) {
    let status = Command::new("cp")
        .arg(from.as_ref())
        .arg(to.as_ref())
        .status()
        .expect("run cp");
    assert!(
        status.success(),
        "cp {:?} {:?}: {status}",
        from.as_ref(),
        to.as_ref()
    );
}
