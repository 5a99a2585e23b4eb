use std::convert::Infallible;
use std::task::{Context, Poll};

use tower::Service;

use super::ResponseFuture;
use super::parse_and_coerce_owned;
use crate::call::{Call, Coerced, Executed, Resolved};
use crate::future::inner_accessors;
use crate::outcome::Outcome;

/// Parses the raw arguments and coerces them to the tool's schema. It
/// decides in `call()`, so it is ready when its inner service is.
#[derive(Clone, Debug)]
pub struct Coerce<S> {
    inner: S,
}

inner_accessors!(Coerce);

impl<S> Coerce<S> {
    /// Coerces the arguments of calls to `inner`.
    pub fn new(inner: S) -> Self {
        Self { inner }
    }
}

impl<S> Service<Call<Resolved>> for Coerce<S>
where
    S: Service<Call<Coerced>, Response = Call<Executed>, Error = Infallible>,
{
    type Response = Call<Executed>;
    type Error = Infallible;
    type Future = ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, call: Call<Resolved>) -> Self::Future {
        let (call, Resolved { tool, args, pre }) = call.split();
        // A parse + coerce kept on the call counts only if it was made for
        // the tool resolved here: the same registration, so the same schema.
        let result = match pre {
            Some(pre) if pre.is_for(&tool) => pre.result,
            _ => parse_and_coerce_owned(&tool, args),
        };
        match result {
            Err(message) => ResponseFuture::ended(call.end(Outcome::Failed, message)),
            Ok((args, coercions)) => {
                let next = call.advance(Coerced {
                    tool,
                    args,
                    coercions,
                });
                ResponseFuture::inner(self.inner.call(next))
            }
        }
    }
}
