//! Tool-result messages and the provider shapes: Anthropic Messages,
//! OpenAI Chat Completions and MCP.
//!
//! A turn ends with one result per call (a [`ToolResult`], or the
//! [`ToolResultMessage`] built from it). The modules here turn those into
//! what each API expects next, and parse an assistant message's tool calls
//! into [`ToolCall`]s:
//!
//! - [`anthropic`]: `tool_result` content blocks, wrapped in one `user`
//!   message; `tool_use` blocks parsed from an assistant message.
//! - [`openai`]: `role: "tool"` messages (images as a text note, the images
//!   themselves in a following `user` message); `tool_calls` parsed from an
//!   assistant message, arguments kept as JSON text.
//! - [`mcp`]: a `CallToolResult` with `isError`.
//!
//! Everything is plain [`serde_json::Value`], so a harness can put it straight
//! into a request body.
//!
//! ```
//! use agentcore::message::{anthropic, openai};
//! use serde_json::json;
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
//! assert_eq!(calls[0].id, "call_abc123");
//! # Ok::<(), agentcore::message::MessageError>(())
//! ```

use std::collections::HashSet;

use agentcore_stages::{
    Call, Content, RawArgs, ToolResult, ToolResultMessage, ToolResultSummary, Unvalidated,
};
use serde_json::{Map, Value};

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

