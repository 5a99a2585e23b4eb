//! Issue 16, item 6: two read-only `bash` commands of one turn run at the
//! same time, while `cat a > b` (a redirection to a file) waits for them.
//!
//! The barrier is two FIFOs: each read-only command is a `cat` of one,
//! which blocks until this test writes to it. Both `cat`s are seen alive in
//! /proc at once (found by the unique FIFO names in their argv) before
//! either is released, which only happens if they overlap; meanwhile the
//! writing command has not run (its file does not exist). No clock is
//! read.
#![cfg(target_os = "linux")]

use std::io::Write;
use std::time::{Duration, Instant};

use agentcore::approval::Mode;
use agentcore::message::ToolCall;
use agentcore::session::{Session, SessionConfig};
use agentcore::{EventSink, Outcome};
use serde_json::json;

use crate::support::procs::unique;

/// Whether a live process has `arg` among its arguments.
fn running_with_arg(arg: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
        std::fs::read(entry.path().join("cmdline"))
            .is_ok_and(|cmdline| cmdline.split(|b| *b == 0).any(|a| a == arg.as_bytes()))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_reads_overlap_while_a_write_waits() {
    let root = tempfile::tempdir().unwrap();
    let n = unique();
    let (fifo_a, fifo_b) = (format!("fifo-a-{n}"), format!("fifo-b-{n}"));
    for fifo in [&fifo_a, &fifo_b] {
        nix::unistd::mkfifo(
            &root.path().join(fifo),
            nix::sys::stat::Mode::from_bits_truncate(0o600),
        )
        .unwrap();
    }
    std::fs::write(root.path().join("a"), "content of a\n").unwrap();
    let mut config = SessionConfig::new(root.path());
    config.mode = Some(Mode::Bypass);
    let session = Session::start(config).unwrap();
    let calls = vec![
        ToolCall::new("r1", "bash", json!({"command": format!("cat {fifo_a}")})),
        ToolCall::new("r2", "bash", json!({"command": format!("cat {fifo_b}")})),
        ToolCall::new("w", "bash", json!({"command": "cat a > b"})),
    ];
    let (sink, _events) = EventSink::channel();
    let turn = tokio::spawn(session.turn(sink).run(calls));

    let until = Instant::now() + Duration::from_secs(30);
    while !(running_with_arg(&fifo_a) && running_with_arg(&fifo_b)) {
        assert!(
            Instant::now() < until,
            "the two reads never ran at the same time"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        !root.path().join("b").exists(),
        "the write ran beside the reads"
    );
    for (fifo, text) in [(&fifo_a, "from a\n"), (&fifo_b, "from b\n")] {
        let mut writer = std::fs::OpenOptions::new()
            .write(true)
            .open(root.path().join(fifo))
            .unwrap();
        writer.write_all(text.as_bytes()).unwrap();
    }
    let result = turn.await.unwrap().unwrap();
    let outcomes: Vec<Outcome> = result.results.iter().map(|r| r.outcome).collect();
    assert_eq!(outcomes, [Outcome::Success; 3], "{result:?}");
    assert_eq!(
        std::fs::read_to_string(root.path().join("b")).unwrap(),
        "content of a\n"
    );
}
