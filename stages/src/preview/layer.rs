use tower::Layer;

use super::Preview;

/// Wraps a service in [`Preview`].
#[derive(Clone, Copy, Debug, Default)]
pub struct PreviewLayer {
    _priv: (),
}

impl PreviewLayer {
    /// The layer.
    pub const fn new() -> Self {
        Self { _priv: () }
    }
}

impl<S> Layer<S> for PreviewLayer {
    type Service = Preview<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Preview::new(inner)
    }
}
