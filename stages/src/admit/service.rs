use std::convert::Infallible;
use std::task::{Context, Poll};

use tower::Service;

use super::ResponseFuture;
use crate::breaker::Breaker;
use crate::call::{Admitted, Call, CancelReason, Executed, Started};
use crate::future::inner_accessors;
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
        let (call, Started { args, pre }) = call.split();
        ResponseFuture::accounted(
            self.inner.call(call.advance(Admitted { args, pre })),
            self.breaker.clone(),
            tool,
        )
    }
}
