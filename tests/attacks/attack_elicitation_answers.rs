//! A hostile MCP client answering the approval questions of
//! `agentcore mcp --mode default` by hand: unknown actions and choices,
//! extra fields, wrong types, errors, answers to questions never asked,
//! answers after the timeout, a second answer, a huge preview. Every one
//! is a deny and nothing runs.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// Longest wait for any one message; generous for a loaded machine.
const WAIT: Duration = Duration::from_secs(30);

struct Client {
    _child: Child,
    lines: Lines<BufReader<ChildStdout>>,
    stdin: ChildStdin,
    next_id: i64,
    /// Messages read while waiting for another.
    seen: Vec<Value>,
    /// The server's TMPDIR: the server is killed when the client drops, so
    /// its session's output folder is removed with this folder.
    _tmp: tempfile::TempDir,
}

impl Client {
    /// `agentcore mcp --root ROOT --mode default OPTIONS…`, initialized by
    /// a client that declares elicitation in form mode.
    async fn start(root: &Path, options: &[&str]) -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_agentcore"))
            .env("TMPDIR", tmp.path())
            .arg("mcp")
            .arg("--root")
            .arg(root)
            .args(["--mode", "default"])
            .args(options)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("agentcore mcp starts");
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut client = Self {
            _child: child,
            lines,
            stdin,
            next_id: 1,
            seen: Vec::new(),
            _tmp: tmp,
        };
        let id = client
            .request(
                "initialize",
                json!({
                    "protocolVersion": "2025-06-18",
                    "capabilities": {"elicitation": {"form": {}}},
                    "clientInfo": {"name": "attack_elicitation_answers", "version": "0"}
                }),
            )
            .await;
        client.take(|m| m["id"] == id).await;
        client
            .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        client
    }

    async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    async fn request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        id
    }

    /// Starts a `write` of `path`; returns the request id.
    async fn write(&mut self, path: &str, content: &str) -> i64 {
        self.request(
            "tools/call",
            json!({"name": "write", "arguments": {"file_path": path, "content": content}}),
        )
        .await
    }

    /// The first message (seen or next) that `wanted` accepts.
    async fn take(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.seen.iter().position(&wanted) {
            return self.seen.remove(i);
        }
        loop {
            let line = tokio::time::timeout(WAIT, self.lines.next_line())
                .await
                .expect("the server spoke in time")
                .expect("readable")
                .expect("the server did not close the connection");
            let message: Value = serde_json::from_str(&line).expect("JSON");
            if wanted(&message) {
                return message;
            }
            self.seen.push(message);
        }
    }

    /// The next `elicitation/create` request.
    async fn question(&mut self) -> Value {
        self.take(|m| m["method"] == "elicitation/create").await
    }

    /// The text of the `tools/call` result for request `id`, which must be
    /// an error.
    async fn refused(&mut self, id: i64) -> String {
        let response = self
            .take(|m| m["id"] == id && m.get("method").is_none())
            .await;
        let result = &response["result"];
        assert_eq!(result["isError"], true, "{response}");
        result["content"][0]["text"]
            .as_str()
            .expect("a text")
            .to_owned()
    }
}

/// Writes `x.txt`, answers its question with `answer` (the response's
/// fields besides `jsonrpc` and `id`), and returns the refusal's text.
async fn answered_with(answer: Value) -> String {
    let root = tempfile::tempdir().unwrap();
    let mut client = Client::start(root.path(), &[]).await;
    let call = client.write("x.txt", "x\n").await;
    let question = client.question().await;
    let mut response = json!({"jsonrpc": "2.0", "id": question["id"]});
    for (key, value) in answer.as_object().unwrap() {
        response[key] = value.clone();
    }
    client.send(response).await;
    let text = client.refused(call).await;
    assert!(
        !root.path().join("x.txt").exists(),
        "{answer}: the write ran"
    );
    text
}

#[tokio::test]
async fn attack_unknown_actions_choices_fields_and_types_deny() {
    for answer in [
        json!({"result": {"action": "allow"}}),
        json!({"result": {"action": "ACCEPT", "content": {"decision": "allow_once"}}}),
        json!({"result": {"action": "accept"}}),
        json!({"result": {"action": "accept", "content": null}}),
        json!({"result": {"action": "accept", "content": "allow_once"}}),
        json!({"result": {"action": "accept", "content": ["allow_once"]}}),
        json!({"result": {"action": "accept", "content": {}}}),
        json!({"result": {"action": "accept", "content": {"decision": "yes"}}}),
        json!({"result": {"action": "accept", "content": {"decision": "Allow once"}}}),
        json!({"result": {"action": "accept", "content": {"decision": 0}}}),
        json!({"result": {"action": "accept", "content": {"decision": true}}}),
        json!({"result": {"action": "accept", "content": {"decision": null}}}),
        json!({"result": {"action": "accept", "content": {"decision": {"const": "allow_once"}}}}),
        json!({"result": {"action": "accept", "content": {"decision": "allow_once", "scope": "all"}}}),
        json!({"result": {"action": 1, "content": {"decision": "allow_once"}}}),
        json!({"result": {"content": {"decision": "allow_once"}}}),
        json!({"result": "accept"}),
        json!({"result": null}),
        json!({"result": {}}),
    ] {
        let text = answered_with(answer.clone()).await;
        assert!(text.starts_with("approval failed: "), "{answer}: {text}");
        assert!(text.contains("so the call was not run"), "{answer}: {text}");
    }
}

