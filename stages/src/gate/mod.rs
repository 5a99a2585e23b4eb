//! Gate: the last word before a side effect.
//!
//! The kernel calls whatever [`Gate`] it is given (an approval engine, a
//! person, a policy) with the tool, the call, its label and its preview.
//! No gate configured means allow; a gate error is a deny. A gate may
//! rewrite the arguments: they then go through coerce, validate and preview
//! again (the new preview is emitted), and if they fail there the call is
//! `Denied` with `the gate rewrote the arguments into an invalid call: ERR`.
//! Only this stage builds a `Call<Gated>`.

mod future;
mod layer;
mod service;

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use http::Extensions;
use serde_json::Value;
use tower::{BoxError, Service, ServiceExt};

pub use future::ResponseFuture;
pub use layer::GateLayer;
pub use service::GateService;

use crate::call::CallContext;
use crate::registry::RegisteredTool;

/// What a gate is asked about one call.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct GateRequest {
    /// The tool, with its metadata and typed extensions.
    pub tool: Arc<RegisteredTool>,
    /// The call's id.
    pub call_id: String,
    /// The tool's label, if it has one.
    pub label: Option<String>,
    /// The coerced, validated arguments.
    pub args: Value,
    /// The tool's preview, if any (already emitted).
    pub preview: Option<String>,
    /// The call's context (cancellation, extensions).
    pub context: CallContext,
}

/// A gate's answer.
#[derive(Clone, Debug)]
pub enum GateDecision {
    /// Run the call as proposed.
    Allow,
    /// Run the call as proposed, handing the tool what the gate
    /// established while deciding (for instance which files the call's
    /// paths were judged to be) in [`GatedArgs::extensions`].
    ///
    /// [`GatedArgs::extensions`]: crate::GatedArgs::extensions
    AllowWith(Extensions),
    /// Run the call with these arguments instead (re-checked first).
    Rewrite(Value),
    /// Run the call with these arguments instead (re-checked first),
    /// handing the tool what the gate established about them.
    RewriteWith(Value, Extensions),
    /// Refuse; the reason is what the model reads (default
    /// `tool execution denied`).
    Deny(Option<String>),
}

impl PartialEq for GateDecision {
    /// The same answer with the same arguments or reason; what the gate
    /// recorded in [`Extensions`] is not compared (it holds no equality).
    fn eq(&self, other: &Self) -> bool {
        use GateDecision::{Allow, AllowWith, Deny, Rewrite, RewriteWith};
        match (self, other) {
            (Allow | AllowWith(_), Allow | AllowWith(_)) => {
                matches!(self, Allow) == matches!(other, Allow)
            }
            (Rewrite(a), Rewrite(b)) | (RewriteWith(a, _), RewriteWith(b, _)) => a == b,
            (Deny(a), Deny(b)) => a == b,
            _ => false,
        }
    }
}

/// Decides whether a call may run. Implemented for closures returning a
/// future (see [`gate_fn`]) and for tower services ([`ServiceGate`]).
pub trait Gate: Send + Sync + 'static {
    /// Decides on one call. An error counts as a denial with its text.
    fn decide(&self, request: GateRequest) -> BoxFuture<'static, Result<GateDecision, BoxError>>;
}

/// A gate from an async closure.
///
/// ```
/// use agentcore_stages::gate::{gate_fn, GateDecision};
/// let gate = gate_fn(|req| async move {
///     if req.tool.name() == "bash" {
///         Ok(GateDecision::Deny(Some("commands are off".into())))
///     } else {
///         Ok(GateDecision::Allow)
///     }
/// });
/// # let _ = gate;
/// ```
pub fn gate_fn<F, Fut>(f: F) -> FnGate<F>
where
    F: Fn(GateRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<GateDecision, BoxError>> + Send + 'static,
{
    FnGate { f }
}

/// A gate made by [`gate_fn`].
#[derive(Clone, Debug)]
pub struct FnGate<F> {
    f: F,
}

impl<F, Fut> Gate for FnGate<F>
where
    F: Fn(GateRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<GateDecision, BoxError>> + Send + 'static,
{
    fn decide(&self, request: GateRequest) -> BoxFuture<'static, Result<GateDecision, BoxError>> {
        Box::pin((self.f)(request))
    }
}

/// A gate backed by a tower service; each decision uses a clone of it.
#[derive(Clone, Debug)]
pub struct ServiceGate<S> {
    service: S,
}

impl<S> ServiceGate<S> {
    /// Wraps `service`.
    pub const fn new(service: S) -> Self {
        Self { service }
    }
}

impl<S> Gate for ServiceGate<S>
where
    S: Service<GateRequest, Response = GateDecision> + Clone + Send + Sync + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send,
{
    fn decide(&self, request: GateRequest) -> BoxFuture<'static, Result<GateDecision, BoxError>> {
        let service = self.service.clone();
        Box::pin(async move { service.oneshot(request).await.map_err(Into::into) })
    }
}
