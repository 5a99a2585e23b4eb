//! Typed tools through the real pipeline: the derived schema coerces,
//! validates and closes objects; the tool sees typed arguments everywhere.

use std::sync::Arc;

use agentcore_stages::{
    Call, CallContext, Event, EventSink, Outcome, Pipeline, RawArgs, ToolError, ToolOutput,
    ToolRegistry, ToolResult, UpdateKind, ValidationFailure,
};
use agentcore_stages::{DESERIALIZE_FAILURE_CODE, TypedTool, schema_for};
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_json::{Value, json};
use tower::ServiceExt;

/// A span of lines.
#[derive(Debug, Deserialize, JsonSchema)]
struct Span {
    /// First line, 1-based.
    start: u32,
    /// Last line; the end of the file when absent.
    end: Option<u32>,
}

/// Reads some lines.
#[derive(Debug, Deserialize, JsonSchema)]
struct ReadArgs {
    /// The file to read.
    #[serde(deserialize_with = "non_empty")]
    #[schemars(with = "String")]
    path: String,
    /// How many lines at most.
    limit: u32,
    /// Where to start; the whole file when absent.
    span: Option<Span>,
}

/// Serde refuses an empty path; the schema says only "string".
fn non_empty<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let s = String::deserialize(d)?;
    if s.is_empty() {
        return Err(serde::de::Error::custom("path must not be empty"));
    }
    Ok(s)
}

struct ReadLines;

impl TypedTool for ReadLines {
    type Args = ReadArgs;

    fn name(&self) -> &str {
        "read_lines"
    }

    fn description(&self) -> &str {
        "Reads lines of a file."
    }

    fn label(&self) -> Option<&str> {
        Some("Read Lines")
    }

    async fn execute(&self, args: ReadArgs, _cx: &CallContext) -> Result<ToolOutput, ToolError> {
        let span = match &args.span {
            Some(Span { start, end }) => {
                format!("{start}..{}", end.map_or("$".into(), |e| e.to_string()))
            }
            None => "all".to_owned(),
        };
        Ok(ToolOutput::text(format!(
            "{} limit={} span={span}",
            args.path, args.limit
        )))
    }

    async fn validate(&self, args: &ReadArgs, _cx: &CallContext) -> Result<(), ValidationFailure> {
        if args.path.contains("..") {
            return Err(ValidationFailure::new(
                7,
                "path must not contain `..`; give a path inside the workspace",
            ));
        }
        Ok(())
    }

    async fn preview(
        &self,
        args: &ReadArgs,
        _cx: &CallContext,
    ) -> Result<Option<String>, ToolError> {
        Ok(Some(format!(
            "would read {} lines of {}",
            args.limit, args.path
        )))
    }

    fn read_only(&self, _args: &ReadArgs) -> bool {
        true
    }
}

async fn run(args: impl Into<RawArgs>) -> (ToolResult, Vec<Event>) {
    let registry = Arc::new(ToolRegistry::new().with(ReadLines.into_dyn()).unwrap());
    let pipeline = Pipeline::builder().registry(registry).build();
    let (sink, mut rx) = EventSink::channel();
    let call = Call::new("c1", "read_lines", args).with_sink(sink);
    let result = pipeline.service().oneshot(call).await.unwrap();
    let mut events = Vec::new();
    while let Ok(event) = rx.try_recv() {
        events.push(event);
    }
    (result, events)
}

fn contains_key(value: &Value, key: &str) -> bool {
    match value {
        Value::Object(map) => map.iter().any(|(k, v)| k == key || contains_key(v, key)),
        Value::Array(items) => items.iter().any(|v| contains_key(v, key)),
        _ => false,
    }
}

#[test]
fn derived_schema_has_no_ref_and_closes_objects() {
    let schema = schema_for::<ReadArgs>(true);
    assert!(!contains_key(&schema, "$ref"), "{schema:#}");
    assert!(!contains_key(&schema, "$defs"), "{schema:#}");
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(
        schema["properties"]["path"]["description"],
        "The file to read."
    );
    let tool = ReadLines.into_dyn();
    assert_eq!(tool.schema(), &schema);
}

