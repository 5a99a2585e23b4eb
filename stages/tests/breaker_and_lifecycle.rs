//! The breaker across calls, progress events, dropped futures and user
//! middleware at the insertion point.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use agentcore_stages::{
    BoxFuture, Call, CallContext, Event, GatedArgs, Outcome, Pipeline, Tool, ToolError, ToolOutput,
    ToolRegistry, UpdateKind,
};
use common::*;
use serde_json::{Value, json};
use tower::{ServiceBuilder, ServiceExt};

/// Fails while `failing` is set.
struct Flaky {
    failing: Arc<AtomicBool>,
    schema: Value,
}

impl Tool for Flaky {
    fn name(&self) -> &str {
        "flaky"
    }
    fn description(&self) -> &str {
        "fails on demand"
    }
    fn schema(&self) -> &Value {
        &self.schema
    }
    fn execute<'a>(
        &'a self,
        _args: GatedArgs,
        _cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        let failing = self.failing.load(Ordering::SeqCst);
        Box::pin(async move {
            if failing {
                Err(ToolError::new("broken"))
            } else {
                Ok(ToolOutput::text("ok"))
            }
        })
    }
}

#[tokio::test]
async fn three_failures_disable_one_success_resets_and_a_new_prompt_reenables() {
    let failing = Arc::new(AtomicBool::new(true));
    let tool = Flaky {
        failing: failing.clone(),
        schema: json!({"type": "object"}),
    };
    let p = Pipeline::builder()
        .registry(Arc::new(ToolRegistry::new().with(Arc::new(tool)).unwrap()))
        .build();
    let svc = p.service();

    // Two failures, then a success: the count goes back to zero.
    for i in 0..2 {
        assert_eq!(
            run(&svc, Call::new(format!("a{i}"), "flaky", ""))
                .await
                .outcome,
            Outcome::Failed
        );
    }
    failing.store(false, Ordering::SeqCst);
    assert_eq!(
        run(&svc, Call::new("a2", "flaky", "")).await.outcome,
        Outcome::Success
    );
    assert_eq!(p.breaker().count("flaky"), 0);

    // Three in a row disable it, even once it would work again.
    failing.store(true, Ordering::SeqCst);
    for i in 0..3 {
        assert_eq!(
            run(&svc, Call::new(format!("b{i}"), "flaky", ""))
                .await
                .outcome,
            Outcome::Failed
        );
    }
    failing.store(false, Ordering::SeqCst);
    let r = run(&svc, Call::new("b3", "flaky", "")).await;
    assert_eq!(r.outcome, Outcome::Disabled);
    assert_eq!(
        r.text(),
        r#"tool "flaky" disabled after 3 consecutive errors"#
    );

    // The harness resets at a new user prompt.
    p.breaker().reset();
    assert_eq!(
        run(&svc, Call::new("c0", "flaky", "")).await.outcome,
        Outcome::Success
    );
}

#[tokio::test]
async fn zero_max_tool_errors_disables_the_breaker() {
    let p = Pipeline::builder()
        .registry(registry(vec![ScriptTool::new("t", Behavior::Fail("x"))]))
        .max_tool_errors(0)
        .build();
    let svc = p.service();
    for i in 0..6 {
        let r = run(&svc, Call::new(format!("c{i}"), "t", "")).await;
        assert_eq!(r.outcome, Outcome::Failed);
    }
}

#[tokio::test]
async fn progress_becomes_updates_between_start_and_end() {
    let (p, mut rx) = pipeline(vec![ScriptTool::new(
        "t",
        Behavior::Progress(vec![json!({"pct": 50}), json!({"pct": 100})]),
    )]);
    run(&p.service(), Call::new("c1", "t", "")).await;
    let events = drain(&mut rx);
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| match e {
            Event::ToolExecStart { .. } => "start",
            Event::ToolExecUpdate {
                kind: UpdateKind::Progress,
                ..
            } => "progress",
            Event::ToolExecEnd { .. } => "end",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["start", "progress", "progress", "end"]);
    assert_paired(&events);
}

/// Hands its progress reporter out, to report after the call ended.
struct Leaky {
    schema: Value,
    leaked: Arc<std::sync::Mutex<Option<agentcore_stages::ProgressReporter>>>,
}

impl Tool for Leaky {
    fn name(&self) -> &str {
        "leaky"
    }
    fn description(&self) -> &str {
        "keeps its reporter"
    }
    fn schema(&self) -> &Value {
        &self.schema
    }
    fn execute<'a>(
        &'a self,
        _args: GatedArgs,
        cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        *self.leaked.lock().unwrap() = Some(cx.progress());
        Box::pin(async { Ok(ToolOutput::text("ok")) })
    }
}

