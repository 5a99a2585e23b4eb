//! A typed tool end to end: its schema derived from a Rust type, run through
//! a `Pipeline`, a `Scheduler` and a `Turn`, with every event printed as a
//! JSON line.
//!
//! Run: `cargo run --example custom_tool`

use std::sync::Arc;

use agentcore::TypedTool;
use agentcore::access::{Access, Permissions};
use agentcore::message::ToolCall;
use agentcore::scheduler::{Scheduler, SchedulerConfig};
use agentcore::turn::Turn;
use agentcore::{CallContext, Extensions, Outcome, Pipeline, ToolError, ToolOutput, ToolRegistry};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// The arguments of `convert`. The fields' doc comments become the
/// schema's descriptions, which the model reads; this one, on the type, is
/// for Rust readers (the tool's description speaks for the tool).
#[derive(Debug, Deserialize, JsonSchema)]
struct ConvertArgs {
    /// The amount to convert.
    amount: f64,
    /// The unit of `amount`.
    from: Unit,
    /// The unit wanted.
    to: Unit,
    /// Decimal places in the answer (2 when absent).
    precision: Option<u8>,
}

/// A unit of length.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Unit {
    Metre,
    Foot,
    Mile,
    Kilometre,
}

impl Unit {
    fn metres(self) -> f64 {
        match self {
            Unit::Metre => 1.0,
            Unit::Foot => 0.3048,
            Unit::Mile => 1609.344,
            Unit::Kilometre => 1000.0,
        }
    }
}

/// Converts lengths between units.
struct Convert;

impl TypedTool for Convert {
    type Args = ConvertArgs;

    fn name(&self) -> &str {
        "convert"
    }

    fn description(&self) -> &str {
        "Converts a length from one unit to another."
    }

    fn label(&self) -> Option<&str> {
        Some("Convert Units")
    }

    async fn execute(&self, args: ConvertArgs, cx: &CallContext) -> Result<ToolOutput, ToolError> {
        cx.progress()
            .report(json!({"step": "converting", "from": format!("{:?}", args.from)}));
        let value = args.amount * args.from.metres() / args.to.metres();
        let precision = usize::from(args.precision.unwrap_or(2));
        Ok(ToolOutput::text(
            format!("{value:.precision$} {:?}", args.to).to_lowercase(),
        ))
    }

    // A pure computation: safe to run beside other calls.
    fn read_only(&self, _args: &ConvertArgs) -> bool {
        true
    }

    fn activity(&self, args: &ConvertArgs) -> Option<String> {
        Some(format!("Converting {} {:?}", args.amount, args.from))
    }

    // What a call touches, for the approval engine (the built-in tools
    // declare theirs the same way). A pure computation touches no file and
    // runs nothing: the engine judges it as a read, which runs without
    // asking unless a rule about reads or about `convert` says otherwise.
    fn extensions(&self) -> Extensions {
        Permissions::typed(|_: &ConvertArgs| Access::nothing()).into_extensions()
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let tool = Convert.into_dyn();
    println!("schema of {:?}:\n{:#}\n", tool.name(), tool.schema());

    let registry = Arc::new(ToolRegistry::new().with(tool)?);
    let pipeline = Pipeline::builder().registry(registry).build();
    let scheduler = Scheduler::from_pipeline(&pipeline, SchedulerConfig::default());

    let (turn, mut events) = Turn::with_channel(&scheduler);
    let printer = tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            println!(
                "{}",
                serde_json::to_string(&event).expect("events serialize")
            );
        }
    });

    let calls = vec![
        // Plain.
        ToolCall::new(
            "c1",
            "convert",
            json!({"amount": 3, "from": "mile", "to": "kilometre"}),
        ),
        // As a weak model sends it: JSON text with a number as a string;
        // coerced to 10 under the derived schema.
        ToolCall::new(
            "c2",
            "convert",
            r#"{"amount": "10", "from": "foot", "to": "metre", "precision": "1"}"#,
        ),
        // An invented parameter: the derived schema is closed, so the model
        // is told what to fix.
        ToolCall::new(
            "c3",
            "convert",
            json!({"amount": 1, "from": "metre", "to": "foot", "round": true}),
        ),
        // Not a unit: the enum's schema refuses it.
        ToolCall::new(
            "c4",
            "convert",
            json!({"amount": 1, "from": "league", "to": "metre"}),
        ),
    ];
    let result = turn.run(calls).await?;
    drop(scheduler);
    printer.await?;

    println!();
    for r in &result.results {
        println!("{} {:>7}: {}", r.call_id, r.outcome, r.text());
    }
    let outcomes: Vec<Outcome> = result.results.iter().map(|r| r.outcome).collect();
    assert_eq!(
        outcomes,
        [
            Outcome::Success,
            Outcome::Success,
            Outcome::Failed,
            Outcome::Failed
        ]
    );
    assert_eq!(result.results[0].text(), "4.83 kilometre");
    assert_eq!(result.results[1].text(), "3.0 metre");
    Ok(())
}
