//! The queue and the admission rule, shared by the handles, the running
//! calls and the worker.
//!
//! Admission happens wherever something changes, under one lock: a handle
//! enqueues a call and admits what the rule allows (a lone call starts on
//! the spot, with no task in between), a turn's call that may start on
//! arrival is admitted without queueing and run by the turn's task until
//! it waits ([`Shared::start_now`], [`Shared::hand_over`]), a call that
//! ends frees its slot and admits the next ones, steering and abort act at
//! once. The worker task only keeps the scheduler's lifetime: dropping it
//! ends every call.

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::future::Future;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use agentcore_stages::{
    Call, CancelReason, Cancellation, InterruptBehavior, PipelineService, ToolResult, Unvalidated,
};
use tokio::runtime::Handle;
use tokio::sync::{Notify, OwnedSemaphorePermit, oneshot};
use tokio::task::AbortHandle;
use tower::ServiceExt;

use super::safety::Admission;
use super::service::{Group, ResponseFuture, SchedulerConfig, SteeringPolicy};

/// What steering and abort do, and which calls they reach.
pub(crate) enum Control {
    Steer(Option<Group>),
    Abort(Option<Group>),
    /// Re-check the queue (a queued call was cancelled).
    Wake,
}

/// A call waiting for admission.
pub(crate) struct Queued {
    pub(crate) call: Call<Unvalidated>,
    pub(crate) admission: Admission,
    pub(crate) group: Option<Group>,
    pub(crate) cancellation: Cancellation,
    /// The queue place reserved in `poll_ready`, freed on admission.
    pub(crate) permit: OwnedSemaphorePermit,
    pub(crate) reply: oneshot::Sender<ToolResult>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    Safe,
    Unsafe,
    /// Already cancelled: runs through the pipeline only to end, no slot.
    Free,
}

struct InFlight {
    slot: Slot,
    group: Option<Group>,
    cancellation: Cancellation,
    interrupt: InterruptBehavior,
    task: Option<AbortHandle>,
}

/// Hashes the in-flight calls' ids: numbers this module counts up, not
/// input, so one multiplication (its high bits spread, as the table's
/// probing wants) does instead of SipHash.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u64(self.0.rotate_left(8) ^ u64::from(byte));
        }
    }

    fn write_u64(&mut self, id: u64) {
        self.0 = id.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// The queue and what runs, under [`Shared::state`].
struct State {
    queue: VecDeque<Queued>,
    in_flight: HashMap<u64, InFlight, BuildHasherDefault<IdHasher>>,
    next_id: u64,
    safe_running: usize,
    unsafe_running: bool,
    /// The worker was dropped: nothing starts any more.
    closed: bool,
}

/// What every handle, response future and running call holds.
pub(crate) struct Shared {
    state: Mutex<State>,
    pipeline: PipelineService,
    config: SchedulerConfig,
    /// The runtime calls are spawned on when the caller is outside one.
    runtime: Option<Handle>,
    /// Told when the last holder lets go, so the worker's `run` can end.
    gone: Arc<Notify>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.gone.notify_one();
    }
}

