//! `agentcore mcp` answers every malformed message instead of leaving the
//! client waiting: the built binary driven over its stdio pipes with
//! invalid JSON, binary garbage, JSON nested 100,000 deep, a request over
//! 16 MiB, batches, requests with params of the wrong shape, a request id
//! reused while in flight and a second `initialize`. After each, a good
//! request still works.
//!
//! The timeout only turns a hang into a failure; nothing here measures speed.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

/// Longest wait for any one message; generous for a loaded machine.
const WAIT: Duration = Duration::from_secs(60);

const LIMIT: usize = 16 * 1024 * 1024;

struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
    _dir: tempfile::TempDir,
    /// The server's TMPDIR: the server is killed when this drops, so its
    /// session's output folder is removed with this folder.
    _tmp: tempfile::TempDir,
}

impl Server {
    /// `agentcore mcp` on a scratch workspace holding `notes.txt`.
    fn spawn(mode: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_agentcore"))
            .env("TMPDIR", tmp.path())
            .args(["mcp", "--mode", mode, "--root"])
            .arg(dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("the binary starts");
        let stdin = child.stdin.take();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Self {
            child,
            stdin,
            lines,
            _dir: dir,
            _tmp: tmp,
        }
    }

    async fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
        stdin.flush().await.unwrap();
    }

    async fn send(&mut self, message: Value) {
        self.send_bytes(message.to_string().as_bytes()).await;
    }

    async fn request(&mut self, id: Value, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
    }

    /// The next message that is not a notification.
    async fn reply(&mut self) -> Value {
        loop {
            let line = tokio::time::timeout(WAIT, self.lines.next_line())
                .await
                .expect("the server answered instead of leaving the client waiting")
                .expect("stdout is readable")
                .expect("the server kept the connection open");
            let message: Value =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
            if message.get("id").is_some() {
                return message;
            }
        }
    }

    async fn initialize(&mut self) -> Value {
        self.request(
            json!(0),
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "attack_protocol_mcp", "version": "0"}
            }),
        )
        .await;
        let reply = self.reply().await;
        assert_eq!(reply["id"], 0, "{reply}");
        assert!(reply.get("result").is_some(), "{reply}");
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        reply
    }

    /// A good request after a bad one still works: a read of notes.txt
    /// (its `limit` differs by id, so the repeats are not a loop to the
    /// loop guard).
    async fn still_serves(&mut self, id: i64) {
        self.request(
            json!(id),
            "tools/call",
            json!({"name": "read", "arguments": {"file_path": "notes.txt", "limit": 1000 + id}}),
        )
        .await;
        let reply = self.reply().await;
        assert_eq!(reply["id"], id, "{reply}");
        assert_eq!(reply["result"]["isError"], false, "{reply}");
        assert!(reply.to_string().contains("beta"), "{reply}");
    }

    /// Closes stdin and returns the exit status and stderr.
    async fn finish(mut self) -> (std::process::ExitStatus, String) {
        drop(self.stdin.take());
        let output = tokio::time::timeout(WAIT, self.child.wait_with_output())
            .await
            .expect("the server exits when stdin closes")
            .unwrap();
        (
            output.status,
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    }
}

fn assert_error(reply: &Value, code: i64, id: Value) {
    assert_eq!(reply["jsonrpc"], "2.0", "{reply}");
    assert_eq!(reply["error"]["code"], code, "{reply}");
    assert_eq!(reply["id"], id, "{reply}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{reply}"
    );
}

