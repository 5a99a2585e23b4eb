//! Issue 13, item 8: processes that tried to outlive their command. Each
//! way out of the shell's process group (`set -m`, `setpgid(0,0)`,
//! `setsid -f`, Perl's `POSIX::setsid`, a detached process that also
//! scrubbed its environment, and one named by bytes that are not UTF-8) is tried at each ending of a call (normal
//! exit, timeout, cancellation, a dropped future); after the call returns
//! no process of the command is alive, and none is left a zombie of this
//! process. Concurrent calls do not kill each other's processes.
//!
//! Processes are found by a unique number in their argv (`sleep N`), not by
//! anything the tool sets. This binary runs in [`OrphanScope::Process`], as
//! the `agentcore` binary does: it starts no other child processes. The
//! tests run one at a time (a lock), so that each call's orphans are
//! unambiguous.
//!
//! That scope is why this is a test binary of its own, not a module of
//! tests/attacks/: it makes the whole process a child subreaper for good,
//! in which every zombie child of the process is reaped and an orphan
//! adopted while a call runs is killed as that call's. The tests of another
//! module in the same process would lose their children's exit statuses
//! and their orphaned grandchildren.
#![cfg(target_os = "linux")]

#[path = "support/mod.rs"]
mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use agentcore::TypedTool;
use agentcore::process::{OrphanScope, OutputDir, adopt_orphans};
use agentcore::tools::bash::BashTool;
use agentcore::{Call, CancelReason, Cancellation, Outcome, Pipeline, ToolRegistry, ToolResult};
use serde_json::json;
use tokio::sync::Mutex;
use tower::ServiceExt;

use support::procs::{alive_with_arg_and_cmdline, path_and_home, unique};

/// One test at a time.
static SERIAL: Mutex<()> = Mutex::const_new(());

/// The ways out of the group, as commands starting `sleep {N}`.
const ESCAPES: &[(&str, &str)] = &[
    ("set -m background job", "set -m; sleep {N} &"),
    (
        "setpgid(0,0)",
        r#"perl -e 'setpgrp(0,0) or die; exec "sleep", "{N}"' &"#,
    ),
    ("setsid -f", "setsid -f sleep {N}"),
    (
        "POSIX::setsid",
        r#"perl -MPOSIX -e 'exit if fork; POSIX::setsid() or die; exec "sleep", "{N}"'"#,
    ),
    (
        "setsid -f with a scrubbed environment",
        "setsid -f env -i sleep {N}",
    ),
    (
        "nohup, a new session and a scrubbed environment",
        "nohup setsid env -i sleep {N} >/dev/null 2>&1 &",
    ),
    // The name in /proc/PID/stat is the program file's: bytes that are
    // not UTF-8 there once hid the process from the scan.
    (
        "a name that is not UTF-8, a new session and a scrubbed environment",
        r#"n="./s$(printf '\377')"; cp "$(command -v sleep)" "$n"; setsid -f env -i "$n" {N}"#,
    ),
];

struct Fixture {
    root: tempfile::TempDir,
    output_dir: Arc<OutputDir>,
}

impl Fixture {
    fn new() -> Self {
        adopt_orphans(OrphanScope::Process).expect("PR_SET_CHILD_SUBREAPER");
        Self {
            root: tempfile::tempdir().unwrap(),
            output_dir: Arc::new(OutputDir::new().unwrap()),
        }
    }

    fn pipeline(&self) -> Pipeline {
        let env = path_and_home();
        let tool =
            BashTool::new(self.root.path().to_owned(), self.output_dir.clone()).base_env(env);
        let registry = ToolRegistry::new().with(tool.into_dyn()).unwrap();
        Pipeline::builder().registry(Arc::new(registry)).build()
    }

    async fn run(&self, command: &str, timeout: u64, cancel: Option<Cancellation>) -> ToolResult {
        let mut call = Call::new("t", "bash", json!({"command": command, "timeout": timeout}));
        if let Some(cancel) = cancel {
            call = call.with_cancellation(cancel);
        }
        self.pipeline().service().oneshot(call).await.unwrap()
    }
}

/// Zombie children of this process (none may be left: orphans adopted and
/// killed are reaped).
fn zombie_children() -> Vec<u32> {
    let me = std::process::id().to_string();
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        // Bytes: a process's name need not be UTF-8.
        let Ok(stat) = std::fs::read(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let stat = String::from_utf8_lossy(&stat);
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.first() == Some(&"Z") && fields.get(1) == Some(&me.as_str()) {
            out.push(pid);
        }
    }
    out
}

