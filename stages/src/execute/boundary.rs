use std::convert::Infallible;
use std::panic::AssertUnwindSafe;
use std::task::{Context, Poll};

use futures::FutureExt;
use tower::{BoxError, Layer, Service, ServiceExt};

use super::BoundaryFuture;
use crate::call::{Call, Executed, Gated};
use crate::future::{inner_accessors, take_inner};
use crate::outcome::{Content, Outcome};
use crate::panic;

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
    S: Service<Call<Gated>, Response = Call<Executed>> + Clone + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send,
{
    type Response = Call<Executed>;
    type Error = Infallible;
    type Future = BoundaryFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, call: Call<Gated>) -> Self::Future {
        let inner = take_inner(&mut self.inner);
        // Kept to report a failure after the middleware consumed the call.
        let shell = call.shell();
        let coercions = call.state.coercions.clone();
        BoundaryFuture::new(async move {
            let ran = AssertUnwindSafe(inner.oneshot(call)).catch_unwind().await;
            let message = match ran {
                Ok(Ok(executed)) => return executed,
                Ok(Err(err)) => middleware_error_text(&shell.tool, err.into()),
                Err(payload) => panic::failure_text(&shell.tool, &*payload),
            };
            shell.finish(
                Outcome::Failed,
                vec![Content::text(message)],
                None,
                coercions,
            )
        })
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
