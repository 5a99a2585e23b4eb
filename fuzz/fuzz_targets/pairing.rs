//! A script of calls, tool behaviours, gate decisions and steering / abort /
//! drop moments, run through the scheduler and the pipeline: every Start
//! must have exactly one End, after it, with the same id, and nothing for an
//! id may follow its End.

#![no_main]

use std::collections::HashMap;
use std::sync::{Arc, Once};
use std::time::Duration;

use agentcore::GateDecision;
use agentcore::stages::gate::gate_fn;
use agentcore::message::ToolCall;
use agentcore::scheduler::{Scheduler, SchedulerConfig, SteeringPolicy};
use agentcore::turn::Turn;
use agentcore::{
    BoxFuture, CallContext, Event, GatedArgs, InterruptBehavior, Pipeline, Tool, ToolError,
    ToolOutput, ToolRegistry,
};
use arbitrary::Arbitrary;
use futures::StreamExt;
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Behavior {
    Succeed,
    Fail,
    Panic,
    Hang,
    Progress,
    Sleep(u8),
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum GateMove {
    Allow,
    Deny,
    Error,
    Rewrite,
    RewriteInvalid,
    Slow(u8),
}

#[derive(Arbitrary, Debug)]
struct ScriptedCall {
    behavior: Behavior,
    gate: GateMove,
    safe: bool,
    cancel_on_steer: bool,
    malformed: bool,
}

#[derive(Arbitrary, Debug)]
struct Script {
    calls: Vec<ScriptedCall>,
    max_concurrency: u8,
    finish_batch: bool,
    steer_at: Option<u8>,
    abort_at: Option<u8>,
    drop_at: Option<u8>,
    stream_gap: Option<u8>,
}

/// One tool per call, so each call's behaviour is its own.
struct Scripted {
    name: String,
    behavior: Behavior,
    safe: bool,
    interrupt: InterruptBehavior,
    schema: Value,
}

impl Tool for Scripted {
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        "scripted"
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
        _args: GatedArgs,
        cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        let behavior = self.behavior;
        Box::pin(async move {
            match behavior {
                Behavior::Succeed => Ok(ToolOutput::text("ok")),
                Behavior::Fail => Err(ToolError::new("failed")),
                Behavior::Panic => panic!("scripted panic"),
                Behavior::Hang => std::future::pending().await,
                Behavior::Progress => {
                    for i in 0..3 {
                        cx.progress().report(json!(i));
                        tokio::time::sleep(Duration::from_millis(1)).await;
                    }
                    Ok(ToolOutput::text("done"))
                }
                Behavior::Sleep(ms) => {
                    tokio::time::sleep(Duration::from_millis(u64::from(ms))).await;
                    Ok(ToolOutput::text("slept"))
                }
            }
        })
    }
}

fn check_pairing(events: &[Event], expected_starts: Option<usize>) {
    let mut state: HashMap<&str, bool> = HashMap::new();
    for event in events {
        match event {
            Event::ToolExecStart { call_id, .. } => {
                assert!(state.insert(call_id, false).is_none(), "second Start for {call_id}");
            }
            Event::ToolExecUpdate { call_id, .. } => {
                assert_eq!(state.get(call_id.as_str()), Some(&false), "update outside Start/End");
            }
            Event::ToolExecEnd { call_id, .. } => {
                assert_eq!(state.get(call_id.as_str()), Some(&false), "End without open Start");
                state.insert(call_id, true);
            }
            _ => {}
        }
    }
    assert!(state.values().all(|ended| *ended), "a Start without End");
    if let Some(n) = expected_starts {
        assert_eq!(state.len(), n, "a call without Start");
    }
}

fuzz_target!(|script: Script| {
    static QUIET: Once = Once::new();
    // Tool panics are caught by the pipeline as in production; libFuzzer's
    // hook would abort on them.
    QUIET.call_once(|| std::panic::set_hook(Box::new(|_| {})));
    if script.calls.len() > 24 {
        return;
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("runtime");
    let events = rt.block_on(async {
        let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}, "additionalProperties": false});
        let mut registry = ToolRegistry::new();
        let mut moves = HashMap::new();
        for (i, call) in script.calls.iter().enumerate() {
            let name = format!("t{i}");
            moves.insert(format!("c{i}"), call.gate);
            let tool = Scripted {
                name,
                behavior: call.behavior,
                safe: call.safe,
                interrupt: if call.cancel_on_steer {
                    InterruptBehavior::Cancel
                } else {
                    InterruptBehavior::Block
                },
                schema: schema.clone(),
            };
            registry.register(Arc::new(tool)).expect("register");
        }
        let registry = Arc::new(registry);
        let moves = Arc::new(moves);
        let gate = gate_fn(move |req| {
            let m = moves.get(&req.call_id).copied().unwrap_or(GateMove::Allow);
            async move {
                match m {
                    GateMove::Allow => Ok(GateDecision::Allow),
                    GateMove::Deny => Ok(GateDecision::Deny(None)),
                    GateMove::Error => Err("gate error".into()),
                    GateMove::Rewrite => Ok(GateDecision::Rewrite(json!({"n": 1}))),
                    GateMove::RewriteInvalid => Ok(GateDecision::Rewrite(json!({"x": 1}))),
                    GateMove::Slow(ms) => {
                        tokio::time::sleep(Duration::from_millis(u64::from(ms))).await;
                        Ok(GateDecision::Allow)
                    }
                }
            }
        });
        let pipeline = Pipeline::builder()
            .registry(registry.clone())
            .gate(Arc::new(gate))
            .max_tool_errors(2)
            .build();
        let scheduler = Scheduler::new(
            pipeline.service(),
            registry,
            SchedulerConfig {
                max_concurrency: usize::from(script.max_concurrency % 5),
                queue_capacity: 4,
                steering: if script.finish_batch {
                    SteeringPolicy::FinishBatch
                } else {
                    SteeringPolicy::SkipPending
                },
            },
        );
        let (turn, mut rx) = Turn::with_channel(&scheduler);
        let control = turn.control();
        if let Some(at) = script.steer_at {
            let control = control.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(u64::from(at))).await;
                control.steer();
            });
        }
        if let Some(at) = script.abort_at {
            let control = control.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(u64::from(at))).await;
                control.abort();
            });
        }
        let calls: Vec<ToolCall> = script
            .calls
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let args = if c.malformed { "{" } else { "{\"n\": 2}" };
                ToolCall::new(format!("c{i}"), format!("t{i}"), args)
            })
            .collect();
        let n = calls.len();
        let gap = script.stream_gap.map(u64::from);
        let stream = futures::stream::iter(calls).then(move |call| async move {
            if let Some(gap) = gap {
                tokio::time::sleep(Duration::from_millis(gap)).await;
            }
            call
        });
        // Hanging tools end when the turn is dropped, at the latest at 2 s.
        let drop_at = script.drop_at.map_or(2000, u64::from);
        let finished = tokio::time::timeout(
            Duration::from_millis(drop_at),
            turn.run_stream(stream),
        )
        .await
        .is_ok();
        // Let the worker report the calls the drop cancelled.
        tokio::time::sleep(Duration::from_millis(10)).await;
        drop(scheduler);
        drop(pipeline);
        let mut events = Vec::new();
        while let Ok(e) = rx.try_recv() {
            events.push(e);
        }
        (events, finished.then_some(n))
    });
    check_pairing(&events.0, events.1);
});
