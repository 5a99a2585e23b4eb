//! The scene of a sandbox test through `agentcore run`: a workspace, a
//! home, an outside folder and a policy file, run as the current user or
//! as `nobody`, and the helpers to read the events.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

pub const CONFINED: &str = "[sandbox]\nmode = \"required\"\n";

/// Who runs agentcore.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum User {
    /// The user running the tests (root on CI machines and here).
    Current,
    /// `setpriv --reuid nobody --regid nogroup --clear-groups`.
    Nobody,
}

/// `setpriv`, when installed.
pub fn setpriv() -> Option<&'static str> {
    ["/usr/bin/setpriv", "/bin/setpriv"]
        .into_iter()
        .find(|p| Path::new(p).exists())
}

/// The current user, then `nobody`: a test that runs as both needs root
/// and `setpriv`, and fails without them.
pub fn current_and_nobody() -> [User; 2] {
    super::require::require_root_and_setpriv();
    [User::Current, User::Nobody]
}

/// A fresh directory for one attack: the workspace (`ws`, with `a.txt`),
/// a home, an outside directory and the policy file. Everything is open
/// to `nobody`, so that only the sandbox can refuse.
pub struct Scene {
    _dir: tempfile::TempDir,
    pub dir: PathBuf,
    pub root: PathBuf,
    pub home: PathBuf,
    pub outside: PathBuf,
    pub policy: PathBuf,
}

pub fn scene(policy: &str) -> Scene {
    let dir = tempfile::Builder::new()
        .prefix("agentcore-attack-")
        .tempdir_in("/tmp")
        .unwrap();
    let path = std::fs::canonicalize(dir.path()).unwrap();
    let root = path.join("ws");
    let home = path.join("home");
    let outside = path.join("outside");
    for d in [&root, &home, &outside] {
        std::fs::create_dir(d).unwrap();
    }
    for d in [&path, &root, &home, &outside] {
        open_to_all(d);
    }
    std::fs::write(root.join("a.txt"), "alpha\n").unwrap();
    let policy_file = path.join("policy.toml");
    std::fs::write(&policy_file, policy).unwrap();
    Scene {
        dir: path,
        root,
        home,
        outside,
        policy: policy_file,
        _dir: dir,
    }
}

pub fn open_to_all(path: &Path) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o777)).unwrap();
}

/// Writes `path` (making its parents) readable by all.
pub fn put(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The agentcore binary `user` can run: for `nobody`, a copy in the
/// scene (the build directory may be closed to it).
pub fn exe(scene: &Scene, user: User) -> PathBuf {
    match user {
        User::Current => PathBuf::from(env!("CARGO_BIN_EXE_agentcore")),
        User::Nobody => {
            let exe = scene.dir.join("agentcore");
            if !exe.exists() {
                super::procs::copy_executable(env!("CARGO_BIN_EXE_agentcore"), &exe);
                std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
            }
            exe
        }
    }
}

/// `agentcore run --format jsonl --mode MODE --policy P --root R` as
/// `user`, `HOME` the scene's home; `wrap` may put a program in front
/// (its words, then agentcore's).
pub fn agentcore(scene: &Scene, user: User, mode: &str, wrap: &[&str]) -> Command {
    let exe = exe(scene, user);
    let mut words: Vec<String> = wrap.iter().map(|w| (*w).to_owned()).collect();
    if user == User::Nobody {
        words.extend(
            [
                setpriv().unwrap(),
                "--reuid",
                "nobody",
                "--regid",
                "nogroup",
                "--clear-groups",
            ]
            .map(str::to_owned),
        );
    }
    words.push(exe.display().to_string());
    let mut cmd = Command::new(&words[0]);
    cmd.args(&words[1..])
        .args(["run", "--format", "jsonl", "--mode", mode, "--policy"])
        .arg(&scene.policy)
        .arg("--root")
        .arg(&scene.root)
        .env("HOME", &scene.home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

pub fn input(lines: &[Value]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// Runs `cmd` with these input lines; retries while the copied binary is
/// busy (another test's forked child may hold it open for writing until
/// that child execs).
pub fn output_of(mut make: impl FnMut() -> Command, lines: &[Value]) -> Output {
    let mut attempts = 0;
    loop {
        let mut child = make().spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input(lines).as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        if String::from_utf8_lossy(&out.stderr).contains("Text file busy") && attempts < 50 {
            attempts += 1;
            std::thread::sleep(Duration::from_millis(20));
            continue;
        }
        return out;
    }
}

pub fn events(out: &Output) -> Vec<Value> {
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        !events.is_empty(),
        "no output; stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    events
}

pub fn run_as(scene: &Scene, user: User, mode: &str, lines: &[Value]) -> Vec<Value> {
    events(&output_of(|| agentcore(scene, user, mode, &[]), lines))
}

pub fn run(scene: &Scene, mode: &str, lines: &[Value]) -> Vec<Value> {
    run_as(scene, User::Current, mode, lines)
}

/// One turn with one bash call.
pub fn bash(id: &str, command: &str) -> Value {
    json!({"turn": [{"id": id, "name": "bash", "args": {"command": command}}]})
}

/// One turn with one bash call of these arguments.
pub fn bash_args(id: &str, args: Value) -> Value {
    json!({"turn": [{"id": id, "name": "bash", "args": args}]})
}

/// The end event of call `id`: (outcome, text).
pub fn end(events: &[Value], id: &str) -> (String, String) {
    let end = events
        .iter()
        .find(|e| e["type"] == "tool_exec_end" && e["tool_id"] == id)
        .unwrap_or_else(|| panic!("no end for {id}: {events:?}"));
    let text = end["content"]
        .as_array()
        .map(|c| {
            c.iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    (end["outcome"].as_str().unwrap_or_default().to_owned(), text)
}

pub fn text_of(events: &[Value], id: &str) -> String {
    end(events, id).1
}

/// The names in `dir`.
pub fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// One turn of bash calls: `(id, args)`.
pub fn turn(calls: &[(&str, Value)]) -> Value {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(id, args)| json!({"id": id, "name": "bash", "args": args}))
        .collect();
    json!({ "turn": calls })
}

/// Runs one bash call with `args` as the current user; its (outcome,
/// text).
pub fn one_call(scene: &Scene, mode: &str, args: Value) -> (String, String) {
    end(&run(scene, mode, &[bash_args("c", args)]), "c")
}

static SLEEPERS: AtomicU32 = AtomicU32::new(0);

/// A sleep duration no other process uses, to find the sleeper by.
pub fn sleeper_seconds() -> u32 {
    100_000 + (std::process::id() % 10_000) * 10 + SLEEPERS.fetch_add(1, Ordering::Relaxed)
}

/// Whether a `sleep SECONDS` process is alive on the host.
pub fn sleeper_alive(seconds: u32) -> bool {
    let want = format!("sleep\0{seconds}\0");
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c == want.as_bytes())
            && std::fs::read_to_string(e.path().join("stat")).is_ok_and(|s| !s.contains(") Z "))
    })
}

/// `git ARGS` in `dir`, unconfined, as the test's user, with an identity
/// of its own and `HOME` there (no user configuration applies); its
/// stdout, after asserting it succeeded.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "safe.directory=*", "-c", "protocol.file.allow=always"])
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "user")
        .env("GIT_AUTHOR_EMAIL", "user@example.test")
        .env("GIT_COMMITTER_NAME", "user")
        .env("GIT_COMMITTER_EMAIL", "user@example.test")
        .env("HOME", dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
