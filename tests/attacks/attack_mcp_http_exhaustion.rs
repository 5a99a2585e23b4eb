//! `agentcore mcp --http` cannot be exhausted: connections that send half
//! their headers are capped and displaced (a good client still gets its
//! answer at once), a request head must arrive within the header timeout,
//! one-shot clients that never DELETE do not fill `--max-sessions` (the
//! session idle longest makes room, never one with a call in flight), and
//! a body that is not one JSON-RPC message gets the JSON-RPC error for it
//! with HTTP 400, not 415.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::http::{self, Server, initialize, running};
use crate::support::procs;

/// The cap the tests run the server with.
const CAP: usize = 16;

/// Opens a connection and sends half a request head.
fn half_headers(server: &Server) -> TcpStream {
    let mut stream = TcpStream::connect(server.connect).unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: appl",
        server.connect
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream
}

/// The file descriptors the server holds.
fn descriptors(server: &Server) -> usize {
    std::fs::read_dir(format!("/proc/{}/fd", server.child.id()))
        .unwrap()
        .count()
}

#[test]
fn attack_half_header_connections_above_the_cap_do_not_starve_a_good_client() {
    let cap = CAP.to_string();
    let server = running("127.0.0.1:0", &["--max-connections", &cap], &[]);
    let before = descriptors(&server);
    let mut slow = Vec::new();
    for _ in 0..CAP + 50 {
        slow.push(half_headers(&server));
    }
    std::thread::sleep(Duration::from_millis(300));
    let held = descriptors(&server);
    assert!(
        held <= before + CAP + 4,
        "{held} descriptors held with {} half-header connections (cap {CAP}, {before} before)",
        slow.len()
    );
    // A good client is answered promptly, several times over.
    for _ in 0..3 {
        let started = Instant::now();
        let reply = server.post(None, &[], &initialize());
        assert_eq!(reply.status, 200, "{reply:?}");
        assert!(reply.header("mcp-session-id").is_some(), "{reply:?}");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "initialize took {:?} beside the slow connections",
            started.elapsed()
        );
    }
    drop(slow);
}

#[test]
fn attack_a_request_head_that_never_ends_is_closed_at_the_header_timeout() {
    let server = running("127.0.0.1:0", &[], &[]);
    let mut stream = half_headers(&server);
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let started = Instant::now();
    let mut rest = Vec::new();
    let _ = stream.read_to_end(&mut rest);
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(8) && took < Duration::from_secs(14),
        "closed after {took:?} (the header timeout is 10 s)"
    );
}

/// A one-shot client, as the TypeScript SDK's: initialize, initialized,
/// tools/list, then gone without DELETE.
fn one_shot(server: &Server) -> String {
    let id = server.open(&[]);
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    assert_eq!(server.post(Some(&id), &[], &list).status, 200);
    id
}

#[test]
fn attack_one_shot_clients_that_never_delete_do_not_fill_the_sessions() {
    let server = running("127.0.0.1:0", &["--max-sessions", "2"], &[]);
    let first = one_shot(&server);
    std::thread::sleep(Duration::from_millis(300));
    let second = one_shot(&server);
    // Both were active just now: a third waits.
    let third = server.post(None, &[], &initialize());
    assert_eq!(third.status, 503, "{third:?}");
    std::thread::sleep(Duration::from_millis(5_500));
    // The session idle longest (the first) makes room, then the second.
    for _ in 0..2 {
        let reply = server.post(None, &[], &initialize());
        assert_eq!(reply.status, 200, "{reply:?} {}", server.stderr());
    }
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    assert_eq!(server.post(Some(&first), &[], &list).status, 404);
    assert_eq!(server.post(Some(&second), &[], &list).status, 404);
    // Their folders went with them.
    http::eventually("the evicted sessions' folders are removed", || {
        server.output_dirs() == 2
    });
}

