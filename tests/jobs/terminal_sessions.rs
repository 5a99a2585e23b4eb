//! Issue 30, items 1, 2 and 4: terminal sessions. `bash` with `tty`
//! starts a program in a terminal and comes back when it waits for input
//! (seen in /proc, not guessed from the output), `write_stdin` types into
//! it, full-screen programs come back as their screen, Ctrl-C reaches the
//! program, sessions are jobs (`bash_output`, `kill_shell`, the session's
//! end), and a session started in the sandbox stays in it.
//!
//! Every test runs unconfined and again in the sandbox when this machine
//! has one. Waits are the tools' own (`yield_ms`); no test asserts how
//! fast anything is.
#![cfg(target_os = "linux")]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentcore::TypedTool;
use agentcore::process::OutputDir;
use agentcore::tools::bash::bash_output::BashOutputTool;
use agentcore::tools::bash::kill_shell::KillShellTool;
use agentcore::tools::bash::write_stdin::WriteStdinTool;
use agentcore::tools::bash::{BashTool, Jobs};
use agentcore::{Call, Outcome, Pipeline, ToolRegistry, ToolResult};
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::support::procs::{Leftovers, alive_with_arg, path_and_home, unique};

struct Fixture {
    root: tempfile::TempDir,
    outside: tempfile::TempDir,
    jobs: Arc<Jobs>,
    pipeline: Pipeline,
    calls: std::sync::atomic::AtomicU64,
}

/// Whether this machine confines commands at all.
fn sandbox_here() -> bool {
    agentcore::sandbox::check().enforced() != "unconfined"
}

/// Unconfined, then (where there is a sandbox) confined.
fn both() -> Vec<bool> {
    if sandbox_here() {
        vec![false, true]
    } else {
        vec![false]
    }
}

impl Fixture {
    fn new(sandboxed: bool) -> Self {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let output_dir = Arc::new(OutputDir::new().unwrap());
        let jobs = Arc::new(Jobs::default());
        let mut bash = BashTool::new(root.path().to_owned(), output_dir)
            .base_env(path_and_home())
            .jobs(jobs.clone());
        if sandboxed {
            bash = bash.sandbox(
                agentcore::sandbox::Sandbox::builder()
                    .writable([root.path().to_owned()])
                    .build()
                    .unwrap(),
            );
        }
        let registry = ToolRegistry::new()
            .with(bash.into_dyn())
            .unwrap()
            .with(BashOutputTool::new(jobs.clone()).into_dyn())
            .unwrap()
            .with(KillShellTool::new(jobs.clone()).into_dyn())
            .unwrap()
            .with(WriteStdinTool::new(jobs.clone()).into_dyn())
            .unwrap();
        let pipeline = Pipeline::builder().registry(Arc::new(registry)).build();
        Self {
            root,
            outside,
            jobs,
            pipeline,
            calls: Default::default(),
        }
    }

    async fn call(&self, tool: &str, args: Value) -> ToolResult {
        let n = self
            .calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let call = Call::new(format!("c{n}"), tool, args);
        self.pipeline.service().oneshot(call).await.unwrap()
    }

    /// Starts `command` in a terminal; the result and the session id.
    async fn start(&self, command: &str, extra: Value) -> (ToolResult, String) {
        let mut args = json!({"command": command, "tty": true, "yield_ms": 20_000});
        for (k, v) in extra.as_object().unwrap() {
            args[k] = v.clone();
        }
        let result = self.call("bash", args).await;
        assert_eq!(result.outcome, Outcome::Success, "{}", result.text());
        let id = session_id(&result.text());
        (result, id)
    }

    /// Types `text` and waits (up to 20 s) for what comes back.
    async fn type_in(&self, id: &str, text: &str) -> String {
        let result = self
            .call(
                "write_stdin",
                json!({"session_id": id, "text": text, "yield_ms": 20_000}),
            )
            .await;
        assert_eq!(result.outcome, Outcome::Success, "{}", result.text());
        result.text()
    }
}

/// The id in `Started terminal session ID (…): …`.
fn session_id(text: &str) -> String {
    let rest = text
        .strip_prefix("Started terminal session ")
        .unwrap_or_else(|| panic!("not a session start: {text}"));
    rest.split(' ').next().unwrap().to_owned()
}

