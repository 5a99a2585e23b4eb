//! The rmcp handler: `initialize`, `tools/list` and `tools/call` over one
//! [`Session`].

use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use agentcore_stages::texts;
use agentcore_stages::{
    Call, CancelReason, Cancellation, Content, Event, EventSink, ToolResultMessage, UpdateKind,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation,
    InitializeRequestParams, InitializeResult, ListToolsResult, NumberOrString,
    PaginatedRequestParams, ProgressNotificationParam, ProgressToken, RequestId,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use serde::Deserialize as _;
use serde_json::{Map, Value};
use tokio::sync::mpsc;
use tower::{Service, ServiceExt};

use super::arrival::{Arrivals, Ticket};
use super::definitions::tool_definitions;
use super::elicit::{ElicitationApprover, Origins, can_ask, cannot_ask_sentence};
use super::stdio::ClientRequestId;
use crate::message::{self, ToolAnswer};
use crate::scheduler::{ResponseFuture, Scheduler, SchedulerError};
use crate::session::Session;
use crate::tools::bash::BashProgress;

/// The MCP server of one connection: the built-in tools of one [`Session`]
/// (so one read ledger), called through its scheduler and pipeline.
///
/// Cloning shares the session. Use [`serve`](super::serve) to run it over a
/// transport; the server only numbers `tools/call` requests in arrival order
/// when it runs that way.
#[derive(Clone)]
pub struct McpServer {
    inner: Arc<Inner>,
}

struct Inner {
    session: Session,
    scheduler: std::sync::Mutex<Scheduler>,
    tools: Vec<Tool>,
    arrivals: Arc<Arrivals>,
    /// `tools/call` handlers running now.
    in_flight: AtomicUsize,
    /// `initialize` has been answered once.
    initialized: AtomicBool,
    /// Whether job exits are sent (`info` is at or above the level the
    /// client set with `logging/setLevel`).
    job_logs: Arc<AtomicBool>,
    /// The transport request of each call in flight, for the questions
    /// asked about it.
    origins: Arc<Origins>,
}

/// Counts one running handler for as long as it lives.
struct InFlight<'a>(&'a AtomicUsize);

impl<'a> InFlight<'a> {
    fn enter(count: &'a AtomicUsize) -> Self {
        count.fetch_add(1, Ordering::AcqRel);
        Self(count)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("session", &self.inner.session)
            .finish_non_exhaustive()
    }
}

impl McpServer {
    /// A server for the tools of `session`.
    pub fn new(session: Session) -> Self {
        let scheduler = std::sync::Mutex::new(session.scheduler().clone());
        let tools = tool_definitions(session.registry());
        Self {
            inner: Arc::new(Inner {
                session,
                scheduler,
                tools,
                arrivals: Arrivals::new(),
                in_flight: AtomicUsize::new(0),
                initialized: AtomicBool::new(false),
                job_logs: Arc::new(AtomicBool::new(true)),
                origins: Arc::default(),
            }),
        }
    }

    /// The session the server calls tools in.
    pub fn session(&self) -> &Session {
        &self.inner.session
    }

    pub(crate) fn arrivals(&self) -> &Arc<Arrivals> {
        &self.inner.arrivals
    }

    /// `tools/call` handlers running now.
    #[cfg_attr(not(feature = "mcp-http"), allow(dead_code))]
    pub(crate) fn calls_in_flight(&self) -> usize {
        self.inner.in_flight.load(Ordering::Acquire)
    }

