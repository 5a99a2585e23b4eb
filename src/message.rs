//! Tool-result messages and the provider shapes: Anthropic Messages,
//! OpenAI Chat Completions and MCP.

use agentcore_stages::RawArgs;

/// One tool call proposed by the model, as a harness receives it.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    /// The call's id, as the model gave it.
    pub id: String,
    /// The tool name.
    pub name: String,
    /// The arguments: a JSON value, or JSON text.
    pub args: RawArgs,
}

impl ToolCall {
    /// A call from its parts.
    pub fn new(id: impl Into<String>, name: impl Into<String>, args: impl Into<RawArgs>) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            args: args.into(),
        }
    }
}
