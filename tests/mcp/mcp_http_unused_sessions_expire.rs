//! An HTTP session whose client initialized and never made another request
//! (only notifications) ends once idle for `HttpOptions::unused_timeout`
//! (`UNUSED_SESSION_TIMEOUT`, 60 s, in `agentcore mcp --http`; a second
//! here); a session that made a request stays until its idle timeout.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use agentcore::mcp::http::{HttpOptions, SessionFactory, UNUSED_SESSION_TIMEOUT, serve_http};
use agentcore::session::{Session, SessionConfig};
use serde_json::{Value, json};

use crate::support::http;

fn post(addr: SocketAddr, session: Option<&str>, message: &Value) -> http::Reply {
    let body = message.to_string();
    let sid = session
        .map(|id| format!("Mcp-Session-Id: {id}\r\nMCP-Protocol-Version: 2025-06-18\r\n"))
        .unwrap_or_default();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{sid}Content-Length: {}\r\n\r\n",
        body.len()
    );
    http::send(addr, head.as_bytes(), body.as_bytes())
}

fn open(addr: SocketAddr) -> String {
    let reply = post(addr, None, &http::initialize());
    assert_eq!(reply.status, 200, "{reply:?}");
    let id = reply.header("mcp-session-id").unwrap().to_owned();
    let done = post(
        addr,
        Some(&id),
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    assert_eq!(done.status, 202, "{done:?}");
    id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_that_never_came_back_after_initialize_expires() {
    assert_eq!(UNUSED_SESSION_TIMEOUT, Duration::from_secs(60));
    let root = tempfile::tempdir().unwrap();
    let path = root.path().to_owned();
    let factory: SessionFactory = Arc::new(move || {
        let path = path.clone();
        Box::pin(async move {
            let mut config = SessionConfig::new(path);
            config.mode = Some(agentcore::approval::Mode::Bypass);
            Session::connect(config).await.map_err(|e| e.to_string())
        })
    });
    let mut options = HttpOptions::default();
    options.unused_timeout = Duration::from_secs(1);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve_http(listener, options, factory, async move {
        let _ = stopped.await;
    }));
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let (gone, kept) = tokio::task::spawn_blocking(move || {
        let unused = open(addr);
        let used = open(addr);
        assert_eq!(post(addr, Some(&used), &list).status, 200);
        std::thread::sleep(Duration::from_millis(2_500));
        (
            post(addr, Some(&unused), &list).status,
            post(addr, Some(&used), &list).status,
        )
    })
    .await
    .unwrap();
    assert_eq!(gone, 404, "the unused session is still open");
    assert_eq!(kept, 200, "a session that made a request was ended");
    let _ = stop.send(());
    server.await.unwrap().unwrap();
}
