//! `agentcore mcp --http` as a child process, and a raw HTTP/1.1 client
//! that can send what a well-behaved client would not (duplicate headers,
//! odd spacing, chunked bodies).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::procs::{alive_with_arg, unique};

/// A token long enough for the server.
pub const TOKEN: &str = "h19-test-token-0123456789abcdef";

/// A running `agentcore mcp --http`.
pub struct Server {
    pub child: Child,
    /// The address it printed.
    pub addr: SocketAddr,
    /// Where a client connects (127.0.0.1 when bound to 0.0.0.0).
    pub connect: SocketAddr,
    pub stderr: Arc<Mutex<String>>,
    /// The workspace.
    pub root: tempfile::TempDir,
    /// The server's TMPDIR: its sessions' output folders are made here.
    pub tmp: tempfile::TempDir,
}

/// What starting the server gave: running, or ended with this status and
/// stderr.
pub enum Started {
    Running(Server),
    Ended(ExitStatus, String),
}

/// Starts `agentcore mcp --http BIND --mode bypass --root ROOT EXTRA…` with
/// `env` (and without the token variable unless `env` sets it).
pub fn start(bind: &str, extra: &[&str], env: &[(&str, &str)]) -> Started {
    let root = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_agentcore"));
    cmd.args(["mcp", "--http", bind, "--mode", "bypass", "--root"])
        .arg(root.path())
        .args(extra)
        .env_remove("AGENTCORE_MCP_TOKEN")
        .env("TMPDIR", tmp.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn agentcore mcp --http");
    let stderr = Arc::new(Mutex::new(String::new()));
    let (tx, rx) = mpsc::channel();
    {
        let pipe = child.stderr.take().unwrap();
        let stderr = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines() {
                let Ok(line) = line else { break };
                if let Some(rest) = line.strip_prefix("agentcore mcp: listening on http://") {
                    let addr = rest.trim_end_matches("/mcp").to_owned();
                    let _ = tx.send(addr);
                }
                let mut all = stderr.lock().unwrap();
                all.push_str(&line);
                all.push('\n');
            }
        });
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(addr) = rx.recv_timeout(Duration::from_millis(50)) {
            let addr: SocketAddr = addr.parse().expect("a socket address");
            let connect = if addr.ip().is_unspecified() {
                SocketAddr::from(([127, 0, 0, 1], addr.port()))
            } else {
                addr
            };
            return Started::Running(Server {
                child,
                addr,
                connect,
                stderr,
                root,
                tmp,
            });
        }
        if let Some(status) = child.try_wait().unwrap() {
            std::thread::sleep(Duration::from_millis(100));
            let text = stderr.lock().unwrap().clone();
            return Started::Ended(status, text);
        }
        assert!(
            Instant::now() < deadline,
            "agentcore mcp --http never listened"
        );
    }
}

