//! A tool that runs a sub-agent: its `call` drives an inner `Pipeline`,
//! `Scheduler` and `Turn` with tools of its own, and bubbles every inner
//! event up as the outer call's progress
//! (`tool_exec_update{kind: progress, payload: <inner event>}`). Cancelling
//! the outer call aborts the inner turn.
//!
//! The sub-agent's "model" is scripted here (one `lookup` per question);
//! a real one would loop: ask a model, run its calls as a turn, repeat.
//!
//! Run: `cargo run --example subagent_tool`

use std::sync::Arc;
use std::time::Duration;

use agentcore::TypedTool;
use agentcore::message::ToolCall;
use agentcore::scheduler::{Scheduler, SchedulerConfig};
use agentcore::turn::Turn;
use agentcore::{
    CallContext, Event, Outcome, Pipeline, ToolError, ToolOutput, ToolRegistry, UpdateKind,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// The inner agent's only tool: looks a topic up in a tiny almanac.
#[derive(Deserialize, JsonSchema)]
struct LookupArgs {
    /// The topic.
    topic: String,
}

struct Lookup;

impl TypedTool for Lookup {
    type Args = LookupArgs;

    fn name(&self) -> &str {
        "lookup"
    }

    fn description(&self) -> &str {
        "Looks a topic up in the almanac."
    }

    async fn execute(&self, args: LookupArgs, _cx: &CallContext) -> Result<ToolOutput, ToolError> {
        tokio::time::sleep(Duration::from_millis(10)).await;
        let fact = match args.topic.to_lowercase().as_str() {
            "tower" => {
                "tower is a library of modular components for networking clients and servers"
            }
            "tokio" => "tokio is an asynchronous runtime for Rust",
            "serde" => "serde serializes and deserializes Rust data structures",
            other => return Err(ToolError::new(format!("no entry for {other:?}"))),
        };
        Ok(ToolOutput::text(fact))
    }

    fn read_only(&self, _args: &LookupArgs) -> bool {
        true
    }
}

/// Asks a sub-agent to research some topics.
#[derive(Deserialize, JsonSchema)]
struct ResearchArgs {
    /// The topics to look up.
    topics: Vec<String>,
}

/// The outer tool: each call runs a sub-agent with its own tools.
struct Research {
    registry: Arc<ToolRegistry>,
}

impl Research {
    fn new() -> Result<Self, agentcore::RegistryError> {
        Ok(Self {
            registry: Arc::new(ToolRegistry::new().with(Lookup.into_dyn())?),
        })
    }
}

impl TypedTool for Research {
    type Args = ResearchArgs;

    fn name(&self) -> &str {
        "research"
    }

    fn description(&self) -> &str {
        "Researches the given topics with a sub-agent and summarises what it found."
    }

    fn label(&self) -> Option<&str> {
        Some("Research")
    }

    async fn execute(&self, args: ResearchArgs, cx: &CallContext) -> Result<ToolOutput, ToolError> {
        // The inner session: its own pipeline and scheduler, so its breaker
        // and queue are separate from the outer one's.
        let pipeline = Pipeline::builder().registry(self.registry.clone()).build();
        let scheduler = Scheduler::from_pipeline(&pipeline, SchedulerConfig::default());
        let (turn, mut events) = Turn::with_channel(&scheduler);
        let control = turn.control();
        let calls: Vec<ToolCall> = args
            .topics
            .iter()
            .enumerate()
            .map(|(i, topic)| ToolCall::new(format!("inner{i}"), "lookup", json!({"topic": topic})))
            .collect();

        // Every inner event becomes one progress report of the outer call.
        let progress = cx.progress();
        let bubble = async move {
            while let Some(event) = events.recv().await {
                let payload = serde_json::to_value(&event).expect("events serialize");
                progress.report(payload);
                if matches!(event, Event::ModelResponse { .. }) {
                    break;
                }
            }
        };
        let run = async {
            tokio::select! {
                result = turn.run(calls) => Some(result),
                _ = cx.cancellation().cancelled() => {
                    control.abort();
                    None
                }
            }
        };
        let (result, ()) = tokio::join!(run, bubble);
        let result = match result {
            Some(result) => result.map_err(|err| ToolError::new(err.to_string()))?,
            None => return Err(ToolError::cancelled(vec![])),
        };

        let mut summary = String::new();
        for (topic, r) in args.topics.iter().zip(&result.results) {
            let line = match r.outcome {
                Outcome::Success => format!("- {topic}: {}\n", r.text()),
                outcome => format!("- {topic}: ({outcome}) {}\n", r.text()),
            };
            summary.push_str(&line);
        }
        Ok(ToolOutput::text(summary.trim_end().to_owned()))
    }

    fn observes_cancellation(&self) -> bool {
        true
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let registry = Arc::new(ToolRegistry::new().with(Research::new()?.into_dyn())?);
    let pipeline = Pipeline::builder().registry(registry).build();
    let scheduler = Scheduler::from_pipeline(&pipeline, SchedulerConfig::default());

    let (turn, mut events) = Turn::with_channel(&scheduler);
    let printer = tokio::spawn(async move {
        let mut bubbled = Vec::new();
        while let Some(event) = events.recv().await {
            match &event {
                Event::ToolExecUpdate {
                    call_id,
                    kind: UpdateKind::Progress,
                    payload,
                } => {
                    println!("{call_id} progress <- inner {}", payload["type"]);
                    bubbled.push(payload.clone());
                }
                other => println!(
                    "{}",
                    serde_json::to_string(other).expect("events serialize")
                ),
            }
        }
        bubbled
    });

    let result = turn
        .run([ToolCall::new(
            "outer1",
            "research",
            json!({"topics": ["tower", "tokio", "cobol"]}),
        )])
        .await?;
    drop(scheduler);
    let bubbled = printer.await?;

    println!("\n{}", result.results[0].text());
    assert_eq!(result.results[0].outcome, Outcome::Success);
    assert!(result.results[0].text().contains("- cobol: (failed)"));
    // Three inner calls: Start and End each, then three tool-result
    // messages (start and end) and the inner model response.
    let count = |kind: &str| bubbled.iter().filter(|p| p["type"] == kind).count();
    assert_eq!(count("tool_exec_start"), 3);
    assert_eq!(count("tool_exec_end"), 3);
    assert_eq!(count("model_response"), 1);
    Ok(())
}
