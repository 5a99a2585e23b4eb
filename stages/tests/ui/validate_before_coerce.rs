use std::sync::Arc;
use agentcore_stages::{Breaker, EventSink, StageStack, ToolRegistry};
use agentcore_stages::{admit::AdmitLayer, guard::EventGuardLayer, resolve::ResolveLayer,
    validate::ValidateLayer};

fn main() {
    let registry = Arc::new(ToolRegistry::new());
    let _stack = StageStack::new()
        .stage(EventGuardLayer::new(registry.clone(), EventSink::noop()))
        .stage(AdmitLayer::new(Breaker::new(), 3))
        .stage(ResolveLayer::new(registry))
        .stage(ValidateLayer::new());
}
