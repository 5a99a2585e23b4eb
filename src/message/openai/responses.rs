//! Conversions for the OpenAI Responses API (`POST /v1/responses`): flat
//! tool definitions; `function_call` items parsed from a response's
//! `output`; `function_call_output` items built from results.
//!
//! The shapes, as the API reference and the official SDKs' types give
//! them:
//!
//! - a tool: `{"type":"function","name":..,"description":..,"parameters":{..},"strict":false}`,
//!   flat (no nested `function` object as in Chat Completions);
//! - a call, one item of the response's `output` array:
//!   `{"type":"function_call","id":"fc_..","call_id":"call_..","name":..,"arguments":"<JSON text>","status":"completed"}`.
//!   `call_id` (not `id`) is what the answer must name;
//! - an answer, an item of the next request's `input`:
//!   `{"type":"function_call_output","call_id":..,"output":..}`, where
//!   `output` is a string, or a list of `input_text` / `input_image`
//!   parts.
//!
//! ```
//! use agentcore::message::openai::responses;
//! use agentcore::{Content, Outcome, ToolResult};
//! use serde_json::json;
//!
//! let response = json!({
//!     "id": "resp_123",
//!     "object": "response",
//!     "status": "completed",
//!     "output": [{
//!         "type": "function_call",
//!         "id": "fc_12345xyz",
//!         "call_id": "call_12345xyz",
//!         "name": "get_weather",
//!         "arguments": "{\"location\":\"Paris, France\"}",
//!         "status": "completed"
//!     }]
//! });
//! let calls = responses::parse_function_calls(&response)?;
//! assert_eq!(calls[0].call_id, "call_12345xyz");
//!
//! let result = ToolResult::new("call_12345xyz", "get_weather", Outcome::Success,
//!     vec![Content::text("15°C")]);
//! let input = responses::function_call_outputs([&result]);
//! assert_eq!(input[0], json!({
//!     "type": "function_call_output",
//!     "call_id": "call_12345xyz",
//!     "output": "15°C"
//! }));
//! # Ok::<(), agentcore::message::MessageError>(())
//! ```

use std::collections::HashSet;

use agentcore_stages::{Content, RawArgs, Tool, ToolRegistry};
use serde_json::{Map, Value, json};

use super::super::parse::{non_empty, object, required, shorten, string, wrong_type};
use super::super::{MessageError, ToolAnswer, ToolCall};

/// A tool's entry in a Responses request's `tools`:
/// `{"type":"function","name":..,"description":..,"parameters":{..},"strict":false}`.
///
/// `strict` is written out as `false`: strict mode wants every property
/// listed in `required` and every object closed, which a schema with
/// optional fields is not, and the Responses API may take a missing
/// `strict` as `true`. The pipeline validates the arguments against the
/// schema anyway, and tells the model what to fix.
pub fn tool_definition(tool: &dyn Tool) -> Value {
    let (description, schema) = agentcore_stages::listing(tool);
    json!({
        "type": "function",
        "name": tool.name(),
        "description": description,
        "parameters": schema,
        "strict": false,
    })
}

/// The entries of a Responses request's `tools` for every tool in
/// `registry`, in the registry's order (by name, as
/// [`ToolRegistry::iter`] gives them), each as [`tool_definition`]
/// writes it.
pub fn tool_definitions(registry: &ToolRegistry) -> Vec<Value> {
    registry
        .iter()
        .map(|registered| tool_definition(registered.tool().as_ref()))
        .collect()
}

/// The function calls of a response, in order: from the `output` array,
/// or from the whole response object (anything with `output`).
///
/// Items other than `function_call` (`message`, `reasoning`, built-in
/// tools' calls) are skipped. Each call's `call_id` becomes the
/// [`ToolCall::call_id`] (the item's own `id`, `fc_…`, is not what an
/// answer names); `arguments` stay JSON text ([`RawArgs::Text`]), which
/// the pipeline parses, so malformed arguments become an error the model
/// can read. Error paths name the item: `output[2].call_id`.
///
/// # Errors
///
/// When the value is neither an array nor an object with an `output`
/// array, an item is not an object or has no string `type`, a
/// `function_call` lacks a non-empty `call_id` or `name` or a string
/// `arguments`, or two calls share a `call_id`; [`MessageError::OtherApi`]
/// for a Chat Completions completion or message.
pub fn parse_function_calls(response: &Value) -> Result<Vec<ToolCall>, MessageError> {
    let items = match response {
        Value::Array(items) => items,
        Value::Object(obj) if !obj.contains_key("output") && is_chat(obj) => {
            return Err(MessageError::OtherApi {
                found: "a Chat Completions completion or message (it has \"choices\" or \"role\")",
                use_instead: "openai::parse_tool_calls",
            });
        }
        Value::Object(obj) => match required(obj, "output", "output")? {
            Value::Array(items) => items,
            other => return Err(wrong_type("output", "an array of output items", other)),
        },
        other => {
            return Err(wrong_type(
                "response",
                "a response object or its output array",
                other,
            ));
        }
    };
    let mut calls = Vec::new();
    let mut ids = HashSet::new();
    for (i, item) in items.iter().enumerate() {
        let path = format!("output[{i}]");
        let obj = object(item, &path)?;
        if string(obj, "type", &path)? != "function_call" {
            continue;
        }
        let call = function_call_item(obj, &path)?;
        if !ids.insert(call.call_id.clone()) {
            return Err(duplicate_call_id(&path, &call.call_id));
        }
        calls.push(call);
    }
    Ok(calls)
}

