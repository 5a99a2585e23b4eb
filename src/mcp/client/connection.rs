//! One external MCP server: its process, its client connection, the tail of
//! its stderr, and the routing of progress notifications to calls.

use std::collections::{HashMap, VecDeque};
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentcore_stages::CallContext;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotification, CancelledNotificationParam,
    ClientCapabilities, ClientConfig, ClientNotification, ClientRequest, Implementation,
    JsonObject, ProgressNotificationParam, ProgressToken, ProtocolVersion, ServerResult,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RunningService, ServiceError};
use rmcp::{ClientHandler, Peer, RoleClient};
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tokio::sync::{mpsc, watch};

use super::MountFailure;
use super::config::McpServerConfig;
use super::stdio::{ChildStdio, TOO_LONG};
use crate::limits::input::{MAX_LINE_BYTES, MAX_LINE_MIB};

/// The protocol version asked for in `initialize`: the newest revision
/// that still has the `initialize` handshake (2025-11-25; from 2026-07-28
/// the lifecycle moved into each request's `_meta`).
pub(crate) const REQUESTED_VERSION: ProtocolVersion = ProtocolVersion::LATEST_WITH_INITIALIZE;

/// The versions a server may answer `initialize` with (it answers the one
/// asked for, or an older one it supports): every revision with the
/// handshake, up to the one asked for.
fn accepted_versions() -> impl Iterator<Item = &'static ProtocolVersion> {
    ProtocolVersion::known_up_to(&REQUESTED_VERSION)
        .iter()
        .filter(|version| version.has_initialize())
}

/// How much of a server's stderr is kept for messages.
const STDERR_KEEP: usize = 4096;
/// How much of it a message quotes.
const STDERR_QUOTE: usize = 600;
/// How long a server that closed the connection gets to finish writing its
/// stderr before a message quotes it.
const STDERR_SETTLE: Duration = Duration::from_millis(500);

/// A running external MCP server.
pub struct Connection {
    config: McpServerConfig,
    peer: Peer<RoleClient>,
    /// Kept so the connection lives as long as its tools; dropping it
    /// cancels the service, and the child process is killed.
    service: Mutex<Option<RunningService<RoleClient, Handler>>>,
    stderr: StderrTail,
    routes: Routes,
    tools_changed: Arc<AtomicBool>,
    /// Set by the same notification; cleared only when the session's
    /// registry is refreshed (`changed_tools`).
    mount_stale: Arc<AtomicBool>,
    /// The tool names the server offers now, once a list change was
    /// fetched (`None`: the list it was mounted with).
    offered: tokio::sync::Mutex<Option<std::collections::BTreeSet<String>>>,
    /// Where results too long to show are kept (the session's output
    /// folder, set when the session starts).
    results: std::sync::OnceLock<Arc<crate::process::OutputDir>>,
    /// Whether its tools are listed to the model by summary only.
    by_summary: AtomicBool,
    /// Who the server's questions (elicitation) go to, once the session
    /// said.
    asker: Asker,
}

/// The approval engine a server's questions go to: set by the session
/// after the handshake; until then, and without an approver, they are
/// declined.
type Asker = Arc<std::sync::OnceLock<crate::approval::ApprovalEngine>>;

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("server", &self.config.name)
            .finish_non_exhaustive()
    }
}

/// Why a remote call failed before the server answered it.
#[derive(Debug)]
pub(crate) enum CallFailure {
    /// The call's cancellation fired; `notifications/cancelled` was sent.
    Cancelled,
    /// The server is gone, hung or refused: the message for the model.
    Failed(String),
}

