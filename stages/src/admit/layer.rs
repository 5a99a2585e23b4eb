use tower::Layer;

use super::Admit;
use crate::breaker::Breaker;

/// Wraps a service in [`Admit`].
#[derive(Clone, Debug)]
pub struct AdmitLayer {
    breaker: Breaker,
    max_tool_errors: u32,
}

impl AdmitLayer {
    /// Counts failures in `breaker`; `max_tool_errors` of 0 disables it.
    pub const fn new(breaker: Breaker, max_tool_errors: u32) -> Self {
        Self {
            breaker,
            max_tool_errors,
        }
    }
}

impl<S> Layer<S> for AdmitLayer {
    type Service = Admit<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Admit::new(inner, self.breaker.clone(), self.max_tool_errors)
    }
}
