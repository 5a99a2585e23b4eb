//! One agentcore [`Session`] per MCP session id: rmcp's local session
//! manager, wrapped so that a session that ends (DELETE, idle, shutdown)
//! ends its agentcore session too, and a handler that starts the agentcore
//! session when the client initializes.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use futures::Stream;
use futures::future::BoxFuture;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientJsonRpcMessage, ErrorData,
    InitializeRequestParams, InitializeResult, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, ServerJsonRpcMessage,
};
use rmcp::model::{GetExtensions, Implementation};
use rmcp::service::RequestContext;
use rmcp::transport::WorkerTransport;
use rmcp::transport::streamable_http_server::session::ServerSseMessage;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, LocalSessionWorker,
};
use rmcp::transport::streamable_http_server::{SessionId, SessionManager};
use rmcp::{RoleServer, ServerHandler};
use tokio::sync::Notify;

use crate::mcp::{McpServer, end_session};
use crate::session::Session;

/// Starts the agentcore session of a new MCP session; the error is a
/// sentence for the client.
pub type SessionFactory =
    Arc<dyn Fn() -> BoxFuture<'static, Result<Session, String>> + Send + Sync>;

/// The id of the MCP session an `initialize` belongs to, put in the
/// request's extensions by [`Sessions::initialize_session`].
#[derive(Clone, Debug)]
struct SessionKey(SessionId);

/// The agentcore sessions of the MCP sessions alive now.
pub(super) struct Live {
    servers: Mutex<HashMap<SessionId, McpServer>>,
    factory: SessionFactory,
    /// Shutting down: no new session may start.
    closing: AtomicBool,
    /// Sessions being ended now, and a wake-up when one is done.
    ending: AtomicUsize,
    ended: Notify,
    /// What each MCP session open now has been doing, for eviction and
    /// expiry.
    activity: Mutex<HashMap<SessionId, Activity>>,
    /// The agentcore session of the requests that come without an MCP
    /// session (the 2026-07-28 revision has none), started by the first
    /// and ended once idle; see [`Live::stateless`].
    stateless: tokio::sync::Mutex<Option<Stateless>>,
}

/// The stateless requests' agentcore session, and its traffic.
struct Stateless {
    server: McpServer,
    /// The end of its last request (or its start, while one is answered).
    last: Arc<Mutex<Instant>>,
    /// Its requests being answered now.
    open: Arc<AtomicUsize>,
}

/// One stateless request being answered: the stateless session is idle
/// again from when it drops.
pub(super) struct StatelessTouch {
    last: Arc<Mutex<Instant>>,
    open: Arc<AtomicUsize>,
}

impl Drop for StatelessTouch {
    fn drop(&mut self) {
        *self.last.lock().unwrap_or_else(PoisonError::into_inner) = Instant::now();
        self.open.fetch_sub(1, Ordering::AcqRel);
    }
}

/// One MCP session's traffic.
#[derive(Debug)]
struct Activity {
    /// The end of its last request (or its start, while one is answered).
    last: Instant,
    /// Its requests being answered now (streams open).
    open: usize,
    /// Its JSON-RPC requests after `initialize` (and GET streams).
    requests: u64,
}

/// One request of a session being answered; the session is idle again
/// from when it drops.
pub(super) struct Touch {
    live: Arc<Live>,
    id: SessionId,
}

impl Drop for Touch {
    fn drop(&mut self) {
        if let Some(activity) = self.live.activity().get_mut(&self.id) {
            activity.open = activity.open.saturating_sub(1);
            activity.last = Instant::now();
        }
    }
}

impl Live {
    pub(super) fn new(factory: SessionFactory) -> Arc<Self> {
        Arc::new(Self {
            servers: Mutex::default(),
            factory,
            closing: AtomicBool::new(false),
            ending: AtomicUsize::new(0),
            ended: Notify::new(),
            activity: Mutex::default(),
            stateless: tokio::sync::Mutex::new(None),
        })
    }

    /// The agentcore session that answers requests sent without an MCP
    /// session (protocol 2026-07-28, which has no `initialize` and no
    /// session id: Claude Code sends `server/discover` and then
    /// `tools/list` so). Every such request of this server's clients goes
    /// to one agentcore session, started by the first and ended once it has
    /// been idle (no request answered, no call running) for the server's
    /// idle timeout: they are one principal (the one bearer token, or
    /// loopback without one), so the read-before-write ledger and the
    /// background jobs hold from one request to the next, as they would in
    /// one MCP session. (Nothing is asked there: asking needs a client that
    /// declared elicitation in `initialize`, so an ask is a deny and no
    /// session grant is made.) With the request, a guard that keeps the
    /// session from counting as idle until it drops.
    pub(super) async fn stateless(&self) -> Result<(McpServer, StatelessTouch), ErrorData> {
        let mut slot = self.stateless.lock().await;
        if self.closing.load(Ordering::Acquire) {
            return Err(ErrorData::internal_error(
                "the server is shutting down; send the request to the next one",
                None,
            ));
        }
        if slot.is_none() {
            let session = (self.factory)().await.map_err(|message| {
                ErrorData::internal_error(
                    format!("the agentcore session could not start: {message}"),
                    None,
                )
            })?;
            *slot = Some(Stateless {
                server: McpServer::new(session),
                last: Arc::new(Mutex::new(Instant::now())),
                open: Arc::new(AtomicUsize::new(0)),
            });
        }
        let Some(stateless) = slot.as_ref() else {
            unreachable!("the stateless session was just started");
        };
        stateless.open.fetch_add(1, Ordering::AcqRel);
        *stateless
            .last
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Instant::now();
        let touch = StatelessTouch {
            last: stateless.last.clone(),
            open: stateless.open.clone(),
        };
        Ok((stateless.server.clone(), touch))
    }

