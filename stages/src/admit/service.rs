use std::convert::Infallible;
use std::task::{Context, Poll};

use tower::Service;

use crate::breaker::Breaker;
use crate::call::{Admitted, Call, CancelReason, Executed, Started};
use crate::future::{ResponseFuture, inner_accessors, ready_call, take_inner};
use crate::messages;
use crate::outcome::Outcome;

/// Ends cancelled calls and calls of disabled tools; accounts the rest.
#[derive(Clone, Debug)]
pub struct Admit<S> {
    pub(super) inner: S,
    pub(super) breaker: Breaker,
    pub(super) max_tool_errors: u32,
}

inner_accessors!(Admit);

impl<S> Service<Call<Started>> for Admit<S>
where
    S: Service<Call<Admitted>, Response = Call<Executed>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send,
{
    type Response = Call<Executed>;
    type Error = Infallible;
    type Future = ResponseFuture<Call<Executed>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, call: Call<Started>) -> Self::Future {
        if let Some(reason) = call.cx.cancellation.reason() {
            let ended = match reason {
                CancelReason::Abort => call.end(Outcome::Cancelled, messages::CANCELLED),
                CancelReason::Skip => call.end(Outcome::Skipped, messages::SKIPPED),
            };
            return ResponseFuture::new(async move { ended });
        }
        let failures = self.breaker.count(&call.tool);
        if self.max_tool_errors > 0 && failures >= self.max_tool_errors {
            let message = format!(
                "tool \"{}\" disabled after {failures} consecutive errors",
                call.tool
            );
            let ended = call.end(Outcome::Disabled, message);
            return ResponseFuture::new(async move { ended });
        }
        let inner = take_inner(&mut self.inner);
        let breaker = self.breaker.clone();
        let args = call.state.args;
        let next = Call {
            id: call.id,
            tool: call.tool,
            cx: call.cx,
            state: Admitted { args },
        };
        ResponseFuture::new(async move {
            let tool = next.tool.clone();
            let ended = ready_call(inner, next).await;
            breaker.record(&tool, ended.state.outcome);
            ended
        })
    }
}
