//! The scheduler parses and coerces a call's arguments to classify it, and
//! the pipeline's Coerce stage uses that result instead of doing it again;
//! a result made for another registration of the tool, or for arguments
//! since replaced, is never used.
//!
//! A coercion walks the tool's schema, which it reads once through
//! `Tool::schema`; the tool below counts those reads.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agentcore::message::ToolCall;
use agentcore::scheduler::{Scheduler, SchedulerConfig};
use agentcore::turn::Turn;
use agentcore::{
    BoxFuture, Call, CallContext, EventSink, GatedArgs, Outcome, Pipeline, Tool, ToolError,
    ToolOutput, ToolRegistry,
};
use serde_json::{Value, json};
use tower::ServiceExt;

/// Echoes its arguments; counts how often its schema is read.
struct Echo {
    name: &'static str,
    schema: Value,
    reads: Arc<AtomicUsize>,
}

impl Echo {
    /// `n` of type `n_type`.
    fn new(name: &'static str, n_type: &str) -> (Arc<Self>, Arc<AtomicUsize>) {
        let reads = Arc::new(AtomicUsize::new(0));
        let tool = Arc::new(Self {
            name,
            schema: json!({"type": "object", "properties": {"n": {"type": n_type}}}),
            reads: reads.clone(),
        });
        (tool, reads)
    }
}

impl Tool for Echo {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "echoes its arguments"
    }
    fn schema(&self) -> &Value {
        self.reads.fetch_add(1, Ordering::SeqCst);
        &self.schema
    }
    fn read_only(&self, _args: &Value) -> bool {
        true
    }
    fn execute<'a>(
        &'a self,
        args: GatedArgs,
        _cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move { Ok(ToolOutput::text(args.value().to_string())) })
    }
}

fn registry(tool: Arc<Echo>) -> Arc<ToolRegistry> {
    Arc::new(ToolRegistry::new().with(tool).expect("register"))
}

/// Schema reads since `reads` was last taken.
fn take(reads: &AtomicUsize) -> usize {
    reads.swap(0, Ordering::SeqCst)
}

