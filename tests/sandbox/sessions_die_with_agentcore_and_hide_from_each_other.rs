//! A session's folders are its own: 0700 folders and 0600 files that other
//! users cannot read, hidden from the commands of other sessions of the
//! same user; and when agentcore is killed (SIGKILL) its confined jobs die
//! with it, and the next start removes its folders and names the
//! unconfined jobs it left running.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::require::*;
use crate::support::sandbox::*;

/// `agentcore run` with `TMPDIR` of the scene's own, fed line by line.
struct Live {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
}

fn start(s: &Scene, user: User, tmp: &Path) -> Live {
    let mut cmd = agentcore(s, user, "bypass", &[]);
    cmd.env("TMPDIR", tmp);
    let mut child = cmd.spawn().unwrap();
    let stdin = child.stdin.take();
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    Live {
        child,
        stdin,
        lines,
    }
}

impl Live {
    fn step(&mut self, line: &Value, id: &str) -> String {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
        let mut events = Vec::new();
        for line in self.lines.by_ref() {
            let event: Value = serde_json::from_str(&line.unwrap()).unwrap();
            let done = event["type"] == "tool_exec_end" && event["tool_id"] == id;
            events.push(event);
            if done {
                return text_of(&events, id);
            }
        }
        panic!("agentcore ended before {id}: {events:?}");
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn session_folders(tmp: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.starts_with("agentcore-output-") || name.starts_with("agentcore-sandbox-")
        })
        .collect();
    found.sort();
    found
}

fn a_shared_tmp(s: &Scene) -> PathBuf {
    let tmp = s.dir.join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    open_to_all(&tmp);
    tmp
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces), root and setpriv (it runs as root and as nobody)"]
fn a_sessions_folders_are_closed_to_other_users_and_hidden_from_other_sessions() {
    require_sandbox();
    let s = scene(CONFINED);
    let tmp = a_shared_tmp(&s);
    let mut a = start(&s, User::Current, &tmp);
    let text = a.step(
        &bash("a", "echo A-TMP-SECRET > $TMPDIR/secret && echo $TMPDIR && seq 1 200000 | sed 's/^/A-OUT-SECRET /'"),
        "a",
    );
    let a_tmp = text
        .lines()
        .find(|l| l.contains("agentcore-sandbox-"))
        .unwrap_or_else(|| panic!("{}", &text[..text.len().min(2000)]))
        .trim()
        .to_owned();
    let folders = session_folders(&tmp);
    assert_eq!(folders.len(), 2, "{folders:?}");
    let mut saved = Vec::new();
    for folder in &folders {
        let mode = std::fs::metadata(folder).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o700, "{}", folder.display());
        for entry in walk(folder) {
            let meta = std::fs::symlink_metadata(&entry).unwrap();
            let mode = meta.mode() & 0o777;
            // What the command itself makes in its $TMPDIR has its umask's
            // mode, behind the 0700 folders.
            let by_command = entry
                .strip_prefix(folder)
                .is_ok_and(|r| r.starts_with("tmp"))
                && entry.parent() != Some(folder);
            if meta.is_dir() {
                assert_eq!(mode, 0o700, "{}", entry.display());
            } else if !by_command {
                assert_eq!(mode, 0o600, "{}", entry.display());
                if entry.extension().is_some_and(|e| e == "log") {
                    saved.push(entry.clone());
                }
            }
        }
    }
    assert!(!saved.is_empty(), "no saved output: {folders:?}");
    let saved = saved[0].display().to_string();
    // Session B of the same user, and of nobody.
    for user in current_and_nobody() {
        let mut b = start(&s, user, &tmp);
        let text = b.step(
            &bash(
                "b",
                &format!(
                    "cat {a_tmp}/secret {saved} 2>&1 | head -3; ls {} 2>&1 | head; true",
                    folders
                        .iter()
                        .map(|f| f.display().to_string())
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
            ),
            "b",
        );
        assert!(!text.contains("A-TMP-SECRET"), "{user:?}: {text}");
        assert!(!text.contains("A-OUT-SECRET"), "{user:?}: {text}");
        // `ls` of each folder lists nothing in it.
        assert!(
            !text.lines().any(|l| l == "secret"
                || l == "owner"
                || l == "tmp"
                || l.ends_with(".log") && !l.contains(' ')),
            "{user:?}: {text}"
        );
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut all = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            all.extend(walk(&path));
        }
        all.push(path);
    }
    all
}

fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s.rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

/// The pids of processes whose command line holds `needle`.
fn pids_with(needle: &str) -> Vec<i32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline"))
            && String::from_utf8_lossy(&cmdline)
                .replace('\0', " ")
                .contains(needle)
            && alive(pid)
        {
            pids.push(pid);
        }
    }
    pids
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces)"]
fn jobs_and_folders_of_a_killed_agentcore_do_not_outlive_it_unnoticed() {
    require_sandbox();
    let s = scene(CONFINED);
    let tmp = a_shared_tmp(&s);
    let confined = format!("{}.5", 7000 + std::process::id() % 1000);
    let unconfined = format!("{}.25", 7000 + std::process::id() % 1000);
    let mut live = start(&s, User::Current, &tmp);
    let text = live.step(
        &json!({"turn": [{"id": "c", "name": "bash", "args": {
            "command": format!("sleep {confined}"), "run_in_background": true}}]}),
        "c",
    );
    assert!(text.starts_with("Started background job"), "{text}");
    // An unconfined job: a session without a sandbox.
    let off = s.dir.join("off.toml");
    put(&off, "[sandbox]\nmode = \"off\"\n");
    let cmd = agentcore(&s, User::Current, "bypass", &[]);
    let args: Vec<std::ffi::OsString> = cmd
        .get_args()
        .map(|a| {
            if Path::new(a) == s.policy {
                off.clone().into_os_string()
            } else {
                a.to_owned()
            }
        })
        .collect();
    let mut cmd = std::process::Command::new(cmd.get_program());
    cmd.args(args)
        .env("HOME", &s.home)
        .env("TMPDIR", &tmp)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let stdin = child.stdin.take();
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut open = Live {
        child,
        stdin,
        lines,
    };
    let text = open.step(
        &json!({"turn": [{"id": "u", "name": "bash", "args": {
            "command": format!("sleep {unconfined}"), "run_in_background": true}}]}),
        "u",
    );
    assert!(text.starts_with("Started background job"), "{text}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while (pids_with(&format!("sleep {confined}")).is_empty()
        || pids_with(&format!("sleep {unconfined}")).is_empty())
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    let orphan = pids_with(&format!("sleep {unconfined}"));
    assert_eq!(orphan.len(), 1, "the unconfined job runs");
    assert_eq!(
        pids_with(&format!("sleep {confined}")).len(),
        1,
        "the confined job runs"
    );
    assert_eq!(
        session_folders(&tmp).len(),
        3,
        "two output folders, one sandbox folder"
    );
    // SIGKILL: no clean-up of its own.
    for agentcore in [&mut live, &mut open] {
        agentcore.child.kill().unwrap();
        agentcore.child.wait().unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(3);
    while !pids_with(&format!("sleep {confined}")).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        pids_with(&format!("sleep {confined}")).is_empty(),
        "the confined job outlived agentcore"
    );
    assert_eq!(session_folders(&tmp).len(), 3, "nothing removed them yet");
    // The next start.
    let out = output_of(
        || {
            let mut cmd = agentcore(&s, User::Current, "bypass", &[]);
            cmd.env("TMPDIR", &tmp);
            cmd
        },
        &[bash("n", "echo next")],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("removed 3 folder(s) of agentcore sessions that died"),
        "{stderr}"
    );
    assert!(stderr.contains(&format!("pids {}", orphan[0])), "{stderr}");
    assert!(
        session_folders(&tmp).is_empty(),
        "{:?}",
        session_folders(&tmp)
    );
    // The library ends the orphan; a pid of another process is not touched.
    let report = agentcore::process::StaleSessions {
        removed: Vec::new(),
        orphans: vec![agentcore::process::Orphan {
            pid: orphan[0],
            start: start_time(orphan[0]),
        }],
    };
    assert_eq!(report.kill_orphans(), 1);
    let deadline = Instant::now() + Duration::from_secs(3);
    while alive(orphan[0]) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(orphan[0]));
    let stranger = agentcore::process::Orphan {
        pid: std::process::id() as i32,
        start: 1,
    };
    assert!(!stranger.kill());
}

fn start_time(pid: i32) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let rest = &text[text.rfind(')').unwrap() + 1..];
    rest.split_whitespace().nth(19).unwrap().parse().unwrap()
}
