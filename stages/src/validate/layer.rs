use tower::Layer;

use super::Validate;

/// Wraps a service in [`Validate`].
#[derive(Clone, Copy, Debug, Default)]
pub struct ValidateLayer {
    _priv: (),
}

impl ValidateLayer {
    /// The layer.
    pub const fn new() -> Self {
        Self { _priv: () }
    }
}

impl<S> Layer<S> for ValidateLayer {
    type Service = Validate<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Validate::new(inner)
    }
}
