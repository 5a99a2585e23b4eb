use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use tower::Service;

use super::ResponseFuture;
use crate::call::{Admitted, Call, Executed, Resolved};
use crate::future::inner_accessors;
use crate::outcome::Outcome;
use crate::registry::ToolRegistry;

/// Finds the call's tool in the registry. It decides in `call()`, so it is
/// ready when its inner service is.
#[derive(Clone, Debug)]
pub struct Resolve<S> {
    inner: S,
    registry: Arc<ToolRegistry>,
}

inner_accessors!(Resolve);

impl<S> Resolve<S> {
    /// Resolves calls to `inner` against `registry`.
    pub fn new(inner: S, registry: Arc<ToolRegistry>) -> Self {
        Self { inner, registry }
    }
}

impl<S> Service<Call<Admitted>> for Resolve<S>
where
    S: Service<Call<Resolved>, Response = Call<Executed>, Error = Infallible>,
{
    type Response = Call<Executed>;
    type Error = Infallible;
    type Future = ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, call: Call<Admitted>) -> Self::Future {
        let Some(tool) = self.registry.get(&call.tool).cloned() else {
            let message = format!("tool \"{}\" not found", call.tool);
            return ResponseFuture::ended(call.end(Outcome::Failed, message));
        };
        let (call, Admitted { args, pre }) = call.split();
        ResponseFuture::inner(self.inner.call(call.advance(Resolved { tool, args, pre })))
    }
}
