//! Issue 32, item 4: a mounted server that answers with more than the
//! transport's bound (16 MiB, the same as a line of `agentcore run`'s
//! input) fails that one call with a message naming the bound and what to
//! do, and the server's other calls go on working: over stdio (a line of
//! about 20 MB) and over streamable HTTP (a JSON body and an event stream).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::cli::{self, end, text, turn};

const FAKE_STDIO: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/mcp_client/fake_server.py"
);
const FAKE_HTTP: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/mcp_client/http_server.py"
);

/// About 20 MB of text: over the 16 MiB bound once framed.
const LINES_OVER_THE_BOUND: u64 = 1_500_000;

/// The fake HTTP server, killed when dropped.
struct HttpServer {
    child: Child,
    port: u16,
}

impl HttpServer {
    fn start(dir: &Path) -> Self {
        let port_file = dir.join("port");
        let child = Command::new("python3")
            .arg(FAKE_HTTP)
            .arg(&port_file)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 runs");
        let deadline = Instant::now() + Duration::from_secs(20);
        let port = loop {
            if let Ok(port) = std::fs::read_to_string(&port_file) {
                break port.trim().parse().expect("a port number");
            }
            assert!(Instant::now() < deadline, "the HTTP server did not start");
            std::thread::sleep(Duration::from_millis(20));
        };
        Self { child, port }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs one session with `entry` as its only mounted server "big": a
/// flood over the bound (`extra` added to its arguments), then an echo.
fn flood_then_echo(entry: &str, extra: serde_json::Value) -> (String, String) {
    let work = tempfile::tempdir().unwrap();
    let etc = tempfile::tempdir().unwrap();
    let policy = etc.path().join("policy.toml");
    std::fs::write(&policy, format!("allow = [\"mcp__big__*\"]\n{entry}")).unwrap();
    let mut args = json!({"n": LINES_OVER_THE_BOUND});
    if let (Some(args), Some(extra)) = (args.as_object_mut(), extra.as_object()) {
        args.extend(extra.clone());
    }
    let input = turn(&[("f", "mcp__big__flood", args)])
        + &turn(&[("e", "mcp__big__echo", json!({"text": "still here"}))]);
    let output = cli::agentcore_run(
        work.path(),
        "jsonl",
        &["--policy", policy.to_str().unwrap()],
        &input,
    );
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    let events = cli::events(&output);
    let flood = end(&events, "f");
    assert_eq!(flood["outcome"], "failed", "{flood:#} {stderr}");
    let echo = end(&events, "e");
    assert_eq!(echo["outcome"], "success", "{echo:#} {stderr}");
    assert!(text(echo).ends_with("still here"), "{echo:#}");
    (text(flood).to_owned(), stderr)
}

#[test]
fn a_stdio_answer_over_the_bound_fails_that_call_with_its_size() {
    let entry = format!(
        "[[mcp_servers]]\nname = \"big\"\ncommand = \"python3\"\nargs = {}\n",
        json!([FAKE_STDIO, "normal"])
    );
    let (message, stderr) = flood_then_echo(&entry, json!({}));
    assert!(
        message.starts_with("MCP server \"big\" answered with a message of "),
        "{message} {stderr}"
    );
    assert!(
        message.contains("bytes, over the limit of 16777216 bytes (16 MiB) a message may have, so the answer was dropped; ask for less"),
        "{message}"
    );
}

#[test]
fn an_http_answer_over_the_bound_fails_that_call_at_once_with_the_bound() {
    let dir = tempfile::tempdir().unwrap();
    let server = HttpServer::start(dir.path());
    let entry = format!(
        "[[mcp_servers]]\nname = \"big\"\nurl = \"http://127.0.0.1:{}/mcp\"\n",
        server.port
    );
    let (message, stderr) = flood_then_echo(&entry, json!({}));
    assert_eq!(
        message,
        "MCP server \"big\" answered with more than 16777216 bytes (16 MiB), the most an answer \
         may have, so the answer was dropped; ask for less (a narrower query, a smaller page) or \
         use another tool",
        "{stderr}"
    );
}

#[test]
fn an_http_event_over_the_bound_fails_that_call_and_the_server_stays_mounted() {
    let dir = tempfile::tempdir().unwrap();
    let server = HttpServer::start(dir.path());
    let entry = format!(
        "[[mcp_servers]]\nname = \"big\"\nurl = \"http://127.0.0.1:{}/mcp\"\n",
        server.port
    );
    let (message, stderr) = flood_then_echo(&entry, json!({"sse": true}));
    assert!(
        message.starts_with("MCP server \"big\" sent no answer to this call: the stream that was to carry it ended or broke first (an answer over 16777216 bytes (16 MiB)"),
        "{message} {stderr}"
    );
    assert!(
        message.contains("The server is still connected"),
        "{message}"
    );
}
