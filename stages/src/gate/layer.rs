use std::sync::Arc;

use tower::Layer;

use super::{Gate, GateService};

/// Wraps a service in a [`GateService`].
#[derive(Clone, Default)]
pub struct GateLayer {
    gate: Option<Arc<dyn Gate>>,
}

impl GateLayer {
    /// Asks `gate` about every call; `None` allows every call.
    pub const fn new(gate: Option<Arc<dyn Gate>>) -> Self {
        Self { gate }
    }
}

impl std::fmt::Debug for GateLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GateLayer")
            .field("gate", &self.gate.is_some())
            .finish()
    }
}

impl<S> Layer<S> for GateLayer {
    type Service = GateService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        GateService::new(inner, self.gate.clone())
    }
}
