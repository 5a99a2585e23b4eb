use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tower::Service;

use crate::breaker::Breaker;
use crate::call::{Admitted, Call, CancelReason, Executed, Started};
use crate::future::{StageFuture, inner_accessors};
use crate::outcome::Outcome;
use crate::texts;

/// Ends cancelled calls and calls of disabled tools; accounts the rest. It
/// decides in `call()`, so it is ready when its inner service is.
#[derive(Clone, Debug)]
pub struct Admit<S> {
    inner: S,
    breaker: Breaker,
    max_tool_errors: u32,
}

inner_accessors!(Admit);

impl<S> Admit<S> {
    /// Admits calls to `inner`, counting failures in `breaker`; `max_tool_errors` of 0 disables it.
    pub fn new(inner: S, breaker: Breaker, max_tool_errors: u32) -> Self {
        Self {
            inner,
            breaker,
            max_tool_errors,
        }
    }
}

impl<S> Service<Call<Started>> for Admit<S>
where
    S: Service<Call<Admitted>, Response = Call<Executed>, Error = Infallible>,
{
    type Response = Call<Executed>;
    type Error = Infallible;
    type Future = ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, call: Call<Started>) -> Self::Future {
        if let Some(reason) = call.cx.cancellation.reason() {
            let ended = match reason {
                CancelReason::Abort => call.end(Outcome::Cancelled, texts::CANCELLED),
                CancelReason::Skip => call.end(Outcome::Skipped, texts::SKIPPED),
            };
            return ResponseFuture::unaccounted(ended);
        }
        let failures = self.breaker.count(&call.tool);
        if self.max_tool_errors > 0 && failures >= self.max_tool_errors {
            let message = format!(
                "tool \"{}\" disabled after {failures} consecutive errors",
                call.tool
            );
            return ResponseFuture::unaccounted(call.end(Outcome::Disabled, message));
        }
        let tool = call.tool.clone();
        let (call, Started { args }) = call.split();
        ResponseFuture {
            inner: StageFuture::inner(self.inner.call(call.advance(Admitted { args }))),
            account: Some((self.breaker.clone(), tool)),
        }
    }
}

pin_project_lite::pin_project! {
    /// Admit's future: the stage's own ending, or the inner future whose
    /// outcome is then accounted by the breaker.
    pub struct ResponseFuture<F> {
        #[pin]
        inner: StageFuture<F>,
        account: Option<(Breaker, String)>,
    }
}

impl<F> ResponseFuture<F> {
    fn unaccounted(ended: Call<Executed>) -> Self {
        Self {
            inner: StageFuture::ended(ended),
            account: None,
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
