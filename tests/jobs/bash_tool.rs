//! Behaviour of the bash tool through the whole pipeline: process groups,
//! timeouts, cancellation, bounded output, progress and the environment.
//! Process checks read /proc, so these tests run on Linux.
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use agentcore::TypedTool;
use agentcore::process::OutputDir;
use agentcore::tools::bash::BashTool;
use agentcore::{
    Call, CancelReason, Cancellation, Event, EventSink, Outcome, Pipeline, ToolRegistry,
    ToolResult, UpdateKind,
};
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::support::procs::path_and_home;

/// The environment variable that marks every process a test starts.
const MARK: &str = "AGENTCORE_BASH_TEST_MARK";

/// A tool whose commands carry a unique marker in their environment, so
/// that every process they start can be found in /proc.
struct Fixture {
    marker: String,
    root: tempfile::TempDir,
    output_dir: Arc<OutputDir>,
}

impl Fixture {
    fn new() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let marker = format!(
            "{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        Self {
            marker,
            root: tempfile::tempdir().unwrap(),
            output_dir: Arc::new(OutputDir::new().unwrap()),
        }
    }

    fn root(&self) -> &Path {
        self.root.path()
    }

    fn tool(&self) -> BashTool {
        let mut env = path_and_home();
        env.push((MARK.to_owned(), self.marker.clone()));
        let tool = BashTool::new(self.root().to_owned(), self.output_dir.clone()).base_env(env);
        // `super::SANDBOXED`: false in tests/jobs/main.rs, true in
        // tests/jobs/bash_tool_sandboxed.rs, which mounts this file again.
        if super::SANDBOXED {
            // The same behaviour, confined (tests/jobs/bash_tool_sandboxed.rs).
            tool.sandbox(
                agentcore::sandbox::Sandbox::builder()
                    .writable([self.root().to_owned()])
                    .build()
                    .unwrap(),
            )
        } else {
            tool
        }
    }

    fn pipeline(&self) -> Pipeline {
        pipeline(self.tool())
    }

    async fn run(&self, args: Value) -> ToolResult {
        self.pipeline()
            .service()
            .oneshot(Call::new("t", "bash", args))
            .await
            .unwrap()
    }

    /// Live (not zombie) processes carrying this fixture's marker.
    fn survivors(&self) -> Vec<Proc> {
        let needle = format!("{MARK}={}", self.marker);
        live_processes()
            .into_iter()
            .filter(|p| {
                std::fs::read(format!("/proc/{}/environ", p.pid))
                    .map(|env| env.split(|b| *b == 0).any(|var| var == needle.as_bytes()))
                    .unwrap_or(false)
            })
            .collect()
    }

    /// Waits until at least `n` marked processes run (the command is set up).
    async fn wait_for_processes(&self, n: usize) {
        let until = Instant::now() + Duration::from_secs(10);
        while self.survivors().len() < n {
            assert!(
                Instant::now() < until,
                "the command's processes never started"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits up to `limit` for every marked process to be gone; returns
    /// those still there.
    async fn survivors_after(&self, limit: Duration) -> Vec<Proc> {
        let until = Instant::now() + limit;
        loop {
            let left = self.survivors();
            if left.is_empty() || Instant::now() >= until {
                return left;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        // Never leave a process behind, even when a test fails.
        for p in self.survivors() {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &p.pid.to_string()])
                .status();
        }
    }
}

fn pipeline(tool: BashTool) -> Pipeline {
    let registry = ToolRegistry::new().with(tool.into_dyn()).unwrap();
    Pipeline::builder().registry(Arc::new(registry)).build()
}

#[derive(Debug, Clone)]
#[allow(dead_code)] // fields are shown in assertion messages
struct Proc {
    pid: u32,
    pgrp: i32,
    state: char,
    cmdline: String,
}

/// Every process in /proc that is not a zombie.
fn live_processes() -> Vec<Proc> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // The command name may hold spaces and parentheses: parse after the
        // last ')'. Fields: state ppid pgrp ...
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let state = fields[0].chars().next().unwrap_or('?');
        if state == 'Z' || state == 'X' {
            continue;
        }
        let pgrp = fields[2].parse().unwrap_or(-1);
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
            .unwrap_or_default();
        out.push(Proc {
            pid,
            pgrp,
            state,
            cmdline,
        });
    }
    out
}

