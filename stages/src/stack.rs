//! Stacking stages by hand, in an order the compiler checks.
//!
//! [`StageStack`] is to the pipeline what tower's `ServiceBuilder` is to
//! layers, except that it tracks which `Call<S>` the next stage receives:
//! a stage out of order, or an `Execute` fed anything but a `Call<Gated>`,
//! is a compile error that names the expected order.

use std::marker::PhantomData;

use tower::Layer;
use tower::layer::util::{Identity, Stack};

use crate::admit::AdmitLayer;
use crate::call::{Admitted, Coerced, Gated, Previewed, Resolved, Started, Unvalidated, Validated};
use crate::coerce::CoerceLayer;
use crate::execute::BoundaryLayer;
use crate::gate::GateLayer;
use crate::guard::EventGuardLayer;
use crate::preview::PreviewLayer;
use crate::resolve::ResolveLayer;
use crate::validate::ValidateLayer;

/// Keeps [`Stage`] and [`Executable`] to this crate's types: a user type
/// cannot claim to turn a call into `Call<Gated>`.
mod sealed {
    /// Implemented only by this crate's stage layers.
    pub trait Stage {}
    /// Implemented only by the state `Execute` accepts.
    pub trait State {}
}

/// A pipeline stage that accepts `Call<In>` and hands its inner service a
/// `Call<Self::Out>`. Sealed: only this crate's stage layers implement it,
/// so only the Gate stage can claim to produce `Call<Gated>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot take a `Call<{In}>`: the pipeline stages are out of order",
    label = "this stage does not accept `Call<{In}>`",
    note = "stages run in this order: EventGuardLayer (Unvalidated) → AdmitLayer (Started) → ResolveLayer (Admitted) → CoerceLayer (Resolved) → ValidateLayer (Coerced) → PreviewLayer (Validated) → GateLayer (Previewed) → BoundaryLayer and your layers (Gated) → Execute (Gated)"
)]
pub trait Stage<In>: sealed::Stage {
    /// The state the stage establishes.
    type Out;
}

/// The state `Execute` accepts: only `Gated`. Sealed, like [`Stage`].
#[diagnostic::on_unimplemented(
    message = "the pipeline is incomplete: `Execute` needs a `Call<Gated>` but the stages so far produce `Call<{Self}>`",
    label = "stages are missing before `Execute`",
    note = "stages run in this order: EventGuardLayer (Unvalidated) → AdmitLayer (Started) → ResolveLayer (Admitted) → CoerceLayer (Resolved) → ValidateLayer (Coerced) → PreviewLayer (Validated) → GateLayer (Previewed) → BoundaryLayer and your layers (Gated) → Execute (Gated)"
)]
pub trait Executable: sealed::State {}

impl sealed::State for Gated {}
impl Executable for Gated {}

impl sealed::Stage for EventGuardLayer {}
impl sealed::Stage for AdmitLayer {}
impl sealed::Stage for ResolveLayer {}
impl sealed::Stage for CoerceLayer {}
impl sealed::Stage for ValidateLayer {}
impl sealed::Stage for PreviewLayer {}
impl sealed::Stage for GateLayer {}
impl sealed::Stage for BoundaryLayer {}

impl Stage<Unvalidated> for EventGuardLayer {
    type Out = Started;
}
impl Stage<Started> for AdmitLayer {
    type Out = Admitted;
}
impl Stage<Admitted> for ResolveLayer {
    type Out = Resolved;
}
impl Stage<Resolved> for CoerceLayer {
    type Out = Coerced;
}
impl Stage<Coerced> for ValidateLayer {
    type Out = Validated;
}
impl Stage<Validated> for PreviewLayer {
    type Out = Previewed;
}
impl Stage<Previewed> for GateLayer {
    type Out = Gated;
}
impl Stage<Gated> for BoundaryLayer {
    type Out = Gated;
}

/// Stages stacked so far; the next one receives `Call<Cur>`.
///
/// ```
/// use std::sync::Arc;
/// use agentcore_stages::{Breaker, EventSink, StageStack, ToolRegistry};
/// use agentcore_stages::{admit::AdmitLayer, coerce::CoerceLayer, execute::Execute,
///     gate::GateLayer, guard::EventGuardLayer, preview::PreviewLayer,
///     resolve::ResolveLayer, validate::ValidateLayer};
///
/// let registry = Arc::new(ToolRegistry::new());
/// let service = StageStack::new()
///     .stage(EventGuardLayer::new(registry.clone(), EventSink::noop()))
///     .stage(AdmitLayer::new(Breaker::new(), 3))
///     .stage(ResolveLayer::new(registry))
///     .stage(CoerceLayer::new())
///     .stage(ValidateLayer::new())
///     .stage(PreviewLayer::new())
///     .stage(GateLayer::new(None))
///     .execute(Execute::new());
/// # let _ = service;
/// ```
pub struct StageStack<Cur, L> {
    layer: L,
    _state: PhantomData<fn() -> Cur>,
}

impl StageStack<Unvalidated, Identity> {
    /// An empty stack; the first stage receives `Call<Unvalidated>`.
    pub fn new() -> Self {
        Self {
            layer: Identity::new(),
            _state: PhantomData,
        }
    }
}

impl Default for StageStack<Unvalidated, Identity> {
    fn default() -> Self {
        Self::new()
    }
}

impl<Cur, L> StageStack<Cur, L> {
    /// Adds the next stage, inside the ones added before.
    pub fn stage<T: Stage<Cur>>(self, stage: T) -> StageStack<T::Out, Stack<T, L>> {
        StageStack {
            layer: Stack::new(stage, self.layer),
            _state: PhantomData,
        }
    }

    /// Adds a user layer on `Call<Gated>`, inside the ones added before.
    /// Put a [`BoundaryLayer`] first if the layer's errors are not
    /// `Infallible`.
    pub fn layer<M>(self, layer: M) -> StageStack<Cur, Stack<M, L>>
    where
        Cur: Executable,
    {
        StageStack {
            layer: Stack::new(layer, self.layer),
            _state: PhantomData,
        }
    }

    /// Finishes the stack with the innermost service (usually `Execute`).
    pub fn execute<E>(self, execute: E) -> L::Service
    where
        Cur: Executable,
        L: Layer<E>,
    {
        self.layer.layer(execute)
    }
}

impl<Cur, L: std::fmt::Debug> std::fmt::Debug for StageStack<Cur, L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StageStack")
            .field("layer", &self.layer)
            .finish()
    }
}