fn is_chat(obj: &Map<String, Value>) -> bool {
    obj.contains_key("choices") || obj.contains_key("role")
}

fn function_call_item(obj: &Map<String, Value>, path: &str) -> Result<ToolCall, MessageError> {
    let call_id = non_empty(obj, "call_id", path)?;
    let name = non_empty(obj, "name", path)?;
    let arguments = string(obj, "arguments", path)?;
    Ok(ToolCall::new(
        call_id,
        name,
        RawArgs::Text(arguments.to_owned()),
    ))
}

fn duplicate_call_id(path: &str, call_id: &str) -> MessageError {
    MessageError::DuplicateId {
        path: format!("{path}.call_id"),
        call_id: shorten(call_id),
    }
}

/// The `function_call` item for a call, as a harness replays it in the
/// next request's `input` when it keeps the conversation itself (no
/// `previous_response_id`): `{"type":"function_call","call_id":..,"name":..,"arguments":".."}`.
/// A JSON value is serialized; empty text becomes `"{}"`.
pub fn function_call(call: &ToolCall) -> Value {
    let arguments = match &call.args {
        RawArgs::Value(value) => value.to_string(),
        RawArgs::Text(text) if text.trim().is_empty() => "{}".to_owned(),
        RawArgs::Text(text) => text.clone(),
    };
    json!({
        "type": "function_call",
        "call_id": call.call_id,
        "name": call.name,
        "arguments": arguments,
    })
}

/// The `function_call_output` item answering one call:
/// `{"type":"function_call_output","call_id":..,"output":..}`.
///
/// Without images, `output` is a string: the result's blocks joined with
/// newlines, text as is and JSON serialized. With images it is a list of
/// parts, `{"type":"input_text","text":..}` and
/// `{"type":"input_image","image_url":"data:..;base64,.."}` in the
/// result's order (empty text left out). The item has no error flag, so a
/// failure is told by its text alone.
pub fn function_call_output<R: ToolAnswer + ?Sized>(result: &R) -> Value {
    let content = result.content();
    let output = if content.iter().any(|c| matches!(c, Content::Image { .. })) {
        Value::Array(content.iter().filter_map(input_part).collect())
    } else {
        let parts: Vec<String> = content.iter().filter_map(text_of).collect();
        Value::String(parts.join("\n"))
    };
    json!({
        "type": "function_call_output",
        "call_id": result.call_id(),
        "output": output,
    })
}

/// The `function_call_output` items answering a turn, one per result in
/// the order given, to put in the next request's `input`.
pub fn function_call_outputs<R: ToolAnswer>(results: impl IntoIterator<Item = R>) -> Vec<Value> {
    results
        .into_iter()
        .map(|r| function_call_output(&r))
        .collect()
}

fn text_of(content: &Content) -> Option<String> {
    match content {
        Content::Text { text } => Some(text.clone()),
        Content::Json { value } => Some(value.to_string()),
        Content::Image { .. } => None,
    }
}

fn input_part(content: &Content) -> Option<Value> {
    Some(match content {
        Content::Text { text } if text.is_empty() => return None,
        Content::Text { text } => json!({"type": "input_text", "text": text}),
        Content::Json { value } => json!({"type": "input_text", "text": value.to_string()}),
        Content::Image { media_type, data } => json!({
            "type": "input_image",
            "image_url": format!("data:{media_type};base64,{data}"),
        }),
    })
}

#[cfg(test)]
mod tests {
    use agentcore_stages::Outcome;

    use super::*;
    use crate::message::tests::result;

    #[test]
    fn images_turn_the_output_into_input_parts() {
        let r = result(
            "c",
            Outcome::Success,
            vec![
                Content::text("a"),
                Content::text(""),
                Content::image("image/png", "AA=="),
                Content::json(json!({"k": 1})),
            ],
        );
        assert_eq!(
            function_call_output(&r)["output"],
            json!([
                {"type": "input_text", "text": "a"},
                {"type": "input_image", "image_url": "data:image/png;base64,AA=="},
                {"type": "input_text", "text": "{\"k\":1}"}
            ])
        );
    }

    #[test]
    fn a_duplicate_call_id_names_the_call_id_field() {
        let item = json!({"type": "function_call", "call_id": "x", "name": "f", "arguments": "{}"});
        let err = parse_function_calls(&json!([item, item])).unwrap_err();
        assert_eq!(
            err,
            MessageError::DuplicateId {
                path: "output[1].call_id".into(),
                call_id: "x".into()
            }
        );
    }

    #[test]
    fn hostile_shapes_are_errors_not_panics() {
        for bad in [
            json!(null),
            json!("output"),
            json!({"output": {}}),
            json!({"output": [1]}),
            json!({"output": [{"type": 3}]}),
            json!({"output": [{"type": "function_call"}]}),
            json!({"output": [{"type": "function_call", "call_id": "", "name": "f", "arguments": "{}"}]}),
            json!({"output": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": {}}]}),
            json!({"id": "resp_1"}),
        ] {
            assert!(parse_function_calls(&bad).is_err(), "{bad}");
        }
    }
}
