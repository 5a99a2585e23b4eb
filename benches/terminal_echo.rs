//! The round trip of typing into a terminal session: `write_stdin` of one
//! line to `cat` running in a terminal (`bash` with `tty`), through the
//! session's scheduler and pipeline, in the default sandbox.
//!
//! `cargo bench --bench terminal_echo` (figures in docs/performance.md):
//!
//! - `echo seen`: `write_stdin` with `yield_ms: 0` (types and returns),
//!   then `bash_output` with `wait_ms` until the line `cat` printed back
//!   has arrived: the time from typing to reading the answer;
//! - `write_stdin until waiting`: one `write_stdin` with the default
//!   `yield_ms`, which returns when `cat` sleeps reading its terminal
//!   again (seen in /proc after 50 ms without output and confirmed 10 ms
//!   later): what a model waits for one exchange with a prompt.

use std::sync::atomic::{AtomicU64, Ordering};

use agentcore::approval::Mode;
use agentcore::session::{Session, SessionConfig};
use agentcore::{Call, ToolResult};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use tower::ServiceExt;

static NEXT: AtomicU64 = AtomicU64::new(0);

async fn call(session: &Session, tool: &str, args: Value) -> ToolResult {
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    let result = session
        .scheduler()
        .clone()
        .oneshot(Call::new(format!("c{id}"), tool, args))
        .await
        .expect("scheduler");
    assert!(!result.is_error(), "{tool} failed: {}", result.text());
    result
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let workspace = tempfile::tempdir().expect("workspace");
    let mut config = SessionConfig::new(workspace.path());
    config.mode = Some(Mode::Bypass);
    // Every exchange types a different line: the loop guard never sees a
    // repeat.
    let session = runtime.block_on(async { Session::start(config).expect("session") });
    eprintln!("{}", session.sandbox_summary());
    let started = runtime.block_on(call(
        &session,
        "bash",
        json!({"command": "cat", "tty": true, "yield_ms": 5_000}),
    ));
    let text = started.text();
    let id = text
        .strip_prefix("Started terminal session ")
        .and_then(|rest| rest.split(' ').next())
        .expect("a session id")
        .to_owned();
    let mut group = c.benchmark_group("terminal");
    group.bench_function("echo seen", |b| {
        b.to_async(&runtime).iter(|| async {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let line = format!("line {n}");
            // What arrived while typing counts: the terminal echoes the
            // line as it is typed, and cat may answer before the call
            // returns.
            let mut seen = call(
                &session,
                "write_stdin",
                json!({"session_id": id, "text": format!("{line}\n"), "yield_ms": 0}),
            )
            .await
            .text();
            // The terminal echoes the typed line, then cat prints it: the
            // answer is the second.
            while seen.matches(&line).count() < 2 {
                let read = call(
                    &session,
                    "bash_output",
                    json!({"job_id": id, "wait_ms": 5_000}),
                )
                .await;
                seen.push_str(&read.text());
            }
        });
    });
    group.bench_function("write_stdin until waiting", |b| {
        b.to_async(&runtime).iter(|| async {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let text = call(
                &session,
                "write_stdin",
                json!({"session_id": id, "text": format!("line {n}\n")}),
            )
            .await
            .text();
            assert!(
                text.ends_with("Status: running, waiting for input"),
                "{text}"
            );
        });
    });
    group.finish();
    runtime.block_on(session.end_jobs());
}

criterion_group!(benches, bench);
criterion_main!(benches);
