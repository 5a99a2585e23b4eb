//! The scheduler mounted in an axum router: `POST /turn` with one assistant
//! message's tool calls as JSON; the response streams the turn's events as
//! server-sent events (`event: tool_exec_start`, …, `event: model_response`),
//! each `data:` line the event as JSON. A client that disconnects aborts
//! its turn.
//!
//! ```text
//! POST /turn
//! {"calls": [{"id": "c1", "name": "add", "arguments": {"a": 1, "b": 2}},
//!            {"id": "c2", "name": "count", "arguments": "{\"to\": 3}"}]}
//! ```
//!
//! `arguments` may be a JSON object or JSON text, as providers send it.
//!
//! Run as a server on 127.0.0.1:3000 (`PORT` overrides):
//! `cargo run --example axum_service`, then
//! `curl -N -H 'content-type: application/json' -d '{"calls":[{"id":"c1","name":"add","arguments":{"a":1,"b":2}}]}' localhost:3000/turn`.
//!
//! Run the self-test (binds 127.0.0.1:0, sends one loopback request, checks
//! the stream, exits 0): `cargo run --example axum_service -- --self-test`
//! (or set `AGENTCORE_SELF_TEST=1`).

use std::sync::Arc;
use std::time::Duration;

use agentcore::TypedTool;
use agentcore::message::ToolCall;
use agentcore::scheduler::{Scheduler, SchedulerConfig};
use agentcore::turn::{Turn, TurnControl};
use agentcore::{CallContext, Event, Pipeline, RawArgs, ToolError, ToolOutput, ToolRegistry};
use axum::extract::{Json, State};
use axum::response::sse::{self, KeepAlive, Sse};
use axum::routing::post;
use axum::{Router, serve};
use futures::Stream;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc::UnboundedReceiver;

/// Adds two integers.
#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

struct Add;

impl TypedTool for Add {
    type Args = AddArgs;
    fn name(&self) -> &str {
        "add"
    }
    fn description(&self) -> &str {
        "Adds `a` and `b`."
    }
    async fn execute(&self, args: AddArgs, _cx: &CallContext) -> Result<ToolOutput, ToolError> {
        let sum = args
            .a
            .checked_add(args.b)
            .ok_or_else(|| ToolError::new("the sum does not fit in 64 bits"))?;
        Ok(ToolOutput::text(sum.to_string()))
    }
    fn read_only(&self, _args: &AddArgs) -> bool {
        true
    }
}

/// Counts slowly, reporting each number as progress.
#[derive(Deserialize, JsonSchema)]
struct CountArgs {
    /// Where to stop (at most 20).
    #[schemars(range(max = 20))]
    to: u32,
}

struct Count;

impl TypedTool for Count {
    type Args = CountArgs;
    fn name(&self) -> &str {
        "count"
    }
    fn description(&self) -> &str {
        "Counts from 1 to `to`, one number every 20 ms."
    }
    async fn execute(&self, args: CountArgs, cx: &CallContext) -> Result<ToolOutput, ToolError> {
        for n in 1..=args.to {
            tokio::time::sleep(Duration::from_millis(20)).await;
            cx.progress().report(n);
        }
        Ok(ToolOutput::text(format!("counted to {}", args.to)))
    }
    fn read_only(&self, _args: &CountArgs) -> bool {
        true
    }
}

/// The request body of `POST /turn`.
#[derive(Deserialize)]
struct TurnRequest {
    calls: Vec<CallRequest>,
}

/// One tool call as the model proposed it.
#[derive(Deserialize)]
struct CallRequest {
    id: String,
    name: String,
    #[serde(default)]
    arguments: Value,
}

impl From<CallRequest> for ToolCall {
    fn from(call: CallRequest) -> Self {
        let args = match call.arguments {
            Value::String(text) => RawArgs::Text(text),
            Value::Null => RawArgs::Text(String::new()),
            value => RawArgs::Value(value),
        };
        ToolCall::new(call.id, call.name, args)
    }
}

/// What every request shares: one scheduler (one session).
#[derive(Clone)]
struct App {
    scheduler: Scheduler,
}

/// Aborts the turn when the response stream is dropped before its end
/// (the client went away).
struct AbortOnDrop(Option<TurnControl>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(control) = self.0.take() {
            control.abort();
        }
    }
}

