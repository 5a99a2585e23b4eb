//! `agentcore mcp --http` as the MCP specification asks of HTTP servers:
//! loopback by default, a bearer token required off loopback and checked
//! exactly on every request, `Origin` validated, bodies and sessions
//! capped, `/healthz` open and telling nothing.

use serde_json::json;

use crate::support::http::{self, Server, Started, TOKEN, initialize, running, start};

fn off_loopback() -> Server {
    running("0.0.0.0:0", &[], &[("AGENTCORE_MCP_TOKEN", TOKEN)])
}

#[test]
fn off_loopback_without_a_token_the_server_refuses_to_start() {
    for bind in ["0.0.0.0:0", "[::]:0"] {
        match start(bind, &[], &[]) {
            Started::Ended(status, stderr) => {
                assert_eq!(status.code(), Some(2), "{stderr}");
                assert!(stderr.contains("needs a bearer token"), "{stderr}");
                assert!(stderr.contains("--token-file"), "{stderr}");
                assert!(!stderr.contains("listening"), "{stderr}");
            }
            Started::Running(_) => panic!("{bind} served without a token"),
        }
    }
}

#[test]
fn a_short_token_or_two_tokens_are_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("token");
    std::fs::write(&file, "short\n").unwrap();
    let file = file.to_str().unwrap();
    for (extra, env, expected) in [
        (vec!["--token-file", file], vec![], "at least 16"),
        (vec![], vec![("AGENTCORE_MCP_TOKEN", "tiny")], "at least 16"),
        (
            vec!["--token-file", file],
            vec![("AGENTCORE_MCP_TOKEN", TOKEN)],
            "give one of them",
        ),
        (
            vec!["--token-file", "/nonexistent/token"],
            vec![],
            "cannot read",
        ),
        (
            vec![],
            vec![("AGENTCORE_MCP_TOKEN", "with a space 0123456789")],
            "character",
        ),
    ] {
        match start("0.0.0.0:0", &extra, &env) {
            Started::Ended(status, stderr) => {
                assert_eq!(status.code(), Some(2), "{stderr}");
                assert!(stderr.contains(expected), "{expected}: {stderr}");
                assert!(!stderr.contains(TOKEN), "the token is not echoed: {stderr}");
            }
            Started::Running(_) => panic!("started with {extra:?} {env:?}"),
        }
    }
}

#[test]
fn a_token_file_is_read_and_enforced_on_loopback_too() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("token");
    std::fs::write(&file, format!("{TOKEN}\n")).unwrap();
    let server = running(
        "127.0.0.1:0",
        &["--token-file", file.to_str().unwrap()],
        &[],
    );
    assert_eq!(server.post(None, &[], &initialize()).status, 401);
    let auth = format!("Authorization: Bearer {TOKEN}");
    server.open(&[&auth]);
}

#[test]
fn off_loopback_every_request_needs_exactly_the_token() {
    let server = off_loopback();
    assert!(server.addr.ip().is_unspecified());
    let good = format!("Authorization: Bearer {TOKEN}");
    let refused = [
        vec![],
        vec!["Authorization: Bearer wrong-token-0123456789".to_owned()],
        vec![format!(
            "Authorization: Bearer {}",
            &TOKEN[..TOKEN.len() - 1]
        )],
        vec![format!("Authorization: Bearer {TOKEN}x")],
        vec![format!("Authorization: Bearer  {TOKEN}")],
        vec![format!("Authorization: Basic {TOKEN}")],
        vec![format!("Authorization: {TOKEN}")],
        vec![format!("Authorization: Bearer{TOKEN}")],
        vec![format!("X-Authorization: Bearer {TOKEN}")],
        // Two Authorization headers, even one or both right.
        vec![good.clone(), good.clone()],
        vec![
            "Authorization: Bearer wrong-token-0123456789".to_owned(),
            good.clone(),
        ],
        vec![
            good.clone(),
            "Authorization: Bearer wrong-token-0123456789".to_owned(),
        ],
    ];
    for headers in &refused {
        let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
        let reply = server.post(None, &headers, &initialize());
        assert_eq!(reply.status, 401, "{headers:?}: {reply:?}");
        assert_eq!(
            reply.header("www-authenticate"),
            Some("Bearer"),
            "{reply:?}"
        );
        assert!(reply.header("mcp-session-id").is_none());
        assert!(!reply.body.contains(TOKEN));
    }
    // Header names are case-insensitive, and so is the scheme.
    for header in [
        format!("authorization: Bearer {TOKEN}"),
        format!("AUTHORIZATION: bearer {TOKEN}"),
    ] {
        server.open(&[&header]);
    }
    // Every request, not only the first: an open session's requests and
    // its DELETE need the token too.
    let id = server.open(&[&good]);
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    assert_eq!(server.post(Some(&id), &[], &list).status, 401);
    assert_eq!(server.delete(&id, &[]).status, 401);
    let get = server.raw(
        "GET",
        "/mcp",
        &[
            "Accept: text/event-stream",
            &format!("Mcp-Session-Id: {id}"),
        ],
        b"",
    );
    assert_eq!(get.status, 401);
    assert_eq!(server.post(Some(&id), &[&good], &list).status, 200);
    assert_eq!(server.delete(&id, &[&good]).status, 200);
}

