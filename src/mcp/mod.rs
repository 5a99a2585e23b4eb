//! `agentcore mcp`: the built-in tools as an MCP server (rmcp), on stdio
//! ([`serve`]) or streamable HTTP ([`http::serve_http`], `agentcore mcp
//! --http ADDR[:PORT]`).
//!
//! One connection (stdio) or one MCP session id (HTTP) is one [`Session`]:
//! one workspace, one read-before-write ledger, one approval engine, one
//! scheduler, served by one [`McpServer`]. Both transports build the
//! session from the same configuration (the CLI's `mcp_session_config`:
//! the options', breaker off) and end it the same way (calls aborted and
//! awaited, background jobs killed, mounted MCP servers closed, the output
//! folder removed). Every `tools/call` goes
//! through that scheduler and pipeline, so it is coerced, validated, gated
//! and reported exactly as in `agentcore run`:
//!
//! - `tools/list` gives each tool's name, description, input schema and
//!   annotations from its capabilities at default arguments
//!   ([`tool_definitions`]).
//! - A call's result carries `isError`; an unknown tool name is a result
//!   too (`tool "X" not found`), not a protocol error.
//! - Requests in flight at the same time are admitted in the order they
//!   arrived, like the calls of one turn: safe ones side by side, unsafe
//!   ones alone.
//! - Tool progress becomes `notifications/progress` when the request
//!   carried `_meta.progressToken`.
//! - An "ask" of the approval engine goes to the person through
//!   `elicitation/create` when the client declared elicitation (form
//!   mode) in `initialize`: allow once, allow for this session, or deny,
//!   with a timeout ([`SessionConfig::ask_timeout`], `--ask-timeout`)
//!   after which it is a deny. A client without elicitation gets today's
//!   `approval required: ` deny, saying the client cannot ask.
//! - `notifications/cancelled` cancels the call; bash kills its process
//!   group.
//! - A background job's end is a logging message (`notifications/message`,
//!   level `info`, logger `agentcore.jobs`, data `{"type": "job_exit",
//!   "job_id", "status", "command"}`); `logging/setLevel` above `info`
//!   turns them off.
//! - When the connection closes (or [`serve_until`]'s stop fires), the
//!   session's background jobs are killed and awaited.
//!
//! Over HTTP (see [`http`]) the endpoint is `/mcp`, with `GET /healthz`
//! beside it. A session also ends when the client DELETEs it, when it is
//! idle longer than `--idle-timeout` (default 30 minutes) and on SIGTERM,
//! SIGINT or SIGHUP (then every session ends before the exit). Loopback by
//! default; any other address needs a bearer token (`--token-file`,
//! `AGENTCORE_MCP_TOKEN`), checked in constant time on every request (401);
//! a browser `Origin` must be loopback or `--allow-origin` (403); bodies
//! are capped (`--max-body-bytes`, 413) and so are open sessions
//! (`--max-sessions`, 503). Requests of one HTTP session are not put in
//! arrival order as stdio's are (each POST is its own stream).
//!
//! ```no_run
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! use agentcore::session::{Session, SessionConfig};
//!
//! let session = Session::start(SessionConfig::new("."))?;
//! let (reader, writer) = (tokio::io::stdin(), tokio::io::stdout());
//! agentcore::mcp::serve(session, reader, writer).await?;
//! # Ok(())
//! # }
//! ```
//!
//! [`SessionConfig::ask_timeout`]: crate::session::SessionConfig::ask_timeout

mod arrival;
pub mod client;
mod definitions;
mod elicit;
pub mod http;
mod server;
pub(crate) mod stdio;

use std::time::Duration;

use rmcp::service::ServerInitializeError;
use tokio::io::{AsyncRead, AsyncWrite};

pub use definitions::tool_definitions;
pub use server::McpServer;

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
