//! Peak heap of one 10,000-call turn, measured with a counting allocator.
//!
//! cargo bench --bench turn_memory

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agentcore::message::ToolCall;
use agentcore::scheduler::{Scheduler, SchedulerConfig};
use agentcore::turn::Turn;
use agentcore::{
    BoxFuture, CallContext, EventSink, GatedArgs, Pipeline, Tool, ToolError, ToolOutput,
    ToolRegistry,
};
use serde_json::{Value, json};

struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator and only counts sizes.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = CURRENT.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
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

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let registry = Arc::new(
            ToolRegistry::new()
                .with(Arc::new(Noop(json!({"type": "object"}))))
                .unwrap(),
        );
        let pipeline = Pipeline::builder().registry(registry.clone()).build();
        let scheduler = Scheduler::new(
            pipeline.service(),
            registry,
            SchedulerConfig {
                queue_capacity: 16_384,
                ..SchedulerConfig::default()
            },
        );
        for n in [1_000usize, 10_000] {
            let calls: Vec<ToolCall> = (0..n)
                .map(|i| ToolCall::new(format!("c{i}"), "noop", json!({})))
                .collect();
            let before = CURRENT.load(Ordering::Relaxed);
            PEAK.store(before, Ordering::Relaxed);
            let start = std::time::Instant::now();
            let result = Turn::new(&scheduler, EventSink::noop())
                .run(calls)
                .await
                .unwrap();
            let elapsed = start.elapsed();
            let peak = PEAK.load(Ordering::Relaxed) - before;
            assert_eq!(result.results.len(), n);
            println!(
                "turn of {n} calls: peak heap {:.1} MiB above baseline ({} bytes/call), {:.1} ms",
                peak as f64 / (1024.0 * 1024.0),
                peak / n,
                elapsed.as_secs_f64() * 1000.0
            );
        }
    });
}
