//! The stdio transport of `agentcore mcp`: newline-delimited JSON-RPC with
//! every malformed message answered.
//!
//! rmcp's own stdio transport drops what it cannot parse without a word:
//! invalid JSON, JSON nested past serde_json's recursion limit, bytes that
//! are not UTF-8 and lines over its 16 MiB cap all got no reply, and the
//! client waited forever. This transport reads each line itself and lets
//! only well-formed messages through to rmcp; it answers the rest with the
//! JSON-RPC error for them:
//!
//! - not UTF-8 or not JSON: parse error `-32700` with `"id": null`;
//! - nested deeper than 128 levels (serde_json's recursion limit): `-32700`
//!   with the request's id when its top level named one;
//! - a line over [`MAX_LINE_BYTES`]: invalid request `-32600`, dropped up to
//!   its newline without being kept, with the request's id when its top
//!   level named one (found by a scan that keeps a few bytes);
//! - more than 100,000 JSON values (a 16 MiB line of `[0,0,…]` cost 1.6 GB
//!   to parse): `-32600`, with the request's id;
//! - JSON that is not a JSON-RPC 2.0 message (a batch array, a non-object,
//!   a bad `jsonrpc`, `id` or `method`): `-32600`;
//! - a request whose id is already in use by a request in flight: `-32600`
//!   with that id;
//! - a standard method whose params do not fit, among them `tools/call`
//!   without `params` or with `arguments` that are not an object:
//!   invalid params `-32602` (rmcp would take it for an unknown custom
//!   method and answer `-32601`).
//!
//! Requests go on to rmcp under ids of the transport's own numbering and
//! their responses come back under the client's ids. rmcp keys requests in
//! flight by id, so a client reusing the id of a request it cancelled while
//! that call still runs would otherwise get the old call's response, or
//! none. The client's id stays on a `tools/call` (as [`ClientRequestId`])
//! for the pipeline's call id.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use rmcp::RoleServer;
use rmcp::model::{ClientRequest, JsonRpcMessage, NumberOrString, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

use crate::limits::input::{MAX_DEPTH, MAX_LINE_BYTES, MAX_LINE_MIB, MAX_VALUES};
use crate::message::json_kind as kind;
use crate::message::jsonl::{Line, LineReader, Structure, structure};
use crate::message::jsonrpc::{IdScan, exact_id, scanned_id};
use crate::message::line::to_line_vec;

/// JSON-RPC's parse error.
const PARSE_ERROR: i32 = -32700;
/// JSON-RPC's invalid request.
const INVALID_REQUEST: i32 = -32600;
/// JSON-RPC's invalid params.
const INVALID_PARAMS: i32 = -32602;

/// The output buffer's capacity kept after a large message.
const KEEP_CAPACITY: usize = 64 * 1024;

/// The request methods of the MCP specification. One of them whose params
/// do not have the specified shape is invalid params, not an unknown method.
const STANDARD_REQUESTS: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "resources/templates/list",
    "subscriptions/listen",
    "tools/call",
    "tools/list",
];

/// The id a client gave a `tools/call`, in the request's extensions (rmcp
/// hands them to the handler), since rmcp sees the transport's own id.
#[derive(Clone, Debug)]
pub(crate) struct ClientRequestId(pub(crate) RequestId);

/// Newline-delimited JSON-RPC over a reader and a writer, for the server
/// side; see the module documentation.
pub(crate) struct Framed<R, W> {
    lines: LineReader<BufReader<R>>,
    /// Looks for the id of a line over the cap as it is dropped.
    scan: IdScan,
    out: Arc<tokio::sync::Mutex<Out<W>>>,
    ids: Arc<Mutex<Ids>>,
    /// Our own replies, not yet handed to `out`.
    replies: Vec<Vec<u8>>,
    /// `out` may hold bytes of our replies not yet written.
    unflushed: bool,
}

