//! Admit's response future: the breaker accounts the outcome.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use crate::breaker::Breaker;
use crate::call::{Call, Executed};
use crate::future::StageFuture;

pin_project_lite::pin_project! {
    /// Admit's future: the stage's own ending, or the inner future whose
    /// outcome is then accounted by the breaker.
    pub struct ResponseFuture<F> {
        #[pin]
        inner: StageFuture<F>,
        account: Option<(Breaker, Arc<str>)>,
    }
}

impl<F> ResponseFuture<F> {
    /// The call ended in the stage: not accounted.
    pub(super) fn unaccounted(ended: Call<Executed>) -> Self {
        Self {
            inner: StageFuture::ended(ended),
            account: None,
        }
    }

    /// The call went on to the inner service: its outcome is accounted
    /// for `tool` in `breaker`.
    pub(super) fn accounted(future: F, breaker: Breaker, tool: Arc<str>) -> Self {
        Self {
            inner: StageFuture::inner(future),
            account: Some((breaker, tool)),
        }
    }
}

impl<F> Future for ResponseFuture<F>
where
    F: Future<Output = Result<Call<Executed>, Infallible>>,
{
    type Output = Result<Call<Executed>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let Ok(call) = ready!(this.inner.poll(cx));
        if let Some((breaker, tool)) = this.account.take() {
            breaker.record(&tool, call.state.outcome);
        }
        Poll::Ready(Ok(call))
    }
}

impl<F> std::fmt::Debug for ResponseFuture<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseFuture").finish_non_exhaustive()
    }
}
