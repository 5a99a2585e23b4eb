//! `agentcore mcp --http`: the built-in tools over MCP streamable HTTP.
//!
//! rmcp's streamable-HTTP service, mounted in axum at `/mcp`, with one
//! agentcore [`Session`](crate::session::Session) (ledger, jobs, breaker
//! settings) per MCP session id. Each is served by the same
//! [`McpServer`](super::McpServer) as stdio, started by the caller's
//! [`SessionFactory`] when the client sends `initialize`. A session that the
//! client DELETEs, that stays idle (no message either way) longer than
//! [`HttpOptions::idle_timeout`], or that is open when the server stops,
//! ends like a stdio session: calls aborted and awaited, background jobs
//! killed, mounted MCP servers closed, its output folder removed.
//!
//! Every request to `/mcp`, before rmcp sees it:
//!
//! 1. `Origin`, when present, must be a loopback origin or one of
//!    [`HttpOptions::allowed_origins`] (403 otherwise);
//! 2. with a [`BearerToken`], exactly one `Authorization: Bearer TOKEN`
//!    (compared in constant time; 401 with `WWW-Authenticate: Bearer`
//!    otherwise);
//! 3. a body longer than [`HttpOptions::max_body_bytes`] is refused (413),
//!    whether it gives a `Content-Length` or is chunked;
//! 4. a POST's body is read (within [`BODY_TIMEOUT`], 408 past it) and,
//!    when it is not one JSON-RPC message rmcp can take, answered with 400
//!    and the JSON-RPC error for it (`-32700` parse error, `-32600`
//!    invalid request for a batch or a non-message, `-32602` invalid
//!    params), where rmcp would answer 415 with a line of text;
//! 5. a request that would open a session (a POST without
//!    `Mcp-Session-Id`) while [`HttpOptions::max_sessions`] are open ends
//!    the session idle longest, if one has been idle [`EVICT_AFTER_IDLE`]
//!    with no request being answered and no call running; else it gets
//!    503. Requests of open sessions go on.
//!
//! A session that made no request after `initialize` ends once idle
//! [`HttpOptions::unused_timeout`] ([`UNUSED_SESSION_TIMEOUT`]).
//! Connections are served by hyper with a cap, a header-read timeout and
//! limits on the request head (see [`HEADER_TIMEOUT`],
//! [`HttpOptions::max_connections`]).
//!
//! A DELETE is answered (200) once the session has ended.
//!
//! `GET /healthz` answers `ok` (503 `stopping` once shutdown began),
//! without a token. When bound to loopback, rmcp also checks the `Host`
//! header against loopback names (DNS rebinding); off loopback the token
//! is required ([`HttpOptions::validate`]) and the `Host` is not checked.

mod guard;
mod listen;
mod sessions;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use http::{HeaderValue, Method, StatusCode, header};
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, SessionConfig};
use rmcp::transport::streamable_http_server::{SessionId, SessionManager};
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

pub use guard::{BearerToken, MIN_TOKEN_LEN, Origin, TokenError, origin_allowed};
pub use listen::{HEADER_TIMEOUT, MAX_BUF, MAX_HEADERS};
pub use sessions::SessionFactory;

use sessions::{HttpSession, Live, Sessions};

/// How long a stopping server waits for its connections to close before
/// it ends the sessions regardless.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// The default cap on open connections: well under the usual limit of
/// 1,024 file descriptors, leaving room for sessions' files and commands.
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;

/// A session active this recently is not evicted to make room for a new
/// one: its client is most likely between two requests.
pub const EVICT_AFTER_IDLE: Duration = Duration::from_secs(5);

/// A session that made no request after `initialize` (only notifications)
/// ends once idle this long: a client that initialized and went away.
pub const UNUSED_SESSION_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a request body may take to arrive.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// The header carrying the MCP session id.
const SESSION_ID: &str = "mcp-session-id";

/// How `agentcore mcp --http` serves.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HttpOptions {
    /// The token every `/mcp` request must carry; required off loopback.
    pub token: Option<BearerToken>,
    /// Browser origins accepted besides loopback ones.
    pub allowed_origins: Vec<Origin>,
    /// A session with no message either way for this long ends.
    pub idle_timeout: Duration,
    /// The largest request body accepted.
    pub max_body_bytes: usize,
    /// The most MCP sessions open at once.
    pub max_sessions: usize,
    /// The most connections open at once; at the cap a new one closes the
    /// connection that has waited longest for a request's headers.
    pub max_connections: usize,
    /// How long a connection may take to send a request's headers.
    pub header_timeout: Duration,
    /// A session that made no request after `initialize` ends once idle
    /// this long ([`UNUSED_SESSION_TIMEOUT`]).
    pub unused_timeout: Duration,
}

