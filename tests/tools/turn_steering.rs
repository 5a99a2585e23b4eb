//! Steering, abort, streaming input and dropped turns (paused clock).

use std::sync::Arc;
use std::time::Duration;

use agentcore::message::ToolCall;
use agentcore::scheduler::{SchedulerConfig, SteeringPolicy};
use agentcore::turn::Turn;
use agentcore::{Event, EventSink, InterruptBehavior, Outcome, Tool};
use proptest::prelude::*;
use serde_json::json;
use tokio::time::Instant;

use crate::support::scheduler::*;

fn tools(log: &Log) -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(Probe::new("scan", true, InterruptBehavior::Cancel, log)),
        Arc::new(Probe::new("build", true, InterruptBehavior::Block, log)),
        Arc::new(Probe::new("write", false, InterruptBehavior::Block, log)),
    ]
}

fn policy(steering: SteeringPolicy) -> SchedulerConfig {
    SchedulerConfig {
        steering,
        ..SchedulerConfig::default()
    }
}

fn outcomes(result: &agentcore::turn::TurnResult) -> Vec<Outcome> {
    result.results.iter().map(|r| r.outcome).collect()
}

#[tokio::test(start_paused = true)]
async fn steering_cancels_cancel_calls_lets_block_calls_finish_and_skips_the_rest() {
    let log = Log::default();
    let (scheduler, pipeline) = scheduler(tools(&log), policy(SteeringPolicy::SkipPending));
    let (turn, mut rx) = Turn::with_channel(&scheduler);
    let control = turn.control();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(10)).await;
        control.steer();
    });
    let t0 = Instant::now();
    let result = turn
        .run(vec![
            ToolCall::new("scan", "scan", json!({"ms": 1000})),
            ToolCall::new("build", "build", json!({"ms": 50})),
            ToolCall::new("write", "write", json!({"ms": 10})),
            ToolCall::new("scan2", "scan", json!({"ms": 10})),
        ])
        .await
        .unwrap();
    assert!(result.steered);
    assert_eq!(
        outcomes(&result),
        [
            Outcome::Cancelled,
            Outcome::Success,
            Outcome::Skipped,
            Outcome::Skipped
        ]
    );
    assert_eq!(result.results[0].text(), "Tool execution cancelled.");
    assert_eq!(
        result.results[2].text(),
        "Skipped due to queued user message."
    );
    assert_eq!(log.started(), ["scan", "build"]);
    // The turn waited only for the Block call.
    assert_eq!(t0.elapsed(), Duration::from_millis(50));
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, Event::ToolExecStart { .. }))
            .count(),
        4,
        "skipped calls have their Start/End pair"
    );
    assert_eq!(pipeline.breaker().count("scan"), 0);
}

#[tokio::test(start_paused = true)]
async fn steering_is_noticed_at_once() {
    let log = Log::default();
    let (scheduler, _p) = scheduler(tools(&log), policy(SteeringPolicy::SkipPending));
    let turn = Turn::new(&scheduler, EventSink::noop());
    let control = turn.control();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(5)).await;
        control.steer();
    });
    let t0 = Instant::now();
    let result = turn
        .run(vec![
            ToolCall::new("a", "scan", json!({"ms": 60000})),
            ToolCall::new("b", "write", json!({"ms": 1})),
        ])
        .await
        .unwrap();
    assert_eq!(t0.elapsed(), Duration::from_millis(5));
    assert_eq!(outcomes(&result), [Outcome::Cancelled, Outcome::Skipped]);
}

#[tokio::test(start_paused = true)]
async fn finish_batch_lets_the_batch_run_to_the_end() {
    let log = Log::default();
    let (scheduler, _p) = scheduler(tools(&log), policy(SteeringPolicy::FinishBatch));
    let turn = Turn::new(&scheduler, EventSink::noop());
    let control = turn.control();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(5)).await;
        control.steer();
    });
    let result = turn
        .run(vec![
            ToolCall::new("a", "scan", json!({"ms": 20})),
            ToolCall::new("b", "write", json!({"ms": 20})),
        ])
        .await
        .unwrap();
    assert!(result.steered);
    assert_eq!(outcomes(&result), [Outcome::Success, Outcome::Success]);
}