#[tokio::test]
async fn attack_an_error_response_denies() {
    let text = answered_with(json!({"error": {"code": -32603, "message": "ui crashed"}})).await;
    assert!(
        text.starts_with("approval failed: the MCP client could not ask the user"),
        "{text}"
    );
}

#[tokio::test]
async fn attack_an_answer_to_a_question_never_asked_is_ignored() {
    let root = tempfile::tempdir().unwrap();
    let mut client = Client::start(root.path(), &[]).await;
    let call = client.write("x.txt", "x\n").await;
    let question = client.question().await;
    let allow = json!({"action": "accept", "content": {"decision": "allow_session"}});
    for forged in [json!(987_654), json!("1"), json!(null)] {
        client
            .send(json!({"jsonrpc": "2.0", "id": forged, "result": allow}))
            .await;
    }
    client
        .send(json!({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "decline"}}))
        .await;
    let text = client.refused(call).await;
    assert!(text.starts_with("the user denied this call"), "{text}");
    // A second answer to the same question changes nothing,
    client
        .send(json!({"jsonrpc": "2.0", "id": question["id"], "result": allow}))
        .await;
    // and the same write is asked again: nothing was granted.
    client.write("x.txt", "x\n").await;
    client.question().await;
    assert!(!root.path().join("x.txt").exists());
}

#[tokio::test]
async fn attack_an_answer_after_the_timeout_runs_nothing_and_grants_nothing() {
    let root = tempfile::tempdir().unwrap();
    let mut client = Client::start(root.path(), &["--ask-timeout", "1"]).await;
    let call = client.write("late.txt", "x\n").await;
    let question = client.question().await;
    let text = client.refused(call).await;
    assert!(
        text.starts_with("approval timed out: no answer came within 1 s, so the call was not run."),
        "{text}"
    );
    // The question is withdrawn.
    let cancelled = client
        .take(|m| m["method"] == "notifications/cancelled")
        .await;
    assert_eq!(cancelled["params"]["requestId"], question["id"]);
    // The answer comes anyway: allow for the session.
    client
        .send(json!({"jsonrpc": "2.0", "id": question["id"], "result": {
            "action": "accept", "content": {"decision": "allow_session"}}}))
        .await;
    // Nothing was granted: the same write is asked again.
    let call = client.write("late.txt", "x\n").await;
    let question = client.question().await;
    client
        .send(json!({"jsonrpc": "2.0", "id": question["id"], "result": {
            "action": "accept", "content": {"decision": "deny"}}}))
        .await;
    let text = client.refused(call).await;
    assert!(text.starts_with("the user denied this call"), "{text}");
    assert!(!root.path().join("late.txt").exists());
}

#[tokio::test]
async fn attack_a_huge_preview_is_cut_in_the_question() {
    let root = tempfile::tempdir().unwrap();
    let mut client = Client::start(root.path(), &[]).await;
    let content = "a line of a large file that the model wants written\n".repeat(40_000);
    let call = client.write("big.txt", &content).await;
    let question = client.question().await;
    let message = question["params"]["message"].as_str().unwrap();
    assert!(message.len() < 16 * 1024, "{} bytes", message.len());
    assert!(message.contains("[preview cut: the first "), "{message}");
    client
        .send(json!({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "cancel"}}))
        .await;
    let text = client.refused(call).await;
    assert!(text.contains("dismissed the question"), "{text}");
    assert!(!root.path().join("big.txt").exists());
}

#[tokio::test]
async fn attack_an_answer_naming_the_question_s_id_in_another_type_is_ignored() {
    let root = tempfile::tempdir().unwrap();
    let mut client = Client::start(root.path(), &[]).await;
    let call = client.write("x.txt", "x\n").await;
    let question = client.question().await;
    let id = question["id"].as_i64().expect("rmcp numbers its requests");
    let allow = json!({"action": "accept", "content": {"decision": "allow_session"}});
    // The same number as a string, in float form, in exponent form.
    for forged in [
        json!(id.to_string()),
        json!(id as f64),
        serde_json::from_str::<Value>(&format!("{id}e0")).unwrap(),
    ] {
        assert!(!(forged.is_i64()), "{forged}");
        client
            .send(json!({"jsonrpc": "2.0", "id": forged, "result": allow}))
            .await;
    }
    client
        .send(json!({"jsonrpc": "2.0", "id": id, "result": {"action": "decline"}}))
        .await;
    let text = client.refused(call).await;
    assert!(text.starts_with("the user denied this call"), "{text}");
    assert!(!root.path().join("x.txt").exists());
}