impl Connection {
    /// Starts the server of `config`, completes the handshake and lists
    /// its tools, all within its startup timeout.
    ///
    /// A `url` server without an `Authorization` in its `headers` is
    /// reached with OAuth: its stored tokens, refreshed as needed, and,
    /// when `sign_in` says a person is there, a sign-in in their browser
    /// when the server asks for one.
    pub(crate) async fn start(
        config: McpServerConfig,
        sign_in: Option<super::oauth::SignIn>,
    ) -> Result<(Arc<Self>, Vec<rmcp::model::Tool>), MountFailure> {
        let name = config.name.clone();
        let fail = |message: String| MountFailure {
            server: name.clone(),
            message,
        };
        if let Some(url) = config.url.clone() {
            use super::oauth;
            let client = http_client(&config).map_err(fail)?;
            let transport_config = http_transport_config(&config, &url).map_err(fail)?;
            let what = format!("a streamable-HTTP server at {url}");
            let static_token = oauth::has_static_authorization(&config);
            let config_copy = config.clone();
            let mounted = if static_token {
                let transport = rmcp::transport::StreamableHttpClientTransport::with_client(
                    client.clone(),
                    transport_config,
                );
                Self::handshake(config, transport, StderrTail::spawn(None), &what).await
            } else {
                let auth = oauth::ServerAuth::new(&config, client.clone(), sign_in)
                    .await
                    .map_err(fail)?;
                // A person is there (or client credentials) and nothing is
                // stored: the sign-in comes before the handshake and its
                // timeout.
                if auth.can_sign_in()
                    && !auth.has_tokens()
                    && let Ok(Some(challenge)) = oauth::probe_challenge(&client, &url).await
                {
                    auth.authorize(Some(&challenge), false)
                        .await
                        .map_err(fail)?;
                }
                let transport = rmcp::transport::StreamableHttpClientTransport::with_client(
                    oauth::Authorized::new(client.clone(), auth),
                    transport_config,
                );
                Self::handshake(config, transport, StderrTail::spawn(None), &what).await
            };
            return match mounted {
                Err(mut failure) => {
                    if let Some(why) = connection_failure(&client, &url).await {
                        failure.message.push_str(&format!(" (connecting: {why})"));
                    }
                    if failure.message.contains("Auth required")
                        || failure.message.contains("Insufficient scope")
                    {
                        if static_token {
                            failure.message.push_str(STATIC_TOKEN_REFUSED);
                        } else {
                            failure.message.push_str(". ");
                            failure.message.push_str(&oauth::login_hint(&config_copy));
                        }
                    }
                    Err(failure)
                }
                mounted => mounted,
            };
        }
        let program = config.command.clone().unwrap_or_default();
        let mut command = tokio::process::Command::new(&program);
        command
            .args(&config.args)
            .env_remove(crate::process::TOKEN_ENV)
            .envs(&config.env)
            .kill_on_drop(true);
        let (transport, stderr) = ChildStdio::spawn(&name, command)
            .map_err(|err| {
                fail(format!(
                    "MCP server {name:?} could not be started: `{program}`: {err}; check `command` in its [[mcp_servers]] entry"
                ))
            })?;
        let stderr_tail = StderrTail::spawn(stderr);
        let what = format!("`{program}` is an MCP server speaking stdio");
        Self::handshake(config, transport, stderr_tail, &what).await
    }

