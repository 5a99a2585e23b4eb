//! The repeated-call loop guard: the same call with the same result is
//! told so at the 3rd time and not run at the 4th; other arguments, a
//! changed result, or polling that sees progress reset it; a cycle of
//! calls whose results do not change is caught the same way; it is on in
//! bypass unless the policy says `in_bypass = false`, and off with
//! `repeats = 0`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agentcore::access::{Access, Permissions};
use agentcore::approval::Mode;
use agentcore::config::Policy;
use agentcore::loop_guard::{cycle_refusal, repeat_note, repeat_refusal};
use agentcore::message::ToolCall;
use agentcore::session::{Session, SessionConfig};
use agentcore::{CallContext, EventSink, Extensions, Outcome, ToolError, ToolOutput, TypedTool};
use serde_json::{Value, json};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct CountArgs {
    /// What to answer.
    text: String,
    /// Add the run count to the answer (a result that changes).
    #[serde(default)]
    counted: bool,
}

/// Answers its text and counts its runs.
struct Count(Arc<AtomicUsize>);

impl TypedTool for Count {
    type Args = CountArgs;
    fn name(&self) -> &str {
        "count"
    }
    fn description(&self) -> &str {
        "Answers its text."
    }
    fn read_only(&self, _args: &CountArgs) -> bool {
        true
    }
    fn extensions(&self) -> Extensions {
        // It touches nothing, so the engine lets it run unasked.
        Permissions::typed(|_: &CountArgs| Access::nothing()).into_extensions()
    }
    async fn execute(&self, args: CountArgs, _cx: &CallContext) -> Result<ToolOutput, ToolError> {
        let n = self.0.fetch_add(1, Ordering::SeqCst) + 1;
        Ok(ToolOutput::text(if args.counted {
            format!("{} {n}", args.text)
        } else {
            args.text
        }))
    }
}

fn start(policy: Option<&str>, mode: Mode) -> (Session, Arc<AtomicUsize>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let runs = Arc::new(AtomicUsize::new(0));
    let mut config = SessionConfig::new(dir.path()).with_tool(Count(runs.clone()).into_dyn());
    config.mode = Some(mode);
    config.policy = policy.map(|p| Policy::from_toml(p).unwrap());
    (Session::start(config).unwrap(), runs, dir)
}

async fn call(session: &Session, args: Value) -> agentcore::ToolResult {
    let (sink, _events) = EventSink::channel();
    let mut result = session
        .turn(sink)
        .run(vec![ToolCall::new("c", "count", args)])
        .await
        .unwrap();
    result.results.remove(0)
}

#[tokio::test]
async fn the_third_identical_call_is_told_and_the_fourth_is_not_run() {
    let (session, runs, _dir) = start(None, Mode::Default);
    // Key order does not make a call different.
    let a = json!({"text": "same", "counted": false});
    let b = json!({"counted": false, "text": "same"});
    assert_eq!(call(&session, a.clone()).await.text(), "same");
    assert_eq!(call(&session, b.clone()).await.text(), "same");
    let third = call(&session, a.clone()).await;
    assert_eq!(third.text(), format!("same\n{}", repeat_note("count", 3)));
    let fourth = call(&session, b).await;
    assert_eq!(fourth.outcome, Outcome::Denied);
    assert_eq!(fourth.text(), repeat_refusal("count", 3));
    assert_eq!(runs.load(Ordering::SeqCst), 3, "the fourth did not run");
    // Other arguments run, and reset the count.
    assert_eq!(
        call(&session, json!({"text": "other"})).await.text(),
        "other"
    );
    assert_eq!(call(&session, a).await.text(), "same");
    assert_eq!(runs.load(Ordering::SeqCst), 5);
}

#[tokio::test]
async fn a_result_that_changes_is_never_a_repeat() {
    let (session, runs, _dir) = start(None, Mode::Default);
    for i in 1..=8 {
        let r = call(&session, json!({"text": "poll", "counted": true})).await;
        assert_eq!(r.text(), format!("poll {i}"));
    }
    assert_eq!(runs.load(Ordering::SeqCst), 8);
}

#[tokio::test]
async fn a_cycle_of_unchanging_calls_is_told_then_stopped() {
    let (session, runs, _dir) = start(None, Mode::Default);
    let (a, b) = (json!({"text": "a"}), json!({"text": "b"}));
    for _ in 0..2 {
        call(&session, a.clone()).await;
        call(&session, b.clone()).await;
    }
    call(&session, a.clone()).await;
    let sixth = call(&session, b.clone()).await;
    assert!(
        sixth.text().contains("went round the same 2 calls"),
        "{}",
        sixth.text()
    );
    let seventh = call(&session, a).await;
    assert_eq!(seventh.outcome, Outcome::Denied);
    assert_eq!(
        seventh.text(),
        cycle_refusal(&["count".to_owned(), "count".to_owned()], 3)
    );
    assert_eq!(runs.load(Ordering::SeqCst), 6);
}

#[tokio::test]
async fn bypass_keeps_the_guard_unless_the_policy_turns_it_off_there() {
    let (session, runs, _dir) = start(None, Mode::Bypass);
    for _ in 0..4 {
        call(&session, json!({"text": "x"})).await;
    }
    assert_eq!(runs.load(Ordering::SeqCst), 3, "on in bypass by default");
    let (session, runs, _dir) = start(Some("[loop_guard]\nin_bypass = false\n"), Mode::Bypass);
    for _ in 0..5 {
        call(&session, json!({"text": "x"})).await;
    }
    assert_eq!(runs.load(Ordering::SeqCst), 5);
    let (session, runs, _dir) = start(Some("[loop_guard]\nrepeats = 0\n"), Mode::Default);
    for _ in 0..5 {
        call(&session, json!({"text": "x"})).await;
    }
    assert_eq!(runs.load(Ordering::SeqCst), 5, "repeats = 0 is off");
    let (session, runs, _dir) = start(Some("[loop_guard]\nrepeats = 2\n"), Mode::Default);
    for _ in 0..3 {
        call(&session, json!({"text": "x"})).await;
    }
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    assert!(
        Policy::from_toml("[loop_guard]\nrepeat = 2\n")
            .unwrap_err()
            .to_string()
            .contains("repeat")
    );
}

/// Waiting for a silent background job is not a loop: a `bash_output`
/// that waited a second or more says how long the job has run, so the
/// model can keep waiting for a long quiet build.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn waiting_for_a_silent_job_is_never_taken_for_a_loop() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = SessionConfig::new(dir.path());
    config.mode = Some(Mode::Bypass);
    let session = Session::start(config).unwrap();
    let (sink, _events) = EventSink::channel();
    let started = session
        .turn(sink)
        .run(vec![ToolCall::new(
            "s",
            "bash",
            json!({"command": "sleep 60", "run_in_background": true}),
        )])
        .await
        .unwrap()
        .results
        .remove(0);
    assert!(!started.is_error(), "{}", started.text());
    let poll = json!({"job_id": "job-1", "wait_ms": 1_100});
    for n in 1..=5 {
        let (sink, _events) = EventSink::channel();
        let result = session
            .turn(sink)
            .run(vec![ToolCall::new(
                format!("p{n}"),
                "bash_output",
                poll.clone(),
            )])
            .await
            .unwrap()
            .results
            .remove(0);
        let text = result.text();
        assert_eq!(result.outcome, Outcome::Success, "poll {n}: {text}");
        assert!(
            text.starts_with("(no new output; running for ") && text.ends_with("Status: running"),
            "poll {n}: {text}"
        );
        assert!(!text.contains("identical"), "poll {n}: {text}");
    }
    session.end_jobs().await;
}
