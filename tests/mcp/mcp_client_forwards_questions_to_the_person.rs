//! Issue 32, item 3: a mounted server's question (MCP elicitation, form
//! mode) reaches the person through the session's approver, labelled with
//! the server's name and escaped; an accepted form gets the schema's
//! defaults for what the person left out (SEP-1034); with nobody to ask
//! the server is told "decline", and an approver slower than the ask
//! timeout is a "cancel".

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentcore::EventSink;
use agentcore::approval::{
    ApprovalAnswer, ApprovalRequest, Approver, ElicitationAnswer, ElicitationRequest,
};
use agentcore::mcp::client::McpServerConfig;
use agentcore::message::ToolCall;
use agentcore::session::{Session, SessionConfig};
use futures::future::BoxFuture;
use serde_json::{Value, json};

use crate::support::cli::{end, run_with_policy, text, turn};

const FAKE_SERVER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/mcp_client/fake_server.py"
);

/// Answers every form with `answer` after `delay`, and keeps what it was
/// asked.
struct Person {
    answer: ElicitationAnswer,
    delay: Duration,
    asked: Arc<Mutex<Vec<ElicitationRequest>>>,
}

impl Approver for Person {
    fn approve(&self, _request: ApprovalRequest) -> BoxFuture<'static, ApprovalAnswer> {
        Box::pin(async { ApprovalAnswer::Deny(None) })
    }

    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'static, ElicitationAnswer> {
        self.asked.lock().unwrap().push(request);
        let (answer, delay) = (self.answer.clone(), self.delay);
        Box::pin(async move {
            tokio::time::sleep(delay).await;
            answer
        })
    }
}

/// `mcp__fake__ask` in a library session whose person answers `answer`
/// after `delay`: the tool's text and what the person was asked.
async fn ask(answer: ElicitationAnswer, delay: Duration) -> (String, Vec<ElicitationRequest>) {
    ask_with(answer, delay, json!({})).await
}

/// The same with the tool's arguments `args`.
async fn ask_with(
    answer: ElicitationAnswer,
    delay: Duration,
    args: Value,
) -> (String, Vec<ElicitationRequest>) {
    let root = tempfile::tempdir().unwrap();
    let mut config = SessionConfig::new(root.path());
    config.mcp_servers = vec![McpServerConfig::command(
        "fake",
        "python3",
        [FAKE_SERVER, "normal"],
    )];
    config.ask_timeout = Duration::from_millis(500);
    let session = Session::connect(config).await.unwrap();
    assert!(
        session.mcp_failures().is_empty(),
        "{:?}",
        session.mcp_failures()
    );
    let asked = Arc::new(Mutex::new(Vec::new()));
    session.approval().set_approver(Some(Arc::new(Person {
        answer,
        delay,
        asked: asked.clone(),
    })));
    let mut result = session
        .turn(EventSink::noop())
        .run(vec![ToolCall::new("a", "mcp__fake__ask", args)])
        .await
        .unwrap();
    let text = result.results.remove(0).text();
    let asked = asked.lock().unwrap().clone();
    (text, asked)
}

#[tokio::test]
async fn an_accepted_form_reaches_the_server_with_its_defaults() {
    let (text, asked) = ask(
        ElicitationAnswer::Accept(json!({"name": "ada"})),
        Duration::ZERO,
    )
    .await;
    assert_eq!(text, r#"answer: accept {"colour": "blue", "name": "ada"}"#);
    assert_eq!(asked.len(), 1);
    let request = &asked[0];
    assert_eq!(request.server, "fake");
    // The escape character is shown, not sent to a terminal.
    assert_eq!(request.message, "Which name?\\u{1b}[31m (and a colour)");
    assert_eq!(
        request.labelled(),
        "MCP server \"fake\" asks: Which name?\\u{1b}[31m (and a colour)"
    );
    assert_eq!(request.schema["required"], json!(["name"]));
    assert_eq!(request.schema["properties"]["colour"]["default"], "blue");
}

#[tokio::test]
async fn a_declined_or_cancelled_form_is_told_to_the_server() {
    let (text, _) = ask(ElicitationAnswer::Decline, Duration::ZERO).await;
    assert_eq!(text, "answer: decline null");
    let (text, _) = ask(ElicitationAnswer::Cancel, Duration::ZERO).await;
    assert_eq!(text, "answer: cancel null");
    // Slower than the ask timeout (500 ms here): cancelled.
    let (text, _) = ask(
        ElicitationAnswer::Accept(json!({"name": "late"})),
        Duration::from_secs(5),
    )
    .await;
    assert_eq!(text, "answer: cancel null");
}

/// A hostile server's form of 100,000 fields never reaches the person:
/// declined without asking.
#[tokio::test]
async fn a_form_too_large_to_show_is_declined_without_asking() {
    let (text, asked) = ask_with(
        ElicitationAnswer::Accept(json!({"name": "ada"})),
        Duration::ZERO,
        json!({"huge": true}),
    )
    .await;
    assert_eq!(text, "answer: decline null");
    assert!(asked.is_empty(), "the person was asked");
}

#[test]
fn with_nobody_to_ask_a_run_declines_the_question() {
    let policy = format!(
        "[[mcp_servers]]\nname = \"fake\"\ncommand = \"python3\"\nargs = {}\n",
        Value::from(vec![FAKE_SERVER, "normal"])
    );
    let (events, output) = run_with_policy(&policy, &turn(&[("a", "mcp__fake__ask", json!({}))]));
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let answer = end(&events, "a");
    assert_eq!(answer["outcome"], "success", "{answer:#}");
    // The client declared forms (else the server would say it cannot ask)
    // and, with no person to ask, declined.
    assert_eq!(text(answer), "answer: decline null");
}
