//! The one way the tools reach tokio's blocking pool: [`spawn`], and on it
//! [`run_blocking`], which hands the work the call's cancellation token so
//! that loops can stop early.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use agentcore_stages::{CallContext, ToolError};
use tokio::task::{JoinError, JoinHandle};
use tokio_util::sync::CancellationToken;

/// Blocking work that ended without a result: it panicked (or the runtime
/// shut down). `Display` is the text the model reads (as a [`ToolError`]
/// through `?`).
#[derive(Debug, thiserror::Error)]
#[error("internal error in the tool: {0}")]
pub(crate) struct Lost(JoinError);

/// Work running on the blocking pool (started by [`spawn`]); awaiting it
/// gives the work's value, or [`Lost`].
#[derive(Debug)]
pub(crate) struct Blocking<T>(JoinHandle<T>);

impl<T> Future for Blocking<T> {
    type Output = Result<T, Lost>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.0)
            .poll(cx)
            .map(|done| done.map_err(Lost))
    }
}

/// Starts `work` on tokio's blocking pool at once (not when awaited).
pub(crate) fn spawn<T, F>(work: F) -> Blocking<T>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    Blocking(tokio::task::spawn_blocking(work))
}

/// Runs `work` on the blocking pool. If the call is cancelled, the token
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
    let result = spawn(move || work(token)).await;
    // Ended while awaited: nothing to cancel.
    guard.disarm();
    result?
}
