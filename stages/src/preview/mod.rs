//! Preview: the tool's preview (e.g. a unified diff), computed before the
//! gate and emitted as `ToolExecUpdate{kind: preview}`.

mod future;
mod layer;
mod service;

use serde_json::Value;

pub use future::ResponseFuture;
pub use layer::PreviewLayer;
pub use service::Preview;

use crate::call::CallContext;
use crate::outcome::{Content, ToolError};
use crate::registry::RegisteredTool;

/// Computes the tool's preview and emits it; the error is the message of
/// `docs/semantics.md` §2 (`preview tool "NAME": ERR`).
pub(crate) async fn compute(
    tool: &RegisteredTool,
    args: &Value,
    cx: &CallContext,
) -> Result<Option<String>, String> {
    outcome(tool, cx, tool.tool().preview(args, cx).await)
}

/// What the tool's `preview` answered: emitted when there is a preview, or
/// the message the stage ends the call with.
pub(crate) fn outcome(
    tool: &RegisteredTool,
    cx: &CallContext,
    answer: Result<Option<String>, ToolError>,
) -> Result<Option<String>, String> {
    match answer {
        Ok(Some(preview)) => {
            cx.emit_preview(&preview);
            Ok(Some(preview))
        }
        Ok(None) => Ok(None),
        Err(err) => {
            let text: Vec<&str> = err.content.iter().filter_map(Content::as_text).collect();
            Err(format!(
                "preview tool \"{}\": {}",
                tool.name(),
                text.join("\n")
            ))
        }
    }
}
