//! The event guard's response future: the call through the inner stages,
//! its End emitted once (on drop too, as `Cancelled`), a panic in them
//! turned into a `Failed` result. A named state machine: readying the inner
//! service, then its future.

use std::convert::Infallible;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Instant;

use tower::Service;

use crate::call::{Call, CallEvents, CancelReason, Cancellation, Executed, Started};
use crate::event::Event;
use crate::outcome::{Content, Outcome, ToolResult};
use crate::{panic, texts};

pin_project_lite::pin_project! {
    /// The event guard's future: the inner service `S` readied and called,
    /// then its future `F`; resolves to the call's [`ToolResult`].
    pub struct ResponseFuture<S, F> {
        #[pin]
        state: State<S, F>,
        guard: EndGuard,
    }
}

pin_project_lite::pin_project! {
    #[project = StateProj]
    enum State<S, F> {
        Start { inner: S, call: Option<Call<Started>> },
        Running { #[pin] future: F },
        Done,
    }
}

impl<S, F> ResponseFuture<S, F> {
    pub(super) fn new(inner: S, call: Call<Started>, guard: EndGuard) -> Self {
        Self {
            state: State::Start {
                inner,
                call: Some(call),
            },
            guard,
        }
    }
}

impl<S, F> Future for ResponseFuture<S, F>
where
    S: Service<Call<Started>, Response = Call<Executed>, Error = Infallible, Future = F>,
    F: Future<Output = Result<Call<Executed>, Infallible>>,
{
    type Output = Result<ToolResult, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        if let StateProj::Done = this.state.as_mut().project() {
            // Polled after completion: a caller bug, as for any future.
            panic!("event guard future polled after completion");
        }
        let mut state = this.state.as_mut();
        let ran = catch_unwind(AssertUnwindSafe(|| {
            loop {
                match state.as_mut().project() {
                    StateProj::Start { inner, call } => {
                        let Ok(()) = ready!(inner.poll_ready(cx));
                        let Some(call) = call.take() else {
                            // Taken only here, and the state moves on at once.
                            unreachable!("the call is taken once")
                        };
                        let future = inner.call(call);
                        state.set(State::Running { future });
                    }
                    StateProj::Running { future } => return future.poll(cx),
                    StateProj::Done => unreachable!("checked above"),
                }
            }
        }));
        let executed = match ran {
            Ok(Poll::Pending) => return Poll::Pending,
            Ok(Poll::Ready(Ok(call))) => call.state,
            Err(payload) => Executed {
                outcome: Outcome::Failed,
                content: vec![Content::text(panic::failure_text(
                    &this.guard.tool,
                    &*payload,
                ))],
                error_code: None,
                coercions: Vec::new(),
            },
        };
        this.state.set(State::Done);
        let result = this.guard.result(executed);
        this.guard.end(&result);
        Poll::Ready(Ok(result))
    }
}

impl<S, F> std::fmt::Debug for ResponseFuture<S, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseFuture").finish_non_exhaustive()
    }
}

/// Emits the End event once: on completion, or on drop with `Cancelled`.
pub(super) struct EndGuard {
    pub(super) events: CallEvents,
    pub(super) cancellation: Cancellation,
    pub(super) call_id: Arc<str>,
    pub(super) tool: Arc<str>,
    pub(super) label: Option<String>,
    pub(super) started: Instant,
    pub(super) armed: bool,
}

impl EndGuard {
    fn result(&self, executed: Executed) -> ToolResult {
        ToolResult {
            call_id: String::from(&*self.call_id),
            tool: String::from(&*self.tool),
            label: self.label.clone(),
            outcome: executed.outcome,
            content: executed.content,
            error_code: executed.error_code,
            coercions: executed.coercions,
            duration: self.started.elapsed(),
        }
    }

    fn end(&mut self, result: &ToolResult) {
        self.armed = false;
        self.events.emit_end_with(|| Event::end(result));
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
