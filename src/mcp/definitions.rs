//! The `tools/list` entries: each tool's name, description and schema, with
//! annotations from its capabilities at default arguments (`{}`).

use std::sync::Arc;

use agentcore_stages::ToolRegistry;
use rmcp::model::{Tool, ToolAnnotations};
use serde_json::{Map, Value};

/// The MCP tool definitions for every tool in `registry`, in registration
/// order.
///
/// A tool that is read-only with default arguments gets
/// `readOnlyHint: true`; any other gets `readOnlyHint: false,
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
    let defaults = Value::Object(Map::new());
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