#[test]
fn healthz_answers_without_a_token_and_tells_nothing() {
    let server = off_loopback();
    let reply = server.raw("GET", "/healthz", &[], b"");
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.body, "ok\n");
    let root = server.root.path().to_string_lossy().into_owned();
    assert!(!reply.body.contains(TOKEN) && !reply.body.contains(&root));
    // Any other path is not found, token or not.
    let auth = format!("Authorization: Bearer {TOKEN}");
    assert_eq!(server.raw("GET", "/", &[&auth], b"").status, 404);
    assert_eq!(server.raw("GET", "/mcp/../healthz", &[], b"").status, 404);
}

#[test]
fn a_foreign_origin_is_forbidden_loopback_and_listed_ones_pass() {
    let server = running(
        "127.0.0.1:0",
        &["--allow-origin", "https://app.example.com"],
        &[],
    );
    for origin in [
        "null",
        "http://localhost.evil.com",
        "http://127.0.0.1.nip.io",
        "https://evil.example",
        "https://app.example.com.evil.com",
        "http://app.example.com",
        "https://app.example.com:8443",
        "http://localhost@evil.com",
        "file://",
    ] {
        let header = format!("Origin: {origin}");
        let reply = server.post(None, &[&header], &initialize());
        assert_eq!(reply.status, 403, "{origin}: {reply:?}");
        assert!(reply.header("mcp-session-id").is_none());
    }
    let two = server.post(
        None,
        &["Origin: http://localhost", "Origin: https://evil.example"],
        &initialize(),
    );
    assert_eq!(two.status, 403, "{two:?}");
    for origin in [
        "http://localhost:5173",
        "http://127.0.0.1",
        "http://[::1]:3000",
        "https://app.example.com",
    ] {
        let header = format!("Origin: {origin}");
        server.open(&[&header]);
    }
    // An open session's requests are checked too.
    let id = server.open(&[]);
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    assert_eq!(
        server
            .post(Some(&id), &["Origin: https://evil.example"], &list)
            .status,
        403
    );
}

#[test]
fn the_host_header_must_name_loopback_when_bound_there() {
    let server = running("127.0.0.1:0", &[], &[]);
    let body = initialize().to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: rebound.evil.com\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let reply = http::send(server.connect, head.as_bytes(), body.as_bytes());
    assert_eq!(reply.status, 403, "{reply:?}");
}

