//! Events a call emits, and the [`EventSink`] that receives them.
//!
//! Every call emits exactly one [`Event::ToolExecStart`] and later exactly one
//! [`Event::ToolExecEnd`] with the same `call_id` (`tool_id` on the wire); updates come in between
//! and never after the End. The event guard stage enforces the pairing.

use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::coerce::Coercion;
use crate::outcome::{Content, Outcome, ToolResult};

/// What a tool-call update carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UpdateKind {
    /// The tool's preview (e.g. a unified diff), emitted before the gate.
    Preview,
    /// A progress report from the running tool.
    Progress,
    /// A hook that ran for the call (a Claude Code command hook before or
    /// after the tool): which, its exit, how long it took.
    Hook,
}

/// A tool-result message for the next model request (role `tool`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolResultMessage {
    /// Always `"tool"`.
    pub role: &'static str,
    /// The id of the call this message answers (`tool_call_id` on the wire).
    #[serde(rename = "tool_call_id")]
    pub call_id: String,
    /// The tool name.
    pub tool: String,
    /// The result's content blocks.
    pub content: Vec<Content>,
    /// Whether the call failed in any way.
    pub is_error: bool,
}

impl ToolResultMessage {
    /// The message answering one call.
    pub fn from_result(result: &ToolResult) -> Self {
        Self {
            role: "tool",
            call_id: result.call_id.clone(),
            tool: result.tool.clone(),
            content: result.content.clone(),
            is_error: result.is_error(),
        }
    }
}

/// One call's result as listed in [`Event::ModelResponse`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolResultSummary {
    /// The call's id (`tool_call_id` on the wire).
    #[serde(rename = "tool_call_id")]
    pub call_id: String,
    /// The tool name.
    pub tool: String,
    /// How it ended.
    pub outcome: Outcome,
    /// Whether it failed.
    pub is_error: bool,
    /// Its content blocks.
    pub content: Vec<Content>,
}

impl ToolResultSummary {
    /// The summary of one result.
    pub fn from_result(result: &ToolResult) -> Self {
        Self {
            call_id: result.call_id.clone(),
            tool: result.tool.clone(),
            outcome: result.outcome,
            is_error: result.is_error(),
            content: result.content.clone(),
        }
    }
}

/// Something that happened to a call or a turn. Serializes to the JSONL
/// event shapes of the CLI (`{"type": "tool_exec_start", …}`).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// A call entered the pipeline.
    ToolExecStart {
        /// The call's id (`tool_id` on the wire).
        #[serde(rename = "tool_id")]
        call_id: String,
        /// The tool name as the model gave it.
        tool: String,
        /// The registered tool's label, `null` when unknown or unset.
        label: Option<String>,
        /// The arguments exactly as received (an object, or JSON text).
        args: Value,
    },
    /// A preview or progress report for a running call.
    ToolExecUpdate {
        /// The call's id (`tool_id` on the wire).
        #[serde(rename = "tool_id")]
        call_id: String,
        /// Preview or progress.
        kind: UpdateKind,
        /// The preview text or the progress value.
        payload: Value,
    },
    /// A call ended; emitted exactly once per Start.
    ToolExecEnd {
        /// The call's id (`tool_id` on the wire).
        #[serde(rename = "tool_id")]
        call_id: String,
        /// The tool name.
        tool: String,
        /// The label, as in the Start event.
        label: Option<String>,
        /// How the call ended.
        outcome: Outcome,
        /// `outcome != success`.
        is_error: bool,
        /// What the model will read.
        content: Vec<Content>,
        /// A tool validator's code, `null` otherwise.
        error_code: Option<i64>,
        /// Argument coercions made for the call.
        coercions: Vec<Coercion>,
        /// Milliseconds from Start to End.
        duration_ms: u64,
    },
    /// A tool-result message begins.
    MessageStart {
        /// The message.
        message: ToolResultMessage,
    },
    /// A tool-result message is complete.
    MessageEnd {
        /// The message.
        message: ToolResultMessage,
    },
    /// Every call of the turn ended; all results, in source order.
    ModelResponse {
        /// One entry per call, in the order the model listed them.
        tool_results: Vec<ToolResultSummary>,
    },
    /// A background job ended (it belongs to no call or turn: it arrives
    /// whenever the job ends), so that a harness can tell the model.
    JobExit {
        /// The job's id, as `bash` returned it.
        job_id: String,
        /// How it ended, e.g. `exited with code 0`, `killed by signal 9`,
        /// `stopped by kill_shell`.
        status: String,
        /// The command it ran.
        command: String,
    },
}

