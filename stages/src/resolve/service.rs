use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use tower::Service;

use crate::call::{Admitted, Call, Executed, Resolved};
use crate::future::{ResponseFuture, inner_accessors, ready_call, take_inner};
use crate::outcome::Outcome;
use crate::registry::ToolRegistry;

/// Finds the call's tool in the registry.
#[derive(Clone, Debug)]
pub struct Resolve<S> {
    pub(super) inner: S,
    pub(super) registry: Arc<ToolRegistry>,
}

inner_accessors!(Resolve);

impl<S> Service<Call<Admitted>> for Resolve<S>
where
    S: Service<Call<Resolved>, Response = Call<Executed>, Error = Infallible>
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

    fn call(&mut self, call: Call<Admitted>) -> Self::Future {
        let Some(tool) = self.registry.get(&call.tool).cloned() else {
            let message = format!("tool \"{}\" not found", call.tool);
            let ended = call.end(Outcome::Failed, message);
            return ResponseFuture::new(async move { ended });
        };
        let inner = take_inner(&mut self.inner);
        let args = call.state.args;
        let next = Call {
            id: call.id,
            tool: call.tool,
            cx: call.cx,
            state: Resolved { tool, args },
        };
        ResponseFuture::new(ready_call(inner, next))
    }
}