impl<R, W> Framed<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin,
{
    /// A transport reading messages from `reader` and writing to `writer`.
    pub(crate) fn new(reader: R, writer: W) -> Self {
        Self {
            lines: LineReader::new(BufReader::new(reader), MAX_LINE_BYTES),
            scan: IdScan::default(),
            out: Arc::new(tokio::sync::Mutex::new(Out {
                writer: Some(writer),
                buf: Vec::new(),
                written: 0,
            })),
            ids: Arc::new(Mutex::new(Ids::default())),
            replies: Vec::new(),
            unflushed: false,
        }
    }

    /// Writes our pending replies. Cancel-safe: what is not written yet
    /// stays in `self.replies` or in `out`.
    async fn flush_replies(&mut self) -> std::io::Result<()> {
        if self.replies.is_empty() && !self.unflushed {
            return Ok(());
        }
        let mut out = self.out.lock().await;
        for reply in self.replies.drain(..) {
            out.push(&reply);
        }
        self.unflushed = true;
        out.flush().await?;
        self.unflushed = false;
        Ok(())
    }
}

impl<R, W> Transport<RoleServer> for Framed<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        // The id is translated now, in the order rmcp sends.
        let item = outgoing(&self.ids, item);
        let out = self.out.clone();
        async move {
            let Some(item) = item else {
                return Ok(());
            };
            // U+2028 and U+2029 escaped: line splitters break lines at them.
            let bytes = to_line_vec(&item).map_err(std::io::Error::from)?;
            let mut out = out.lock().await;
            out.push(&bytes);
            out.flush().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        // Cancel-safe: the line reader keeps its progress, a verdict is
        // recorded (ids, replies) without an await, and replies are written
        // by `flush_replies`, which loses nothing when dropped.
        loop {
            if let Err(err) = self.flush_replies().await {
                eprintln!(
                    "agentcore mcp: cannot write to the client ({err}); closing the connection"
                );
                return None;
            }
            let scan = &mut self.scan;
            let line = self.lines.next(&mut |bytes| scan.feed(bytes)).await;
            let verdict = match line {
                Ok(Line::End) => return None,
                Err(err) => {
                    eprintln!(
                        "agentcore mcp: cannot read from the client ({err}); closing the connection"
                    );
                    return None;
                }
                Ok(Line::TooLong { len }) => {
                    let id = self.scan.take();
                    Verdict::Reply(error_reply(
                        id.as_ref(),
                        INVALID_REQUEST,
                        format!(
                            "Invalid Request: the message is {len} bytes long, over the limit of \
                             {MAX_LINE_BYTES} bytes ({MAX_LINE_MIB} MiB), and was skipped. Send smaller \
                             messages."
                        ),
                    ))
                }
                Ok(Line::Text(bytes)) => judge(bytes, &self.ids),
            };
            match verdict {
                Verdict::Forward(message) => return Some(*message),
                Verdict::Reply(reply) => self.replies.push(reply),
                Verdict::Skip => {}
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        let mut out = self.out.lock().await;
        let flushed = out.flush().await;
        out.writer = None;
        flushed
    }
}

/// The writer and the bytes not yet written to it. A message goes into
/// `buf` whole, under the lock, so messages never interleave; whoever holds
/// the lock next writes on from `written`.
struct Out<W> {
    writer: Option<W>,
    buf: Vec<u8>,
    written: usize,
}

impl<W: AsyncWrite + Unpin> Out<W> {
    fn push(&mut self, message: &[u8]) {
        self.buf.extend_from_slice(message);
        self.buf.push(b'\n');
    }

    /// Writes what is buffered. Cancel-safe: a write either happened (and
    /// `written` counts it) or did not.
    async fn flush(&mut self) -> std::io::Result<()> {
        let Some(writer) = self.writer.as_mut() else {
            self.buf.clear();
            self.written = 0;
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotConnected,
                "the connection is closed",
            ));
        };
        while self.written < self.buf.len() {
            let n = writer.write(&self.buf[self.written..]).await?;
            if n == 0 {
                return Err(std::io::ErrorKind::WriteZero.into());
            }
            self.written += n;
        }
        self.buf.clear();
        self.written = 0;
        if self.buf.capacity() > KEEP_CAPACITY {
            self.buf.shrink_to(KEEP_CAPACITY);
        }
        writer.flush().await
    }
}

