//! A turn runs a call admitted on arrival in its own task: the first poll
//! happens there, a call that ends on it costs no task, and a call that
//! does not end on it goes on in a task of its own. What the scheduler
//! guaranteed before still holds: calls that wait run side by side on the
//! runtime's threads and run on while the turn is not polled, a panicking
//! call leaves the others alone, and abort and steering mid-batch report
//! what each call did.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use agentcore::message::ToolCall;
use agentcore::scheduler::{Scheduler, SchedulerConfig, SchedulerError};
use agentcore::turn::{Turn, TurnResult};
use agentcore::{
    BoxFuture, CallContext, EventSink, GatedArgs, InterruptBehavior, Outcome, Tool, ToolError,
    ToolOutput,
};
use serde_json::{Value, json};
use tokio::task::Id;

use crate::support::scheduler::{Log, Probe, scheduler};

/// Two parties meet, or give up after `patience`: whether both were there
/// at once, each blocking its own thread while it waits.
#[derive(Clone, Default)]
struct Rendezvous(Arc<(Mutex<usize>, Condvar)>);

impl Rendezvous {
    fn meet(&self, patience: Duration) -> bool {
        let (count, arrived) = &*self.0;
        let mut count = count.lock().unwrap();
        *count += 1;
        arrived.notify_all();
        let (count, _) = arrived
            .wait_timeout_while(count, patience, |count| *count < 2)
            .unwrap();
        *count >= 2
    }
}

/// Where a call ran: its id, the task of its first poll, and the task that
/// finished it (after `"wait": true`, a yield, it is the call's own).
type Ran = (String, Option<Id>, Option<Id>);

/// Where each call ran.
#[derive(Clone, Default)]
struct Tasks(Arc<Mutex<Vec<Ran>>>);

/// Safe, cancellable. Args: `wait` (yield once: the first poll does not end
/// it), `panic` (`"now"` on the first poll, `"later"` after a yield),
/// `meet` (after a yield, block the thread in the rendezvous: `"thread"`,
/// or on the blocking pool: `"pool"`).
struct Where {
    tasks: Tasks,
    rendezvous: Rendezvous,
    schema: Value,
}

impl Where {
    fn new(tasks: &Tasks, rendezvous: &Rendezvous) -> Arc<Self> {
        Arc::new(Self {
            tasks: tasks.clone(),
            rendezvous: rendezvous.clone(),
            schema: json!({"type": "object"}),
        })
    }
}

impl Tool for Where {
    fn name(&self) -> &str {
        "where"
    }
    fn description(&self) -> &str {
        "says where it ran"
    }
    fn schema(&self) -> &Value {
        &self.schema
    }
    fn read_only(&self, _args: &Value) -> bool {
        true
    }
    fn interrupt_behavior(&self, _args: &Value) -> InterruptBehavior {
        InterruptBehavior::Cancel
    }
    fn execute<'a>(
        &'a self,
        args: GatedArgs,
        cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        let args = args.value().clone();
        Box::pin(async move {
            let first = tokio::task::try_id();
            if args["panic"] == "now" {
                panic!("on its first poll");
            }
            if args["wait"] == true || args["panic"] == "later" || args["meet"].is_string() {
                tokio::task::yield_now().await;
            }
            if args["panic"] == "later" {
                panic!("in a task of its own");
            }
            let patience = Duration::from_secs(10);
            let met = match args["meet"].as_str() {
                Some("thread") => self.rendezvous.meet(patience),
                Some(_) => {
                    let rendezvous = self.rendezvous.clone();
                    tokio::task::spawn_blocking(move || rendezvous.meet(patience))
                        .await
                        .unwrap()
                }
                None => true,
            };
            let last = tokio::task::try_id();
            self.tasks
                .0
                .lock()
                .unwrap()
                .push((cx.call_id().to_owned(), first, last));
            Ok(ToolOutput::text(if met { "met" } else { "alone" }))
        })
    }
}