impl Shared {
    /// The shared state and the worker that keeps it.
    pub(crate) fn new(pipeline: PipelineService, config: SchedulerConfig) -> (Arc<Self>, Worker) {
        let gone = Arc::new(Notify::new());
        let shared = Arc::new(Self {
            state: Mutex::new(State {
                queue: VecDeque::new(),
                in_flight: HashMap::default(),
                next_id: 0,
                safe_running: 0,
                unsafe_running: false,
                closed: false,
            }),
            pipeline,
            config,
            runtime: Handle::try_current().ok(),
            gone: gone.clone(),
        });
        let worker = Worker {
            shared: Arc::downgrade(&shared),
            gone,
        };
        (shared, worker)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The state is consistent between statements: a panic elsewhere
        // while it was held leaves nothing half-done.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The pipeline calls run through.
    pub(crate) fn pipeline(&self) -> &PipelineService {
        &self.pipeline
    }

    /// Whether the worker is gone.
    pub(crate) fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// Enqueues a call behind every earlier one and admits what the rule
    /// allows; a call that is alone starts here. Once the worker is gone
    /// the call is dropped, and its caller reads `Closed`.
    pub(crate) fn enqueue(self: &Arc<Self>, queued: Queued) {
        let starting = {
            let mut state = self.lock();
            if state.closed {
                return;
            }
            state.queue.push_back(queued);
            self.admit(&mut state)
        };
        self.launch(starting);
    }

    /// Steering, abort, or a re-check of the queue.
    pub(crate) fn control(self: &Arc<Self>, control: Control) {
        let starting = {
            let mut state = self.lock();
            let in_group =
                |g: Option<Group>, target: Option<Group>| target.is_none() || g == target;
            match control {
                Control::Wake => {}
                Control::Steer(target) => {
                    if self.config.steering == SteeringPolicy::FinishBatch {
                        return;
                    }
                    for queued in state.queue.iter().filter(|q| in_group(q.group, target)) {
                        queued.cancellation.cancel(CancelReason::Skip);
                    }
                    for call in state.in_flight.values() {
                        if call.slot != Slot::Free
                            && call.interrupt == InterruptBehavior::Cancel
                            && in_group(call.group, target)
                        {
                            call.cancellation.cancel(CancelReason::Abort);
                        }
                    }
                }
                Control::Abort(target) => {
                    let queued = state.queue.iter().map(|q| (q.group, &q.cancellation));
                    let running = state.in_flight.values().map(|c| (c.group, &c.cancellation));
                    for (group, cancellation) in queued.chain(running) {
                        if in_group(group, target) {
                            cancellation.cancel(CancelReason::Abort);
                        }
                    }
                }
            }
            self.admit(&mut state)
        };
        self.launch(starting);
    }

    /// The slot a call may take now, if the rule lets it start: a call
    /// already cancelled takes none (it only runs to its end), a safe call
    /// one beside other safe calls up to the limit, an unsafe call the
    /// whole field.
    fn slot_for(&self, state: &State, cancelled: bool, safe: bool) -> Option<Slot> {
        if cancelled {
            Some(Slot::Free)
        } else if safe {
            let limit = self.config.max_concurrency.max(1);
            (!state.unsafe_running && state.safe_running < limit).then_some(Slot::Safe)
        } else {
            (!state.unsafe_running && state.safe_running == 0).then_some(Slot::Unsafe)
        }
    }

    /// Takes calls from the head of the queue while the rule allows: safe
    /// calls side by side up to the limit, an unsafe call alone, and
    /// strictly in order. Their slots are taken here, under the lock; they
    /// are spawned by [`Shared::launch`] once the lock is released (a task
    /// dropped at once, as during a runtime's shutdown, frees its slot and
    /// must be able to take the lock).
    fn admit(self: &Arc<Self>, state: &mut State) -> Vec<Starting> {
        let mut starting = Vec::new();
        if state.closed {
            return starting;
        }
        while let Some(head) = state.queue.front() {
            let cancelled = head.cancellation.is_cancelled();
            let Some(slot) = self.slot_for(state, cancelled, head.admission.safe) else {
                break;
            };
            let Some(queued) = state.queue.pop_front() else {
                break;
            };
            let Queued {
                call,
                admission,
                group,
                cancellation,
                permit,
                reply,
            } = queued;
            drop(permit);
            let ending = self.occupy(state, slot, group, cancellation, admission.interrupt);
            starting.push(Starting {
                call,
                reply,
                ending,
            });
        }
        starting
    }

    /// Admits a call on the spot, without queueing it, when nothing waits
    /// in the queue and the rule lets it start now; its caller then runs
    /// it ([`Shared::hand_over`] if it does not end on its first poll).
    /// `None` when it must wait (or the worker is gone): queue it then.
    pub(crate) fn start_now(
        self: &Arc<Self>,
        admission: Admission,
        group: Option<Group>,
        cancellation: &Cancellation,
    ) -> Option<Ending> {
        let mut state = self.lock();
        if state.closed || !state.queue.is_empty() {
            return None;
        }
        let slot = self.slot_for(&state, cancellation.is_cancelled(), admission.safe)?;
        Some(self.occupy(
            &mut state,
            slot,
            group,
            cancellation.clone(),
            admission.interrupt,
        ))
    }

    /// Takes `slot` for a call and records it in flight, where steering
    /// and abort reach it; the returned [`Ending`] frees the slot.
    fn occupy(
        self: &Arc<Self>,
        state: &mut State,
        slot: Slot,
        group: Option<Group>,
        cancellation: Cancellation,
        interrupt: InterruptBehavior,
    ) -> Ending {
        match slot {
            Slot::Safe => state.safe_running += 1,
            Slot::Unsafe => state.unsafe_running = true,
            Slot::Free => {}
        }
        let id = state.next_id;
        state.next_id += 1;
        state.in_flight.insert(
            id,
            InFlight {
                slot,
                group,
                cancellation,
                interrupt,
                task: None,
            },
        );
        Ending {
            shared: self.clone(),
            id,
        }
    }

    /// Spawns the admitted calls, each in its own task. Called without the
    /// lock.
    fn launch(self: &Arc<Self>, starting: Vec<Starting>) {
        if starting.is_empty() {
            return;
        }
        let Some(runtime) = self.runtime() else {
            // Without a runtime the calls are dropped, which frees their
            // slots, and their callers read `Closed`.
            return;
        };
        let mut tasks = Vec::with_capacity(starting.len());
        for Starting {
            call,
            reply,
            ending,
        } in starting
        {
            let id = ending.id;
            let future = self.pipeline.clone().oneshot(call);
            tasks.push((id, spawn_call(&runtime, future, ending, reply)));
        }
        let mut state = self.lock();
        for (id, task) in tasks {
            self.keep_task(&mut state, id, task);
        }
    }

    /// A call started by [`Shared::start_now`] whose first poll did not end
    /// it: it goes on in a task of its own, so it runs on when its caller
    /// stops polling and beside the caller's other calls. Its result comes
    /// on the returned future, as for a queued call.
    pub(crate) fn hand_over<F>(self: &Arc<Self>, future: F, ending: Ending) -> ResponseFuture
    where
        F: Future<Output = Result<ToolResult, Infallible>> + Send + 'static,
    {
        let (reply, rx) = oneshot::channel();
        let id = ending.id;
        let Some(runtime) = self.runtime() else {
            // Dropped: the guard reports the call cancelled, the slot is
            // freed, and the caller reads `Closed`.
            return ResponseFuture::new(rx, None);
        };
        let task = spawn_call(&runtime, future, ending, reply);
        let mut state = self.lock();
        let cancellation = state
            .in_flight
            .get(&id)
            .map(|call| (call.cancellation.clone(), self.clone()));
        self.keep_task(&mut state, id, task);
        ResponseFuture::new(rx, cancellation)
    }

    /// The runtime calls are spawned on: the caller's, else the one the
    /// scheduler was made on (a handle used from a plain thread).
    fn runtime(&self) -> Option<Handle> {
        Handle::try_current().ok().or_else(|| self.runtime.clone())
    }

    /// Keeps a running call's task so that dropping the worker can abort
    /// it; aborts it at once if the worker is already gone.
    fn keep_task(&self, state: &mut State, id: u64, task: AbortHandle) {
        if state.closed {
            task.abort();
        } else if let Some(call) = state.in_flight.get_mut(&id) {
            call.task = Some(task);
        }
    }

    /// A call ended: frees its slot and admits what may start now.
    fn finished(self: &Arc<Self>, id: u64) {
        let starting = {
            let mut state = self.lock();
            if let Some(call) = state.in_flight.remove(&id) {
                match call.slot {
                    Slot::Safe => state.safe_running -= 1,
                    Slot::Unsafe => state.unsafe_running = false,
                    Slot::Free => {}
                }
            }
            self.admit(&mut state)
        };
        self.launch(starting);
    }

    /// The worker is gone: nothing starts any more, queued calls are dropped
    /// (their callers read `Closed`) and running calls are aborted (their
    /// guards report them cancelled).
    fn close(&self) {
        let (queue, tasks) = {
            let mut state = self.lock();
            state.closed = true;
            let queue = std::mem::take(&mut state.queue);
            let tasks: Vec<AbortHandle> = state
                .in_flight
                .values_mut()
                .filter_map(|call| call.task.take())
                .collect();
            (queue, tasks)
        };
        for task in tasks {
            task.abort();
        }
        drop(queue);
    }
}

/// Runs a call's pipeline in a task of its own: it frees the call's slot
/// however the task ends (done, aborted, panicked), and when done frees it
/// before replying, so a caller's next call finds it free.
fn spawn_call<F>(
    runtime: &Handle,
    future: F,
    ending: Ending,
    reply: oneshot::Sender<ToolResult>,
) -> AbortHandle
where
    F: Future<Output = Result<ToolResult, Infallible>> + Send + 'static,
{
    runtime
        .spawn(async move {
            let ending = ending;
            let Ok(result) = future.await;
            drop(ending);
            let _ = reply.send(result);
        })
        .abort_handle()
}

/// An admitted call on its way to its task.
struct Starting {
    call: Call<Unvalidated>,
    reply: oneshot::Sender<ToolResult>,
    ending: Ending,
}

/// Held by a running call (its task, or the caller running its first
/// poll); frees the call's slot when dropped, however the call ended.
pub(crate) struct Ending {
    shared: Arc<Shared>,
    id: u64,
}

impl Drop for Ending {
    fn drop(&mut self) {
        self.shared.finished(self.id);
    }
}

/// Keeps the scheduler's lifetime; drive it with [`Worker::run`]. Calls are
/// admitted by the handles and by the calls that end, not by this task, so
/// a lone call starts without waiting for it. Dropping it (or its task)
/// ends every call the scheduler holds: queued calls are dropped and their
/// callers read `Closed`, in-flight calls are aborted and their guards
/// report them cancelled, and new calls are refused.
pub struct Worker {
    shared: Weak<Shared>,
    gone: Arc<Notify>,
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut debug = f.debug_struct("Worker");
        if let Some(shared) = self.shared.upgrade() {
            let state = shared.lock();
            debug
                .field("queued", &state.queue.len())
                .field("in_flight", &state.in_flight.len());
        }
        debug.finish_non_exhaustive()
    }
}