#[test]
fn oversize_bodies_are_refused_declared_or_chunked() {
    let server = running("127.0.0.1:0", &["--max-body-bytes", "4096"], &[]);
    let id = server.open(&[]);
    let big = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "write", "arguments": {"file_path": "big.txt", "content": "x".repeat(8192)}}});
    let declared = server.post(Some(&id), &[], &big);
    assert_eq!(declared.status, 413, "{declared:?}");

    // Chunked, no Content-Length: counted while read.
    let body = big.to_string();
    let mut chunked = Vec::new();
    for piece in body.as_bytes().chunks(1000) {
        chunked.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        chunked.extend_from_slice(piece);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let sid = format!("Mcp-Session-Id: {id}");
    let reply = server.raw(
        "POST",
        "/mcp",
        &[
            "Content-Type: application/json",
            "Accept: application/json, text/event-stream",
            "MCP-Protocol-Version: 2025-06-18",
            &sid,
            "Transfer-Encoding: chunked",
        ],
        &chunked,
    );
    assert_eq!(reply.status, 413, "{reply:?}");
    assert!(!server.root.path().join("big.txt").exists());
    // A Content-Length beyond the cap is refused before the body is read.
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{sid}\r\nContent-Length: 99999999999\r\n\r\n",
        server.connect
    );
    let lying = http::send(server.connect, head.as_bytes(), b"{}");
    assert_eq!(lying.status, 413, "{lying:?}");
    // The session goes on.
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    assert_eq!(server.post(Some(&id), &[], &list).status, 200);
}

#[test]
fn sessions_beyond_the_cap_get_503_open_ones_go_on() {
    let server = running("127.0.0.1:0", &["--max-sessions", "2"], &[]);
    let one = server.open(&[]);
    let two = server.open(&[]);
    let third = server.post(None, &[], &initialize());
    assert_eq!(third.status, 503, "{third:?}");
    assert!(third.body.contains("--max-sessions"), "{third:?}");
    assert!(third.header("mcp-session-id").is_none());
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    assert_eq!(server.post(Some(&one), &[], &list).status, 200);
    assert_eq!(server.post(Some(&two), &[], &list).status, 200);
    // Ending one makes room.
    assert_eq!(server.delete(&one, &[]).status, 200);
    let again = server.open(&[]);
    assert_ne!(again, one);
    assert_eq!(server.output_dirs(), 2);
}

#[test]
fn a_session_id_that_is_not_one_visible_ascii_value_is_refused_and_opens_nothing() {
    let server = running("127.0.0.1:0", &["--max-sessions", "1"], &[]);
    let first = server.open(&[]);
    let body = initialize().to_string();
    let ask = |ids: &[&[u8]]| {
        let mut head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            server.connect,
            body.len()
        )
        .into_bytes();
        for id in ids {
            head.extend_from_slice(b"Mcp-Session-Id: ");
            head.extend_from_slice(id);
            head.extend_from_slice(b"\r\n");
        }
        head.extend_from_slice(b"\r\n");
        http::send(server.connect, &head, body.as_bytes())
    };
    // rmcp would read these as no id at all and open a session past the cap.
    for ids in [
        vec![&b"\xff"[..]],
        vec![&b"caf\xc3\xa9"[..]],
        vec![first.as_bytes(), b"\xff"],
        vec![first.as_bytes(), first.as_bytes()],
    ] {
        for _ in 0..3 {
            let reply = ask(&ids);
            assert_eq!(reply.status, 400, "{ids:?}: {reply:?}");
            assert!(reply.header("mcp-session-id").is_none(), "{reply:?}");
        }
    }
    // The cap still holds: the one open session is all there is.
    assert_eq!(server.post(None, &[], &initialize()).status, 503);
}

#[test]
fn loopback_without_a_token_is_refused_when_commands_may_use_the_network() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.toml");
    std::fs::write(&policy, "[sandbox]\nnetwork = true\n").unwrap();
    let policy = policy.to_str().unwrap();
    match start("127.0.0.1:0", &["--policy", policy], &[]) {
        Started::Ended(status, stderr) => {
            assert_eq!(status.code(), Some(2), "{stderr}");
            assert!(
                stderr.contains("answer its own approval questions"),
                "{stderr}"
            );
            assert!(stderr.contains("--token-file"), "{stderr}");
        }
        Started::Running(_) => panic!("served on loopback without a token to networked commands"),
    }
    // With a token it serves.
    let server = running(
        "127.0.0.1:0",
        &["--policy", policy],
        &[("AGENTCORE_MCP_TOKEN", TOKEN)],
    );
    assert_eq!(server.post(None, &[], &initialize()).status, 401);
}
