//! The stage's response future.

use crate::future::stage_future;
use crate::outcome::ToolResult;

stage_future! {
    /// The event guard's future: the call through the inner stages, its End
/// emitted once (on drop too, as `Cancelled`).
    boxed ResponseFuture => ToolResult
}
