//! Runs a tool's filesystem work on tokio's blocking pool, handing it the
//! call's cancellation token so that loops can stop early.

use agentcore_stages::{CallContext, ToolError};
use tokio_util::sync::CancellationToken;

/// Runs `work` with spawn_blocking. If the call is cancelled, the token
/// fires and `work` is expected to return soon. The token `work` gets also
/// fires when this future is dropped before `work` ended (a timeout layer,
/// an abandoned call): work that is no longer awaited by anyone must not
/// pass its point of no return, since nobody would report that it did.
/// A panic in `work` becomes a plain error.
pub(crate) async fn run_blocking<T, F>(cx: &CallContext, work: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce(CancellationToken) -> Result<T, ToolError> + Send + 'static,
{
    let token = cx.cancellation().token().child_token();
    let guard = token.clone().drop_guard();
    let result = tokio::task::spawn_blocking(move || work(token)).await;
    // Ended while awaited: nothing to cancel.
    guard.disarm();
    match result {
        Ok(result) => result,
        Err(e) => Err(ToolError::new(format!("internal error in the tool: {e}"))),
    }
}

/// The message for arguments that do not deserialize (the schema normally
/// catches these first).
pub(crate) fn bad_args(tool: &str, e: serde_json::Error) -> ToolError {
    ToolError::new(format!("invalid arguments for {tool}: {e}"))
}