impl Worker {
    /// Runs until every handle is dropped and every call has ended.
    pub async fn run(self) {
        // Every handle, response future and running call holds the shared
        // state; the last one to let go tells `gone`.
        while self.shared.strong_count() > 0 {
            self.gone.notified().await;
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if let Some(shared) = self.shared.upgrade() {
            shared.close();
        }
    }
}

#[cfg(test)]
mod tests {
    use agentcore_stages::{Pipeline, ToolRegistry};
    use tokio::sync::Semaphore;

    use super::*;

    fn shared(max_concurrency: usize) -> (Arc<Shared>, Worker) {
        let pipeline = Pipeline::builder()
            .registry(Arc::new(ToolRegistry::new()))
            .build();
        let config = SchedulerConfig {
            max_concurrency,
            ..SchedulerConfig::default()
        };
        Shared::new(pipeline.service(), config)
    }

    fn admission(safe: bool) -> Admission {
        Admission {
            safe,
            interrupt: InterruptBehavior::Cancel,
        }
    }

    fn start(shared: &Arc<Shared>, safe: bool) -> Option<Ending> {
        shared.start_now(admission(safe), None, &Cancellation::new())
    }

    #[tokio::test]
    async fn calls_start_now_while_the_rule_has_a_slot_for_them() {
        let (shared, _worker) = shared(2);
        let first = start(&shared, true).expect("a free field");
        let second = start(&shared, true).expect("a second safe slot");
        assert!(start(&shared, true).is_none(), "two safe slots");
        assert!(start(&shared, false).is_none(), "safe calls run");
        drop(first);
        let third = start(&shared, true).expect("a slot was freed");
        drop((second, third));
        let unsafe_call = start(&shared, false).expect("an empty field");
        assert!(start(&shared, true).is_none(), "an unsafe call runs alone");
        let cancelled = Cancellation::new();
        cancelled.cancel(CancelReason::Skip);
        let skipped = shared.start_now(admission(true), None, &cancelled);
        assert!(skipped.is_some(), "a cancelled call takes no slot");
        drop((unsafe_call, skipped));
        assert_eq!(shared.lock().in_flight.len(), 0);
    }

    #[tokio::test]
    async fn no_call_starts_now_ahead_of_a_queued_one() {
        let (shared, _worker) = shared(2);
        let running = start(&shared, false).expect("an empty field");
        let places = Arc::new(Semaphore::new(1));
        let (reply, _rx) = oneshot::channel();
        let cancellation = Cancellation::new();
        shared.enqueue(Queued {
            call: Call::new("queued", "ghost", "{}"),
            admission: admission(false),
            group: None,
            cancellation: cancellation.clone(),
            permit: places.try_acquire_owned().expect("a place"),
            reply,
        });
        assert_eq!(shared.lock().queue.len(), 1);
        let skipped = Cancellation::new();
        skipped.cancel(CancelReason::Skip);
        assert!(shared.start_now(admission(true), None, &skipped).is_none());
        cancellation.cancel(CancelReason::Abort);
        drop(running);
        assert!(shared.lock().queue.is_empty(), "the queued call started");
    }

    #[tokio::test]
    async fn nothing_starts_now_once_the_worker_is_gone() {
        let (shared, worker) = shared(2);
        drop(worker);
        assert!(start(&shared, true).is_none());
    }
}
