//! The call as a type: [`Call<S>`], its state markers, and its [`CallContext`].
//!
//! A call's state is its type parameter. Each state holds exactly what the
//! stages so far have established, and only the stage that establishes it
//! can build the next state: the fields are private to this crate.
//!
//! One concept per file: the call itself here, its states in `state`, its
//! arguments in `args`, cancellation in `cancel`, the context in `context`,
//! the per-call event emitter in `events` and progress in `progress`.

mod args;
mod cancel;
mod context;
mod events;
mod progress;
mod state;

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

pub use args::{GatedArgs, RawArgs};
pub use cancel::{CancelReason, Cancellation};
pub use context::CallContext;
pub(crate) use events::CallEvents;
pub use progress::ProgressReporter;
pub use state::{
    Admitted, Coerced, Executed, GateVerdict, Gated, Previewed, Resolved, Started, Unvalidated,
    Validated,
};

use crate::coerce::{Coercion, Precoerced};
use crate::event::EventSink;
use crate::outcome::{Content, Outcome};
use crate::registry::RegisteredTool;

/// A tool call on its way through the pipeline, in state `S`.
///
/// Its id lives once, in its context, and its tool name once, each shared
/// (`Arc<str>`) by whatever reports the call: the events, the End guard,
/// the breaker's accounting.
pub struct Call<S> {
    pub(crate) tool: Arc<str>,
    pub(crate) cx: CallContext,
    pub(crate) state: S,
}

impl<S> Call<S> {
    /// The call's id, as the model gave it.
    pub fn call_id(&self) -> &str {
        &self.cx.call_id
    }

    /// The tool name the model asked for.
    pub fn tool_name(&self) -> &str {
        &self.tool
    }

    /// The call's context: cancellation, events, extensions.
    pub fn context(&self) -> &CallContext {
        &self.cx
    }

    /// The call's context, mutably (to add extensions).
    pub fn context_mut(&mut self) -> &mut CallContext {
        &mut self.cx
    }

    /// What the stages so far have established.
    pub fn state(&self) -> &S {
        &self.state
    }

    /// The same call in the next state: the one way a stage moves a call
    /// on (only stages of this crate can).
    pub(crate) fn advance<T>(self, state: T) -> Call<T> {
        Call {
            tool: self.tool,
            cx: self.cx,
            state,
        }
    }

    /// The call without its state, kept to report an ending after the call
    /// itself was handed on.
    pub(crate) fn shell(&self) -> Call<()> {
        Call {
            tool: self.tool.clone(),
            cx: self.cx.clone(),
            state: (),
        }
    }

    /// Separates the state from the rest of the call.
    pub(crate) fn split(self) -> (Call<()>, S) {
        (
            Call {
                tool: self.tool,
                cx: self.cx,
                state: (),
            },
            self.state,
        )
    }

    /// Ends the call here with `outcome` and one text block.
    pub(crate) fn end(self, outcome: Outcome, message: impl Into<String>) -> Call<Executed> {
        self.finish(outcome, vec![Content::text(message)], None, Vec::new())
    }

    /// Ends the call here with everything the End event reports.
    pub(crate) fn finish(
        self,
        outcome: Outcome,
        content: Vec<Content>,
        error_code: Option<i64>,
        coercions: Vec<Coercion>,
    ) -> Call<Executed> {
        self.advance(Executed {
            outcome,
            content,
            error_code,
            coercions,
        })
    }
}

impl<S: fmt::Debug> fmt::Debug for Call<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Call")
            .field("call_id", &self.cx.call_id)
            .field("tool", &self.tool)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl Call<crate::call::Gated> {
    /// Answers the call without running the tool: middleware that decides
    /// a call must not run (a loop guard, a cache) ends it here with
    /// `outcome` and one text block the model reads.
    pub fn answer_without_running(
        self,
        outcome: Outcome,
        message: impl Into<String>,
    ) -> Call<Executed> {
        self.end(outcome, message)
    }
}