fn outcomes(result: &TurnResult) -> Vec<Outcome> {
    result.results.iter().map(|r| r.outcome).collect()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn calls(args: &[Value]) -> Vec<ToolCall> {
    args.iter()
        .enumerate()
        .map(|(i, args)| ToolCall::new(format!("c{i}"), "where", args.clone()))
        .collect()
}

#[test]
fn calls_that_end_on_their_first_poll_run_in_the_turns_task() {
    let rt = runtime();
    let tasks = Tasks::default();
    let tool = Where::new(&tasks, &Rendezvous::default());
    let (turn_task, result) = rt.block_on(async {
        let (scheduler, _p) = scheduler(vec![tool], SchedulerConfig::default());
        tokio::spawn(async move {
            let turn = Turn::new(&scheduler, EventSink::noop());
            let result = turn.run(calls(&vec![json!({}); 5])).await.unwrap();
            (tokio::task::id(), result)
        })
        .await
        .unwrap()
    });
    assert_eq!(outcomes(&result), [Outcome::Success; 5]);
    let ids: Vec<&str> = result.results.iter().map(|r| r.call_id.as_str()).collect();
    assert_eq!(ids, ["c0", "c1", "c2", "c3", "c4"]);
    let tasks = tasks.0.lock().unwrap();
    assert_eq!(tasks.len(), 5);
    for (call, first, last) in tasks.iter() {
        assert_eq!(*first, Some(turn_task), "{call} started in the turn's task");
        assert_eq!(*last, Some(turn_task), "{call} ended there");
    }
}

#[test]
fn a_call_that_does_not_end_on_its_first_poll_goes_on_in_a_task_of_its_own() {
    let rt = runtime();
    let tasks = Tasks::default();
    let tool = Where::new(&tasks, &Rendezvous::default());
    let (turn_task, result) = rt.block_on(async {
        let (scheduler, _p) = scheduler(vec![tool], SchedulerConfig::default());
        tokio::spawn(async move {
            let turn = Turn::new(&scheduler, EventSink::noop());
            let args = [json!({"wait": true}), json!({}), json!({"wait": true})];
            let result = turn.run(calls(&args)).await.unwrap();
            (tokio::task::id(), result)
        })
        .await
        .unwrap()
    });
    assert_eq!(outcomes(&result), [Outcome::Success; 3]);
    let mut tasks = tasks.0.lock().unwrap().clone();
    tasks.sort_by(|a, b| a.0.cmp(&b.0));
    let [waits, instant, waits_too] = &tasks[..] else {
        panic!("three calls ran: {tasks:?}");
    };
    assert!(tasks.iter().all(|t| t.1 == Some(turn_task)), "{tasks:?}");
    assert_eq!(instant.2, Some(turn_task));
    let (own, own_too) = (waits.2.unwrap(), waits_too.2.unwrap());
    assert!(own != turn_task && own_too != turn_task && own != own_too);
}

#[test]
fn safe_calls_that_block_a_thread_run_side_by_side_on_the_runtimes_threads() {
    let rt = runtime();
    let tasks = Tasks::default();
    let tool = Where::new(&tasks, &Rendezvous::default());
    let result = rt.block_on(async {
        let (scheduler, _p) = scheduler(vec![tool], SchedulerConfig::default());
        let turn = Turn::new(&scheduler, EventSink::noop());
        let args = [json!({"meet": "thread"}), json!({"meet": "thread"})];
        turn.run(calls(&args)).await.unwrap()
    });
    let texts: Vec<String> = result.results.iter().map(|r| r.text()).collect();
    assert_eq!(texts, ["met", "met"], "both threads were busy at once");
}

#[test]
fn safe_calls_on_the_blocking_pool_run_side_by_side() {
    let rt = runtime();
    let tasks = Tasks::default();
    let tool = Where::new(&tasks, &Rendezvous::default());
    let result = rt.block_on(async {
        let (scheduler, _p) = scheduler(vec![tool], SchedulerConfig::default());
        tokio::spawn(async move {
            let turn = Turn::new(&scheduler, EventSink::noop());
            let args = [json!({"meet": "pool"}), json!({"meet": "pool"})];
            turn.run(calls(&args)).await.unwrap()
        })
        .await
        .unwrap()
    });
    let texts: Vec<String> = result.results.iter().map(|r| r.text()).collect();
    assert_eq!(texts, ["met", "met"]);
}

#[tokio::test(start_paused = true)]
async fn a_started_call_runs_on_while_the_turn_is_not_polled() {
    let log = Log::default();
    let probe = Arc::new(Probe::new("sleep", true, InterruptBehavior::Cancel, &log));
    let (scheduler, _p) = scheduler(vec![probe], SchedulerConfig::default());
    let turn = Turn::new(&scheduler, EventSink::noop());
    let mut run = tokio_test::task::spawn(turn.run(vec![
        ToolCall::new("a", "sleep", json!({"ms": 10})),
        ToolCall::new("b", "sleep", json!({"ms": 20})),
    ]));
    tokio_test::assert_pending!(run.poll());
    assert_eq!(log.started(), ["a", "b"]);
    // Nobody polls the turn while its calls run to their ends.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let ended = log.spans.lock().unwrap().iter().all(|s| s.2.is_some());
    assert!(ended, "both calls ended without the turn being polled");
    assert!(run.is_woken());
    let result = tokio_test::assert_ready_ok!(run.poll());
    assert_eq!(outcomes(&result), [Outcome::Success, Outcome::Success]);
}

#[test]
fn a_panicking_call_in_a_batch_leaves_the_others_alone() {
    let rt = runtime();
    let tasks = Tasks::default();
    let tool = Where::new(&tasks, &Rendezvous::default());
    let result = rt.block_on(async {
        let (scheduler, _p) = scheduler(vec![tool], SchedulerConfig::default());
        let turn = Turn::new(&scheduler, EventSink::noop());
        let args = [
            json!({}),
            json!({"panic": "now"}),
            json!({"wait": true}),
            json!({"panic": "later"}),
            json!({}),
        ];
        turn.run(calls(&args)).await.unwrap()
    });
    use Outcome::{Failed, Success};
    assert_eq!(
        outcomes(&result),
        [Success, Failed, Success, Failed, Success]
    );
    assert_eq!(
        result.results[1].text(),
        r#"tool "where" panicked: on its first poll"#
    );
    assert_eq!(
        result.results[3].text(),
        r#"tool "where" panicked: in a task of its own"#
    );
    assert_eq!(tasks.0.lock().unwrap().len(), 3);
}

/// Ends on its first poll and logs that it ran.
struct Instant(Log, Value, bool);

impl Tool for Instant {
    fn name(&self) -> &str {
        if self.2 { "instant" } else { "instant_write" }
    }
    fn description(&self) -> &str {
        "ends at once"
    }
    fn schema(&self) -> &Value {
        &self.1
    }
    fn read_only(&self, _args: &Value) -> bool {
        self.2
    }
    fn execute<'a>(
        &'a self,
        _args: GatedArgs,
        cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        self.0.start(cx.call_id());
        self.0.end(cx.call_id());
        Box::pin(async { Ok(ToolOutput::text("done")) })
    }
}

