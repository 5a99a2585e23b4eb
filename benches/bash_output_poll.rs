//! What polling a background job with `bash_output` costs, against a
//! baseline in the same run (for `docs/performance.md`).
//!
//! `cargo bench --bench bash_output_poll` (`AGENTCORE_POLL_ROUNDS` changes
//! the number of rounds, default 300). One session (bypass mode, the
//! default sandbox) starts three background jobs with `bash`:
//!
//! - `silent`: `sleep 3600`, which never prints;
//! - `lines`: ten lines of 50 bytes, then `sleep 0.01`, forever;
//! - `burst`: 1,000 lines of 60 bytes (60 KB, over the 30,000-character
//!   cap, so the result keeps a head and a tail), then `sleep 0.02`.
//!
//! Each round waits 25 ms (not timed, so the printing jobs have printed
//! since the last look), makes one untimed call (the runtime's workers slept
//! through the pause), then times these, in an order that rotates from
//! round to round:
//!
//! - `baseline: read of a 3-line file` — the cheapest real call, through the
//!   same session's scheduler and pipeline;
//! - `bash_output, silent job (scheduler)` — polling a running job with no
//!   new output, through the scheduler and pipeline;
//! - `bash_output, silent job (tool alone)` — the same, the tool's
//!   `execute` only, so the difference is the scheduler and pipeline;
//! - `bash_output, lines job` and `bash_output, burst job` — polling with
//!   new output, through the scheduler and pipeline.
//!
//! Prints p10, median and p90 in microseconds, the median's ratio to the
//! baseline's, the median size of the results, and the load average.

use std::time::{Duration, Instant};

use agentcore::approval::Mode;
use agentcore::session::{Session, SessionConfig};
use agentcore::{Call, CallContext, EventSink, GatedArgs};
use serde_json::{Value, json};
use tower::ServiceExt;

/// A job's id, from the result that started it
/// ("Started background job ID: COMMAND").
fn job_id(text: &str) -> String {
    text.strip_prefix("Started background job ")
        .and_then(|rest| rest.split(':').next())
        .unwrap_or_else(|| panic!("no job id in: {text}"))
        .to_owned()
}

/// Calls `tool` with `args` through the session's scheduler and pipeline:
/// (elapsed, result text). Panics if the call failed.
async fn call(session: &Session, tool: &str, args: Value) -> (Duration, String) {
    let scheduler = session.scheduler().clone();
    let started = Instant::now();
    let result = scheduler
        .oneshot(Call::new("c1", tool, args))
        .await
        .expect("scheduler");
    let elapsed = started.elapsed();
    assert!(!result.is_error(), "{tool} failed: {}", result.text());
    (elapsed, result.text())
}

async fn start_job(session: &Session, command: &str) -> String {
    let (_, text) = call(
        session,
        "bash",
        json!({"command": command, "run_in_background": true}),
    )
    .await;
    job_id(&text)
}

fn main() {
    let rounds: usize = std::env::var("AGENTCORE_POLL_ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(300);
    let workspace = tempfile::tempdir().expect("workspace");
    let root = workspace.path().canonicalize().expect("canonical root");
    std::fs::write(root.join("small.txt"), "one\ntwo\nthree\n").expect("write small.txt");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");

    let names = [
        "baseline: read of a 3-line file",
        "bash_output, silent job (scheduler)",
        "bash_output, silent job (tool alone)",
        "bash_output, lines job (scheduler)",
        "bash_output, burst job (scheduler)",
    ];
    let mut times: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds); names.len()];
    let mut sizes: Vec<Vec<usize>> = vec![Vec::with_capacity(rounds); names.len()];

    runtime.block_on(async {
        let mut config = SessionConfig::new(&root);
        config.mode = Some(Mode::Bypass);
        let session = Session::start(config).expect("session");
        println!("{}\n", session.sandbox_summary());
        let silent = start_job(&session, "sleep 3600").await;
        let lines = start_job(
            &session,
            "while :; do for i in 0 1 2 3 4 5 6 7 8 9; do \
             echo \"line $i of the steady output of a background job\"; done; sleep 0.01; done",
        )
        .await;
        let burst = start_job(
            &session,
            "while :; do i=0; while [ $i -lt 1000 ]; do \
             echo \"line $i of a burst of output, sixty bytes long.........\"; \
             i=$((i+1)); done; sleep 0.02; done",
        )
        .await;
        let bash_output = session
            .registry()
            .get("bash_output")
            .expect("bash_output registered")
            .tool()
            .clone();
        let read = json!({"file_path": root.join("small.txt")});
        // Settle: the jobs have started and printed once.
        tokio::time::sleep(Duration::from_millis(200)).await;
        for job in [&silent, &lines, &burst] {
            call(&session, "bash_output", json!({"job_id": job})).await;
        }

        for round in 0..rounds {
            tokio::time::sleep(Duration::from_millis(25)).await;
            // One untimed call first: the runtime's workers slept through
            // the pause, and the first call would pay their waking.
            call(&session, "bash_output", json!({"job_id": silent})).await;
            // The variants in a rotating order, so none is always first.
            for k in 0..names.len() {
                let i = (round + k) % names.len();
                let (elapsed, text) = match i {
                    0 => call(&session, "read", read.clone()).await,
                    1 => call(&session, "bash_output", json!({"job_id": silent})).await,
                    2 => {
                        let cx = CallContext::for_test("c1", EventSink::noop());
                        let args = GatedArgs::for_test(json!({"job_id": silent}));
                        let started = Instant::now();
                        let output = bash_output.execute(args, &cx).await.expect("bash_output");
                        let elapsed = started.elapsed();
                        let text: String =
                            output.content.iter().filter_map(|c| c.as_text()).collect();
                        (elapsed, text)
                    }
                    3 => call(&session, "bash_output", json!({"job_id": lines})).await,
                    _ => call(&session, "bash_output", json!({"job_id": burst})).await,
                };
                if i == 1 || i == 2 {
                    assert!(
                        text.contains("(no new output"),
                        "silent job printed: {text}"
                    );
                }
                times[i].push(elapsed.as_secs_f64() * 1e6);
                sizes[i].push(text.len());
            }
        }
        session.end_jobs().await;
    });

    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("{rounds} rounds, load average {}", load.trim());
    let mut baseline = 0.0;
    for (i, name) in names.iter().enumerate() {
        let t = &mut times[i];
        t.sort_by(f64::total_cmp);
        let at = |q: f64| t[((t.len() - 1) as f64 * q) as usize];
        let median = at(0.5);
        if i == 0 {
            baseline = median;
        }
        let s = &mut sizes[i];
        s.sort_unstable();
        println!(
            "{name:<38} p10 {:7.1} µs  median {:7.1} µs  p90 {:7.1} µs  {:5.2}× baseline  result {} bytes (median)",
            at(0.1),
            median,
            at(0.9),
            median / baseline,
            s[s.len() / 2]
        );
    }
}
