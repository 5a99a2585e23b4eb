//! Progress reports of a running tool.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use super::CallEvents;
use crate::event::{Event, UpdateKind};

/// Reports a running tool's progress as `ToolExecUpdate{kind: progress}`.
/// Reports after the call's End are dropped.
#[derive(Clone)]
pub struct ProgressReporter {
    pub(super) call_id: Arc<str>,
    pub(super) events: CallEvents,
}

impl ProgressReporter {
    /// Reports `payload`; returns `false` if the call already ended.
    pub fn report(&self, payload: impl Into<Value>) -> bool {
        self.events.emit_with(|| Event::ToolExecUpdate {
            call_id: String::from(&*self.call_id),
            kind: UpdateKind::Progress,
            payload: payload.into(),
        })
    }
}

impl fmt::Debug for ProgressReporter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProgressReporter")
            .field("call_id", &self.call_id)
            .finish_non_exhaustive()
    }
}
