//! Issue item "Output read again": a finished command's kept output (saved
//! when its result was cut) is read again through `bash_output`, by call id
//! or job id, a page of lines at a time (`offset`, `limit`) or the lines a
//! `pattern` matches (with `context`), bounded as grep's output is; the cut
//! result says how. Hostile arguments get an error that says the fix.
//!
//! The reader's memory bound (one enormous line) is proven beside it, in
//! `src/tools/bash/kept.rs`; here the whole path runs, through the
//! pipeline and through a session.
#![cfg(target_os = "linux")]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use agentcore::TypedTool;
use agentcore::process::OutputDir;
use agentcore::session::{Session, SessionConfig};
use agentcore::tools::bash::bash_output::BashOutputTool;
use agentcore::tools::bash::{BashTool, Jobs};
use agentcore::{Call, Outcome, Pipeline, ToolRegistry, ToolResult};
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::support::procs::path_and_home;

/// `bash` and `bash_output` sharing one job table and one output folder.
struct Fixture {
    _root: tempfile::TempDir,
    output_dir: Arc<OutputDir>,
    pipeline: Pipeline,
}

impl Fixture {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        let output_dir = Arc::new(OutputDir::new().unwrap());
        let jobs = Arc::new(Jobs::default());
        let bash = BashTool::new(root.path().to_owned(), output_dir.clone())
            .base_env(path_and_home())
            .jobs(jobs.clone());
        let bash_output = BashOutputTool::new(jobs).output_dir(output_dir.clone());
        let registry = ToolRegistry::new()
            .with(bash.into_dyn())
            .unwrap()
            .with(bash_output.into_dyn())
            .unwrap();
        Self {
            _root: root,
            output_dir,
            pipeline: Pipeline::builder().registry(Arc::new(registry)).build(),
        }
    }

    async fn call(&self, call_id: &str, tool: &str, args: Value) -> ToolResult {
        self.pipeline
            .service()
            .oneshot(Call::new(call_id, tool, args))
            .await
            .unwrap()
    }

    /// `bash_output` with `args`: its text, which must be a success.
    async fn read(&self, args: Value) -> String {
        let result = self.call("r", "bash_output", args.clone()).await;
        assert_eq!(
            result.outcome,
            Outcome::Success,
            "{args}: {}",
            result.text()
        );
        result.text()
    }

    /// `bash_output` with `args`: its error, which must be one. A good
    /// read follows (of call `big`'s output, which the caller made), so
    /// that the pipeline's breaker (three errors in a row disable a tool)
    /// never trips.
    async fn refused(&self, args: Value) -> String {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let result = self.call("r", "bash_output", args.clone()).await;
        assert_eq!(result.outcome, Outcome::Failed, "{args}: {}", result.text());
        let offset = NEXT.fetch_add(1, Ordering::Relaxed);
        self.read(json!({"call_id": "big", "offset": offset, "limit": 1}))
            .await;
        result.text()
    }

    /// Runs `seq 1 100000` as call `big`: its result is cut.
    async fn big(&self) -> String {
        let result = self
            .call("big", "bash", json!({"command": "seq 1 100000"}))
            .await;
        assert_eq!(result.outcome, Outcome::Success);
        result.text()
    }
}

