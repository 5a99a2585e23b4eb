//! Issue 13 item 12: grep `a{30000}` on a 200 KB file took 4.2 s, and
//! `a{100000}` on a 5 MB line ran past a minute and kept running after an
//! abort. A pattern whose compiled form is too large is now refused at
//! once with a message saying how to fix it, and a search observes
//! cancellation between files and inside a large file.

use std::fs;
use std::time::{Duration, Instant};

use agentcore::TypedTool;
use agentcore::fs::workspace::Workspace;
use agentcore::tools::grep::GrepTool;
use agentcore::{CallContext, CancelReason, EventSink, GatedArgs};
use serde_json::json;

use crate::support::text_of;

#[tokio::test]
async fn a_pattern_too_large_once_compiled_is_refused_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("big.txt"), "a".repeat(200_000)).unwrap();
    let tool = GrepTool::new(Workspace::new(dir.path()).unwrap()).into_dyn();
    for pattern in [
        "a{30000}",
        "a{100000}",
        "(a|b){50000}",
        r"\w{5000}",
        "[a-z]{20000}x",
        "(a{40}){40}",
        // Within the repetition bound, over the compiled size bound.
        r"\w{300}",
        r"(\w{30}){30}",
    ] {
        let cx = CallContext::for_test("r1", EventSink::noop());
        let err = tool
            .execute(GatedArgs::for_test(json!({"pattern": pattern})), &cx)
            .await
            .unwrap_err();
        assert!(!err.cancelled);
        let text = text_of(&err.content);
        assert!(
            text.starts_with(&format!(
                "Invalid regular expression \"{pattern}\": the pattern is too large once compiled ("
            )),
            "{text}"
        );
        assert!(text.contains("simplify it"), "{text}");
    }
}

#[tokio::test]
async fn ordinary_patterns_stay_within_the_bound() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("a.rs"),
        "fn main() { let needle_42 = 1; }\n",
    )
    .unwrap();
    let tool = GrepTool::new(Workspace::new(dir.path()).unwrap()).into_dyn();
    for pattern in [
        r"fn\s+main",
        r"\w+_\d{2}",
        r"(?i)NEEDLE",
        r"a{1000}|needle",
        r"(a{10}){100}|needle",
        r"\w{100}|needle",
        r"[[:alpha:]]{200}|let",
        r"\p{L}{50}|let",
    ] {
        let cx = CallContext::for_test("r2", EventSink::noop());
        let out = tool
            .execute(GatedArgs::for_test(json!({"pattern": pattern})), &cx)
            .await
            .unwrap_or_else(|e| panic!("{pattern}: {}", text_of(&e.content)));
        assert_eq!(text_of(&out.content), "Found 1 file\na.rs", "{pattern}");
    }
}

/// A 5 MB file of one line, searched with a pattern that is as slow as the
/// bound allows, cancelled shortly after it starts: the call returns
/// Cancelled (its blocking work has finished when `execute` returns). How
/// long it took is printed, never asserted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_inside_a_large_file_stops_when_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..4 {
        let mut body = "ab".repeat(2_500_000);
        body.push('\n');
        fs::write(dir.path().join(format!("line{i}.txt")), body).unwrap();
    }
    let tool = GrepTool::new(Workspace::new(dir.path()).unwrap()).into_dyn();
    let cx = CallContext::for_test("r3", EventSink::noop());
    let cancel = cx.cancellation().clone();
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancel.cancel(CancelReason::Abort);
    });
    let started = Instant::now();
    let result = tool
        .execute(
            GatedArgs::for_test(json!({"pattern": "(a|b|ab|ba){500}c", "output_mode": "content"})),
            &cx,
        )
        .await;
    canceller.await.unwrap();
    eprintln!("cancelled search returned after {:?}", started.elapsed());
    let err = result.expect_err("the search was cancelled");
    assert!(err.cancelled, "{}", text_of(&err.content));
}

#[tokio::test]
async fn a_search_cancelled_before_it_starts_reads_nothing() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..50 {
        fs::write(dir.path().join(format!("f{i}.txt")), "needle\n").unwrap();
    }
    let tool = GrepTool::new(Workspace::new(dir.path()).unwrap()).into_dyn();
    let cx = CallContext::for_test("r4", EventSink::noop());
    cx.cancellation().cancel(CancelReason::Abort);
    let err = tool
        .execute(GatedArgs::for_test(json!({"pattern": "needle"})), &cx)
        .await
        .unwrap_err();
    assert!(err.cancelled);
    assert_eq!(text_of(&err.content), "Search cancelled.");
}