async fn wait_until_alive(arg: &str) {
    let until = Instant::now() + Duration::from_secs(10);
    while alive_with_arg_and_cmdline(arg).is_empty() {
        assert!(Instant::now() < until, "sleep {arg} never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Asserts that nothing with `arg` is alive now, nor turns up shortly
/// after (a process that was still being forked when the call ended), and
/// kills any offender so that a failure leaves nothing behind.
async fn assert_gone(arg: &str, what: &str) {
    let mut seen = alive_with_arg_and_cmdline(arg);
    if seen.is_empty() {
        tokio::time::sleep(Duration::from_millis(300)).await;
        seen = alive_with_arg_and_cmdline(arg);
    }
    for (pid, _) in &seen {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
    assert!(seen.is_empty(), "{what}: survived the call: {seen:?}");
}

fn escape(template: &str) -> (String, String) {
    let n = unique();
    (template.replace("{N}", &n), n)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escapes_are_killed_when_the_command_exits_at_once() {
    let _serial = SERIAL.lock().await;
    let fx = Fixture::new();
    for (what, template) in ESCAPES {
        let (command, n) = escape(template);
        let result = fx.run(&command, 60_000, None).await;
        assert_eq!(
            result.outcome,
            Outcome::Success,
            "{what}: {}",
            result.text()
        );
        assert_gone(&n, what).await;
    }
    assert_eq!(zombie_children(), Vec::<u32>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escapes_are_killed_when_the_command_exits_later() {
    let _serial = SERIAL.lock().await;
    let fx = Fixture::new();
    for (what, template) in ESCAPES {
        let (command, n) = escape(template);
        let started = Instant::now();
        let result = fx
            .run(&format!("{command}\nsleep 0.5; echo done"), 60_000, None)
            .await;
        assert_eq!(
            result.outcome,
            Outcome::Success,
            "{what}: {}",
            result.text()
        );
        assert!(
            result.text().ends_with("done\n"),
            "{what}: {}",
            result.text()
        );
        assert!(started.elapsed() < Duration::from_secs(10), "{what}");
        assert_gone(&n, what).await;
    }
    assert_eq!(zombie_children(), Vec::<u32>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escapes_are_killed_on_timeout() {
    let _serial = SERIAL.lock().await;
    let fx = Fixture::new();
    for (what, template) in ESCAPES {
        let (command, n) = escape(template);
        let result = fx.run(&format!("{command}\nsleep 30"), 1_000, None).await;
        assert_eq!(result.outcome, Outcome::Failed, "{what}: {}", result.text());
        assert!(
            result.text().starts_with("Timed out after 1000 ms"),
            "{what}"
        );
        assert_gone(&n, what).await;
    }
    assert_eq!(zombie_children(), Vec::<u32>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escapes_are_killed_on_cancel() {
    let _serial = SERIAL.lock().await;
    let fx = Arc::new(Fixture::new());
    for (what, template) in ESCAPES {
        let (command, n) = escape(template);
        let cancel = Cancellation::new();
        let running = {
            let fx = fx.clone();
            let cancel = cancel.clone();
            let command = format!("{command}\nsleep 30");
            tokio::spawn(async move { fx.run(&command, 60_000, Some(cancel)).await })
        };
        wait_until_alive(&n).await;
        cancel.cancel(CancelReason::Abort);
        let result = running.await.unwrap();
        assert_eq!(
            result.outcome,
            Outcome::Cancelled,
            "{what}: {}",
            result.text()
        );
        assert_gone(&n, what).await;
    }
    assert_eq!(zombie_children(), Vec::<u32>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escapes_are_killed_when_the_future_is_dropped() {
    let _serial = SERIAL.lock().await;
    let fx = Arc::new(Fixture::new());
    for (what, template) in ESCAPES {
        let (command, n) = escape(template);
        let running = {
            let fx = fx.clone();
            let command = format!("{command}\nsleep 30");
            tokio::spawn(async move { fx.run(&command, 60_000, None).await })
        };
        wait_until_alive(&n).await;
        running.abort();
        assert!(running.await.unwrap_err().is_cancelled());
        // TERM at once, KILL after the grace, from a helper thread.
        let until = Instant::now() + Duration::from_secs(5);
        while !alive_with_arg_and_cmdline(&n).is_empty() && Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_gone(&n, what).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_loop_is_killed() {
    let _serial = SERIAL.lock().await;
    let fx = Fixture::new();
    let n = unique();
    // Each generation detaches and starts the next before it sleeps.
    let command = format!(
        "cat > loop.sh <<'EOF'\nsetsid -f bash loop.sh\nexec sleep {n}\nEOF\nsetsid -f bash loop.sh; sleep 0.5"
    );
    let result = fx.run(&command, 60_000, None).await;
    assert_eq!(result.outcome, Outcome::Success, "{}", result.text());
    assert_gone(&n, "a detaching fork loop").await;
    // Nothing of the loop either.
    let loops: Vec<_> = alive_with_arg_and_cmdline("loop.sh")
        .into_iter()
        .filter(|(pid, _)| {
            std::fs::read_link(format!("/proc/{pid}/cwd"))
                .ok()
                .as_deref()
                == Some(fx.root.path())
        })
        .collect();
    assert!(loops.is_empty(), "{loops:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_do_not_kill_each_others_processes() {
    let _serial = SERIAL.lock().await;
    let fx = Arc::new(Fixture::new());
    let (b_scrubbed, b_job) = (unique(), unique());
    let cancel_b = Cancellation::new();
    let b = {
        let fx = fx.clone();
        let cancel = cancel_b.clone();
        let command =
            format!("setsid -f env -i sleep {b_scrubbed}; set -m; sleep {b_job} & sleep 30");
        tokio::spawn(async move { fx.run(&command, 60_000, Some(cancel)).await })
    };
    wait_until_alive(&b_scrubbed).await;
    wait_until_alive(&b_job).await;
    // Let B's tracking see its orphan below its shell.
    tokio::time::sleep(Duration::from_millis(300)).await;

    // A ends, killing all of its own (seen below its shell before it
    // exited), and none of B's.
    let (a_scrubbed, a_session) = (unique(), unique());
    let result = fx
        .run(
            &format!("setsid -f env -i sleep {a_scrubbed}; setsid -f sleep {a_session}; sleep 0.5"),
            60_000,
            None,
        )
        .await;
    assert_eq!(result.outcome, Outcome::Success, "{}", result.text());
    assert_gone(&a_scrubbed, "A's scrubbed orphan").await;
    assert_gone(&a_session, "A's new session").await;
    assert_eq!(
        alive_with_arg_and_cmdline(&b_scrubbed).len(),
        1,
        "B's orphan was killed by A"
    );
    assert_eq!(
        alive_with_arg_and_cmdline(&b_job).len(),
        1,
        "B's job was killed by A"
    );

    // An orphan that left at the very moment A's shell exited, while B
    // still runs, cannot be told apart from one of B's: it lives at most
    // until the last call that may own it ends.
    let a_late = unique();
    let result = fx
        .run(&format!("setsid -f env -i sleep {a_late}"), 60_000, None)
        .await;
    assert_eq!(result.outcome, Outcome::Success, "{}", result.text());
    assert_eq!(
        alive_with_arg_and_cmdline(&b_scrubbed).len(),
        1,
        "B's orphan was killed by A"
    );

    cancel_b.cancel(CancelReason::Abort);
    let result = b.await.unwrap();
    assert_eq!(result.outcome, Outcome::Cancelled, "{}", result.text());
    assert_gone(&b_scrubbed, "B's scrubbed orphan").await;
    assert_gone(&b_job, "B's job").await;
    assert_gone(&a_late, "A's late orphan, after B ended").await;
    assert_eq!(zombie_children(), Vec::<u32>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_orphan_adopted_before_the_call_is_not_touched() {
    let _serial = SERIAL.lock().await;
    let fx = Fixture::new();
    let n = unique();
    // An orphan re-parented to this process before the call started: not
    // the call's, although nothing else claims it.
    let status = std::process::Command::new("sh")
        .args(["-c", &format!("setsid -f sleep {n}")])
        .status()
        .unwrap();
    assert!(status.success());
    wait_until_alive(&n).await;
    let bystander = alive_with_arg_and_cmdline(&n)[0].0;
    // Start times have a 10 ms resolution: let the clock move on.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let result = fx
        .run(
            &format!("kill -0 {bystander} && echo visible"),
            60_000,
            None,
        )
        .await;
    assert_eq!(result.text(), "Exit code: 0\nvisible\n");
    assert_eq!(
        alive_with_arg_and_cmdline(&n).len(),
        1,
        "a bystander was killed"
    );
    let _ = std::process::Command::new("kill")
        .args(["-KILL", &bystander.to_string()])
        .status();
    // Its zombie is reaped at the end of the next call.
    let until = Instant::now() + Duration::from_secs(5);
    while !alive_with_arg_and_cmdline(&n).is_empty() && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    fx.run("true", 60_000, None).await;
    assert_eq!(zombie_children(), Vec::<u32>::new());
}
