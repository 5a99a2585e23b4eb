//! Soak: many turns of 10 calls with random outcomes (success, failure,
//! denial by the gate, abort, steering) through one session's `Pipeline`
//! and `Scheduler`. After every turn the Start/End pairing must hold; at the
//! end, live heap must be within 10 % of what it was after warm-up, and no
//! task or file descriptor may be left behind.
//!
//! `AGENTCORE_SOAK_TURNS` sets the number of turns (300 by default here);
//! `cargo bench --bench soak` runs 10,000 and prints the figures of
//! `docs/performance.md`.
//!
//! A test binary of its own, not a module of another: it measures the
//! whole process (live heap through its own global allocator, resident
//! memory, open file descriptors), which tests running beside it in the
//! same process would change. benches/soak.rs includes this file too.

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use agentcore::GateDecision;
use agentcore::TypedTool;
use agentcore::message::ToolCall;
use agentcore::scheduler::{Scheduler, SchedulerConfig};
use agentcore::stages::gate::gate_fn;
use agentcore::turn::Turn;
use agentcore::{
    CallContext, Event, InterruptBehavior, Outcome, Pipeline, ToolError, ToolOutput, ToolRegistry,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// Counts live heap bytes.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged and only
// adds or subtracts sizes.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            LIVE.fetch_add(new_size, Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// What a call of the `work` tool does.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum Mode {
    /// Succeeds (read-only: runs beside others).
    Ok,
    /// Succeeds, with side effects: runs alone.
    Write,
    /// Returns an error.
    Fail,
    /// The gate denies it.
    Deny,
    /// Runs until cancelled (only in turns that are aborted or steered).
    Hang,
}

#[derive(Deserialize, JsonSchema)]
struct WorkArgs {
    mode: Mode,
    /// Bytes of output.
    size: u32,
}

/// The tool; registered twice, as `work` and as `flaky` (failing calls),
/// so the circuit breaker that `flaky`'s failures trip does not disable
/// the other calls.
struct Work(&'static str);

impl TypedTool for Work {
    type Args = WorkArgs;
    fn name(&self) -> &str {
        self.0
    }
    fn description(&self) -> &str {
        "Does what `mode` says."
    }
    async fn execute(&self, args: WorkArgs, cx: &CallContext) -> Result<ToolOutput, ToolError> {
        match args.mode {
            Mode::Ok | Mode::Write | Mode::Deny => {
                cx.progress().report(json!({"size": args.size}));
                tokio::task::yield_now().await;
                Ok(ToolOutput::text("x".repeat(args.size as usize)))
            }
            Mode::Fail => Err(ToolError::new("it failed, as asked")),
            Mode::Hang => {
                cx.cancellation().cancelled().await;
                Err(ToolError::cancelled(vec![]))
            }
        }
    }
    fn read_only(&self, args: &WorkArgs) -> bool {
        args.mode != Mode::Write
    }
    fn interrupt_behavior(&self, _args: &WorkArgs) -> InterruptBehavior {
        InterruptBehavior::Cancel
    }
    fn observes_cancellation(&self) -> bool {
        true
    }
}

/// A small deterministic PRNG (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// How a turn ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ending {
    Normal,
    Abort,
    Steer,
}

/// The figures of one soak run.
#[derive(Debug)]
pub struct SoakReport {
    /// Turns run.
    pub turns: usize,
    /// Turns after which the warm-up figures were taken.
    pub warm_up_turns: usize,
    /// Wall time of all turns.
    pub elapsed: Duration,
    /// Live heap bytes after warm-up and at the end.
    pub heap_warm: usize,
    /// Live heap bytes at the end (scheduler still alive).
    pub heap_end: usize,
    /// Resident set size after warm-up, bytes.
    pub rss_warm: usize,
    /// Resident set size at the end, bytes.
    pub rss_end: usize,
    /// Open file descriptors before the session and after it.
    pub fds: (usize, usize),
    /// Alive tokio tasks before the session, after warm-up, at the end
    /// (scheduler alive) and after the session is dropped.
    pub tasks: (usize, usize, usize, usize),
    /// How many calls ended each way.
    pub outcomes: HashMap<Outcome, usize>,
    /// Turns by how they ended: normal, aborted, steered.
    pub endings: (usize, usize, usize),
}

fn rss_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: usize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count())
}

