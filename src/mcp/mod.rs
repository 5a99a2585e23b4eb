//! `agentcore mcp`: the built-in tools as an MCP server (rmcp), on stdio
//! ([`serve`]) or streamable HTTP ([`http::serve_http`], `agentcore mcp
//! --http ADDR[:PORT]`).
//!
//! One connection (stdio) or one MCP session id (HTTP) is one [`Session`](crate::session::Session):
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

#[cfg(feature = "mcp-server")]
mod arrival;
#[cfg(feature = "mcp-client")]
pub mod client;
#[cfg(feature = "mcp-server")]
mod definitions;
#[cfg(feature = "mcp-server")]
mod elicit;
#[cfg(feature = "mcp-http")]
pub mod http;
#[cfg(feature = "mcp-server")]
mod serve;
#[cfg(feature = "mcp-server")]
mod server;
#[cfg(feature = "mcp-server")]
pub(crate) mod stdio;

#[cfg(feature = "mcp-server")]
pub use definitions::tool_definitions;
#[cfg(feature = "mcp-http")]
pub(crate) use serve::end_session;
#[cfg(feature = "mcp-server")]
pub use serve::{ServeError, serve, serve_until};
#[cfg(feature = "mcp-server")]
pub use server::McpServer;
