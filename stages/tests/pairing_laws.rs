//! The pairing law under random scripts: every Start has exactly one End,
//! after it, with the same id, and nothing for an id follows its End —
//! whatever tools, gates, cancellations and drops do.

mod common;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use agentcore_stages::gate::{GateDecision, gate_fn};
use agentcore_stages::{Call, CancelReason, Cancellation, Event, EventSink, Pipeline};
use common::{Behavior, ScriptTool, assert_paired, registry};
use proptest::prelude::*;
use serde_json::json;

#[derive(Clone, Debug)]
enum GateMove {
    Allow,
    Deny,
    Error,
    RewriteValid,
    RewriteInvalid,
    Slow,
}

#[derive(Clone, Debug)]
struct Script {
    tool: usize,
    malformed: bool,
    gate: GateMove,
    cancel_at: Option<u64>,
    drop_at: Option<u64>,
}

const TOOLS: [&str; 6] = ["ok", "fail", "panic", "hang", "sleep", "missing"];

fn script() -> impl Strategy<Value = Script> {
    (
        0..TOOLS.len(),
        prop::bool::weighted(0.1),
        prop_oneof![
            Just(GateMove::Allow),
            Just(GateMove::Deny),
            Just(GateMove::Error),
            Just(GateMove::RewriteValid),
            Just(GateMove::RewriteInvalid),
            Just(GateMove::Slow),
        ],
        prop::option::weighted(0.3, 0u64..30),
        prop::option::weighted(0.3, 0u64..30),
    )
        .prop_map(|(tool, malformed, gate, cancel_at, drop_at)| Script {
            tool,
            malformed,
            gate,
            cancel_at,
            drop_at,
        })
}

fn run_scripts(scripts: Vec<Script>) -> Vec<Event> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap();
    rt.block_on(async move {
        let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}, "additionalProperties": false});
        let tools = vec![
            ScriptTool::new("ok", Behavior::Succeed("ok")).schema(schema.clone()),
            ScriptTool::new("fail", Behavior::Fail("no")).schema(schema.clone()),
            ScriptTool::new("panic", Behavior::Panic("boom")).schema(schema.clone()),
            ScriptTool::new("hang", Behavior::Hang).schema(schema.clone()),
            ScriptTool::new("sleep", Behavior::Sleep(Duration::from_millis(10))).schema(schema.clone()),
        ];
        let moves: HashMap<String, GateMove> = scripts
            .iter()
            .enumerate()
            .map(|(i, s)| (format!("c{i}"), s.gate.clone()))
            .collect();
        let moves = Arc::new(moves);
        let gate = gate_fn(move |req| {
            let m = moves.get(&req.call_id).cloned().unwrap_or(GateMove::Allow);
            async move {
                match m {
                    GateMove::Allow => Ok(GateDecision::Allow),
                    GateMove::Deny => Ok(GateDecision::Deny(None)),
                    GateMove::Error => Err("gate broke".into()),
                    GateMove::RewriteValid => Ok(GateDecision::Rewrite(json!({"n": 1}))),
                    GateMove::RewriteInvalid => Ok(GateDecision::Rewrite(json!({"n": "x"}))),
                    GateMove::Slow => {
                        tokio::time::sleep(Duration::from_millis(15)).await;
                        Ok(GateDecision::Allow)
                    }
                }
            }
        });
        let (sink, mut rx) = EventSink::channel();
        let pipeline = Pipeline::builder()
            .registry(registry(tools))
            .gate(Arc::new(gate))
            .sink(sink)
            .max_tool_errors(2)
            .build();
        let svc = pipeline.service();
        let mut tasks = tokio::task::JoinSet::new();
        for (i, s) in scripts.into_iter().enumerate() {
            let cancellation = Cancellation::new();
            let args = if s.malformed { "{".to_owned() } else { "{\"n\": 2}".to_owned() };
            let call = Call::new(format!("c{i}"), TOOLS[s.tool], args)
                .with_cancellation(cancellation.clone());
            if let Some(at) = s.cancel_at {
                tasks.spawn(async move {
                    tokio::time::sleep(Duration::from_millis(at)).await;
                    cancellation.cancel(CancelReason::Abort);
                });
            }
            let fut = tower::ServiceExt::oneshot(svc.clone(), call);
            // Every call is dropped at the latest after a second (hanging tools).
            let drop_at = s.drop_at.unwrap_or(1000);
            tasks.spawn(async move {
                let _ = tokio::time::timeout(Duration::from_millis(drop_at), fut).await;
            });
        }
        while tasks.join_next().await.is_some() {}
        drop(svc);
        drop(pipeline);
        let mut events = Vec::new();
        while let Some(e) = rx.recv().await {
            events.push(e);
        }
        events
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn every_start_has_exactly_one_end_after_it(scripts in prop::collection::vec(script(), 1..12)) {
        let n = scripts.len();
        let events = run_scripts(scripts);
        assert_paired(&events);
        let starts = events.iter().filter(|e| matches!(e, Event::ToolExecStart { .. })).count();
        prop_assert_eq!(starts, n);
    }
}
