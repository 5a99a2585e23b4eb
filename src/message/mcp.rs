//! Conversions for the Model Context Protocol: a `CallToolResult` with
//! `isError`.

use agentcore_stages::Content;
use serde_json::{Value, json};

use super::ToolAnswer;

/// The `CallToolResult` for one call:
/// `{"content":[{"type":"text","text":..},{"type":"image","data":..,"mimeType":..}],"isError":..}`.
///
/// JSON blocks become text holding the serialized JSON, as MCP asks of
/// tools that return structured data. The MCP server answers `tools/call`
/// with exactly this.
pub fn call_tool_result<R: ToolAnswer + ?Sized>(result: &R) -> Value {
    let content: Vec<Value> = result.content().iter().map(content_block).collect();
    json!({"content": content, "isError": result.is_error()})
}

fn content_block(content: &Content) -> Value {
    match content {
        Content::Text { text } => json!({"type": "text", "text": text}),
        Content::Json { value } => json!({"type": "text", "text": value.to_string()}),
        Content::Image { media_type, data } => {
            json!({"type": "image", "data": data, "mimeType": media_type})
        }
    }
}
