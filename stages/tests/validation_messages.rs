//! The schema-validation message of `docs/semantics.md` §4, line by line.

use agentcore_stages::validate::{compile_schema, schema_issues};
use serde_json::{Value, json};

fn message(schema: Value, args: Value) -> Option<String> {
    let validator = compile_schema(&schema).expect("schema compiles");
    schema_issues("Edit", &validator, &args)
}

fn lines(schema: Value, args: Value) -> Vec<String> {
    let text = message(schema, args).expect("invalid args give a message");
    let mut lines = text.lines().map(str::to_owned);
    assert_eq!(
        lines.next().as_deref(),
        Some("InputValidationError: Edit failed due to the following issue(s):")
    );
    lines.collect()
}

fn edit_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "file_path": {"type": "string"},
            "limit": {"type": "integer"},
            "mode": {"enum": ["a", "b"]},
            "edits": {"type": "array", "items": {
                "type": "object",
                "properties": {
                    "old_string": {"type": "string"},
                    "new_string": {"type": "string"}
                },
                "required": ["old_string", "new_string"],
                "additionalProperties": false
            }},
            "offset": {"type": ["integer", "null"]},
            "name": {"type": "string", "maxLength": 3}
        },
        "required": ["file_path"],
        "additionalProperties": false
    })
}

#[test]
fn valid_args_give_no_message() {
    assert_eq!(message(edit_schema(), json!({"file_path": "a"})), None);
}

#[test]
fn the_example_of_the_spec() {
    let got = message(
        edit_schema(),
        json!({"limit": "ten", "mode": "c", "colour": "red"}),
    );
    assert_eq!(
        got.as_deref(),
        Some(
            "InputValidationError: Edit failed due to the following issue(s):\n\
             The required parameter `file_path` is missing\n\
             The parameter `limit` type is expected as `integer` but provided as `string`\n\
             The parameter `mode` value must be one of [\"a\",\"b\"] but provided as \"c\"\n\
             The parameter `colour` is not allowed"
        )
    );
}

#[test]
fn groups_come_in_order_then_paths_within_a_group() {
    let got = lines(
        edit_schema(),
        json!({
            "name": "toolong",
            "zeta": 1,
            "alpha": 2,
            "mode": "z",
            "offset": "x",
            "limit": true,
            "edits": [{"old_string": 1, "new_string": "n"}, {}]
        }),
    );
    assert_eq!(
        got,
        [
            "The required parameter `edits[1].new_string` is missing",
            "The required parameter `edits[1].old_string` is missing",
            "The required parameter `file_path` is missing",
            "The parameter `edits[0].old_string` type is expected as `string` but provided as `integer`",
            "The parameter `limit` type is expected as `integer` but provided as `boolean`",
            "The parameter `offset` type is expected as `integer | null` but provided as `string`",
            "The parameter `mode` value must be one of [\"a\",\"b\"] but provided as \"z\"",
            "The parameter `alpha` is not allowed",
            "The parameter `zeta` is not allowed",
            "The parameter `name` \"toolong\" is longer than 3 characters",
        ]
    );
}

#[test]
fn indices_sort_as_numbers() {
    let schema = json!({"type": "object", "properties": {
        "xs": {"type": "array", "items": {"type": "integer"}}
    }});
    let mut xs = vec![json!(0); 11];
    xs[2] = json!("a");
    xs[10] = json!("b");
    let got = lines(schema, json!({"xs": xs}));
    assert_eq!(
        got,
        [
            "The parameter `xs[2]` type is expected as `integer` but provided as `string`",
            "The parameter `xs[10]` type is expected as `integer` but provided as `string`",
        ]
    );
}

#[test]
fn nested_missing_and_not_allowed_are_named_by_full_path() {
    let got = lines(
        edit_schema(),
        json!({"file_path": "f", "edits": [{"old_string": "o", "new_string": "n", "extra": 1}, {"new_string": "n"}]}),
    );
    assert_eq!(
        got,
        [
            "The required parameter `edits[1].old_string` is missing",
            "The parameter `edits[0].extra` is not allowed",
        ]
    );
}

#[test]
fn type_sets_are_written_with_bars() {
    let schema = json!({"type": "object", "properties": {
        "a": {"type": ["null", "integer"]},
        "b": {"type": ["string", "boolean", "number"]}
    }});
    let got = lines(schema, json!({"a": 1.5, "b": {}}));
    assert_eq!(
        got,
        [
            "The parameter `a` type is expected as `integer | null` but provided as `number`",
            "The parameter `b` type is expected as `boolean | number | string` but provided as `object`",
        ]
    );
}

#[test]
fn provided_types_are_json_type_names() {
    let schema = json!({"type": "object", "properties": {
        "s": {"type": "string"}
    }});
    for (value, name) in [
        (json!(null), "null"),
        (json!(true), "boolean"),
        (json!(3), "integer"),
        (json!(3.5), "number"),
        (json!([]), "array"),
        (json!({}), "object"),
    ] {
        let got = lines(schema.clone(), json!({ "s": value }));
        assert_eq!(
            got,
            [format!(
                "The parameter `s` type is expected as `string` but provided as `{name}`"
            )]
        );
    }
}

#[test]
fn other_issues_carry_the_validator_message() {
    let schema = json!({"type": "object", "properties": {
        "n": {"type": "integer", "minimum": 1},
        "p": {"type": "string", "pattern": "^a"}
    }});
    let got = lines(schema, json!({"n": 0, "p": "b"}));
    assert_eq!(
        got,
        [
            "The parameter `n` 0 is less than the minimum of 1",
            "The parameter `p` \"b\" does not match \"^a\"",
        ]
    );
}

#[test]
fn issues_of_the_whole_arguments() {
    let schema = json!({"type": "object", "minProperties": 2});
    let got = lines(schema, json!({"a": 1}));
    assert_eq!(got, ["The arguments {\"a\":1} has less than 2 properties"]);
}

#[test]
fn a_false_property_schema_is_not_allowed() {
    let schema = json!({"type": "object", "properties": {"colour": false}});
    let got = lines(schema, json!({"colour": "red"}));
    assert_eq!(got, ["The parameter `colour` is not allowed"]);
}

#[test]
fn unevaluated_properties_are_not_allowed() {
    let schema = json!({
        "type": "object",
        "allOf": [{"properties": {"a": true}}],
        "unevaluatedProperties": false
    });
    let got = lines(schema, json!({"a": 1, "b": 2}));
    assert_eq!(got, ["The parameter `b` is not allowed"]);
}

#[test]
fn pattern_properties_beside_additional_properties() {
    let schema = json!({
        "type": "object",
        "patternProperties": {"^x_": {"type": "integer"}},
        "additionalProperties": false
    });
    let got = lines(schema, json!({"x_a": "s", "y": 1}));
    assert_eq!(
        got,
        [
            "The parameter `x_a` type is expected as `integer` but provided as `string`",
            "The parameter `y` is not allowed",
        ]
    );
}
