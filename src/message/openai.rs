//! Conversions for the OpenAI Chat Completions API: tool definitions;
//! `role: "tool"` messages (images as a text note, the images themselves in
//! a following `user` message); `tool_calls` parsed from an assistant
//! message or a whole `chat.completion`, arguments kept as JSON text.
//!
//! The Responses API (`POST /v1/responses`: `function_call` items in,
//! `function_call_output` items back, flat tool definitions) is in
//! [`responses`].

pub mod responses;

use std::collections::HashSet;

use agentcore_stages::{Content, RawArgs, Tool, ToolRegistry};
use serde_json::{Map, Value, json};

use super::parse::{
    check_role, duplicate, join, non_empty, object, required, shorten, string, wrong_type,
};
use super::{MessageError, ToolAnswer, ToolCall};

/// A tool's entry in a request's `tools`:
/// `{"type":"function","function":{"name":..,"description":..,"parameters":{..}}}`.
pub fn tool_definition(tool: &dyn Tool) -> Value {
    let (description, schema) = agentcore_stages::listing(tool);
    json!({
        "type": "function",
        "function": {
            "name": tool.name(),
            "description": description,
            "parameters": schema,
        },
    })
}

/// The entries of a request's `tools` for every tool in `registry`, in
/// the registry's order (by name, as [`ToolRegistry::iter`] gives them):
/// the tools the model sees, each as [`tool_definition`] writes it (the
/// same list as `agentcore tools --format openai`). For the Responses
/// API's flat shape, see [`responses::tool_definitions`].
///
/// ```
/// use agentcore::message::openai;
/// use agentcore::session::{Session, SessionConfig};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let dir = tempfile::tempdir().unwrap();
/// let session = Session::start(SessionConfig::new(dir.path())).unwrap();
/// let tools = openai::tool_definitions(session.registry());
/// let read = tools.iter().find(|t| t["function"]["name"] == "read").unwrap();
/// assert_eq!(read["type"], "function");
/// assert!(read["function"]["parameters"]["properties"]["file_path"].is_object());
/// # }
/// ```
pub fn tool_definitions(registry: &ToolRegistry) -> Vec<Value> {
    registry
        .iter()
        .map(|registered| tool_definition(registered.tool().as_ref()))
        .collect()
}

/// An image taken out of a tool result, to be sent in a user message
/// (Chat Completions tool messages carry text only).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    /// The media type, e.g. `image/png`.
    pub media_type: String,
    /// The image bytes in standard base64.
    pub data: String,
}

impl Image {
    /// The image as a `data:` URL, as `image_url` parts take it.
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.data)
    }
}

/// A `role: "tool"` message and the images it could not carry.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolMessage {
    /// `{"role":"tool","tool_call_id":..,"content":".."}`.
    pub message: Value,
    /// The result's images, in order; send them with [`image_message`]
    /// after the turn's tool messages.
    pub images: Vec<Image>,
}

/// The `role: "tool"` message answering one call.
///
/// The content is the result's blocks joined with newlines: text as is,
/// JSON serialized, and each image replaced by a note such as
/// `[Image 1 (image/png) is attached in the next user message.]`. The
/// images are returned beside the message. The API has no error flag, so
/// a failure is told by its text alone.
///
/// Images are numbered from 1 within this result; for a whole turn use
/// [`messages`], which numbers them across the turn.
pub fn tool_message<R: ToolAnswer + ?Sized>(result: &R) -> ToolMessage {
    let mut images = Vec::new();
    let message = tool_message_numbered(result, &mut images);
    ToolMessage { message, images }
}

/// The user message that follows the tool messages with their images:
/// `{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:..;base64,.."}}]}`.
/// `None` when there are no images.
pub fn image_message(images: &[Image]) -> Option<Value> {
    if images.is_empty() {
        return None;
    }
    let parts: Vec<Value> = images
        .iter()
        .map(|image| json!({"type": "image_url", "image_url": {"url": image.data_url()}}))
        .collect();
    Some(json!({"role": "user", "content": parts}))
}

