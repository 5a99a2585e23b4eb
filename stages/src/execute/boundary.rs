use std::convert::Infallible;
use std::task::{Context, Poll};

use tower::{BoxError, Layer, Service};

use super::BoundaryFuture;
use crate::call::{Call, Executed, Gated};
use crate::future::{inner_accessors, take_inner};

/// Wraps user middleware (any service on `Call<Gated>` whose errors convert
/// into [`BoxError`]) so that its errors and panics become `Failed`
/// results: the stages around it stay infallible.
#[derive(Clone, Copy, Debug, Default)]
pub struct BoundaryLayer {
    _priv: (),
}

impl BoundaryLayer {
    /// The layer.
    pub const fn new() -> Self {
        Self { _priv: () }
    }
}

impl<S> Layer<S> for BoundaryLayer {
    type Service = Boundary<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Boundary::new(inner)
    }
}

/// See [`BoundaryLayer`]. It catches the middleware's panics around its
/// future, so it is always ready and readies the middleware in its future.
#[derive(Clone, Debug)]
pub struct Boundary<S> {
    inner: S,
}

inner_accessors!(Boundary);

impl<S> Boundary<S> {
    /// Wraps `inner`, user middleware, so that its errors and panics become `Failed` results.
    pub fn new(inner: S) -> Self {
        Self { inner }
    }
}

impl<S> Service<Call<Gated>> for Boundary<S>
where
    S: Service<Call<Gated>, Response = Call<Executed>> + Clone,
    S::Error: Into<BoxError>,
{
    type Response = Call<Executed>;
    type Error = Infallible;
    type Future = BoundaryFuture<S, S::Future>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, call: Call<Gated>) -> Self::Future {
        BoundaryFuture::new(take_inner(&mut self.inner), call)
    }
}