/// Checks one turn's events: every call has one Start and one End, the
/// Start first, nothing of the call after its End, one result message per
/// call and the model response last.
fn check_pairing(turn: usize, events: &[Event], calls: usize) {
    let mut started: HashMap<&str, usize> = HashMap::new();
    let mut ended: HashMap<&str, usize> = HashMap::new();
    for (i, event) in events.iter().enumerate() {
        match event {
            Event::ToolExecStart { call_id, .. } => {
                assert!(
                    started.insert(call_id, i).is_none(),
                    "turn {turn}: two Starts for {call_id}"
                );
            }
            Event::ToolExecUpdate { call_id, .. } => {
                assert!(
                    started.contains_key(call_id.as_str()) && !ended.contains_key(call_id.as_str()),
                    "turn {turn}: update outside Start..End for {call_id}"
                );
            }
            Event::ToolExecEnd { call_id, .. } => {
                assert!(
                    started.contains_key(call_id.as_str()),
                    "turn {turn}: End before Start for {call_id}"
                );
                assert!(
                    ended.insert(call_id, i).is_none(),
                    "turn {turn}: two Ends for {call_id}"
                );
            }
            _ => {}
        }
    }
    assert_eq!(started.len(), calls, "turn {turn}: Starts");
    assert_eq!(ended.len(), calls, "turn {turn}: Ends");
    let messages = events
        .iter()
        .filter(|e| matches!(e, Event::MessageEnd { .. }))
        .count();
    assert_eq!(messages, calls, "turn {turn}: result messages");
    match events.last() {
        Some(Event::ModelResponse { tool_results }) => {
            assert_eq!(tool_results.len(), calls, "turn {turn}: results");
        }
        other => panic!("turn {turn}: last event {other:?}"),
    }
}

/// Checks that each call ended in a way its mode and the turn's ending allow.
fn check_outcome(turn: usize, mode: Mode, ending: Ending, outcome: Outcome) {
    use Outcome::*;
    let allowed: &[Outcome] = match (ending, mode) {
        (Ending::Normal, Mode::Ok | Mode::Write) => &[Success],
        (Ending::Normal, Mode::Fail) => &[Failed, Disabled],
        (Ending::Normal, Mode::Deny) => &[Denied],
        (Ending::Normal, Mode::Hang) => unreachable!("hanging calls only in cancelled turns"),
        (Ending::Abort, Mode::Ok | Mode::Write) => &[Success, Cancelled],
        (Ending::Abort, Mode::Fail) => &[Failed, Disabled, Cancelled],
        (Ending::Abort, Mode::Deny) => &[Denied, Cancelled],
        (Ending::Abort, Mode::Hang) => &[Cancelled],
        (Ending::Steer, Mode::Ok | Mode::Write) => &[Success, Skipped, Cancelled],
        (Ending::Steer, Mode::Fail) => &[Failed, Disabled, Skipped, Cancelled],
        (Ending::Steer, Mode::Deny) => &[Denied, Skipped, Cancelled],
        (Ending::Steer, Mode::Hang) => &[Skipped, Cancelled],
    };
    assert!(
        allowed.contains(&outcome),
        "turn {turn}: a {mode:?} call in a {ending:?} turn ended {outcome}"
    );
}

