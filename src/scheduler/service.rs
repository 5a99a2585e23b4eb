//! The scheduler's handle: the tower service callers hold.

use std::future::{Future, poll_fn};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use agentcore_stages::{
    Call, CancelReason, Cancellation, Pipeline, PipelineService, ToolRegistry, ToolResult,
    Unvalidated,
};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, oneshot};
use tokio_util::sync::PollSemaphore;
use tower::{Service, ServiceExt};

use super::safety::{Admission, classify};
use super::worker::{Control, Queued, Shared, Worker};

/// What steering (a user message arriving mid-turn) does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SteeringPolicy {
    /// Start nothing new, cancel in-flight calls whose interrupt behaviour is
    /// `Cancel`, let `Block` calls finish, and end every call not yet started
    /// `Skipped`.
    #[default]
    SkipPending,
    /// Let the batch run to the end; the message waits.
    FinishBatch,
}

/// The scheduler's options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchedulerConfig {
    /// Safe calls that may run side by side; ≤ 1 means one at a time.
    pub max_concurrency: usize,
    /// Calls that may wait in the queue before `poll_ready` is pending.
    pub queue_capacity: usize,
    /// What steering does.
    pub steering: SteeringPolicy,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        Self {
            max_concurrency: 10,
            queue_capacity: 1024,
            steering: SteeringPolicy::SkipPending,
        }
    }
}

/// Why the scheduler could not take or finish a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SchedulerError {
    /// The worker task is gone (its runtime shut down).
    #[error("the scheduler's worker has stopped")]
    Closed,
}

/// Which calls a steering or abort applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Group(pub(crate) u64);

/// The scheduler: a cloneable tower service over a queue shared with the
/// running calls. `Service<Call<Unvalidated>>` with `Response = ToolResult`.
pub struct Scheduler {
    shared: Arc<Shared>,
    semaphore: PollSemaphore,
    permit: Option<OwnedSemaphorePermit>,
    registry: Arc<ToolRegistry>,
    config: SchedulerConfig,
}

impl Clone for Scheduler {
    fn clone(&self) -> Self {
        Self {
            shared: self.shared.clone(),
            semaphore: self.semaphore.clone(),
            // A reservation belongs to the handle that made it.
            permit: None,
            registry: self.registry.clone(),
            config: self.config,
        }
    }
}

