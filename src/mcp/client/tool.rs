//! [`RemoteTool`]: one tool of an external MCP server, as a [`Tool`] of the
//! session's registry.

use std::collections::BTreeSet;
use std::sync::Arc;

use agentcore_stages::{
    BoxFuture, CallContext, Content, Extensions, GatedArgs, Tool, ToolError, ToolOutput,
};
use serde_json::{Map, Value};

use super::MountFailure;
use super::config::sanitize;
use super::connection::{CallFailure, Connection};
use super::{cap, content};
use crate::access::{Access, Capability, Containment, Permissions};

/// A tool of an external MCP server, named `mcp__SERVER__TOOL`.
///
/// - Its schema is the server's input schema as given, so arguments are
///   coerced and validated against it before the server sees them.
/// - `readOnlyHint: true` makes it read-only and concurrency-safe (its
///   calls run side by side, and the approval engine judges them as reads
///   of nothing: allowed in every mode unless a rule names the tool);
///   anything else makes it exclusive and judged like a command (asks in
///   the `default` mode unless a rule allows it). The gate's preview names
///   the server, the tool, whether the server marks it destructive
///   (`destructiveHint`, true when absent) and the arguments.
/// - `isError: true` ends the call Failed with the server's content; a
///   server that died, hung (no answer and no progress for its
///   `call_timeout_secs`) or refused the request fails the call with a
///   message naming the server and the cause (the tail of its stderr).
/// - Progress notifications become the call's progress events; a cancelled
///   call sends `notifications/cancelled`.
pub struct RemoteTool {
    name: String,
    remote: String,
    description: String,
    schema: Value,
    label: Option<String>,
    read_only: bool,
    destructive: bool,
    connection: Arc<Connection>,
    extensions: Extensions,
}

impl std::fmt::Debug for RemoteTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteTool")
            .field("name", &self.name)
            .field("server", &self.connection.name())
            .finish_non_exhaustive()
    }
}

impl RemoteTool {
    /// The tool `tool` of the server behind `connection`.
    pub fn new(connection: Arc<Connection>, tool: &rmcp::model::Tool) -> Self {
        let server = connection.name().to_owned();
        let name = format!(
            "{}{}",
            connection.config().tool_prefix(),
            sanitize(&tool.name)
        );
        let annotations = tool.annotations.as_ref();
        let read_only = annotations.and_then(|a| a.read_only_hint) == Some(true);
        // MCP's default for destructiveHint is true.
        let destructive = !read_only && annotations.and_then(|a| a.destructive_hint) != Some(false);
        let description = match tool.description.as_deref().map(str::trim) {
            Some(d) if !d.is_empty() => d.to_owned(),
            _ => format!("The tool {:?} of the MCP server {server:?}.", tool.name),
        };
        let label = tool
            .title
            .clone()
            .or_else(|| annotations.and_then(|a| a.title.clone()));
        let permissions = Permissions::new(move |_args| {
            if read_only {
                Access::nothing()
            } else {
                Access {
                    capability: Capability::Exec,
                    paths: Vec::new(),
                    command: None,
                    described: true,
                    containment: Containment::Unconfined,
                    terminal: false,
                }
            }
        });
        Self {
            name,
            remote: tool.name.to_string(),
            description,
            schema: Value::Object((*tool.input_schema).clone()),
            label,
            read_only,
            destructive,
            connection,
            extensions: permissions.into_extensions(),
        }
    }

    /// The server the tool belongs to.
    pub fn connection(&self) -> &Arc<Connection> {
        &self.connection
    }

    /// The tool's name on its server.
    pub fn remote_name(&self) -> &str {
        &self.remote
    }
}