/// [`start`], which must run.
pub fn running(bind: &str, extra: &[&str], env: &[(&str, &str)]) -> Server {
    match start(bind, extra, env) {
        Started::Running(server) => server,
        Started::Ended(status, stderr) => panic!("the server ended: {status}: {stderr}"),
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Sends SIGTERM and waits (at most 30 s) for the exit.
    pub fn terminate(&mut self) -> ExitStatus {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "no exit after SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The output folders of live sessions (`agentcore-output-*` in TMPDIR).
    pub fn output_dirs(&self) -> usize {
        std::fs::read_dir(self.tmp.path())
            .unwrap()
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with("agentcore-output-")
            })
            .count()
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// A raw request to this server: `headers` are whole header lines.
    pub fn raw(&self, method: &str, path: &str, headers: &[&str], body: &[u8]) -> Reply {
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n",
            self.connect
        );
        for h in headers {
            head.push_str(h);
            head.push_str("\r\n");
        }
        if !headers
            .iter()
            .any(|h| h.to_ascii_lowercase().starts_with("transfer-encoding"))
        {
            head.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        head.push_str("\r\n");
        send(self.connect, head.as_bytes(), body)
    }

    /// An MCP POST with the headers a streamable-HTTP client sends, plus
    /// `extra`.
    pub fn post(&self, session: Option<&str>, extra: &[&str], message: &Value) -> Reply {
        let sid;
        let mut headers = vec![
            "Content-Type: application/json",
            "Accept: application/json, text/event-stream",
        ];
        if let Some(id) = session {
            sid = format!("Mcp-Session-Id: {id}");
            headers.push(&sid);
            headers.push("MCP-Protocol-Version: 2025-06-18");
        }
        headers.extend_from_slice(extra);
        self.raw("POST", "/mcp", &headers, message.to_string().as_bytes())
    }

    /// `initialize` then `notifications/initialized`; the session id.
    pub fn open(&self, extra: &[&str]) -> String {
        let reply = self.post(None, extra, &initialize());
        assert_eq!(reply.status, 200, "{reply:?} {}", self.stderr());
        let id = reply
            .header("mcp-session-id")
            .expect("a session id")
            .to_owned();
        let done = self.post(
            Some(&id),
            extra,
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        );
        assert_eq!(done.status, 202, "{done:?}");
        id
    }

    /// `tools/call`: the JSON-RPC response.
    pub fn call(&self, session: &str, extra: &[&str], id: u64, tool: &str, args: Value) -> Value {
        let reply = self.post(
            Some(session),
            extra,
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": tool, "arguments": args}}),
        );
        assert_eq!(reply.status, 200, "{reply:?}");
        reply
            .messages()
            .into_iter()
            .find(|m| m["id"] == id)
            .unwrap_or_else(|| panic!("no response to {id}: {reply:?}"))
    }

    /// DELETE of a session.
    pub fn delete(&self, session: &str, extra: &[&str]) -> Reply {
        let sid = format!("Mcp-Session-Id: {session}");
        let mut headers = vec![sid.as_str(), "MCP-Protocol-Version: 2025-06-18"];
        headers.extend_from_slice(extra);
        self.raw("DELETE", "/mcp", &headers, b"")
    }
}

/// An `initialize` request.
pub fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "h19-test", "version": "0"}}})
}

/// Writes `head` and `body` to a new connection and reads the reply to the
/// end (the server closes it: `Connection: close`).
pub fn send(addr: SocketAddr, head: &[u8], body: &[u8]) -> Reply {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    stream.write_all(head).unwrap();
    // A server that answers before reading the whole body may close the
    // connection under us; its answer is still there to read.
    let _ = stream.write_all(body);
    read_reply(&mut stream)
}

/// Reads one HTTP/1.1 reply to the end of the connection.
pub fn read_reply(stream: &mut TcpStream) -> Reply {
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no reply head: {:?}", String::from_utf8_lossy(&raw)));
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut body = raw[split + 4..].to_vec();
    let mut lines = head.split("\r\n");
    let status: u16 = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    if headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"))
    {
        body = dechunk(&body);
    }
    Reply {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(end) = data.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size = std::str::from_utf8(&data[..end])
            .ok()
            .and_then(|s| usize::from_str_radix(s.split(';').next().unwrap().trim(), 16).ok())
            .unwrap_or(0);
        if size == 0 || data.len() < end + 2 + size {
            return out;
        }
        out.extend_from_slice(&data[end + 2..end + 2 + size]);
        data = &data[(end + 4 + size).min(data.len())..];
    }
}

/// An HTTP reply.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The JSON messages of an SSE body (`data:` lines), or the body when it
    /// is JSON.
    pub fn messages(&self) -> Vec<Value> {
        if let Ok(value) = serde_json::from_str::<Value>(&self.body) {
            return vec![value];
        }
        self.body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect()
    }
}

/// The text of a `tools/call` response.
pub fn result_text(response: &Value) -> String {
    response["result"]["content"]
        .as_array()
        .map(|c| {
            c.iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// Waits (at most 30 s) until `check` holds.
pub fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(30);
    while !check() {
        assert!(Instant::now() < until, "never: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts `exec sleep N` in the background in `session`; returns N.
pub fn start_job(server: &Server, session: &str, extra: &[&str], id: u64) -> String {
    let n = unique();
    let response = server.call(
        session,
        extra,
        id,
        "bash",
        json!({"command": format!("exec sleep {n}"), "run_in_background": true}),
    );
    assert!(
        result_text(&response).contains("Started background job"),
        "{response:#}"
    );
    eventually("the job runs", || !alive_with_arg(&n).is_empty());
    n
}

/// Whether `path` exists.
pub fn exists(path: &Path) -> bool {
    path.exists()
}
