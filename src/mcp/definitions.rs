//! The `tools/list` entries: each tool's name, description and schema, with
//! annotations from its capabilities at the smallest arguments its schema
//! accepts ([`sample_args`]).

use std::sync::Arc;

use agentcore_stages::ToolRegistry;
use rmcp::model::{Tool, ToolAnnotations};
use serde_json::{Map, Value};

/// The MCP tool definitions for every tool in `registry`, in registration
/// order.
///
/// A tool that is read-only with the smallest arguments its schema accepts
/// gets `readOnlyHint: true`; any other gets `readOnlyHint: false,
/// destructiveHint: true`. The title is the tool's label, when it has one.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use agentcore::session::{Session, SessionConfig};
///
/// let dir = tempfile::tempdir().unwrap();
/// let session = Session::start(SessionConfig::new(dir.path())).unwrap();
/// let tools = agentcore::mcp::tool_definitions(session.registry());
/// let read = tools.iter().find(|t| t.name == "read").unwrap();
/// assert_eq!(read.annotations.as_ref().unwrap().read_only_hint, Some(true));
/// # }
/// ```
pub fn tool_definitions(registry: &ToolRegistry) -> Vec<Tool> {
    registry
        .iter()
        .map(|registered| definition(registered.tool().as_ref()))
        .collect()
}

fn definition(tool: &dyn agentcore_stages::Tool) -> Tool {
    let defaults = sample_args(tool.schema());
    // A capability method that panics counts as not read-only (fail closed),
    // as in the scheduler.
    let read_only =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| tool.read_only(&defaults)))
            .unwrap_or(false);
    let annotations = ToolAnnotations::from_raw(
        tool.label().map(str::to_owned),
        Some(read_only),
        (!read_only).then_some(true),
        None,
        None,
    );
    let schema = match tool.schema() {
        Value::Object(schema) => schema.clone(),
        // Registered schemas compile, but MCP needs an object: fall back to
        // "any object" rather than fail the listing.
        _ => {
            let mut any = Map::new();
            any.insert("type".into(), "object".into());
            any
        }
    };
    Tool::new(
        tool.name().to_owned(),
        tool.description().to_owned(),
        Arc::new(schema),
    )
    .with_annotations(annotations)
}

/// The smallest arguments `schema` accepts, for asking a tool's
/// capabilities without a call: `{}` with each required property at an
/// empty value of its type (`""`, `0`, `false`, `[]`, `{}`, or the first of
/// its `enum`). A typed tool answers its capability methods only for
/// arguments that deserialize (`{}` lacks its required fields, and it
/// would answer "not read-only" for any tool); a tool that ignores its
/// arguments answers as for `{}`.
fn sample_args(schema: &Value) -> Value {
    let mut args = Map::new();
    let required = schema.get("required").and_then(Value::as_array);
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        let property = &schema["properties"][name];
        args.insert(name.to_owned(), empty_value(property));
    }
    Value::Object(args)
}

/// An empty value of the type `property` declares.
fn empty_value(property: &Value) -> Value {
    if let Some(first) = property.get("enum").and_then(|e| e.get(0)) {
        return first.clone();
    }
    let declared = match property.get("type") {
        Some(Value::Array(types)) => types.iter().find(|t| *t != "null"),
        other => other,
    };
    match declared.and_then(Value::as_str) {
        Some("string") => Value::from(""),
        Some("integer" | "number") => Value::from(0),
        Some("boolean") => Value::from(false),
        Some("array") => Value::Array(Vec::new()),
        Some("object") => Value::Object(Map::new()),
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn sample_args_fill_the_required_properties_only() {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "mode": {"type": "string", "enum": ["fast", "careful"]},
                "count": {"type": ["integer", "null"]},
                "flags": {"type": "array"},
                "limit": {"type": "integer"}
            },
            "required": ["path", "mode", "count", "flags"]
        });
        assert_eq!(
            sample_args(&schema),
            json!({"path": "", "mode": "fast", "count": 0, "flags": []})
        );
        assert_eq!(sample_args(&json!({"type": "object"})), json!({}));
        assert_eq!(sample_args(&json!(true)), json!({}));
    }
}