impl Call<Executed> {
    /// What the model will read, for middleware after Execute to add to
    /// (a note, context from a hook).
    pub fn content_mut(&mut self) -> &mut Vec<Content> {
        &mut self.state.content
    }

    /// Marks the result as refused by policy after the tool ran:
    /// [`Outcome::Denied`], which never counts towards the breaker, with no
    /// error code. What the tool did stays done; put a text saying so in
    /// the content ([`Call::content_mut`]).
    pub fn mark_denied(&mut self) {
        self.state.outcome = Outcome::Denied;
        self.state.error_code = None;
    }
}

impl Call<Unvalidated> {
    /// A new call as the model proposed it. `args` may be a JSON value or
    /// JSON text (`""` means `{}`).
    pub fn new(
        call_id: impl Into<String>,
        tool: impl Into<String>,
        args: impl Into<RawArgs>,
    ) -> Self {
        Self::new_with_cancellation(call_id, tool, args, Cancellation::new())
    }

    /// A new call that uses `cancellation` (e.g. a child of the turn's):
    /// [`Call::new`] then [`Call::with_cancellation`], without making the
    /// cancellation `new` would give the call and drop it.
    pub fn new_with_cancellation(
        call_id: impl Into<String>,
        tool: impl Into<String>,
        args: impl Into<RawArgs>,
        cancellation: Cancellation,
    ) -> Self {
        Call {
            cx: CallContext::new(Arc::from(Into::<String>::into(call_id)), cancellation),
            tool: Arc::from(Into::<String>::into(tool)),
            state: Unvalidated {
                args: args.into(),
                pre: None,
            },
        }
    }

    /// Sends this call's events to `sink` instead of the pipeline's sink.
    pub fn with_sink(self, sink: EventSink) -> Self {
        self.cx.events.bind(sink);
        self
    }

    /// The same call with `args` in place of the model's arguments (a
    /// harness rewriting a call before the pipeline runs it). Any parse +
    /// coerce kept by [`Call::coerce_for`] is dropped with the old
    /// arguments.
    pub fn with_args(mut self, args: impl Into<RawArgs>) -> Self {
        self.state = Unvalidated {
            args: args.into(),
            pre: None,
        };
        self
    }

    /// Parses and coerces the arguments to `tool`'s schema now, exactly as
    /// the Coerce stage would, and keeps the result on the call: when the
    /// pipeline's Resolve stage finds the same registered tool (the same
    /// `Arc`), the Coerce stage uses it instead of doing the work again.
    /// The scheduler calls this to classify a call, so each call's
    /// arguments are parsed and coerced once. Returns the coerced
    /// arguments, or the message the Coerce stage would end the call with.
    pub fn coerce_for(&mut self, tool: &Arc<RegisteredTool>) -> Result<&Value, &str> {
        let state = &mut self.state;
        if state.pre.as_ref().is_some_and(|pre| !pre.is_for(tool)) {
            state.pre = None;
        }
        let pre = state
            .pre
            .get_or_insert_with(|| Precoerced::new(tool, &state.args));
        match &pre.result {
            Ok((args, _)) => Ok(args),
            Err(message) => Err(message),
        }
    }

    /// Uses `cancellation` for this call (e.g. a child of the turn's).
    pub fn with_cancellation(mut self, cancellation: Cancellation) -> Self {
        self.cx.cancellation = cancellation;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_made_with_a_cancellation_uses_it() {
        let turn = Cancellation::new();
        let call = Call::new_with_cancellation("c1", "read", "{}", turn.child());
        assert_eq!((call.call_id(), call.tool_name()), ("c1", "read"));
        assert!(!call.context().cancellation().is_cancelled());
        turn.cancel(CancelReason::Skip);
        assert_eq!(
            call.context().cancellation().reason(),
            Some(CancelReason::Skip)
        );
        let alone = Call::new("c2", "read", "{}");
        assert!(!alone.context().cancellation().is_cancelled());
    }
}
