use std::convert::Infallible;
use std::task::{Context, Poll};

use tower::Service;

use super::ResponseFuture;
use super::{Invalid, check};
use crate::call::{Call, Coerced, Executed, Validated};
use crate::future::{inner_accessors, ready_call, take_inner};
use crate::outcome::{Content, Outcome};

/// Checks the coerced arguments against the schema and the tool. It awaits before
/// calling its inner service, so it is always ready and readies the inner
/// service in its future.
#[derive(Clone, Debug)]
pub struct Validate<S> {
    inner: S,
}

inner_accessors!(Validate);

impl<S> Validate<S> {
    /// Validates the arguments of calls to `inner`.
    pub fn new(inner: S) -> Self {
        Self { inner }
    }
}

impl<S> Service<Call<Coerced>> for Validate<S>
where
    S: Service<Call<Validated>, Response = Call<Executed>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send,
{
    type Response = Call<Executed>;
    type Error = Infallible;
    type Future = ResponseFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, call: Call<Coerced>) -> Self::Future {
        let inner = take_inner(&mut self.inner);
        ResponseFuture::new(async move {
            let verdict = check(&call.state.tool, &call.state.args, &call.cx).await;
            let (call, state) = call.split();
            let Coerced {
                tool,
                args,
                coercions,
            } = state;
            match verdict {
                Err(Invalid { message, code }) => call.finish(
                    Outcome::Failed,
                    vec![Content::text(message)],
                    code,
                    coercions,
                ),
                Ok(()) => {
                    let next = call.advance(Validated {
                        tool,
                        args,
                        coercions,
                    });
                    ready_call(inner, next).await
                }
            }
        })
    }
}