impl From<ToolCall> for Call<Unvalidated> {
    fn from(call: ToolCall) -> Self {
        Call::new(call.id, call.name, call.args)
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
    fn tool_call_id(&self) -> &str;
    /// The result's content blocks, in order.
    fn content(&self) -> &[Content];
    /// Whether the call failed in any way.
    fn is_error(&self) -> bool;
}

impl ToolAnswer for ToolResult {
    fn tool_call_id(&self) -> &str {
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
    fn tool_call_id(&self) -> &str {
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
    fn tool_call_id(&self) -> &str {
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
    fn tool_call_id(&self) -> &str {
        (**self).tool_call_id()
    }
    fn content(&self) -> &[Content] {
        (**self).content()
    }
    fn is_error(&self) -> bool {
        (**self).is_error()
    }
}

/// Why a provider message could not be read, or a call not written.
///
/// `path` names the offending place inside the message, e.g.
/// `content[1].id` or `tool_calls[0].function.arguments`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MessageError {
    /// A required field is absent.
    #[error("{path} is missing")]
    Missing {
        /// Where the field should be.
        path: String,
    },
    /// A field has the wrong JSON type.
    #[error("{path} must be {expected}, found {found}")]
    WrongType {
        /// The field.
        path: String,
        /// What it must be, e.g. `"a string"`.
        expected: &'static str,
        /// What it is, e.g. `"a number"`.
        found: &'static str,
    },
    /// A call id or tool name is the empty string.
    #[error("{path} must not be empty")]
    Empty {
        /// The field.
        path: String,
    },
    /// The message is not an assistant message.
    #[error("role is {found:?}; tool calls are read from an \"assistant\" message")]
    WrongRole {
        /// The role found (shortened if long).
        found: String,
    },
    /// A `type` field names a kind this parser does not take, e.g. an
    /// OpenAI tool call other than `function`.
    #[error("{path} is {found:?}; expected {expected}")]
    UnexpectedType {
        /// The `type` field.
        path: String,
        /// What it must be.
        expected: &'static str,
        /// The type found (shortened if long).
        found: String,
    },
    /// Two calls of one message share an id, so their results could not be
    /// told apart.
    #[error("{path} repeats the id {id:?} of an earlier call in this message")]
    DuplicateId {
        /// The later call's id field.
        path: String,
        /// The repeated id (shortened if long).
        id: String,
    },
    /// A call's arguments are JSON text that does not parse, so they cannot
    /// be written as an Anthropic `input` object.
    #[error("the arguments of call {id:?} are not valid JSON: {reason}")]
    ArgsNotJson {
        /// The call's id (shortened if long).
        id: String,
        /// The JSON parser's message.
        reason: String,
    },
}

/// Conversions for the Anthropic Messages API.
pub mod anthropic {
    use super::*;

    /// The `tool_result` content block answering one call:
    /// `{"type":"tool_result","tool_use_id":..,"content":[..],"is_error":..}`.
    ///
    /// Text blocks stay text, JSON blocks become text holding the serialized
    /// JSON, images become `{"type":"image","source":{"type":"base64",..}}`.
    /// Empty text blocks are left out, since the API refuses them.
    pub fn tool_result_block<R: ToolAnswer + ?Sized>(result: &R) -> Value {
        let content: Vec<Value> = result.content().iter().filter_map(content_block).collect();
        let mut block = Map::new();
        block.insert("type".into(), "tool_result".into());
        block.insert("tool_use_id".into(), result.tool_call_id().into());
        block.insert("content".into(), Value::Array(content));
        block.insert("is_error".into(), result.is_error().into());
        Value::Object(block)
    }

    /// One `user` message carrying the `tool_result` blocks of a turn, in the
    /// order given: Anthropic wants every result of an assistant message in
    /// the single user message that follows it.
    pub fn user_message<R: ToolAnswer>(results: impl IntoIterator<Item = R>) -> Value {
        let content: Vec<Value> = results.into_iter().map(|r| tool_result_block(&r)).collect();
        let mut message = Map::new();
        message.insert("role".into(), "user".into());
        message.insert("content".into(), Value::Array(content));
        Value::Object(message)
    }

    fn content_block(content: &Content) -> Option<Value> {
        let mut block = Map::new();
        match content {
            Content::Text { text } if text.is_empty() => return None,
            Content::Text { text } => {
                block.insert("type".into(), "text".into());
                block.insert("text".into(), text.as_str().into());
            }
            Content::Json { value } => {
                block.insert("type".into(), "text".into());
                block.insert("text".into(), value.to_string().into());
            }
            Content::Image { media_type, data } => {
                let mut source = Map::new();
                source.insert("type".into(), "base64".into());
                source.insert("media_type".into(), media_type.as_str().into());
                source.insert("data".into(), data.as_str().into());
                block.insert("type".into(), "image".into());
                block.insert("source".into(), Value::Object(source));
            }
        }
        Some(Value::Object(block))
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
        check_role(message)?;
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
            if !ids.insert(call.id.clone()) {
                return Err(duplicate(&path, &call.id));
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
            RawArgs::Text(text) if text.trim().is_empty() => Value::Object(Map::new()),
            RawArgs::Text(text) => {
                serde_json::from_str(text).map_err(|e| MessageError::ArgsNotJson {
                    id: shorten(&call.id),
                    reason: e.to_string(),
                })?
            }
        };
        let mut block = Map::new();
        block.insert("type".into(), "tool_use".into());
        block.insert("id".into(), call.id.as_str().into());
        block.insert("name".into(), call.name.as_str().into());
        block.insert("input".into(), input);
        Ok(Value::Object(block))
    }

    /// An assistant message with optional text followed by `tool_use` blocks,
    /// as a harness keeps it in the conversation.
    ///
    /// # Errors
    ///
    /// As [`tool_use_block`].
    pub fn assistant_message(
        text: Option<&str>,
        calls: &[ToolCall],
    ) -> Result<Value, MessageError> {
        let mut content = Vec::with_capacity(calls.len() + 1);
        if let Some(text) = text.filter(|t| !t.is_empty()) {
            let mut block = Map::new();
            block.insert("type".into(), "text".into());
            block.insert("text".into(), text.into());
            content.push(Value::Object(block));
        }
        for call in calls {
            content.push(tool_use_block(call)?);
        }
        let mut message = Map::new();
        message.insert("role".into(), "assistant".into());
        message.insert("content".into(), Value::Array(content));
        Ok(Value::Object(message))
    }
}

/// Conversions for the OpenAI Chat Completions API.
pub mod openai {
    use super::*;

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
            .map(|image| {
                let mut url = Map::new();
                url.insert("url".into(), image.data_url().into());
                let mut part = Map::new();
                part.insert("type".into(), "image_url".into());
                part.insert("image_url".into(), Value::Object(url));
                Value::Object(part)
            })
            .collect();
        let mut message = Map::new();
        message.insert("role".into(), "user".into());
        message.insert("content".into(), Value::Array(parts));
        Some(Value::Object(message))
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
        let mut message = Map::new();
        message.insert("role".into(), "tool".into());
        message.insert("tool_call_id".into(), result.tool_call_id().into());
        message.insert("content".into(), parts.join("\n").into());
        Value::Object(message)
    }

    /// The tool calls of an assistant message, in order:
    /// `{"role":"assistant","content":null,"tool_calls":[{"id":..,"type":"function","function":{"name":..,"arguments":"<JSON text>"}}]}`.
    ///
    /// Arguments stay JSON text ([`RawArgs::Text`]); the pipeline parses
    /// them, so malformed arguments become an error the model can read. A
    /// message without `tool_calls` (or with `null`) holds no calls. A
    /// missing `type` is taken as `function`.
    ///
    /// # Errors
    ///
    /// When the message is not an assistant message, a field is missing or
    /// of the wrong type, an id or name is empty, a call is not of type
    /// `function`, or two calls share an id.
    pub fn parse_tool_calls(message: &Value) -> Result<Vec<ToolCall>, MessageError> {
        let message = object(message, "message")?;
        check_role(message)?;
        let list = match message.get("tool_calls") {
            None | Some(Value::Null) => return Ok(Vec::new()),
            Some(Value::Array(list)) => list,
            Some(other) => return Err(wrong_type("tool_calls", "an array", other)),
        };
        let mut calls = Vec::with_capacity(list.len());
        let mut ids = HashSet::new();
        for (i, entry) in list.iter().enumerate() {
            let path = format!("tool_calls[{i}]");
            let call = tool_call_entry(entry, &path)?;
            if !ids.insert(call.id.clone()) {
                return Err(duplicate(&path, &call.id));
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
        let mut function = Map::new();
        function.insert("name".into(), call.name.as_str().into());
        function.insert("arguments".into(), arguments.into());
        let mut entry = Map::new();
        entry.insert("id".into(), call.id.as_str().into());
        entry.insert("type".into(), "function".into());
        entry.insert("function".into(), Value::Object(function));
        Value::Object(entry)
    }

    /// An assistant message with optional text and the calls, as a harness
    /// keeps it in the conversation. `tool_calls` is left out when there are
    /// no calls, since the API refuses an empty list.
    pub fn assistant_message(content: Option<&str>, calls: &[ToolCall]) -> Value {
        let mut message = Map::new();
        message.insert("role".into(), "assistant".into());
        message.insert("content".into(), content.map_or(Value::Null, Value::from));
        if !calls.is_empty() {
            message.insert(
                "tool_calls".into(),
                Value::Array(calls.iter().map(tool_call).collect()),
            );
        }
        Value::Object(message)
    }
}

/// Conversions for the Model Context Protocol.
pub mod mcp {
    use super::*;

    /// The `CallToolResult` for one call:
    /// `{"content":[{"type":"text","text":..},{"type":"image","data":..,"mimeType":..}],"isError":..}`.
    ///
    /// JSON blocks become text holding the serialized JSON, as MCP asks of
    /// tools that return structured data.
    pub fn call_tool_result<R: ToolAnswer + ?Sized>(result: &R) -> Value {
        let content: Vec<Value> = result.content().iter().map(content_block).collect();
        let mut out = Map::new();
        out.insert("content".into(), Value::Array(content));
        out.insert("isError".into(), result.is_error().into());
        Value::Object(out)
    }

    fn content_block(content: &Content) -> Value {
        let mut block = Map::new();
        match content {
            Content::Text { text } => {
                block.insert("type".into(), "text".into());
                block.insert("text".into(), text.as_str().into());
            }
            Content::Json { value } => {
                block.insert("type".into(), "text".into());
                block.insert("text".into(), value.to_string().into());
            }
            Content::Image { media_type, data } => {
                block.insert("type".into(), "image".into());
                block.insert("data".into(), data.as_str().into());
                block.insert("mimeType".into(), media_type.as_str().into());
            }
        }
        Value::Object(block)
    }
}

// ---- parsing helpers shared by the provider modules ----

/// Longest text from a message echoed back in an error.
const ECHO_LIMIT: usize = 64;

fn shorten(text: &str) -> String {
    match text.char_indices().nth(ECHO_LIMIT) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn wrong_type(path: &str, expected: &'static str, found: &Value) -> MessageError {
    MessageError::WrongType {
        path: path.to_owned(),
        expected,
        found: kind(found),
    }
}

fn duplicate(path: &str, id: &str) -> MessageError {
    MessageError::DuplicateId {
        path: format!("{path}.id"),
        id: shorten(id),
    }
}

fn object<'a>(value: &'a Value, path: &str) -> Result<&'a Map<String, Value>, MessageError> {
    value
        .as_object()
        .ok_or_else(|| wrong_type(path, "an object", value))
}

fn required<'a>(
    obj: &'a Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<&'a Value, MessageError> {
    obj.get(key).ok_or_else(|| MessageError::Missing {
        path: path.to_owned(),
    })
}

/// `obj[key]` as a string; `parent` is the path of `obj`.
fn string<'a>(
    obj: &'a Map<String, Value>,
    key: &str,
    parent: &str,
) -> Result<&'a str, MessageError> {
    let path = join(parent, key);
    match required(obj, key, &path)? {
        Value::String(s) => Ok(s),
        other => Err(wrong_type(&path, "a string", other)),
    }
}

fn non_empty<'a>(
    obj: &'a Map<String, Value>,
    key: &str,
    parent: &str,
) -> Result<&'a str, MessageError> {
    let s = string(obj, key, parent)?;
    if s.is_empty() {
        return Err(MessageError::Empty {
            path: join(parent, key),
        });
    }
    Ok(s)
}