/// The messages that answer a turn: one `role: "tool"` message per
/// result, in the order given, then (only if some result had images) one
/// user message with every image. Images are numbered across the turn, so
/// the notes match the order of the images in the user message.
pub fn messages<R: ToolAnswer>(results: impl IntoIterator<Item = R>) -> Vec<Value> {
    let mut images = Vec::new();
    let mut out: Vec<Value> = results
        .into_iter()
        .map(|r| tool_message_numbered(&r, &mut images))
        .collect();
    out.extend(image_message(&images));
    out
}

fn tool_message_numbered<R: ToolAnswer + ?Sized>(result: &R, images: &mut Vec<Image>) -> Value {
    let mut parts: Vec<String> = Vec::with_capacity(result.content().len());
    for block in result.content() {
        match block {
            Content::Text { text } => parts.push(text.clone()),
            Content::Json { value } => parts.push(value.to_string()),
            Content::Image { media_type, data } => {
                images.push(Image {
                    media_type: media_type.clone(),
                    data: data.clone(),
                });
                parts.push(format!(
                    "[Image {} ({}) is attached in the next user message.]",
                    images.len(),
                    media_type
                ));
            }
        }
    }
    json!({
        "role": "tool",
        "tool_call_id": result.call_id(),
        "content": parts.join("\n"),
    })
}

/// The tool calls of an assistant message, in order:
/// `{"role":"assistant","content":null,"tool_calls":[{"id":..,"type":"function","function":{"name":..,"arguments":"<JSON text>"}}]}`.
///
/// A whole `chat.completion` object works too (anything with `choices`):
/// the calls are read from `choices[0].message`, and error paths start
/// there (`choices[0].message.tool_calls[1].id`). A completion with no
/// choices, or with several (a request with `n` > 1), is an error: pass
/// the message of the choice the conversation keeps.
///
/// Arguments stay JSON text ([`RawArgs::Text`]); the pipeline parses
/// them, so malformed arguments become an error the model can read. A
/// message without `tool_calls` (or with `null`) holds no calls. A
/// missing `type` is taken as `function`.
///
/// ```
/// use agentcore::message::openai;
/// use serde_json::json;
///
/// let completion = json!({
///     "id": "chatcmpl-abc123",
///     "object": "chat.completion",
///     "choices": [{
///         "index": 0,
///         "message": {"role": "assistant", "content": null, "tool_calls": [
///             {"id": "call_abc123", "type": "function",
///              "function": {"name": "get_weather", "arguments": "{\"location\":\"Paris\"}"}}
///         ]},
///         "finish_reason": "tool_calls"
///     }]
/// });
/// let calls = openai::parse_tool_calls(&completion)?;
/// assert_eq!(calls[0].name, "get_weather");
/// # Ok::<(), agentcore::message::MessageError>(())
/// ```
///
/// # Errors
///
/// When the message is not an assistant message, a field is missing or
/// of the wrong type, an id or name is empty, a call is not of type
/// `function`, or two calls share an id; for a completion, also
/// [`MessageError::NoChoices`] and [`MessageError::SeveralChoices`]; and
/// [`MessageError::OtherApi`] for a Responses API response.
pub fn parse_tool_calls(message: &Value) -> Result<Vec<ToolCall>, MessageError> {
    let obj = object(message, "message")?;
    match obj.get("choices") {
        None if !obj.contains_key("role") && obj.contains_key("output") => {
            Err(MessageError::OtherApi {
                found: "a Responses API response (it has \"output\")",
                use_instead: "openai::responses::parse_function_calls",
            })
        }
        None => message_calls(obj, ""),
        Some(choices) => {
            let message = only_choice(choices)?;
            let at = "choices[0].message";
            message_calls(object(message, at)?, at)
        }
    }
}

/// The message of a completion's single choice.
fn only_choice(choices: &Value) -> Result<&Value, MessageError> {
    let choices = match choices {
        Value::Array(choices) => choices,
        other => return Err(wrong_type("choices", "an array", other)),
    };
    match &choices[..] {
        [] => Err(MessageError::NoChoices),
        [choice] => required(
            object(choice, "choices[0]")?,
            "message",
            "choices[0].message",
        ),
        several => Err(MessageError::SeveralChoices {
            count: several.len(),
        }),
    }
}

