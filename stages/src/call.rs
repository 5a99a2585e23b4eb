//! The call as a type: [`Call<S>`], its state markers, and its [`CallContext`].
//!
//! A call's state is its type parameter. Each state holds exactly what the
//! stages so far have established, and only the stage that establishes it
//! can build the next state: the fields are private to this crate.

use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use http::Extensions;
use serde_json::Value;
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

use crate::coerce::Coercion;
use crate::event::{Event, EventSink, UpdateKind};
use crate::outcome::{Content, Outcome};
use crate::registry::RegisteredTool;

/// A tool call on its way through the pipeline, in state `S`.
pub struct Call<S> {
    pub(crate) id: String,
    pub(crate) tool: String,
    pub(crate) cx: CallContext,
    pub(crate) state: S,
}

impl<S> Call<S> {
    /// The call's id, as the model gave it.
    pub fn id(&self) -> &str {
        &self.id
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

    /// The same call in a new state; only stages of this crate move calls on.
    pub(crate) fn with_state<T>(self, state: T) -> Call<T> {
        Call {
            id: self.id,
            tool: self.tool,
            cx: self.cx,
            state,
        }
    }

    /// Separates the state from the rest of the call.
    pub(crate) fn split(self) -> (Call<()>, S) {
        (
            Call {
                id: self.id,
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
        self.with_state(Executed {
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
            .field("id", &self.id)
            .field("tool", &self.tool)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl Call<Unvalidated> {
    /// A new call as the model proposed it. `args` may be a JSON value or
    /// JSON text (`""` means `{}`).
    pub fn new(id: impl Into<String>, tool: impl Into<String>, args: impl Into<RawArgs>) -> Self {
        let id = id.into();
        Call {
            cx: CallContext::new(&id),
            id,
            tool: tool.into(),
            state: Unvalidated { args: args.into() },
        }
    }

    /// Sends this call's events to `sink` instead of the pipeline's sink.
    pub fn with_sink(self, sink: EventSink) -> Self {
        self.cx.events.bind(sink);
        self
    }

    /// Uses `cancellation` for this call (e.g. a child of the turn's).
    pub fn with_cancellation(mut self, cancellation: Cancellation) -> Self {
        self.cx.cancellation = cancellation;
        self
    }
}

/// Arguments as the model sent them: a JSON value or JSON text.
#[derive(Clone, Debug, PartialEq)]
pub enum RawArgs {
    /// Already-parsed JSON.
    Value(Value),
    /// JSON text, as OpenAI-style APIs send arguments; `""` means `{}`.
    Text(String),
}

impl RawArgs {
    /// The arguments as the Start event shows them: the value, or the text as
    /// a JSON string.
    pub fn to_value(&self) -> Value {
        match self {
            RawArgs::Value(v) => v.clone(),
            RawArgs::Text(t) => Value::String(t.clone()),
        }
    }
}

impl From<Value> for RawArgs {
    fn from(v: Value) -> Self {
        RawArgs::Value(v)
    }
}

impl From<String> for RawArgs {
    fn from(t: String) -> Self {
        RawArgs::Text(t)
    }
}

impl From<&str> for RawArgs {
    fn from(t: &str) -> Self {
        RawArgs::Text(t.to_owned())
    }
}

/// State: as the model proposed it.
#[derive(Debug)]
pub struct Unvalidated {
    pub(crate) args: RawArgs,
}

impl Unvalidated {
    /// The raw arguments.
    pub fn args(&self) -> &RawArgs {
        &self.args
    }
}

/// State: the Start event is emitted and the End guard armed.
#[derive(Debug)]
pub struct Started {
    pub(crate) args: RawArgs,
}

impl Started {
    /// The raw arguments.
    pub fn args(&self) -> &RawArgs {
        &self.args
    }
}

/// State: not cancelled, and the breaker lets the tool run.
#[derive(Debug)]
pub struct Admitted {
    pub(crate) args: RawArgs,
}

impl Admitted {
    /// The raw arguments.
    pub fn args(&self) -> &RawArgs {
        &self.args
    }
}

/// State: the tool is found in the registry.
#[derive(Debug)]
pub struct Resolved {
    pub(crate) tool: Arc<RegisteredTool>,
    pub(crate) args: RawArgs,
}

impl Resolved {
    /// The registered tool.
    pub fn tool(&self) -> &Arc<RegisteredTool> {
        &self.tool
    }

    /// The raw arguments.
    pub fn args(&self) -> &RawArgs {
        &self.args
    }
}

/// State: the arguments are parsed and coerced to the tool's schema.
#[derive(Debug)]
pub struct Coerced {
    pub(crate) tool: Arc<RegisteredTool>,
    pub(crate) args: Value,
    pub(crate) coercions: Vec<Coercion>,
}

impl Coerced {
    /// The registered tool.
    pub fn tool(&self) -> &Arc<RegisteredTool> {
        &self.tool
    }

    /// The coerced arguments.
    pub fn args(&self) -> &Value {
        &self.args
    }

    /// The coercions made.
    pub fn coercions(&self) -> &[Coercion] {
        &self.coercions
    }
}

/// State: the arguments passed the schema and the tool's own `validate`.
#[derive(Debug)]
pub struct Validated {
    pub(crate) tool: Arc<RegisteredTool>,
    pub(crate) args: Value,
    pub(crate) coercions: Vec<Coercion>,
}

impl Validated {
    /// The registered tool.
    pub fn tool(&self) -> &Arc<RegisteredTool> {
        &self.tool
    }

    /// The validated arguments.
    pub fn args(&self) -> &Value {
        &self.args
    }

    /// The coercions made.
    pub fn coercions(&self) -> &[Coercion] {
        &self.coercions
    }
}

/// State: the tool's preview (if any) is computed and emitted.
#[derive(Debug)]
pub struct Previewed {
    pub(crate) tool: Arc<RegisteredTool>,
    pub(crate) args: Value,
    pub(crate) coercions: Vec<Coercion>,
    pub(crate) preview: Option<String>,
}

impl Previewed {
    /// The registered tool.
    pub fn tool(&self) -> &Arc<RegisteredTool> {
        &self.tool
    }

    /// The validated arguments.
    pub fn args(&self) -> &Value {
        &self.args
    }

    /// The coercions made.
    pub fn coercions(&self) -> &[Coercion] {
        &self.coercions
    }

    /// The preview, if the tool gives one.
    pub fn preview(&self) -> Option<&str> {
        self.preview.as_deref()
    }
}

/// How the gate let a call through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GateVerdict {
    /// Allowed as proposed.
    Allowed,
    /// Allowed after the gate rewrote the arguments (re-checked since).
    Rewritten,
}

/// State: the gate allowed the call. Only the Gate stage builds this state.
#[derive(Debug)]
pub struct Gated {
    pub(crate) tool: Arc<RegisteredTool>,
    pub(crate) args: GatedArgs,
    pub(crate) coercions: Vec<Coercion>,
    pub(crate) preview: Option<String>,
    pub(crate) verdict: GateVerdict,
}

impl Gated {
    /// The registered tool.
    pub fn tool(&self) -> &Arc<RegisteredTool> {
        &self.tool
    }

    /// The arguments the tool will receive.
    pub fn args(&self) -> &GatedArgs {
        &self.args
    }

    /// The coercions made.
    pub fn coercions(&self) -> &[Coercion] {
        &self.coercions
    }

    /// The preview shown to the gate, if any.
    pub fn preview(&self) -> Option<&str> {
        self.preview.as_deref()
    }

    /// Whether the gate rewrote the arguments.
    pub fn verdict(&self) -> GateVerdict {
        self.verdict
    }
}

/// State: the call is over.
#[derive(Debug)]
pub struct Executed {
    pub(crate) outcome: Outcome,
    pub(crate) content: Vec<Content>,
    pub(crate) error_code: Option<i64>,
    pub(crate) coercions: Vec<Coercion>,
}

impl Executed {
    /// How it ended.
    pub fn outcome(&self) -> Outcome {
        self.outcome
    }

    /// What the model will read.
    pub fn content(&self) -> &[Content] {
        &self.content
    }

    /// A tool validator's code, if any.
    pub fn error_code(&self) -> Option<i64> {
        self.error_code
    }

    /// The coercions made.
    pub fn coercions(&self) -> &[Coercion] {
        &self.coercions
    }
}

/// Arguments that passed every stage up to and including the gate. Only the
/// Gate stage constructs them (and, with the `test-util` feature, tests), so
/// a tool's `execute` cannot be reached by a call that skipped a stage.
#[derive(Clone, Debug, PartialEq)]
pub struct GatedArgs {
    value: Value,
}

impl GatedArgs {
    pub(crate) fn new(value: Value) -> Self {
        Self { value }
    }

    /// Gated arguments for a tool author's unit tests.
    #[cfg(feature = "test-util")]
    pub fn for_test(value: Value) -> Self {
        Self { value }
    }

    /// The arguments.
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// The arguments, owned.
    pub fn into_value(self) -> Value {
        self.value
    }

    /// The arguments deserialized into `T`.
    pub fn parse<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        T::deserialize(&self.value)
    }
}

/// Why a call's cancellation fired.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CancelReason {
    /// The user or harness aborted: `Tool execution cancelled.`
    Abort,
    /// A queued user message skipped the call: `Skipped due to queued user message.`
    Skip,
}

/// A cancellation token with the reason it fired. Children are cancelled
/// with their parent and inherit its reason unless they were given one.
#[derive(Clone, Debug, Default)]
pub struct Cancellation {
    token: CancellationToken,
    reason: Arc<OnceLock<CancelReason>>,
    parent: Option<Arc<Cancellation>>,
}

impl Cancellation {
    /// A fresh, uncancelled cancellation.
    pub fn new() -> Self {
        Self::default()
    }

    /// A child: cancelled when `self` is, on its own without affecting `self`.
    pub fn child(&self) -> Self {
        Self {
            token: self.token.child_token(),
            reason: Arc::new(OnceLock::new()),
            parent: Some(Arc::new(self.clone())),
        }
    }

    /// Cancels with `reason` (the first reason given wins).
    pub fn cancel(&self, reason: CancelReason) {
        let _ = self.reason.set(reason);
        self.token.cancel();
    }

    /// Whether it fired.
    pub fn is_cancelled(&self) -> bool {
        self.token.is_cancelled()
    }

    /// Why it fired: its own reason, else its parent's, else `Abort`;
    /// `None` while not cancelled.
    pub fn reason(&self) -> Option<CancelReason> {
        if !self.is_cancelled() {
            return None;
        }
        Some(
            self.own_or_inherited_reason()
                .unwrap_or(CancelReason::Abort),
        )
    }

    fn own_or_inherited_reason(&self) -> Option<CancelReason> {
        self.reason.get().copied().or_else(|| {
            self.parent
                .as_ref()
                .and_then(|p| p.own_or_inherited_reason())
        })
    }

    /// The underlying token, for `select!` or for handing to spawned work.
    pub fn token(&self) -> &CancellationToken {
        &self.token
    }

    /// Completes when it fires.
    pub fn cancelled(&self) -> WaitForCancellationFuture<'_> {
        self.token.cancelled()
    }
}

/// Emits a call's events and refuses any after its End.
#[derive(Clone, Default)]
pub(crate) struct CallEvents {
    inner: Arc<Mutex<EventsInner>>,
}

#[derive(Default)]
struct EventsInner {
    sink: Option<EventSink>,
    ended: bool,
}

impl CallEvents {
    fn lock(&self) -> std::sync::MutexGuard<'_, EventsInner> {
        // A panic while holding this lock cannot leave it inconsistent:
        // the two fields are each written in one step.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Uses `sink` for this call's events.
    pub(crate) fn bind(&self, sink: EventSink) {
        self.lock().sink = Some(sink);
    }

    /// Uses `sink` unless the call already has one.
    pub(crate) fn bind_default(&self, sink: &EventSink) {
        let mut inner = self.lock();
        if inner.sink.is_none() {
            inner.sink = Some(sink.clone());
        }
    }

    /// Emits `event` unless the End was emitted; returns whether it was.
    pub(crate) fn emit(&self, event: Event) -> bool {
        let inner = self.lock();
        if inner.ended {
            return false;
        }
        if let Some(sink) = &inner.sink {
            sink.emit(event);
        }
        true
    }

    /// Emits the End event, once; later events are dropped.
    pub(crate) fn emit_end(&self, event: Event) -> bool {
        let mut inner = self.lock();
        if inner.ended {
            return false;
        }
        inner.ended = true;
        if let Some(sink) = &inner.sink {
            sink.emit(event);
        }
        true
    }
}

/// Reports a running tool's progress as `ToolExecUpdate{kind: progress}`.
/// Reports after the call's End are dropped.
#[derive(Clone)]
pub struct ProgressReporter {
    tool_id: Arc<str>,
    events: CallEvents,
}

impl ProgressReporter {
    /// Reports `payload`; returns `false` if the call already ended.
    pub fn report(&self, payload: impl Into<Value>) -> bool {
        self.events.emit(Event::ToolExecUpdate {
            tool_id: self.tool_id.to_string(),
            kind: UpdateKind::Progress,
            payload: payload.into(),
        })
    }
}

impl fmt::Debug for ProgressReporter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProgressReporter")
            .field("tool_id", &self.tool_id)
            .finish_non_exhaustive()
    }
}

/// What travels with a call through every stage: its cancellation, its
/// events, and typed extensions for middleware and tools. Clones share the
/// cancellation and events and copy the extensions.
#[derive(Clone)]
pub struct CallContext {
    pub(crate) cancellation: Cancellation,
    pub(crate) events: CallEvents,
    pub(crate) tool_id: Arc<str>,
    extensions: Extensions,
}

impl CallContext {
    fn new(tool_id: &str) -> Self {
        Self {
            cancellation: Cancellation::new(),
            events: CallEvents::default(),
            tool_id: Arc::from(tool_id),
            extensions: Extensions::new(),
        }
    }

    /// A context for calling a tool directly in a tool author's tests.
    #[cfg(feature = "test-util")]
    pub fn for_test(tool_id: &str, sink: EventSink) -> Self {
        let cx = Self::new(tool_id);
        cx.events.bind(sink);
        cx
    }

    /// The id of the call this context belongs to.
    pub fn call_id(&self) -> &str {
        &self.tool_id
    }

    /// The call's cancellation.
    pub fn cancellation(&self) -> &Cancellation {
        &self.cancellation
    }

    /// The call's progress reporter.
    pub fn progress(&self) -> ProgressReporter {
        ProgressReporter {
            tool_id: self.tool_id.clone(),
            events: self.events.clone(),
        }
    }

    /// Emits a preview update for this call.
    pub(crate) fn emit_preview(&self, preview: &str) {
        self.events.emit(Event::ToolExecUpdate {
            tool_id: self.tool_id.to_string(),
            kind: UpdateKind::Preview,
            payload: Value::String(preview.to_owned()),
        });
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
            .field("tool_id", &self.tool_id)
            .field("cancelled", &self.cancellation.is_cancelled())
            .finish_non_exhaustive()
    }
}
