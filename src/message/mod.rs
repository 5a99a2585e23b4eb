//! Tool-result messages and the provider shapes: Anthropic Messages,
//! OpenAI Chat Completions, the OpenAI Responses API and MCP.
//!
//! A turn ends with one result per call (a [`ToolResult`], or the
//! [`ToolResultMessage`] built from it). The modules here, one file per
//! provider shape, turn those into what each API expects next, parse an
//! assistant message's tool calls into [`ToolCall`]s, and write the
//! registry's tools for a request's `tools` (`tool_definitions`, the
//! tools the model sees, in the registry's order):
//!
//! - [`anthropic`]: `tool_result` content blocks, wrapped in one `user`
//!   message; `tool_use` blocks parsed from an assistant message or a
//!   whole Messages response.
//! - [`openai`]: `role: "tool"` messages (images as a text note, the images
//!   themselves in a following `user` message); `tool_calls` parsed from an
//!   assistant message or a whole `chat.completion`, arguments kept as
//!   JSON text.
//! - [`openai::responses`]: `function_call` items parsed from a response's
//!   `output`, `function_call_output` items answering them, flat tool
//!   definitions.
//! - [`mcp`]: a `CallToolResult` with `isError` (the MCP server's tool
//!   definitions are [`crate::mcp::tool_definitions`]).
//!
//! Everything is plain [`serde_json::Value`], so a harness can put it straight
//! into a request body.
//!
//! ```
//! use agentcore::message::{anthropic, openai};
//! use agentcore::ToolRegistry;
//! use serde_json::json;
//!
//! // The request's `tools`, from the registry the pipeline runs.
//! let registry = ToolRegistry::new();
//! let tools = anthropic::tool_definitions(&registry);
//! # assert!(tools.is_empty());
//! # let _ = openai::tool_definitions(&registry);
//!
//! let reply = json!({
//!     "role": "assistant",
//!     "content": [
//!         {"type": "text", "text": "Let me check."},
//!         {"type": "tool_use", "id": "toolu_01", "name": "get_weather",
//!          "input": {"location": "Paris"}}
//!     ]
//! });
//! let calls = anthropic::parse_tool_calls(&reply)?;
//! assert_eq!(calls[0].name, "get_weather");
//!
//! let reply = json!({
//!     "role": "assistant",
//!     "content": null,
//!     "tool_calls": [{"id": "call_abc123", "type": "function",
//!         "function": {"name": "get_weather", "arguments": "{\"location\":\"Paris\"}"}}]
//! });
//! let calls = openai::parse_tool_calls(&reply)?;
//! assert_eq!(calls[0].call_id, "call_abc123");
//! # Ok::<(), agentcore::message::MessageError>(())
//! ```

pub mod anthropic;
mod error;
pub mod jsonl;
#[cfg(any(feature = "mcp-server", feature = "mcp-client"))]
pub(crate) mod jsonrpc;
pub mod line;
pub mod mcp;
pub mod openai;
mod parse;

use agentcore_stages::{
    Call, Content, RawArgs, ToolResult, ToolResultMessage, ToolResultSummary, Unvalidated,
};

pub use error::MessageError;
#[cfg(feature = "mcp-server")]
pub(crate) use parse::kind as json_kind;

/// One tool call proposed by the model, as a harness receives it.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    /// The call's id, as the model gave it.
    pub call_id: String,
    /// The tool name.
    pub name: String,
    /// The arguments: a JSON value, or JSON text.
    pub args: RawArgs,
}

impl ToolCall {
    /// A call from its parts.
    pub fn new(
        call_id: impl Into<String>,
        name: impl Into<String>,
        args: impl Into<RawArgs>,
    ) -> Self {
        Self {
            call_id: call_id.into(),
            name: name.into(),
            args: args.into(),
        }
    }
}

impl From<ToolCall> for Call<Unvalidated> {
    fn from(call: ToolCall) -> Self {
        Call::new(call.call_id, call.name, call.args)
    }
}

