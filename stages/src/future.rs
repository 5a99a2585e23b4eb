//! What the stage services share: the readiness contract, and the two
//! shapes of a stage's response future. Each stage declares its own future
//! in its folder (`resolve::ResponseFuture`, …) with [`stage_future!`].
//!
//! # Readiness
//!
//! One contract for every stage:
//!
//! - A stage that decides synchronously in `call()` (Admit, Resolve,
//!   Coerce) calls its inner service there and then, so it passes
//!   readiness through: it is ready when its inner service is, as tower's
//!   own synchronous middleware is. Its future is the call ended in the
//!   stage, or the inner service's future.
//! - A stage that must await before it can call its inner service (the
//!   event guard, Validate, Preview, Gate, the Boundary, and Execute) is
//!   always ready: it takes the inner service it was readied with (leaving
//!   a clone behind) and drives it to readiness inside its future. Its
//!   future is its `async` block, boxed.
//!
//! Readiness therefore stops at the first awaiting stage: the standard
//! pipeline is always ready, and backpressure belongs in front of it (the
//! scheduler) or inside your middleware's own future.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::future::BoxFuture;

use crate::call::{Call, Executed};

/// The boxed `async` block of a stage that awaits before calling its inner
/// service: it always resolves `Ok`, since stage failures are results, not
/// errors.
pub(crate) struct BoxedFuture<T> {
    inner: BoxFuture<'static, T>,
}

impl<T> BoxedFuture<T> {
    pub(crate) fn new(fut: impl Future<Output = T> + Send + 'static) -> Self {
        Self {
            inner: Box::pin(fut),
        }
    }
}

impl<T> Future for BoxedFuture<T> {
    type Output = Result<T, Infallible>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.inner.as_mut().poll(cx).map(Ok)
    }
}

impl<T> std::fmt::Debug for BoxedFuture<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoxedFuture").finish_non_exhaustive()
    }
}

/// Drives `inner` to readiness, then calls it: how an awaiting stage, always
/// ready itself, calls its inner service inside its future.
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
    pub(crate) struct StageFuture<F> {
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

/// Declares a stage's response future, in the stage's folder.
///
/// `sync` declares `ResponseFuture<F>` of a stage that decides in `call()`
/// (a [`StageFuture`] inside); `boxed NAME => T` declares the future of an
/// awaiting stage, resolving to `T` (a [`BoxedFuture`] inside).
macro_rules! stage_future {
    ($(#[$attr:meta])* sync) => {
        pin_project_lite::pin_project! {
            $(#[$attr])*
            pub struct ResponseFuture<F> {
                #[pin]
                inner: $crate::future::StageFuture<F>,
            }
        }

        impl<F> ResponseFuture<F> {
            /// The call ended in the stage.
            pub(crate) fn ended(call: $crate::call::Call<$crate::call::Executed>) -> Self {
                Self {
                    inner: $crate::future::StageFuture::ended(call),
                }
            }

            /// The call went on to the inner service.
            pub(crate) fn inner(future: F) -> Self {
                Self {
                    inner: $crate::future::StageFuture::inner(future),
                }
            }
        }

        impl<F> ::std::future::Future for ResponseFuture<F>
        where
            F: ::std::future::Future<
                Output = Result<$crate::call::Call<$crate::call::Executed>, ::std::convert::Infallible>,
            >,
        {
            type Output = Result<$crate::call::Call<$crate::call::Executed>, ::std::convert::Infallible>;

            fn poll(
                self: ::std::pin::Pin<&mut Self>,
                cx: &mut ::std::task::Context<'_>,
            ) -> ::std::task::Poll<Self::Output> {
                self.project().inner.poll(cx)
            }
        }

        impl<F> ::std::fmt::Debug for ResponseFuture<F> {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.debug_struct("ResponseFuture").finish_non_exhaustive()
            }
        }
    };
    ($(#[$attr:meta])* boxed $name:ident => $out:ty) => {
        $(#[$attr])*
        pub struct $name {
            inner: $crate::future::BoxedFuture<$out>,
        }

        impl $name {
            pub(crate) fn new(
                future: impl ::std::future::Future<Output = $out> + Send + 'static,
            ) -> Self {
                Self {
                    inner: $crate::future::BoxedFuture::new(future),
                }
            }
        }

        impl ::std::future::Future for $name {
            type Output = Result<$out, ::std::convert::Infallible>;

            fn poll(
                mut self: ::std::pin::Pin<&mut Self>,
                cx: &mut ::std::task::Context<'_>,
            ) -> ::std::task::Poll<Self::Output> {
                ::std::pin::Pin::new(&mut self.inner).poll(cx)
            }
        }

        impl ::std::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.debug_struct(stringify!($name)).finish_non_exhaustive()
            }
        }
    };
}

pub(crate) use stage_future;
