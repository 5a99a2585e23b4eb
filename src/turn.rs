//! A turn: one assistant message's tool calls in, results and tool-result
//! messages out.
//!
//! Calls may arrive all at once or as a stream, so a harness can start safe
//! calls while the model is still streaming the rest of its message;
//! admission order is arrival order. A call admitted on arrival starts in
//! the turn's task and keeps it only while it does not wait (see
//! [`Turn::run_stream`]). `ToolExecEnd` is emitted as each call
//! finishes; when every call has ended, one tool-result message per call
//! (`MessageStart` / `MessageEnd`) follows in source order, then one
//! `ModelResponse` with all results.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use agentcore_stages::{
    Call, CancelReason, Cancellation, Event, EventSink, PipelineService, ToolResult,
    ToolResultMessage, ToolResultSummary,
};
use futures::stream::{FuturesUnordered, Stream, StreamExt};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::message::ToolCall;
use crate::scheduler::service::{Entered, Group};
use crate::scheduler::{Scheduler, SchedulerError, SteeringPolicy};

static NEXT_GROUP: AtomicU64 = AtomicU64::new(1);

/// One turn's calls, run through a [`Scheduler`].
///
/// ```
/// # use std::sync::Arc;
/// # use agentcore::{Pipeline, ToolRegistry};
/// use agentcore::scheduler::{Scheduler, SchedulerConfig};
/// use agentcore::turn::Turn;
/// use agentcore::message::ToolCall;
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// # let registry = Arc::new(ToolRegistry::new());
/// let pipeline = Pipeline::builder().registry(registry.clone()).build();
/// let scheduler = Scheduler::new(pipeline.service(), registry, SchedulerConfig::default());
/// let (turn, mut events) = Turn::with_channel(&scheduler);
/// let result = turn.run(vec![ToolCall::new("c1", "missing", "{}")]).await.unwrap();
/// assert_eq!(result.results[0].text(), r#"tool "missing" not found"#);
/// # });
/// ```
pub struct Turn {
    scheduler: Scheduler,
    /// The turn's own handle on the scheduler's pipeline: a call admitted
    /// on arrival is run by the turn's task (see [`Turn::run_stream`]).
    pipeline: PipelineService,
    sink: EventSink,
    control: TurnControl,
}

/// Steers or aborts a running turn; cheap to clone and send anywhere.
#[derive(Clone)]
pub struct TurnControl {
    scheduler: Scheduler,
    group: Group,
    cancellation: Cancellation,
    steered: Arc<AtomicBool>,
}

impl std::fmt::Debug for TurnControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TurnControl")
            .field("steered", &self.is_steered())
            .field("aborted", &self.cancellation.is_cancelled())
            .finish()
    }
}

impl TurnControl {
    /// A user message arrived: with [`SteeringPolicy::SkipPending`] nothing
    /// new starts, in-flight `Cancel` calls are cancelled, `Block` calls
    /// finish and every call not yet started ends `Skipped`; with
    /// [`SteeringPolicy::FinishBatch`] the turn runs to the end.
    pub fn steer(&self) {
        self.steered.store(true, Ordering::SeqCst);
        if self.skips() {
            self.scheduler.steer(Some(self.group));
        }
    }

    /// Aborts: in-flight calls are cancelled, calls not yet started end
    /// `Cancelled`.
    pub fn abort(&self) {
        self.cancellation.cancel(CancelReason::Abort);
        self.scheduler.abort(Some(self.group));
    }

    /// Whether the turn was steered.
    pub fn is_steered(&self) -> bool {
        self.steered.load(Ordering::SeqCst)
    }

    fn skips(&self) -> bool {
        self.scheduler.config().steering == SteeringPolicy::SkipPending
    }
}

/// What a turn produced.
#[derive(Clone, Debug, PartialEq)]
pub struct TurnResult {
    /// One result per call, in the order the calls arrived.
    pub results: Vec<ToolResult>,
    /// Whether a steering message arrived during the turn.
    pub steered: bool,
}

impl TurnResult {
    /// The tool-result messages for the next model request, in source order.
    pub fn messages(&self) -> Vec<ToolResultMessage> {
        self.results
            .iter()
            .map(ToolResultMessage::from_result)
            .collect()
    }
}