/// Requests in flight: the client's id and the id rmcp knows them by.
#[derive(Debug, Default)]
struct Ids {
    /// The last id handed out.
    last: i64,
    by_client: HashMap<RequestId, RequestId>,
    by_inner: HashMap<RequestId, RequestId>,
    /// The ids of our requests to the client not answered yet: an answer
    /// must name one of them exactly, and only once.
    asked: std::collections::HashSet<RequestId>,
}

fn lock(ids: &Mutex<Ids>) -> MutexGuard<'_, Ids> {
    // Plain map updates: a panic elsewhere leaves them consistent.
    ids.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A message to the client with the client's id back on a response; `None`
/// for a response to a request the client cancelled (rmcp drops those too).
fn outgoing(
    ids: &Mutex<Ids>,
    mut item: TxJsonRpcMessage<RoleServer>,
) -> Option<TxJsonRpcMessage<RoleServer>> {
    let id = match &mut item {
        JsonRpcMessage::Response(response) => &mut response.id,
        JsonRpcMessage::Error(error) => match error.id.as_mut() {
            Some(id) => id,
            None => return Some(item),
        },
        JsonRpcMessage::Request(request) => {
            // A question to the client: its answer must name this id exactly.
            lock(ids).asked.insert(request.id.clone());
            return Some(item);
        }
        JsonRpcMessage::Notification(_) => return Some(item),
    };
    let mut ids = lock(ids);
    let client = ids.by_inner.remove(id)?;
    ids.by_client.remove(&client);
    *id = client;
    Some(item)
}

/// What to do with one line.
enum Verdict {
    /// Hand it to rmcp.
    Forward(Box<RxJsonRpcMessage<RoleServer>>),
    /// Answer it ourselves with these bytes (one JSON-RPC error).
    Reply(Vec<u8>),
    /// Nothing: a blank line, or a notification or response that cannot be
    /// used (they get no reply).
    Skip,
}

/// A JSON-RPC error response; `"id": null` when the request's id is not
/// known.
fn error_reply(id: Option<&RequestId>, code: i32, message: String) -> Vec<u8> {
    let id = id.map_or(Value::Null, |id| id.clone().into_json_value());
    let reply = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    to_line_vec(&reply).unwrap_or_default()
}