    /// Waits until no `tools/call` handler is running (their calls ended),
    /// or `timeout` passes.
    pub(crate) async fn drain(&self, timeout: Duration) {
        let deadline = tokio::time::Instant::now() + timeout;
        while self.inner.in_flight.load(Ordering::Acquire) > 0
            && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Lets the session's "ask" reach the person through the client when the
    /// client declared elicitation (form mode); otherwise "ask" stays a
    /// deny, whose reason now says the client cannot ask. An approver the
    /// session already has is left alone.
    fn bind_approver(&self, request: &InitializeRequestParams, peer: &Peer<RoleServer>) {
        let engine = self.inner.session.approval();
        if engine.has_approver() {
            return;
        }
        if can_ask(&request.capabilities) {
            engine.set_approver(Some(Arc::new(ElicitationApprover::new(
                peer.clone(),
                self.inner.origins.clone(),
            ))));
            engine.set_no_approver_reason(None);
        } else {
            engine.set_no_approver_reason(Some(cannot_ask_sentence(&request.capabilities)));
        }
    }

    /// Unbinds the client's approver: the connection is over.
    pub(crate) fn unbind_approver(&self) {
        self.inner.session.approval().set_approver(None);
    }

    fn scheduler(&self) -> Scheduler {
        self.inner
            .scheduler
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Hands `call` to the scheduler once every request that arrived before
    /// it has been handed over.
    async fn submit(
        &self,
        call: Call<agentcore_stages::Unvalidated>,
        ticket: Option<&Ticket>,
    ) -> Result<ResponseFuture, SchedulerError> {
        if let Some(ticket) = ticket {
            ticket.turn().await;
        }
        let mut scheduler = self.scheduler();
        let submitted = match scheduler.ready().await {
            Ok(ready) => Ok(ready.call(call)),
            Err(err) => Err(err),
        };
        if let Some(ticket) = ticket {
            ticket.release();
        }
        submitted
    }

    async fn run_call(
        &self,
        request: CallToolRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let _in_flight = InFlight::enter(&self.inner.in_flight);
        let ticket = context.extensions.remove::<Ticket>();
        let cancellation = Cancellation::new();
        let (updates, mut progress_rx) = mpsc::unbounded_channel::<Value>();
        let sink = EventSink::from_fn(move |event| {
            if let Event::ToolExecUpdate {
                kind: UpdateKind::Progress,
                payload,
                ..
            } = event
            {
                let _ = updates.send(payload);
            }
        });
        let args = request
            .arguments
            .map_or_else(|| Value::Object(Map::new()), Value::Object);
        // The id the client gave, not the transport's own (mcp/stdio.rs).
        let id = match context.extensions.remove::<ClientRequestId>() {
            Some(ClientRequestId(id)) => id,
            None => context.id.clone(),
        };
        let call_id = call_id(&id);
        let _origin = self.inner.origins.enter(&call_id, context.id.clone());
        let call = Call::new(call_id.clone(), request.name.into_owned(), args)
            .with_sink(sink)
            .with_cancellation(cancellation.clone());

        let tool = call.tool_name().to_owned();
        let submitted = tokio::select! {
            biased;
            () = context.ct.cancelled() => return call_tool_result(&cancelled_before_start(call_id, tool)),
            submitted = self.submit(call, ticket.as_ref()) => submitted,
        };
        let pending = submitted.map_err(scheduler_error)?;

        let mut progress = Progress {
            peer: &context.peer,
            token: context.meta.get_progress_token(),
            count: 0,
        };
        let mut pending = pin!(pending);
        let result = loop {
            tokio::select! {
                result = &mut pending => break result,
                () = context.ct.cancelled(), if !cancellation.is_cancelled() => {
                    // The client's notifications/cancelled: stop the call
                    // (bash kills its process group) and let it end.
                    cancellation.cancel(CancelReason::Abort);
                }
                Some(payload) = progress_rx.recv() => progress.report(payload).await,
            }
        };
        // Updates come before the End, so whatever is left was sent before
        // the result: deliver it first.
        while let Ok(payload) = progress_rx.try_recv() {
            progress.report(payload).await;
        }
        let result = result.map_err(scheduler_error)?;
        call_tool_result(&result)
    }
}

/// What the client (and its model) is told about this server: the
/// workspace and how commands are confined.
fn instructions(session: &Session) -> String {
    format!(
        "agentcore runs tool calls in the workspace {}. Sandbox: {}.",
        session.workspace().root().display(),
        session.sandbox_summary()
    )
}

impl ServerHandler for McpServer {
    // Logging is declared for the job exits (see `forward_job_exits`).
    #[allow(deprecated)]
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_logging()
                .build(),
        );
        info.server_info = Implementation::new("agentcore", env!("CARGO_PKG_VERSION"));
        info.instructions = Some(instructions(&self.inner.session));
        info
    }

    /// Answers the first `initialize` (negotiating the protocol version
    /// as rmcp does) and refuses any later one: a connection is initialized
    /// once, and a second handshake would replace what the client declared
    /// in the first.
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        if self.inner.initialized.swap(true, Ordering::AcqRel) {
            return Err(ErrorData::invalid_request(
                "Invalid Request: the connection is already initialized. Send initialize once, \
                 as the first request of a connection; open a new connection to start over.",
                None,
            ));
        }
        context.peer.set_peer_info(request.clone());
        self.bind_approver(&request, &context.peer);
        forward_job_exits(
            self.inner.session.jobs().exits(),
            context.peer.clone(),
            self.inner.job_logs.clone(),
        );
        self.negotiate_initialize(&request)
    }

    /// `logging/setLevel`: job exits are sent at level `info`, so only while
    /// the level set is `debug`, `info` or unset.
    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        use rmcp::model::LoggingLevel;
        let info_shown = matches!(request.level, LoggingLevel::Debug | LoggingLevel::Info);
        self.inner.job_logs.store(info_shown, Ordering::Release);
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.inner.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.run_call(request, context).await.map(Into::into)
    }
}

