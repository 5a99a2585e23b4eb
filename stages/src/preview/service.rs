use std::convert::Infallible;
use std::task::{Context, Poll};

use tower::Service;

use super::ResponseFuture;
use super::outcome;
use crate::call::{Call, Executed, Previewed, Validated};
use crate::future::{inner_accessors, ready_call, take_inner};
use crate::outcome::{Content, Outcome};

/// Computes and emits the tool's preview. It decides in `call()` when the
/// tool's `preview` settles without awaiting, so it is ready when its inner
/// service is; otherwise its future awaits the preview, then calls the
/// inner service it was readied with.
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
    type Future = ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, call: Call<Validated>) -> Self::Future {
        let tool = &call.state.tool;
        let shape = &tool.hooks().preview;
        let settled = if shape.may_settle() {
            shape.settle_now(tool.tool().preview(&call.state.args, &call.cx))
        } else {
            None
        };
        if let Some(answer) = settled {
            return match outcome(&call.state.tool, &call.cx, answer) {
                Err(message) => ResponseFuture::ended(refuse(call, message)),
                Ok(preview) => ResponseFuture::inner(self.inner.call(previewed(call, preview))),
            };
        }
        let inner = take_inner(&mut self.inner);
        ResponseFuture::awaiting(async move {
            let tool = &call.state.tool;
            let hook = tool.tool().preview(&call.state.args, &call.cx);
            tool.hooks().preview.learn(&hook);
            match outcome(tool, &call.cx, hook.await) {
                Err(message) => refuse(call, message),
                Ok(preview) => ready_call(inner, previewed(call, preview)).await,
            }
        })
    }
}

/// The call ended here: the preview failed with `message`.
fn refuse(call: Call<Validated>, message: String) -> Call<Executed> {
    let (call, Validated { coercions, .. }) = call.split();
    call.finish(
        Outcome::Failed,
        vec![Content::text(message)],
        None,
        coercions,
    )
}

/// The call, previewed.
fn previewed(call: Call<Validated>, preview: Option<String>) -> Call<Previewed> {
    let (call, state) = call.split();
    let Validated {
        tool,
        args,
        coercions,
    } = state;
    call.advance(Previewed {
        tool,
        args,
        coercions,
        preview,
    })
}