impl std::fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scheduler")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Scheduler {
    /// A scheduler running `pipeline`'s standard stack
    /// ([`Pipeline::service`]) for the pipeline's own tools, with its worker
    /// spawned on the current tokio runtime: the registry is given once,
    /// to the pipeline.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// use agentcore::scheduler::{Scheduler, SchedulerConfig};
    /// use agentcore::{Pipeline, ToolRegistry};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let pipeline = Pipeline::builder()
    ///     .registry(Arc::new(ToolRegistry::new()))
    ///     .build();
    /// let scheduler = Scheduler::from_pipeline(&pipeline, SchedulerConfig::default());
    /// assert!(Arc::ptr_eq(scheduler.registry(), pipeline.registry()));
    /// # }
    /// ```
    ///
    /// With layers of your own ([`Pipeline::service_with`]) or a service
    /// wrapped otherwise, use [`Scheduler::new`].
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime, like `tokio::spawn`.
    pub fn from_pipeline(pipeline: &Pipeline, config: SchedulerConfig) -> Self {
        Self::new(pipeline.service(), pipeline.registry().clone(), config)
    }

    /// A scheduler running `pipeline` for the tools of `registry`, with its
    /// worker spawned on the current tokio runtime.
    ///
    /// For a service other than a pipeline's standard stack, such as
    /// `pipeline.service_with(your_layers)`: the scheduler cannot read the
    /// registry out of a service, and needs it to judge each call before
    /// it runs (safe calls side by side, unsafe calls alone), so it is
    /// given beside it; pass the pipeline's, `pipeline.registry().clone()`.
    /// Without layers of your own, [`Scheduler::from_pipeline`] says the
    /// same in one argument.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime, like `tokio::spawn`.
    pub fn new(
        pipeline: PipelineService,
        registry: Arc<ToolRegistry>,
        config: SchedulerConfig,
    ) -> Self {
        let (scheduler, worker) = Self::pair(pipeline, registry, config);
        tokio::spawn(worker.run());
        scheduler
    }

    /// A scheduler and its worker, for callers that spawn the worker
    /// themselves.
    pub fn pair(
        pipeline: PipelineService,
        registry: Arc<ToolRegistry>,
        config: SchedulerConfig,
    ) -> (Self, Worker) {
        let capacity = config.queue_capacity.max(1);
        let semaphore = PollSemaphore::new(Arc::new(Semaphore::new(capacity)));
        let (shared, worker) = Shared::new(pipeline, config);
        let scheduler = Self {
            shared,
            semaphore,
            permit: None,
            registry,
            config,
        };
        (scheduler, worker)
    }

    /// The options.
    pub fn config(&self) -> SchedulerConfig {
        self.config
    }

    /// The tools.
    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.registry
    }

    /// Steering for the calls of `group` (all calls when `None`): with
    /// [`SteeringPolicy::SkipPending`], queued calls end `Skipped` and
    /// in-flight `Cancel` calls are cancelled.
    pub(crate) fn steer(&self, group: Option<Group>) {
        self.shared.control(Control::Steer(group));
    }

    /// Aborts the calls of `group` (all calls when `None`), queued and in
    /// flight.
    pub(crate) fn abort(&self, group: Option<Group>) {
        self.shared.control(Control::Abort(group));
    }

    /// Steers every call in this scheduler (see [`SteeringPolicy`]).
    pub fn steer_all(&self) {
        self.steer(None);
    }

    /// Aborts every call in this scheduler.
    pub fn abort_all(&self) {
        self.abort(None);
    }
}

impl Service<Call<Unvalidated>> for Scheduler {
    type Response = ToolResult;
    type Error = SchedulerError;
    type Future = ResponseFuture;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        if self.shared.is_closed() {
            return Poll::Ready(Err(SchedulerError::Closed));
        }
        if self.permit.is_none() {
            match ready!(self.semaphore.poll_acquire(cx)) {
                Some(permit) => self.permit = Some(permit),
                None => return Poll::Ready(Err(SchedulerError::Closed)),
            }
        }
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut call: Call<Unvalidated>) -> Self::Future {
        let admission = classify(&self.registry, &mut call);
        self.enqueue(call, admission, None)
    }
}

/// How a turn's call entered the scheduler ([`Scheduler::enter`]).
pub(crate) enum Entered {
    /// Admitted on the spot and ended on its first poll, in the caller's
    /// task.
    Ended(ToolResult),
    /// Queued, or running on in a task of its own.
    Running(ResponseFuture),
}

impl Scheduler {
    /// The pipeline calls run through, for [`Scheduler::enter`].
    pub(crate) fn pipeline(&self) -> PipelineService {
        self.shared.pipeline().clone()
    }

