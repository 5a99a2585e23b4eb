//! Test tools for the scheduler and turn tests.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentcore::scheduler::{Scheduler, SchedulerConfig};
use agentcore::{
    BoxFuture, CallContext, GatedArgs, InterruptBehavior, Pipeline, Tool, ToolError, ToolOutput,
    ToolRegistry,
};
use serde_json::{Value, json};
use tokio::time::Instant;

/// One execution: call id, start, end (once it ended).
pub type Span = (String, Instant, Option<Instant>);

/// When each execution started and ended, by call id.
#[derive(Clone, Default)]
pub struct Log {
    pub spans: Arc<Mutex<Vec<Span>>>,
}

impl Log {
    pub fn start(&self, id: &str) {
        self.spans
            .lock()
            .unwrap()
            .push((id.to_owned(), Instant::now(), None));
    }
    pub fn end(&self, id: &str) {
        let mut spans = self.spans.lock().unwrap();
        if let Some(span) = spans.iter_mut().find(|s| s.0 == id) {
            span.2 = Some(Instant::now());
        }
    }
    pub fn started(&self) -> Vec<String> {
        self.spans
            .lock()
            .unwrap()
            .iter()
            .map(|s| s.0.clone())
            .collect()
    }
    /// Start offsets from `t0`, in ms, by id.
    pub fn start_ms(&self, t0: Instant) -> Vec<(String, u64)> {
        self.spans
            .lock()
            .unwrap()
            .iter()
            .map(|s| (s.0.clone(), (s.1 - t0).as_millis() as u64))
            .collect()
    }
}

/// A tool that sleeps `ms` (from its args, default 10) and logs its span.
pub struct Probe {
    pub name: &'static str,
    pub safe: bool,
    pub interrupt: InterruptBehavior,
    pub log: Log,
    pub schema: Value,
}

impl Probe {
    pub fn new(name: &'static str, safe: bool, interrupt: InterruptBehavior, log: &Log) -> Self {
        Self {
            name,
            safe,
            interrupt,
            log: log.clone(),
            schema: json!({"type": "object", "properties": {"ms": {"type": "integer"}}}),
        }
    }
}

impl Tool for Probe {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "sleeps and logs"
    }
    fn schema(&self) -> &Value {
        &self.schema
    }
    fn read_only(&self, _args: &Value) -> bool {
        self.safe
    }
    fn interrupt_behavior(&self, _args: &Value) -> InterruptBehavior {
        self.interrupt
    }
    fn execute<'a>(
        &'a self,
        args: GatedArgs,
        cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        let ms = args.value()["ms"].as_u64().unwrap_or(10);
        let log = self.log.clone();
        let id = cx.call_id().to_owned();
        Box::pin(async move {
            log.start(&id);
            tokio::time::sleep(Duration::from_millis(ms)).await;
            log.end(&id);
            Ok(ToolOutput::text(format!("{id} done")))
        })
    }
}

pub fn scheduler(tools: Vec<Arc<dyn Tool>>, config: SchedulerConfig) -> (Scheduler, Pipeline) {
    let mut registry = ToolRegistry::new();
    for tool in tools {
        registry.register(tool).unwrap();
    }
    let registry = Arc::new(registry);
    let pipeline = Pipeline::builder().registry(registry.clone()).build();
    (
        Scheduler::new(pipeline.service(), registry, config),
        pipeline,
    )
}
