//! The standard stack, assembled from a few options.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use tower::util::BoxCloneSyncService;
use tower::{BoxError, Layer, Service, ServiceBuilder};
use typed_builder::TypedBuilder;

use crate::admit::AdmitLayer;
use crate::breaker::Breaker;
use crate::call::{Call, Executed, Gated, Unvalidated};
use crate::coerce::CoerceLayer;
use crate::event::EventSink;
use crate::execute::{BoundaryLayer, Execute};
use crate::gate::{Gate, GateLayer};
use crate::guard::EventGuardLayer;
use crate::outcome::ToolResult;
use crate::preview::PreviewLayer;
use crate::registry::ToolRegistry;
use crate::resolve::ResolveLayer;
use crate::stack::StageStack;
use crate::validate::ValidateLayer;

/// The standard per-call pipeline: options, and the services built from
/// them. Clones share the breaker's counts.
///
/// ```
/// # use std::sync::Arc;
/// # use agentcore_stages::{Pipeline, ToolRegistry};
/// use std::time::Duration;
/// use tower::ServiceBuilder;
///
/// let pipeline = Pipeline::builder()
///     .registry(Arc::new(ToolRegistry::new()))
///     .max_tool_errors(5)
///     .build();
/// // Your layers sit on `Call<Gated>` just before Execute, outermost first.
/// let service = pipeline.service_with(
///     ServiceBuilder::new().timeout(Duration::from_secs(30)),
/// );
/// # let _ = service;
/// ```
#[derive(Clone, TypedBuilder)]
pub struct Pipeline {
    /// The tools calls may name.
    registry: Arc<ToolRegistry>,
    /// Asked before every execution; `None` allows every call.
    #[builder(default, setter(strip_option))]
    gate: Option<Arc<dyn Gate>>,
    /// Consecutive failures that disable a tool; 0 turns the breaker off.
    #[builder(default = 3)]
    max_tool_errors: u32,
    /// Where events go unless a call brings its own sink.
    #[builder(default)]
    sink: EventSink,
    /// The failure counts; share one per session.
    #[builder(default)]
    breaker: Breaker,
}

impl std::fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline")
            .field("registry", &self.registry)
            .field("gate", &self.gate.is_some())
            .field("max_tool_errors", &self.max_tool_errors)
            .finish_non_exhaustive()
    }
}

impl Pipeline {
    /// The tools.
    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.registry
    }

    /// The breaker; call [`Breaker::reset`] when a new user prompt starts.
    pub fn breaker(&self) -> &Breaker {
        &self.breaker
    }

    /// The default event sink.
    pub fn sink(&self) -> &EventSink {
        &self.sink
    }

    /// The stack with no user middleware.
    pub fn service(&self) -> PipelineService {
        self.service_with(ServiceBuilder::new())
    }

    /// The stack with `middleware` on `Call<Gated>` just before Execute,
    /// outermost first. Middleware errors become `Failed` results (a tower
    /// timeout reads `tool "NAME" timed out`).
    pub fn service_with<L>(&self, middleware: ServiceBuilder<L>) -> PipelineService
    where
        L: Layer<Execute>,
        L::Service: Service<Call<Gated>, Response = Call<Executed>> + Clone + Send + Sync + 'static,
        <L::Service as Service<Call<Gated>>>::Error: Into<BoxError>,
        <L::Service as Service<Call<Gated>>>::Future: Send,
    {
        let service = StageStack::new()
            .stage(EventGuardLayer::new(
                self.registry.clone(),
                self.sink.clone(),
            ))
            .stage(AdmitLayer::new(self.breaker.clone(), self.max_tool_errors))
            .stage(ResolveLayer::new(self.registry.clone()))
            .stage(CoerceLayer::new())
            .stage(ValidateLayer::new())
            .stage(PreviewLayer::new())
            .stage(GateLayer::new(self.gate.clone()))
            .stage(BoundaryLayer::new())
            .layer(middleware.into_inner())
            .execute(Execute::new());
        PipelineService {
            inner: BoxCloneSyncService::new(service),
        }
    }
}

/// The assembled pipeline as one service: `Call<Unvalidated>` in,
/// [`ToolResult`] out, never an error.
#[derive(Clone)]
pub struct PipelineService {
    inner: BoxCloneSyncService<Call<Unvalidated>, ToolResult, Infallible>,
}

impl std::fmt::Debug for PipelineService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PipelineService").finish_non_exhaustive()
    }
}

impl Service<Call<Unvalidated>> for PipelineService {
    type Response = ToolResult;
    type Error = Infallible;
    type Future = <BoxCloneSyncService<Call<Unvalidated>, ToolResult, Infallible> as Service<
        Call<Unvalidated>,
    >>::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, call: Call<Unvalidated>) -> Self::Future {
        self.inner.call(call)
    }
}