/// The path of `key` inside the object at `parent` (`""` for the message).
fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_owned()
    } else {
        format!("{parent}.{key}")
    }
}

fn check_role(message: &Map<String, Value>) -> Result<(), MessageError> {
    match string(message, "role", "")? {
        "assistant" => Ok(()),
        other => Err(MessageError::WrongRole {
            found: shorten(other),
        }),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use agentcore_stages::Outcome;
    use serde_json::json;

    use super::*;

    fn result(id: &str, outcome: Outcome, content: Vec<Content>) -> ToolResult {
        ToolResult {
            call_id: id.into(),
            tool: "t".into(),
            label: None,
            outcome,
            content,
            error_code: None,
            coercions: Vec::new(),
            duration: Duration::ZERO,
        }
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
    fn anthropic_drops_empty_text_blocks() {
        let r = result(
            "c",
            Outcome::Success,
            vec![Content::text(""), Content::text("a")],
        );
        assert_eq!(
            anthropic::tool_result_block(&r)["content"],
            json!([{"type": "text", "text": "a"}])
        );
    }

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
        let msg = openai::tool_message(&r);
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
        assert_eq!(openai::image_message(&[]), None);
    }

    #[test]
    fn long_echoed_values_are_shortened() {
        let role = "x".repeat(10_000);
        let err = anthropic::parse_tool_calls(&json!({"role": role, "content": ""})).unwrap_err();
        let MessageError::WrongRole { found } = &err else {
            panic!("{err:?}")
        };
        assert_eq!(found.chars().count(), ECHO_LIMIT + 1);
        assert!(err.to_string().len() < 200);
    }

    #[test]
    fn shorten_cuts_on_a_char_boundary() {
        let text = "é".repeat(100);
        let short = shorten(&text);
        assert!(short.ends_with('…'));
        assert_eq!(short.chars().count(), ECHO_LIMIT + 1);
        assert_eq!(shorten("abc"), "abc");
    }

    #[test]
    fn paths_name_the_offending_field() {
        let err = openai::parse_tool_calls(&json!({
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

    #[test]
    fn tool_call_converts_into_an_unvalidated_call() {
        let call: Call<Unvalidated> = ToolCall::new("c1", "read", json!({"path": "a"})).into();
        assert_eq!(call.call_id(), "c1");
        assert_eq!(call.tool_name(), "read");
        assert_eq!(call.state().args(), &RawArgs::Value(json!({"path": "a"})));
    }
}