fn mixed(log: &Log, config: SchedulerConfig) -> Scheduler {
    let schema = json!({"type": "object", "properties": {"ms": {"type": "integer"}}});
    let tools: Vec<Arc<dyn Tool>> = vec![
        Arc::new(Instant(log.clone(), schema.clone(), true)),
        Arc::new(Instant(log.clone(), schema, false)),
        Arc::new(Probe::new("scan", true, InterruptBehavior::Cancel, log)),
        Arc::new(Probe::new("write", false, InterruptBehavior::Block, log)),
    ];
    scheduler(tools, config).0
}

#[tokio::test(start_paused = true)]
async fn abort_mid_batch_reports_what_each_call_did() {
    let log = Log::default();
    let scheduler = mixed(&log, SchedulerConfig::default());
    let turn = Turn::new(&scheduler, EventSink::noop());
    let control = turn.control();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(5)).await;
        control.abort();
    });
    let result = turn
        .run(vec![
            ToolCall::new("a", "instant", json!({})),
            ToolCall::new("b", "scan", json!({"ms": 1000})),
            ToolCall::new("c", "instant", json!({})),
            ToolCall::new("d", "write", json!({"ms": 10})),
            ToolCall::new("e", "instant", json!({})),
        ])
        .await
        .unwrap();
    use Outcome::{Cancelled, Success};
    assert_eq!(
        outcomes(&result),
        [Success, Cancelled, Success, Cancelled, Cancelled]
    );
    assert_eq!(result.results[0].text(), "done");
    assert_eq!(result.results[1].text(), "Tool execution cancelled.");
    assert_eq!(log.started(), ["a", "b", "c"], "d and e never started");
}

