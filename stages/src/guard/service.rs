use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use tower::Service;

use super::ResponseFuture;
use super::future::EndGuard;
use crate::call::{Call, Executed, Started, Unvalidated};
use crate::event::{Event, EventSink};
use crate::future::{inner_accessors, take_inner};
use crate::outcome::ToolResult;
use crate::registry::ToolRegistry;

/// Emits Start in `call()` and exactly one End per call. It catches the
/// inner stages' panics around their readiness, their `call()` and their
/// future, so it is always ready and readies the inner service in its
/// future.
#[derive(Clone, Debug)]
pub struct EventGuard<S> {
    inner: S,
    registry: Arc<ToolRegistry>,
    sink: EventSink,
}

inner_accessors!(EventGuard);

impl<S> EventGuard<S> {
    /// Emits Start and End for every call to `inner`; labels come from `registry`, events go to `sink` unless a call brings its own.
    pub fn new(inner: S, registry: Arc<ToolRegistry>, sink: EventSink) -> Self {
        Self {
            inner,
            registry,
            sink,
        }
    }
}

impl<S> Service<Call<Unvalidated>> for EventGuard<S>
where
    S: Service<Call<Started>, Response = Call<Executed>, Error = Infallible> + Clone,
{
    type Response = ToolResult;
    type Error = Infallible;
    type Future = ResponseFuture<S, S::Future>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, call: Call<Unvalidated>) -> Self::Future {
        let inner = take_inner(&mut self.inner);

        call.cx.events.bind_default(&self.sink);
        let label = self.registry.label(&call.tool);
        call.cx.events.emit_with(|| Event::ToolExecStart {
            call_id: String::from(&*call.cx.call_id),
            tool: String::from(&*call.tool),
            label: label.clone(),
            args: call.state.args.to_value(),
        });
        let guard = EndGuard {
            events: call.cx.events.clone(),
            cancellation: call.cx.cancellation.clone(),
            call_id: call.cx.call_id.clone(),
            tool: call.tool.clone(),
            label,
            started: Instant::now(),
            armed: true,
        };
        let (call, Unvalidated { args, pre }) = call.split();
        ResponseFuture::new(inner, call.advance(Started { args, pre }), guard)
    }
}
