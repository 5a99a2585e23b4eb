//! The queue and the admission rule, shared by the handles, the running
//! calls and the worker.
//!
//! Admission happens wherever something changes, under one lock: a handle
//! enqueues a call and admits what the rule allows (a lone call starts on
//! the spot, with no task in between), a call that ends frees its slot and
//! admits the next ones, steering and abort act at once. The worker task
//! only keeps the scheduler's lifetime: dropping it ends every call.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use agentcore_stages::{
    Call, CancelReason, Cancellation, InterruptBehavior, PipelineService, ToolResult, Unvalidated,
};
use tokio::runtime::Handle;
use tokio::sync::{Notify, OwnedSemaphorePermit, oneshot};
use tokio::task::AbortHandle;
use tower::ServiceExt;

use super::safety::Admission;
use super::service::{Group, SchedulerConfig, SteeringPolicy};

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

/// The queue and what runs, under [`Shared::state`].
struct State {
    queue: VecDeque<Queued>,
    in_flight: HashMap<u64, InFlight>,
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
                in_flight: HashMap::new(),
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
        let limit = self.config.max_concurrency.max(1);
        while let Some(head) = state.queue.front() {
            let slot = if head.cancellation.is_cancelled() {
                Slot::Free
            } else if head.admission.safe {
                if state.unsafe_running || state.safe_running >= limit {
                    break;
                }
                Slot::Safe
            } else {
                if state.unsafe_running || state.safe_running > 0 {
                    break;
                }
                Slot::Unsafe
            };
            let Some(queued) = state.queue.pop_front() else {
                break;
            };
            starting.push(self.take_slot(state, queued, slot));
        }
        starting
    }

    fn take_slot(self: &Arc<Self>, state: &mut State, queued: Queued, slot: Slot) -> Starting {
        let Queued {
            call,
            admission,
            group,
            cancellation,
            permit,
            reply,
        } = queued;
        drop(permit);
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
                interrupt: admission.interrupt,
                task: None,
            },
        );
        Starting {
            call,
            reply,
            ending: Ending {
                shared: self.clone(),
                id,
            },
        }
    }

    /// Spawns the admitted calls, each in its own task. Called without the
    /// lock.
    fn launch(self: &Arc<Self>, starting: Vec<Starting>) {
        if starting.is_empty() {
            return;
        }
        let runtime = match Handle::try_current() {
            Ok(handle) => handle,
            // Outside any runtime (a handle used from a plain thread): the
            // runtime the scheduler was made on; without one the calls are
            // dropped, which frees their slots, and their callers read
            // `Closed`.
            Err(_) => match &self.runtime {
                Some(handle) => handle.clone(),
                None => return,
            },
        };
        let mut tasks = Vec::with_capacity(starting.len());
        for Starting {
            call,
            reply,
            ending,
        } in starting
        {
            let id = ending.id;
            let pipeline = self.pipeline.clone();
            let task = runtime.spawn(async move {
                // Frees the slot however the task ends: done, aborted,
                // panicked. Done, it frees the slot before replying, so a
                // caller's next call finds it free.
                let ending = ending;
                let Ok(result) = pipeline.oneshot(call).await;
                drop(ending);
                let _ = reply.send(result);
            });
            tasks.push((id, task.abort_handle()));
        }
        let mut state = self.lock();
        for (id, task) in tasks {
            if state.closed {
                task.abort();
            } else if let Some(call) = state.in_flight.get_mut(&id) {
                call.task = Some(task);
            }
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

/// An admitted call on its way to its task.
struct Starting {
    call: Call<Unvalidated>,
    reply: oneshot::Sender<ToolResult>,
    ending: Ending,
}

/// Held by a running call's task; frees the call's slot when the task ends
/// in any way.
struct Ending {
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
