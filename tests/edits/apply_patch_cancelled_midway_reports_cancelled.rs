//! Issue 25 item 11 (e): an apply_patch cancelled at any moment, between
//! its writes too, reports what happened: Cancelled with every file as it
//! was (the files already written put back, and the text says so), or
//! Success with every file changed — never Failed, never a mix.

use std::time::{Duration, Instant};

use agentcore::{Call, CancelReason, Cancellation, Outcome, ToolResult};
use serde_json::json;
use tower::ServiceExt;

use crate::support::files::Env;

/// Files big enough that each write spans a while (a debug build hashes
/// and copies them unoptimized).
const SIZE: usize = 256 * 1024;
const FILES: usize = 4;

fn content(marker: &str) -> String {
    let mut s = format!("{marker}\n");
    while s.len() < SIZE {
        s.push_str("the quick brown fox jumps over the lazy dog 0123456789\n");
    }
    s
}

fn patch() -> String {
    let mut p = String::from("*** Begin Patch\n");
    for i in 0..FILES {
        p.push_str(&format!(
            "*** Update File: f{i}.txt\n@@\n-old {i}\n+new {i}\n"
        ));
    }
    p.push_str("*** End Patch");
    p
}

async fn run(env: &Env, delay: Option<Duration>) -> ToolResult {
    let cancellation = Cancellation::new();
    let call = Call::new("c", "apply_patch", json!({"patch": patch()}))
        .with_cancellation(cancellation.clone());
    let canceller = delay.map(|d| {
        std::thread::spawn(move || {
            std::thread::sleep(d);
            cancellation.cancel(CancelReason::Abort);
        })
    });
    let result = env.pipeline(None).service().oneshot(call).await.unwrap();
    if let Some(c) = canceller {
        let _ = tokio::task::spawn_blocking(move || c.join()).await;
    }
    result
}

async fn fresh(env: &Env) {
    for i in 0..FILES {
        env.put(&format!("f{i}.txt"), content(&format!("old {i}")));
        env.read(&format!("f{i}.txt")).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_patch_cancelled_between_its_writes_is_cancelled_and_unchanged_or_done() {
    let env = Env::new();
    fresh(&env).await;
    let started = Instant::now();
    let r = run(&env, None).await;
    assert_eq!(r.outcome, Outcome::Success, "{}", r.text());
    let span = started.elapsed();
    let (mut cancelled, mut done, mut between) = (0, 0, 0);
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    for i in 0..60u64 {
        fresh(&env).await;
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let delay = Duration::from_micros(seed % (span.as_micros() as u64 * 3 / 2 + 1));
        let r = run(&env, Some(delay)).await;
        let all_new = (0..FILES)
            .all(|f| env.bytes(&format!("f{f}.txt")) == content(&format!("new {f}")).as_bytes());
        let all_old = (0..FILES)
            .all(|f| env.bytes(&format!("f{f}.txt")) == content(&format!("old {f}")).as_bytes());
        match r.outcome {
            Outcome::Success => {
                assert!(all_new, "run {i}: success but not every file changed");
                done += 1;
            }
            Outcome::Cancelled => {
                assert!(
                    all_old,
                    "run {i}: cancelled but a file changed: {}",
                    r.text()
                );
                let text = r.text();
                assert!(
                    text == "Tool execution cancelled."
                        || text.starts_with("Cancelled before anything was written")
                        || text.ends_with("No file was changed: the files written before the cancellation were put back as they were."),
                    "run {i}: {text}"
                );
                cancelled += 1;
                between += usize::from(text.contains("put back"));
            }
            other => panic!("run {i}: {other:?}: {}", r.text()),
        }
    }
    eprintln!("cancelled {cancelled}, done {done}, between writes {between}");
}