#[test]
fn a_session_with_a_call_in_flight_is_never_evicted() {
    let server = running("127.0.0.1:0", &["--max-sessions", "1"], &[]);
    let busy = server.open(&[]);
    let n = procs::unique();
    let _left = procs::Leftovers(vec![n.clone()]);
    let call = {
        let connect = server.connect;
        let busy = busy.clone();
        let n = n.clone();
        std::thread::spawn(move || {
            let body = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                "params": {"name": "bash", "arguments": {"command": format!("sleep 8; echo {n}")}}})
            .to_string();
            let head = format!(
                "POST /mcp HTTP/1.1\r\nHost: {connect}\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: {busy}\r\nMCP-Protocol-Version: 2025-06-18\r\nContent-Length: {}\r\n\r\n",
                body.len()
            );
            http::send(connect, head.as_bytes(), body.as_bytes())
        })
    };
    // The call has started well before the newcomer arrives.
    std::thread::sleep(Duration::from_millis(500));
    std::thread::sleep(Duration::from_millis(5_500));
    let newcomer = server.post(None, &[], &initialize());
    assert_eq!(newcomer.status, 503, "{newcomer:?}");
    assert!(newcomer.body.contains("busy"), "{newcomer:?}");
    let reply = call.join().unwrap();
    assert!(reply.body.contains(&n), "{reply:?}");
}

/// POSTs `body` raw (as JSON) to session `id` or none; the status and the
/// JSON-RPC message answered.
fn post_raw(server: &Server, id: Option<&str>, body: &[u8]) -> (u16, Value) {
    let sid = id.map(|id| format!("Mcp-Session-Id: {id}"));
    let mut headers = vec![
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
    ];
    if let Some(sid) = &sid {
        headers.push(sid);
        headers.push("MCP-Protocol-Version: 2025-06-18");
    }
    let reply = server.raw("POST", "/mcp", &headers, body);
    let message = serde_json::from_str(&reply.body).unwrap_or(Value::Null);
    (reply.status, message)
}

#[test]
fn attack_bodies_that_are_not_one_json_rpc_message_get_json_rpc_errors_with_400() {
    let server = running("127.0.0.1:0", &[], &[]);
    let id = server.open(&[]);
    let cases: [(&[u8], i64); 8] = [
        (b"not json at all", -32700),
        (b"{\"jsonrpc\": \"2.0\", \"id\": 1, ", -32700),
        (b"", -32700),
        (b"\xff\xfe\x00", -32700),
        (
            br#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#,
            -32600,
        ),
        (b"[]", -32600),
        (b"17", -32600),
        (br#"{"jsonrpc":"1.0","id":1,"method":"tools/list"}"#, -32600),
    ];
    for session in [None, Some(id.as_str())] {
        for (body, code) in cases {
            let (status, message) = post_raw(&server, session, body);
            let shown = String::from_utf8_lossy(body);
            assert_eq!(status, 400, "{shown}: {message}");
            assert_eq!(message["jsonrpc"], "2.0", "{shown}: {message}");
            assert_eq!(message["error"]["code"], code, "{shown}: {message}");
            assert!(message.as_object().unwrap().contains_key("id"), "{message}");
        }
    }
    // tools/call with params of the wrong shape: invalid params, its id.
    let (status, message) = post_raw(
        &server,
        Some(&id),
        br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read","arguments":[1]}}"#,
    );
    assert_eq!(status, 400, "{message}");
    assert_eq!(message["error"]["code"], -32602, "{message}");
    assert_eq!(message["id"], 7, "{message}");
    // An answer whose id is not written as the server writes ids.
    let (status, message) = post_raw(
        &server,
        Some(&id),
        br#"{"jsonrpc":"2.0","id":0.0,"result":{}}"#,
    );
    assert_eq!(status, 400, "{message}");
    // Nothing opened a session, and the session goes on.
    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
    assert_eq!(server.post(Some(&id), &[], &list).status, 200);
    assert_eq!(server.output_dirs(), 1);
}
