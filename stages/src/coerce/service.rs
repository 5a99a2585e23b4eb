use std::convert::Infallible;
use std::task::{Context, Poll};

use tower::Service;

use super::parse_and_coerce;
use crate::call::{Call, Coerced, Executed, Resolved};
use crate::future::{ResponseFuture, inner_accessors, ready_call, take_inner};
use crate::outcome::Outcome;

/// Parses the raw arguments and coerces them to the tool's schema.
#[derive(Clone, Debug)]
pub struct Coerce<S> {
    pub(super) inner: S,
}

inner_accessors!(Coerce);

impl<S> Service<Call<Resolved>> for Coerce<S>
where
    S: Service<Call<Coerced>, Response = Call<Executed>, Error = Infallible>
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

    fn call(&mut self, call: Call<Resolved>) -> Self::Future {
        match parse_and_coerce(&call.state.tool, &call.state.args) {
            Err(message) => {
                let ended = call.end(Outcome::Failed, message);
                ResponseFuture::new(async move { ended })
            }
            Ok((args, coercions)) => {
                let inner = take_inner(&mut self.inner);
                let tool = call.state.tool.clone();
                let next = call.with_state(Coerced {
                    tool,
                    args,
                    coercions,
                });
                ResponseFuture::new(ready_call(inner, next))
            }
        }
    }
}
