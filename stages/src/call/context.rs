//! What travels with a call through every stage.

use std::fmt;
use std::sync::Arc;

use http::Extensions;
use serde_json::Value;

use super::{CallEvents, Cancellation, ProgressReporter};
#[cfg(feature = "test-util")]
use crate::event::EventSink;
use crate::event::{Event, UpdateKind};

/// What travels with a call through every stage: its cancellation, its
/// events, and typed extensions for middleware and tools. Clones share the
/// cancellation and events and copy the extensions.
#[derive(Clone)]
pub struct CallContext {
    pub(crate) cancellation: Cancellation,
    pub(crate) events: CallEvents,
    pub(crate) call_id: Arc<str>,
    extensions: Extensions,
}

impl CallContext {
    pub(crate) fn new(call_id: Arc<str>, cancellation: Cancellation) -> Self {
        Self {
            cancellation,
            events: CallEvents::default(),
            call_id,
            extensions: Extensions::new(),
        }
    }

    /// A context for calling a tool directly in a tool author's tests.
    #[cfg(feature = "test-util")]
    pub fn for_test(call_id: &str, sink: EventSink) -> Self {
        let cx = Self::new(Arc::from(call_id), Cancellation::new());
        cx.events.bind(sink);
        cx
    }

    /// The id of the call this context belongs to.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The call's cancellation.
    pub fn cancellation(&self) -> &Cancellation {
        &self.cancellation
    }

    /// The call's progress reporter.
    pub fn progress(&self) -> ProgressReporter {
        ProgressReporter {
            call_id: self.call_id.clone(),
            events: self.events.clone(),
        }
    }

    /// Emits a preview update for this call.
    pub(crate) fn emit_preview(&self, preview: &str) {
        self.events.emit_with(|| Event::ToolExecUpdate {
            call_id: String::from(&*self.call_id),
            kind: UpdateKind::Preview,
            payload: Value::String(preview.to_owned()),
        });
    }

    /// Reports a hook that ran for this call (before or after the tool) as
    /// `ToolExecUpdate{kind: hook}`; returns `false` if the call already
    /// ended.
    pub fn report_hook(&self, payload: impl Into<Value>) -> bool {
        self.events.emit_with(|| Event::ToolExecUpdate {
            call_id: String::from(&*self.call_id),
            kind: UpdateKind::Hook,
            payload: payload.into(),
        })
    }

    /// Typed extensions.
    pub fn extensions(&self) -> &Extensions {
        &self.extensions
    }

    /// Typed extensions, mutably.
    pub fn extensions_mut(&mut self) -> &mut Extensions {
        &mut self.extensions
    }
}

impl fmt::Debug for CallContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallContext")
            .field("call_id", &self.call_id)
            .field("cancelled", &self.cancellation.is_cancelled())
            .finish_non_exhaustive()
    }
}
