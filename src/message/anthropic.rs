//! Conversions for the Anthropic Messages API: tool definitions;
//! `tool_result` content blocks, wrapped in one `user` message; `tool_use`
//! blocks parsed from an assistant message.

use std::collections::HashSet;

use agentcore_stages::{Content, RawArgs, Tool, ToolRegistry};
use serde_json::{Map, Value, json};

use super::parse::{
    check_role, duplicate, non_empty, object, required, shorten, string, wrong_type,
};
use super::{MessageError, ToolAnswer, ToolCall};

/// A tool's entry in a request's `tools`:
/// `{"name":..,"description":..,"input_schema":{..}}`.
pub fn tool_definition(tool: &dyn Tool) -> Value {
    let (description, schema) = agentcore_stages::listing(tool);
    json!({
        "name": tool.name(),
        "description": description,
        "input_schema": schema,
    })
}

/// The entries of a request's `tools` for every tool in `registry`, in
/// the registry's order (by name, as [`ToolRegistry::iter`] gives them):
/// the tools the model sees, each as [`tool_definition`] writes it (the
/// same list as `agentcore tools --format anthropic`).
///
/// ```
/// use agentcore::message::anthropic;
/// use agentcore::session::{Session, SessionConfig};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let dir = tempfile::tempdir().unwrap();
/// let session = Session::start(SessionConfig::new(dir.path())).unwrap();
/// let tools = anthropic::tool_definitions(session.registry());
/// let read = tools.iter().find(|t| t["name"] == "read").unwrap();
/// assert!(read["input_schema"]["properties"]["file_path"].is_object());
/// # }
/// ```
pub fn tool_definitions(registry: &ToolRegistry) -> Vec<Value> {
    registry
        .iter()
        .map(|registered| tool_definition(registered.tool().as_ref()))
        .collect()
}

/// The `tool_result` content block answering one call:
/// `{"type":"tool_result","tool_use_id":..,"content":[..],"is_error":..}`.
///
/// Text blocks stay text, JSON blocks become text holding the serialized
/// JSON, images become `{"type":"image","source":{"type":"base64",..}}`.
/// Empty text blocks are left out, since the API refuses them.
pub fn tool_result_block<R: ToolAnswer + ?Sized>(result: &R) -> Value {
    let content: Vec<Value> = result.content().iter().filter_map(content_block).collect();
    json!({
        "type": "tool_result",
        "tool_use_id": result.call_id(),
        "content": content,
        "is_error": result.is_error(),
    })
}

/// One `user` message carrying the `tool_result` blocks of a turn, in the
/// order given: Anthropic wants every result of an assistant message in
/// the single user message that follows it.
pub fn user_message<R: ToolAnswer>(results: impl IntoIterator<Item = R>) -> Value {
    let content: Vec<Value> = results.into_iter().map(|r| tool_result_block(&r)).collect();
    json!({"role": "user", "content": content})
}

fn content_block(content: &Content) -> Option<Value> {
    Some(match content {
        Content::Text { text } if text.is_empty() => return None,
        Content::Text { text } => json!({"type": "text", "text": text}),
        Content::Json { value } => json!({"type": "text", "text": value.to_string()}),
        Content::Image { media_type, data } => json!({
            "type": "image",
            "source": {"type": "base64", "media_type": media_type, "data": data},
        }),
    })
}

/// The tool calls of an assistant message, in order:
/// `{"role":"assistant","content":[.., {"type":"tool_use","id":..,"name":..,"input":{..}}]}`.
///
/// A whole Messages API response works too (its extra fields are
/// ignored). `content` may be a plain string, which holds no calls.
/// Blocks other than `tool_use` (text, thinking, server tools) are
/// skipped; `input` is kept as the value given.
///
/// # Errors
///
/// When the message is not an assistant message, a field is missing or
/// of the wrong type, an id or name is empty, or two calls share an id.
pub fn parse_tool_calls(message: &Value) -> Result<Vec<ToolCall>, MessageError> {
    let message = object(message, "message")?;
    check_role(message, "")?;
    let blocks = match required(message, "content", "content")? {
        Value::String(_) => return Ok(Vec::new()),
        Value::Array(blocks) => blocks,
        other => {
            return Err(wrong_type(
                "content",
                "a string or an array of content blocks",
                other,
            ));
        }
    };
    let mut calls = Vec::new();
    let mut ids = HashSet::new();
    for (i, block) in blocks.iter().enumerate() {
        let path = format!("content[{i}]");
        let obj = object(block, &path)?;
        if string(obj, "type", &path)? != "tool_use" {
            continue;
        }
        let call = tool_use(obj, &path)?;
        if !ids.insert(call.call_id.clone()) {
            return Err(duplicate(&path, &call.call_id));
        }
        calls.push(call);
    }
    Ok(calls)
}

/// One `tool_use` block as a call.
///
/// # Errors
///
/// When the block is not a `tool_use` object with a non-empty string
/// `id` and `name` and an `input`.
pub fn parse_tool_use(block: &Value) -> Result<ToolCall, MessageError> {
    let obj = object(block, "block")?;
    let kind = string(obj, "type", "block")?;
    if kind != "tool_use" {
        return Err(MessageError::UnexpectedType {
            path: "block.type".into(),
            expected: "\"tool_use\"",
            found: shorten(kind),
        });
    }
    tool_use(obj, "block")
}

fn tool_use(obj: &Map<String, Value>, path: &str) -> Result<ToolCall, MessageError> {
    let id = non_empty(obj, "id", path)?;
    let name = non_empty(obj, "name", path)?;
    let input = required(obj, "input", &format!("{path}.input"))?;
    Ok(ToolCall::new(id, name, input.clone()))
}

/// The `tool_use` block for a call. Arguments held as JSON text are
/// parsed (empty text is `{}`).
///
/// # Errors
///
/// [`MessageError::ArgsNotJson`] when the call's JSON text does not parse.
pub fn tool_use_block(call: &ToolCall) -> Result<Value, MessageError> {
    let input = match &call.args {
        RawArgs::Value(value) => value.clone(),
        RawArgs::Text(text) if text.trim().is_empty() => json!({}),
        RawArgs::Text(text) => {
            serde_json::from_str(text).map_err(|e| MessageError::ArgsNotJson {
                call_id: shorten(&call.call_id),
                reason: e.to_string(),
            })?
        }
    };
    Ok(json!({
        "type": "tool_use",
        "id": call.call_id,
        "name": call.name,
        "input": input,
    }))
}

/// An assistant message with optional text followed by `tool_use` blocks,
/// as a harness keeps it in the conversation.
///
/// # Errors
///
/// As [`tool_use_block`].
pub fn assistant_message(text: Option<&str>, calls: &[ToolCall]) -> Result<Value, MessageError> {
    let mut content = Vec::with_capacity(calls.len() + 1);
    if let Some(text) = text.filter(|t| !t.is_empty()) {
        content.push(json!({"type": "text", "text": text}));
    }
    for call in calls {
        content.push(tool_use_block(call)?);
    }
    Ok(json!({"role": "assistant", "content": content}))
}

#[cfg(test)]
mod tests {
    use agentcore_stages::Outcome;

    use super::*;
    use crate::message::tests::result;

    #[test]
    fn anthropic_drops_empty_text_blocks() {
        let r = result(
            "c",
            Outcome::Success,
            vec![Content::text(""), Content::text("a")],
        );
        assert_eq!(
            tool_result_block(&r)["content"],
            json!([{"type": "text", "text": "a"}])
        );
    }
}
