use std::convert::Infallible;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures::FutureExt;
use tower::Service;

use super::ResponseFuture;
use crate::call::{Call, CallEvents, CancelReason, Cancellation, Executed, Started, Unvalidated};
use crate::event::{Event, EventSink};
use crate::future::{inner_accessors, ready_call, take_inner};
use crate::outcome::{Content, Outcome, ToolResult};
use crate::panic;
use crate::registry::ToolRegistry;
use crate::texts;

/// Emits Start in `call()` and exactly one End per call. It catches the
/// inner stages' panics around their future, so it is always ready and
/// readies the inner service in its future.
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
    S: Service<Call<Started>, Response = Call<Executed>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send,
{
    type Response = ToolResult;
    type Error = Infallible;
    type Future = ResponseFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, call: Call<Unvalidated>) -> Self::Future {
        let inner = take_inner(&mut self.inner);

        call.cx.events.bind_default(&self.sink);
        let label = self.registry.label(&call.tool);
        call.cx.events.emit(Event::ToolExecStart {
            call_id: call.call_id.clone(),
            tool: call.tool.clone(),
            label: label.clone(),
            args: call.state.args.to_value(),
        });
        let mut guard = EndGuard {
            events: call.cx.events.clone(),
            cancellation: call.cx.cancellation.clone(),
            call_id: call.call_id.clone(),
            tool: call.tool.clone(),
            label,
            started: Instant::now(),
            armed: true,
        };
        let (call, Unvalidated { args, pre }) = call.split();
        let next = call.advance(Started { args, pre });
        ResponseFuture::new(async move {
            let ended = AssertUnwindSafe(ready_call(inner, next))
                .catch_unwind()
                .await;
            let result = match ended {
                Ok(call) => guard.result(call.state),
                Err(payload) => guard.result(Executed {
                    outcome: Outcome::Failed,
                    content: vec![Content::text(panic::failure_text(&guard.tool, &*payload))],
                    error_code: None,
                    coercions: Vec::new(),
                }),
            };
            guard.end(&result);
            result
        })
    }
}

/// Emits the End event once: on completion, or on drop with `Cancelled`.
struct EndGuard {
    events: CallEvents,
    cancellation: Cancellation,
    call_id: String,
    tool: String,
    label: Option<String>,
    started: Instant,
    armed: bool,
}

impl EndGuard {
    fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    fn result(&self, executed: Executed) -> ToolResult {
        ToolResult {
            call_id: self.call_id.clone(),
            tool: self.tool.clone(),
            label: self.label.clone(),
            outcome: executed.outcome,
            content: executed.content,
            error_code: executed.error_code,
            coercions: executed.coercions,
            duration: self.elapsed(),
        }
    }

    fn end(&mut self, result: &ToolResult) {
        self.armed = false;
        self.events.emit_end(Event::end(result));
    }
}

impl Drop for EndGuard {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        // The caller dropped the call's future: stop whatever the call
        // started, and report it cancelled.
        self.cancellation.cancel(CancelReason::Abort);
        let result = self.result(Executed {
            outcome: Outcome::Cancelled,
            content: vec![Content::text(texts::CANCELLED)],
            error_code: None,
            coercions: Vec::new(),
        });
        self.end(&result);
    }
}