impl Turn {
    /// A turn on `scheduler` whose events go to `sink`.
    pub fn new(scheduler: &Scheduler, sink: EventSink) -> Self {
        let control = TurnControl {
            scheduler: scheduler.clone(),
            group: Group(NEXT_GROUP.fetch_add(1, Ordering::Relaxed)),
            cancellation: Cancellation::new(),
            steered: Arc::new(AtomicBool::new(false)),
        };
        Self {
            scheduler: scheduler.clone(),
            pipeline: scheduler.pipeline(),
            sink,
            control,
        }
    }

    /// A turn whose events arrive on the returned channel.
    pub fn with_channel(scheduler: &Scheduler) -> (Self, UnboundedReceiver<Event>) {
        let (sink, rx) = EventSink::channel();
        (Self::new(scheduler, sink), rx)
    }

    /// The turn's control, for steering and abort.
    pub fn control(&self) -> TurnControl {
        self.control.clone()
    }

    /// Runs one assistant message's calls.
    pub async fn run(
        self,
        calls: impl IntoIterator<Item = ToolCall>,
    ) -> Result<TurnResult, SchedulerError> {
        self.run_stream(futures::stream::iter(calls)).await
    }

    /// Runs calls as they arrive (e.g. while the model is still streaming);
    /// each is enqueued on arrival. Dropping the returned future cancels
    /// every call of the turn that has not ended.
    ///
    /// A call that may start on arrival (nothing queued before it, a slot
    /// free) starts in this future's task: its first poll runs here, and a
    /// call that ends there (nothing to wait for) costs no task of its own.
    /// A call that does not end on its first poll (it waits on I/O, a
    /// timer, the blocking pool, a child process) goes on in a task of its
    /// own, as a queued call does once admitted, so every started call
    /// runs on whether or not this future is polled, and safe calls run
    /// side by side on the runtime's threads.
    pub async fn run_stream(
        mut self,
        calls: impl Stream<Item = ToolCall>,
    ) -> Result<TurnResult, SchedulerError> {
        let mut calls = std::pin::pin!(calls);
        let mut arriving = true;
        let mut pending = FuturesUnordered::new();
        // Room for the calls the stream says are coming, within the queue's
        // bound (a stream's hint is not to be trusted with memory).
        let expected = calls
            .size_hint()
            .0
            .min(self.scheduler.config().queue_capacity);
        let mut results: Vec<Option<ToolResult>> = Vec::with_capacity(expected);
        loop {
            tokio::select! {
                // Arrivals first: a result read later is the same result,
                // and no die is rolled for each call.
                biased;
                next = calls.next(), if arriving => match next {
                    None => arriving = false,
                    Some(tool_call) => {
                        let call = self.prepare(tool_call);
                        let index = results.len();
                        let group = self.control.group;
                        match self.scheduler.enter(call, group, &mut self.pipeline).await? {
                            Entered::Ended(result) => results.push(Some(result)),
                            Entered::Running(response) => {
                                results.push(None);
                                pending.push(async move { (index, response.await) });
                            }
                        }
                    }
                },
                Some((index, result)) = pending.next() => {
                    results[index] = Some(result?);
                }
                else => break,
            }
        }
        let results: Vec<ToolResult> = results.into_iter().flatten().collect();
        // The messages are built only for a sink that keeps them.
        if !self.sink.is_noop() {
            for result in &results {
                let message = ToolResultMessage::from_result(result);
                self.sink.emit(Event::MessageStart {
                    message: message.clone(),
                });
                self.sink.emit(Event::MessageEnd { message });
            }
            self.sink.emit(Event::ModelResponse {
                tool_results: results.iter().map(ToolResultSummary::from_result).collect(),
            });
        }
        Ok(TurnResult {
            results,
            steered: self.control.is_steered(),
        })
    }

    fn prepare(&self, tool_call: ToolCall) -> Call<agentcore_stages::Unvalidated> {
        let cancellation = self.control.cancellation.child();
        if self.control.is_steered() && self.control.skips() {
            // Steering already arrived: this call will not start.
            cancellation.cancel(CancelReason::Skip);
        }
        Call::new_with_cancellation(
            tool_call.call_id,
            tool_call.name,
            tool_call.args,
            cancellation,
        )
        .with_sink(self.sink.clone())
    }
}

impl std::fmt::Debug for Turn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Turn")
            .field("control", &self.control)
            .finish_non_exhaustive()
    }
}
