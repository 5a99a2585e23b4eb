use std::sync::Arc;
use agentcore_stages::{Breaker, EventSink, StageStack, ToolRegistry};
use agentcore_stages::{admit::AdmitLayer, guard::EventGuardLayer};

fn main() {
    let registry = Arc::new(ToolRegistry::new());
    let _stack = StageStack::new()
        .stage(AdmitLayer::new(Breaker::new(), 3))
        .stage(EventGuardLayer::new(registry, EventSink::noop()));
}