#[tokio::test]
async fn string_number_is_coerced_for_a_u32_field() {
    let (result, _) = run(json!({"path": "a.rs", "limit": "3"})).await;
    assert_eq!(result.outcome, Outcome::Success, "{}", result.text());
    assert_eq!(result.text(), "a.rs limit=3 span=all");
    assert_eq!(result.coercions.len(), 1);
}

#[tokio::test]
async fn json_text_args_with_an_option_struct_field_work() {
    let (result, _) = run(r#"{"path": "a.rs", "limit": 10, "span": {"start": "2"}}"#).await;
    assert_eq!(result.outcome, Outcome::Success, "{}", result.text());
    assert_eq!(result.text(), "a.rs limit=10 span=2..$");

    let (result, _) =
        run(json!({"path": "a.rs", "limit": 1, "span": {"start": 2, "end": 4}})).await;
    assert_eq!(result.text(), "a.rs limit=1 span=2..4");

    let (result, _) = run(json!({"path": "a.rs", "limit": 1, "span": null})).await;
    assert_eq!(result.outcome, Outcome::Success, "{}", result.text());
    assert_eq!(result.text(), "a.rs limit=1 span=all");
}

#[tokio::test]
async fn json_text_args_are_parsed_and_the_label_reported() {
    let call = r#"{"path": "b.rs", "limit": 2}"#;
    let registry = Arc::new(ToolRegistry::new().with(ReadLines.into_dyn()).unwrap());
    let pipeline = Pipeline::builder().registry(registry).build();
    let result = pipeline
        .service()
        .oneshot(Call::new("c", "read_lines", call))
        .await
        .unwrap();
    assert_eq!(result.text(), "b.rs limit=2 span=all");
    assert_eq!(result.label.as_deref(), Some("Read Lines"));
}

#[tokio::test]
async fn unknown_property_is_refused_by_the_schema() {
    let (result, _) = run(json!({"path": "a.rs", "limit": 1, "colour": "red"})).await;
    assert_eq!(result.outcome, Outcome::Failed);
    assert!(result.text().contains("colour"), "{}", result.text());
    assert!(result.text().contains("read_lines"), "{}", result.text());

    let (result, _) =
        run(json!({"path": "a.rs", "limit": 1, "span": {"start": 1, "stop": 2}})).await;
    assert_eq!(result.outcome, Outcome::Failed);
    assert!(result.text().contains("stop"), "{}", result.text());
}

#[tokio::test]
async fn args_that_pass_the_schema_but_not_serde_fail_clearly_before_the_preview() {
    let (result, events) = run(json!({"path": "", "limit": 1})).await;
    assert_eq!(result.outcome, Outcome::Failed);
    assert_eq!(
        result.text(),
        "tool argument validation failed: read_lines could not read its arguments: path must not be empty"
    );
    assert_eq!(result.error_code, Some(DESERIALIZE_FAILURE_CODE));
    assert!(
        !events.iter().any(|e| matches!(
            e,
            Event::ToolExecUpdate {
                kind: UpdateKind::Preview,
                ..
            }
        )),
        "no preview for a call that cannot run"
    );
}

#[tokio::test]
async fn typed_validate_and_preview_reach_the_pipeline() {
    let (result, _) = run(json!({"path": "../x", "limit": 1})).await;
    assert_eq!(result.outcome, Outcome::Failed);
    assert_eq!(result.error_code, Some(7));
    assert!(result.text().contains("inside the workspace"));

    let (result, events) = run(json!({"path": "a.rs", "limit": "5"})).await;
    assert_eq!(result.outcome, Outcome::Success);
    let preview = events.iter().find_map(|e| match e {
        Event::ToolExecUpdate {
            kind: UpdateKind::Preview,
            payload,
            ..
        } => Some(payload.clone()),
        _ => None,
    });
    assert_eq!(preview, Some(json!("would read 5 lines of a.rs")));
    assert!(matches!(events.first(), Some(Event::ToolExecStart { .. })));
    assert!(matches!(events.last(), Some(Event::ToolExecEnd { .. })));
}

#[test]
fn capabilities_see_the_typed_args() {
    let tool = ReadLines.into_dyn();
    assert!(tool.read_only(&json!({"path": "a", "limit": 1})));
    // Not deserializable: fail closed.
    assert!(!tool.read_only(&json!({"path": "a"})));
}
