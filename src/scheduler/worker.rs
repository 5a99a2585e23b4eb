//! The worker: owns the queue and admits calls in order.

use std::collections::{HashMap, VecDeque};

use agentcore_stages::{
    Call, CancelReason, Cancellation, InterruptBehavior, PipelineService, ToolResult, Unvalidated,
};
use tokio::sync::{OwnedSemaphorePermit, mpsc, oneshot};
use tokio::task::{Id, JoinSet};
use tower::ServiceExt;

use super::safety::Admission;
use super::service::{Group, SchedulerConfig, SteeringPolicy};

/// What handles send the worker, in one channel so that order is kept.
pub(crate) enum Message {
    Call(Box<Queued>),
    Control(Control),
}

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
}

/// Runs the scheduler's calls; drive it with [`Worker::run`]. Dropping it
/// (or its task) ends every call it holds: in-flight calls are dropped and
/// their guards report them cancelled.
pub struct Worker {
    rx: mpsc::UnboundedReceiver<Message>,
    pipeline: PipelineService,
    config: SchedulerConfig,
    queue: VecDeque<Queued>,
    running: JoinSet<()>,
    in_flight: HashMap<Id, InFlight>,
    safe_running: usize,
    unsafe_running: bool,
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker")
            .field("queued", &self.queue.len())
            .field("in_flight", &self.in_flight.len())
            .finish_non_exhaustive()
    }
}

impl Worker {
    pub(crate) fn new(
        rx: mpsc::UnboundedReceiver<Message>,
        pipeline: PipelineService,
        config: SchedulerConfig,
    ) -> Self {
        Self {
            rx,
            pipeline,
            config,
            queue: VecDeque::new(),
            running: JoinSet::new(),
            in_flight: HashMap::new(),
            safe_running: 0,
            unsafe_running: false,
        }
    }

    /// Runs until every handle is dropped and every call has ended.
    pub async fn run(mut self) {
        let mut open = true;
        loop {
            self.admit();
            if !open && self.queue.is_empty() && self.running.is_empty() {
                return;
            }
            tokio::select! {
                biased;
                message = self.rx.recv(), if open => match message {
                    Some(Message::Call(queued)) => self.queue.push_back(*queued),
                    Some(Message::Control(control)) => self.control(control),
                    None => open = false,
                },
                Some(done) = self.running.join_next_with_id() => {
                    let id = match done {
                        Ok((id, ())) => id,
                        Err(err) => err.id(),
                    };
                    self.finished(id);
                }
            }
        }
    }

    fn control(&mut self, control: Control) {
        let in_group = |g: Option<Group>, target: Option<Group>| target.is_none() || g == target;
        match control {
            Control::Wake => {}
            Control::Steer(target) => {
                if self.config.steering == SteeringPolicy::FinishBatch {
                    return;
                }
                for queued in self.queue.iter().filter(|q| in_group(q.group, target)) {
                    queued.cancellation.cancel(CancelReason::Skip);
                }
                for call in self.in_flight.values() {
                    if call.slot != Slot::Free
                        && call.interrupt == InterruptBehavior::Cancel
                        && in_group(call.group, target)
                    {
                        call.cancellation.cancel(CancelReason::Abort);
                    }
                }
            }
            Control::Abort(target) => {
                let queued = self.queue.iter().map(|q| (q.group, &q.cancellation));
                let running = self.in_flight.values().map(|c| (c.group, &c.cancellation));
                for (group, cancellation) in queued.chain(running) {
                    if in_group(group, target) {
                        cancellation.cancel(CancelReason::Abort);
                    }
                }
            }
        }
    }

    /// Starts calls from the head of the queue while the rule allows:
    /// safe calls side by side up to the limit, an unsafe call alone, and
    /// strictly in order.
    fn admit(&mut self) {
        let limit = self.config.max_concurrency.max(1);
        while let Some(head) = self.queue.front() {
            let slot = if head.cancellation.is_cancelled() {
                Slot::Free
            } else if head.admission.safe {
                if self.unsafe_running || self.safe_running >= limit {
                    break;
                }
                Slot::Safe
            } else {
                if self.unsafe_running || self.safe_running > 0 {
                    break;
                }
                Slot::Unsafe
            };
            if let Some(queued) = self.queue.pop_front() {
                self.start(queued, slot);
            }
        }
    }

    fn start(&mut self, queued: Queued, slot: Slot) {
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
            Slot::Safe => self.safe_running += 1,
            Slot::Unsafe => self.unsafe_running = true,
            Slot::Free => {}
        }
        let pipeline = self.pipeline.clone();
        let handle = self.running.spawn(async move {
            let Ok(result) = pipeline.oneshot(call).await;
            let _ = reply.send(result);
        });
        self.in_flight.insert(
            handle.id(),
            InFlight {
                slot,
                group,
                cancellation,
                interrupt: admission.interrupt,
            },
        );
    }

    fn finished(&mut self, id: Id) {
        if let Some(call) = self.in_flight.remove(&id) {
            match call.slot {
                Slot::Safe => self.safe_running -= 1,
                Slot::Unsafe => self.unsafe_running = false,
                Slot::Free => {}
            }
        }
    }
}