    /// Completes the handshake over `transport` and lists the tools, within
    /// the startup timeout; `what` completes "check that …" in a timeout's
    /// message.
    async fn handshake<T, E, A>(
        config: McpServerConfig,
        transport: T,
        stderr_tail: StderrTail,
        what: &str,
    ) -> Result<(Arc<Self>, Vec<rmcp::model::Tool>), MountFailure>
    where
        T: rmcp::transport::IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let name = config.name.clone();
        let fail = |message: String| MountFailure {
            server: name.clone(),
            message,
        };
        let routes = Routes::default();
        let tools_changed = Arc::new(AtomicBool::new(false));
        let mount_stale = Arc::new(AtomicBool::new(false));
        let asker: Asker = Arc::default();
        let handler = Handler {
            routes: routes.clone(),
            tools_changed: tools_changed.clone(),
            mount_stale: mount_stale.clone(),
            server: config.name.clone(),
            asker: asker.clone(),
        };
        let timeout = config.startup_timeout();
        let deadline = tokio::time::Instant::now() + timeout;
        let service = match tokio::time::timeout_at(
            deadline,
            rmcp::serve_client(handler, transport),
        )
        .await
        {
            Ok(Ok(service)) => service,
            Ok(Err(err)) => {
                let tail = stderr_tail.settled().await;
                return Err(fail(format!(
                    "MCP server {name:?} failed the MCP handshake: {}{tail}",
                    with_causes(&err)
                )));
            }
            Err(_) => {
                let tail = stderr_tail.quote();
                return Err(fail(format!(
                    "MCP server {name:?} did not complete the MCP handshake within the startup timeout of {} s and was stopped{tail}; check that {what}, or raise `startup_timeout_secs`",
                    secs(timeout)
                )));
            }
        };
        let peer = service.peer().clone();
        // Negotiated down: a server answers the version asked for or an
        // older one it supports; one this client does not speak ends the
        // mount (the specification's "SHOULD disconnect").
        let answered = peer.peer_info().map(|info| info.protocol_version.clone());
        if let Some(version) = answered
            && !accepted_versions().any(|known| *known == version)
        {
            let known: Vec<&str> = accepted_versions().map(ProtocolVersion::as_str).collect();
            return Err(fail(format!(
                "MCP server {name:?} answered initialize with protocol version {:?}, which \
                 agentcore does not speak (it asked for {REQUESTED_VERSION} and speaks {}); \
                 use a server that supports one of those versions",
                version.as_str(),
                known.join(", ")
            )));
        }
        let tools = match tokio::time::timeout_at(deadline, peer.list_all_tools()).await {
            Ok(Ok(tools)) => tools,
            Ok(Err(err)) => {
                let tail = stderr_tail.settled().await;
                return Err(fail(format!(
                    "MCP server {name:?} did not list its tools: {err}{tail}"
                )));
            }
            Err(_) => {
                return Err(fail(format!(
                    "MCP server {name:?} did not answer tools/list within the startup timeout of {} s and was stopped{}",
                    secs(timeout),
                    stderr_tail.quote()
                )));
            }
        };
        let connection = Arc::new(Self {
            config,
            peer,
            service: Mutex::new(Some(service)),
            stderr: stderr_tail,
            routes,
            tools_changed,
            mount_stale,
            offered: tokio::sync::Mutex::new(None),
            results: std::sync::OnceLock::new(),
            by_summary: AtomicBool::new(false),
            asker,
        });
        Ok((connection, tools))
    }

    /// The server's configuration.
    pub fn config(&self) -> &McpServerConfig {
        &self.config
    }

    /// The server's name as configured.
    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// Keeps results too long to show in `dir` (the session's output
    /// folder, which `read` can page through); the first folder given
    /// stays.
    pub(crate) fn keep_results_in(&self, dir: Arc<crate::process::OutputDir>) {
        let _ = self.results.set(dir);
    }

    /// Puts the server's questions (elicitation) to `engine`'s approver;
    /// the first engine given stays.
    pub(crate) fn ask_through(&self, engine: crate::approval::ApprovalEngine) {
        let _ = self.asker.set(engine);
    }

    /// Lists the server's tools to the model by summary only (or not).
    pub(crate) fn list_by_summary(&self, on: bool) {
        self.by_summary.store(on, Ordering::Release);
    }

    /// Whether the server's tools are listed to the model by summary only
    /// (their full definitions come from `tool_search`).
    pub fn listed_by_summary(&self) -> bool {
        self.by_summary.load(Ordering::Acquire)
    }

    /// Where results too long to show are kept, once the session said.
    pub(crate) fn results_dir(&self) -> Option<&crate::process::OutputDir> {
        self.results.get().map(Arc::as_ref)
    }

    /// Whether the server said its tool list changed
    /// (`notifications/tools/list_changed`) since it was mounted.
    pub fn tools_changed(&self) -> bool {
        self.tools_changed.load(Ordering::Acquire)
    }

    /// The last lines the server wrote to stderr.
    pub fn stderr_tail(&self) -> String {
        self.stderr.text()
    }

    /// Closes the connection: the server's stdin is closed and the process
    /// stopped (SIGTERM, then SIGKILL).
    pub async fn close(&self) {
        let service = self
            .service
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(mut service) = service {
            let _ = service.close_with_timeout(Duration::from_secs(5)).await;
        }
    }

    /// Calls `tool` with `arguments`, reporting the server's progress
    /// notifications as the call's progress, and sending
    /// `notifications/cancelled` when the call's cancellation fires.
    pub(crate) async fn call(
        &self,
        tool: &str,
        arguments: JsonObject,
        cx: &CallContext,
    ) -> Result<rmcp::model::CallToolResult, CallFailure> {
        if self.peer.is_transport_closed() {
            return Err(CallFailure::Failed(self.gone().await));
        }
        if !self.still_offers(tool).await {
            return Err(CallFailure::Failed(format!(
                "MCP server {:?} no longer offers the tool {tool:?} (its tool list changed during the session); use another tool",
                self.name()
            )));
        }
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(
            CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments),
        ));
        let timeout = self.config.call_timeout();
        let options = PeerRequestOptions::with_timeout(timeout).reset_timeout_on_progress();
        let handle = match self.peer.send_request_with_option(request, options).await {
            Ok(handle) => handle,
            Err(err) => return Err(CallFailure::Failed(self.failed(&err).await)),
        };
        let (updates, mut progress) = mpsc::unbounded_channel();
        let _route = self.routes.add(handle.progress_token.clone(), updates);
        let id = handle.id.clone();
        let mut response = pin!(handle.await_response());
        let outcome = loop {
            tokio::select! {
                biased;
                () = cx.cancellation().cancelled() => {
                    let notification = CancelledNotification::new(CancelledNotificationParam::new(
                        Some(id),
                        Some("the call was cancelled".to_owned()),
                    ));
                    let _ = self
                        .peer
                        .send_notification(ClientNotification::CancelledNotification(notification))
                        .await;
                    return Err(CallFailure::Cancelled);
                }
                Some(update) = progress.recv() => {
                    cx.progress().report(update);
                }
                outcome = &mut response => break outcome,
            }
        };
        match outcome {
            Ok(ServerResult::CallToolResult(result)) => Ok(result),
            Ok(_) => Err(CallFailure::Failed(format!(
                "MCP server {:?} answered tools/call for {tool:?} with something other than a tool result; the server does not follow the MCP protocol, so use another tool",
                self.name()
            ))),
            Err(err) => Err(CallFailure::Failed(self.failed(&err).await)),
        }
    }

    /// The server's tools listed again, when it said its list changed
    /// since the last listing (`notifications/tools/list_changed`); `None`
    /// when it did not, or when the list could not be fetched (then it is
    /// asked again next time). Calls see the new list too.
    pub(crate) async fn changed_tools(&self) -> Option<Vec<rmcp::model::Tool>> {
        let mut offered = self.offered.lock().await;
        if !self.mount_stale.swap(false, Ordering::AcqRel) {
            return None;
        }
        // A change announced from here on sets both flags again.
        self.tools_changed.store(false, Ordering::Release);
        match tokio::time::timeout(self.config.call_timeout(), self.peer.list_all_tools()).await {
            Ok(Ok(tools)) => {
                *offered = Some(tools.iter().map(|t| t.name.to_string()).collect());
                Some(tools)
            }
            _ => {
                self.tools_changed.store(true, Ordering::Release);
                self.mount_stale.store(true, Ordering::Release);
                None
            }
        }
    }

    /// Whether the server still offers `tool`: after a
    /// `notifications/tools/list_changed`, the list is fetched again
    /// before the next call. Tools the server adds are mounted between
    /// turns ([`Session::refresh_mcp_tools`](crate::session::Session::refresh_mcp_tools)).
    async fn still_offers(&self, tool: &str) -> bool {
        let mut offered = self.offered.lock().await;
        if self.tools_changed.swap(false, Ordering::AcqRel) {
            match tokio::time::timeout(self.config.call_timeout(), self.peer.list_all_tools()).await
            {
                Ok(Ok(tools)) => {
                    *offered = Some(tools.into_iter().map(|t| t.name.into_owned()).collect());
                }
                // The list could not be fetched: ask again next time, and
                // let the call itself find out.
                _ => self.tools_changed.store(true, Ordering::Release),
            }
        }
        offered.as_ref().is_none_or(|names| names.contains(tool))
    }

    /// The message for a call that failed with `err`.
    async fn failed(&self, err: &ServiceError) -> String {
        let name = self.name();
        if let Some(max) = over_the_bound(err) {
            return format!(
                "MCP server {name:?} answered with more than {max} bytes ({} MiB), the most an answer may have, so the answer was dropped; ask for less (a narrower query, a smaller page) or use another tool",
                max / (1024 * 1024)
            );
        }
        match err {
            ServiceError::TransportSend(_)
                if ["Auth required", "Insufficient scope"]
                    .iter()
                    .any(|refusal| with_causes(err).contains(refusal)) =>
            {
                format!(
                    "MCP server {name:?} refused the call for want of authorization ({}); {}",
                    with_causes(err),
                    super::oauth::login_hint(&self.config)
                )
            }
            // Over HTTP each call's answer comes on a stream of its own:
            // one that broke without it (an event over the bound ends it so)
            // leaves the connection up.
            ServiceError::TransportClosed
                if self.config.url.is_some() && !self.peer.is_transport_closed() =>
            {
                format!(
                    "MCP server {name:?} sent no answer to this call: the stream that was to carry it ended or broke first (an answer over {MAX_LINE_BYTES} bytes ({MAX_LINE_MIB} MiB), the most an answer may have, ends it so). The server is still connected: ask for less (a narrower query, a smaller page), try again, or use another tool"
                )
            }
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => self.gone().await,
            ServiceError::Timeout { timeout } => format!(
                "MCP server {name:?} sent no answer and no progress for {} s, so the call was cancelled{}; the server may be hung: try again later, or raise `call_timeout_secs` in its [[mcp_servers]] entry if the tool is slow",
                secs(*timeout),
                self.stderr.quote()
            ),
            ServiceError::McpError(error)
                if error
                    .data
                    .as_ref()
                    .is_some_and(|data| data.get(TOO_LONG).is_some()) =>
            {
                error.message.to_string()
            }
            ServiceError::McpError(error) => format!(
                "MCP server {name:?} refused the call: {} (code {}); correct the arguments or use another tool",
                error.message, error.code.0
            ),
            other => format!("MCP server {name:?} failed the call: {other}"),
        }
    }

    /// The message for calls of a server whose connection is closed.
    async fn gone(&self) -> String {
        let tail = self.stderr.settled().await;
        format!(
            "MCP server {:?} is not running: its connection closed (the process exited or closed its output){tail}. Its tools cannot be called in this session; use other tools",
            self.name()
        )
    }
}

