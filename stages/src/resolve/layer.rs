use std::sync::Arc;

use tower::Layer;

use super::Resolve;
use crate::registry::ToolRegistry;

/// Wraps a service in [`Resolve`].
#[derive(Clone, Debug)]
pub struct ResolveLayer {
    registry: Arc<ToolRegistry>,
}

impl ResolveLayer {
    /// Looks tools up in `registry`.
    pub const fn new(registry: Arc<ToolRegistry>) -> Self {
        Self { registry }
    }
}

impl<S> Layer<S> for ResolveLayer {
    type Service = Resolve<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Resolve::new(inner, self.registry.clone())
    }
}