impl Default for HttpOptions {
    /// No token, no extra origins, 30 minutes idle, 16 MiB bodies (as a
    /// stdio line), 16 sessions, [`DEFAULT_MAX_CONNECTIONS`] connections,
    /// [`HEADER_TIMEOUT`] for a request's headers.
    fn default() -> Self {
        Self {
            token: None,
            allowed_origins: Vec::new(),
            idle_timeout: Duration::from_secs(30 * 60),
            max_body_bytes: 16 * 1024 * 1024,
            max_sessions: 16,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            header_timeout: HEADER_TIMEOUT,
            unused_timeout: UNUSED_SESSION_TIMEOUT,
        }
    }
}

/// Why the server refuses to start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpError {
    /// Bound off loopback without a token.
    #[error(
        "{0} is not a loopback address, and serving beyond this machine needs a bearer token: give one with --token-file FILE or the AGENTCORE_MCP_TOKEN environment variable (e.g. `openssl rand -hex 32`), or bind to 127.0.0.1"
    )]
    TokenRequired(SocketAddr),
    /// `max_sessions` or `max_body_bytes` is 0.
    #[error("{0} must be at least 1")]
    Zero(&'static str),
    /// The listener failed.
    #[error("the HTTP server failed: {0}")]
    Io(#[from] std::io::Error),
}

impl HttpOptions {
    /// Checks the options against the address bound: off loopback a token
    /// is required.
    pub fn validate(&self, bound: SocketAddr) -> Result<(), HttpError> {
        if !bound.ip().is_loopback() && self.token.is_none() {
            return Err(HttpError::TokenRequired(bound));
        }
        if self.max_sessions == 0 {
            return Err(HttpError::Zero("--max-sessions"));
        }
        if self.max_body_bytes == 0 {
            return Err(HttpError::Zero("--max-body-bytes"));
        }
        if self.max_connections == 0 {
            return Err(HttpError::Zero("--max-connections"));
        }
        Ok(())
    }
}

type Mcp = StreamableHttpService<HttpSession, Sessions>;

/// What the `/mcp` route needs.
struct Face {
    options: HttpOptions,
    mcp: Mcp,
    sessions: Arc<Sessions>,
    /// New-session requests being answered now.
    opening: AtomicUsize,
    stopping: CancellationToken,
}

/// Serves MCP streamable HTTP on `listener` (at `/mcp`, and `GET /healthz`)
/// until `stop` completes, then stops accepting, ends every session (jobs
/// killed, output folders removed) and returns.
///
/// `sessions` starts the agentcore session of each new MCP session.
/// Refuses to start ([`HttpError::TokenRequired`]) when the listener is not
/// on loopback and `options` has no token.
pub async fn serve_http<F>(
    listener: tokio::net::TcpListener,
    options: HttpOptions,
    sessions: SessionFactory,
    stop: F,
) -> Result<(), HttpError>
where
    F: Future<Output = ()> + Send + 'static,
{
    let bound = listener.local_addr()?;
    options.validate(bound)?;
    let live = Live::new(sessions);
    let mut local = LocalSessionManager::default();
    let mut session_config = SessionConfig::default();
    session_config.keep_alive = Some(options.idle_timeout);
    local.session_config = session_config;
    let manager = Arc::new(Sessions::new(local, live.clone()));

    let stopping = CancellationToken::new();
    let mut config = StreamableHttpServerConfig::default()
        .with_cancellation_token(stopping.clone())
        .with_max_request_body_bytes(options.max_body_bytes);
    if !bound.ip().is_loopback() {
        // Off loopback the clients name the host as they know it; the
        // token is what keeps others out.
        config = config.disable_allowed_hosts();
    }
    let mcp = StreamableHttpService::new(
        {
            let live = live.clone();
            move || Ok(HttpSession::new(live.clone()))
        },
        manager.clone(),
        config,
    );
    let face_limits = (options.max_connections, options.header_timeout);
    let face = Arc::new(Face {
        options,
        mcp,
        sessions: manager,
        opening: AtomicUsize::new(0),
        stopping: stopping.clone(),
    });
    let router = Router::new()
        .route("/healthz", get(healthz))
        .route("/mcp", any(mcp_route))
        .with_state(face.clone());

    // Sessions whose client initialized and never came back end, and the
    // stateless requests' session once idle.
    let sweeper = {
        let sessions = face.sessions.clone();
        let after = face.options.unused_timeout;
        let idle = face.options.idle_timeout;
        let stopping = stopping.clone();
        tokio::spawn(async move {
            let every =
                (after.min(idle) / 4).clamp(Duration::from_millis(100), Duration::from_secs(5));
            loop {
                tokio::select! {
                    () = stopping.cancelled() => return,
                    () = tokio::time::sleep(every) => {}
                }
                for id in sessions.live().unused(after) {
                    let _ = sessions.close_session(&id).await;
                }
                sessions.live().end_stateless_if_idle(idle).await;
            }
        })
    };
    let stopper = {
        let stopping = stopping.clone();
        tokio::spawn(async move {
            stop.await;
            // Streams and session services end with the token.
            stopping.cancel();
        })
    };
    listen::serve(
        listener,
        router,
        face_limits.0,
        face_limits.1,
        stopping.clone(),
        SHUTDOWN_GRACE,
    )
    .await;
    stopper.abort();
    sweeper.abort();
    let outcome = Ok(());
    // Sessions whose service has not ended yet end here; those ending
    // already are awaited.
    live.end_all().await;
    outcome
}

async fn healthz(State(face): State<Arc<Face>>) -> Response {
    if face.stopping.is_cancelled() {
        return (StatusCode::SERVICE_UNAVAILABLE, "stopping\n").into_response();
    }
    (StatusCode::OK, "ok\n").into_response()
}

async fn mcp_route(State(face): State<Arc<Face>>, request: Request) -> Response {
    let headers = request.headers();
    if !origin_allowed(headers, &face.options.allowed_origins) {
        return refusal(
            StatusCode::FORBIDDEN,
            "Forbidden: this Origin may not use the server. Browsers on loopback origins are \
             accepted; start agentcore with --allow-origin ORIGIN for another.",
        );
    }
    if let Some(token) = &face.options.token
        && !token.admits(headers)
    {
        let mut response = refusal(
            StatusCode::UNAUTHORIZED,
            "Unauthorized: send the header `Authorization: Bearer TOKEN` with the token the \
             server was started with (--token-file or AGENTCORE_MCP_TOKEN).",
        );
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return response;
    }
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|len| len > face.options.max_body_bytes as u64) {
        return refusal(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!(
                "Payload Too Large: request bodies are limited to {} bytes.",
                face.options.max_body_bytes
            ),
        );
    }
    // rmcp reads a session id that is not visible ASCII as no id at all
    // (and would open a session past the cap): refuse it here.
    let mut ids = headers.get_all(SESSION_ID).iter();
    let well_formed = match (ids.next(), ids.next()) {
        (None, _) => true,
        (Some(id), None) => id.to_str().is_ok_and(|id| !id.is_empty()),
        (Some(_), Some(_)) => false,
    };
    if !well_formed {
        return refusal(
            StatusCode::BAD_REQUEST,
            "Bad Request: send at most one Mcp-Session-Id header, holding the visible ASCII              id the server gave in its answer to initialize.",
        );
    }
    let opens_session = request.method() == Method::POST && !headers.contains_key(SESSION_ID);
    let session: Option<SessionId> = headers
        .get(SESSION_ID)
        .and_then(|id| id.to_str().ok())
        .map(SessionId::from);
    let (parts, body) = request.into_parts();
    // A POST's body is read here (bounded in size and time) and judged:
    // what rmcp cannot take gets the JSON-RPC error for it, not 415.
    let (body, is_request) = if parts.method == Method::POST {
        let bytes = match read_body(body, face.options.max_body_bytes).await {
            Ok(bytes) => bytes,
            Err(response) => return response,
        };
        if is_json(&parts.headers)
            && let Some(reply) = crate::mcp::stdio::http_refusal(&bytes)
        {
            return json_refusal(reply);
        }
        let is_request = serde_json::from_slice::<serde_json::Value>(&bytes).is_ok_and(|m| {
            m.get("id").is_some()
                && m.get("method")
                    .and_then(serde_json::Value::as_str)
                    .is_some_and(|method| method != "initialize")
        });
        (Body::from(bytes), is_request)
    } else {
        (body, parts.method == Method::GET)
    };
    let request = Request::from_parts(parts, body);
    let _opening = if opens_session {
        let opening = Opening::enter(&face.opening);
        // At the cap, the session idle longest makes room (never one with
        // a request being answered or a call running, nor one active in
        // the last EVICT_AFTER_IDLE: a client between two requests).
        loop {
            let open = face.sessions.count().await;
            if open + opening.count <= face.options.max_sessions {
                break;
            }
            let Some(idle) = face.sessions.live().longest_idle(EVICT_AFTER_IDLE) else {
                let mut response = refusal(
                    StatusCode::SERVICE_UNAVAILABLE,
                    &format!(
                        "Service Unavailable: {} MCP sessions are open, the most this server \
                         allows (--max-sessions), and each is busy or was active in the last \
                         {} s. End one (DELETE) or try again in a few seconds.",
                        face.options.max_sessions,
                        EVICT_AFTER_IDLE.as_secs()
                    ),
                );
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
                return response;
            };
            let _ = face.sessions.close_session(&idle).await;
        }
        Some(opening)
    } else {
        None
    };
    let deleting = request.method() == Method::DELETE;
    let touch = match (&session, deleting) {
        (Some(id), false) => face.sessions.live().touch(id, is_request),
        _ => None,
    };
    let mut response = match face.mcp.clone().oneshot(request).await {
        Ok(response) => response.map(Body::new),
        Err(never) => match never {},
    };
    // rmcp answers an ended session's DELETE with 202; the session has
    // ended by then (its jobs are gone), and the official Python SDK
    // takes anything but 200 or 204 for a failure.
    if deleting && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::OK;
    }
    // A new session is busy until its answer to initialize is sent.
    let touch = touch.or_else(|| {
        let id = response.headers().get(SESSION_ID)?.to_str().ok()?;
        face.sessions.live().touch(&SessionId::from(id), false)
    });
    match touch {
        Some(touch) => listen::holding(response, touch),
        None => response,
    }
}