/// Sends each background job's end to the client as a logging message
/// (`notifications/message`, level `info`, logger `agentcore.jobs`, data
/// `{"type":"job_exit","job_id":…,"status":…,"command":…}`), until the
/// connection or the session is gone.
// MCP logging is deprecated by SEP-2577 (rmcp warns); the issue asks for
// job exits as logging messages, which clients of today's protocol show.
#[allow(deprecated)]
fn forward_job_exits(
    mut exits: tokio::sync::broadcast::Receiver<crate::tools::bash::JobExit>,
    peer: Peer<RoleServer>,
    enabled: Arc<AtomicBool>,
) {
    use tokio::sync::broadcast::error::RecvError;
    tokio::spawn(async move {
        loop {
            let exit = match exits.recv().await {
                Ok(exit) => exit,
                Err(RecvError::Lagged(_)) => continue,
                Err(RecvError::Closed) => return,
            };
            if !enabled.load(Ordering::Acquire) {
                continue;
            }
            // The library's event, as `agentcore run` writes it.
            let Ok(data) = serde_json::to_value(agentcore_stages::Event::from(exit)) else {
                continue;
            };
            let message = rmcp::model::LoggingMessageNotificationParam::new(
                rmcp::model::LoggingLevel::Info,
                data,
            )
            .with_logger("agentcore.jobs");
            if peer.notify_logging_message(message).await.is_err() {
                return;
            }
        }
    });
}

/// Sends tool progress as `notifications/progress` when the client asked
/// for it with a progress token.
struct Progress<'a> {
    peer: &'a Peer<RoleServer>,
    token: Option<ProgressToken>,
    count: u64,
}

impl Progress<'_> {
    async fn report(&mut self, payload: Value) {
        let Some(token) = &self.token else {
            return;
        };
        self.count += 1;
        let param = ProgressNotificationParam::new(token.clone(), self.count as f64)
            .with_message(progress_message(payload));
        // A client that went away cannot be told; the call goes on.
        let _ = self.peer.notify_progress(param).await;
    }
}

/// A progress payload as a message: bash's update ([`BashProgress`]) as its
/// output; another tool's payload: a string as is, an object's `text` or
/// `output` field, anything else as JSON text.
pub(crate) fn progress_message(payload: Value) -> String {
    if let Ok(update) = BashProgress::deserialize(&payload) {
        return update.output;
    }
    match payload {
        Value::String(text) => text,
        Value::Object(mut fields) => {
            for key in ["text", "output"] {
                if let Some(Value::String(text)) = fields.remove(key) {
                    return text;
                }
            }
            Value::Object(fields).to_string()
        }
        other => other.to_string(),
    }
}

/// The `CallToolResult` of one call as rmcp's type: what
/// [`message::mcp::call_tool_result`] writes, the one place that shapes it.
fn call_tool_result(answer: &impl ToolAnswer) -> Result<CallToolResult, ErrorData> {
    serde_json::from_value(message::mcp::call_tool_result(answer)).map_err(|err| {
        ErrorData::internal_error(format!("the tool result could not be sent: {err}"), None)
    })
}

/// The answer to a call the client cancelled before the scheduler took it:
/// the cancelled text, as an error.
fn cancelled_before_start(call_id: String, tool: String) -> ToolResultMessage {
    ToolResultMessage {
        role: "tool",
        call_id,
        tool,
        content: vec![Content::text(texts::CANCELLED)],
        is_error: true,
    }
}

fn scheduler_error(err: SchedulerError) -> ErrorData {
    ErrorData::internal_error(err.to_string(), None)
}

/// The pipeline's call id for a JSON-RPC request id.
fn call_id(id: &RequestId) -> String {
    match id {
        NumberOrString::Number(n) => n.to_string(),
        NumberOrString::String(s) => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Bash's typed update is its output; another payload is read the
    /// generic way, `text` before `output`.
    #[test]
    fn progress_messages_read_bash_updates_typed() {
        let update =
            json!({"output": "step 2", "omitted_bytes": 0, "total_bytes": 6, "total_lines": 1});
        assert_eq!(progress_message(update), "step 2");
        let both = json!({"text": "a", "output": "b", "omitted_bytes": 0, "total_bytes": 1, "total_lines": 1});
        assert_eq!(progress_message(both), "a");
        assert_eq!(progress_message(json!({"output": "b"})), "b");
        assert_eq!(progress_message(json!("plain")), "plain");
        assert_eq!(
            progress_message(json!({"progress": 2})),
            r#"{"progress":2}"#
        );
    }
}