/// Judges one line (newline excluded) and, for a request it lets through,
/// records its ids.
fn judge(line: &[u8], ids: &Mutex<Ids>) -> Verdict {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Skip;
    }
    let parse_error = |message: String| Verdict::Reply(error_reply(None, PARSE_ERROR, message));
    let Ok(text) = std::str::from_utf8(line) else {
        return parse_error(
            "Parse error: the message is not valid UTF-8. Send each JSON-RPC message as \
             UTF-8 JSON text on one line."
                .to_owned(),
        );
    };
    // Well-formed JSON refused for its structure: the top level's id can be
    // trusted, so the request the client waits on is answered.
    let too_deep = || {
        Verdict::Reply(error_reply(
            scanned_id(line).as_ref(),
            PARSE_ERROR,
            format!(
                "Parse error: the message nests arrays and objects more than {MAX_DEPTH} levels \
                 deep. Send a message with less nesting."
            ),
        ))
    };
    match structure(line) {
        Structure::TooDeep => return too_deep(),
        Structure::TooManyValues => {
            return Verdict::Reply(error_reply(
                scanned_id(line).as_ref(),
                INVALID_REQUEST,
                format!(
                    "Invalid Request: the message holds more than {MAX_VALUES} JSON values. \
                     Send fewer values (a tool's arguments need a handful)."
                ),
            ));
        }
        Structure::Fine => {}
    }
    let value: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(err) if err.to_string().starts_with("recursion limit exceeded") => return too_deep(),
        Err(err) => {
            return parse_error(format!(
                "Parse error: the message is not valid JSON ({err}). Send each JSON-RPC \
                 message as one JSON object on one line."
            ));
        }
    };
    let invalid = |id: Option<&RequestId>, message: &str| {
        Verdict::Reply(error_reply(
            id,
            INVALID_REQUEST,
            format!("Invalid Request: {message}"),
        ))
    };
    let object = match value {
        Value::Object(object) => object,
        Value::Array(_) => {
            return invalid(
                None,
                "batches are not supported. Send each JSON-RPC message on its own line.",
            );
        }
        _ => return invalid(None, "a JSON-RPC message is a JSON object."),
    };
    if !object.contains_key("method")
        && (object.contains_key("result") || object.contains_key("error"))
    {
        // A response never gets a reply, whatever is wrong with it: a peer
        // answering our error replies with errors of its own would
        // otherwise keep both sides busy forever. A usable one is a
        // response to a request of ours, which rmcp matches.
        // It must name a request of ours exactly, type and value: rmcp
        // reads `"0"` and `0.0` as ids too, and would take them for the
        // answer to request `0`.
        let Some(asked) = object.get("id").and_then(exact_id) else {
            return Verdict::Skip;
        };
        if !lock(ids).asked.remove(&asked) {
            return Verdict::Skip;
        }
        return match serde_json::from_value(Value::Object(object)) {
            Ok(message @ JsonRpcMessage::Response(_)) => Verdict::Forward(Box::new(message)),
            Ok(JsonRpcMessage::Error(error)) if error.id.is_some() => {
                Verdict::Forward(Box::new(JsonRpcMessage::Error(error)))
            }
            // No id: nothing to match it to.
            _ => Verdict::Skip,
        };
    }
    let id = match object.get("id") {
        None => None,
        Some(id) => match serde_json::from_value::<RequestId>(id.clone()) {
            Ok(id) => Some(id),
            Err(_) => return invalid(None, "\"id\" must be a string or an integer."),
        },
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid(id.as_ref(), "\"jsonrpc\" must be \"2.0\".");
    }
    let method = match object.get("method") {
        None => None,
        Some(Value::String(method)) => Some(method.clone()),
        Some(_) => return invalid(id.as_ref(), "\"method\" must be a string."),
    };
    match (method, id) {
        (Some(method), Some(id)) => judge_request(object, &method, id, ids),
        (Some(method), None) => judge_notification(object, &method, ids),
        (None, id) => invalid(
            id.as_ref(),
            "a message needs a \"method\" (a request or a notification), or a \"result\" or \
             an \"error\" and the \"id\" it answers (a response).",
        ),
    }
}