/// Whether the request says its body is JSON (rmcp answers 415 otherwise,
/// rightly).
fn is_json(headers: &http::HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            let essence = value.split_once(';').map_or(value, |(essence, _)| essence);
            essence.trim().eq_ignore_ascii_case("application/json")
        })
}

/// Reads a request body of at most `max` bytes within [`BODY_TIMEOUT`]:
/// 413 beyond the size, 408 past the time.
async fn read_body(body: Body, max: usize) -> Result<Vec<u8>, Response> {
    use futures::StreamExt;
    let mut stream = body.into_data_stream();
    let mut collected = Vec::new();
    let reading = async {
        while let Some(chunk) = stream.next().await {
            let Ok(chunk) = chunk else {
                return Err(refusal(
                    StatusCode::BAD_REQUEST,
                    "Bad Request: the request body could not be read.",
                ));
            };
            if chunk.len() > max.saturating_sub(collected.len()) {
                return Err(refusal(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    &format!("Payload Too Large: request bodies are limited to {max} bytes."),
                ));
            }
            collected.extend_from_slice(&chunk);
        }
        Ok(())
    };
    match tokio::time::timeout(BODY_TIMEOUT, reading).await {
        Ok(Ok(())) => Ok(collected),
        Ok(Err(response)) => Err(response),
        Err(_) => Err(refusal(
            StatusCode::REQUEST_TIMEOUT,
            &format!(
                "Request Timeout: the request body did not arrive within {} s.",
                BODY_TIMEOUT.as_secs()
            ),
        )),
    }
}

/// A JSON-RPC error as the answer to a POST the server cannot take: 400,
/// as the MCP specification asks of streamable HTTP ("the HTTP response
/// body MAY comprise a JSON-RPC error response that has no id").
fn json_refusal(reply: Vec<u8>) -> Response {
    let mut response = (StatusCode::BAD_REQUEST, reply).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// Counts one new-session request for as long as it is answered.
struct Opening<'a> {
    counter: &'a AtomicUsize,
    /// New-session requests being answered, this one included.
    count: usize,
}

impl<'a> Opening<'a> {
    fn enter(counter: &'a AtomicUsize) -> Self {
        let count = counter.fetch_add(1, Ordering::AcqRel) + 1;
        Self { counter, count }
    }
}

impl Drop for Opening<'_> {
    fn drop(&mut self) {
        self.counter.fetch_sub(1, Ordering::AcqRel);
    }
}

fn refusal(status: StatusCode, message: &str) -> Response {
    let mut response = (status, format!("{message}\n")).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}
