//! A tool made with `fn_tool` runs through a pipeline like any typed tool:
//! its arguments are checked against the derived schema before the closure
//! runs, and by default the approval engine treats it as a tool with side
//! effects.

use std::sync::Arc;

use agentcore::approval::{ApprovalEngine, Mode};
use agentcore::schemars::JsonSchema;
use agentcore::tools::fn_tool;
use agentcore::{Call, Gate, Outcome, Pipeline, Tool, ToolOutput, ToolRegistry, ToolResult};
use serde::Deserialize;
use serde_json::json;
use tower::ServiceExt;

/// For Rust readers only: not in the schema the model sees.
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "agentcore::schemars")]
struct RepeatArgs {
    /// The word to repeat.
    word: String,
    /// How many times.
    #[schemars(range(min = 1))]
    times: u32,
}

/// The tool; `read_only` as the builder method says.
fn repeat(read_only: bool) -> Arc<dyn Tool> {
    let tool = fn_tool(
        "repeat",
        "Repeats `word` `times` times.",
        |args: RepeatArgs, _cx| async move {
            Ok(ToolOutput::text(args.word.repeat(args.times as usize)))
        },
    );
    if read_only {
        tool.read_only().into_dyn()
    } else {
        tool.into_dyn()
    }
}

async fn run(tool: Arc<dyn Tool>, gate: Option<Arc<dyn Gate>>, args: &str) -> ToolResult {
    let registry = Arc::new(ToolRegistry::new().with(tool).unwrap());
    let pipeline = match gate {
        Some(gate) => Pipeline::builder().registry(registry).gate(gate).build(),
        None => Pipeline::builder().registry(registry).build(),
    };
    pipeline
        .service()
        .oneshot(Call::new("c1", "repeat", args))
        .await
        .unwrap()
}

#[tokio::test]
async fn fn_tool_with_good_args_runs_its_closure() {
    let result = run(repeat(false), None, r#"{"word": "ab", "times": 3}"#).await;
    assert_eq!(result.outcome, Outcome::Success);
    assert_eq!(result.text(), "ababab");
}

#[tokio::test]
async fn fn_tool_with_bad_args_fails_with_a_readable_error() {
    let head = "InputValidationError: repeat failed due to the following issue(s):\n";
    for (args, issue) in [
        (
            r#"{"word": "ab", "times": "many"}"#,
            "The parameter `times` type is expected as `integer` but provided as `string`",
        ),
        (
            r#"{"times": 2}"#,
            "The required parameter `word` is missing",
        ),
        (
            r#"{"word": "a", "times": 1, "loud": true}"#,
            "The parameter `loud` is not allowed",
        ),
    ] {
        let result = run(repeat(false), None, args).await;
        assert_eq!(result.outcome, Outcome::Failed, "{args}");
        assert_eq!(result.text(), format!("{head}{issue}"), "{args}");
    }
}

#[test]
fn fn_tool_schema_keeps_field_descriptions_and_drops_the_args_doc_comment() {
    let tool = repeat(false);
    let schema = tool.schema();
    assert_eq!(
        schema["properties"]["word"],
        json!({"type": "string", "description": "The word to repeat."})
    );
    assert!(schema.get("description").is_none(), "{schema:#}");
    assert_eq!(tool.description(), "Repeats `word` `times` times.");
}

#[tokio::test]
async fn fn_tool_asks_the_approval_engine_unless_declared_read_only() {
    let root = tempfile::tempdir().unwrap();
    let engine =
        || -> Arc<dyn Gate> { Arc::new(ApprovalEngine::new(root.path()).with_mode(Mode::Default)) };
    let args = r#"{"word": "ab", "times": 1}"#;

    // No approver can be asked here, so "ask" is a denial.
    let by_default = run(repeat(false), Some(engine()), args).await;
    assert_eq!(by_default.outcome, Outcome::Denied, "{}", by_default.text());

    let read_only = run(repeat(true), Some(engine()), args).await;
    assert_eq!(read_only.outcome, Outcome::Success, "{}", read_only.text());
}
