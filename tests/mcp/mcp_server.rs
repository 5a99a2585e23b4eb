//! The MCP server, driven by hand-written JSON-RPC: in process over
//! `tokio::io::duplex`, and as the built binary over its stdio.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use agentcore::approval::Mode;
use agentcore::sandbox::SandboxPolicy;
use agentcore::session::{Session, SessionConfig};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, Lines};

/// Longest wait for any one message; generous for a loaded machine.
const WAIT: Duration = Duration::from_secs(30);

/// A hand-rolled MCP client over a reader and a writer.
struct Client<R, W> {
    lines: Lines<BufReader<R>>,
    writer: W,
    next_id: i64,
    /// Notifications received while waiting for responses, in order.
    notifications: Vec<Value>,
    /// Responses received while waiting for another one.
    responses: Vec<Value>,
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> Client<R, W> {
    fn new(reader: R, writer: W) -> Self {
        Self {
            lines: BufReader::new(reader).lines(),
            writer,
            next_id: 1,
            notifications: Vec::new(),
            responses: Vec::new(),
        }
    }

    async fn send_raw(&mut self, line: &str) {
        self.writer.write_all(line.as_bytes()).await.unwrap();
        self.writer.write_all(b"\n").await.unwrap();
        self.writer.flush().await.unwrap();
    }

    async fn send(&mut self, message: Value) {
        self.send_raw(&message.to_string()).await;
    }

    /// Sends a request and returns its id without waiting.
    async fn start(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        id
    }

    async fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await;
    }

    /// The next message from the server.
    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(WAIT, self.lines.next_line())
            .await
            .expect("the server answered in time")
            .expect("the connection is readable")
            .expect("the server did not close the connection");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// The response to request `id`, keeping what else arrives meanwhile.
    async fn response(&mut self, id: i64) -> Value {
        if let Some(i) = self.responses.iter().position(|r| r["id"] == id) {
            return self.responses.remove(i);
        }
        loop {
            let message = self.recv().await;
            if message.get("id").is_none() {
                self.notifications.push(message);
            } else if message["id"] == id {
                return message;
            } else {
                self.responses.push(message);
            }
        }
    }

    async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.start(method, params).await;
        self.response(id).await
    }

    /// The `result` of a `tools/call`.
    async fn call(&mut self, tool: &str, args: Value) -> Value {
        let response = self
            .request("tools/call", json!({"name": tool, "arguments": args}))
            .await;
        result_of(response)
    }

    async fn initialize(&mut self) -> Value {
        let response = self
            .request(
                "initialize",
                json!({
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "mcp_server-test", "version": "0"}
                }),
            )
            .await;
        self.notify("notifications/initialized", json!({})).await;
        result_of(response)
    }
}

fn result_of(response: Value) -> Value {
    match response.get("result") {
        Some(result) => result.clone(),
        None => panic!("expected a result: {response}"),
    }
}

fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .expect("content is an array")
        .iter()
        .filter_map(|block| block["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

type DuplexClient = Client<
    tokio::io::ReadHalf<tokio::io::DuplexStream>,
    tokio::io::WriteHalf<tokio::io::DuplexStream>,
>;

/// A server on `root` in process, initialized, set up as `agentcore mcp`
/// sets it up (breaker off).
async fn connect(root: &Path, mode: Option<Mode>) -> DuplexClient {
    connect_with(root, mode, None).await
}

/// [`connect`] with these sandbox settings.
async fn connect_with(
    root: &Path,
    mode: Option<Mode>,
    sandbox: Option<SandboxPolicy>,
) -> DuplexClient {
    let mut config = SessionConfig::new(root);
    config.mode = mode;
    config.max_tool_errors = 0;
    config.sandbox = sandbox;
    let session = Session::start(config).expect("session starts");
    let (client_end, server_end) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_end);
    tokio::spawn(agentcore::mcp::serve(session, server_read, server_write));
    let (client_read, client_write) = tokio::io::split(client_end);
    let mut client = Client::new(client_read, client_write);
    client.initialize().await;
    client
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "alpha\nbeta\ngamma\n").unwrap();
    dir
}