    /// Ends the stateless requests' session if it has been idle `after`
    /// (nothing being answered, no call running); the next such request
    /// starts a new one.
    pub(super) async fn end_stateless_if_idle(&self, after: Duration) {
        let server = {
            let mut slot = self.stateless.lock().await;
            let idle = slot.as_ref().is_some_and(|s| {
                s.open.load(Ordering::Acquire) == 0
                    && s.server.calls_in_flight() == 0
                    && s.last
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .elapsed()
                        >= after
            });
            if !idle {
                return;
            }
            match slot.take() {
                Some(stateless) => stateless.server,
                None => return,
            }
        };
        self.ending.fetch_add(1, Ordering::AcqRel);
        self.end_server(server).await;
    }

    fn activity(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Activity>> {
        self.activity.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A request of session `id` begins (`request`: a JSON-RPC request or
    /// a stream, not a notification or an answer); `None` for a session
    /// not open.
    pub(super) fn touch(self: &Arc<Self>, id: &SessionId, request: bool) -> Option<Touch> {
        let mut activity = self.activity();
        let entry = activity.get_mut(id)?;
        entry.open += 1;
        entry.last = Instant::now();
        if request {
            entry.requests += 1;
        }
        Some(Touch {
            live: self.clone(),
            id: id.clone(),
        })
    }

    /// Whether session `id` has a call running (its answer may be
    /// streaming to nobody: the client went away).
    fn calls_running(&self, id: &SessionId) -> bool {
        self.servers()
            .get(id)
            .is_some_and(|server| server.calls_in_flight() > 0)
    }

    /// The session idle longest, if one has been idle at least `grace`
    /// with nothing in flight (no request being answered, no call
    /// running).
    pub(super) fn longest_idle(&self, grace: Duration) -> Option<SessionId> {
        let candidates: Vec<(SessionId, Instant)> = self
            .activity()
            .iter()
            .filter(|(_, a)| a.open == 0 && a.last.elapsed() >= grace)
            .map(|(id, a)| (id.clone(), a.last))
            .collect();
        candidates
            .into_iter()
            .filter(|(id, _)| !self.calls_running(id))
            .min_by_key(|(_, last)| *last)
            .map(|(id, _)| id)
    }

    /// The sessions that made no request after `initialize` and have been
    /// idle at least `after`, nothing in flight.
    pub(super) fn unused(&self, after: Duration) -> Vec<SessionId> {
        let candidates: Vec<SessionId> = self
            .activity()
            .iter()
            .filter(|(_, a)| a.requests == 0 && a.open == 0 && a.last.elapsed() >= after)
            .map(|(id, _)| id.clone())
            .collect();
        candidates
            .into_iter()
            .filter(|id| !self.calls_running(id))
            .collect()
    }

    fn servers(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, McpServer>> {
        self.servers.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keeps `server` as the session `id`'s; false (and nothing kept) when
    /// the server is shutting down.
    fn register(&self, id: SessionId, server: McpServer) -> bool {
        let mut servers = self.servers();
        if self.closing.load(Ordering::Acquire) {
            return false;
        }
        servers.insert(id, server);
        true
    }

    /// Ends the agentcore session of `id`, if it has one still: calls
    /// aborted and awaited, background jobs killed, MCP servers closed.
    ///
    /// The ending runs on a task of its own: a caller dropped meanwhile (a
    /// client that sends DELETE and hangs up at once) does not stop it
    /// half way, and [`Live::end_all`] still waits for it.
    pub(super) async fn end(self: &Arc<Self>, id: &SessionId) {
        self.activity().remove(id);
        let server = self.servers().remove(id);
        if let Some(server) = server {
            self.ending.fetch_add(1, Ordering::AcqRel);
            let live = self.clone();
            let ending = tokio::spawn(async move { live.end_server(server).await });
            let _ = ending.await;
        }
    }

    /// Ends `server`'s session; the caller counted it in `ending`.
    async fn end_server(&self, server: McpServer) {
        end_session(&server).await;
        // The last handle to the session goes with the MCP session's
        // handler; this one goes now.
        drop(server);
        if self.ending.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.ended.notify_waiters();
        }
    }

    /// Refuses new sessions, ends every live one and waits until every
    /// session being ended has ended.
    pub(super) async fn end_all(&self) {
        let stateless = {
            let mut slot = self.stateless.lock().await;
            self.closing.store(true, Ordering::Release);
            slot.take().map(|s| s.server)
        };
        let servers: Vec<McpServer> = {
            let mut servers = self.servers();
            self.closing.store(true, Ordering::Release);
            servers
                .drain()
                .map(|(_, server)| server)
                .chain(stateless)
                .collect()
        };
        self.ending.fetch_add(servers.len(), Ordering::AcqRel);
        futures::future::join_all(servers.into_iter().map(|server| self.end_server(server))).await;
        loop {
            let notified = self.ended.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            if self.ending.load(Ordering::Acquire) == 0 {
                return;
            }
            notified.await;
        }
    }
}

/// rmcp's [`LocalSessionManager`] (sessions in memory, closed after the
/// idle limit), ending the agentcore session of every MCP session it
/// closes.
pub(super) struct Sessions {
    inner: LocalSessionManager,
    live: Arc<Live>,
}

impl Sessions {
    pub(super) fn new(inner: LocalSessionManager, live: Arc<Live>) -> Self {
        Self { inner, live }
    }

    /// MCP sessions open now (initialized or not).
    pub(super) async fn count(&self) -> usize {
        self.inner.sessions.read().await.len()
    }

    /// The agentcore sessions and their traffic.
    pub(super) fn live(&self) -> &Arc<Live> {
        &self.live
    }
}

impl SessionManager for Sessions {
    type Error = LocalSessionManagerError;
    type Transport = WorkerTransport<LocalSessionWorker>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, transport) = self.inner.create_session().await?;
        self.live.activity().insert(
            id.clone(),
            Activity {
                last: Instant::now(),
                open: 0,
                requests: 0,
            },
        );
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        mut message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        if let ClientJsonRpcMessage::Request(request) = &mut message {
            request
                .request
                .extensions_mut()
                .insert(SessionKey(id.clone()));
        }
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    /// Called for a DELETE, and by rmcp whenever a session's service ends
    /// (idle limit, shutdown): the agentcore session ends before this
    /// returns, so a DELETE is answered once its jobs are gone.
    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        let closed = self.inner.close_session(id).await;
        self.live.end(id).await;
        closed
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.resume(id, last_event_id).await
    }
}

/// The rmcp handler of one MCP session: unbound until the client's
/// `initialize`, which starts the agentcore session (through the same
/// [`SessionFactory`] and [`McpServer`] as stdio); everything after goes
/// to that [`McpServer`].
pub(super) struct HttpSession {
    live: Arc<Live>,
    server: OnceLock<McpServer>,
}

impl HttpSession {
    pub(super) fn new(live: Arc<Live>) -> Self {
        Self {
            live,
            server: OnceLock::new(),
        }
    }

    /// The server that answers this request: the MCP session's, once the
    /// client initialized; otherwise (a request of the 2026-07-28
    /// revision, which has no session) the stateless requests' one
    /// ([`Live::stateless`]), with its guard.
    async fn server(&self) -> Result<(McpServer, Option<StatelessTouch>), ErrorData> {
        if let Some(server) = self.server.get() {
            return Ok((server.clone(), None));
        }
        let (server, touch) = self.live.stateless().await?;
        Ok((server, Some(touch)))
    }
}

impl ServerHandler for HttpSession {
    #[allow(deprecated)]
    fn get_info(&self) -> ServerConfig {
        if let Some(server) = self.server.get() {
            return server.get_info();
        }
        let mut info = ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_logging()
                .build(),
        );
        info.server_info = Implementation::new("agentcore", env!("CARGO_PKG_VERSION"));
        info
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        if let Some(server) = self.server.get() {
            return server.initialize(request, context).await;
        }
        let Some(SessionKey(id)) = context.extensions.remove::<SessionKey>() else {
            return Err(ErrorData::invalid_request(
                "Invalid Request: initialize starts a new MCP session; send it without \
                 Mcp-Session-Id.",
                None,
            ));
        };
        let session = (self.live.factory)().await.map_err(|message| {
            ErrorData::internal_error(
                format!("the agentcore session could not start: {message}"),
                None,
            )
        })?;
        let server = McpServer::new(session);
        if self.server.set(server.clone()).is_err() {
            return Err(ErrorData::invalid_request(
                "Invalid Request: the session is already initialized.",
                None,
            ));
        }
        if !self.live.register(id, server.clone()) {
            self.live.end_server(server).await;
            return Err(ErrorData::internal_error(
                "the server is shutting down; start a new session on the next one",
                None,
            ));
        }
        server.initialize(request, context).await
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let (server, _touch) = self.server().await?;
        server.set_level(request, context).await
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let (server, _touch) = self.server().await?;
        server.list_tools(request, context).await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let (server, _touch) = self.server().await?;
        server.call_tool(request, context).await
    }
}
