use std::sync::Arc;
use agentcore_stages::{Breaker, EventSink, StageStack, ToolRegistry};
use agentcore_stages::{admit::AdmitLayer, coerce::CoerceLayer, execute::Execute,
    guard::EventGuardLayer, preview::PreviewLayer, resolve::ResolveLayer,
    validate::ValidateLayer};

fn main() {
    let registry = Arc::new(ToolRegistry::new());
    let _service = StageStack::new()
        .stage(EventGuardLayer::new(registry.clone(), EventSink::noop()))
        .stage(AdmitLayer::new(Breaker::new(), 3))
        .stage(ResolveLayer::new(registry))
        .stage(CoerceLayer::new())
        .stage(ValidateLayer::new())
        .stage(PreviewLayer::new())
        .execute(Execute::new());
}
