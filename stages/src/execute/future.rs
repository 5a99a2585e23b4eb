//! The response futures of [`Execute`](super::Execute) and
//! [`Boundary`](super::Boundary).

use std::convert::Infallible;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tower::{BoxError, Service};

use crate::call::{Call, Executed, Gated};
use crate::coerce::Coercion;
use crate::future::stage_future;
use crate::outcome::{Content, Outcome};
use crate::panic;

stage_future! {
    /// Execute's future: the tool's run. Boxed: the tool's own future
    /// borrows the tool and the call's context, which this future owns.
    boxed ResponseFuture => Call<Executed>
}

pin_project_lite::pin_project! {
    /// The boundary's future: the user middleware `S` readied and called,
    /// then its future `F`; its errors and panics turned into `Failed`.
    pub struct BoundaryFuture<S, F> {
        #[pin]
        state: State<S, F>,
        // Kept to report a failure after the middleware consumed the call.
        shell: Option<(Call<()>, Vec<Coercion>)>,
    }
}

pin_project_lite::pin_project! {
    #[project = StateProj]
    enum State<S, F> {
        Start { inner: S, call: Option<Call<Gated>> },
        Running { #[pin] future: F },
        Done,
    }
}

impl<S, F> BoundaryFuture<S, F> {
    pub(super) fn new(inner: S, call: Call<Gated>) -> Self {
        let shell = (call.shell(), call.state.coercions.clone());
        Self {
            state: State::Start {
                inner,
                call: Some(call),
            },
            shell: Some(shell),
        }
    }
}

impl<S, F, E> Future for BoundaryFuture<S, F>
where
    S: Service<Call<Gated>, Response = Call<Executed>, Error = E, Future = F>,
    F: Future<Output = Result<Call<Executed>, E>>,
    E: Into<BoxError>,
{
    type Output = Result<Call<Executed>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        let mut state = this.state.as_mut();
        let ran = catch_unwind(AssertUnwindSafe(|| {
            loop {
                match state.as_mut().project() {
                    StateProj::Start { inner, call } => {
                        if let Err(err) = ready!(inner.poll_ready(cx)) {
                            return Poll::Ready(Err(err.into()));
                        }
                        let Some(call) = call.take() else {
                            // Taken only here, and the state moves on at once.
                            unreachable!("the call is taken once")
                        };
                        let future = inner.call(call);
                        state.set(State::Running { future });
                    }
                    StateProj::Running { future } => {
                        return future.poll(cx).map_err(Into::into);
                    }
                    // Polled after completion: a caller bug, as for any future.
                    StateProj::Done => panic!("boundary future polled after completion"),
                }
            }
        }));
        let Some((shell, coercions)) = this.shell.take() else {
            panic!("boundary future polled after completion");
        };
        let message = match ran {
            Ok(Poll::Pending) => {
                *this.shell = Some((shell, coercions));
                return Poll::Pending;
            }
            Ok(Poll::Ready(Ok(executed))) => {
                this.state.set(State::Done);
                return Poll::Ready(Ok(executed));
            }
            Ok(Poll::Ready(Err(err))) => middleware_error_text(&shell.tool, err),
            Err(payload) => panic::failure_text(&shell.tool, &*payload),
        };
        this.state.set(State::Done);
        Poll::Ready(Ok(shell.finish(
            Outcome::Failed,
            vec![Content::text(message)],
            None,
            coercions,
        )))
    }
}

impl<S, F> std::fmt::Debug for BoundaryFuture<S, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoundaryFuture").finish_non_exhaustive()
    }
}

/// The error's text; a tower timeout reads `tool "NAME" timed out`.
fn middleware_error_text(tool: &str, err: BoxError) -> String {
    if err.is::<tower::timeout::error::Elapsed>() {
        format!("tool \"{tool}\" timed out")
    } else {
        err.to_string()
    }
}
