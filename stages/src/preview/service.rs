use std::convert::Infallible;
use std::task::{Context, Poll};

use tower::Service;

use super::ResponseFuture;
use super::compute;
use crate::call::{Call, Executed, Previewed, Validated};
use crate::future::{inner_accessors, ready_call, take_inner};
use crate::outcome::{Content, Outcome};

/// Computes and emits the tool's preview. It awaits before
/// calling its inner service, so it is always ready and readies the inner
/// service in its future.
#[derive(Clone, Debug)]
pub struct Preview<S> {
    inner: S,
}

inner_accessors!(Preview);

impl<S> Preview<S> {
    /// Previews calls to `inner`.
    pub fn new(inner: S) -> Self {
        Self { inner }
    }
}

impl<S> Service<Call<Validated>> for Preview<S>
where
    S: Service<Call<Previewed>, Response = Call<Executed>, Error = Infallible>
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

    fn call(&mut self, call: Call<Validated>) -> Self::Future {
        let inner = take_inner(&mut self.inner);
        ResponseFuture::new(async move {
            let preview = compute(&call.state.tool, &call.state.args, &call.cx).await;
            let (call, state) = call.split();
            let Validated {
                tool,
                args,
                coercions,
            } = state;
            match preview {
                Err(message) => call.finish(
                    Outcome::Failed,
                    vec![Content::text(message)],
                    None,
                    coercions,
                ),
                Ok(preview) => {
                    let next = call.advance(Previewed {
                        tool,
                        args,
                        coercions,
                        preview,
                    });
                    ready_call(inner, next).await
                }
            }
        })
    }
}
