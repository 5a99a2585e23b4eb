//! The quirks real models produce, each with the one reading coercion
//! gives it (or leaves for validation), per `docs/semantics.md` §3.

use std::sync::Arc;

use agentcore_stages::coerce::coerce;
use agentcore_stages::{
    BoxFuture, Call, CallContext, Coercion, Event, EventSink, GatedArgs, Outcome, Pipeline, Tool,
    ToolError, ToolOutput, ToolRegistry, ToolResult,
};
use serde_json::{Value, json};
use tower::ServiceExt;

/// Returns the arguments it was given, as JSON text.
struct Echo {
    schema: Value,
}

impl Tool for Echo {
    fn name(&self) -> &str {
        "echo"
    }
    fn description(&self) -> &str {
        "Returns its arguments."
    }
    fn schema(&self) -> &Value {
        &self.schema
    }
    fn execute<'a>(
        &'a self,
        args: GatedArgs,
        _cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move { Ok(ToolOutput::text(args.value().to_string())) })
    }
}

fn pipeline(schema: Value, sink: EventSink) -> Pipeline {
    let registry = ToolRegistry::new()
        .with(Arc::new(Echo { schema }))
        .expect("schema compiles");
    Pipeline::builder()
        .registry(Arc::new(registry))
        .sink(sink)
        .build()
}

async fn run(schema: Value, args: impl Into<agentcore_stages::RawArgs>) -> ToolResult {
    let call = Call::new("c1", "echo", args);
    pipeline(schema, EventSink::default())
        .service()
        .oneshot(call)
        .await
        .expect("the pipeline never errs")
}

/// An object schema with the one property `v`.
fn with_v(v: Value) -> Value {
    json!({"type": "object", "properties": {"v": v}})
}

fn coerced(schema: &Value, args: Value) -> (Value, Vec<Coercion>) {
    let mut args = args;
    let coercions = coerce(schema, &mut args).expect("coerces");
    (args, coercions)
}

fn c(path: &str, from: &str, to: &str) -> Coercion {
    Coercion {
        path: path.into(),
        from: from.into(),
        to: to.into(),
    }
}

/// (what, schema of `v`, the string the model sent, `v` after coercion)
fn table() -> Vec<(&'static str, Value, &'static str, Value)> {
    vec![
        (
            "padded integer",
            json!({"type": "integer"}),
            " 42 ",
            json!(42),
        ),
        (
            "fraction for integer",
            json!({"type": "integer"}),
            "1.5",
            json!("1.5"),
        ),
        (
            "1.0 for integer",
            json!({"type": "integer"}),
            "1.0",
            json!("1.0"),
        ),
        (
            "exponent for integer",
            json!({"type": "integer"}),
            "1e3",
            json!("1e3"),
        ),
        (
            "integer past u64",
            json!({"type": "integer"}),
            "99999999999999999999",
            json!("99999999999999999999"),
        ),
        ("number", json!({"type": "number"}), "3", json!(3)),
        (
            "fraction for number",
            json!({"type": "number"}),
            "1.5",
            json!(1.5),
        ),
        ("true", json!({"type": "boolean"}), "true", json!(true)),
        ("false", json!({"type": "boolean"}), "false", json!(false)),
        (
            "null for integer",
            json!({"type": "integer"}),
            "null",
            json!("null"),
        ),
        (
            "null for nullable integer",
            json!({"type": ["integer", "null"]}),
            "null",
            json!("null"),
        ),
        (
            "stringified array of stringified integers",
            json!({"type": "array", "items": {"type": "integer"}}),
            r#"["1", "2"]"#,
            json!([1, 2]),
        ),
        (
            "stringified object",
            json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}}),
            r#"{"a": "1", "b": "2"}"#,
            json!({"a": 1, "b": "2"}),
        ),
        (
            "union with null",
            json!({"type": ["integer", "null"]}),
            "5",
            json!(5),
        ),
        (
            "union allowing string",
            json!({"type": ["integer", "string"]}),
            "5",
            json!("5"),
        ),
        (
            "anyOf of two non-null branches",
            json!({"anyOf": [{"type": "integer"}, {"type": "boolean"}]}),
            "5",
            json!("5"),
        ),
        (
            "oneOf of X or null",
            json!({"oneOf": [{"type": "null"}, {"type": "integer"}]}),
            "5",
            json!(5),
        ),
        ("string wanted", json!({"type": "string"}), "5", json!("5")),
        ("no type", json!({"enum": [5, "x"]}), "5", json!("5")),
        (
            "not JSON",
            json!({"type": "integer"}),
            "five",
            json!("five"),
        ),
        (
            "wrong JSON type",
            json!({"type": "integer"}),
            "true",
            json!("true"),
        ),
        (
            "string in a string",
            json!({"type": "integer"}),
            r#""5""#,
            json!(r#""5""#),
        ),
    ]
}

