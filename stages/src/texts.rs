//! The fixed texts a model reads (`docs/semantics.md` §2), defined once.
//!
//! Named `texts` rather than `messages` so it is not mistaken for the root
//! crate's `message` module (tool-result messages in provider shapes).

/// An aborted call.
pub const CANCELLED: &str = "Tool execution cancelled.";
/// A call skipped by steering.
pub const SKIPPED: &str = "Skipped due to queued user message.";
/// A gate's denial without a reason.
pub const DENIED: &str = "tool execution denied";

/// How every refusal of a call's arguments begins, before the tool's name
/// (`tool argument validation failed: read …`).
pub const ARGUMENTS_REFUSED: &str = "tool argument validation failed:";

/// `ARGUMENTS_REFUSED TOOL DETAIL`: a refusal of `tool`'s arguments.
pub(crate) fn arguments_refused(tool: &str, detail: impl std::fmt::Display) -> String {
    format!("{ARGUMENTS_REFUSED} {tool} {detail}")
}
