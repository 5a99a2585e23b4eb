//! Scheduler + pipeline overhead, parallel admission, and turn size.
//!
//! cargo bench --bench scheduler

use std::sync::Arc;
use std::time::Duration;

use agentcore::message::ToolCall;
use agentcore::scheduler::{Scheduler, SchedulerConfig};
use agentcore::turn::Turn;
use agentcore::{
    BoxFuture, Call, CallContext, EventSink, GatedArgs, Pipeline, Tool, ToolError, ToolOutput,
    ToolRegistry,
};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use tower::ServiceExt;

/// Does nothing, or sleeps `ms` when given.
struct Noop {
    schema: Value,
}

impl Tool for Noop {
    fn name(&self) -> &str {
        "noop"
    }
    fn description(&self) -> &str {
        "does nothing"
    }
    fn schema(&self) -> &Value {
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
        Box::pin(async move {
            if let Some(ms) = args.value().get("ms").and_then(Value::as_u64) {
                tokio::time::sleep(Duration::from_millis(ms)).await;
            }
            Ok(ToolOutput::text("ok"))
        })
    }
}

fn noop() -> Arc<Noop> {
    Arc::new(Noop {
        schema: json!({"type": "object", "properties": {"ms": {"type": "integer"}}}),
    })
}

fn setup(max_concurrency: usize) -> (Scheduler, Pipeline) {
    let registry = Arc::new(ToolRegistry::new().with(noop()).unwrap());
    let pipeline = Pipeline::builder().registry(registry.clone()).build();
    let scheduler = Scheduler::new(
        pipeline.service(),
        registry,
        SchedulerConfig {
            max_concurrency,
            ..SchedulerConfig::default()
        },
    );
    (scheduler, pipeline)
}

fn per_call_overhead(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("per_call");
    let tool = noop();
    group.bench_function("tool_direct", |b| {
        b.to_async(&rt).iter(|| {
            let tool = tool.clone();
            async move {
                let cx = CallContext::for_test("c1", EventSink::noop());
                tool.execute(GatedArgs::for_test(json!({})), &cx)
                    .await
                    .unwrap()
            }
        })
    });
    let (scheduler, pipeline) = rt.block_on(async { setup(10) });
    let service = pipeline.service();
    group.bench_function("pipeline", |b| {
        b.to_async(&rt).iter(|| {
            let service = service.clone();
            async move { service.oneshot(Call::new("c1", "noop", json!({}))).await }
        })
    });
    group.bench_function("scheduler_and_pipeline", |b| {
        b.to_async(&rt).iter(|| {
            let scheduler = scheduler.clone();
            async move { scheduler.oneshot(Call::new("c1", "noop", json!({}))).await }
        })
    });
    group.bench_function("turn_of_100_calls", |b| {
        b.to_async(&rt).iter_batched(
            || {
                (0..100)
                    .map(|i| ToolCall::new(format!("c{i}"), "noop", json!({})))
                    .collect::<Vec<_>>()
            },
            |calls| {
                let scheduler = scheduler.clone();
                async move {
                    Turn::new(&scheduler, EventSink::noop())
                        .run(calls)
                        .await
                        .unwrap()
                }
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

fn parallel_safe_calls(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let (scheduler, _pipeline) = rt.block_on(async { setup(8) });
    let mut group = c.benchmark_group("parallel");
    group.sample_size(10);
    group.bench_function("64_calls_of_20ms_with_8_slots", |b| {
        b.to_async(&rt).iter_batched(
            || {
                (0..64)
                    .map(|i| ToolCall::new(format!("c{i}"), "noop", json!({"ms": 20})))
                    .collect::<Vec<_>>()
            },
            |calls| {
                let scheduler = scheduler.clone();
                async move {
                    Turn::new(&scheduler, EventSink::noop())
                        .run(calls)
                        .await
                        .unwrap()
                }
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group!(benches, per_call_overhead, parallel_safe_calls);
criterion_main!(benches);