/// The calls of one assistant message; `at` is the message's path, which
/// starts every error path (`""`, or `"choices[0].message"`).
fn message_calls(message: &Map<String, Value>, at: &str) -> Result<Vec<ToolCall>, MessageError> {
    check_role(message, at)?;
    let list_path = join(at, "tool_calls");
    let list = match message.get("tool_calls") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(list)) => list,
        Some(other) => return Err(wrong_type(&list_path, "an array", other)),
    };
    let mut calls = Vec::with_capacity(list.len());
    let mut ids = HashSet::new();
    for (i, entry) in list.iter().enumerate() {
        let path = format!("{list_path}[{i}]");
        let call = tool_call_entry(entry, &path)?;
        if !ids.insert(call.call_id.clone()) {
            return Err(duplicate(&path, &call.call_id));
        }
        calls.push(call);
    }
    Ok(calls)
}

fn tool_call_entry(entry: &Value, path: &str) -> Result<ToolCall, MessageError> {
    let obj = object(entry, path)?;
    match obj.get("type") {
        None => {}
        Some(Value::String(kind)) if kind == "function" => {}
        Some(Value::String(kind)) => {
            return Err(MessageError::UnexpectedType {
                path: format!("{path}.type"),
                expected: "\"function\", the only tool call type supported",
                found: shorten(kind),
            });
        }
        Some(other) => return Err(wrong_type(&format!("{path}.type"), "a string", other)),
    }
    let id = non_empty(obj, "id", path)?;
    let function_path = format!("{path}.function");
    let function = object(required(obj, "function", &function_path)?, &function_path)?;
    let name = non_empty(function, "name", &function_path)?;
    let arguments = string(function, "arguments", &function_path)?;
    Ok(ToolCall::new(id, name, RawArgs::Text(arguments.to_owned())))
}

/// The `tool_calls` entry for a call. A JSON value is serialized; empty
/// text becomes `"{}"`.
pub fn tool_call(call: &ToolCall) -> Value {
    let arguments = match &call.args {
        RawArgs::Value(value) => value.to_string(),
        RawArgs::Text(text) if text.trim().is_empty() => "{}".to_owned(),
        RawArgs::Text(text) => text.clone(),
    };
    json!({
        "id": call.call_id,
        "type": "function",
        "function": {"name": call.name, "arguments": arguments},
    })
}

/// An assistant message with optional text and the calls, as a harness
/// keeps it in the conversation. `tool_calls` is left out when there are
/// no calls, since the API refuses an empty list.
pub fn assistant_message(content: Option<&str>, calls: &[ToolCall]) -> Value {
    let mut message = json!({"role": "assistant", "content": content});
    if !calls.is_empty() {
        message["tool_calls"] = calls.iter().map(tool_call).collect();
    }
    message
}

#[cfg(test)]
mod tests {
    use agentcore_stages::Outcome;

    use super::*;
    use crate::message::tests::result;

    #[test]
    fn openai_numbers_images_within_one_result() {
        let r = result(
            "c",
            Outcome::Success,
            vec![
                Content::image("image/png", "AA=="),
                Content::text("between"),
                Content::image("image/gif", "BB=="),
            ],
        );
        let msg = tool_message(&r);
        assert_eq!(
            msg.message["content"],
            "[Image 1 (image/png) is attached in the next user message.]\nbetween\n\
             [Image 2 (image/gif) is attached in the next user message.]"
        );
        assert_eq!(msg.images.len(), 2);
        assert_eq!(msg.images[1].data_url(), "data:image/gif;base64,BB==");
    }

    #[test]
    fn image_message_is_none_without_images() {
        assert_eq!(image_message(&[]), None);
    }

    #[test]
    fn paths_name_the_offending_field() {
        let err = parse_tool_calls(&json!({
            "role": "assistant",
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                {"id": "b", "type": "function", "function": {"name": "f", "arguments": {}}}
            ]
        }))
        .unwrap_err();
        assert_eq!(
            err,
            MessageError::WrongType {
                path: "tool_calls[1].function.arguments".into(),
                expected: "a string",
                found: "an object",
            }
        );
        assert_eq!(
            err.to_string(),
            "tool_calls[1].function.arguments must be a string, found an object"
        );
    }
}