fn judge_request(
    mut object: Map<String, Value>,
    method: &str,
    client: RequestId,
    ids: &Mutex<Ids>,
) -> Verdict {
    let invalid_params = |message: String| {
        Verdict::Reply(error_reply(
            Some(&client),
            INVALID_PARAMS,
            format!("Invalid params: {message}"),
        ))
    };
    let mut ids = lock(ids);
    if ids.by_client.contains_key(&client) {
        return Verdict::Reply(error_reply(
            Some(&client),
            INVALID_REQUEST,
            format!(
                "Invalid Request: request id {} is already in use by a request in flight. Give \
                 each request an id of its own.",
                client.clone().into_json_value()
            ),
        ));
    }
    if method == "tools/call"
        && let Err(message) = check_call_params(object.get("params"))
    {
        return invalid_params(message);
    }
    let inner = NumberOrString::Number(ids.last.wrapping_add(1));
    object.insert("id".to_owned(), inner.clone().into_json_value());
    let mut message: RxJsonRpcMessage<RoleServer> =
        match serde_json::from_value(Value::Object(object)) {
            Ok(message) => message,
            Err(err) if STANDARD_REQUESTS.contains(&method) => {
                return invalid_params(format!("the params of {method} do not fit it ({err})."));
            }
            Err(err) => {
                return Verdict::Reply(error_reply(
                    Some(&client),
                    INVALID_REQUEST,
                    format!("Invalid Request: {err}."),
                ));
            }
        };
    let JsonRpcMessage::Request(request) = &mut message else {
        return Verdict::Reply(error_reply(
            Some(&client),
            INVALID_REQUEST,
            "Invalid Request: the message is not a request.".to_owned(),
        ));
    };
    match &mut request.request {
        // A standard method that did not parse as itself fell through to
        // the catch-all for custom methods.
        ClientRequest::CustomRequest(custom)
            if STANDARD_REQUESTS.contains(&custom.method.as_str()) =>
        {
            return invalid_params(format!(
                "the params of {method} do not have the shape the MCP specification gives them."
            ));
        }
        ClientRequest::CallToolRequest(call) => {
            call.extensions.insert(ClientRequestId(client.clone()));
        }
        _ => {}
    }
    ids.last = ids.last.wrapping_add(1);
    ids.by_inner.insert(inner.clone(), client.clone());
    ids.by_client.insert(client, inner);
    Verdict::Forward(Box::new(message))
}

/// `tools/call`'s params: an object with a string `name` and, when given,
/// an object of `arguments`.
fn check_call_params(params: Option<&Value>) -> Result<(), String> {
    const SHAPE: &str = "{\"name\": the tool's name, \"arguments\": {the tool's arguments}}";
    let Some(params) = params else {
        return Err(format!("tools/call needs \"params\": {SHAPE}."));
    };
    let Value::Object(params) = params else {
        return Err(format!(
            "the params of tools/call must be an object, not {}: {SHAPE}.",
            kind(params)
        ));
    };
    match params.get("name") {
        Some(Value::String(_)) => {}
        None => {
            return Err(
                "\"name\" is missing from tools/call's params: give the name of a tool that \
                 tools/list lists."
                    .to_owned(),
            );
        }
        Some(other) => {
            return Err(format!(
                "\"name\" in tools/call's params must be a string, not {}.",
                kind(other)
            ));
        }
    }
    match params.get("arguments") {
        None | Some(Value::Null | Value::Object(_)) => Ok(()),
        Some(other) => Err(format!(
            "\"arguments\" in tools/call's params must be an object of the tool's arguments, \
             not {}. Send {{}} for no arguments.",
            kind(other)
        )),
    }
}

fn judge_notification(mut object: Map<String, Value>, method: &str, ids: &Mutex<Ids>) -> Verdict {
    if method == "notifications/cancelled" {
        let target = object
            .get("params")
            .and_then(|params| params.get("requestId"))
            .map(|id| serde_json::from_value::<RequestId>(id.clone()));
        match target {
            None => {}
            // Nothing to cancel (a notification gets no reply).
            Some(Err(_)) => return Verdict::Skip,
            Some(Ok(client)) => {
                let mut ids = lock(ids);
                // A request that already ended, or never was: forwarding the
                // client's id could name another request in rmcp.
                let Some(inner) = ids.by_client.remove(&client) else {
                    return Verdict::Skip;
                };
                // The client gave the request up: its id is free again, and
                // a late response is not sent.
                ids.by_inner.remove(&inner);
                if let Some(Value::Object(params)) = object.get_mut("params") {
                    params.insert("requestId".to_owned(), inner.into_json_value());
                }
            }
        }
    }
    match serde_json::from_value(Value::Object(object)) {
        Ok(message) => Verdict::Forward(Box::new(message)),
        Err(_) => Verdict::Skip,
    }
}

