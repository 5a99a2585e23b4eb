//! Scheduler + pipeline overhead, parallel admission, and turn size.
//!
//! cargo bench --bench scheduler
//!
//! The parallel group runs the same 20 ms tool through the scheduler and
//! through a bare `tokio::sync::Semaphore` of 8 permits (the real baseline:
//! it pays the timer's granularity too), and the bench ends by timing both
//! in alternating rounds and printing the scheduler's figure as a ratio.

use std::sync::Arc;
use std::time::{Duration, Instant};

use agentcore::message::ToolCall;
use agentcore::scheduler::{Scheduler, SchedulerConfig};
use agentcore::turn::Turn;
use agentcore::{
    BoxFuture, Call, CallContext, EventSink, GatedArgs, Pipeline, Tool, ToolError, ToolOutput,
    ToolRegistry,
};
use criterion::{BatchSize, Criterion, criterion_group};
use serde_json::{Value, json};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
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
    // The same lone call made by a task of the runtime, as a harness built
    // on tokio makes it: the call's task is started on the caller's worker
    // and nothing waits on a thread outside the runtime.
    group.bench_function("scheduler_and_pipeline_from_a_runtime_task", |b| {
        b.iter_custom(|iters| {
            let scheduler = scheduler.clone();
            rt.block_on(async move {
                tokio::spawn(async move {
                    let start = Instant::now();
                    for _ in 0..iters {
                        let call = Call::new("c1", "noop", json!({}));
                        let _ = scheduler.clone().oneshot(call).await;
                    }
                    start.elapsed()
                })
                .await
                .expect("the calling task")
            })
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

/// 64 calls of the 20 ms tool through the scheduler with 8 slots.
async fn through_the_scheduler(scheduler: &Scheduler) {
    let calls = (0..64).map(|i| ToolCall::new(format!("c{i}"), "noop", json!({"ms": 20})));
    Turn::new(scheduler, EventSink::noop())
        .run(calls)
        .await
        .unwrap();
}

/// The same 64 executions of the same tool, each in its own task behind a
/// bare semaphore of 8 permits: what the scheduler is compared with.
async fn through_a_bare_semaphore(tool: &Arc<Noop>) {
    let permits = Arc::new(Semaphore::new(8));
    let mut tasks = JoinSet::new();
    for i in 0..64 {
        let (permits, tool) = (permits.clone(), tool.clone());
        tasks.spawn(async move {
            let _permit = permits.acquire_owned().await.unwrap();
            let cx = CallContext::for_test(&format!("c{i}"), EventSink::noop());
            tool.execute(GatedArgs::for_test(json!({"ms": 20})), &cx)
                .await
                .unwrap()
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.unwrap();
    }
}

fn parallel_safe_calls(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let (scheduler, _pipeline) = rt.block_on(async { setup(8) });
    let tool = noop();
    let mut group = c.benchmark_group("parallel");
    group.sample_size(10);
    group.bench_function("64_calls_of_20ms_with_8_slots", |b| {
        b.to_async(&rt).iter(|| through_the_scheduler(&scheduler))
    });
    group.bench_function("64_calls_of_20ms_with_a_bare_semaphore_of_8", |b| {
        b.to_async(&rt).iter(|| through_a_bare_semaphore(&tool))
    });
    group.finish();
}

/// Alternating rounds of both, so load on the machine hits both alike;
/// prints the medians and the scheduler's ratio to the semaphore.
fn parallel_ratio() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let (scheduler, _pipeline) = rt.block_on(async { setup(8) });
    let tool = noop();
    let (mut ours, mut bare) = (Vec::new(), Vec::new());
    rt.block_on(async {
        for _ in 0..15 {
            let t0 = Instant::now();
            through_the_scheduler(&scheduler).await;
            ours.push(t0.elapsed());
            let t0 = Instant::now();
            through_a_bare_semaphore(&tool).await;
            bare.push(t0.elapsed());
        }
    });
    let median = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    let (ours, bare) = (median(&mut ours), median(&mut bare));
    println!(
        "parallel/ratio: scheduler {:.1} ms, bare semaphore {:.1} ms, ratio {:.3}x (15 alternating rounds, medians)",
        ours.as_secs_f64() * 1e3,
        bare.as_secs_f64() * 1e3,
        ours.as_secs_f64() / bare.as_secs_f64()
    );
}

criterion_group!(benches, per_call_overhead, parallel_safe_calls);

fn main() {
    benches();
    parallel_ratio();
    Criterion::default().configure_from_args().final_summary();
}
