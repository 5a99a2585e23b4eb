//! Serving a session over one stdio connection, and ending it.

use std::time::Duration;

use rmcp::service::ServerInitializeError;
use tokio::io::{AsyncRead, AsyncWrite};

use super::arrival;
use super::server::McpServer;
use super::stdio;
use crate::session::Session;

/// How long a closing server waits for aborted calls to end.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// Why serving a connection failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The MCP handshake did not complete.
    #[error("the MCP handshake failed: {0}")]
    Initialize(Box<ServerInitializeError>),
    /// The task serving the connection failed.
    #[error("the MCP server stopped unexpectedly: {0}")]
    Join(#[from] tokio::task::JoinError),
}

/// Serves `session`'s tools over MCP on one connection (newline-delimited
/// JSON-RPC read from `reader`, written to `writer`) until the client
/// closes it. Calls still running then are aborted and awaited (a few
/// seconds at most).
///
/// Every message gets an answer: a line that is not UTF-8, not JSON, nested
/// more than 128 levels deep, longer than 16 MiB or not a JSON-RPC 2.0
/// message gets the JSON-RPC error for it (`-32700` parse error with
/// `"id": null`, `-32600` invalid request), and the connection goes on. A
/// request reusing the id of a request in flight, and a second
/// `initialize`, get `-32600`; a standard method with params of the wrong
/// shape (`tools/call` without `params`, or with `arguments` that are not
/// an object) gets `-32602`.
///
/// A client that disconnects before `initialize` is a normal end. The
/// session's breaker applies as configured; `agentcore mcp` turns it off.
pub async fn serve<R, W>(session: Session, reader: R, writer: W) -> Result<(), ServeError>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    serve_until(session, reader, writer, std::future::pending()).await
}

/// [`serve`] until the client closes the connection or `stop` completes
/// (`agentcore mcp` passes SIGTERM, SIGINT and SIGHUP), whichever comes
/// first. Either way the session ends: calls still running are aborted and
/// awaited, and its background jobs are killed and awaited.
pub async fn serve_until<R, W, F>(
    session: Session,
    reader: R,
    writer: W,
    stop: F,
) -> Result<(), ServeError>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
    F: Future<Output = ()>,
{
    let server = McpServer::new(session);
    let transport = arrival::InArrivalOrder::new(
        stdio::Framed::new(reader, writer),
        server.arrivals().clone(),
    );
    let serving = async {
        match rmcp::serve_server(server.clone(), transport).await {
            Ok(running) => running.waiting().await.map(drop).map_err(ServeError::from),
            Err(ServerInitializeError::ConnectionClosed(_)) => Ok(()),
            Err(err) => Err(ServeError::Initialize(Box::new(err))),
        }
    };
    // A stop drops the connection's service (its drop cancels it).
    let outcome = tokio::select! {
        outcome = serving => outcome,
        () = stop => Ok(()),
    };
    end_session(&server).await;
    outcome
}

/// Ends the session `server` serves, as the end of a connection does (stdio
/// or an MCP session over HTTP): calls still running are aborted and
/// awaited (a few seconds at most), background jobs killed and awaited,
/// mounted MCP servers closed.
pub(crate) async fn end_session(server: &McpServer) {
    server.session().scheduler().abort_all();
    server.drain(DRAIN_TIMEOUT).await;
    server.unbind_approver();
    server.session().end_jobs().await;
    server.session().end_mcp().await;
}