/// The JSON-RPC error answering the body of an HTTP POST that cannot be
/// handed to rmcp (which would answer 415 Unsupported Media Type with a
/// line of text), or `None` when it can. The same judgement as a stdio
/// line's: `-32700` for a body that is empty, not UTF-8 or not JSON;
/// `-32600` for a batch, a non-object, a message that is not JSON-RPC 2.0,
/// and an answer whose id is not written as one of ours could be (a string
/// or an integer); `-32602` for a standard method's params of the wrong
/// shape.
#[cfg(feature = "mcp-http")]
pub(crate) fn http_refusal(body: &[u8]) -> Option<Vec<u8>> {
    let parse_error = |message: &str| Some(error_reply(None, PARSE_ERROR, message.to_owned()));
    if body.iter().all(u8::is_ascii_whitespace) {
        return parse_error(
            "Parse error: the request body is empty. POST one JSON-RPC message as a JSON object.",
        );
    }
    let Ok(text) = std::str::from_utf8(body) else {
        return parse_error(
            "Parse error: the request body is not valid UTF-8. POST one JSON-RPC message as \
             UTF-8 JSON.",
        );
    };
    if structure(body) == Structure::Fine {
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Array(_)) => {
                return Some(error_reply(
                    None,
                    INVALID_REQUEST,
                    "Invalid Request: batches are not supported (MCP removed them in \
                     2025-06-18). POST each JSON-RPC message on its own."
                        .to_owned(),
                ));
            }
            Ok(Value::Object(object))
                if !object.contains_key("method")
                    && (object.contains_key("result") || object.contains_key("error"))
                    && object.get("id").and_then(exact_id).is_none() =>
            {
                return Some(error_reply(
                    None,
                    INVALID_REQUEST,
                    "Invalid Request: an answer must name the id of the request it answers, \
                     exactly as the server wrote it."
                        .to_owned(),
                ));
            }
            Ok(_) => {}
            Err(err) if err.to_string().starts_with("recursion limit exceeded") => {}
            Err(err) => {
                return Some(error_reply(
                    None,
                    PARSE_ERROR,
                    format!(
                        "Parse error: the request body is not valid JSON ({err}). POST one \
                         JSON-RPC message as a JSON object."
                    ),
                ));
            }
        }
    }
    // Structure, shape and params, as for a line (no ids are in flight
    // here: rmcp keeps those of HTTP requests).
    if let Verdict::Reply(reply) = judge(body, &Mutex::new(Ids::default())) {
        return Some(reply);
    }
    match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(body) {
        Ok(_) => None,
        Err(err) => Some(error_reply(
            scanned_id(body).as_ref(),
            INVALID_REQUEST,
            format!("Invalid Request: the message is not one this server can take ({err})."),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(pieces: &[&str]) -> Option<RequestId> {
        let mut scan = IdScan::default();
        for piece in pieces {
            scan.feed(piece.as_bytes());
        }
        scan.take()
    }

    #[test]
    fn the_scan_finds_a_top_level_id_of_a_request_across_pieces() {
        assert_eq!(
            scan(&[r#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"id":7}}"#]),
            Some(NumberOrString::Number(42))
        );
        assert_eq!(
            scan(&[
                r#"{"params": {"id": 1, "x": "\"id\": 9"}, "me"#,
                r#"thod": "x", "i"#,
                r#"d" : "a\"b" }"#
            ]),
            Some(NumberOrString::String("a\"b".into()))
        );
        // The id after a long value still counts.
        let long = format!(
            r#"{{"method":"tools/call","params":{{"arguments":{{"content":"{}"}}}},"id":"late"}}"#,
            "x".repeat(10_000)
        );
        assert_eq!(scan(&[&long]), Some(NumberOrString::String("late".into())));
    }

    #[test]
    fn the_scan_gives_no_id_when_there_is_none_to_give() {
        // A response (no method), a nested id only, an id that is not an id,
        // an array, a cut-off message, a key that only starts with "id".
        for pieces in [
            &[r#"{"id": 1, "result": {}}"#][..],
            &[r#"{"method": "x", "params": {"id": 1}}"#],
            &[r#"{"method": "x", "id": {"a": 1}}"#],
            &[r#"{"method": "x", "id": null}"#],
            &[r#"[{"method": "x", "id": 1}]"#],
            &[r#"{"method": "x", "id"#],
            &[r#"{"method": "x", "idx": 3}"#],
        ] {
            assert_eq!(scan(pieces), None, "{pieces:?}");
        }
        let huge_id = format!(r#"{{"method":"x","id":"{}"}}"#, "9".repeat(1000));
        assert_eq!(scan(&[&huge_id]), None);
    }

    #[test]
    fn the_scan_answers_the_same_whatever_the_pieces() {
        let inputs = [
            r#"{"jsonrpc":"2.0","params":{"x":"a\"b\\","id":3},"id":"q\"1","method":"m"}"#,
            r#"{"params":{"content":"\\\"id\":1,"},"method":"m","id":-12}"#,
            r#"{"method":"m","note":"\\","id":7}"#,
            r#"{"method":"m","id":[1],"x":"id"}"#,
        ];
        for input in inputs {
            let whole = scan(&[input]);
            for size in 1..8 {
                let mut scanner = IdScan::default();
                for piece in input.as_bytes().chunks(size) {
                    scanner.feed(piece);
                }
                assert_eq!(scanner.take(), whole, "{input} in pieces of {size}");
            }
        }
        assert_eq!(
            scan(&[inputs[0]]),
            Some(NumberOrString::String("q\"1".into()))
        );
        assert_eq!(scan(&[inputs[1]]), Some(NumberOrString::Number(-12)));
        assert_eq!(scan(&[inputs[2]]), Some(NumberOrString::Number(7)));
        assert_eq!(scan(&[inputs[3]]), None);
    }

    fn reply_of(verdict: Verdict) -> Value {
        match verdict {
            Verdict::Reply(bytes) => serde_json::from_slice(&bytes).unwrap(),
            Verdict::Forward(message) => panic!("forwarded {message:?}"),
            Verdict::Skip => panic!("skipped"),
        }
    }

    #[test]
    fn malformed_lines_get_the_json_rpc_error_for_them() {
        let ids = Mutex::new(Ids::default());
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        for (line, code) in [
            (b"{nope".to_vec(), PARSE_ERROR),
            (b"\xff\xfe\x00garbage".to_vec(), PARSE_ERROR),
            (deep.into_bytes(), PARSE_ERROR),
            (b"[]".to_vec(), INVALID_REQUEST),
            (br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#.to_vec(), INVALID_REQUEST),
            (b"17".to_vec(), INVALID_REQUEST),
            (br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#.to_vec(), INVALID_REQUEST),
            (br#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#.to_vec(), INVALID_REQUEST),
            (br#"{"jsonrpc":"2.0","id":1,"method":7}"#.to_vec(), INVALID_REQUEST),
            (br#"{"jsonrpc":"2.0","id":1}"#.to_vec(), INVALID_REQUEST),
            (br#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#.to_vec(), INVALID_PARAMS),
            (
                br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":"x"}}"#.to_vec(),
                INVALID_PARAMS,
            ),
            (
                br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":[1]}}"#.to_vec(),
                INVALID_PARAMS,
            ),
            (br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":"x"}"#.to_vec(), INVALID_PARAMS),
        ] {
            let reply = reply_of(judge(&line, &ids));
            assert_eq!(reply["error"]["code"], code, "{}: {reply}", String::from_utf8_lossy(&line[..line.len().min(80)]));
            assert_eq!(reply["jsonrpc"], "2.0");
            assert!(reply.as_object().unwrap().contains_key("id"), "{reply}");
        }
        assert!(lock(&ids).by_client.is_empty());
    }

    #[test]
    fn responses_never_get_a_reply_so_two_peers_cannot_trade_errors_forever() {
        let ids = Mutex::new(Ids::default());
        // Our own error reply, echoed back, and broken responses.
        let echoed = error_reply(None, PARSE_ERROR, "Parse error: x".to_owned());
        for line in [
            echoed,
            br#"{"jsonrpc":"2.0","id":{"x":1},"error":{"code":1,"message":"m"}}"#.to_vec(),
            br#"{"jsonrpc":"1.0","id":1,"result":{}}"#.to_vec(),
            br#"{"id":1,"error":"not an error object"}"#.to_vec(),
        ] {
            assert!(
                matches!(judge(&line, &ids), Verdict::Skip),
                "{}",
                String::from_utf8_lossy(&line)
            );
        }
        // A response to a request of ours goes on.
        lock(&ids).asked.insert(NumberOrString::Number(3));
        let response = br#"{"jsonrpc":"2.0","id":3,"result":{}}"#;
        assert!(matches!(judge(response, &ids), Verdict::Forward(_)));
    }

    #[test]
    fn an_answer_must_name_the_id_of_a_question_exactly_and_once() {
        let ids = Mutex::new(Ids::default());
        lock(&ids).asked.insert(NumberOrString::Number(0));
        lock(&ids).asked.insert(NumberOrString::String("q".into()));
        for forged in [
            br#"{"jsonrpc":"2.0","id":"0","result":{}}"#.as_slice(),
            br#"{"jsonrpc":"2.0","id":0.0,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":0e0,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":"Q","result":{}}"#,
            br#"{"jsonrpc":"2.0","id":[0],"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":"0","error":{"code":1,"message":"m"}}"#,
        ] {
            assert!(
                matches!(judge(forged, &ids), Verdict::Skip),
                "{}",
                String::from_utf8_lossy(forged)
            );
        }
        let zero = br#"{"jsonrpc":"2.0","id":0,"result":{}}"#;
        assert!(matches!(judge(zero, &ids), Verdict::Forward(_)));
        // Answered: a second answer is not taken.
        assert!(matches!(judge(zero, &ids), Verdict::Skip));
        let q = br#"{"jsonrpc":"2.0","id":"q","result":{}}"#;
        assert!(matches!(judge(q, &ids), Verdict::Forward(_)));
    }

    #[test]
    fn a_request_id_in_flight_is_refused_until_its_response_or_cancel() {
        let ids = Mutex::new(Ids::default());
        let request = br#"{"jsonrpc":"2.0","id":"a","method":"tools/list"}"#;
        let Verdict::Forward(first) = judge(request, &ids) else {
            panic!("the first is forwarded")
        };
        let reply = reply_of(judge(request, &ids));
        assert_eq!(reply["id"], "a");
        assert_eq!(reply["error"]["code"], INVALID_REQUEST);

        // The response goes out under the client's id and frees it.
        let JsonRpcMessage::Request(first) = *first else {
            panic!("a request")
        };
        assert_ne!(first.id, NumberOrString::String("a".into()));
        let response: TxJsonRpcMessage<RoleServer> = JsonRpcMessage::error(
            rmcp::ErrorData::internal_error("x", None),
            Some(first.id.clone()),
        );
        let JsonRpcMessage::Error(sent) = outgoing(&ids, response).unwrap() else {
            panic!("an error")
        };
        assert_eq!(sent.id, Some(NumberOrString::String("a".into())));
        let Verdict::Forward(second) = judge(request, &ids) else {
            panic!("the id is free again")
        };
        let JsonRpcMessage::Request(second) = *second else {
            panic!("a request")
        };
        assert_ne!(second.id, first.id, "rmcp never sees an id twice");

        // A cancel frees it as well, and the late response is not sent.
        let cancel =
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}"#;
        let Verdict::Forward(_) = judge(cancel, &ids) else {
            panic!("the cancel goes to rmcp")
        };
        let late: TxJsonRpcMessage<RoleServer> =
            JsonRpcMessage::error(rmcp::ErrorData::internal_error("x", None), Some(second.id));
        assert!(outgoing(&ids, late).is_none());
        assert!(
            matches!(judge(cancel, &ids), Verdict::Skip),
            "nothing left to cancel"
        );
        assert!(matches!(judge(request, &ids), Verdict::Forward(_)));
    }
}
