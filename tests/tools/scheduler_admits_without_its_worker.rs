//! Calls are admitted where the queue changes: a lone call in the handle's
//! `call`, the next queued call by the call that ends. The worker only
//! keeps the scheduler's lifetime: dropping it ends every call, and its
//! `run` ends once every handle and call is gone.

use std::future::poll_fn;
use std::sync::Arc;
use std::time::Duration;

use agentcore::scheduler::{Scheduler, SchedulerConfig, SchedulerError};
use agentcore::{Call, Event, EventSink, InterruptBehavior, Outcome, Pipeline, ToolRegistry};
use serde_json::json;
use tower::Service;

use crate::support::scheduler::*;

fn pair(log: &Log, config: SchedulerConfig) -> (Scheduler, agentcore::scheduler::Worker) {
    let mut registry = ToolRegistry::new();
    registry
        .register(Arc::new(Probe::new(
            "safe",
            true,
            InterruptBehavior::Cancel,
            log,
        )))
        .unwrap();
    registry
        .register(Arc::new(Probe::new(
            "unsafe",
            false,
            InterruptBehavior::Block,
            log,
        )))
        .unwrap();
    let registry = Arc::new(registry);
    let pipeline = Pipeline::builder().registry(registry.clone()).build();
    Scheduler::pair(pipeline.service(), registry, config)
}

fn one_place(max_concurrency: usize) -> SchedulerConfig {
    SchedulerConfig {
        max_concurrency,
        queue_capacity: 1,
        ..SchedulerConfig::default()
    }
}

#[tokio::test(start_paused = true)]
async fn a_lone_call_is_admitted_in_call_and_frees_its_queue_place_at_once() {
    let log = Log::default();
    let (mut scheduler, _worker) = pair(&log, one_place(1));
    poll_fn(|cx| scheduler.poll_ready(cx)).await.unwrap();
    let first = scheduler.call(Call::new("c0", "unsafe", json!({"ms": 10})));
    // No task has run since `call`: the place is free because the call was
    // admitted inside it.
    let mut ready = tokio_test::task::spawn(poll_fn(|cx| scheduler.poll_ready(cx)));
    tokio_test::assert_ready_ok!(ready.poll());
    drop(ready);
    // The second waits for the first (one slot), holding the only place.
    let second = scheduler.call(Call::new("c1", "unsafe", json!({"ms": 10})));
    let mut ready = tokio_test::task::spawn(poll_fn(|cx| scheduler.poll_ready(cx)));
    tokio_test::assert_pending!(ready.poll());
    assert_eq!(first.await.unwrap().outcome, Outcome::Success);
    assert_eq!(second.await.unwrap().outcome, Outcome::Success);
    assert!(ready.is_woken());
    tokio_test::assert_ready_ok!(ready.poll());
    assert_eq!(log.started(), ["c0", "c1"]);
}

#[tokio::test(start_paused = true)]
async fn the_call_that_ends_admits_the_next_in_order() {
    let log = Log::default();
    let (scheduler, _worker) = pair(
        &log,
        SchedulerConfig {
            max_concurrency: 2,
            ..SchedulerConfig::default()
        },
    );
    let plan = [("a", "safe"), ("b", "unsafe"), ("c", "safe"), ("d", "safe")];
    let mut responses = Vec::new();
    for (id, tool) in plan {
        let mut scheduler = scheduler.clone();
        poll_fn(|cx| scheduler.poll_ready(cx)).await.unwrap();
        responses.push(scheduler.call(Call::new(id, tool, json!({"ms": 10}))));
    }
    for response in responses {
        assert_eq!(response.await.unwrap().outcome, Outcome::Success);
    }
    assert_eq!(log.started(), ["a", "b", "c", "d"]);
}

#[tokio::test(start_paused = true)]
async fn dropping_the_worker_ends_running_and_queued_calls_and_refuses_new_ones() {
    let log = Log::default();
    let (mut scheduler, worker) = pair(&log, one_place(1));
    let (sink, mut events) = EventSink::channel();
    poll_fn(|cx| scheduler.poll_ready(cx)).await.unwrap();
    let running =
        scheduler.call(Call::new("run", "unsafe", json!({"ms": 1000})).with_sink(sink.clone()));
    poll_fn(|cx| scheduler.poll_ready(cx)).await.unwrap();
    let queued = scheduler.call(Call::new("wait", "unsafe", json!({"ms": 10})).with_sink(sink));
    tokio::time::sleep(Duration::from_millis(5)).await;
    assert_eq!(log.started(), ["run"]);
    drop(worker);
    assert_eq!(running.await, Err(SchedulerError::Closed));
    assert_eq!(queued.await, Err(SchedulerError::Closed));
    assert_eq!(
        poll_fn(|cx| scheduler.poll_ready(cx)).await,
        Err(SchedulerError::Closed)
    );
    // The running call was stopped, and its guard reported its End.
    let mut ends = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let Event::ToolExecEnd {
            call_id, outcome, ..
        } = event
        {
            ends.push((call_id, outcome));
        }
    }
    assert_eq!(ends, [("run".to_owned(), Outcome::Cancelled)]);
    assert_eq!(log.started(), ["run"], "the queued call never started");
}

#[tokio::test(start_paused = true)]
async fn the_worker_runs_until_every_handle_and_call_is_gone() {
    let log = Log::default();
    let (mut scheduler, worker) = pair(&log, one_place(1));
    let worker = tokio::spawn(worker.run());
    poll_fn(|cx| scheduler.poll_ready(cx)).await.unwrap();
    let response = scheduler.call(Call::new("c0", "safe", json!({"ms": 50})));
    drop(scheduler);
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert!(!worker.is_finished(), "a call is still running");
    assert_eq!(response.await.unwrap().outcome, Outcome::Success);
    tokio::time::timeout(Duration::from_secs(1), worker)
        .await
        .expect("the worker ends once everything is gone")
        .unwrap();
}

#[test]
fn a_runtime_shut_down_with_calls_running_and_queued_does_not_hang() {
    let log = Log::default();
    let done = std::sync::mpsc::channel();
    let sender = done.0;
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let responses = runtime.block_on(async {
            let (scheduler, worker) = pair(
                &log,
                SchedulerConfig {
                    max_concurrency: 2,
                    ..SchedulerConfig::default()
                },
            );
            tokio::spawn(worker.run());
            let mut responses = Vec::new();
            for i in 0..6 {
                let mut scheduler = scheduler.clone();
                let tool = if i % 3 == 2 { "unsafe" } else { "safe" };
                poll_fn(|cx| scheduler.poll_ready(cx)).await.unwrap();
                responses.push(scheduler.call(Call::new(
                    format!("c{i}"),
                    tool,
                    json!({"ms": 60_000}),
                )));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
            responses
        });
        drop(runtime);
        drop(responses);
        let _ = sender.send(());
    });
    done.1
        .recv_timeout(Duration::from_secs(20))
        .expect("the runtime shut down");
}