async fn post_turn(
    State(app): State<App>,
    Json(request): Json<TurnRequest>,
) -> Sse<impl Stream<Item = Result<sse::Event, axum::Error>>> {
    let (turn, events) = Turn::with_channel(&app.scheduler);
    let guard = AbortOnDrop(Some(turn.control()));
    let calls: Vec<ToolCall> = request.calls.into_iter().map(ToolCall::from).collect();
    tokio::spawn(async move {
        if let Err(err) = turn.run(calls).await {
            eprintln!("turn failed: {err}");
        }
    });
    Sse::new(event_stream(events, guard)).keep_alive(KeepAlive::default())
}

/// The turn's events as SSE events, ending after `model_response`.
fn event_stream(
    events: UnboundedReceiver<Event>,
    guard: AbortOnDrop,
) -> impl Stream<Item = Result<sse::Event, axum::Error>> {
    futures::stream::unfold(Some((events, guard)), |state| async move {
        let (mut events, mut guard) = state?;
        let event = events.recv().await?;
        let json = serde_json::to_value(&event).map_err(axum::Error::new);
        let done = matches!(event, Event::ModelResponse { .. });
        let item = json.and_then(|json| {
            let name = json["type"].as_str().unwrap_or("event").to_owned();
            sse::Event::default().event(name).json_data(json)
        });
        if done {
            // The turn is over: nothing to abort.
            guard.0 = None;
            return Some((item, None));
        }
        Some((item, Some((events, guard))))
    })
}

fn router() -> Result<Router, Box<dyn std::error::Error>> {
    let registry = Arc::new(
        ToolRegistry::new()
            .with(Add.into_dyn())?
            .with(Count.into_dyn())?,
    );
    let pipeline = Pipeline::builder().registry(registry).build();
    let scheduler = Scheduler::from_pipeline(&pipeline, SchedulerConfig::default());
    Ok(Router::new()
        .route("/turn", post(post_turn))
        .with_state(App { scheduler }))
}

/// One loopback request with a plain HTTP/1.1 client over a `TcpStream`;
/// returns the whole response.
async fn request(addr: std::net::SocketAddr, body: &str) -> std::io::Result<String> {
    let mut stream = TcpStream::connect(addr).await?;
    let head = format!(
        "POST /turn HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await?;
    Ok(String::from_utf8_lossy(&response).into_owned())
}

async fn self_test() -> Result<(), Box<dyn std::error::Error>> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let app = router()?;
    let server = tokio::spawn(async move { serve(listener, app).await });
    let body = serde_json::json!({"calls": [
        {"id": "c1", "name": "add", "arguments": {"a": 1, "b": 2}},
        {"id": "c2", "name": "add", "arguments": "{\"a\": \"40\", \"b\": 2}"},
        {"id": "c3", "name": "count", "arguments": {"to": 3}},
        {"id": "c4", "name": "nope", "arguments": {}}
    ]})
    .to_string();
    let response = tokio::time::timeout(Duration::from_secs(30), request(addr, &body)).await??;
    server.abort();
    println!("{response}");

    let checks = [
        ("status 200", response.starts_with("HTTP/1.1 200")),
        (
            "an SSE response",
            response.contains("content-type: text/event-stream"),
        ),
        (
            "four tool_exec_end events",
            response.matches("event: tool_exec_end").count() == 4,
        ),
        (
            "progress updates",
            response.matches("\"kind\":\"progress\"").count() == 3,
        ),
        (
            "one model_response",
            response.matches("event: model_response").count() == 1,
        ),
        (
            "the sums",
            response.contains("\"text\":\"3\"") && response.contains("\"text\":\"42\""),
        ),
        (
            "the unknown tool",
            response.contains(r#"tool \"nope\" not found"#),
        ),
    ];
    let failed: Vec<&str> = checks
        .iter()
        .filter(|(_, ok)| !ok)
        .map(|(name, _)| *name)
        .collect();
    if failed.is_empty() {
        println!("self-test passed");
        Ok(())
    } else {
        Err(format!("self-test failed: {}", failed.join(", ")).into())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let self_testing = std::env::args().any(|a| a == "--self-test")
        || std::env::var_os("AGENTCORE_SELF_TEST").is_some_and(|v| !v.is_empty() && v != "0");
    if self_testing {
        return self_test().await;
    }
    let port = std::env::var("PORT").unwrap_or_else(|_| "3000".to_owned());
    let listener = TcpListener::bind(format!("127.0.0.1:{port}")).await?;
    println!("listening on http://{}/turn", listener.local_addr()?);
    serve(listener, router()?).await?;
    Ok(())
}
