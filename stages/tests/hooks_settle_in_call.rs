//! Validate and Preview decide in `call()` when a tool's hook returns a
//! future that holds no state and settles at once, and await it otherwise.
//! Whichever path a call takes, its result is the one the hook gave: a
//! refusal stays a refusal, a hook that did not settle at once is made again
//! and awaited, a hook that changes shape between calls is followed, and a
//! panic in a hook (inside `call()` now) becomes `Failed` with one End.

mod common;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

use agentcore_stages::{
    BoxFuture, Call, CallContext, Event, EventSink, GatedArgs, Outcome, Pipeline, Tool, ToolError,
    ToolOutput, ToolRegistry, ValidationFailure,
};
use common::{drain, run};
use serde_json::{Value, json};

/// How the hooks of a [`Hooked`] tool answer.
#[derive(Clone, Copy)]
enum Shape {
    /// A stateless future refusing at once.
    RefuseAtOnce,
    /// A stateless future that is pending on its first poll, then allows.
    PendingOnce,
    /// Stateless on even calls, an `async` block on odd ones; both refuse.
    Alternating,
    /// A stateless future that panics when polled.
    Panics,
}

struct Hooked {
    schema: Value,
    shape: Shape,
    /// `validate` calls so far (the future made, whether polled or not).
    made: Arc<AtomicUsize>,
    executions: Arc<AtomicUsize>,
}

/// Refuses with code 3 when polled.
struct RefuseNow;

impl Future for RefuseNow {
    type Output = Result<(), ValidationFailure>;
    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Self::Output> {
        Poll::Ready(Err(ValidationFailure::new(3, "refused at once")))
    }
}

/// Polls left before [`PendingOnce`] allows: one per made future.
static PENDING_POLLS: AtomicUsize = AtomicUsize::new(0);

/// Pending (waking itself) while `PENDING_POLLS` is above zero.
struct PendingOnce;

impl Future for PendingOnce {
    type Output = Result<(), ValidationFailure>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let left = PENDING_POLLS.load(Ordering::SeqCst);
        if left > 0 {
            PENDING_POLLS.store(left - 1, Ordering::SeqCst);
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        Poll::Ready(Ok(()))
    }
}

/// Panics when polled.
struct PanicNow;

impl Future for PanicNow {
    type Output = Result<(), ValidationFailure>;
    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Self::Output> {
        panic!("validator blew up")
    }
}

impl Tool for Hooked {
    fn name(&self) -> &str {
        "hooked"
    }
    fn description(&self) -> &str {
        "hooks of a chosen shape"
    }
    fn schema(&self) -> &Value {
        &self.schema
    }
    fn validate<'a>(
        &'a self,
        args: &'a Value,
        _cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<(), ValidationFailure>> {
        let n = self.made.fetch_add(1, Ordering::SeqCst);
        match self.shape {
            Shape::RefuseAtOnce => Box::pin(RefuseNow),
            Shape::PendingOnce => Box::pin(PendingOnce),
            Shape::Alternating if n.is_multiple_of(2) => Box::pin(RefuseNow),
            Shape::Alternating => Box::pin(async move {
                let _ = args;
                Err(ValidationFailure::new(3, "refused at once"))
            }),
            Shape::Panics => Box::pin(PanicNow),
        }
    }
    fn execute<'a>(
        &'a self,
        _args: GatedArgs,
        _cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        self.executions.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Ok(ToolOutput::text("ran")) })
    }
}

fn hooked(shape: Shape) -> (Pipeline, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let made = Arc::new(AtomicUsize::new(0));
    let executions = Arc::new(AtomicUsize::new(0));
    let tool = Hooked {
        schema: json!({"type": "object"}),
        shape,
        made: made.clone(),
        executions: executions.clone(),
    };
    let registry = Arc::new(ToolRegistry::new().with(Arc::new(tool)).unwrap());
    // The breaker off: every call reaches Validate.
    let pipeline = Pipeline::builder()
        .registry(registry)
        .max_tool_errors(0)
        .build();
    (pipeline, made, executions)
}

#[tokio::test]
async fn a_stateless_refusal_refuses_on_every_path() {
    let (p, made, executions) = hooked(Shape::RefuseAtOnce);
    for i in 0..4 {
        let r = run(&p.service(), Call::new(format!("c{i}"), "hooked", "{}")).await;
        assert_eq!(r.outcome, Outcome::Failed);
        assert_eq!(r.error_code, Some(3));
        assert_eq!(r.text(), "refused at once");
    }
    // Awaited the first time, settled in `call()` from then on: made once
    // a call.
    assert_eq!(made.load(Ordering::SeqCst), 4);
    assert_eq!(executions.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_stateless_hook_that_does_not_settle_at_once_is_made_again_and_awaited() {
    let (p, made, executions) = hooked(Shape::PendingOnce);
    // The first call learns the shape (awaited, no pending left to see).
    let r = run(&p.service(), Call::new("c0", "hooked", "{}")).await;
    assert_eq!(r.outcome, Outcome::Success);
    // The second is tried in `call()`, pends, and is made again and awaited.
    PENDING_POLLS.store(1, Ordering::SeqCst);
    let r = run(&p.service(), Call::new("c1", "hooked", "{}")).await;
    assert_eq!(r.outcome, Outcome::Success);
    assert_eq!(made.load(Ordering::SeqCst), 3);
    // From then on it is awaited only: made once a call, even pending.
    PENDING_POLLS.store(2, Ordering::SeqCst);
    let r = run(&p.service(), Call::new("c2", "hooked", "{}")).await;
    assert_eq!(r.outcome, Outcome::Success);
    assert_eq!(made.load(Ordering::SeqCst), 4);
    assert_eq!(executions.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_hook_that_changes_shape_between_calls_is_followed() {
    let (p, _made, executions) = hooked(Shape::Alternating);
    for i in 0..6 {
        let r = run(&p.service(), Call::new(format!("c{i}"), "hooked", "{}")).await;
        assert_eq!(r.outcome, Outcome::Failed, "call {i}");
        assert_eq!(r.text(), "refused at once", "call {i}");
    }
    assert_eq!(executions.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_panicking_stateless_hook_fails_the_call_with_one_end_on_every_path() {
    let (p, _made, executions) = hooked(Shape::Panics);
    let (sink, mut rx) = EventSink::channel();
    for i in 0..3 {
        let call = Call::new(format!("c{i}"), "hooked", "{}").with_sink(sink.clone());
        let r = run(&p.service(), call).await;
        assert_eq!(r.outcome, Outcome::Failed);
        assert_eq!(r.text(), r#"tool "hooked" panicked: validator blew up"#);
    }
    let events = drain(&mut rx);
    let ends = events
        .iter()
        .filter(|e| matches!(e, Event::ToolExecEnd { .. }))
        .count();
    assert_eq!(ends, 3);
    assert_eq!(executions.load(Ordering::SeqCst), 0);
}
