//! The `tools/list` entries: each tool's name, description and schema, with
//! annotations from [`Tool::always_read_only`](agentcore_stages::Tool::always_read_only).

use std::sync::Arc;

use agentcore_stages::ToolRegistry;
use rmcp::model::{Tool, ToolAnnotations};
use serde_json::{Map, Value};

/// The MCP tool definitions for every tool in `registry`, in the
/// registry's order (by name).
///
/// A tool that says every call of it is read-only
/// ([`Tool::always_read_only`](agentcore_stages::Tool::always_read_only))
/// gets `readOnlyHint: true`; any other gets `readOnlyHint: false,
/// destructiveHint: true` (a client may skip asking for a read-only tool,
/// so nothing is guessed). The title is the tool's label, when it has one.
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
    // A capability method that panics counts as not read-only (fail closed),
    // as in the scheduler.
    let read_only =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| tool.always_read_only()))
            .unwrap_or(false);
    let annotations = ToolAnnotations::from_raw(
        tool.label().map(str::to_owned),
        Some(read_only),
        (!read_only).then_some(true),
        None,
        None,
    );
    let (description, schema) = agentcore_stages::listing(tool);
    let schema = match schema.as_ref() {
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
        description.into_owned(),
        Arc::new(schema),
    )
    .with_annotations(annotations)
}

#[cfg(test)]
mod tests {
    use agentcore_stages::{CallContext, ToolError, ToolOutput, ToolRegistry, TypedTool};
    use schemars::JsonSchema;
    use serde::Deserialize;

    use super::*;

    /// A git tool: read-only for `status`, not for `push`.
    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct GitArgs {
        action: Action,
    }

    #[derive(Deserialize, JsonSchema, PartialEq)]
    #[serde(rename_all = "lowercase")]
    enum Action {
        Status,
        Push,
    }

    struct Git;

    impl TypedTool for Git {
        type Args = GitArgs;
        fn name(&self) -> &str {
            "git"
        }
        fn description(&self) -> &str {
            "Runs git."
        }
        async fn execute(
            &self,
            _args: GitArgs,
            _cx: &CallContext,
        ) -> Result<ToolOutput, ToolError> {
            Ok(ToolOutput::text("ok"))
        }
        fn read_only(&self, args: &GitArgs) -> bool {
            args.action == Action::Status
        }
    }

    fn hint(registry: &ToolRegistry, name: &str) -> (Option<bool>, Option<bool>) {
        let tools = tool_definitions(registry);
        let tool = tools.iter().find(|t| t.name == name).expect("listed");
        let annotations = tool.annotations.as_ref().expect("annotations");
        (annotations.read_only_hint, annotations.destructive_hint)
    }

    #[test]
    fn a_tool_read_only_for_some_arguments_only_is_not_hinted_read_only() {
        let registry = ToolRegistry::new().with(Git.into_dyn()).unwrap();
        assert_eq!(hint(&registry, "git"), (Some(false), Some(true)));
    }

    #[tokio::test]
    async fn the_read_side_built_ins_are_hinted_read_only_and_the_others_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let session =
            crate::session::Session::start(crate::session::SessionConfig::new(dir.path())).unwrap();
        for name in ["read", "glob", "grep", "ls"] {
            assert_eq!(hint(session.registry(), name), (Some(true), None), "{name}");
        }
        for name in ["edit", "multi_edit", "write", "bash"] {
            assert_eq!(
                hint(session.registry(), name),
                (Some(false), Some(true)),
                "{name}"
            );
        }
    }
}