impl Event {
    /// The End event reporting `result`.
    pub fn end(result: &ToolResult) -> Self {
        Event::ToolExecEnd {
            call_id: result.call_id.clone(),
            tool: result.tool.clone(),
            label: result.label.clone(),
            outcome: result.outcome,
            is_error: result.is_error(),
            content: result.content.clone(),
            error_code: result.error_code,
            coercions: result.coercions.clone(),
            duration_ms: u64::try_from(result.duration.as_millis()).unwrap_or(u64::MAX),
        }
    }

    /// The call id this event belongs to, for per-call events.
    pub fn call_id(&self) -> Option<&str> {
        match self {
            Event::ToolExecStart { call_id, .. }
            | Event::ToolExecUpdate { call_id, .. }
            | Event::ToolExecEnd { call_id, .. } => Some(call_id),
            _ => None,
        }
    }
}

/// Where events go. `emit` is synchronous, never fails and never blocks, so a
/// drop guard can always report a call's End and a slow consumer loses
/// nothing: use a callback that does not block, or [`EventSink::channel`]
/// (an unbounded channel).
#[derive(Clone)]
pub struct EventSink {
    /// `None` discards: the no-op sink allocates nothing, and the pipeline
    /// does not build the events it would discard.
    emit: Option<Arc<dyn Fn(Event) + Send + Sync>>,
}

impl EventSink {
    /// A sink that calls `f` for every event. `f` must not block.
    pub fn from_fn(f: impl Fn(Event) + Send + Sync + 'static) -> Self {
        Self {
            emit: Some(Arc::new(f)),
        }
    }

    /// A sink feeding an unbounded channel, and its receiving end. Events
    /// sent after the receiver is dropped are discarded.
    pub fn channel() -> (Self, mpsc::UnboundedReceiver<Event>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let sink = Self::from_fn(move |event| {
            let _ = tx.send(event);
        });
        (sink, rx)
    }

    /// A sink that discards every event.
    pub const fn noop() -> Self {
        Self { emit: None }
    }

    /// Whether this is the no-op sink, which discards every event (so an
    /// event need not be built for it).
    pub fn is_noop(&self) -> bool {
        self.emit.is_none()
    }

    /// Delivers one event.
    pub fn emit(&self, event: Event) {
        if let Some(emit) = &self.emit {
            emit(event)
        }
    }

    /// A sink that delivers every event to `self` and then to `other`.
    pub fn tee(self, other: EventSink) -> Self {
        if other.is_noop() {
            return self;
        }
        if self.is_noop() {
            return other;
        }
        Self::from_fn(move |event: Event| {
            self.emit(event.clone());
            other.emit(event);
        })
    }
}

impl Default for EventSink {
    fn default() -> Self {
        Self::noop()
    }
}

impl fmt::Debug for EventSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventSink").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    fn marker() -> Event {
        Event::ModelResponse {
            tool_results: Vec::new(),
        }
    }

    #[test]
    fn the_noop_sink_is_known_as_such_and_a_tee_with_it_is_the_other_sink() {
        assert!(EventSink::noop().is_noop());
        assert!(EventSink::default().is_noop());
        assert!(EventSink::noop().tee(EventSink::noop()).is_noop());
        EventSink::noop().emit(marker());
        let seen = Arc::new(Mutex::new(0));
        let counted = {
            let seen = seen.clone();
            EventSink::from_fn(move |_| *seen.lock().unwrap() += 1)
        };
        assert!(!counted.is_noop());
        let left = EventSink::noop().tee(counted.clone());
        let right = counted.clone().tee(EventSink::noop());
        let both = counted.clone().tee(counted);
        for sink in [&left, &right] {
            assert!(!sink.is_noop());
            sink.emit(marker());
        }
        both.emit(marker());
        assert_eq!(*seen.lock().unwrap(), 4);
    }
}