fn secs(duration: Duration) -> String {
    let s = duration.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{}", s as u64)
    } else {
        format!("{s:.1}")
    }
}

/// Progress senders by progress token, for the calls in flight, and the
/// notifications that came before their call's route: a call's token is
/// known only once its request is sent, and a quick server's first
/// notification can come before the call has added its route.
#[derive(Clone, Default)]
struct Routes(Arc<Mutex<RouteTable>>);

#[derive(Default)]
struct RouteTable {
    senders: HashMap<ProgressToken, mpsc::UnboundedSender<Value>>,
    /// Notifications for tokens without a route yet, oldest first; at most
    /// [`EARLY_NOTIFICATIONS`], each under [`EARLY_MESSAGE_BYTES`] of
    /// message (a server cannot make this hold much).
    early: std::collections::VecDeque<(ProgressToken, Value)>,
}

/// How many notifications for tokens without a route are kept.
const EARLY_NOTIFICATIONS: usize = 64;

/// The longest message a kept early notification may have.
const EARLY_MESSAGE_BYTES: usize = 64 * 1024;

/// Removes its route when the call ends.
struct Route {
    routes: Routes,
    token: ProgressToken,
}

impl Drop for Route {
    fn drop(&mut self) {
        self.routes.lock().senders.remove(&self.token);
    }
}

