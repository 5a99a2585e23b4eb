//! Issue 27 item 1: the HTTP face serves protocol 2026-07-28, which has no
//! `initialize` and no session: Claude Code sends `server/discover` and
//! then `tools/list` (and `tools/call`) each on its own, with the version
//! in the `MCP-Protocol-Version` header and the request's `_meta`. Every
//! such request of the server's clients goes to one agentcore session,
//! started by the first and ended once idle, so the read-before-write
//! ledger holds from one request to the next.

use serde_json::{Value, json};

use crate::support::http::{Reply, Server, result_text, running};

const VERSION: &str = "2026-07-28";

/// The `_meta` a 2026-07-28 client puts on every request.
fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "claude-code", "version": "2.1.328"},
    })
}

/// One stateless request, as Claude Code sends it: no session id, the
/// version, the method (and a tool call's tool) in headers too.
fn request(server: &Server, id: u64, method: &str, mut params: Value) -> Value {
    params["_meta"] = meta();
    let method_header = format!("Mcp-Method: {method}");
    let name_header = params["name"]
        .as_str()
        .map(|name| format!("Mcp-Name: {name}"));
    let mut headers = vec![
        "MCP-Protocol-Version: 2026-07-28",
        "Authorization: Bearer 0123456789abcdef0123456789abcdef",
        method_header.as_str(),
    ];
    headers.extend(name_header.as_deref());
    let reply: Reply = server.post(
        None,
        &headers,
        &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
    );
    assert_eq!(reply.status, 200, "{method}: {reply:?} {}", server.stderr());
    assert_eq!(reply.header("mcp-session-id"), None, "{reply:?}");
    reply
        .messages()
        .into_iter()
        .find(|m| m["id"] == id)
        .unwrap_or_else(|| panic!("no response to {method}: {reply:?}"))
}

fn with_token(extra: &[&str]) -> Server {
    running(
        "127.0.0.1:0",
        extra,
        &[("AGENTCORE_MCP_TOKEN", "0123456789abcdef0123456789abcdef")],
    )
}

#[test]
fn discover_then_tools_list_without_initialize_lists_the_tools() {
    let server = with_token(&[]);
    let discovered = request(&server, 1, "server/discover", json!({}));
    let versions = discovered["result"]["supportedVersions"]
        .as_array()
        .unwrap_or_else(|| panic!("{discovered:#}"));
    assert!(versions.iter().any(|v| v == VERSION), "{discovered:#}");
    let listed = request(&server, 2, "tools/list", json!({}));
    let tools: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed:#}"))
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for name in ["read", "edit", "bash"] {
        assert!(tools.contains(&name), "{name} missing: {tools:?}");
    }
}

#[test]
fn the_ledger_holds_across_stateless_requests_until_the_session_idles_out() {
    let server = with_token(&["--idle-timeout", "1"]);
    std::fs::write(server.root.path().join("a.txt"), "alpha\n").unwrap();
    let call = |id, tool: &str, args: Value| {
        request(
            &server,
            id,
            "tools/call",
            json!({"name": tool, "arguments": args}),
        )
    };
    let read = call(1, "read", json!({"file_path": "a.txt"}));
    assert!(result_text(&read).contains("alpha"), "{read:#}");
    // The read of the request before counts: the edit lands.
    let edit = json!({"file_path": "a.txt", "old_string": "alpha", "new_string": "beta"});
    let edited = call(2, "edit", edit);
    assert_eq!(edited["result"]["isError"], false, "{edited:#}");
    assert_eq!(
        std::fs::read_to_string(server.root.path().join("a.txt")).unwrap(),
        "beta\n"
    );
    assert_eq!(
        server.output_dirs(),
        1,
        "one session for the stateless requests"
    );
    // Idle past the timeout, the session ends (its output folder goes);
    // the next request starts a new one, which has read nothing.
    std::thread::sleep(std::time::Duration::from_millis(3_000));
    assert_eq!(server.output_dirs(), 0, "the idle session did not end");
    let edit = json!({"file_path": "a.txt", "old_string": "beta", "new_string": "gamma"});
    let refused = call(3, "edit", edit);
    assert_eq!(refused["result"]["isError"], true, "{refused:#}");
    assert!(
        result_text(&refused).contains("read"),
        "{}",
        result_text(&refused)
    );
}

#[test]
fn a_stateless_request_without_the_token_is_refused() {
    let server = with_token(&[]);
    let mut params = json!({});
    params["_meta"] = meta();
    let reply = server.post(
        None,
        &["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/list"],
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params}),
    );
    assert_eq!(reply.status, 401, "{reply:?}");
}

/// The real Claude Code: `claude mcp add --transport http` with the token,
/// then `claude mcp list`, which connects and fetches the tools without a
/// model. `.ci/run` installs it (`@anthropic-ai/claude-code` from npm);
/// run without `claude` on PATH, the test fails saying so.
#[test]
#[ignore = "needs the claude binary (Claude Code) on PATH"]
fn claude_code_connects_over_http_and_fetches_the_tools() {
    let claude = which("claude").unwrap_or_else(|| {
        panic!(
            "this test needs the claude binary on PATH, and there is none \
             (npm install -g @anthropic-ai/claude-code)"
        )
    });
    let server = with_token(&[]);
    let home = tempfile::tempdir().unwrap();
    let url = format!("http://{}/mcp", server.connect);
    let run = |args: &[&str]| {
        std::process::Command::new(&claude)
            .args(args)
            .current_dir(server.root.path())
            .env("HOME", home.path())
            .env_remove("ANTHROPIC_API_KEY")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run claude")
    };
    let added = run(&[
        "mcp",
        "add",
        "--transport",
        "http",
        "agentcore",
        &url,
        "-H",
        "Authorization: Bearer 0123456789abcdef0123456789abcdef",
    ]);
    assert!(added.status.success(), "{added:?}");
    let listed = run(&["mcp", "list"]);
    let text = String::from_utf8_lossy(&listed.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("agentcore:"))
        .unwrap_or_else(|| panic!("{listed:?}"));
    assert!(line.ends_with("Connected"), "{line}");
    assert!(!line.contains("failed"), "{line}");
}

fn which(program: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|dir| std::path::Path::new(dir).join(program))
        .find(|p| p.is_file())
}