#[tokio::test(start_paused = true)]
async fn abort_cancels_running_and_queued_calls() {
    let log = Log::default();
    let (scheduler, pipeline) = scheduler(tools(&log), policy(SteeringPolicy::SkipPending));
    let turn = Turn::new(&scheduler, EventSink::noop());
    let control = turn.control();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(5)).await;
        control.abort();
    });
    let result = turn
        .run(vec![
            ToolCall::new("a", "build", json!({"ms": 1000})),
            ToolCall::new("b", "write", json!({"ms": 10})),
            ToolCall::new("c", "scan", json!({"ms": 10})),
        ])
        .await
        .unwrap();
    assert_eq!(
        outcomes(&result),
        [Outcome::Cancelled, Outcome::Cancelled, Outcome::Cancelled]
    );
    for r in &result.results {
        assert_eq!(r.text(), "Tool execution cancelled.");
    }
    assert_eq!(log.started(), ["a"]);
    assert_eq!(pipeline.breaker().count("build"), 0);
}

#[tokio::test(start_paused = true)]
async fn safe_calls_start_while_the_message_is_still_streaming() {
    let log = Log::default();
    let (scheduler, _p) = scheduler(tools(&log), SchedulerConfig::default());
    let (tx, rx) = futures::channel::mpsc::unbounded();
    let turn = Turn::new(&scheduler, EventSink::noop());
    let run = tokio::spawn(turn.run_stream(rx));
    tx.unbounded_send(ToolCall::new("a", "scan", json!({"ms": 100})))
        .unwrap();
    tokio::time::sleep(Duration::from_millis(30)).await;
    assert_eq!(
        log.started(),
        ["a"],
        "the first call runs before the rest arrives"
    );
    tx.unbounded_send(ToolCall::new("b", "scan", json!({"ms": 10})))
        .unwrap();
    drop(tx);
    let result = run.await.unwrap().unwrap();
    assert_eq!(outcomes(&result), [Outcome::Success, Outcome::Success]);
    let starts = log.start_ms(Instant::now() - Duration::from_millis(100));
    assert_eq!(starts[1].1, 30, "b started on arrival, beside a");
}

#[tokio::test(start_paused = true)]
async fn dropping_the_turn_future_ends_every_started_call() {
    let log = Log::default();
    let (scheduler, _p) = scheduler(tools(&log), SchedulerConfig::default());
    let (turn, mut rx) = Turn::with_channel(&scheduler);
    let run = turn.run(vec![
        ToolCall::new("a", "scan", json!({"ms": 1000})),
        ToolCall::new("b", "build", json!({"ms": 1000})),
        ToolCall::new("c", "write", json!({"ms": 10})),
    ]);
    let _ = tokio::time::timeout(Duration::from_millis(10), run).await;
    tokio::time::sleep(Duration::from_millis(5)).await;
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    let ends: Vec<(String, Outcome)> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolExecEnd {
                call_id, outcome, ..
            } => Some((call_id.clone(), *outcome)),
            _ => None,
        })
        .collect();
    assert_eq!(ends.len(), 3, "{ends:?}");
    assert!(ends.iter().all(|(_, o)| *o == Outcome::Cancelled));
    assert_eq!(log.started(), ["a", "b"]);
}

fn steer_at(plan: Vec<(u8, u64)>, at: u64) -> (Vec<Event>, Vec<String>) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap();
    rt.block_on(async move {
        let log = Log::default();
        let (scheduler, _p) = scheduler(
            tools(&log),
            SchedulerConfig {
                max_concurrency: 2,
                ..SchedulerConfig::default()
            },
        );
        let (turn, mut rx) = Turn::with_channel(&scheduler);
        let control = turn.control();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(at)).await;
            control.steer();
        });
        let names = ["scan", "build", "write"];
        let calls = plan.iter().enumerate().map(|(i, (k, ms))| {
            ToolCall::new(format!("c{i}"), names[*k as usize], json!({"ms": ms}))
        });
        turn.run(calls).await.unwrap();
        let mut events = Vec::new();
        while let Ok(e) = rx.try_recv() {
            events.push(e);
        }
        (events, log.started())
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn steering_at_any_moment_keeps_pairs_and_skips_only_unstarted_calls(
        plan in prop::collection::vec((0u8..3, 1u64..30), 1..10),
        at in 0u64..60,
    ) {
        let (events, started) = steer_at(plan.clone(), at);
        let mut open = std::collections::HashSet::new();
        let mut ended = std::collections::HashSet::new();
        for e in &events {
            match e {
                Event::ToolExecStart { call_id, .. } => prop_assert!(open.insert(call_id.clone())),
                Event::ToolExecUpdate { call_id, .. } => prop_assert!(open.contains(call_id) && !ended.contains(call_id)),
                Event::ToolExecEnd { call_id, outcome, .. } => {
                    prop_assert!(open.contains(call_id));
                    prop_assert!(ended.insert(call_id.clone()));
                    if *outcome == Outcome::Skipped {
                        prop_assert!(!started.contains(call_id), "{} was skipped after it started", call_id);
                    }
                }
                _ => {}
            }
        }
        prop_assert_eq!(ended.len(), plan.len());
    }
}