impl Routes {
    fn lock(&self) -> std::sync::MutexGuard<'_, RouteTable> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Routes `token`'s notifications to `sender`, those that came before
    /// first, in their order.
    fn add(&self, token: ProgressToken, sender: mpsc::UnboundedSender<Value>) -> Route {
        let mut table = self.lock();
        let early = std::mem::take(&mut table.early);
        for (from, payload) in early {
            if from == token {
                let _ = sender.send(payload);
            } else {
                table.early.push_back((from, payload));
            }
        }
        table.senders.insert(token.clone(), sender);
        Route {
            routes: self.clone(),
            token,
        }
    }

    fn send(&self, params: ProgressNotificationParam) {
        let payload = progress_payload(&params);
        let mut table = self.lock();
        if let Some(sender) = table.senders.get(&params.progress_token) {
            let _ = sender.send(payload);
            return;
        }
        if params
            .message
            .as_ref()
            .is_some_and(|m| m.len() > EARLY_MESSAGE_BYTES)
        {
            return;
        }
        if table.early.len() == EARLY_NOTIFICATIONS {
            table.early.pop_front();
        }
        table.early.push_back((params.progress_token, payload));
    }
}

/// A server's progress notification as a progress event payload: the
/// fields it gave (`progress`, `total`, `message`).
pub(crate) fn progress_payload(params: &ProgressNotificationParam) -> Value {
    let mut payload = json!({ "progress": params.progress });
    if let Some(total) = params.total {
        payload["total"] = json!(total);
    }
    if let Some(message) = &params.message {
        payload["message"] = json!(message);
    }
    payload
}