/// `     N\tN` for each of `lines`, as `read` numbers them.
fn numbered(lines: impl IntoIterator<Item = u64>) -> String {
    lines
        .into_iter()
        .map(|n| format!("{n:>6}\t{n}\n"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_result_says_how_to_read_it_again_by_call_id() {
    let fx = Fixture::new();
    let text = fx.big().await;
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("Exit code: 0"));
    assert!(lines.next().unwrap().starts_with("[Output truncated: "));
    assert_eq!(
        lines.next(),
        Some(
            "Read it again with bash_output {\"call_id\": \"big\", \"pattern\": \"REGEX\"} or {\"call_id\": \"big\", \"offset\": N, \"limit\": M}."
        )
    );
    assert_eq!(lines.next(), Some("1"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pattern_over_100000_lines_returns_exactly_the_matching_lines() {
    let fx = Fixture::new();
    fx.big().await;
    let text = fx
        .read(json!({"call_id": "big", "pattern": "^4242[0-9]$"}))
        .await;
    assert_eq!(
        text,
        format!(
            "{}[10 matching lines of 100000 lines, all shown.]",
            numbered(42420..=42429)
        )
    );
    // With context: the lines around, one group (the matches are adjacent).
    let text = fx
        .read(json!({"call_id": "big", "pattern": "^4242[0-9]$", "context": 2}))
        .await;
    assert_eq!(
        text,
        format!(
            "{}[10 matching lines of 100000 lines, all shown.]",
            numbered(42418..=42431)
        )
    );
    // Groups apart are separated by `--`; limit counts matches and the
    // last line names the call that reads on, from just before the next
    // match's context.
    let text = fx
        .read(json!({"call_id": "big", "pattern": "^[0-9]*777$", "context": 1, "limit": 2}))
        .await;
    assert_eq!(
        text,
        format!(
            "{}--\n{}[2 of 100 matching lines shown, of 100000 lines. Read on with bash_output {{\"call_id\": \"big\", \"pattern\": \"^[0-9]*777$\", \"context\": 1, \"offset\": 2776, \"limit\": 2}}.]",
            numbered(776..=778),
            numbered(1776..=1778)
        )
    );
    let text = fx
        .read(json!({"call_id": "big", "pattern": "^[0-9]*777$", "context": 1, "offset": 2776, "limit": 2}))
        .await;
    assert!(
        text.starts_with(&format!("{}--\n", numbered(2776..=2778))),
        "{text}"
    );
    assert!(
        text.ends_with("Read on with bash_output {\"call_id\": \"big\", \"pattern\": \"^[0-9]*777$\", \"context\": 1, \"offset\": 4776, \"limit\": 2}.]"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_of_lines_name_the_next_offset_and_stay_under_the_cap() {
    let fx = Fixture::new();
    fx.big().await;
    let text = fx
        .read(json!({"call_id": "big", "offset": 50001, "limit": 3}))
        .await;
    assert_eq!(
        text,
        format!(
            "{}[Lines 50001-50003 of 100000. Read on with bash_output {{\"call_id\": \"big\", \"offset\": 50004, \"limit\": 3}}.]",
            numbered(50001..=50003)
        )
    );
    // The default page: 200 lines.
    let text = fx.read(json!({"call_id": "big"})).await;
    assert!(text.starts_with(&numbered(1..=200)), "{text}");
    assert!(
        text.ends_with("[Lines 1-200 of 100000. Read on with bash_output {\"call_id\": \"big\", \"offset\": 201}.]"),
        "{text}"
    );
    // Long lines: a page is cut at 30,000 characters and says where to
    // go on.
    let wide = fx
        .call("wide", "bash", json!({"command": "seq -f '%0100g' 1 5000"}))
        .await;
    assert!(wide.text().contains("\"call_id\": \"wide\""));
    let text = fx
        .read(json!({"call_id": "wide", "offset": 10, "limit": 2000}))
        .await;
    let (body, last) = text.rsplit_once('\n').unwrap();
    assert!(body.chars().count() <= 30_000, "{}", body.len());
    let shown = body.lines().count() as u64;
    assert!(shown > 100 && shown < 2000, "{shown}");
    assert_eq!(
        last,
        format!(
            "[Lines 10-{} of 5000 (cut at 30,000 characters). Read on with bash_output {{\"call_id\": \"wide\", \"offset\": {}, \"limit\": 2000}}.]",
            9 + shown,
            10 + shown
        )
    );
    // The end of the output says so.
    let text = fx.read(json!({"call_id": "big", "offset": 99999})).await;
    assert_eq!(
        text,
        format!(
            "{}[Lines 99999-100000 of 100000: the end of the output.]",
            numbered(99999..=100000)
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_jobs_whole_output_is_read_by_job_id_and_offset() {
    let fx = Fixture::new();
    let started = fx
        .call(
            "bg",
            "bash",
            json!({"command": "seq 1 50000", "run_in_background": true}),
        )
        .await
        .text();
    assert!(
        started.starts_with("Started background job job-1: seq 1 50000"),
        "{started}"
    );
    // Wait for its end (new output is read and dropped meanwhile).
    let until = Instant::now() + Duration::from_secs(20);
    let mut ms = 1000;
    loop {
        let text = fx.read(json!({"job_id": "job-1", "wait_ms": ms})).await;
        if text.ends_with("Status: exited with code 0") {
            // A cut read of new output says how to read the job again.
            break;
        }
        assert!(Instant::now() < until, "the job never ended: {text}");
        ms += 1;
    }
    // The whole output from its start, not only what was new.
    let text = fx
        .read(json!({"job_id": "job-1", "offset": 2, "limit": 2}))
        .await;
    assert_eq!(
        text,
        format!(
            "{}[Lines 2-3 of 50000. Read on with bash_output {{\"job_id\": \"job-1\", \"offset\": 4, \"limit\": 2}}.]\nStatus: exited with code 0",
            numbered(2..=3)
        )
    );
    let text = fx
        .read(json!({"job_id": "job-1", "pattern": "^49999$"}))
        .await;
    assert_eq!(
        text,
        format!(
            "{}[1 matching line of 50000 lines, all shown.]\nStatus: exited with code 0",
            numbered([49999])
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_read_of_a_jobs_new_output_says_how_to_read_it_again() {
    let fx = Fixture::new();
    let started = fx
        .call(
            "bg",
            "bash",
            json!({"command": "seq 1 100000; sleep 30", "run_in_background": true}),
        )
        .await
        .text();
    let hint = "Read it again with bash_output {\"job_id\": \"job-1\", \"pattern\": \"REGEX\"} or {\"job_id\": \"job-1\", \"offset\": N, \"limit\": M}.";
    let mut seen = started.clone();
    let until = Instant::now() + Duration::from_secs(20);
    let mut ms = 100;
    while !seen.contains(hint) {
        assert!(Instant::now() < until, "no hint: {seen}");
        seen = fx.read(json!({"job_id": "job-1", "wait_ms": ms})).await;
        ms += 1;
    }
    // A running job reads as far as it got (its file may lag a little
    // behind what bash_output showed).
    let expected = format!(
        "{}[1 matching line of 100000 lines written so far, all shown.]\nStatus: running",
        numbered([100000])
    );
    loop {
        let text = fx
            .read(json!({"job_id": "job-1", "pattern": "^100000$"}))
            .await;
        if text == expected {
            break;
        }
        assert!(Instant::now() < until, "{text}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_arguments_get_errors_that_say_the_fix() {
    let fx = Fixture::new();
    fx.big().await;
    let bad = fx
        .refused(json!({"call_id": "big", "pattern": "(unclosed"}))
        .await;
    assert!(
        bad.starts_with("pattern is not a valid regular expression: "),
        "{bad}"
    );
    assert!(bad.contains("Fix the pattern"), "{bad}");
    let unknown = fx.refused(json!({"call_id": "nope", "pattern": "x"})).await;
    assert!(
        unknown
            .starts_with("No kept output for call \"nope\": only outputs that were cut are kept"),
        "{unknown}"
    );
    assert!(
        unknown.contains("for a background job give job_id"),
        "{unknown}"
    );
    // A call whose output fit keeps nothing.
    fx.call("small", "bash", json!({"command": "echo hi"}))
        .await;
    let small = fx.refused(json!({"call_id": "small"})).await;
    assert!(
        small.starts_with("No kept output for call \"small\""),
        "{small}"
    );
    let past = fx
        .refused(json!({"call_id": "big", "offset": 100001}))
        .await;
    assert_eq!(
        past,
        "offset 100001 is past the end: the saved output has 100000 lines. Give an offset from 1 to 100000."
    );
    let huge = fx
        .refused(json!({"call_id": "big", "limit": 1_000_000_000u64}))
        .await;
    // The schema's bounds refuse first (the tool's own messages, for a
    // caller that skips the schema, are tested in bash_output.rs).
    assert!(
        huge.ends_with("The parameter `limit` 1000000000 is greater than the maximum of 2000"),
        "{huge}"
    );
    let wide = fx
        .refused(json!({"call_id": "big", "pattern": "1", "context": 11}))
        .await;
    assert!(
        wide.ends_with("The parameter `context` 11 is greater than the maximum of 10"),
        "{wide}"
    );
    let both = fx
        .refused(json!({"call_id": "big", "job_id": "job-1"}))
        .await;
    assert!(
        both.starts_with("Give job_id or call_id, not both"),
        "{both}"
    );
    let neither = fx.refused(json!({"offset": 3})).await;
    assert!(
        neither.starts_with("Give job_id (a background job"),
        "{neither}"
    );
    let no_job = fx.refused(json!({"job_id": "job-9", "offset": 3})).await;
    assert!(
        no_job.starts_with("There is no background job \"job-9\"."),
        "{no_job}"
    );
    let filter = fx.refused(json!({"call_id": "big", "filter": "1"})).await;
    assert!(
        filter.contains("give pattern (and context) instead of filter"),
        "{filter}"
    );
    // The file removed under it (the folder's caps, or a command): said so.
    let path = std::fs::read_dir(fx.output_dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().contains("bash-big"))
        .unwrap();
    std::fs::remove_file(path).unwrap();
    let gone = fx
        .call("r", "bash_output", json!({"call_id": "big", "offset": 7}))
        .await;
    assert_eq!(gone.outcome, Outcome::Failed);
    let gone = gone.text();
    assert!(
        gone.starts_with("The saved output of call \"big\" is gone: the session's output folder removed it (the oldest first past 512 MiB, or after 12 hours)."),
        "{gone}"
    );
}

/// Through a session (its registry wires bash_output to the session's
/// output folder); the call id of another session is unknown here.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_finds_its_own_calls_and_not_another_sessions() {
    let start = || {
        let root = tempfile::tempdir().unwrap();
        let mut config = SessionConfig::new(root.path());
        config.mode = Some(agentcore::approval::Mode::Bypass);
        (Session::start(config).unwrap(), root)
    };
    let (one, _r1) = start();
    let (other, _r2) = start();
    let run = |session: &Session, id: &str, tool: &str, args: Value| {
        let call = agentcore::message::ToolCall::new(id, tool, args);
        let (sink, _events) = agentcore::EventSink::channel();
        let turn = session.turn(sink);
        async move { turn.run(vec![call]).await.unwrap().results.remove(0) }
    };
    let cut = run(&one, "s1", "bash", json!({"command": "seq 1 100000"})).await;
    assert!(
        cut.text()
            .contains("{\"call_id\": \"s1\", \"pattern\": \"REGEX\"}")
    );
    let found = run(
        &one,
        "r1",
        "bash_output",
        json!({"call_id": "s1", "pattern": "^77777$"}),
    )
    .await;
    assert_eq!(
        found.text(),
        format!(
            "{}[1 matching line of 100000 lines, all shown.]",
            numbered([77777])
        )
    );
    let elsewhere = run(
        &other,
        "r2",
        "bash_output",
        json!({"call_id": "s1", "pattern": "^77777$"}),
    )
    .await;
    assert_eq!(elsewhere.outcome, Outcome::Failed);
    assert!(
        elsewhere
            .text()
            .starts_with("No kept output for call \"s1\": "),
        "{}",
        elsewhere.text()
    );
}
