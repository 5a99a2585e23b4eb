//! The fixed texts a model reads (`semantics.md` §2), defined once.
//!
//! Named `texts` rather than `messages` so it is not mistaken for the root
//! crate's `message` module (tool-result messages in provider shapes).

/// An aborted call.
pub const CANCELLED: &str = "Tool execution cancelled.";
/// A call skipped by steering.
pub const SKIPPED: &str = "Skipped due to queued user message.";
/// A gate's denial without a reason.
pub const DENIED: &str = "tool execution denied";
