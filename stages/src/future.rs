//! What the stage services share: the readiness contract, and the shapes
//! of a stage's response future. Each stage declares its own future in its
//! folder (`resolve::ResponseFuture`, …); none of them is a boxed trait
//! object except Execute's and the awaiting branch of the stages whose
//! tool hook or gate must be awaited.
//!
//! # Readiness
//!
//! One contract for every stage:
//!
//! - A stage that decides in `call()` (Admit, Resolve, Coerce, and
//!   Validate, Preview and Gate) calls its inner service there and then, so
//!   it passes readiness through: it is ready when its inner service is, as
//!   tower's own synchronous middleware is. Its future is the call ended in
//!   the stage, or the inner service's future. Validate, Preview and Gate
//!   decide in `call()` when the tool's hook settles without awaiting (the
//!   defaults do) and no gate is asked; otherwise they take the readied
//!   inner service (leaving a clone behind) into a boxed `async` block that
//!   awaits the hook or the gate, then calls it.
//! - A stage that wraps its inner service's whole run (the event guard, the
//!   Boundary) is always ready: it takes the inner service (leaving a clone
//!   behind) and drives it to readiness inside its own future, a named
//!   state machine. Execute is always ready; its future is boxed, since the
//!   tool's future borrows the tool and the call's context.
//!
//! Readiness therefore stops at the event guard: the standard pipeline is
//! always ready, and backpressure belongs in front of it (the scheduler) or
//! inside your middleware's own future.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::task::{Context, Poll, Waker};

use futures::future::BoxFuture;

use crate::call::{Call, Executed};

/// The boxed `async` block of Execute: it always resolves `Ok`, since
/// stage failures are results, not errors.
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
        Awaiting { future: BoxFuture<'static, Call<Executed>> },
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

    /// The stage awaits (a tool's hook, the gate) before it ends the call
    /// or calls its inner service.
    pub(crate) fn awaiting(future: impl Future<Output = Call<Executed>> + Send + 'static) -> Self {
        Self {
            kind: Kind::Awaiting {
                future: Box::pin(future),
            },
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
            KindProj::Awaiting { future } => future.as_mut().poll(cx).map(Ok),
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
/// (a [`StageFuture`] inside); `boxed NAME => T` declares Execute's future,
/// resolving to `T` (a [`BoxedFuture`] inside).
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
            #[allow(dead_code)]
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

            /// The stage awaits before it ends the call or calls its inner
            /// service.
            #[allow(dead_code)]
            pub(crate) fn awaiting(
                future: impl ::std::future::Future<
                    Output = $crate::call::Call<$crate::call::Executed>,
                > + Send
                    + 'static,
            ) -> Self {
                Self {
                    inner: $crate::future::StageFuture::awaiting(future),
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

/// What a registration's hook (the tool's `validate` or `preview`) has
/// shown of itself: whether its future can settle in the stage's `call()`.
///
/// A hook's future borrows the tool, the arguments and the context, which
/// the call owns; a stage can keep it past `call()` only inside a boxed
/// `async` block that owns the call too. So the stage first awaits a hook
/// that way, and learns: a future that holds no state (the default hooks'
/// do not) is polled once in `call()` from then on, and the call goes on
/// without a box when it settled. A stateful future, or one that did not
/// settle on that poll, puts the hook back on the awaiting path for good
/// (the settled-looking one is dropped and made again there: a hook's work
/// belongs inside its future, as `async` blocks do it).
#[derive(Debug, Default)]
pub(crate) struct HookShape(AtomicU8);

/// Not seen yet: await it.
const UNSEEN: u8 = 0;
/// Its futures hold no state: try it in `call()`.
const SETTLES: u8 = 1;
/// Its futures hold state, or did not settle at once: await it.
const AWAITS: u8 = 2;

impl HookShape {
    /// Whether the stage tries the hook in `call()`.
    pub(crate) fn may_settle(&self) -> bool {
        self.0.load(Ordering::Relaxed) == SETTLES
    }

    /// Learns from a future the awaiting path is about to await.
    pub(crate) fn learn<T>(&self, future: &BoxFuture<'_, T>) {
        if self.0.load(Ordering::Relaxed) == UNSEEN {
            let shape = if std::mem::size_of_val(future.as_ref().get_ref()) == 0 {
                SETTLES
            } else {
                AWAITS
            };
            self.0.store(shape, Ordering::Relaxed);
        }
    }

    /// Polls a stateless hook future once: its output if it settled; `None`
    /// (and the hook awaited from now on) otherwise.
    pub(crate) fn settle_now<T>(&self, mut future: BoxFuture<'_, T>) -> Option<T> {
        if std::mem::size_of_val(future.as_ref().get_ref()) == 0 {
            let mut cx = Context::from_waker(Waker::noop());
            if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
                return Some(output);
            }
        }
        self.0.store(AWAITS, Ordering::Relaxed);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Settles at once, holding nothing.
    struct Now;

    impl Future for Now {
        type Output = u8;
        fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<u8> {
            Poll::Ready(7)
        }
    }

    /// Never settles, holding nothing.
    struct Never;

    impl Future for Never {
        type Output = u8;
        fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<u8> {
            Poll::Pending
        }
    }

    #[test]
    fn a_hook_is_awaited_until_a_stateless_future_was_seen() {
        let shape = HookShape::default();
        assert!(!shape.may_settle());
        shape.learn(&(Box::pin(Now) as BoxFuture<'_, u8>));
        assert!(shape.may_settle());
        assert_eq!(shape.settle_now(Box::pin(Now)), Some(7));
        assert!(shape.may_settle());
    }

    #[test]
    fn a_stateful_future_keeps_the_hook_awaited_for_good() {
        let shape = HookShape::default();
        let held = 5u8;
        shape.learn(&(Box::pin(async move { held }) as BoxFuture<'_, u8>));
        assert!(!shape.may_settle());
        // Learning again does not undo it.
        shape.learn(&(Box::pin(Now) as BoxFuture<'_, u8>));
        assert!(!shape.may_settle());
    }

    #[test]
    fn a_future_that_does_not_settle_at_once_sends_the_hook_back_to_awaiting() {
        let shape = HookShape::default();
        shape.learn(&(Box::pin(Now) as BoxFuture<'_, u8>));
        assert_eq!(shape.settle_now(Box::pin(Never)), None);
        assert!(!shape.may_settle());
        let shape = HookShape::default();
        shape.learn(&(Box::pin(Now) as BoxFuture<'_, u8>));
        let held = 5u8;
        assert_eq!(shape.settle_now(Box::pin(async move { held })), None);
        assert!(!shape.may_settle());
    }
}