#[test]
fn every_quirk_has_its_one_reading() {
    for (what, schema, sent, expected) in table() {
        let schema = with_v(schema);
        let (args, coercions) = coerced(&schema, json!({ "v": sent }));
        assert_eq!(args, json!({ "v": expected }), "{what}");
        let changed = expected != json!(sent);
        assert_eq!(!coercions.is_empty(), changed, "{what}");
        if changed {
            assert_eq!(coercions[0].path, "v", "{what}");
            assert_eq!(coercions[0].from, Value::from(sent).to_string(), "{what}");
            // The first coercion is the parse itself; any inside it follow.
            let parsed: Value = serde_json::from_str(sent.trim()).expect("parses");
            assert_eq!(coercions[0].to, parsed.to_string(), "{what}");
        }
    }
}

#[tokio::test]
async fn every_quirk_through_the_pipeline() {
    for (what, schema, sent, expected) in table() {
        let result = run(with_v(schema.clone()), json!({ "v": sent })).await;
        let valid = compile(&with_v(schema)).is_valid(&json!({ "v": expected }));
        if valid {
            assert_eq!(
                result.outcome,
                Outcome::Success,
                "{what}: {}",
                result.text()
            );
            assert_eq!(
                result.text(),
                json!({ "v": expected }).to_string(),
                "{what}"
            );
        } else {
            assert_eq!(result.outcome, Outcome::Failed, "{what}");
            assert!(result.coercions.is_empty(), "{what}");
        }
    }
}

fn compile(schema: &Value) -> jsonschema::Validator {
    agentcore_stages::validate::compile_schema(schema).expect("schema compiles")
}

