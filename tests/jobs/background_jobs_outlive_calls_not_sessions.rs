//! Issue 16, items 1–5: background jobs. A job outlives the call that
//! started it (also an aborted one) and answers later commands; bash_output
//! returns only new output, waits and filters; kill_shell, the lifetime
//! cap and every way a session ends leave no process of the job; the
//! ninth job is refused; every job's end is reported (the library's
//! `exits`, `job_exit` lines of `agentcore run`, logging messages of
//! `agentcore mcp`).
//!
//! Every job puts a unique number in its argv (`sleep N`, a script
//! argument), and processes are found by it in /proc. Waits poll for a
//! state (a process gone, a status reached) with a generous limit; no test
//! asserts how fast anything is. The sandbox of issue 15 is not on this
//! branch: these run without it.
#![cfg(target_os = "linux")]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentcore::TypedTool;
use agentcore::process::OutputDir;
use agentcore::session::{Session, SessionConfig};
use agentcore::tools::bash::bash_output::BashOutputTool;
use agentcore::tools::bash::kill_shell::KillShellTool;
use agentcore::tools::bash::{BashTool, JobLimits, Jobs};
use agentcore::{Call, CancelReason, Cancellation, Outcome, Pipeline, ToolRegistry, ToolResult};
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::support::procs::{Leftovers, alive_with_arg, path_and_home, unique};

