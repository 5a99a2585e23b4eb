//! Parse + coerce + validate for an edit-like tool schema: valid args,
//! args that need coercion, and invalid args (the §4 message built).

use std::hint::black_box;
use std::sync::Arc;

use agentcore_stages::coerce::parse_and_coerce;
use agentcore_stages::validate::schema_issues;
use agentcore_stages::{
    BoxFuture, CallContext, GatedArgs, RawArgs, Tool, ToolError, ToolOutput, ToolRegistry,
};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

struct Edit {
    schema: Value,
}

impl Tool for Edit {
    fn name(&self) -> &str {
        "edit"
    }
    fn description(&self) -> &str {
        "Replaces strings in a file."
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

fn edit_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "file_path": {"type": "string", "description": "Absolute path."},
            "edits": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "properties": {
                        "old_string": {"type": "string"},
                        "new_string": {"type": "string"},
                        "replace_all": {"type": "boolean"},
                        "line_hint": {"type": ["integer", "null"]}
                    },
                    "required": ["old_string", "new_string"],
                    "additionalProperties": false
                }
            },
            "dry_run": {"type": "boolean"}
        },
        "required": ["file_path", "edits"],
        "additionalProperties": false
    })
}

const VALID: &str = r#"{"file_path": "/src/main.rs", "edits": [
    {"old_string": "fn main() {", "new_string": "fn main() -> Result<()> {"},
    {"old_string": "println!(\"hi\");", "new_string": "println!(\"hello\");", "replace_all": true},
    {"old_string": "}", "new_string": "    Ok(())\n}", "line_hint": 12}
], "dry_run": false}"#;

const COERCED: &str = r#"{"file_path": "/src/main.rs", "edits": "[{\"old_string\": \"fn main() {\", \"new_string\": \"fn main() -> Result<()> {\"}, {\"old_string\": \"println!(\\\"hi\\\");\", \"new_string\": \"println!(\\\"hello\\\");\", \"replace_all\": \"true\"}, {\"old_string\": \"}\", \"new_string\": \"    Ok(())\\n}\", \"line_hint\": \"12\"}]", "dry_run": "false"}"#;

const INVALID: &str = r#"{"edits": [
    {"old_string": 1, "new_string": "b", "colour": "red"},
    {"new_string": "c", "replace_all": "yes"}
], "dry_run": "maybe", "mode": "fast"}"#;

fn bench(c: &mut Criterion) {
    let registry = ToolRegistry::new()
        .with(Arc::new(Edit {
            schema: edit_schema(),
        }))
        .expect("the schema compiles");
    let tool = registry.get("edit").expect("registered");

    let run = |text: &str| {
        let raw = RawArgs::Text(text.to_owned());
        let (args, coercions) = parse_and_coerce(tool, &raw).expect("parses");
        let message = schema_issues(tool.name(), tool.validator(), &args);
        (coercions.len(), message)
    };
    // The three inputs are what their names say.
    assert_eq!(run(VALID), (0, None));
    let (n, message) = run(COERCED);
    assert!(n == 4 && message.is_none(), "{n} {message:?}");
    assert!(run(INVALID).1.is_some());

    let mut group = c.benchmark_group("parse_coerce_validate");
    for (name, text) in [("valid", VALID), ("coerced", COERCED), ("invalid", INVALID)] {
        group.bench_function(name, |b| b.iter(|| run(black_box(text))));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
