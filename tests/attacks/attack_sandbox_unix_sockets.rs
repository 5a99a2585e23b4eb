//! Host UNIX sockets are unreachable from a confined command whenever they
//! were made: before the session started, after it started, while the
//! command runs. Git's credential cache gives a confined `git credential
//! fill` no password, started before or after the session.

use std::io::{BufRead, BufReader, ErrorKind, Write};
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::support::require::*;
use crate::support::sandbox::*;

/// An `agentcore run` fed one line at a time: `step` writes a line and
/// reads events until the end of call `id`.
struct Session {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
}

impl Session {
    fn start(s: &Scene, user: User) -> Session {
        let mut child = agentcore(s, user, "bypass", &[]).spawn().unwrap();
        let stdin = child.stdin.take();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Session {
            child,
            stdin,
            lines,
        }
    }

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

impl Drop for Session {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

fn connect_script(path: &Path) -> String {
    format!(
        "/usr/bin/python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect(\"{}\"); s.sendall(b\"hi\"); print(\"CONNECTED\")'; true",
        path.display()
    )
}

fn refused(listener: &UnixListener) -> bool {
    matches!(listener.accept(), Err(e) if e.kind() == ErrorKind::WouldBlock)
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces), /usr/bin/python3, root and setpriv (it runs as root and as nobody)"]
fn a_unix_socket_made_after_the_session_started_is_unreachable() {
    require_sandbox();
    require_file("/usr/bin/python3");
    for user in current_and_nobody() {
        let s = scene(CONFINED);
        let mut session = Session::start(&s, user);
        assert!(
            session
                .step(&bash("first", "echo started"), "first")
                .contains("started")
        );
        // Made after the session (and its sandbox) started, in a folder
        // that is not hidden.
        let path = s.outside.join("late.sock");
        let listener = UnixListener::bind(&path).unwrap();
        listener.set_nonblocking(true).unwrap();
        open_to_all(&path);
        let text = session.step(&bash("late", &connect_script(&path)), "late");
        assert!(!text.contains("CONNECTED"), "{user:?}: {text}");
        assert!(refused(&listener), "{user:?}: {text}");
        // Made while a background job of the session runs, which then
        // tries it.
        let during = s.outside.join("during.sock");
        let job = serde_json::json!({"turn": [{"id": "bg", "name": "bash", "args": {
            "command": format!("sleep 1; {}", connect_script(&during)),
            "run_in_background": true
        }}]});
        session.step(&job, "bg");
        let listener = UnixListener::bind(&during).unwrap();
        listener.set_nonblocking(true).unwrap();
        open_to_all(&during);
        let wait = serde_json::json!({"turn": [{"id": "out", "name": "bash_output", "args": {"job_id": "job-1", "wait_ms": 4000}}]});
        let text = session.step(&wait, "out");
        assert!(!text.contains("CONNECTED"), "{user:?}: {text}");
        assert!(refused(&listener), "{user:?}: {text}");
    }
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces) and /usr/bin/python3"]
fn a_commands_own_unix_sockets_in_its_tmpdir_still_work_through_socketpair() {
    require_sandbox();
    require_file("/usr/bin/python3");
    let s = scene(CONFINED);
    let events = run(
        &s,
        "bypass",
        &[bash(
            "p",
            "/usr/bin/python3 -c 'import socket; a, b = socket.socketpair(); a.sendall(b\"ping\"); print(b.recv(4).decode())'",
        )],
    );
    assert!(text_of(&events, "p").contains("ping"), "{events:?}");
}

fn git(home: &Path, args: &[&str], input: &str) -> std::process::Output {
    let mut child = Command::new("git")
        .args(args)
        .env("HOME", home)
        .env_remove("XDG_CACHE_HOME")
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

const STORE: &str = "protocol=https\nhost=example.com\nusername=u\npassword=CACHED-SECRET-PW\n\n";
const FILL: &str = "printf 'protocol=https\\nhost=example.com\\nusername=u\\n\\n' | git -c credential.helper=cache credential fill 2>&1; true";

/// Stores the credential in a cache daemon of `home` (git starts it, its
/// socket at `~/.cache/git/credential/socket`) and checks that it answers
/// outside.
fn cache(home: &Path) {
    let out = git(
        home,
        &["-c", "credential.helper=cache", "credential", "approve"],
        STORE,
    );
    assert!(out.status.success(), "{out:?}");
    let out = git(
        home,
        &["-c", "credential.helper=cache", "credential", "fill"],
        "protocol=https\nhost=example.com\nusername=u\n\n",
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("CACHED-SECRET-PW"),
        "the cache does not answer outside: {out:?}"
    );
}

fn stop_cache(home: &Path) {
    let _ = git(home, &["credential-cache", "exit"], "");
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces) and git"]
fn git_credential_cache_gives_a_confined_command_no_password() {
    require_sandbox();
    require_program("git");
    // Started before the session.
    let s = scene(CONFINED);
    cache(&s.home);
    assert!(s.home.join(".cache/git/credential/socket").exists());
    let events = run(&s, "bypass", &[bash("fill", FILL)]);
    let text = text_of(&events, "fill");
    stop_cache(&s.home);
    assert!(!text.contains("CACHED-SECRET-PW"), "before: {text}");

    // Started after the session.
    let s = scene(CONFINED);
    let mut session = Session::start(&s, User::Current);
    assert!(
        session
            .step(&bash("first", "echo started"), "first")
            .contains("started")
    );
    cache(&s.home);
    let text = session.step(&bash("fill", FILL), "fill");
    // And while a command runs: the socket is made during its sleep.
    stop_cache(&s.home);
    let _ = std::fs::remove_dir_all(s.home.join(".cache"));
    let job = serde_json::json!({"turn": [{"id": "bg", "name": "bash", "args": {
        "command": format!("sleep 1.5; {FILL}"),
        "run_in_background": true
    }}]});
    session.step(&job, "bg");
    cache(&s.home);
    let wait = serde_json::json!({"turn": [{"id": "out", "name": "bash_output", "args": {"job_id": "job-1", "wait_ms": 5000}}]});
    let during = session.step(&wait, "out");
    stop_cache(&s.home);
    drop(session);
    std::thread::sleep(Duration::from_millis(50));
    assert!(!text.contains("CACHED-SECRET-PW"), "after: {text}");
    assert!(!during.contains("CACHED-SECRET-PW"), "during: {during}");
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces)"]
fn credential_files_and_agent_sockets_of_the_home_are_hidden_by_default() {
    require_sandbox();
    let s = scene(CONFINED);
    for (rel, text) in [
        (
            ".config/git/credentials",
            "https://u:CONFIG-GIT-SECRET@example.com\n",
        ),
        (
            ".git-credentials",
            "https://u:GIT-CREDENTIALS-SECRET@example.com\n",
        ),
        (
            ".claude.json",
            "{\"oauthAccount\": \"CLAUDE-JSON-SECRET\"}\n",
        ),
        (".docker/run/note", "DOCKER-RUN-SECRET\n"),
        (".1password/note", "ONEPASSWORD-SECRET\n"),
        (".cache/git/credential/note", "CREDENTIAL-CACHE-SECRET\n"),
    ] {
        put(&s.home.join(rel), text);
    }
    let events = run(
        &s,
        "bypass",
        &[bash(
            "cat",
            "cat ~/.config/git/credentials ~/.git-credentials ~/.claude.json ~/.docker/run/note \
             ~/.1password/note ~/.cache/git/credential/note 2>&1; ls -a ~/.docker/run ~/.1password; true",
        )],
    );
    let text = text_of(&events, "cat");
    assert!(!text.contains("SECRET"), "{text}");
}