impl Tool for RemoteTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn schema(&self) -> &Value {
        &self.schema
    }

    fn label(&self) -> Option<&str> {
        self.label.as_deref()
    }

    fn execute<'a>(
        &'a self,
        args: GatedArgs,
        cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let arguments = match args.into_value() {
                Value::Object(map) => map,
                // The schema check lets only objects through for an object
                // schema; anything else is sent as no arguments.
                _ => Map::new(),
            };
            match self.connection.call(&self.remote, arguments, cx).await {
                Ok(result) => {
                    let blocks = cap::bounded(
                        content::blocks(
                            &serialized(&result.content),
                            result.structured_content.as_ref(),
                        ),
                        cx.call_id(),
                        self.connection.results_dir(),
                    );
                    if result.is_error == Some(true) {
                        Err(ToolError::with_content(blocks))
                    } else {
                        Ok(ToolOutput::blocks(blocks))
                    }
                }
                Err(CallFailure::Cancelled) => {
                    Err(ToolError::cancelled(vec![Content::text(format!(
                        "cancelled: MCP server {:?} was told to stop the call (notifications/cancelled)",
                        self.connection.name()
                    ))]))
                }
                Err(CallFailure::Failed(message)) => Err(ToolError::new(message)),
            }
        })
    }

    fn preview<'a>(
        &'a self,
        args: &'a Value,
        _cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<Option<String>, ToolError>> {
        Box::pin(async move {
            // A read-only tool is allowed like a read: nothing to show.
            if self.read_only {
                return Ok(None);
            }
            let marks = if self.destructive {
                "destructive"
            } else {
                "not read-only, not destructive"
            };
            let shown = serde_json::to_string_pretty(args).unwrap_or_else(|_| args.to_string());
            Ok(Some(format!(
                "MCP server {:?}, tool {:?} (the server marks it {marks})\narguments: {shown}",
                self.connection.name(),
                self.remote
            )))
        })
    }

    fn read_only(&self, _args: &Value) -> bool {
        self.read_only
    }

    fn always_read_only(&self) -> bool {
        self.read_only
    }

    fn concurrency_safe(&self, _args: &Value) -> Option<bool> {
        Some(self.read_only)
    }

    fn activity(&self, _args: &Value) -> Option<String> {
        Some(format!("{}: {}", self.connection.name(), self.remote))
    }

    fn observes_cancellation(&self) -> bool {
        true
    }

    fn summary_only(&self) -> Option<String> {
        self.connection
            .listed_by_summary()
            .then(|| summary_line(&self.description, &self.name))
    }

    fn extensions(&self) -> &Extensions {
        &self.extensions
    }
}

/// Characters of a description's first line a summary keeps.
const SUMMARY_CHARS: usize = 160;

/// The one line a tool listed by summary only is shown: the first line of
/// its description (cut at [`SUMMARY_CHARS`]) and how to get the rest.
fn summary_line(description: &str, name: &str) -> String {
    let first = description
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("(no description)");
    let mut line: String = first.chars().take(SUMMARY_CHARS).collect();
    if first.chars().count() > SUMMARY_CHARS {
        line.push('…');
    }
    format!(
        "{line} (Listed by name only: call tool_search with \"select:{name}\" for its full definition before calling it.)"
    )
}

/// The content blocks as their JSON wire form.
fn serialized<T: serde::Serialize>(content: &[T]) -> Vec<Value> {
    content
        .iter()
        .filter_map(|block| serde_json::to_value(block).ok())
        .collect()
}

/// The tools of `connection`, one [`RemoteTool`] each; two tools whose
/// names are equal once sanitised keep the first.
pub(crate) fn remote_tools(
    connection: &Arc<Connection>,
    tools: Vec<rmcp::model::Tool>,
) -> (Vec<Arc<dyn Tool>>, Vec<MountFailure>) {
    let mut seen = BTreeSet::new();
    let mut mounted: Vec<Arc<dyn Tool>> = Vec::new();
    let mut failures = Vec::new();
    for tool in &tools {
        let remote = RemoteTool::new(connection.clone(), tool);
        if !seen.insert(remote.name.clone()) {
            failures.push(MountFailure {
                server: connection.name().to_owned(),
                message: format!(
                    "the tool {:?} of MCP server {:?} is left out: its name becomes {:?}, like another tool's of that server",
                    tool.name,
                    connection.name(),
                    remote.name
                ),
            });
            continue;
        }
        mounted.push(Arc::new(remote));
    }
    (mounted, failures)
}
