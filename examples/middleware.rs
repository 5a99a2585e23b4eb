//! Your own tower middleware at the insertion point just before Execute,
//! where every call is a `Call<Gated>` (found, coerced, validated, allowed):
//!
//! - an audit layer, written as a tower `Layer` + `Service`, that logs each
//!   call that is about to run and how it ended;
//! - `tower::timeout`: a call that runs too long ends `Failed` with
//!   `tool "NAME" timed out`;
//! - a rate limit (`RateLimitLayer`, not `Clone`) behind a `Buffer`, which
//!   makes it cloneable and shares one budget between all calls.
//!
//! A call the gate denies never reaches these layers, so the audit log shows
//! only what ran.
//!
//! Run: `cargo run --example middleware`

use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use agentcore::message::ToolCall;
use agentcore::scheduler::{Scheduler, SchedulerConfig};
use agentcore::turn::Turn;
use agentcore::{
    BoxFuture, Call, CallContext, Executed, GateDecision, Gated, Outcome, Pipeline, ToolError,
    ToolOutput, ToolRegistry, TypedTool, gate_fn,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tower::{Layer, Service, ServiceBuilder};

/// One line of the audit log.
#[derive(Clone, Debug)]
struct AuditEntry {
    call_id: String,
    tool: String,
    outcome: Option<Outcome>,
    elapsed: Duration,
}

/// The audit log the layer writes to.
type AuditLog = Arc<Mutex<Vec<AuditEntry>>>;

/// Logs every call that is about to run, and how it ended.
#[derive(Clone, Debug)]
struct AuditLayer {
    log: AuditLog,
}

impl<S> Layer<S> for AuditLayer {
    type Service = Audit<S>;

    fn layer(&self, inner: S) -> Audit<S> {
        Audit {
            inner,
            log: self.log.clone(),
        }
    }
}

/// The service made by [`AuditLayer`].
#[derive(Clone, Debug)]
struct Audit<S> {
    inner: S,
    log: AuditLog,
}

impl<S> Service<Call<Gated>> for Audit<S>
where
    S: Service<Call<Gated>, Response = Call<Executed>> + Clone + Send + 'static,
    S::Error: std::fmt::Display,
    S::Future: Send,
{
    type Response = Call<Executed>;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<Call<Executed>, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, call: Call<Gated>) -> Self::Future {
        // Clone and take: the ready service answers this call.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let log = self.log.clone();
        let (call_id, tool) = (call.call_id().to_owned(), call.tool_name().to_owned());
        println!(
            "audit: {call_id} {tool} {} (gate: {:?})",
            call.state().args().value(),
            call.state().verdict()
        );
        Box::pin(async move {
            let started = Instant::now();
            let result = inner.call(call).await;
            let outcome = result.as_ref().ok().map(|c| c.state().outcome());
            // An error here (a timeout from a layer below) becomes `Failed`
            // at the insertion point.
            match &result {
                Ok(call) => println!("audit: {call_id} ended {}", call.state().outcome()),
                Err(err) => println!("audit: {call_id} stopped by a layer: {err}"),
            }
            log.lock().expect("audit log").push(AuditEntry {
                call_id,
                tool,
                outcome,
                elapsed: started.elapsed(),
            });
            result
        })
    }
}

/// Sleeps, then says so.
#[derive(Deserialize, JsonSchema)]
struct NapArgs {
    /// Milliseconds to sleep.
    ms: u64,
}

struct Nap;

impl TypedTool for Nap {
    type Args = NapArgs;

    fn name(&self) -> &str {
        "nap"
    }

    fn description(&self) -> &str {
        "Sleeps for `ms` milliseconds."
    }

    async fn execute(&self, args: NapArgs, _cx: &CallContext) -> Result<ToolOutput, ToolError> {
        tokio::time::sleep(Duration::from_millis(args.ms)).await;
        Ok(ToolOutput::text(format!("slept {} ms", args.ms)))
    }

    fn read_only(&self, _args: &NapArgs) -> bool {
        true
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let registry = Arc::new(ToolRegistry::new().with(Nap.into_dyn())?);
    // The gate runs before the user layers: denied calls are never audited.
    let gate = gate_fn(|req| async move {
        if req.args["ms"].as_u64().unwrap_or(0) >= 10_000 {
            Ok(GateDecision::Deny(Some(
                "naps that long are not allowed".into(),
            )))
        } else {
            Ok(GateDecision::Allow)
        }
    });
    let pipeline = Pipeline::builder()
        .registry(registry)
        .gate(Arc::new(gate))
        .build();

    let log = AuditLog::default();
    // Outermost first: audit sees every call and its end (timeouts too);
    // the buffer makes the rate limit cloneable and lets all calls share
    // its budget of 2 per 200 ms; the timeout, inside the rate limit,
    // bounds each call's run but not its wait for a slot.
    let service = pipeline.service_with(
        ServiceBuilder::new()
            .layer(AuditLayer { log: log.clone() })
            .buffer(64)
            .rate_limit(2, Duration::from_millis(200))
            .timeout(Duration::from_millis(300)),
    );
    // A wrapped service, so `Scheduler::new`, not `from_pipeline`: the
    // scheduler cannot read the registry out of the service, and judges
    // each call by its tool before it runs.
    let scheduler = Scheduler::new(
        service,
        pipeline.registry().clone(),
        SchedulerConfig::default(),
    );

    let (turn, mut events) = Turn::with_channel(&scheduler);
    let printer = tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            if let agentcore::Event::ToolExecEnd {
                call_id, outcome, ..
            } = &event
            {
                println!("event: {call_id} ended {outcome}");
            }
        }
    });

    let started = Instant::now();
    let mut calls: Vec<ToolCall> = (1..=5)
        .map(|i| ToolCall::new(format!("quick{i}"), "nap", json!({"ms": 1})))
        .collect();
    calls.push(ToolCall::new("slow", "nap", json!({"ms": 5_000})));
    calls.push(ToolCall::new("denied", "nap", json!({"ms": 20_000})));
    let result = turn.run(calls).await?;
    let elapsed = started.elapsed();
    drop(scheduler);
    printer.await?;

    println!();
    for r in &result.results {
        println!("{:>7} {:>7}: {}", r.call_id, r.outcome, r.text());
    }
    let log = log.lock().expect("audit log").clone();
    println!("\naudit log ({} entries):", log.len());
    for entry in &log {
        println!(
            "  {} {} {:?} after {:?}",
            entry.call_id, entry.tool, entry.outcome, entry.elapsed
        );
    }
    println!("turn took {elapsed:?}");

    let by_id = |id: &str| {
        result
            .results
            .iter()
            .find(|r| r.call_id == id)
            .expect("every call has a result")
    };
    assert_eq!(by_id("quick1").outcome, Outcome::Success);
    assert_eq!(by_id("slow").outcome, Outcome::Failed);
    assert_eq!(by_id("slow").text(), r#"tool "nap" timed out"#);
    assert_eq!(by_id("denied").outcome, Outcome::Denied);
    // Six calls ran (five quick, the slow one); the denied one never did.
    assert_eq!(log.len(), 6);
    assert!(log.iter().all(|e| e.call_id != "denied"));
    // Six calls at 2 per 200 ms need at least two more windows.
    assert!(elapsed >= Duration::from_millis(400), "{elapsed:?}");
    Ok(())
}