#[test]
fn stringified_array_of_stringified_integers_lists_each_coercion() {
    let schema = with_v(json!({"type": "array", "items": {"type": "integer"}}));
    let (_, coercions) = coerced(&schema, json!({"v": r#"["1", "2"]"#}));
    assert_eq!(
        coercions,
        [
            c("v", r#""[\"1\", \"2\"]""#, r#"["1","2"]"#),
            c("v[0]", r#""1""#, "1"),
            c("v[1]", r#""2""#, "2"),
        ]
    );
}

#[tokio::test]
async fn inexact_integers_are_left_for_a_type_error() {
    for sent in ["1.5", "1.0", "1e3", "99999999999999999999"] {
        let result = run(with_v(json!({"type": "integer"})), json!({ "v": sent })).await;
        assert_eq!(result.outcome, Outcome::Failed);
        assert_eq!(
            result.text(),
            "InputValidationError: echo failed due to the following issue(s):\n\
             The parameter `v` type is expected as `integer` but provided as `string`"
        );
        assert!(result.coercions.is_empty());
    }
}

#[test]
fn schemars_option_of_struct_is_coerced() {
    // What schemars emits for `struct Args { range: Option<Range> }`.
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Args",
        "type": "object",
        "properties": {
            "range": {"anyOf": [{"$ref": "#/$defs/Range"}, {"type": "null"}]}
        },
        "$defs": {
            "Range": {
                "type": "object",
                "properties": {
                    "start": {"type": "integer", "format": "uint", "minimum": 0},
                    "end": {"type": "integer", "format": "uint", "minimum": 0}
                },
                "required": ["start", "end"]
            }
        }
    });
    let (args, coercions) = coerced(&schema, json!({"range": r#"{"start": "1", "end": 5}"#}));
    assert_eq!(args, json!({"range": {"start": 1, "end": 5}}));
    assert_eq!(coercions[1], c("range.start", r#""1""#, "1"));
    assert!(compile(&schema).is_valid(&args));
    // null stays null, and "null" stays a string.
    let (args, coercions) = coerced(&schema, json!({"range": "null"}));
    assert_eq!(args, json!({"range": "null"}));
    assert!(coercions.is_empty());
}

#[test]
fn pattern_properties_beside_additional_properties() {
    let schema = json!({
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "patternProperties": {"^count_[a-z]+$": {"type": "integer"}},
        "additionalProperties": {"type": "boolean"}
    });
    let (args, coercions) = coerced(
        &schema,
        json!({"name": "7", "count_x": "7", "count_X": "true", "other": "false"}),
    );
    assert_eq!(
        args,
        json!({"name": "7", "count_x": 7, "count_X": true, "other": false})
    );
    assert_eq!(coercions.len(), 3);
    assert!(compile(&schema).is_valid(&args));
}

#[test]
fn a_name_matched_by_a_pattern_never_takes_additional_properties() {
    let schema = json!({
        "type": "object",
        "patternProperties": {"^s": {"type": "string"}},
        "additionalProperties": {"type": "integer"}
    });
    let (args, coercions) = coerced(&schema, json!({"s1": "1", "t": "1"}));
    assert_eq!(args, json!({"s1": "1", "t": 1}));
    assert_eq!(coercions, [c("t", r#""1""#, "1")]);
}

#[test]
fn prefix_items_beside_items() {
    let schema = with_v(json!({
        "type": "array",
        "prefixItems": [{"type": "string"}, {"type": "integer"}],
        "items": {"type": "boolean"}
    }));
    let (args, coercions) = coerced(&schema, json!({"v": ["1", "2", "true", "false"]}));
    assert_eq!(args, json!({"v": ["1", 2, true, false]}));
    let paths: Vec<_> = coercions.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(paths, ["v[1]", "v[2]", "v[3]"]);
}

#[test]
fn a_refd_definition() {
    let schema = json!({
        "type": "object",
        "properties": {"edits": {"type": "array", "items": {"$ref": "#/$defs/Edit"}}},
        "$defs": {"Edit": {
            "type": "object",
            "properties": {"old_string": {"type": "string"}, "count": {"type": "integer"}}
        }}
    });
    let (args, coercions) = coerced(
        &schema,
        json!({"edits": [{"old_string": "3"}, {"old_string": "3", "count": "3"}]}),
    );
    assert_eq!(
        args,
        json!({"edits": [{"old_string": "3"}, {"old_string": "3", "count": 3}]})
    );
    assert_eq!(coercions, [c("edits[1].count", r#""3""#, "3")]);
}

#[test]
fn a_ref_cycle_ends() {
    let schema = json!({
        "$defs": {
            "a": {"$ref": "#/$defs/b"},
            "b": {"allOf": [{"$ref": "#/$defs/a"}, {"type": "integer"}]},
            "tree": {"type": "object", "properties": {
                "n": {"type": "integer"},
                "kids": {"type": "array", "items": {"$ref": "#/$defs/tree"}}
            }}
        },
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/a"}, "t": {"$ref": "#/$defs/tree"}}
    });
    let (args, coercions) = coerced(
        &schema,
        json!({"x": "1", "t": {"n": "1", "kids": [{"n": "2", "kids": "[{\"n\": \"3\"}]"}]}}),
    );
    assert_eq!(
        args,
        json!({"x": 1, "t": {"n": 1, "kids": [{"n": 2, "kids": [{"n": 3}]}]}})
    );
    assert_eq!(coercions.len(), 5);
}

#[tokio::test]
async fn empty_text_as_whole_args_means_an_empty_object() {
    let result = run(json!({"type": "object"}), "").await;
    assert_eq!(result.outcome, Outcome::Success);
    assert_eq!(result.text(), "{}");
    let result = run(json!({"type": "object", "required": ["a"]}), "").await;
    assert_eq!(
        result.text(),
        "InputValidationError: echo failed due to the following issue(s):\n\
         The required parameter `a` is missing"
    );
}

#[tokio::test]
async fn too_deep_after_coercion_is_reported_like_malformed_json() {
    // At depth 2, a string spelling 127 nested arrays would reach depth 129.
    let deep = format!("{}1{}", "[".repeat(127), "]".repeat(127));
    let schema = with_v(json!({"type": "array", "items": {"type": "array"}}));
    let result = run(schema.clone(), json!({ "v": [deep] })).await;
    assert_eq!(result.outcome, Outcome::Failed);
    assert_eq!(
        result.text(),
        "tool argument validation failed: echo received malformed JSON arguments: \
         arguments are nested deeper than 128 levels"
    );
    // One level less fits.
    let fits = format!("{}1{}", "[".repeat(126), "]".repeat(126));
    let result = run(schema, json!({ "v": [fits] })).await;
    assert_eq!(result.outcome, Outcome::Success, "{}", result.text());
    assert_eq!(result.coercions.len(), 1);
}

#[tokio::test]
async fn end_event_lists_coercions_and_start_keeps_the_original() {
    let (sink, mut events) = EventSink::channel();
    let schema = json!({"type": "object", "properties": {
        "edits": {"type": "array", "items": {"type": "object", "properties": {
            "old_string": {"type": "integer"}
        }}}
    }});
    let raw = r#"{"edits": [{"old_string": "1"}, {"old_string": "3"}]}"#;
    let result = pipeline(schema, sink)
        .service()
        .oneshot(Call::new("c1", "echo", raw))
        .await
        .expect("the pipeline never errs");
    assert_eq!(result.outcome, Outcome::Success);
    assert_eq!(
        result.text(),
        r#"{"edits":[{"old_string":1},{"old_string":3}]}"#
    );
    let expected = vec![
        c("edits[0].old_string", r#""1""#, "1"),
        c("edits[1].old_string", r#""3""#, "3"),
    ];
    assert_eq!(result.coercions, expected);

    let mut start_args = None;
    let mut end_coercions = None;
    while let Ok(event) = events.try_recv() {
        match event {
            Event::ToolExecStart { args, .. } => start_args = Some(args),
            Event::ToolExecEnd { coercions, .. } => end_coercions = Some(coercions),
            _ => {}
        }
    }
    assert_eq!(start_args, Some(Value::from(raw)));
    assert_eq!(end_coercions.as_ref(), Some(&expected));
    // On the wire, exactly as the spec shows it.
    let wire = serde_json::to_value(&expected[1]).expect("serializes");
    assert_eq!(
        wire,
        json!({"path": "edits[1].old_string", "from": "\"3\"", "to": "3"})
    );
}

#[tokio::test]
async fn start_keeps_original_value_args() {
    let (sink, mut events) = EventSink::channel();
    let original = json!({"v": "5"});
    let result = pipeline(with_v(json!({"type": "integer"})), sink)
        .service()
        .oneshot(Call::new("c1", "echo", original.clone()))
        .await
        .expect("the pipeline never errs");
    assert_eq!(result.text(), r#"{"v":5}"#);
    let start = events.try_recv().expect("a start event");
    assert!(matches!(start, Event::ToolExecStart { args, .. } if args == original));
}
