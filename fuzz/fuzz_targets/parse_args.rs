//! Raw argument text, as a model sends it, through parse, coerce and the
//! schema check for the kinds of schema the built-in tools use.

#![no_main]

use std::sync::{Arc, LazyLock};

use agentcore_stages::coerce::parse_and_coerce;
use agentcore_stages::validate::schema_issues;
use agentcore_stages::{
    BoxFuture, CallContext, GatedArgs, RawArgs, Tool, ToolError, ToolOutput, ToolRegistry,
};
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};

struct Schema {
    name: &'static str,
    schema: Value,
}

impl Tool for Schema {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "A schema under fuzzing."
    }
    fn schema(&self) -> &Value {
        &self.schema
    }
    fn execute<'a>(
        &'a self,
        _args: GatedArgs,
        _cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async { Ok(ToolOutput::text("")) })
    }
}

/// Schemas shaped like the built-in tools': objects of strings, integers,
/// booleans and arrays of objects, `additionalProperties: false`, `required`.
static REGISTRY: LazyLock<ToolRegistry> = LazyLock::new(|| {
    let tools = [
        (
            "read",
            json!({
                "type": "object",
                "properties": {
                    "file_path": {"type": "string"},
                    "offset": {"type": "integer", "minimum": 0},
                    "limit": {"type": "integer", "minimum": 1}
                },
                "required": ["file_path"],
                "additionalProperties": false
            }),
        ),
        (
            "edit",
            json!({
                "type": "object",
                "properties": {
                    "file_path": {"type": "string"},
                    "edits": {"type": "array", "minItems": 1, "items": {
                        "type": "object",
                        "properties": {
                            "old_string": {"type": "string"},
                            "new_string": {"type": "string"},
                            "replace_all": {"type": "boolean"}
                        },
                        "required": ["old_string", "new_string"],
                        "additionalProperties": false
                    }}
                },
                "required": ["file_path", "edits"],
                "additionalProperties": false
            }),
        ),
        (
            "bash",
            json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string"},
                    "timeout": {"type": ["integer", "null"]},
                    "background": {"type": "boolean"},
                    "mode": {"enum": ["a", "b"]}
                },
                "required": ["command"],
                "additionalProperties": false
            }),
        ),
    ];
    let mut registry = ToolRegistry::new();
    for (name, schema) in tools {
        registry
            .register(Arc::new(Schema { name, schema }))
            .expect("the fuzz schemas compile");
    }
    registry
});

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for tool in REGISTRY.iter() {
        let raw = RawArgs::Text(text.to_owned());
        let Ok((args, coercions)) = parse_and_coerce(tool, &raw) else {
            continue;
        };
        assert!(args.is_object());
        // The coerced args are a fixed point.
        let (again, more) = parse_and_coerce(tool, &RawArgs::Value(args.clone()))
            .expect("coerced args parse and coerce again");
        assert!(more.is_empty(), "coercing twice differs: {more:?}");
        assert_eq!(again, args);
        let message = schema_issues(tool.name(), tool.validator(), &args);
        if tool.validator().is_valid(&args) {
            assert!(message.is_none());
        } else {
            let message = message.expect("an invalid call has a message");
            assert!(message.starts_with("InputValidationError: "));
        }
        let _ = coercions;
    }
});
