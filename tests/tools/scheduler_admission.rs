//! Admission under tokio's paused clock: order, parallel safe calls,
//! unsafe calls alone, backpressure, and the read-then-edit rule.

use std::future::poll_fn;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentcore::message::ToolCall;
use agentcore::scheduler::{Scheduler, SchedulerConfig};
use agentcore::turn::Turn;
use agentcore::{
    BoxFuture, Call, CallContext, Event, GatedArgs, InterruptBehavior, Outcome, Tool, ToolError,
    ToolOutput, ValidationFailure,
};
use proptest::prelude::*;
use serde_json::{Value, json};
use tokio::time::Instant;
use tower::Service;

use crate::support::scheduler::*;

fn config(n: usize) -> SchedulerConfig {
    SchedulerConfig {
        max_concurrency: n,
        ..SchedulerConfig::default()
    }
}

fn probes(log: &Log) -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(Probe::new("safe", true, InterruptBehavior::Cancel, log)),
        Arc::new(Probe::new("unsafe", false, InterruptBehavior::Block, log)),
    ]
}

#[tokio::test(start_paused = true)]
async fn plan_safe_safe_safe_unsafe_safe_safe_with_two_slots() {
    let log = Log::default();
    let (scheduler, _p) = scheduler(probes(&log), config(2));
    let plan = ["safe", "safe", "safe", "unsafe", "safe", "safe"];
    let calls = plan
        .iter()
        .enumerate()
        .map(|(i, name)| ToolCall::new(format!("c{i}"), *name, json!({"ms": 10})));
    let t0 = Instant::now();
    let result = Turn::new(&scheduler, agentcore::EventSink::noop())
        .run(calls)
        .await
        .unwrap();
    assert!(result.results.iter().all(|r| r.outcome == Outcome::Success));
    let mut starts = log.start_ms(t0);
    starts.sort();
    assert_eq!(
        starts,
        [
            ("c0".into(), 0),
            ("c1".into(), 0),
            ("c2".into(), 10),
            ("c3".into(), 20),
            ("c4".into(), 30),
            ("c5".into(), 30),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn one_slot_is_strictly_serial() {
    let log = Log::default();
    let (scheduler, _p) = scheduler(probes(&log), config(1));
    let calls = (0..5).map(|i| ToolCall::new(format!("c{i}"), "safe", json!({"ms": 10})));
    let t0 = Instant::now();
    Turn::new(&scheduler, agentcore::EventSink::noop())
        .run(calls)
        .await
        .unwrap();
    let starts: Vec<u64> = log.start_ms(t0).into_iter().map(|s| s.1).collect();
    assert_eq!(starts, [0, 10, 20, 30, 40]);
}

#[tokio::test(start_paused = true)]
async fn end_order_is_completion_order_and_message_order_is_source_order() {
    let log = Log::default();
    let (scheduler, _p) = scheduler(probes(&log), config(4));
    let calls = vec![
        ToolCall::new("slow", "safe", json!({"ms": 30})),
        ToolCall::new("mid", "safe", json!({"ms": 20})),
        ToolCall::new("fast", "safe", json!({"ms": 10})),
    ];
    let (turn, mut rx) = Turn::with_channel(&scheduler);
    let result = turn.run(calls).await.unwrap();
    let ids: Vec<&str> = result.results.iter().map(|r| r.call_id.as_str()).collect();
    assert_eq!(ids, ["slow", "mid", "fast"]);
    let mut ends = Vec::new();
    let mut messages = Vec::new();
    let mut tail = Vec::new();
    while let Ok(e) = rx.try_recv() {
        match &e {
            Event::ToolExecEnd { call_id, .. } => ends.push(call_id.clone()),
            Event::MessageEnd { message } => messages.push(message.call_id.clone()),
            _ => {}
        }
        tail.push(e);
    }
    assert_eq!(ends, ["fast", "mid", "slow"]);
    assert_eq!(messages, ["slow", "mid", "fast"]);
    let Some(Event::ModelResponse { tool_results }) = tail.last() else {
        panic!("the turn ends with a model response");
    };
    let ids: Vec<&str> = tool_results.iter().map(|r| r.call_id.as_str()).collect();
    assert_eq!(ids, ["slow", "mid", "fast"]);
    let first_message = tail
        .iter()
        .position(|e| matches!(e, Event::MessageStart { .. }))
        .unwrap();
    let last_end = tail
        .iter()
        .rposition(|e| matches!(e, Event::ToolExecEnd { .. }))
        .unwrap();
    assert!(last_end < first_message, "messages follow every End");
}

fn run_plan(plan: Vec<(bool, u64)>, n: usize) -> Vec<(String, bool, Instant, Instant)> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap();
    rt.block_on(async move {
        let log = Log::default();
        let (scheduler, _p) = scheduler(probes(&log), config(n));
        let calls: Vec<ToolCall> = plan
            .iter()
            .enumerate()
            .map(|(i, (safe, ms))| {
                ToolCall::new(
                    format!("c{i}"),
                    if *safe { "safe" } else { "unsafe" },
                    json!({ "ms": ms }),
                )
            })
            .collect();
        Turn::new(&scheduler, agentcore::EventSink::noop())
            .run(calls)
            .await
            .unwrap();
        let spans = log.spans.lock().unwrap().clone();
        spans
            .into_iter()
            .map(|(id, s, e)| {
                let i: usize = id[1..].parse().unwrap();
                (id, plan[i].0, s, e.unwrap())
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn unsafe_calls_never_overlap_anything_and_starts_follow_arrival(
        plan in prop::collection::vec((any::<bool>(), 1u64..20), 1..16),
        n in 0usize..4,
    ) {
        let spans = run_plan(plan.clone(), n);
        prop_assert_eq!(spans.len(), plan.len());
        let limit = n.max(1);
        for a in &spans {
            // Everything running at the moment `a` started, `a` included.
            let running: Vec<&(String, bool, Instant, Instant)> = spans
                .iter()
                .filter(|b| b.2 <= a.2 && a.2 < b.3)
                .collect();
            if !a.1 {
                prop_assert_eq!(running.len(), 1, "unsafe {} started beside others", &a.0);
            }
            prop_assert!(running.len() <= limit, "{} calls at once", running.len());
            prop_assert!(running.iter().all(|b| b.1) || running.len() == 1);
        }
        // Admission is in arrival order: start times never decrease.
        let mut by_index = spans.clone();
        by_index.sort_by_key(|s| s.0[1..].parse::<usize>().unwrap());
        for w in by_index.windows(2) {
            prop_assert!(w[0].2 <= w[1].2);
        }
    }
}

#[tokio::test(start_paused = true)]
async fn poll_ready_is_pending_while_the_queue_is_full() {
    let log = Log::default();
    let (mut scheduler, _p) = scheduler(
        probes(&log),
        SchedulerConfig {
            max_concurrency: 1,
            queue_capacity: 2,
            ..SchedulerConfig::default()
        },
    );
    let mut responses = Vec::new();
    // The first is admitted at once (its place frees); two more wait.
    for i in 0..3 {
        poll_fn(|cx| scheduler.poll_ready(cx)).await.unwrap();
        responses.push(scheduler.call(Call::new(format!("c{i}"), "unsafe", json!({"ms": 50}))));
        tokio::task::yield_now().await;
    }
    let mut ready = tokio_test::task::spawn(poll_fn(|cx| scheduler.poll_ready(cx)));
    tokio_test::assert_pending!(ready.poll());
    // When the first call ends, the second is admitted and a place frees.
    tokio::time::sleep(Duration::from_millis(55)).await;
    assert!(ready.is_woken());
    tokio_test::assert_ready_ok!(ready.poll());
    drop(ready);
    for r in responses {
        assert_eq!(r.await.unwrap().outcome, Outcome::Success);
    }
}

/// A ledger shared by the two tools below, like FileReadState.
#[derive(Clone, Default)]
struct Ledger(Arc<Mutex<Vec<String>>>);

struct LedgerRead(Ledger, Value);
struct LedgerEdit(Ledger, Value);

impl Tool for LedgerRead {
    fn name(&self) -> &str {
        "read"
    }
    fn description(&self) -> &str {
        "records a read after a while"
    }
    fn schema(&self) -> &Value {
        &self.1
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
            tokio::time::sleep(Duration::from_millis(25)).await;
            let path = args.value()["file_path"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            self.0.0.lock().unwrap().push(path);
            Ok(ToolOutput::text("contents"))
        })
    }
}

impl Tool for LedgerEdit {
    fn name(&self) -> &str {
        "edit"
    }
    fn description(&self) -> &str {
        "refuses unread files"
    }
    fn schema(&self) -> &Value {
        &self.1
    }
    fn validate<'a>(
        &'a self,
        args: &'a Value,
        _cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<(), ValidationFailure>> {
        let path = args["file_path"].as_str().unwrap_or_default().to_owned();
        let read = self.0.0.lock().unwrap().contains(&path);
        Box::pin(async move {
            if read {
                Ok(())
            } else {
                Err(ValidationFailure::new(
                    2,
                    "File has not been read yet. Read it first before writing to it.",
                ))
            }
        })
    }
    fn execute<'a>(
        &'a self,
        _args: GatedArgs,
        _cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async { Ok(ToolOutput::text("edited")) })
    }
}

#[tokio::test(start_paused = true)]
async fn read_then_edit_of_the_same_file_in_one_turn_passes() {
    let ledger = Ledger::default();
    let schema = json!({"type": "object", "properties": {"file_path": {"type": "string"}}});
    let (scheduler, _p) = scheduler(
        vec![
            Arc::new(LedgerRead(ledger.clone(), schema.clone())),
            Arc::new(LedgerEdit(ledger, schema)),
        ],
        config(10),
    );
    let result = Turn::new(&scheduler, agentcore::EventSink::noop())
        .run(vec![
            ToolCall::new("r", "read", json!({"file_path": "a.txt"})),
            ToolCall::new("e", "edit", json!({"file_path": "a.txt"})),
        ])
        .await
        .unwrap();
    assert_eq!(result.results[0].outcome, Outcome::Success);
    assert_eq!(
        result.results[1].outcome,
        Outcome::Success,
        "{}",
        result.results[1].text()
    );
}

#[tokio::test(start_paused = true)]
async fn unknown_tools_and_bad_args_are_admitted_as_unsafe() {
    let log = Log::default();
    let (scheduler, _p) = scheduler(probes(&log), config(4));
    let t0 = Instant::now();
    let result = Turn::new(&scheduler, agentcore::EventSink::noop())
        .run(vec![
            ToolCall::new("a", "safe", json!({"ms": 10})),
            ToolCall::new("b", "safe", "{not json"),
            ToolCall::new("c", "safe", json!({"ms": 10})),
        ])
        .await
        .unwrap();
    assert_eq!(result.results[1].outcome, Outcome::Failed);
    // `b` waits for `a` and runs alone, so `c` starts after `a` ended.
    let starts = log.start_ms(t0);
    assert_eq!(starts, [("a".into(), 0), ("c".into(), 10)]);
    let _: &Scheduler = &scheduler;
}
