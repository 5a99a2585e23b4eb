//! A remote tool's `CallToolResult` as content blocks for the model.

use agentcore_stages::Content;
use serde_json::Value;

/// The blocks of a result: each MCP content block mapped (text as text,
/// images as images, audio as a note, resource links and embedded
/// resources as text), then `structuredContent` as a JSON block unless a
/// text block already carries the same value. Nothing at all gives a note
/// saying so.
pub(crate) fn blocks(content: &[Value], structured: Option<&Value>) -> Vec<Content> {
    let mut out: Vec<Content> = content.iter().map(block).collect();
    if let Some(value) = structured {
        // Servers repeat it as text (the spec asks them to), as JSON or,
        // for a wrapped plain value (`{"result": "…"}`, as the Python SDK
        // makes), as that value itself.
        let wrapped = value
            .as_object()
            .filter(|o| o.len() == 1)
            .and_then(|o| o.get("result"))
            .and_then(Value::as_str);
        let repeated = out.iter().any(|b| {
            b.as_text().is_some_and(|t| {
                Some(t) == wrapped || serde_json::from_str::<Value>(t).is_ok_and(|v| &v == value)
            })
        });
        if !repeated {
            out.push(Content::json(value.clone()));
        }
    }
    if out.is_empty() {
        out.push(Content::text("(the tool returned no content)"));
    }
    out
}

fn str_of<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

fn block(value: &Value) -> Content {
    match str_of(value, "type") {
        Some("text") => Content::text(str_of(value, "text").unwrap_or_default()),
        Some("image") => match (str_of(value, "mimeType"), str_of(value, "data")) {
            (Some(mime), Some(data)) => Content::image(mime, data),
            _ => Content::text("[an image block without data or media type]"),
        },
        Some("audio") => Content::text(format!(
            "[audio ({}, {} bytes): audio is not shown to the model]",
            str_of(value, "mimeType").unwrap_or("unknown type"),
            base64_len(str_of(value, "data").unwrap_or_default()),
        )),
        Some("resource_link") => {
            let mut text = format!(
                "[resource link: {} <{}>",
                str_of(value, "title")
                    .or_else(|| str_of(value, "name"))
                    .unwrap_or("unnamed"),
                str_of(value, "uri").unwrap_or_default()
            );
            if let Some(mime) = str_of(value, "mimeType") {
                text.push_str(&format!(" ({mime})"));
            }
            if let Some(description) = str_of(value, "description") {
                text.push_str(&format!(": {description}"));
            }
            text.push(']');
            Content::text(text)
        }
        Some("resource") => {
            let resource = value.get("resource").unwrap_or(&Value::Null);
            let uri = str_of(resource, "uri").unwrap_or_default();
            let mime = str_of(resource, "mimeType");
            if let Some(text) = str_of(resource, "text") {
                let kind = mime.map(|m| format!(" ({m})")).unwrap_or_default();
                return Content::text(format!("[resource <{uri}>{kind}]\n{text}"));
            }
            let blob = str_of(resource, "blob").unwrap_or_default();
            match mime {
                Some(m) if m.starts_with("image/") && !blob.is_empty() => Content::image(m, blob),
                _ => Content::text(format!(
                    "[resource <{uri}> ({}, {} bytes of binary data, not shown)]",
                    mime.unwrap_or("unknown type"),
                    base64_len(blob)
                )),
            }
        }
        _ => Content::json(value.clone()),
    }
}

/// The decoded length of base64 `data`, near enough for a note.
fn base64_len(data: &str) -> usize {
    let trimmed = data.trim_end_matches('=');
    trimmed.len() * 3 / 4
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_content_kind_is_mapped() {
        let content = vec![
            json!({"type": "text", "text": "hello"}),
            json!({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}),
            json!({"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}),
            json!({"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt", "mimeType": "text/plain", "description": "the a"}),
            json!({"type": "resource", "resource": {"uri": "mem://x", "mimeType": "text/plain", "text": "inside"}}),
            json!({"type": "resource", "resource": {"uri": "mem://b", "mimeType": "application/zip", "blob": "AAAA"}}),
            json!({"type": "resource", "resource": {"uri": "mem://i", "mimeType": "image/gif", "blob": "R0lG"}}),
            json!({"type": "hologram", "x": 1}),
        ];
        let blocks = blocks(&content, Some(&json!({"n": 1})));
        assert_eq!(blocks[0], Content::text("hello"));
        assert_eq!(blocks[1], Content::image("image/png", "iVBORw0KGgo="));
        assert_eq!(
            blocks[2],
            Content::text("[audio (audio/wav, 3 bytes): audio is not shown to the model]")
        );
        assert_eq!(
            blocks[3],
            Content::text("[resource link: a.txt <file:///a.txt> (text/plain): the a]")
        );
        assert_eq!(
            blocks[4],
            Content::text("[resource <mem://x> (text/plain)]\ninside")
        );
        assert_eq!(
            blocks[5],
            Content::text(
                "[resource <mem://b> (application/zip, 3 bytes of binary data, not shown)]"
            )
        );
        assert_eq!(blocks[6], Content::image("image/gif", "R0lG"));
        assert_eq!(
            blocks[7],
            Content::json(json!({"type": "hologram", "x": 1}))
        );
        assert_eq!(blocks[8], Content::json(json!({"n": 1})));
    }

    #[test]
    fn structured_content_repeated_as_text_is_not_doubled() {
        let content = vec![json!({"type": "text", "text": "{\"n\": 1}"})];
        assert_eq!(blocks(&content, Some(&json!({"n": 1}))).len(), 1);
        let content = vec![json!({"type": "text", "text": "HI"})];
        assert_eq!(blocks(&content, Some(&json!({"result": "HI"}))).len(), 1);
        assert_eq!(blocks(&content, Some(&json!({"result": "HO"}))).len(), 2);
        assert_eq!(
            blocks(&[], None),
            vec![Content::text("(the tool returned no content)")]
        );
    }
}