/// The client side of the connection: routes progress, notes list changes.
#[derive(Clone)]
pub(crate) struct Handler {
    routes: Routes,
    tools_changed: Arc<AtomicBool>,
    mount_stale: Arc<AtomicBool>,
    /// The server's name, which labels its questions.
    server: String,
    asker: Asker,
}

impl ClientHandler for Handler {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.routes.send(params);
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.store(true, Ordering::Release);
        self.mount_stale.store(true, Ordering::Release);
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        use crate::approval::{ElicitationAnswer, ElicitationRequest};
        use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};
        let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = request
        else {
            // URL mode is not declared: a server that sends it anyway is
            // declined.
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let schema = serde_json::to_value(&requested_schema).unwrap_or(Value::Null);
        // A form too large to show a person is not shown: declined.
        let too_large = schema.to_string().len() > crate::approval::MAX_ELICITATION_SCHEMA_BYTES;
        let Some(engine) = self.asker.get().filter(|_| !too_large) else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let asked = ElicitationRequest::new(self.server.clone(), &message, schema.clone());
        Ok(match engine.elicit(asked).await {
            ElicitationAnswer::Accept(content) => ElicitResult::new(ElicitationAction::Accept)
                .with_content(Value::Object(with_defaults(content, &schema))),
            ElicitationAnswer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
            _ => ElicitResult::new(ElicitationAction::Decline),
        })
    }

    fn get_info(&self) -> ClientConfig {
        // Forms a person can answer (through the session's approver); a
        // session without one declines them.
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = Some(
            rmcp::model::ElicitationCapability::new()
                .with_form(rmcp::model::FormElicitationCapability::default()),
        );
        let mut info = ClientConfig::new(
            capabilities,
            Implementation::new("agentcore", env!("CARGO_PKG_VERSION")),
        );
        // rmcp's default is its LATEST, a revision without `initialize`: a
        // server of an earlier one would not know what was asked of it.
        info.protocol_version = REQUESTED_VERSION;
        info
    }
}

/// An accepted form with the schema's `default` of each property the
/// person left out (SEP-1034): what the server gets is the whole form.
fn with_defaults(content: Value, schema: &Value) -> serde_json::Map<String, Value> {
    let mut form = match content {
        Value::Object(map) => map,
        _ => serde_json::Map::new(),
    };
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            if let Some(default) = property.get("default")
                && !form.contains_key(name)
            {
                form.insert(name.clone(), default.clone());
            }
        }
    }
    form
}

/// The streamable-HTTP client configuration of a `url` entry: its
/// `headers` are sent on every request.
fn http_transport_config(
    config: &McpServerConfig,
    url: &str,
) -> Result<rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig, String> {
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let mut headers = HashMap::new();
    for (name, value) in &config.headers {
        let header = http::HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
            format!(
                "MCP server {:?}: {name:?} in `headers` is not an HTTP header name",
                config.name
            )
        })?;
        let value = http::HeaderValue::from_str(value).map_err(|_| {
            format!(
                "MCP server {:?}: the value of the header {name:?} holds characters an HTTP header cannot",
                config.name
            )
        })?;
        headers.insert(header, value);
    }
    let mut transport = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    transport.custom_headers = headers;
    // The same bound as a line from a stdio server.
    transport.max_json_response_size = MAX_LINE_BYTES;
    transport.max_sse_event_size = MAX_LINE_BYTES;
    Ok(transport)
}

