//! The future every stage service returns.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::future::BoxFuture;

use crate::call::{Call, Executed};

/// The response future of a stage service: it always resolves `Ok`, since
/// stage failures are results, not errors.
pub struct ResponseFuture<T> {
    inner: BoxFuture<'static, T>,
}

impl<T> ResponseFuture<T> {
    pub(crate) fn new(fut: impl Future<Output = T> + Send + 'static) -> Self {
        Self {
            inner: Box::pin(fut),
        }
    }
}

impl<T> Future for ResponseFuture<T> {
    type Output = Result<T, Infallible>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.inner.as_mut().poll(cx).map(Ok)
    }
}

impl<T> std::fmt::Debug for ResponseFuture<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseFuture").finish_non_exhaustive()
    }
}

/// Drives `inner` to readiness, then calls it: stages are always ready
/// themselves and wait for their inner service inside their future.
pub(crate) async fn ready_call<S, R>(mut inner: S, req: R) -> S::Response
where
    S: tower::Service<R, Error = Infallible>,
{
    use tower::ServiceExt;
    let Ok(svc) = inner.ready().await;
    let Ok(response) = svc.call(req).await;
    response
}

/// `get_ref`, `get_mut` and `into_inner` for a stage service whose inner
/// service is the field `inner`.
macro_rules! inner_accessors {
    ($name:ident) => {
        impl<S> $name<S> {
            /// The inner service.
            pub fn get_ref(&self) -> &S {
                &self.inner
            }

            /// The inner service, mutably.
            pub fn get_mut(&mut self) -> &mut S {
                &mut self.inner
            }

            /// The inner service, owned.
            pub fn into_inner(self) -> S {
                self.inner
            }
        }
    };
}

/// Takes the inner service for one call, leaving a clone in its place
/// (the inner service may not be ready again).
pub(crate) fn take_inner<S: Clone>(inner: &mut S) -> S {
    let clone = inner.clone();
    std::mem::replace(inner, clone)
}

pub(crate) use inner_accessors;

pin_project_lite::pin_project! {
    /// The future of a stage that decides synchronously in `call()`: either
    /// the call ended in the stage, or the inner service's future.
    pub struct StageFuture<F> {
        #[pin]
        kind: Kind<F>,
    }
}

pin_project_lite::pin_project! {
    #[project = KindProj]
    enum Kind<F> {
        Ended { call: Option<Call<Executed>> },
        Inner { #[pin] future: F },
    }
}

impl<F> StageFuture<F> {
    /// The call ended in the stage.
    pub(crate) fn ended(call: Call<Executed>) -> Self {
        Self {
            kind: Kind::Ended { call: Some(call) },
        }
    }

    /// The call went on to the inner service.
    pub(crate) fn inner(future: F) -> Self {
        Self {
            kind: Kind::Inner { future },
        }
    }
}

impl<F> Future for StageFuture<F>
where
    F: Future<Output = Result<Call<Executed>, Infallible>>,
{
    type Output = Result<Call<Executed>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().kind.project() {
            KindProj::Ended { call } => match call.take() {
                Some(call) => Poll::Ready(Ok(call)),
                // Polled after completion: a caller bug, as for any future.
                None => panic!("stage future polled after completion"),
            },
            KindProj::Inner { future } => future.poll(cx),
        }
    }
}

impl<F> std::fmt::Debug for StageFuture<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StageFuture").finish_non_exhaustive()
    }
}