#[tokio::test(start_paused = true)]
async fn steering_mid_batch_reports_what_each_call_did() {
    let log = Log::default();
    let scheduler = mixed(&log, SchedulerConfig::default());
    let turn = Turn::new(&scheduler, EventSink::noop());
    let control = turn.control();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(5)).await;
        control.steer();
    });
    let result = turn
        .run(vec![
            ToolCall::new("a", "instant_write", json!({})),
            ToolCall::new("b", "scan", json!({"ms": 1000})),
            ToolCall::new("c", "write", json!({"ms": 10})),
            ToolCall::new("d", "instant", json!({})),
        ])
        .await
        .unwrap();
    use Outcome::{Cancelled, Skipped, Success};
    assert_eq!(outcomes(&result), [Success, Cancelled, Skipped, Skipped]);
    assert!(result.steered);
    assert_eq!(log.started(), ["a", "b"]);
}

#[test]
fn a_turn_polled_outside_any_runtime_has_its_calls_run_on_the_schedulers() {
    let rt = runtime();
    let log = Log::default();
    let tools: Vec<Arc<dyn Tool>> = vec![Arc::new(Probe::new(
        "sleep",
        true,
        InterruptBehavior::Cancel,
        &log,
    ))];
    let scheduler = rt.block_on(async { scheduler(tools, SchedulerConfig::default()).0 });
    let turn = Turn::new(&scheduler, EventSink::noop());
    let result = futures::executor::block_on(turn.run(vec![
        ToolCall::new("a", "sleep", json!({"ms": 1})),
        ToolCall::new("b", "sleep", json!({"ms": 1})),
    ]))
    .unwrap();
    assert_eq!(outcomes(&result), [Outcome::Success, Outcome::Success]);
    // Admitted in order, started side by side on the runtime's threads.
    let mut started = log.started();
    started.sort();
    assert_eq!(started, ["a", "b"]);
}

#[tokio::test]
async fn a_panicking_event_sink_ends_the_turn_with_an_error_not_a_panic() {
    let tasks = Tasks::default();
    let tool = Where::new(&tasks, &Rendezvous::default());
    let (scheduler, _p) = scheduler(vec![tool], SchedulerConfig::default());
    let sink = EventSink::from_fn(|_| panic!("the harness's sink panicked"));
    let result = Turn::new(&scheduler, sink).run(calls(&[json!({})])).await;
    assert_eq!(result, Err(SchedulerError::Closed));
    // Its slot was freed: the next turn runs.
    let result = Turn::new(&scheduler, EventSink::noop())
        .run(calls(&[json!({}), json!({"wait": true})]))
        .await
        .unwrap();
    assert_eq!(outcomes(&result), [Outcome::Success, Outcome::Success]);
}

#[tokio::test]
async fn a_long_batch_of_instant_calls_lets_the_threads_other_tasks_run() {
    let log = Log::default();
    let scheduler = mixed(&log, SchedulerConfig::default());
    let other = log.clone();
    let _other = tokio::spawn(async move { other.start("other") });
    let calls = (0..1000).map(|i| ToolCall::new(format!("c{i}"), "instant", json!({})));
    let result = Turn::new(&scheduler, EventSink::noop())
        .run(calls)
        .await
        .unwrap();
    assert_eq!(result.results.len(), 1000);
    let started = log.started();
    let other = started.iter().position(|id| id == "other");
    assert!(
        other.is_some_and(|at| at < 1000),
        "the other task ran before the batch ended: {other:?}"
    );
}
