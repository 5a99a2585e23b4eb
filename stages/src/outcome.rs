//! What a call ends with: its [`Outcome`], the content blocks a tool returns,
//! and the [`ToolResult`] reported in the End event.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::coerce::Coercion;

/// How a call ended. Every outcome but [`Outcome::Success`] is an error for
/// the model (`is_error = true`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The tool ran and returned its output.
    Success,
    /// The call could not be made or the tool failed; the model may correct it.
    Failed,
    /// The gate (policy or a person) refused the call.
    Denied,
    /// The call was aborted before or while it ran.
    Cancelled,
    /// The circuit breaker disabled the tool after repeated failures.
    Disabled,
    /// A queued user message (steering) skipped the call before it started.
    Skipped,
}

impl Outcome {
    /// True for every outcome except [`Outcome::Success`].
    pub const fn is_error(self) -> bool {
        !matches!(self, Outcome::Success)
    }

    /// The snake_case name used on the wire (`"success"`, `"failed"`, …).
    pub const fn as_str(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Failed => "failed",
            Outcome::Denied => "denied",
            Outcome::Cancelled => "cancelled",
            Outcome::Disabled => "disabled",
            Outcome::Skipped => "skipped",
        }
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One block of a tool's output.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Content {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// A structured JSON value.
    Json {
        /// The value.
        value: Value,
    },
    /// An image, base64-encoded.
    Image {
        /// The media type, e.g. `image/png`.
        media_type: String,
        /// The image bytes in standard base64.
        data: String,
    },
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into() }
    }

    /// A JSON block.
    pub fn json(value: Value) -> Self {
        Content::Json { value }
    }

    /// An image block from its media type and base64 data.
    pub fn image(media_type: impl Into<String>, data: impl Into<String>) -> Self {
        Content::Image {
            media_type: media_type.into(),
            data: data.into(),
        }
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text { text } => Some(text),
            _ => None,
        }
    }
}

/// What a tool's `execute` returns on success: one or more content blocks.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolOutput {
    /// The blocks, in order.
    pub content: Vec<Content>,
}

impl ToolOutput {
    /// Output made of one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: vec![Content::text(text)],
        }
    }

    /// Output made of one JSON block.
    pub fn json(value: Value) -> Self {
        Self {
            content: vec![Content::json(value)],
        }
    }

    /// Output made of the given blocks.
    pub fn blocks(content: Vec<Content>) -> Self {
        Self { content }
    }
}

impl From<String> for ToolOutput {
    fn from(text: String) -> Self {
        Self::text(text)
    }
}

impl From<&str> for ToolOutput {
    fn from(text: &str) -> Self {
        Self::text(text)
    }
}

/// A tool's failure, as a message the model can act on.
///
/// `cancelled` marks an error a tool returns because its call was cancelled
/// (for tools that watch the cancellation token and want to keep partial
/// output); the call then ends [`Outcome::Cancelled`] with this content.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ToolError {
    /// The content reported to the model; usually one text block.
    pub content: Vec<Content>,
    /// True when the tool stopped because the call was cancelled.
    pub cancelled: bool,
}

impl ToolError {
    /// A failure with one text block.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            content: vec![Content::text(message)],
            cancelled: false,
        }
    }

    /// A failure whose content is `content` (text, images, …).
    pub fn with_content(content: Vec<Content>) -> Self {
        Self {
            content,
            cancelled: false,
        }
    }

    /// A stop caused by cancellation, keeping what the tool produced.
    pub fn cancelled(content: Vec<Content>) -> Self {
        Self {
            content,
            cancelled: true,
        }
    }
}

impl<E: std::error::Error> From<E> for ToolError {
    fn from(err: E) -> Self {
        Self::new(err.to_string())
    }
}

/// The end of one call: what the End event carries and the turn collects.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ToolResult {
    /// The call's id, as the model gave it.
    pub call_id: String,
    /// The tool name the model asked for.
    pub tool: String,
    /// The tool's label, or `None` for an unknown tool or one without a label.
    pub label: Option<String>,
    /// How the call ended.
    pub outcome: Outcome,
    /// What the model will read.
    pub content: Vec<Content>,
    /// The validator's numeric code, if a tool's `validate` refused the call.
    pub error_code: Option<i64>,
    /// The argument coercions made for this call.
    pub coercions: Vec<Coercion>,
    /// From the Start event to the End event.
    pub duration: Duration,
}

impl ToolResult {
    /// A result of `tool` for the call `call_id`: `outcome` with `content`,
    /// no label, error code or coercions, and no duration (set the public
    /// fields for more). The pipeline builds its own; this is for tests and
    /// harnesses that report a call they ran themselves.
    pub fn new(
        call_id: impl Into<String>,
        tool: impl Into<String>,
        outcome: Outcome,
        content: Vec<Content>,
    ) -> Self {
        Self {
            call_id: call_id.into(),
            tool: tool.into(),
            label: None,
            outcome,
            content,
            error_code: None,
            coercions: Vec::new(),
            duration: Duration::ZERO,
        }
    }

    /// `true` for every outcome but success.
    pub fn is_error(&self) -> bool {
        self.outcome.is_error()
    }

    /// All text blocks joined with newlines; handy in tests and logs.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for block in &self.content {
            if let Some(text) = block.as_text() {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(text);
            }
        }
        out
    }
}