#[tokio::test]
async fn each_call_of_a_turn_is_coerced_once() {
    let (tool, reads) = Echo::new("echo", "integer");
    let registry = registry(tool);
    let pipeline = Pipeline::builder().registry(registry.clone()).build();
    let scheduler = Scheduler::new(pipeline.service(), registry, SchedulerConfig::default());
    take(&reads);
    let calls = (0..10).map(|i| ToolCall::new(format!("c{i}"), "echo", json!({"n": "3"})));
    let result = Turn::new(&scheduler, EventSink::noop())
        .run(calls)
        .await
        .unwrap();
    assert!(result.results.iter().all(|r| r.text() == r#"{"n":3}"#));
    assert_eq!(take(&reads), 10, "one coercion a call, not two");
}

#[tokio::test]
async fn a_call_through_the_pipeline_alone_is_coerced_once() {
    let (tool, reads) = Echo::new("echo", "integer");
    let pipeline = Pipeline::builder().registry(registry(tool)).build();
    take(&reads);
    let result = pipeline
        .service()
        .oneshot(Call::new("c1", "echo", json!({"n": "3"})))
        .await
        .unwrap();
    assert_eq!(result.text(), r#"{"n":3}"#);
    assert_eq!(take(&reads), 1);
}

#[tokio::test]
async fn refused_arguments_end_the_call_with_the_same_message_as_without_the_scheduler() {
    let (tool, _) = Echo::new("echo", "integer");
    let registry = registry(tool);
    let pipeline = Pipeline::builder()
        .registry(registry.clone())
        .max_tool_errors(0)
        .build();
    let scheduler = Scheduler::new(pipeline.service(), registry, SchedulerConfig::default());
    for args in ["{not json", "[1]", r#"{"n": "x"}"#] {
        let direct = pipeline
            .service()
            .oneshot(Call::new("c1", "echo", args))
            .await
            .unwrap();
        let scheduled = scheduler
            .clone()
            .oneshot(Call::new("c1", "echo", args))
            .await
            .unwrap();
        assert_eq!(scheduled.outcome, Outcome::Failed, "{args}");
        assert_eq!(scheduled.text(), direct.text(), "{args}");
    }
}

#[tokio::test]
async fn a_pipeline_resolving_another_registration_coerces_to_its_own_schema() {
    // The scheduler classifies against a registry where `n` is an integer;
    // the pipeline it runs resolves the tool from a registry where `n` is a
    // string. The classification's coercion (to 3) must not reach the tool.
    let (for_scheduler, scheduler_reads) = Echo::new("echo", "integer");
    let (for_pipeline, pipeline_reads) = Echo::new("echo", "string");
    let pipeline = Pipeline::builder().registry(registry(for_pipeline)).build();
    let scheduler = Scheduler::new(
        pipeline.service(),
        registry(for_scheduler),
        SchedulerConfig::default(),
    );
    take(&scheduler_reads);
    take(&pipeline_reads);
    let result = scheduler
        .oneshot(Call::new("c1", "echo", json!({"n": "3"})))
        .await
        .unwrap();
    assert_eq!(result.text(), r#"{"n":"3"}"#);
    assert_eq!(take(&scheduler_reads), 1, "classified once");
    assert_eq!(take(&pipeline_reads), 1, "coerced again for its own tool");
}

#[tokio::test]
async fn a_coercion_made_for_another_tool_is_not_used() {
    let (echo, echo_reads) = Echo::new("echo", "string");
    let (other, other_reads) = Echo::new("other", "integer");
    let registry = Arc::new(
        ToolRegistry::new()
            .with(echo)
            .and_then(|r| r.with(other))
            .expect("register"),
    );
    let pipeline = Pipeline::builder().registry(registry.clone()).build();
    let mut call = Call::new("c1", "echo", json!({"n": "3"}));
    let other = registry.get("other").expect("registered");
    assert_eq!(call.coerce_for(other), Ok(&json!({"n": 3})));
    take(&echo_reads);
    take(&other_reads);
    let result = pipeline.service().oneshot(call).await.unwrap();
    assert_eq!(result.text(), r#"{"n":"3"}"#);
    assert_eq!(take(&echo_reads), 1);
    assert_eq!(take(&other_reads), 0);
}

#[tokio::test]
async fn rewritten_arguments_are_coerced_again() {
    let (tool, reads) = Echo::new("echo", "integer");
    let registry = registry(tool);
    let pipeline = Pipeline::builder().registry(registry.clone()).build();
    let entry = registry.get("echo").expect("registered");
    take(&reads);
    let mut call = Call::new("c1", "echo", json!({"n": "3"}));
    assert_eq!(call.coerce_for(entry), Ok(&json!({"n": 3})));
    // Asking again for the same tool uses what is kept.
    assert_eq!(call.coerce_for(entry), Ok(&json!({"n": 3})));
    assert_eq!(take(&reads), 1);
    // A harness rewrites the arguments before the pipeline runs the call.
    let call = call.with_args(json!({"n": "4"}));
    let result = pipeline.service().oneshot(call).await.unwrap();
    assert_eq!(result.text(), r#"{"n":4}"#);
    assert_eq!(take(&reads), 1, "the new arguments are coerced");
}

#[tokio::test]
async fn a_refusal_kept_on_the_call_ends_it_in_the_pipeline() {
    let (tool, _) = Echo::new("echo", "integer");
    let registry = registry(tool);
    let pipeline = Pipeline::builder().registry(registry.clone()).build();
    let entry = registry.get("echo").expect("registered");
    let mut call = Call::new("c1", "echo", "[1]");
    let message = call.coerce_for(entry).unwrap_err().to_owned();
    let result = pipeline.service().oneshot(call).await.unwrap();
    assert_eq!(result.outcome, Outcome::Failed);
    assert_eq!(result.text(), message);
}
