use tower::Layer;

use super::Coerce;

/// Wraps a service in [`Coerce`].
#[derive(Clone, Copy, Debug, Default)]
pub struct CoerceLayer {
    _priv: (),
}

impl CoerceLayer {
    /// The layer.
    pub const fn new() -> Self {
        Self { _priv: () }
    }
}

impl<S> Layer<S> for CoerceLayer {
    type Service = Coerce<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Coerce::new(inner)
    }
}