/// The bound an HTTP answer went over, when `err` is the transport
/// dropping an answer for its size (rmcp refuses it before reading it
/// whole: at once when the server sent its length).
fn over_the_bound(err: &ServiceError) -> Option<usize> {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    let ServiceError::TransportSend(sent) = err else {
        return None;
    };
    match sent
        .error
        .downcast_ref::<StreamableHttpError<reqwest::Error>>()?
    {
        StreamableHttpError::ResponseBodyTooLarge { max_size } => Some(*max_size),
        _ => None,
    }
}

/// `err` and each cause under it not already in its text, joined by `: `
/// (an HTTP client's "error sending request" hides the refused
/// certificate below it).
fn with_causes(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut cause = err.source();
    while let Some(next) = cause {
        let part = next.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        cause = next.source();
    }
    text
}

/// Said after a mount the server refused although its `headers` carry an
/// `Authorization` (rmcp says only "Auth required").
const STATIC_TOKEN_REFUSED: &str = ". The server refused the Authorization in the entry's `headers`: replace the token with one it accepts, or remove the header to sign in with OAuth (`agentcore mcp login NAME`)";

/// Why connecting to `url` fails, with every cause (a refused certificate
/// and its reason), or `None` when a connection can be made: the
/// handshake's own error names only the request that failed.
async fn connection_failure(client: &reqwest::Client, url: &str) -> Option<String> {
    match client.get(url).timeout(Duration::from_secs(5)).send().await {
        Err(err) if err.is_connect() || err.is_timeout() => Some(with_causes(&err)),
        _ => None,
    }
}

/// The HTTP client of a `url` server: rustls with the ring provider, the
/// platform's roots and those of `ca_file`, the certificate checked against
/// the host's name; no proxy from the environment, no redirects.
pub(crate) fn http_client(config: &McpServerConfig) -> Result<reqwest::Client, String> {
    let name = &config.name;
    // ring, not aws-lc-rs: no CMake or C build beyond ring's own. ring has
    // no post-quantum key exchange, hence rustls's deprecation note.
    #[allow(deprecated)]
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut extra = Vec::new();
    if let Some(path) = &config.ca_file {
        use rustls::pki_types::CertificateDer;
        use rustls::pki_types::pem::PemObject;
        let unreadable = |e: &dyn std::fmt::Display| {
            format!(
                "MCP server {name:?}: `ca_file` {} cannot be read as PEM certificates: {e}",
                path.display()
            )
        };
        for cert in CertificateDer::pem_file_iter(path).map_err(|e| unreadable(&e))? {
            extra.push(cert.map_err(|e| unreadable(&e))?);
        }
        if extra.is_empty() {
            return Err(format!(
                "MCP server {name:?}: `ca_file` {} holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
                path.display()
            ));
        }
    }
    let verifier =
        rustls_platform_verifier::Verifier::new_with_extra_roots(extra, provider.clone()).map_err(
            |e| {
                format!("MCP server {name:?}: the platform's certificate roots cannot be used: {e}")
            },
        )?;
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("MCP server {name:?}: TLS cannot be set up: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    // No redirects: a server's answer may not send the request, and the
    // token in its headers, to another URL (plain http:// included) that
    // the entry's checks never saw.
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| format!("MCP server {name:?}: its HTTP client cannot be built: {e}"))
}

/// The last few KiB a server wrote to stderr.
#[derive(Clone)]
struct StderrTail {
    buffer: Arc<Mutex<VecDeque<u8>>>,
    /// True once stderr reached its end.
    done: watch::Receiver<bool>,
}