fn group_members(pgid: i32) -> Vec<Proc> {
    live_processes()
        .into_iter()
        .filter(|p| p.pgrp == pgid)
        .collect()
}

/// The value printed as `PGID=N` by `echo PGID=$$`.
fn printed_pgid(text: &str) -> i32 {
    let at = text
        .find("PGID=")
        .expect("the command printed its group id");
    text[at + 5..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// Starts many processes in the group: a plain background `sleep`, a child
/// that ignores TERM, a nested `sh -c`, and a shell waiting on them.
const STUBBORN_TREE: &str = r#"echo PGID=$$
sleep 1000 &
sh -c 'trap "" TERM; sleep 1000; echo never' &
sh -c 'sh -c "sleep 1000"; echo never' &
echo started
wait"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeout_kills_the_whole_group_and_keeps_the_output() {
    let fx = Fixture::new();
    let pipeline = fx.pipeline();
    let call = tokio::spawn(async move {
        pipeline
            .service()
            .oneshot(Call::new(
                "t",
                "bash",
                json!({"command": STUBBORN_TREE, "timeout": 1500}),
            ))
            .await
            .unwrap()
    });
    // bash, sleep, sh + sleep, sh + sh + sleep: at least 6 processes.
    fx.wait_for_processes(6).await;
    let result = call.await.unwrap();
    assert_eq!(result.outcome, Outcome::Failed, "{}", result.text());
    let text = result.text();
    assert!(text.starts_with("Timed out after 1500 ms\n"), "{text}");
    assert!(
        text.contains("started"),
        "output before the timeout is kept: {text}"
    );
    assert!(!text.contains("never"));
    let pgid = printed_pgid(&text);
    assert_eq!(group_members(pgid).len(), 0, "{:?}", group_members(pgid));
    assert_eq!(fx.survivors().len(), 0, "{:?}", fx.survivors());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timed_out_output_is_in_the_result() {
    let fx = Fixture::new();
    let result = fx
        .run(json!({"command": "echo before; echo err >&2; sleep 30", "timeout": 500}))
        .await;
    assert_eq!(result.outcome, Outcome::Failed);
    assert_eq!(result.text(), "Timed out after 500 ms\nbefore\nerr\n");
    assert!(fx.survivors().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_sends_term_first_and_the_command_may_clean_up() {
    let fx = Fixture::new();
    let result = fx
        .run(json!({
            "command": "trap 'echo cleaned up; exit 3' TERM; echo started; sleep 30 & wait",
            "timeout": 800
        }))
        .await;
    assert_eq!(result.outcome, Outcome::Failed);
    assert_eq!(
        result.text(),
        "Timed out after 800 ms\nstarted\ncleaned up\n"
    );
    assert!(fx.survivors().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backgrounded_sleep_is_gone_after_a_normal_exit() {
    let fx = Fixture::new();
    let started = Instant::now();
    let result = fx
        .run(
            json!({"command": "echo PGID=$$; sleep 1000 & sleep 1000 >/dev/null 2>&1 & echo done"}),
        )
        .await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(result.outcome, Outcome::Success);
    let text = result.text();
    assert!(text.starts_with("Exit code: 0\n"), "{text}");
    assert!(text.ends_with("done\n"), "{text}");
    assert!(group_members(printed_pgid(&text)).is_empty());
    assert!(fx.survivors().is_empty(), "{:?}", fx.survivors());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leftover_that_ignores_term_is_killed_after_a_normal_exit() {
    let fx = Fixture::new();
    let started = Instant::now();
    let result = fx
        .run(json!({"command": "sh -c 'trap \"\" TERM; sleep 1000' & sleep 0.2; echo done"}))
        .await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(result.text(), "Exit code: 0\ndone\n");
    assert!(fx.survivors().is_empty(), "{:?}", fx.survivors());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_gets_end_of_input_at_once() {
    let fx = Fixture::new();
    let result = fx
        .run(json!({"command": "read x; echo \"read=$? [$x]\"; cat; echo cat-done", "timeout": 20000}))
        .await;
    assert_eq!(result.outcome, Outcome::Success);
    assert_eq!(result.text(), "Exit code: 0\nread=1 []\ncat-done\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grandchild_in_its_own_session_holding_the_pipe_does_not_keep_the_call_waiting() {
    let fx = Fixture::new();
    let started = Instant::now();
    // `setsid` takes the sleep out of the group; it still holds the pipe.
    let result = fx
        .run(json!({"command": "setsid sleep 30 & echo quick", "timeout": 60000}))
        .await;
    let took = started.elapsed();
    assert_eq!(result.outcome, Outcome::Success);
    assert_eq!(result.text(), "Exit code: 0\nquick\n");
    assert!(took < Duration::from_secs(5), "waited {took:?}");
    // The documented limit: a new session escapes the group. The fixture
    // kills it when it drops.
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grandchild_in_the_group_holding_the_pipe_is_killed() {
    let fx = Fixture::new();
    let started = Instant::now();
    let result = fx
        .run(json!({"command": "(sleep 30; echo late) & echo quick", "timeout": 60000}))
        .await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(result.text(), "Exit code: 0\nquick\n");
    assert!(fx.survivors().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_output_keeps_head_and_tail_with_a_counted_notice_and_the_full_file() {
    let fx = Fixture::new();
    let result = fx.run(json!({"command": "seq 1 200000"})).await;
    assert_eq!(result.outcome, Outcome::Success);
    let text = result.text();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("Exit code: 0"));
    let notice = lines.next().unwrap();
    // Then how to read the saved output again
    // (tests/jobs/outputs_can_be_read_again.rs).
    let hint = lines.next().unwrap();
    assert!(
        hint.starts_with("Read it again with bash_output {\"call_id\": \"t\", "),
        "{hint}"
    );
    let prefix = "[Output truncated: ";
    assert!(notice.starts_with(prefix), "{notice}");
    let rest = &notice[prefix.len()..];
    let (omitted_lines, rest) = rest.split_once(" lines (").unwrap();
    let (omitted_bytes, rest) = rest
        .split_once(" bytes) omitted from the middle. Full output: ")
        .unwrap();
    let path = PathBuf::from(rest.strip_suffix(']').unwrap());
    let omitted_lines: usize = omitted_lines.parse().unwrap();
    let omitted_bytes: usize = omitted_bytes.parse().unwrap();

    let shown: Vec<&str> = lines.collect();
    assert_eq!(shown.first(), Some(&"1"));
    assert_eq!(shown.last(), Some(&"200000"));
    let body_chars: usize = shown.iter().map(|l| l.chars().count() + 1).sum();
    assert!(body_chars <= 30_000, "{body_chars} characters shown");
    assert_eq!(shown.len() + omitted_lines, 200_000);

    // The full output is in the session's output folder, whole.
    assert!(path.starts_with(fx.output_dir.path()));
    let full = std::fs::read_to_string(&path).unwrap();
    let expected: String = (1..=200_000).map(|i| format!("{i}\n")).collect();
    assert_eq!(full.len(), expected.len());
    assert!(full == expected);
    let shown_bytes: usize = shown.iter().map(|l| l.len() + 1).sum();
    assert_eq!(shown_bytes + omitted_bytes, full.len());
    // The omitted lines are exactly the middle of the file: paging through
    // it by line numbers finds the line after the head first.
    let first_omitted = full
        .lines()
        .nth(shown.iter().position(|l| *l != "1").unwrap());
    assert!(first_omitted.is_some());
    let head_len = shown
        .iter()
        .zip(1..)
        .take_while(|(l, i)| l.parse::<usize>().ok() == Some(*i))
        .count();
    assert_eq!(
        full.lines().nth(head_len + omitted_lines).unwrap(),
        shown[head_len]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn small_output_has_no_notice_and_leaves_no_file() {
    let fx = Fixture::new();
    let result = fx
        .run(json!({"command": "echo out; echo err >&2; echo out2"}))
        .await;
    assert_eq!(result.text(), "Exit code: 0\nout\nerr\nout2\n");
    assert_eq!(fx.output_dir.used(), 0);
    assert_eq!(std::fs::read_dir(fx.output_dir.path()).unwrap().count(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_utf8_is_shown_lossily() {
    let fx = Fixture::new();
    let result = fx.run(json!({"command": r"printf 'a\377\376b\n'"})).await;
    assert_eq!(result.text(), "Exit code: 0\na\u{fffd}\u{fffd}b\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_codes_and_signal_deaths_are_reported_as_success() {
    let fx = Fixture::new();
    let result = fx.run(json!({"command": "echo bad; exit 3"})).await;
    assert_eq!(result.outcome, Outcome::Success);
    assert_eq!(result.text(), "Exit code: 3\nbad\n");

    let result = fx.run(json!({"command": "false"})).await;
    assert_eq!(result.text(), "Exit code: 1");

    let result = fx.run(json!({"command": "kill -KILL $$"})).await;
    assert_eq!(result.outcome, Outcome::Success);
    assert_eq!(result.text(), "Killed by signal 9");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_kills_the_group_and_keeps_the_output() {
    let fx = Fixture::new();
    let cancel = Cancellation::new();
    let pipeline = fx.pipeline();
    let call =
        Call::new("t", "bash", json!({"command": STUBBORN_TREE})).with_cancellation(cancel.clone());
    let running = tokio::spawn(async move { pipeline.service().oneshot(call).await.unwrap() });
    fx.wait_for_processes(6).await;
    let started = Instant::now();
    cancel.cancel(CancelReason::Abort);
    let result = running.await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(result.outcome, Outcome::Cancelled);
    let text = result.text();
    assert!(text.starts_with("Interrupted\n"), "{text}");
    assert!(text.contains("started"));
    assert!(group_members(printed_pgid(&text)).is_empty());
    assert!(fx.survivors().is_empty(), "{:?}", fx.survivors());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_future_kills_the_group() {
    let fx = Fixture::new();
    let pipeline = fx.pipeline();
    let (sink, mut events) = EventSink::channel();
    let call = Call::new("t", "bash", json!({"command": STUBBORN_TREE})).with_sink(sink);
    let running = tokio::spawn(async move { pipeline.service().oneshot(call).await });
    fx.wait_for_processes(6).await;
    running.abort();
    assert!(running.await.unwrap_err().is_cancelled());
    // TERM at once, KILL after the grace (the TERM-ignoring child needs it).
    let left = fx.survivors_after(Duration::from_secs(5)).await;
    assert!(left.is_empty(), "{left:?}");
    // The kernel still ends the call.
    let mut ended = false;
    while let Ok(event) = events.try_recv() {
        if let Event::ToolExecEnd { outcome, .. } = event {
            assert_eq!(outcome, Outcome::Cancelled);
            ended = true;
        }
    }
    assert!(ended);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_events_arrive_while_it_runs_and_none_after_the_end() {
    let fx = Fixture::new();
    let (sink, mut events) = EventSink::channel();
    let call = Call::new(
        "t",
        "bash",
        json!({"command": "for i in 1 2 3 4; do echo tick$i; sleep 0.3; done"}),
    )
    .with_sink(sink);
    let pipeline = fx.pipeline();
    let running = tokio::spawn(async move { pipeline.service().oneshot(call).await.unwrap() });

    // The first update arrives before the command is over.
    let first = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match events.recv().await {
                Some(Event::ToolExecUpdate {
                    kind: UpdateKind::Progress,
                    payload,
                    ..
                }) => return payload,
                Some(Event::ToolExecEnd { .. }) | None => panic!("ended before any progress"),
                Some(_) => {}
            }
        }
    })
    .await
    .unwrap();
    assert!(!running.is_finished());
    assert!(
        first["output"].as_str().unwrap().contains("tick1"),
        "{first}"
    );

    let result = running.await.unwrap();
    assert_eq!(result.outcome, Outcome::Success);
    let mut rest = Vec::new();
    while let Ok(event) = events.try_recv() {
        rest.push(event);
    }
    let end = rest
        .iter()
        .position(|e| matches!(e, Event::ToolExecEnd { .. }))
        .unwrap();
    assert_eq!(end, rest.len() - 1, "nothing follows the End");
    let mut streamed = first["output"].as_str().unwrap().to_owned();
    for e in &rest {
        if let Event::ToolExecUpdate { payload, .. } = e {
            streamed.push_str(payload["output"].as_str().unwrap());
        }
    }
    assert!(streamed.starts_with("tick1\n"), "{streamed}");
    assert!(streamed.contains("tick2\n"), "{streamed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_is_throttled_under_a_flood() {
    let fx = Fixture::new();
    let (sink, mut events) = EventSink::channel();
    let call = Call::new(
        "t",
        "bash",
        json!({"command": "for i in $(seq 1 60); do seq 1 2000; sleep 0.01; done"}),
    )
    .with_sink(sink);
    let started = Instant::now();
    let result = fx.pipeline().service().oneshot(call).await.unwrap();
    let took = started.elapsed();
    assert_eq!(result.outcome, Outcome::Success);
    let mut updates = 0;
    while let Ok(event) = events.try_recv() {
        if matches!(
            event,
            Event::ToolExecUpdate {
                kind: UpdateKind::Progress,
                ..
            }
        ) {
            updates += 1;
        }
    }
    // At most about ten a second (one extra for the first, immediate one).
    let allowed = (took.as_secs_f64() * 10.0).ceil() as usize + 1;
    assert!(updates >= 1);
    assert!(updates <= allowed, "{updates} updates in {took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_environment_is_non_interactive_and_scrubbed() {
    let fx = Fixture::new();
    let tool = BashTool::new(fx.root().to_owned(), fx.output_dir.clone())
        .base_env([
            ("PATH", std::env::var("PATH").unwrap_or_default()),
            ("OPENAI_API_KEY", "sk-1".into()),
            ("GITHUB_TOKEN", "gh-1".into()),
            ("DB_PASSWORD", "pw".into()),
            ("client_secret", "s".into()),
            ("NPM_TOKEN", "allowed".into()),
            ("TERM", "xterm-256color".into()),
            ("PLAIN", "kept".into()),
        ])
        .allow_env(["NPM_TOKEN"]);
    let result = pipeline(tool)
        .service()
        .oneshot(Call::new("t", "bash", json!({"command": "env | sort"})))
        .await
        .unwrap();
    let text = result.text();
    let vars: Vec<&str> = text.lines().skip(1).collect();
    for expected in [
        "TERM=dumb",
        "NO_COLOR=1",
        "PAGER=cat",
        "GIT_PAGER=cat",
        "GIT_TERMINAL_PROMPT=0",
        "GIT_EDITOR=true",
        "PLAIN=kept",
        "NPM_TOKEN=allowed",
    ] {
        assert!(vars.contains(&expected), "{expected} missing from\n{text}");
    }
    for secret in [
        "OPENAI_API_KEY",
        "GITHUB_TOKEN",
        "DB_PASSWORD",
        "client_secret",
    ] {
        assert!(
            !vars.iter().any(|v| v.starts_with(&format!("{secret}="))),
            "{secret} leaked"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_start_at_the_root_in_a_session_of_their_own() {
    let fx = Fixture::new();
    let result = fx
        .run(json!({"command": "pwd; ps -o pid=,pgid=,sid= -p $$ | awk '{print ($1==$2 && $2==$3) ? \"leader\" : \"not leader\"}'"}))
        .await;
    let root = fx.root().canonicalize().unwrap();
    assert_eq!(
        result.text(),
        format!("Exit code: 0\n{}\nleader\n", root.display())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_above_the_maximum_is_a_validation_error() {
    let fx = Fixture::new();
    let result = fx
        .run(json!({"command": "echo hi", "timeout": 600_001}))
        .await;
    assert_eq!(result.outcome, Outcome::Failed);
    assert!(!result.text().contains("hi\n"));
    assert!(result.text().contains("timeout"), "{}", result.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shell_that_cannot_start_fails() {
    let fx = Fixture::new();
    let tool = fx.tool().shell("/nonexistent/shell");
    let result = pipeline(tool)
        .service()
        .oneshot(Call::new("t", "bash", json!({"command": "echo hi"})))
        .await
        .unwrap();
    assert_eq!(result.outcome, Outcome::Failed);
    assert!(
        result
            .text()
            .starts_with("Could not start /nonexistent/shell"),
        "{}",
        result.text()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_says_run_command_and_cancel() {
    use agentcore::InterruptBehavior;
    let fx = Fixture::new();
    let tool = fx.tool().into_dyn();
    let args = json!({"command": "cargo test\necho more"});
    assert_eq!(tool.name(), "bash");
    assert_eq!(tool.label(), Some("Run Command"));
    assert!(!tool.read_only(&args));
    assert_eq!(tool.concurrency_safe(&args), Some(false));
    assert_eq!(tool.interrupt_behavior(&args), InterruptBehavior::Cancel);
    assert!(tool.observes_cancellation());
    assert_eq!(
        tool.activity(&args).as_deref(),
        Some("Running: cargo test…")
    );
    let result = fx.run(json!({"command": "true"})).await;
    assert_eq!(result.label.as_deref(), Some("Run Command"));
}