/// A result as every provider shape needs it: the id of the call it answers,
/// its content blocks, and whether it failed.
///
/// Implemented for [`ToolResult`], [`ToolResultMessage`],
/// [`ToolResultSummary`] and references to them, so the conversions accept
/// whichever the harness holds.
pub trait ToolAnswer {
    /// The id of the call this result answers.
    fn call_id(&self) -> &str;
    /// The result's content blocks, in order.
    fn content(&self) -> &[Content];
    /// Whether the call failed in any way.
    fn is_error(&self) -> bool;
}

impl ToolAnswer for ToolResult {
    fn call_id(&self) -> &str {
        &self.call_id
    }
    fn content(&self) -> &[Content] {
        &self.content
    }
    fn is_error(&self) -> bool {
        self.outcome.is_error()
    }
}

impl ToolAnswer for ToolResultMessage {
    fn call_id(&self) -> &str {
        &self.call_id
    }
    fn content(&self) -> &[Content] {
        &self.content
    }
    fn is_error(&self) -> bool {
        self.is_error
    }
}

impl ToolAnswer for ToolResultSummary {
    fn call_id(&self) -> &str {
        &self.call_id
    }
    fn content(&self) -> &[Content] {
        &self.content
    }
    fn is_error(&self) -> bool {
        self.is_error
    }
}

impl<T: ToolAnswer + ?Sized> ToolAnswer for &T {
    fn call_id(&self) -> &str {
        (**self).call_id()
    }
    fn content(&self) -> &[Content] {
        (**self).content()
    }
    fn is_error(&self) -> bool {
        (**self).is_error()
    }
}

#[cfg(test)]
pub(crate) mod tests {

    use agentcore_stages::Outcome;
    use serde_json::json;

    use super::*;

    /// A result of tool `t` answering call `id`.
    pub(crate) fn result(id: &str, outcome: Outcome, content: Vec<Content>) -> ToolResult {
        ToolResult::new(id, "t", outcome, content)
    }

    #[test]
    fn every_non_success_outcome_is_an_error_in_every_shape() {
        for outcome in [
            Outcome::Failed,
            Outcome::Denied,
            Outcome::Cancelled,
            Outcome::Disabled,
            Outcome::Skipped,
        ] {
            let r = result("c", outcome, vec![Content::text("no")]);
            assert_eq!(anthropic::tool_result_block(&r)["is_error"], true);
            assert_eq!(mcp::call_tool_result(&r)["isError"], true);
        }
        let ok = result("c", Outcome::Success, vec![]);
        assert_eq!(anthropic::tool_result_block(&ok)["is_error"], false);
        assert_eq!(mcp::call_tool_result(&ok)["isError"], false);
    }

    #[test]
    fn answer_is_the_same_for_result_message_and_summary() {
        let r = result("c9", Outcome::Denied, vec![Content::text("x")]);
        let m = ToolResultMessage::from_result(&r);
        let s = ToolResultSummary::from_result(&r);
        let block = anthropic::tool_result_block(&r);
        assert_eq!(anthropic::tool_result_block(&m), block);
        assert_eq!(anthropic::tool_result_block(&s), block);
        assert_eq!(anthropic::tool_result_block(&&m), block);
    }

    #[test]
    fn long_echoed_values_are_shortened() {
        let role = "x".repeat(10_000);
        let err = anthropic::parse_tool_calls(&json!({"role": role, "content": ""})).unwrap_err();
        let MessageError::WrongRole { found } = &err else {
            panic!("{err:?}")
        };
        assert_eq!(found.chars().count(), parse::ECHO_LIMIT + 1);
        assert!(err.to_string().len() < 200);
    }

    #[test]
    fn tool_call_converts_into_an_unvalidated_call() {
        let call: Call<Unvalidated> = ToolCall::new("c1", "read", json!({"path": "a"})).into();
        assert_eq!(call.call_id(), "c1");
        assert_eq!(call.tool_name(), "read");
        assert_eq!(call.state().args(), &RawArgs::Value(json!({"path": "a"})));
    }
}