    /// A turn's call: when nothing waits in the queue and the rule lets it
    /// start now, it starts in the caller's task, on the spot: its
    /// pipeline future (from `pipeline`, the caller's clone of
    /// [`Scheduler::pipeline`]) is polled once there, and if that does not
    /// end it, it goes on in a task of its own, as every queued call does.
    /// A call that ends on its first poll (no I/O, nothing to wait for)
    /// thus costs no task and no reply channel, and a call still running
    /// never depends on its caller polling. Otherwise the call is queued
    /// as by `poll_ready` and `call`.
    pub(crate) async fn enter(
        &mut self,
        mut call: Call<Unvalidated>,
        group: Group,
        pipeline: &mut PipelineService,
    ) -> Result<Entered, SchedulerError> {
        // Calls that end at once never make the turn wait: a long batch of
        // them gives the thread back now and then, as tokio's own
        // resources do, before a call is admitted.
        tokio::task::coop::consume_budget().await;
        let admission = classify(&self.registry, &mut call);
        // A first poll needs a runtime's context (timers, the blocking
        // pool); a caller outside one has its calls run by the runtime
        // the scheduler was made on.
        let inside_a_runtime = tokio::runtime::Handle::try_current().is_ok();
        let started = if inside_a_runtime {
            self.shared
                .start_now(admission, Some(group), call.context().cancellation())
        } else {
            None
        };
        let Some(ending) = started else {
            poll_fn(|cx| self.poll_ready(cx)).await?;
            return Ok(Entered::Running(self.enqueue(call, admission, Some(group))));
        };
        // Polled once here, with the caller's context; a panic that got
        // past the pipeline's event guard (a panicking event sink) ends the
        // turn as a panicking call task did: `Closed`.
        let (mut call, mut future) = (Some(call), None);
        let first = poll_fn(|cx| {
            Poll::Ready(catch_unwind(AssertUnwindSafe(|| {
                let call = call.take()?;
                // The standard stack is always ready; a stack that is not
                // is called once ready, in the call's own task.
                let future = match pipeline.poll_ready(cx) {
                    Poll::Ready(Ok(())) => future.insert(pipeline.call(call)),
                    Poll::Pending => future.insert(Box::pin(pipeline.clone().oneshot(call))),
                };
                Some(future.as_mut().poll(cx))
            })))
        })
        .await;
        match (first, future) {
            (Ok(Some(Poll::Ready(Ok(result)))), _) => {
                // The slot is free before the caller's next call enters.
                drop(ending);
                Ok(Entered::Ended(result))
            }
            (Ok(Some(Poll::Pending)), Some(future)) => {
                Ok(Entered::Running(self.shared.hand_over(future, ending)))
            }
            _ => Err(SchedulerError::Closed),
        }
    }

    /// Queues a classified call behind every earlier one; the place
    /// reserved by `poll_ready` is taken with it.
    fn enqueue(
        &mut self,
        call: Call<Unvalidated>,
        admission: Admission,
        group: Option<Group>,
    ) -> ResponseFuture {
        let Some(permit) = self.permit.take() else {
            panic!("Scheduler::call without poll_ready: reserve a place first");
        };
        let cancellation = call.context().cancellation().clone();
        let (reply, rx) = oneshot::channel();
        let queued = Queued {
            call,
            admission,
            group,
            cancellation: cancellation.clone(),
            permit,
            reply,
        };
        self.shared.enqueue(queued);
        ResponseFuture::new(rx, Some((cancellation, self.shared.clone())))
    }
}

/// Resolves to the call's result once the worker has run it. Dropping it
/// cancels the call: a queued call then ends `Cancelled` at once, a running
/// one is stopped.
pub struct ResponseFuture {
    rx: oneshot::Receiver<ToolResult>,
    cancel_on_drop: Option<(Cancellation, Arc<Shared>)>,
}

impl ResponseFuture {
    pub(super) fn new(
        rx: oneshot::Receiver<ToolResult>,
        cancel_on_drop: Option<(Cancellation, Arc<Shared>)>,
    ) -> Self {
        Self { rx, cancel_on_drop }
    }
}

impl Future for ResponseFuture {
    type Output = Result<ToolResult, SchedulerError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let result = ready!(Pin::new(&mut self.rx).poll(cx));
        self.cancel_on_drop = None;
        Poll::Ready(result.map_err(|_| SchedulerError::Closed))
    }
}

impl Drop for ResponseFuture {
    fn drop(&mut self) {
        if let Some((cancellation, shared)) = self.cancel_on_drop.take() {
            cancellation.cancel(CancelReason::Abort);
            shared.control(Control::Wake);
        }
    }
}

impl std::fmt::Debug for ResponseFuture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseFuture").finish_non_exhaustive()
    }
}
