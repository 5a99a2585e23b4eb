//! Test tools and helpers shared by the behaviour tests.
#![allow(dead_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agentcore_stages::{
    BoxFuture, Call, CallContext, Event, EventSink, GatedArgs, Pipeline, PipelineService, Tool,
    ToolError, ToolOutput, ToolRegistry, ToolResult, ValidationFailure,
};
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;
use tower::ServiceExt;

/// What a [`ScriptTool`] does when executed.
#[derive(Clone, Debug)]
pub enum Behavior {
    /// Returns the args as JSON text.
    Echo,
    /// Returns `Ok` with this text.
    Succeed(&'static str),
    /// Returns `Err` with this text.
    Fail(&'static str),
    /// Panics with this message.
    Panic(&'static str),
    /// Never returns.
    Hang,
    /// Reports these progress values, then succeeds.
    Progress(Vec<Value>),
    /// Sleeps, then succeeds.
    Sleep(Duration),
}

/// A tool whose behaviour a test chooses.
pub struct ScriptTool {
    pub name: &'static str,
    pub label: Option<&'static str>,
    pub schema: Value,
    pub behavior: Behavior,
    pub validate: Option<ValidationFailure>,
    pub preview: Option<Result<String, String>>,
    pub executions: Arc<AtomicUsize>,
    pub read_only: bool,
}

impl ScriptTool {
    pub fn new(name: &'static str, behavior: Behavior) -> Self {
        Self {
            name,
            label: None,
            schema: json!({"type": "object"}),
            behavior,
            validate: None,
            preview: None,
            executions: Arc::new(AtomicUsize::new(0)),
            read_only: false,
        }
    }

    pub fn schema(mut self, schema: Value) -> Self {
        self.schema = schema;
        self
    }

    pub fn label(mut self, label: &'static str) -> Self {
        self.label = Some(label);
        self
    }

    pub fn refuse(mut self, code: i64, message: &str) -> Self {
        self.validate = Some(ValidationFailure::new(code, message));
        self
    }

    pub fn preview(mut self, preview: Result<String, String>) -> Self {
        self.preview = Some(preview);
        self
    }

    pub fn executions(&self) -> Arc<AtomicUsize> {
        self.executions.clone()
    }
}

impl Tool for ScriptTool {
    fn name(&self) -> &str {
        self.name
    }

    fn description(&self) -> &str {
        "a scripted test tool"
    }

    fn schema(&self) -> &Value {
        &self.schema
    }

    fn label(&self) -> Option<&str> {
        self.label
    }

    fn read_only(&self, _args: &Value) -> bool {
        self.read_only
    }

    fn validate<'a>(
        &'a self,
        _args: &'a Value,
        _cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<(), ValidationFailure>> {
        let verdict = match &self.validate {
            Some(f) => Err(f.clone()),
            None => Ok(()),
        };
        Box::pin(async move { verdict })
    }

    fn preview<'a>(
        &'a self,
        _args: &'a Value,
        _cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<Option<String>, ToolError>> {
        let preview = match &self.preview {
            None => Ok(None),
            Some(Ok(p)) => Ok(Some(p.clone())),
            Some(Err(e)) => Err(ToolError::new(e.clone())),
        };
        Box::pin(async move { preview })
    }

    fn execute<'a>(
        &'a self,
        args: GatedArgs,
        cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        self.executions.fetch_add(1, Ordering::SeqCst);
        let behavior = self.behavior.clone();
        Box::pin(async move {
            match behavior {
                Behavior::Echo => Ok(ToolOutput::text(args.value().to_string())),
                Behavior::Succeed(text) => Ok(ToolOutput::text(text)),
                Behavior::Fail(text) => Err(ToolError::new(text)),
                Behavior::Panic(msg) => panic!("{msg}"),
                Behavior::Hang => {
                    std::future::pending::<()>().await;
                    unreachable!()
                }
                Behavior::Progress(values) => {
                    let progress = cx.progress();
                    for v in values {
                        progress.report(v);
                        tokio::task::yield_now().await;
                    }
                    Ok(ToolOutput::text("done"))
                }
                Behavior::Sleep(d) => {
                    tokio::time::sleep(d).await;
                    Ok(ToolOutput::text("slept"))
                }
            }
        })
    }
}

pub fn registry(tools: Vec<ScriptTool>) -> Arc<ToolRegistry> {
    let mut registry = ToolRegistry::new();
    for tool in tools {
        registry.register(Arc::new(tool)).expect("register");
    }
    Arc::new(registry)
}

/// A pipeline over `tools` with a channel sink.
pub fn pipeline(tools: Vec<ScriptTool>) -> (Pipeline, UnboundedReceiver<Event>) {
    let (sink, rx) = EventSink::channel();
    let pipeline = Pipeline::builder()
        .registry(registry(tools))
        .sink(sink)
        .build();
    (pipeline, rx)
}

pub async fn run(
    service: &PipelineService,
    call: Call<agentcore_stages::Unvalidated>,
) -> ToolResult {
    let Ok(result) = service.clone().oneshot(call).await;
    result
}

/// Every event received so far.
pub fn drain(rx: &mut UnboundedReceiver<Event>) -> Vec<Event> {
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    events
}

/// Checks that every Start has exactly one End after it with the same id,
/// and nothing for an id follows its End.
pub fn assert_paired(events: &[Event]) {
    use std::collections::HashMap;
    #[derive(PartialEq, Debug)]
    enum S {
        Open,
        Closed,
    }
    let mut state: HashMap<String, S> = HashMap::new();
    for e in events {
        match e {
            Event::ToolExecStart { call_id, .. } => {
                assert!(
                    state.insert(call_id.clone(), S::Open).is_none(),
                    "second Start for {call_id}"
                );
            }
            Event::ToolExecUpdate { call_id, .. } => {
                assert_eq!(
                    state.get(call_id),
                    Some(&S::Open),
                    "update outside Start/End: {call_id}"
                );
            }
            Event::ToolExecEnd { call_id, .. } => {
                assert_eq!(
                    state.get(call_id),
                    Some(&S::Open),
                    "End without open Start: {call_id}"
                );
                state.insert(call_id.clone(), S::Closed);
            }
            _ => {}
        }
    }
    for (id, s) in state {
        assert_eq!(s, S::Closed, "no End for {id}");
    }
}