impl StderrTail {
    fn spawn(stderr: Option<tokio::process::ChildStderr>) -> Self {
        let buffer = Arc::new(Mutex::new(VecDeque::new()));
        let (finished, done) = watch::channel(false);
        let Some(mut stderr) = stderr else {
            let _ = finished.send(true);
            return Self { buffer, done };
        };
        let sink = buffer.clone();
        tokio::spawn(async move {
            let mut chunk = [0u8; 1024];
            loop {
                match stderr.read(&mut chunk).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        let mut kept = sink
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner);
                        kept.extend(&chunk[..n]);
                        let excess = kept.len().saturating_sub(STDERR_KEEP);
                        kept.drain(..excess);
                    }
                }
            }
            let _ = finished.send(true);
        });
        Self { buffer, done }
    }

    /// The kept text, trimmed.
    fn text(&self) -> String {
        let kept = self
            .buffer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let bytes: Vec<u8> = kept.iter().copied().collect();
        String::from_utf8_lossy(&bytes).trim().to_owned()
    }

    /// `; its stderr ends with: "…"`, or nothing when it wrote none.
    fn quote(&self) -> String {
        let text = self.text();
        if text.is_empty() {
            return String::new();
        }
        let start = text
            .char_indices()
            .map(|(i, _)| i)
            .find(|&i| text.len() - i <= STDERR_QUOTE)
            .unwrap_or(text.len());
        format!("; its stderr ends with: {:?}", &text[start..])
    }

    /// [`quote`](Self::quote) once stderr ended (or a moment passed).
    async fn settled(&self) -> String {
        let mut done = self.done.clone();
        let _ = tokio::time::timeout(STDERR_SETTLE, done.wait_for(|d| *d)).await;
        self.quote()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_stderr_tail_keeps_the_end() {
        let mut child = tokio::process::Command::new("sh")
            .args([
                "-c",
                "i=0; while [ $i -lt 2000 ]; do echo line $i >&2; i=$((i+1)); done",
            ])
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let tail = StderrTail::spawn(child.stderr.take());
        child.wait().await.unwrap();
        let quoted = tail.settled().await;
        assert!(quoted.contains("line 1999"), "{quoted}");
        assert!(!quoted.contains("line 0\\n"), "{quoted}");
        assert!(quoted.len() < 2 * STDERR_QUOTE, "{quoted}");
    }

    #[test]
    fn progress_keeps_what_the_server_gave() {
        let params: ProgressNotificationParam = serde_json::from_value(json!({
            "progressToken": 1, "progress": 2, "total": 4, "message": "half"
        }))
        .unwrap();
        assert_eq!(
            progress_payload(&params),
            json!({"progress": 2.0, "total": 4.0, "message": "half"})
        );
    }

    fn note(token: u64, progress: u64, message: &str) -> ProgressNotificationParam {
        serde_json::from_value(json!({
            "progressToken": token, "progress": progress, "message": message
        }))
        .unwrap()
    }

    #[test]
    fn progress_that_comes_before_its_calls_route_is_delivered_first_in_order() {
        let routes = Routes::default();
        routes.send(note(7, 1, "one"));
        routes.send(note(8, 1, "another call's"));
        routes.send(note(7, 2, "two"));
        let (sender, mut received) = mpsc::unbounded_channel();
        let route = routes.add(note(7, 0, "").progress_token, sender);
        routes.send(note(7, 3, "three"));
        let mut seen = Vec::new();
        while let Ok(payload) = received.try_recv() {
            seen.push(payload["progress"].as_f64().unwrap());
        }
        assert_eq!(seen, [1.0, 2.0, 3.0]);
        // The other call's notification waits for its own route.
        assert_eq!(routes.lock().early.len(), 1);
        drop(route);
        assert!(routes.lock().senders.is_empty());
    }

    #[test]
    fn notifications_without_a_route_are_bounded_in_number_and_size() {
        let routes = Routes::default();
        for token in 0..1_000 {
            routes.send(note(token, 1, "x"));
        }
        routes.send(note(5_000, 1, &"y".repeat(EARLY_MESSAGE_BYTES + 1)));
        let table = routes.lock();
        assert_eq!(table.early.len(), EARLY_NOTIFICATIONS);
        // The newest are kept; the oversized one is not.
        assert_eq!(
            table.early.back().map(|(token, _)| token.clone()),
            Some(note(999, 0, "").progress_token)
        );
    }
}