/// Whether process `pid` has exited (gone, or a zombie nobody reaped yet).
fn process_is_gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // The state follows the parenthesised command name.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state == "Z" || state == "X"),
    }
}

async fn wait_for_file(path: &Path) -> String {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && text.ends_with('\n')
        {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_names_agentcore_and_its_version() {
    let dir = workspace();
    let session = Session::start(SessionConfig::new(dir.path())).unwrap();
    let (client_end, server_end) = tokio::io::duplex(1 << 16);
    let (r, w) = tokio::io::split(server_end);
    tokio::spawn(agentcore::mcp::serve(session, r, w));
    let (r, w) = tokio::io::split(client_end);
    let mut client = Client::new(r, w);
    let result = client.initialize().await;
    assert_eq!(result["serverInfo"]["name"], "agentcore");
    assert_eq!(result["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(result["protocolVersion"], "2025-06-18");
    assert!(result["capabilities"]["tools"].is_object(), "{result}");
    // The instructions say where and how confined commands run.
    let instructions = result["instructions"].as_str().unwrap_or_default();
    assert!(
        instructions.starts_with(&format!(
            "agentcore runs tool calls in the workspace {}. Sandbox: ",
            dir.path().display()
        )),
        "{instructions}"
    );
    // What this machine enforces, up to the loopback (a session shares
    // one; the machine's check describes a command's own).
    let status = agentcore::sandbox::check().enforced();
    let machine = status.split(", network:").next().unwrap_or_default();
    assert!(
        instructions.contains(&format!("Sandbox: auto: {machine}")),
        "{instructions}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_list_has_the_built_in_tools_with_annotations_from_their_capabilities() {
    let dir = workspace();
    let mut client = connect(dir.path(), None).await;
    let result = result_of(client.request("tools/list", json!({})).await);
    let tools = result["tools"].as_array().expect("tools array");
    let mut names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "bash",
            "bash_output",
            "edit",
            "glob",
            "grep",
            "kill_shell",
            "ls",
            "multi_edit",
            "read",
            "write",
            "write_stdin"
        ],
        "{result}"
    );
    for tool in tools {
        let name = tool["name"].as_str().unwrap();
        assert!(
            tool["description"].as_str().is_some_and(|d| !d.is_empty()),
            "{name}"
        );
        assert_eq!(tool["inputSchema"]["type"], "object", "{name}");
        let annotations = &tool["annotations"];
        assert!(
            annotations["title"].as_str().is_some_and(|t| !t.is_empty()),
            "{name}: {annotations}"
        );
        match name {
            "read" | "glob" | "grep" | "ls" | "bash_output" => {
                assert_eq!(annotations["readOnlyHint"], true, "{name}");
                assert!(annotations.get("destructiveHint").is_none(), "{name}");
            }
            _ => {
                assert_eq!(annotations["readOnlyHint"], false, "{name}");
                assert_eq!(annotations["destructiveHint"], true, "{name}");
            }
        }
    }
    let bash = tools.iter().find(|t| t["name"] == "bash").unwrap();
    assert_eq!(bash["annotations"]["title"], "Run Command");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_of_a_file_in_the_root_succeeds() {
    let dir = workspace();
    let mut client = connect(dir.path(), None).await;
    let result = client.call("read", json!({"file_path": "notes.txt"})).await;
    assert_eq!(result["isError"], false, "{result}");
    let text = text_of(&result);
    assert!(text.contains("beta"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_without_a_read_is_an_error_result_asking_for_the_read() {
    let dir = workspace();
    let mut client = connect(dir.path(), Some(Mode::AcceptEdits)).await;
    let result = client
        .call(
            "write",
            json!({"file_path": "notes.txt", "content": "new\n"}),
        )
        .await;
    assert_eq!(result["isError"], true, "{result}");
    assert!(
        text_of(&result).contains("Read it first"),
        "{}",
        text_of(&result)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "alpha\nbeta\ngamma\n"
    );

    // The same connection keeps the ledger: after a read the write goes through.
    let read = client.call("read", json!({"file_path": "notes.txt"})).await;
    assert_eq!(read["isError"], false, "{read}");
    let result = client
        .call(
            "write",
            json!({"file_path": "notes.txt", "content": "new\n"}),
        )
        .await;
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "new\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn default_mode_denies_bash_because_approval_was_required() {
    let dir = workspace();
    // A command the sandbox does not confine (here: no sandbox) needs
    // approval in default mode; a confined one does not (auto_allow, tested
    // in tests/sandbox/sandboxed_commands_through_bash.rs).
    let mut client = connect_with(dir.path(), None, Some(SandboxPolicy::off())).await;
    let result = client
        .call("bash", json!({"command": "touch ran.txt"}))
        .await;
    assert_eq!(result["isError"], true, "{result}");
    assert!(
        text_of(&result).contains("approval required"),
        "{}",
        text_of(&result)
    );
    assert!(!dir.path().join("ran.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_tool_is_an_error_result_not_a_protocol_error() {
    let dir = workspace();
    let mut client = connect(dir.path(), None).await;
    let response = client
        .request("tools/call", json!({"name": "teleport", "arguments": {}}))
        .await;
    assert!(response.get("error").is_none(), "{response}");
    let result = result_of(response);
    assert_eq!(result["isError"], true);
    assert!(
        text_of(&result).contains("tool \"teleport\" not found"),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_progress_becomes_progress_notifications_for_the_token() {
    let dir = workspace();
    let mut client = connect(dir.path(), Some(Mode::Bypass)).await;
    let id = client
        .start(
            "tools/call",
            json!({
                "name": "bash",
                "arguments": {"command": "for i in 1 2 3 4; do echo line$i; sleep 0.3; done"},
                "_meta": {"progressToken": "tok-1"}
            }),
        )
        .await;
    let result = result_of(client.response(id).await);
    assert_eq!(result["isError"], false, "{result}");
    let progress: Vec<&Value> = client
        .notifications
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .collect();
    assert!(!progress.is_empty(), "{:?}", client.notifications);
    let mut last = 0.0;
    let mut messages = String::new();
    for note in &progress {
        assert_eq!(note["params"]["progressToken"], "tok-1");
        let n = note["params"]["progress"].as_f64().unwrap();
        assert!(n > last, "progress increases: {progress:?}");
        last = n;
        messages.push_str(note["params"]["message"].as_str().unwrap_or_default());
    }
    assert!(messages.contains("line1"), "{messages}");

    // Without a token, no notifications.
    client.notifications.clear();
    let result = client.call("bash", json!({"command": "echo quiet"})).await;
    assert_eq!(result["isError"], false, "{result}");
    assert!(
        client
            .notifications
            .iter()
            .all(|n| n["method"] != "notifications/progress"),
        "{:?}",
        client.notifications
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_bash_call_ends_and_its_processes_are_gone() {
    let dir = workspace();
    // `$!` is a host PID only outside the sandbox's PID namespace; the
    // confined case is tested in tests/sandbox/sandboxed_commands_through_bash.rs.
    let mut client = connect_with(dir.path(), Some(Mode::Bypass), Some(SandboxPolicy::off())).await;
    let pid_file = dir.path().join("sleep.pid");
    let id = client
        .start(
            "tools/call",
            json!({
                "name": "bash",
                "arguments": {"command": "sleep 30 & echo $! > sleep.pid; wait"}
            }),
        )
        .await;
    let pid: i32 = wait_for_file(&pid_file).await.trim().parse().unwrap();
    assert!(!process_is_gone(pid), "sleep is running");

    let cancelled_at = Instant::now();
    client
        .notify(
            "notifications/cancelled",
            json!({"requestId": id, "reason": "user pressed escape"}),
        )
        .await;
    while !process_is_gone(pid) {
        assert!(
            cancelled_at.elapsed() < Duration::from_secs(10),
            "sleep {pid} still running after the cancel"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // The server goes on serving, and the session is free for another
    // unsafe call (the cancelled one has ended).
    let result = client.call("bash", json!({"command": "echo after"})).await;
    assert_eq!(result["isError"], false, "{result}");
    assert!(text_of(&result).contains("after"));
    // No response is sent for a cancelled request.
    assert!(
        client.responses.iter().all(|r| r["id"] != id),
        "{:?}",
        client.responses
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_reads_in_flight_together_both_succeed() {
    let dir = workspace();
    std::fs::write(dir.path().join("other.txt"), "delta\n").unwrap();
    let mut client = connect(dir.path(), None).await;
    let first = client
        .start(
            "tools/call",
            json!({"name": "read", "arguments": {"file_path": "notes.txt"}}),
        )
        .await;
    let second = client
        .start(
            "tools/call",
            json!({"name": "read", "arguments": {"file_path": "other.txt"}}),
        )
        .await;
    let second = result_of(client.response(second).await);
    let first = result_of(client.response(first).await);
    assert_eq!(first["isError"], false, "{first}");
    assert_eq!(second["isError"], false, "{second}");
    assert!(text_of(&first).contains("gamma"));
    assert!(text_of(&second).contains("delta"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_in_flight_are_admitted_in_arrival_order() {
    // The reads arrive after the command that creates their file; admitted
    // in arrival order, the unsafe command runs alone first and every read
    // sees the file.
    let dir = workspace();
    let mut client = connect(dir.path(), Some(Mode::Bypass)).await;
    let make = client
        .start(
            "tools/call",
            json!({"name": "bash", "arguments": {"command": "sleep 0.3; echo made > late.txt"}}),
        )
        .await;
    // Four different reads: four identical ones would also meet the loop
    // guard, which judges a repeat by the calls that ended before it
    // started, so whether the fourth is refused would depend on how fast
    // the first three ended (docs/semantics.md §7), not on their order.
    let mut reads = Vec::new();
    for limit in 10..14 {
        let id = client
            .start(
                "tools/call",
                json!({"name": "read", "arguments": {"file_path": "late.txt", "limit": limit}}),
            )
            .await;
        reads.push(id);
    }
    for id in reads.into_iter().rev() {
        let read = result_of(client.response(id).await);
        assert_eq!(read["isError"], false, "{read}");
        assert!(text_of(&read).contains("made"), "{read}");
    }
    let make = result_of(client.response(make).await);
    assert_eq!(make["isError"], false, "{make}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_errors_and_the_server_goes_on() {
    let dir = workspace();
    let mut client = connect(dir.path(), None).await;
    client.send_raw("this is not json").await;
    client.send_raw("{\"jsonrpc\":\"2.0\",\"id\":").await;
    let bad_params = client
        .request("tools/call", json!({"name": 5, "arguments": "x"}))
        .await;
    assert!(bad_params.get("error").is_some(), "{bad_params}");
    let no_such_method = client.request("tools/teleport", json!({})).await;
    assert!(no_such_method.get("error").is_some(), "{no_such_method}");
    let result = client
        .call(
            "read",
            json!({"file_path": 7, "offset": "ten", "extra": [1]}),
        )
        .await;
    assert_eq!(result["isError"], true, "{result}");
    let result = client
        .call("read", json!({"file_path": "../../etc/passwd"}))
        .await;
    assert_eq!(result["isError"], true, "{result}");
    let no_arguments = result_of(client.request("tools/call", json!({"name": "read"})).await);
    assert_eq!(no_arguments["isError"], true, "{no_arguments}");
    assert!(
        text_of(&no_arguments).contains("file_path"),
        "{no_arguments}"
    );
    let result = client.call("read", json!({"file_path": "notes.txt"})).await;
    assert_eq!(result["isError"], false, "{result}");
}

// ---- the built binary over its stdio ----

type ChildClient = Client<tokio::process::ChildStdout, tokio::process::ChildStdin>;

fn spawn_binary(args: &[&str]) -> (tokio::process::Child, Option<ChildClient>) {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_agentcore"))
        .arg("mcp")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the binary starts");
    let client = match (child.stdout.take(), child.stdin.take()) {
        (Some(out), Some(input)) => Some(Client::new(out, input)),
        _ => None,
    };
    (child, client)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binary_serves_on_stdio_and_exits_0_when_the_client_leaves() {
    let dir = workspace();
    let root = dir.path().to_str().unwrap();
    let (mut child, client) = spawn_binary(&["--root", root]);
    let mut client = client.unwrap();
    let init = client.initialize().await;
    assert_eq!(init["serverInfo"]["name"], "agentcore");
    let tools = result_of(client.request("tools/list", json!({})).await);
    // The default tools (write_stdin, issue 30, made them 11).
    assert_eq!(tools["tools"].as_array().map(Vec::len), Some(11));
    // No breaker: failures in a row do not disable the tool.
    for _ in 0..4 {
        let missing = client
            .call("read", json!({"file_path": "missing.txt"}))
            .await;
        assert_eq!(missing["isError"], true, "{missing}");
    }
    let result = client.call("read", json!({"file_path": "notes.txt"})).await;
    assert_eq!(result["isError"], false, "{result}");
    let result = client
        .call("write", json!({"file_path": "new.txt", "content": "x"}))
        .await;
    assert_eq!(
        result["isError"], true,
        "default mode denies writes: {result}"
    );
    drop(client);
    let status = tokio::time::timeout(WAIT, child.wait())
        .await
        .expect("the server exits when stdin closes")
        .unwrap();
    assert!(status.success(), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binary_with_an_unreadable_policy_exits_2_with_a_message() {
    let dir = workspace();
    let root = dir.path().to_str().unwrap();
    let missing = dir.path().join("no-such-policy.toml");
    let (child, _client) = spawn_binary(&["--root", root, "--policy", missing.to_str().unwrap()]);
    let output = tokio::time::timeout(WAIT, child.wait_with_output())
        .await
        .expect("exits")
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("no-such-policy.toml"), "{stderr}");
}

/// Issue 13 item 4 on the MCP face: a `write` cancelled with
/// `notifications/cancelled` at many moments leaves the file wholly old or
/// wholly new, no temporary file, and a ledger stamp that matches it (the
/// next `edit`, which checks the stamp, succeeds either way).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_write_leaves_the_old_or_the_new_file_and_a_true_stamp() {
    let dir = workspace();
    let mut client = connect(dir.path(), Some(Mode::Bypass)).await;
    let path = dir.path().join("big.txt");
    let body = |fill: &str| fill.repeat(1 << 20) + "\nMARK\n";
    let created = client
        .call(
            "write",
            json!({"file_path": "big.txt", "content": body("a")}),
        )
        .await;
    assert_eq!(created["isError"], false, "{created}");
    let (mut old, mut new) = (0, 0);
    for run in 0..20u64 {
        let before = std::fs::read_to_string(&path).unwrap();
        let next = body(if run % 2 == 0 { "b" } else { "a" });
        let id = client
            .start(
                "tools/call",
                json!({"name": "write", "arguments": {"file_path": "big.txt", "content": next}}),
            )
            .await;
        tokio::time::sleep(Duration::from_millis(run * 37 % 500)).await;
        client
            .notify("notifications/cancelled", json!({"requestId": id}))
            .await;
        // Calls that change files run one at a time, so this edit starts
        // after the cancelled write has ended, whatever it did.
        let edited = client
            .call(
                "edit",
                json!({"file_path": "big.txt", "old_string": "\nMARK\n", "new_string": "\nMARK\n\n"}),
            )
            .await;
        let edit = |text: &str| text.replacen("\nMARK\n", "\nMARK\n\n", 1);
        let after = std::fs::read_to_string(&path).unwrap();
        if after == edit(&before) {
            old += 1;
        } else {
            assert!(
                after == edit(&next),
                "run {run}: neither the old nor the new file"
            );
            new += 1;
        }
        assert_eq!(
            edited["isError"], false,
            "run {run}: the stamp does not match the file: {edited}"
        );
        let temps: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(temps.is_empty(), "run {run}: left {temps:?}");
    }
    eprintln!("cancelled writes: {old} left the file unchanged, {new} wrote it");
}