#[tokio::test]
async fn no_progress_event_follows_the_end() {
    let leaked = Arc::new(std::sync::Mutex::new(None));
    let tool = Leaky {
        schema: json!({"type": "object"}),
        leaked: leaked.clone(),
    };
    let (sink, mut rx) = agentcore_stages::EventSink::channel();
    let p = Pipeline::builder()
        .registry(Arc::new(ToolRegistry::new().with(Arc::new(tool)).unwrap()))
        .sink(sink)
        .build();
    run(&p.service(), Call::new("c1", "leaky", "")).await;
    let reporter = leaked.lock().unwrap().take().unwrap();
    assert!(!reporter.report(json!("late")), "a late report is refused");
    let events = drain(&mut rx);
    assert!(matches!(events.last(), Some(Event::ToolExecEnd { .. })));
    assert_paired(&events);
}

#[tokio::test]
async fn dropping_the_future_emits_cancelled_end_and_cancels_the_token() {
    let (p, mut rx) = pipeline(vec![ScriptTool::new("t", Behavior::Hang)]);
    let c = agentcore_stages::Cancellation::new();
    let mut fut = Box::pin(
        p.service()
            .oneshot(Call::new("c1", "t", "").with_cancellation(c.clone())),
    );
    // Poll until the tool is running, then drop.
    let polled = tokio::time::timeout(Duration::from_millis(20), &mut fut).await;
    assert!(polled.is_err(), "the tool hangs");
    drop(fut);
    assert!(c.is_cancelled(), "the guard cancels the call's token");
    let events = drain(&mut rx);
    assert_paired(&events);
    match events.last() {
        Some(Event::ToolExecEnd {
            outcome, content, ..
        }) => {
            assert_eq!(*outcome, Outcome::Cancelled);
            assert_eq!(content[0].as_text(), Some("Tool execution cancelled."));
        }
        other => panic!("expected End, got {other:?}"),
    }
    assert_eq!(p.breaker().count("t"), 0);
}

#[tokio::test]
async fn dropping_before_the_first_poll_still_pairs() {
    let (p, mut rx) = pipeline(vec![ScriptTool::new("t", Behavior::Succeed("x"))]);
    let mut svc = p.service();
    let fut = tower::Service::call(&mut svc, Call::new("c1", "t", ""));
    // Start is emitted in call(), before any poll.
    assert!(matches!(rx.try_recv(), Ok(Event::ToolExecStart { .. })));
    drop(fut);
    match rx.try_recv() {
        Ok(Event::ToolExecEnd { outcome, .. }) => assert_eq!(outcome, Outcome::Cancelled),
        other => panic!("expected End, got {other:?}"),
    }
}

#[tokio::test]
async fn tower_timeout_at_the_insertion_point_fails_the_call() {
    let (p, mut rx) = pipeline(vec![ScriptTool::new("slow", Behavior::Hang)]);
    let svc = p.service_with(ServiceBuilder::new().timeout(Duration::from_millis(10)));
    let r = run(&svc, Call::new("c1", "slow", "")).await;
    assert_eq!(r.outcome, Outcome::Failed);
    assert_eq!(r.text(), r#"tool "slow" timed out"#);
    assert_eq!(p.breaker().count("slow"), 1);
    assert_paired(&drain(&mut rx));
}

#[tokio::test]
async fn middleware_runs_outermost_first_and_its_errors_fail_the_call() {
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    let o1 = order.clone();
    let o2 = order.clone();
    let refused = Arc::new(AtomicUsize::new(0));
    let refused2 = refused.clone();
    let (p, _rx) = pipeline(vec![ScriptTool::new("t", Behavior::Succeed("ran"))]);
    let svc = p.service_with(
        ServiceBuilder::new()
            .map_request(move |c: Call<agentcore_stages::Gated>| {
                o1.lock().unwrap().push("outer");
                c
            })
            .map_request(move |c: Call<agentcore_stages::Gated>| {
                o2.lock().unwrap().push("inner");
                c
            })
            .filter(move |c: Call<agentcore_stages::Gated>| {
                if c.call_id() == "blocked" {
                    refused2.fetch_add(1, Ordering::SeqCst);
                    Err(agentcore_stages::BoxError::from(
                        "rate limited: try again later",
                    ))
                } else {
                    Ok(c)
                }
            }),
    );
    let r = run(&svc, Call::new("c1", "t", "")).await;
    assert_eq!(r.outcome, Outcome::Success);
    assert_eq!(*order.lock().unwrap(), ["outer", "inner"]);
    let r = run(&svc, Call::new("blocked", "t", "")).await;
    assert_eq!(r.outcome, Outcome::Failed);
    assert_eq!(r.text(), "rate limited: try again later");
    assert_eq!(refused.load(Ordering::SeqCst), 1);
}