fn deep(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unparsable_lines_get_parse_error_with_id_null_and_the_connection_goes_on() {
    let mut server = Server::spawn("default");
    server.initialize().await;
    let garbage: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .filter(|b| *b != b'\n')
        .collect();
    let bad: Vec<(&str, Vec<u8>)> = vec![
        ("invalid JSON", b"this is not json".to_vec()),
        ("cut-off JSON", br#"{"jsonrpc":"2.0","id":"#.to_vec()),
        ("binary garbage", garbage),
        (
            "invalid UTF-8 in a string",
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\xfe\"}".to_vec(),
        ),
        ("100,000 deep", deep(100_000).into_bytes()),
        ("a NUL byte", b"\0".to_vec()),
    ];
    for (n, (what, line)) in bad.into_iter().enumerate() {
        server.send_bytes(&line).await;
        let reply = server.reply().await;
        assert_error(&reply, -32700, Value::Null);
        assert!(
            reply["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with("Parse error"),
            "{what}: {reply}"
        );
        server.still_serves(100 + n as i64).await;
    }
    let (status, _) = server.finish().await;
    assert!(status.success(), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_nested_too_deep_is_answered_under_its_own_id() {
    let mut server = Server::spawn("default");
    server.initialize().await;
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{{"name":"read","arguments":{{"file_path":{}}}}}}}"#,
        deep(100_000)
    );
    server.send_bytes(line.as_bytes()).await;
    let reply = server.reply().await;
    assert_error(&reply, -32700, json!(31));
    assert!(reply.to_string().contains("128 levels"), "{reply}");
    server.still_serves(32).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_that_is_not_a_json_rpc_message_gets_invalid_request() {
    let mut server = Server::spawn("default");
    server.initialize().await;
    for (n, (line, id)) in [
        (
            json!([{"jsonrpc": "2.0", "id": 9, "method": "ping"}]),
            Value::Null,
        ),
        (json!([]), Value::Null),
        (json!(17), Value::Null),
        (json!("tools/list"), Value::Null),
        (
            json!({"jsonrpc": "2.0", "id": null, "method": "ping"}),
            Value::Null,
        ),
        (
            json!({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}),
            Value::Null,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}),
            Value::Null,
        ),
        (
            json!({"jsonrpc": "1.0", "id": 11, "method": "ping"}),
            json!(11),
        ),
        (json!({"id": 12, "method": "ping"}), json!(12)),
        (json!({"jsonrpc": "2.0", "id": 13, "method": 5}), json!(13)),
        (json!({"jsonrpc": "2.0", "id": 14}), json!(14)),
        (json!({"jsonrpc": "2.0"}), Value::Null),
    ]
    .into_iter()
    .enumerate()
    {
        server.send(line.clone()).await;
        let reply = server.reply().await;
        assert_error(&reply, -32600, id);
        assert!(
            reply["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with("Invalid Request"),
            "{line}: {reply}"
        );
        server.still_serves(100 + n as i64).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_over_16_mib_is_answered_under_its_id_without_being_kept() {
    let mut server = Server::spawn("accept-edits");
    server.initialize().await;
    let content = "x".repeat(LIMIT + 1024);
    let big = json!({
        "jsonrpc": "2.0",
        "id": 77,
        "method": "tools/call",
        "params": {"name": "write", "arguments": {"file_path": "big.txt", "content": content}}
    });
    server.send(big).await;
    let reply = server.reply().await;
    assert_error(&reply, -32600, json!(77));
    assert!(reply.to_string().contains("16 MiB"), "{reply}");
    server.still_serves(78).await;

    // The id after the payload is found too; garbage that long gets id null.
    let late_id = format!(
        r#"{{"jsonrpc":"2.0","method":"tools/list","params":{{"pad":"{}"}},"id":"late"}}"#,
        "y".repeat(LIMIT)
    );
    server.send_bytes(late_id.as_bytes()).await;
    assert_error(&server.reply().await, -32600, json!("late"));
    server.send_bytes(&vec![b'z'; LIMIT + 1]).await;
    assert_error(&server.reply().await, -32600, Value::Null);
    server.still_serves(79).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_of_millions_of_small_values_is_refused_under_its_id() {
    // Under 16 MiB, but each value costs hundreds of bytes to parse.
    let mut server = Server::spawn("default");
    server.initialize().await;
    let zeros = vec!["0"; 4_000_000].join(",");
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":"many","method":"tools/call","params":{{"name":"read","arguments":{{"file_path":"notes.txt","x":[{zeros}]}}}}}}"#
    );
    assert!(line.len() < LIMIT);
    server.send_bytes(line.as_bytes()).await;
    let reply = server.reply().await;
    assert_error(&reply, -32600, json!("many"));
    assert!(reply.to_string().contains("100000 JSON values"), "{reply}");
    server.still_serves(1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_line_at_the_end_of_input_is_answered_before_the_server_exits() {
    let mut server = Server::spawn("default");
    server.initialize().await;
    let stdin = server.stdin.as_mut().unwrap();
    stdin
        .write_all(br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"read","arguments":{"file_path":""#)
        .await
        .unwrap();
    let chunk = vec![b'a'; 1 << 20];
    for _ in 0..20 {
        stdin.write_all(&chunk).await.unwrap();
    }
    drop(server.stdin.take());
    // The id came before the endless string, so the answer carries it.
    let reply = server.reply().await;
    assert_error(&reply, -32600, json!(5));
    let (status, _) = server.finish().await;
    assert!(status.success(), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_call_with_params_of_the_wrong_shape_is_invalid_params() {
    let mut server = Server::spawn("default");
    server.initialize().await;
    let no_params = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call"});
    let cases = [
        no_params,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": "read"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": [1]}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"arguments": {}}}),
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": 5, "arguments": {}}}),
        json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "read", "arguments": "x"}}),
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "read", "arguments": ["notes.txt"]}}),
        json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "read", "arguments": 3}}),
        json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "read", "arguments": true}}),
        json!({"jsonrpc": "2.0", "id": 10, "method": "tools/list", "params": "x"}),
    ];
    for case in cases {
        let id = case["id"].clone();
        server.send(case.clone()).await;
        let reply = server.reply().await;
        assert_error(&reply, -32602, id);
        assert!(
            reply["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with("Invalid params"),
            "{case}: {reply}"
        );
    }
    // An unknown method is still -32601, and arguments left out still mean
    // {}: the tool itself says what is missing.
    server.request(json!(20), "tools/teleport", json!({})).await;
    assert_error(&server.reply().await, -32601, json!(20));
    server
        .request(json!(21), "tools/call", json!({"name": "ls"}))
        .await;
    let reply = server.reply().await;
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    assert!(reply.to_string().contains("`path` is missing"), "{reply}");
    server.still_serves(22).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_id_in_flight_cannot_be_reused_until_it_is_answered() {
    let mut server = Server::spawn("bypass");
    server.initialize().await;
    server
        .request(
            json!("job"),
            "tools/call",
            json!({"name": "bash", "arguments": {"command": "sleep 1; echo slow-done"}}),
        )
        .await;
    // The same id while the command runs: refused under that id.
    server.request(json!("job"), "tools/list", json!({})).await;
    let refusal = server.reply().await;
    assert_error(&refusal, -32600, json!("job"));
    assert!(refusal.to_string().contains("in flight"), "{refusal}");
    // The first request's own answer still comes, once.
    let done = server.reply().await;
    assert_eq!(done["id"], "job", "{done}");
    assert_eq!(done["result"]["isError"], false, "{done}");
    assert!(done.to_string().contains("slow-done"), "{done}");
    // Answered, the id is free again.
    server.request(json!("job"), "tools/list", json!({})).await;
    let list = server.reply().await;
    assert_eq!(list["id"], "job", "{list}");
    assert!(list["result"]["tools"].is_array(), "{list}");
    server.still_serves(1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_request_id_can_be_reused_and_gets_its_own_answer() {
    let mut server = Server::spawn("bypass");
    server.initialize().await;
    server
        .request(
            json!(9),
            "tools/call",
            json!({"name": "bash", "arguments": {"command": "sleep 2; echo old-call"}}),
        )
        .await;
    server
        .send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}}))
        .await;
    server
        .request(
            json!(9),
            "tools/call",
            json!({"name": "bash", "arguments": {"command": "echo new-call"}}),
        )
        .await;
    let reply = server.reply().await;
    assert_eq!(reply["id"], 9, "{reply}");
    assert!(reply.to_string().contains("new-call"), "{reply}");
    // Nothing more comes for id 9: the next answer is for the next request.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    server.still_serves(10).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_initialize_is_refused_and_the_connection_goes_on() {
    let mut server = Server::spawn("default");
    server.initialize().await;
    server
        .request(
            json!("again"),
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "someone-else", "version": "1"}
            }),
        )
        .await;
    let reply = server.reply().await;
    assert_error(&reply, -32600, json!("again"));
    assert!(reply.to_string().contains("already initialized"), "{reply}");
    server.still_serves(1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_before_initialize_is_answered_and_the_handshake_still_works() {
    let mut server = Server::spawn("default");
    server.send_bytes(b"\x1b[2J garbage").await;
    assert_error(&server.reply().await, -32700, Value::Null);
    server.send_bytes(deep(100_000).as_bytes()).await;
    assert_error(&server.reply().await, -32700, Value::Null);
    server.initialize().await;
    server.still_serves(1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notification_instead_of_initialize_closes_the_connection_with_a_message() {
    let mut server = Server::spawn("default");
    server
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    let (status, stderr) = server.finish().await;
    assert!(!status.success(), "{status}");
    assert!(stderr.contains("agentcore mcp:"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_from_the_client_get_no_reply_even_when_broken() {
    // A peer echoing our error replies back must not start an endless
    // exchange of errors: the next message is the answer to the read.
    let mut server = Server::spawn("default");
    server.initialize().await;
    server.send_bytes(b"not json").await;
    let error = server.reply().await;
    assert_error(&error, -32700, Value::Null);
    server.send(error).await;
    server
        .send(json!({"jsonrpc": "2.0", "id": [1], "error": {"code": 1, "message": "x"}}))
        .await;
    server
        .send(json!({"jsonrpc": "2.0", "id": 424242, "result": {}}))
        .await;
    server.still_serves(1).await;
}