/// Waits (at most 20 s) until `check` holds.
async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(20);
    while !check() {
        assert!(Instant::now() < until, "never: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn eventually_blocking(what: &str, mut check: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(20);
    while !check() {
        assert!(Instant::now() < until, "never: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

struct Fixture {
    root: tempfile::TempDir,
    jobs: Arc<Jobs>,
    pipeline: Pipeline,
}

impl Fixture {
    fn new(limits: JobLimits) -> Self {
        let root = tempfile::tempdir().unwrap();
        let output_dir = Arc::new(OutputDir::new().unwrap());
        let jobs = Arc::new(Jobs::new(limits));
        let env = path_and_home();
        let bash = BashTool::new(root.path().to_owned(), output_dir)
            .base_env(env)
            .jobs(jobs.clone());
        let registry = ToolRegistry::new()
            .with(bash.into_dyn())
            .unwrap()
            .with(BashOutputTool::new(jobs.clone()).into_dyn())
            .unwrap()
            .with(KillShellTool::new(jobs.clone()).into_dyn())
            .unwrap();
        let pipeline = Pipeline::builder().registry(Arc::new(registry)).build();
        Self {
            root,
            jobs,
            pipeline,
        }
    }

    async fn call(&self, tool: &str, args: Value) -> ToolResult {
        self.call_with(tool, args, None).await
    }

    async fn call_with(&self, tool: &str, args: Value, cancel: Option<Cancellation>) -> ToolResult {
        let mut call = Call::new("t", tool, args);
        if let Some(cancel) = cancel {
            call = call.with_cancellation(cancel);
        }
        self.pipeline.service().oneshot(call).await.unwrap()
    }

    /// Starts `command` in the background; returns its job id.
    async fn start(&self, command: &str) -> String {
        let result = self
            .call(
                "bash",
                json!({"command": command, "run_in_background": true}),
            )
            .await;
        assert_eq!(result.outcome, Outcome::Success, "{}", result.text());
        job_id(&result.text())
    }

    /// bash_output until the status is not `running`; the whole text seen.
    async fn read_until_ended(&self, id: &str) -> String {
        let mut seen = String::new();
        for _ in 0..100 {
            let text = self
                .call("bash_output", json!({"job_id": id, "wait_ms": 60_000}))
                .await
                .text();
            seen.push_str(&text);
            if !text.ends_with("Status: running") {
                return seen;
            }
        }
        panic!("the job never ended: {seen}");
    }
}

/// The id in `Started background job ID: …`.
fn job_id(text: &str) -> String {
    let rest = text
        .strip_prefix("Started background job ")
        .unwrap_or_else(|| panic!("not a start: {text}"));
    rest.split(':').next().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_start_result_has_the_documented_shape() {
    let f = Fixture::new(JobLimits::default());
    let n = unique();
    let _left = Leftovers(vec![n.clone()]);
    let command = format!("echo ready; exec sleep {n}");
    let result = f
        .call(
            "bash",
            json!({"command": command, "run_in_background": true}),
        )
        .await;
    let text = result.text();
    assert_eq!(result.outcome, Outcome::Success, "{text}");
    let id = job_id(&text);
    assert_eq!(id, "job-1");
    assert!(text.starts_with(&format!("Started background job job-1: {command}\n")));
    assert!(
        text.ends_with(
            "Read more with bash_output {\"job_id\": \"job-1\"}; stop it with kill_shell."
        )
    );
    eventually("the job runs", || !alive_with_arg(&n).is_empty()).await;
    let killed = f.call("kill_shell", json!({"job_id": id})).await.text();
    assert!(
        killed.starts_with("Stopped background job job-1.\n"),
        "{killed}"
    );
    assert!(
        killed.ends_with("Status: stopped by kill_shell"),
        "{killed}"
    );
    // The kill has waited for the job's processes: none is left.
    assert_eq!(alive_with_arg(&n), Vec::<u32>::new());
    // Asked again: it had ended, and says so.
    let again = f
        .call("kill_shell", json!({"job_id": "job-1"}))
        .await
        .text();
    assert!(
        again.starts_with("Background job job-1 had already ended."),
        "{again}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_in_the_background_answers_a_later_command() {
    let f = Fixture::new(JobLimits::default());
    let n = unique();
    let _left = Leftovers(vec![n.clone()]);
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    std::fs::write(f.root.path().join("hello.txt"), "hello from the job\n").unwrap();
    let server = format!(
        "exec python3 -c 'import sys, http.server, functools; \
         h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=\".\"); \
         http.server.HTTPServer((\"127.0.0.1\", int(sys.argv[2])), h).serve_forever()' {n} {port}"
    );
    let id = f.start(&server).await;
    let get = format!(
        "for i in $(seq 200); do \
           exec 3<>/dev/tcp/127.0.0.1/{port} 2>/dev/null && break; sleep 0.05; done; \
         printf 'GET /hello.txt HTTP/1.0\\r\\n\\r\\n' >&3; cat <&3"
    );
    let answer = f
        .call("bash", json!({"command": get, "timeout": 60_000}))
        .await
        .text();
    assert!(answer.contains("hello from the job"), "{answer}");
    // The server logged the request: it is new output of the job.
    let log = f
        .call(
            "bash_output",
            json!({"job_id": id, "wait_ms": 60_000, "filter": "GET /hello"}),
        )
        .await
        .text();
    assert!(log.contains("GET /hello.txt"), "{log}");
    assert!(log.ends_with("Status: running"), "{log}");
    f.call("kill_shell", json!({"job_id": id})).await;
    assert_eq!(alive_with_arg(&n), Vec::<u32>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_output_returns_only_new_output_waits_and_filters() {
    let f = Fixture::new(JobLimits::default());
    let n = unique();
    let _left = Leftovers(vec![n.clone()]);
    let command = format!(
        "echo first; while [ ! -e go ]; do sleep 0.02; done; \
         echo second-a; echo skipped; echo second-b; exec sleep {n}"
    );
    let result = f
        .call(
            "bash",
            json!({"command": command, "run_in_background": true}),
        )
        .await
        .text();
    let id = job_id(&result);
    // `first` is in the start result or the next read, and then never again.
    let mut seen = result.clone();
    while !seen.contains("first") {
        seen.push_str(
            &f.call("bash_output", json!({"job_id": id, "wait_ms": 60_000}))
                .await
                .text(),
        );
    }
    // Nothing new: the wait ends (at wait_ms) with nothing and the status.
    let quiet = f
        .call("bash_output", json!({"job_id": id, "wait_ms": 50}))
        .await
        .text();
    // Nothing new from a running job says how long it has run (whole
    // seconds), so waiting for a quiet job is never the same result twice.
    let ran = quiet
        .strip_prefix("(no new output; running for ")
        .and_then(|rest| rest.strip_suffix(" s)\nStatus: running"))
        .unwrap_or_else(|| panic!("{quiet:?}"));
    assert!(ran.parse::<u64>().is_ok(), "{quiet:?}");
    std::fs::write(f.root.path().join("go"), "").unwrap();
    let mut filtered = String::new();
    while !filtered.contains("second-b") {
        let text = f
            .call(
                "bash_output",
                json!({"job_id": id, "wait_ms": 60_000, "filter": "^second"}),
            )
            .await
            .text();
        assert!(text.ends_with("Status: running"), "{text}");
        filtered.push_str(&text);
    }
    assert!(filtered.contains("second-a\n"), "{filtered}");
    assert!(!filtered.contains("skipped"), "{filtered}");
    assert!(!filtered.contains("first"), "{filtered}");
    // A bad pattern is refused with the fix.
    let bad = f
        .call("bash_output", json!({"job_id": id, "filter": "("}))
        .await;
    assert_eq!(bad.outcome, Outcome::Failed);
    assert!(
        bad.text()
            .contains("filter is not a valid regular expression")
    );
    f.call("kill_shell", json!({"job_id": id})).await;
    assert_eq!(alive_with_arg(&n), Vec::<u32>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_codes_and_unknown_ids_are_reported() {
    let f = Fixture::new(JobLimits::default());
    let n = unique();
    let _left = Leftovers(vec![n.clone()]);
    let done = f.start("echo bye; exit 3").await;
    let text = f.read_until_ended(&done).await;
    assert!(text.ends_with("Status: exited with code 3"), "{text}");
    let running = f.start(&format!("exec sleep {n}")).await;
    let unknown = f.call("bash_output", json!({"job_id": "job-99"})).await;
    assert_eq!(unknown.outcome, Outcome::Failed);
    let message = unknown.text();
    assert!(
        message.contains("There is no background job \"job-99\""),
        "{message}"
    );
    assert!(
        message.contains(&format!("The running jobs are: {running}.")),
        "{message}"
    );
    let unknown = f.call("kill_shell", json!({"job_id": "job-99"})).await;
    assert_eq!(unknown.outcome, Outcome::Failed);
    f.jobs.end_all().await;
    assert_eq!(alive_with_arg(&n), Vec::<u32>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_shell_kills_the_whole_tree_also_what_left_the_group() {
    let f = Fixture::new(JobLimits::default());
    let (a, b, c) = (unique(), unique(), unique());
    let _left = Leftovers(vec![a.clone(), b.clone(), c.clone()]);
    let id = f
        .start(&format!(
            "sleep {a} & setsid -f sleep {b}; (sleep {c} &); wait"
        ))
        .await;
    eventually("every process runs", || {
        [&a, &b, &c].iter().all(|n| !alive_with_arg(n).is_empty())
    })
    .await;
    let killed = f.call("kill_shell", json!({"job_id": id})).await.text();
    assert!(
        killed.ends_with("Status: stopped by kill_shell"),
        "{killed}"
    );
    for n in [&a, &b, &c] {
        assert_eq!(alive_with_arg(n), Vec::<u32>::new(), "sleep {n} survived");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ninth_job_is_refused_naming_the_running_ones() {
    let f = Fixture::new(JobLimits::default());
    let numbers: Vec<String> = (0..9).map(|_| unique()).collect();
    let _left = Leftovers(numbers.clone());
    let mut ids = Vec::new();
    for n in &numbers[..8] {
        ids.push(f.start(&format!("exec sleep {n}")).await);
    }
    let ninth = f
        .call(
            "bash",
            json!({"command": format!("exec sleep {}", numbers[8]), "run_in_background": true}),
        )
        .await;
    assert_eq!(ninth.outcome, Outcome::Failed);
    let text = ninth.text();
    assert!(
        text.starts_with("8 background jobs are running, the most this session allows: "),
        "{text}"
    );
    for id in &ids {
        assert!(text.contains(&format!("{id} (exec sleep ")), "{text}");
    }
    assert!(text.contains("Stop one with kill_shell"), "{text}");
    assert_eq!(alive_with_arg(&numbers[8]), Vec::<u32>::new());
    // One stopped: there is room again.
    f.call("kill_shell", json!({"job_id": ids[0]})).await;
    let tenth = f.start(&format!("exec sleep {}", numbers[8])).await;
    assert_eq!(tenth, "job-9");
    f.jobs.end_all().await;
    for n in &numbers {
        assert_eq!(alive_with_arg(n), Vec::<u32>::new());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lifetime_cap_kills() {
    let f = Fixture::new(JobLimits {
        max_alive: 8,
        lifetime: Duration::from_millis(300),
    });
    let n = unique();
    let _left = Leftovers(vec![n.clone()]);
    let id = f.start(&format!("sleep {n} & wait")).await;
    let text = f.read_until_ended(&id).await;
    assert!(
        text.ends_with("Status: killed after its lifetime cap of 0 s"),
        "{text}"
    );
    assert_eq!(alive_with_arg(&n), Vec::<u32>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_aborted_call_leaves_its_job_running() {
    let f = Fixture::new(JobLimits::default());
    let n = unique();
    let _left = Leftovers(vec![n.clone()]);
    let cancel = Cancellation::new();
    let command = format!("exec sleep {n}");
    let call = f.call_with(
        "bash",
        json!({"command": command, "run_in_background": true}),
        Some(cancel.clone()),
    );
    let abort = async {
        eventually("the job runs", || !alive_with_arg(&n).is_empty()).await;
        cancel.cancel(CancelReason::Abort);
    };
    let (result, ()) = tokio::join!(call, abort);
    let text = result.text();
    assert_eq!(result.outcome, Outcome::Success, "{text}");
    let id = job_id(&text);
    // The job outlived the aborted call.
    assert!(!alive_with_arg(&n).is_empty());
    let status = f.call("bash_output", json!({"job_id": id})).await.text();
    assert!(status.ends_with("Status: running"), "{status}");
    f.call("kill_shell", json!({"job_id": id})).await;
    assert_eq!(alive_with_arg(&n), Vec::<u32>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_session_kills_its_jobs() {
    let root = tempfile::tempdir().unwrap();
    let mut config = SessionConfig::new(root.path());
    config.mode = Some(agentcore::approval::Mode::Bypass);
    let session = Session::start(config).unwrap();
    let n = unique();
    let _left = Leftovers(vec![n.clone()]);
    let call = agentcore::message::ToolCall::new(
        "t",
        "bash",
        json!({"command": format!("exec sleep {n}"), "run_in_background": true}),
    );
    let (sink, _events) = agentcore::EventSink::channel();
    let turn = session.turn(sink);
    let messages = turn.run(vec![call]).await.unwrap();
    assert!(
        format!("{messages:?}").contains("Started background job"),
        "{messages:?}"
    );
    assert!(!alive_with_arg(&n).is_empty());
    drop(session);
    eventually("the job is killed", || alive_with_arg(&n).is_empty()).await;
}

/// `agentcore run --mode bypass` with stdin kept open; a background job
/// started by its first line.
fn run_with_job(root: &std::path::Path, n: &str) -> Child {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentcore"))
        .args(["run", "--format", "jsonl", "--mode", "bypass", "--root"])
        .arg(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let line = json!({"turn": [{"id": "b", "name": "bash",
        "args": {"command": format!("exec sleep {n}"), "run_in_background": true}}]});
    let stdin = child.stdin.as_mut().unwrap();
    writeln!(stdin, "{line}").unwrap();
    stdin.flush().unwrap();
    eventually_blocking("the job runs", || !alive_with_arg(n).is_empty());
    child
}

#[test]
fn agentcore_run_kills_its_jobs_at_the_end_of_input() {
    let root = tempfile::tempdir().unwrap();
    let n = unique();
    let _left = Leftovers(vec![n.clone()]);
    let mut child = run_with_job(root.path(), &n);
    drop(child.stdin.take());
    let status = child.wait().unwrap();
    assert!(status.success());
    // It waited for them before it exited.
    assert_eq!(alive_with_arg(&n), Vec::<u32>::new());
}

#[test]
fn agentcore_run_kills_its_jobs_on_sigterm_sigint_and_sighup() {
    for (signal, name) in [(15, "TERM"), (2, "INT"), (1, "HUP")] {
        let root = tempfile::tempdir().unwrap();
        let n = unique();
        let _left = Leftovers(vec![n.clone()]);
        let mut child = run_with_job(root.path(), &n);
        let ok = Command::new("kill")
            .args([&format!("-{name}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(ok.success());
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(128 + signal), "SIG{name}");
        assert_eq!(alive_with_arg(&n), Vec::<u32>::new(), "SIG{name}");
    }
}

#[test]
fn agentcore_mcp_kills_its_jobs_when_the_connection_closes() {
    let root = tempfile::tempdir().unwrap();
    let n = unique();
    let _left = Leftovers(vec![n.clone()]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentcore"))
        .args(["mcp", "--mode", "bypass", "--root"])
        .arg(root.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |v: Value| {
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "jobs-test", "version": "0"}}}),
    );
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "bash", "arguments": {"command": format!("exec sleep {n}"), "run_in_background": true}}}),
    );
    line.clear();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("Started background job job-1"), "{line}");
    assert!(!alive_with_arg(&n).is_empty());
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success());
    assert_eq!(alive_with_arg(&n), Vec::<u32>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_exit_reaches_the_library_stream() {
    let f = Fixture::new(JobLimits::default());
    let mut exits = f.jobs.exits();
    let id = f.start("echo bye; exit 2").await;
    let exit = exits.recv().await.unwrap();
    assert_eq!(exit.job_id, id);
    assert_eq!(exit.status, "exited with code 2");
    assert_eq!(exit.command, "echo bye; exit 2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_exit_is_an_event_in_the_sessions_stream() {
    let root = tempfile::tempdir().unwrap();
    let mut config = SessionConfig::new(root.path());
    config.mode = Some(agentcore::approval::Mode::Bypass);
    let session = Session::start(config).unwrap();
    let (sink, mut events) = agentcore::EventSink::channel();
    session.forward_job_exits(sink.clone());
    let call = agentcore::message::ToolCall::new(
        "t",
        "bash",
        json!({"command": "echo bye; exit 2", "run_in_background": true}),
    );
    session.turn(sink).run(vec![call]).await.unwrap();
    let exit = loop {
        let event = tokio::time::timeout(Duration::from_secs(30), events.recv())
            .await
            .expect("a job exit within 30 s")
            .expect("the stream is open");
        if let agentcore::Event::JobExit { .. } = event {
            break event;
        }
    };
    assert_eq!(
        serde_json::to_value(&exit).unwrap(),
        json!({"type": "job_exit", "job_id": "job-1", "status": "exited with code 2", "command": "echo bye; exit 2"})
    );
}

#[test]
fn agentcore_run_writes_job_exit_lines() {
    let root = tempfile::tempdir().unwrap();
    let n = unique();
    let _left = Leftovers(vec![n.clone()]);
    let mut child = run_with_job(root.path(), &n);
    let mut stdin = child.stdin.take().unwrap();
    let line = json!({"turn": [{"id": "e", "name": "bash",
        "args": {"command": "exit 4", "run_in_background": true}}]});
    writeln!(stdin, "{line}").unwrap();
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let events: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let exits: Vec<&Value> = events.iter().filter(|e| e["type"] == "job_exit").collect();
    assert!(
        exits.contains(&&json!({"type": "job_exit", "job_id": "job-2",
            "status": "exited with code 4", "command": "exit 4"})),
        "{exits:?}"
    );
    assert!(
        exits.contains(&&json!({"type": "job_exit", "job_id": "job-1",
            "status": "killed when the session ended", "command": format!("exec sleep {n}")})),
        "{exits:?}"
    );
    assert_eq!(alive_with_arg(&n), Vec::<u32>::new());
}

#[test]
fn agentcore_mcp_sends_job_exits_as_logging_messages() {
    let root = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentcore"))
        .args(["mcp", "--mode", "bypass", "--root"])
        .arg(root.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |v: Value| {
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "jobs-test", "version": "0"}}}),
    );
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let init: Value = serde_json::from_str(&line).unwrap();
    assert!(
        init["result"]["capabilities"]["logging"].is_object(),
        "{init}"
    );
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "bash", "arguments": {"command": "exit 5", "run_in_background": true}}}),
    );
    let mut seen = Vec::new();
    let message = loop {
        line.clear();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "no job exit: {seen:?}"
        );
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["method"] == "notifications/message" {
            break v;
        }
        seen.push(v);
    };
    assert_eq!(message["params"]["level"], "info");
    assert_eq!(message["params"]["logger"], "agentcore.jobs");
    assert_eq!(
        message["params"]["data"],
        json!({"type": "job_exit", "job_id": "job-1", "status": "exited with code 5", "command": "exit 5"})
    );
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_shell_kills_a_job_that_ignores_term() {
    let f = Fixture::new(JobLimits::default());
    let n = unique();
    let _left = Leftovers(vec![n.clone()]);
    let id = f
        .start(&format!(
            "trap '' TERM; sh -c 'trap \"\" TERM; exec sleep {n}' & wait; wait"
        ))
        .await;
    eventually("the job runs", || !alive_with_arg(&n).is_empty()).await;
    let killed = f.call("kill_shell", json!({"job_id": id})).await.text();
    assert!(
        killed.ends_with("Status: stopped by kill_shell"),
        "{killed}"
    );
    assert_eq!(alive_with_arg(&n), Vec::<u32>::new());
}
