//! The approval engine's approver slot, as the MCP server uses it: an
//! approver bound after the gate was built is asked; an unbound one is not;
//! the sentence saying why no one can be asked joins the
//! `approval required: ` deny; a question unanswered within the ask timeout
//! is dropped and denied; a cancelled call drops its question; an
//! "unanswered" answer denies with its own reason.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use agentcore::approval::{ApprovalAnswer, ApprovalEngine, Mode, approver_fn};
use agentcore::{
    BoxFuture, Call, CallContext, CancelReason, Cancellation, GatedArgs, Outcome, Pipeline, Tool,
    ToolError, ToolOutput, ToolRegistry, ToolResult,
};
use serde_json::{Value, json};
use tower::ServiceExt;

/// A tool named `write` with the built-in write's permissions, which
/// counts its runs.
struct Write {
    schema: Value,
    extensions: http::Extensions,
    runs: Arc<AtomicUsize>,
}

impl Tool for Write {
    fn name(&self) -> &str {
        "write"
    }
    fn description(&self) -> &str {
        "test stub"
    }
    fn schema(&self) -> &Value {
        &self.schema
    }
    fn execute<'a>(
        &'a self,
        _args: GatedArgs,
        _cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Ok(ToolOutput::text("ran")) })
    }
    fn extensions(&self) -> &http::Extensions {
        &self.extensions
    }
}

/// A pipeline gated by `engine` (built now, before any approver is bound),
/// and the count of the tool's runs.
fn pipeline(engine: &ApprovalEngine) -> (Pipeline, Arc<AtomicUsize>) {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut registry = ToolRegistry::new();
    registry
        .register(Arc::new(Write {
            schema: json!({"type": "object"}),
            extensions: agentcore::tools::write::permissions().into_extensions(),
            runs: runs.clone(),
        }))
        .unwrap();
    let pipeline = Pipeline::builder()
        .registry(Arc::new(registry))
        .gate(Arc::new(engine.clone()))
        .build();
    (pipeline, runs)
}

async fn write(p: &Pipeline, id: &str) -> ToolResult {
    p.service()
        .oneshot(Call::new(
            id,
            "write",
            json!({"file_path": "a.txt", "content": "x"}),
        ))
        .await
        .expect("infallible")
}

fn engine() -> (tempfile::TempDir, ApprovalEngine) {
    let root = tempfile::tempdir().unwrap();
    let engine = ApprovalEngine::new(root.path()).with_mode(Mode::Default);
    (root, engine)
}

/// Sets the flag when dropped: the approver's future was dropped.
struct DroppedFlag(Arc<AtomicBool>);

impl Drop for DroppedFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn an_approver_bound_after_the_gate_was_built_is_asked_and_unbinding_it_stops_asking() {
    let (_root, engine) = engine();
    let (p, runs) = pipeline(&engine);
    assert!(!engine.has_approver());
    engine.set_approver(Some(Arc::new(approver_fn(|_| async {
        ApprovalAnswer::AllowOnce
    }))));
    assert!(engine.has_approver());
    let r = write(&p, "1").await;
    assert_eq!(r.outcome, Outcome::Success, "{}", r.text());
    assert_eq!(runs.load(Ordering::SeqCst), 1);

    engine.set_approver(None);
    let r = write(&p, "2").await;
    assert_eq!(r.outcome, Outcome::Denied);
    assert!(r.text().starts_with("approval required: "), "{}", r.text());
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn the_sentence_why_no_one_can_ask_joins_the_deny_before_the_rule_hint() {
    let (_root, engine) = engine();
    let (p, runs) = pipeline(&engine);
    let before = write(&p, "1").await.text();
    engine.set_no_approver_reason(Some("The MCP client cannot ask the user.".to_owned()));
    let r = write(&p, "2").await;
    assert_eq!(r.outcome, Outcome::Denied);
    let text = r.text();
    assert!(text.starts_with("approval required: "), "{text}");
    assert!(
        text.contains(
            "The MCP client cannot ask the user. No one can approve it in this session, so it was not run."
        ),
        "{text}"
    );
    assert!(
        text.contains("allow = [\"write("),
        "the rule hint stays: {text}"
    );
    // Without the sentence, the text is today's.
    engine.set_no_approver_reason(None);
    assert_eq!(write(&p, "3").await.text(), before);
    // With an approver, the sentence is not used.
    engine.set_no_approver_reason(Some("The MCP client cannot ask the user.".to_owned()));
    engine.set_approver(Some(Arc::new(approver_fn(|_| async {
        ApprovalAnswer::Deny(None)
    }))));
    let text = write(&p, "4").await.text();
    assert!(text.starts_with("the user denied this call"), "{text}");
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test(start_paused = true)]
async fn a_question_unanswered_within_the_ask_timeout_is_dropped_and_denied() {
    let (_root, engine) = engine();
    let engine = engine.with_ask_timeout(Some(Duration::from_millis(1500)));
    let (p, runs) = pipeline(&engine);
    let dropped = Arc::new(AtomicBool::new(false));
    let flag = dropped.clone();
    engine.set_approver(Some(Arc::new(approver_fn(move |_| {
        let guard = DroppedFlag(flag.clone());
        async move {
            let _guard = guard;
            std::future::pending::<()>().await;
            ApprovalAnswer::AllowOnce
        }
    }))));
    let r = write(&p, "1").await;
    assert_eq!(r.outcome, Outcome::Denied);
    assert!(
        r.text().starts_with(
            "approval timed out: no answer came within 1.5 s, so the call was not run."
        ),
        "{}",
        r.text()
    );
    assert!(dropped.load(Ordering::SeqCst), "the question was dropped");
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert!(engine.session_grants().is_empty());
}

#[tokio::test]
async fn a_call_cancelled_while_asking_drops_the_question() {
    let (_root, engine) = engine();
    let (p, runs) = pipeline(&engine);
    let asked = Arc::new(tokio::sync::Notify::new());
    let dropped = Arc::new(AtomicBool::new(false));
    let (flag, notify) = (dropped.clone(), asked.clone());
    engine.set_approver(Some(Arc::new(approver_fn(move |_| {
        let guard = DroppedFlag(flag.clone());
        notify.notify_one();
        async move {
            let _guard = guard;
            std::future::pending::<()>().await;
            ApprovalAnswer::AllowOnce
        }
    }))));
    let cancellation = Cancellation::new();
    let call = Call::new("1", "write", json!({"file_path": "a.txt", "content": "x"}))
        .with_cancellation(cancellation.clone());
    let running = tokio::spawn(p.service().oneshot(call));
    asked.notified().await;
    cancellation.cancel(CancelReason::Abort);
    let r = running.await.unwrap().expect("infallible");
    assert_eq!(r.outcome, Outcome::Cancelled, "{}", r.text());
    assert!(dropped.load(Ordering::SeqCst), "the question was dropped");
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn an_unanswered_answer_denies_with_its_own_reason() {
    let (_root, engine) = engine();
    let (p, runs) = pipeline(&engine);
    engine.set_approver(Some(Arc::new(approver_fn(|_| async {
        ApprovalAnswer::Unanswered("approval failed: the client broke. Ask again later.".into())
    }))));
    let r = write(&p, "1").await;
    assert_eq!(r.outcome, Outcome::Denied);
    assert_eq!(
        r.text(),
        "approval failed: the client broke. Ask again later."
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}