const WAITING: &str = "Status: running, waiting for input";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_returns_waiting_for_input_and_the_answer_reaches_the_program() {
    for sandboxed in both() {
        let f = Fixture::new(sandboxed);
        let started = Instant::now();
        let (result, id) = f
            .start(
                "python3 -c 'n = input(\"name? \"); print(\"hello \" + n)'",
                json!({}),
            )
            .await;
        let text = result.text();
        assert!(text.contains("name? "), "{text}");
        assert!(text.ends_with(&format!("{WAITING}\nType into it with write_stdin {{\"session_id\": \"{id}\", \"text\": \"...\\n\"}}; stop it with kill_shell.")), "{text}");
        // It came back because the program waits, not after yield_ms.
        assert!(started.elapsed() < Duration::from_secs(15), "{text}");
        let text = f.type_in(&id, "bob\n").await;
        assert!(text.contains("hello bob"), "sandboxed {sandboxed}: {text}");
        assert!(text.ends_with("Status: exited with code 0"), "{text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_repl_evaluates_three_inputs() {
    for sandboxed in both() {
        let f = Fixture::new(sandboxed);
        let (result, id) = f.start("python3 -q", json!({})).await;
        assert!(result.text().contains(">>> "), "{}", result.text());
        assert!(result.text().contains(WAITING), "{}", result.text());
        let text = f.type_in(&id, "x = 6\n").await;
        assert!(text.contains(WAITING), "{text}");
        let text = f.type_in(&id, "y = 7\n").await;
        assert!(text.contains(WAITING), "{text}");
        let text = f.type_in(&id, "print(x * y)\n").await;
        assert!(
            text.lines().any(|l| l == "42"),
            "sandboxed {sandboxed}: {text}"
        );
        assert!(text.contains(WAITING), "{text}");
        let text = f.type_in(&id, "\u{4}").await;
        assert!(text.ends_with("Status: exited with code 0"), "{text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_stops_the_program_of_a_session() {
    for sandboxed in both() {
        let f = Fixture::new(sandboxed);
        let n = unique();
        let _left = Leftovers(vec![n.clone()]);
        let (result, id) = f
            .start(&format!("sleep {n}"), json!({"yield_ms": 300}))
            .await;
        assert!(
            result.text().contains("Status: running"),
            "{}",
            result.text()
        );
        assert!(!result.text().contains(WAITING), "{}", result.text());
        let text = f.type_in(&id, "\u{3}").await;
        assert!(
            text.ends_with("Status: killed by signal 2")
                || text.ends_with("Status: exited with code 130"),
            "sandboxed {sandboxed}: {text}"
        );
        assert!(alive_with_arg(&n).is_empty());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_screen_program_comes_back_as_its_screen() {
    for sandboxed in both() {
        let f = Fixture::new(sandboxed);
        let lines: String = (1..=100).map(|i| format!("line number {i}\n")).collect();
        std::fs::write(f.root.path().join("notes.txt"), lines).unwrap();
        let (result, id) = f
            .start("less notes.txt", json!({"rows": 10, "cols": 40}))
            .await;
        let text = result.text();
        assert!(text.contains("[screen, 10 rows × 40 columns]\n"), "{text}");
        assert!(text.contains("line number 1\n"), "{text}");
        assert!(text.contains("line number 9\n"), "{text}");
        assert!(!text.contains("line number 20"), "{text}");
        assert!(!text.contains('\u{1b}'), "escape codes shown: {text:?}");
        // Space pages on; the screen shows the next page.
        let text = f.type_in(&id, " ").await;
        assert!(
            text.contains("line number 15"),
            "sandboxed {sandboxed}: {text}"
        );
        let text = f.type_in(&id, "q").await;
        assert!(text.ends_with("Status: exited with code 0"), "{text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vi_quits_with_its_own_keys() {
    if !Path::new("/usr/bin/vi").exists() {
        return;
    }
    for sandboxed in both() {
        let f = Fixture::new(sandboxed);
        std::fs::write(f.root.path().join("a.txt"), "alpha\nbeta\n").unwrap();
        let (result, id) = f.start("vi -i NONE a.txt", json!({})).await;
        assert!(result.text().contains("alpha\nbeta\n"), "{}", result.text());
        assert!(
            result.text().contains("[screen, 30 rows × 120 columns]"),
            "{}",
            result.text()
        );
        let text = f.type_in(&id, "\u{1b}:q!\r").await;
        assert!(
            text.ends_with("Status: exited with code 0"),
            "sandboxed {sandboxed}: {text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_are_jobs_killed_by_kill_shell_and_the_sessions_end() {
    for sandboxed in both() {
        let f = Fixture::new(sandboxed);
        let (a, b) = (unique(), unique());
        let _left = Leftovers(vec![a.clone(), b.clone()]);
        let (_, first) = f
            .start(&format!("sleep {a}"), json!({"yield_ms": 100}))
            .await;
        let (_, second) = f
            .start(&format!("sleep {b}"), json!({"yield_ms": 100}))
            .await;
        let read = f.call("bash_output", json!({"job_id": first})).await;
        assert!(read.text().ends_with("Status: running"), "{}", read.text());
        let killed = f.call("kill_shell", json!({"job_id": first})).await;
        assert!(
            killed
                .text()
                .starts_with(&format!("Stopped background job {first}.")),
            "{}",
            killed.text()
        );
        assert!(alive_with_arg(&a).is_empty());
        assert!(
            !alive_with_arg(&b).is_empty(),
            "the other session was killed too"
        );
        f.jobs.end_all().await;
        assert!(
            alive_with_arg(&b).is_empty(),
            "sandboxed {sandboxed}: {second} outlived the session"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_started_in_the_sandbox_stays_in_it() {
    if !sandbox_here() {
        return;
    }
    let f = Fixture::new(true);
    let outside = f.outside.path().join("escaped");
    let (_, id) = f.start("bash --norc --noprofile -i", json!({})).await;
    let text = f
        .type_in(
            &id,
            &format!("touch {}; echo status=$?\n", outside.display()),
        )
        .await;
    assert!(text.contains("status=1"), "{text}");
    assert!(
        !outside.exists(),
        "typing into a confined session wrote outside"
    );
    let inside = f.root.path().join("made-here");
    let text = f
        .type_in(
            &id,
            &format!("touch {}; echo status=$?\n", inside.display()),
        )
        .await;
    assert!(text.contains("status=0"), "{text}");
    assert!(inside.exists());
    // The terminal is one of the sandbox's own: the host's are not there.
    let text = f.type_in(&id, "tty; ls /dev/pts\n").await;
    assert!(text.contains("/dev/pts/0"), "{text}");
    let _ = f.call("kill_shell", json!({"job_id": id})).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_input_gets_clear_errors() {
    let f = Fixture::new(false);
    let n = unique();
    let _left = Leftovers(vec![n.clone(), format!("{n}0")]);
    // A live session typed into between the refusals: three failures in a
    // row would trip the circuit breaker, which is not under test here.
    let (_, cat) = f.start("cat", json!({"yield_ms": 100})).await;
    let mut k = 0;
    let mut succeed = async || {
        k += 1;
        let text = f.type_in(&cat, &format!("{k}\n")).await;
        assert!(text.contains(&format!("{k}\n")), "{text}");
    };
    // A job without a terminal.
    let plain = f
        .call(
            "bash",
            json!({"command": format!("sleep {n}"), "run_in_background": true}),
        )
        .await;
    let job = plain.text()["Started background job ".len()..]
        .split(':')
        .next()
        .unwrap()
        .to_owned();
    let err = f
        .call("write_stdin", json!({"session_id": job, "text": "y\n"}))
        .await;
    assert_eq!(err.outcome, Outcome::Failed);
    assert!(
        err.text()
            .contains("is a background job without a terminal"),
        "{}",
        err.text()
    );
    succeed().await;
    // An id of another session's table is unknown here.
    let other = Fixture::new(false);
    let (_, theirs) = other.start("cat", json!({"yield_ms": 100})).await;
    let (_, ours_next) = f.start("true", json!({"yield_ms": 100})).await;
    assert_ne!(theirs, "job-99");
    let err = f
        .call("write_stdin", json!({"session_id": "job-99", "text": "x"}))
        .await;
    assert_eq!(err.outcome, Outcome::Failed);
    assert!(
        err.text().contains("There is no background job \"job-99\""),
        "{}",
        err.text()
    );
    let _ = ours_next;
    succeed().await;
    // Too much text at once.
    let huge = "x".repeat(70_000);
    let err = f
        .call("write_stdin", json!({"session_id": cat, "text": huge}))
        .await;
    assert_eq!(err.outcome, Outcome::Failed);
    assert!(
        err.text().contains("at most 65,536 bytes"),
        "{}",
        err.text()
    );
    succeed().await;
    // A terminal too small.
    let err = f
        .call("bash", json!({"command": "cat", "tty": true, "rows": 1}))
        .await;
    assert_eq!(err.outcome, Outcome::Failed);
    // A program that does not read: the terminal takes what it can hold,
    // and the call comes back, its output bounded.
    let (_, stuck) = f
        .start(&format!("sleep {n}0"), json!({"yield_ms": 100}))
        .await;
    let typed = "y\n".repeat(30_000);
    let result = f
        .call(
            "write_stdin",
            json!({"session_id": stuck, "text": typed, "yield_ms": 100}),
        )
        .await;
    assert_eq!(result.outcome, Outcome::Success, "{}", result.text());
    assert!(
        result.text().ends_with("Status: running"),
        "{}",
        result.text()
    );
    assert!(result.text().len() < 40_000, "{}", result.text().len());
    // An ended session types nothing.
    let (_, done) = f.start("true", json!({})).await;
    let err = f
        .call("write_stdin", json!({"session_id": done, "text": "x\n"}))
        .await;
    assert_eq!(err.outcome, Outcome::Failed);
    assert!(
        err.text().contains("has ended; nothing was typed"),
        "{}",
        err.text()
    );
    f.jobs.end_all().await;
    other.jobs.end_all().await;
}