/// Alive tasks once they settle to `target` (or after a second).
async fn tasks_settled(target: usize) -> usize {
    let metrics = tokio::runtime::Handle::current().metrics();
    for _ in 0..100 {
        if metrics.num_alive_tasks() <= target {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    metrics.num_alive_tasks()
}

/// Runs `turns` turns of 10 calls in one session and returns its figures.
/// Panics when the pairing breaks or a call ends in a way it may not.
pub async fn soak(turns: usize, seed: u64) -> SoakReport {
    let fds_before = open_fds();
    let tasks_before = tasks_settled(0).await;
    let warm_up_turns = (turns / 10).clamp(1, 500);

    let registry = Arc::new(
        ToolRegistry::new()
            .with(Work("work").into_dyn())
            .and_then(|r| r.with(Work("flaky").into_dyn()))
            .expect("register"),
    );
    let gate = gate_fn(|req| async move {
        if req.args["mode"] == "deny" {
            Ok(GateDecision::Deny(None))
        } else {
            Ok(GateDecision::Allow)
        }
    });
    let pipeline = Pipeline::builder()
        .registry(registry.clone())
        .gate(Arc::new(gate))
        .build();
    let scheduler = Scheduler::new(pipeline.service(), registry, SchedulerConfig::default());

    let mut rng = Rng(seed | 1);
    let mut outcomes: HashMap<Outcome, usize> = HashMap::new();
    let mut endings = (0, 0, 0);
    let (mut heap_warm, mut rss_warm, mut tasks_warm) = (0, 0, 0);
    let started = Instant::now();
    for turn in 0..turns {
        // A new user prompt: the breaker starts over, as a session does.
        pipeline.breaker().reset();
        let ending = match rng.below(10) {
            0 => Ending::Abort,
            1 => Ending::Steer,
            _ => Ending::Normal,
        };
        let modes: Vec<Mode> = (0..10)
            .map(|_| match rng.below(20) {
                0..=9 => Mode::Ok,
                10..=11 => Mode::Write,
                12..=14 => Mode::Fail,
                15..=16 => Mode::Deny,
                _ if ending == Ending::Normal => Mode::Ok,
                _ => Mode::Hang,
            })
            .collect();
        let calls: Vec<ToolCall> = modes
            .iter()
            .enumerate()
            .map(|(i, mode)| {
                let args = json!({"mode": mode, "size": rng.below(2048)});
                let tool = if *mode == Mode::Fail { "flaky" } else { "work" };
                ToolCall::new(format!("t{turn}c{i}"), tool, args)
            })
            .collect();

        let (turn_, mut rx) = Turn::with_channel(&scheduler);
        let control = turn_.control();
        let delay = Duration::from_micros(rng.below(1000));
        let interrupt = async {
            if ending != Ending::Normal {
                tokio::time::sleep(delay).await;
                if ending == Ending::Abort {
                    control.abort();
                } else {
                    control.steer();
                }
            }
        };
        let (result, ()) = tokio::join!(turn_.run(calls), interrupt);
        let result = result.expect("the scheduler runs");
        match ending {
            Ending::Normal => endings.0 += 1,
            Ending::Abort => endings.1 += 1,
            Ending::Steer => endings.2 += 1,
        }

        let mut events = Vec::new();
        while let Ok(event) = rx.try_recv() {
            events.push(event);
        }
        check_pairing(turn, &events, modes.len());
        assert_eq!(result.results.len(), modes.len());
        for (mode, r) in modes.iter().zip(&result.results) {
            check_outcome(turn, *mode, ending, r.outcome);
            *outcomes.entry(r.outcome).or_default() += 1;
        }
        drop((events, result, rx));

        if turn + 1 == warm_up_turns {
            tasks_warm = tasks_settled(tasks_before + 1).await;
            heap_warm = LIVE.load(Ordering::Relaxed);
            rss_warm = rss_bytes();
        }
    }
    let elapsed = started.elapsed();
    let tasks_end = tasks_settled(tasks_before + 1).await;
    let heap_end = LIVE.load(Ordering::Relaxed);
    let rss_end = rss_bytes();

    drop(scheduler);
    drop(pipeline);
    let tasks_after = tasks_settled(tasks_before).await;
    SoakReport {
        turns,
        warm_up_turns,
        elapsed,
        heap_warm,
        heap_end,
        rss_warm,
        rss_end,
        fds: (fds_before, open_fds()),
        tasks: (tasks_before, tasks_warm, tasks_end, tasks_after),
        outcomes,
        endings,
    }
}

/// Asserts the soak's invariants on its figures.
pub fn check(report: &SoakReport) {
    assert!(
        report.heap_end as f64 <= report.heap_warm as f64 * 1.10,
        "live heap grew more than 10 %: {report:#?}"
    );
    assert_eq!(report.fds.0, report.fds.1, "file descriptors: {report:#?}");
    let (before, warm, end, after) = report.tasks;
    assert_eq!(warm, end, "tasks during the session: {report:#?}");
    assert_eq!(before, after, "tasks left behind: {report:#?}");
    for outcome in [
        Outcome::Success,
        Outcome::Failed,
        Outcome::Denied,
        Outcome::Cancelled,
        Outcome::Skipped,
    ] {
        assert!(
            report.outcomes.get(&outcome).copied().unwrap_or(0) > 0,
            "no {outcome} call: {report:#?}"
        );
    }
}

/// The runtime the soak runs on: two workers, like the machine.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

#[test]
fn soak_keeps_pairing_memory_tasks_and_fds_steady() {
    let turns = std::env::var("AGENTCORE_SOAK_TURNS")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(300);
    let report = runtime().block_on(soak(turns, 0x5eed));
    println!("{report:#?}");
    check(&report);
}
