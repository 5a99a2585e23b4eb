//! The kernel's allocation census: allocations and bytes a call of a no-op
//! tool, through the pipeline alone, as a lone call through the scheduler
//! from a runtime task, and in turns of 100 calls. Small enough to run
//! under `valgrind --tool=callgrind` for instruction counts (issue 33
//! item 5; docs/performance.md "Kernel overhead").
//!
//! cargo bench --bench kernel_census                  # every mode, 10,000 calls
//! cargo bench --bench kernel_census -- turn 2000     # one mode, N calls
//!
//! Modes: `tool` (the bare tool's `execute`), `pipeline`, `lone` (a lone
//! call through scheduler and pipeline, made by a runtime task), `turn`
//! (turns of 100 calls). Each runs on a current-thread runtime, so that a
//! count is the same run to run.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agentcore::message::ToolCall;
use agentcore::scheduler::{Scheduler, SchedulerConfig};
use agentcore::turn::Turn;
use agentcore::{
    BoxFuture, Call, CallContext, EventSink, GatedArgs, Pipeline, Tool, ToolError, ToolOutput,
    ToolRegistry,
};
use serde_json::{Value, json};
use tower::ServiceExt;

struct Counting;

static ALLOCS: AtomicUsize = AtomicUsize::new(0);
static BYTES: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator and only counts.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(new_size, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

struct Noop(Value);

impl Tool for Noop {
    fn name(&self) -> &str {
        "noop"
    }
    fn description(&self) -> &str {
        "does nothing"
    }
    fn schema(&self) -> &Value {
        &self.0
    }
    fn read_only(&self, _args: &Value) -> bool {
        true
    }
    fn execute<'a>(
        &'a self,
        _args: GatedArgs,
        _cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async { Ok(ToolOutput::text("ok")) })
    }
}

const MODES: [&str; 4] = ["tool", "pipeline", "lone", "turn"];

fn main() {
    // `cargo bench` passes `--bench`; anything else names a mode and a count.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let modes: Vec<&str> = match args.first() {
        Some(mode) => vec![MODES.iter().copied().find(|m| m == mode).expect("a mode")],
        None => MODES.to_vec(),
    };
    let n: usize = args.get(1).map_or(10_000, |n| n.parse().expect("a count"));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let tool = Arc::new(Noop(json!({"type": "object"})));
        let registry = Arc::new(ToolRegistry::new().with(tool.clone()).unwrap());
        let pipeline = Pipeline::builder().registry(registry.clone()).build();
        let service = pipeline.service();
        let scheduler = Scheduler::new(
            pipeline.service(),
            registry,
            SchedulerConfig {
                max_concurrency: 10,
                ..SchedulerConfig::default()
            },
        );
        let ids: Vec<String> = (0..100).map(|i| format!("c{i}")).collect();
        for mode in modes {
            // One untimed round first: lazily built state is not a call's.
            for round in 0..2 {
                let calls = if round == 0 { 100 } else { n };
                let (allocs, bytes) = (
                    ALLOCS.load(Ordering::Relaxed),
                    BYTES.load(Ordering::Relaxed),
                );
                match mode {
                    "tool" => {
                        for _ in 0..calls {
                            let cx = CallContext::for_test("c1", EventSink::noop());
                            let out = tool.execute(GatedArgs::for_test(json!({})), &cx).await;
                            assert!(out.is_ok());
                        }
                    }
                    "pipeline" => {
                        for _ in 0..calls {
                            let call = Call::new("c1", "noop", json!({}));
                            let Ok(result) = service.clone().oneshot(call).await;
                            assert_eq!(result.outcome, agentcore::Outcome::Success);
                        }
                    }
                    "lone" => {
                        for _ in 0..calls {
                            let call = Call::new("c1", "noop", json!({}));
                            let result = scheduler.clone().oneshot(call).await.unwrap();
                            assert_eq!(result.outcome, agentcore::Outcome::Success);
                        }
                    }
                    _ => {
                        for _ in 0..calls / 100 {
                            let turn: Vec<ToolCall> = ids
                                .iter()
                                .map(|id| ToolCall::new(id.clone(), "noop", json!({})))
                                .collect();
                            let result = Turn::new(&scheduler, EventSink::noop())
                                .run(turn)
                                .await
                                .unwrap();
                            assert_eq!(result.results.len(), 100);
                        }
                    }
                }
                if round == 1 {
                    let allocs = ALLOCS.load(Ordering::Relaxed) - allocs;
                    let bytes = BYTES.load(Ordering::Relaxed) - bytes;
                    println!(
                        "{mode:>8}: {calls} calls, {:.1} allocations and {:.0} bytes a call",
                        allocs as f64 / calls as f64,
                        bytes as f64 / calls as f64
                    );
                }
            }
        }
    });
}
