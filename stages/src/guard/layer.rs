use std::sync::Arc;

use tower::Layer;

use super::EventGuard;
use crate::event::EventSink;
use crate::registry::ToolRegistry;

/// Wraps a service in an [`EventGuard`].
#[derive(Clone, Debug)]
pub struct EventGuardLayer {
    registry: Arc<ToolRegistry>,
    sink: EventSink,
}

impl EventGuardLayer {
    /// Labels come from `registry`; events go to `sink` unless a call brings
    /// its own.
    pub const fn new(registry: Arc<ToolRegistry>, sink: EventSink) -> Self {
        Self { registry, sink }
    }
}

impl<S> Layer<S> for EventGuardLayer {
    type Service = EventGuard<S>;

    fn layer(&self, inner: S) -> Self::Service {
        EventGuard::new(inner, self.registry.clone(), self.sink.clone())
    }
}
