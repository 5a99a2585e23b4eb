//! The stdio transport to a mounted MCP server's process: newline-delimited
//! JSON-RPC, each line at most [`MAX_LINE_BYTES`].
//!
//! rmcp's child-process transport drops a line over its cap without a word,
//! so the call it answered waited out `call_timeout_secs`. Here the answer's
//! id is found while the line is dropped (a scan keeping a few bytes), and
//! the call fails at once with an error naming the server and the size.
//! Lines written are escaped as every line agentcore writes
//! ([`to_line_vec`]).

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{ErrorCode, ErrorData, JsonRpcError, JsonRpcMessage, JsonRpcVersion2_0};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::json;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout};

use crate::limits::input::{MAX_LINE_BYTES, MAX_LINE_MIB};
use crate::message::jsonl::{Line, LineReader};
use crate::message::jsonrpc::IdScan;
use crate::message::line::to_line_vec;

/// The marker in the `data` of the error standing for an answer too long
/// to read.
pub(crate) const TOO_LONG: &str = "agentcore_answer_too_long";

/// How long a closing server gets to exit after its stdin is closed, and
/// again after SIGTERM.
const EXIT_WAIT: Duration = Duration::from_secs(3);

/// The connection to one server process.
pub(crate) struct ChildStdio {
    server: String,
    child: Child,
    lines: LineReader<BufReader<ChildStdout>>,
    scan: IdScan,
    stdin: Arc<tokio::sync::Mutex<Option<ChildStdin>>>,
}

impl ChildStdio {
    /// Starts `command` with piped stdin, stdout and stderr (killed when
    /// dropped); the transport and the server's stderr.
    pub(crate) fn spawn(
        server: &str,
        mut command: tokio::process::Command,
    ) -> std::io::Result<(Self, Option<ChildStderr>)> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn()?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(std::io::Error::other(
                "the server's stdin or stdout is missing",
            ));
        };
        let stderr = child.stderr.take();
        Ok((
            Self {
                server: server.to_owned(),
                child,
                lines: LineReader::new(BufReader::new(stdout), MAX_LINE_BYTES),
                scan: IdScan::default(),
                stdin: Arc::new(tokio::sync::Mutex::new(Some(stdin))),
            },
            stderr,
        ))
    }

    /// The error answering request `id` in place of a line of `len` bytes.
    fn too_long(&self, id: rmcp::model::RequestId, len: u64) -> RxJsonRpcMessage<RoleClient> {
        let message = format!(
            "MCP server {:?} answered with a message of {len} bytes, over the limit of \
             {MAX_LINE_BYTES} bytes ({MAX_LINE_MIB} MiB) a message may have, so the answer \
             was dropped; ask for less (a narrower query, a smaller page) or use another tool",
            self.server
        );
        JsonRpcMessage::Error(JsonRpcError {
            jsonrpc: JsonRpcVersion2_0,
            id: Some(id),
            error: ErrorData::new(
                ErrorCode::INTERNAL_ERROR,
                message,
                Some(json!({TOO_LONG: len})),
            ),
        })
    }
}

impl Transport<RoleClient> for ChildStdio {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let stdin = self.stdin.clone();
        async move {
            let mut bytes = to_line_vec(&item).map_err(std::io::Error::from)?;
            bytes.push(b'\n');
            let mut stdin = stdin.lock().await;
            let Some(stdin) = stdin.as_mut() else {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::NotConnected,
                    "the connection is closed",
                ));
            };
            stdin.write_all(&bytes).await?;
            stdin.flush().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let scan = &mut self.scan;
            let line = self.lines.next(&mut |bytes| scan.feed(bytes)).await;
            match line {
                Ok(Line::End) | Err(_) => return None,
                Ok(Line::TooLong { len }) => {
                    // An answer names the call waiting for it; anything
                    // else that long has no one to tell.
                    if let Some(id) = self.scan.take_answered() {
                        return Some(self.too_long(id, len));
                    }
                }
                Ok(Line::Text(bytes)) => {
                    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
                    if bytes.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    // A line that is not a message is skipped, as rmcp's
                    // own transport does (answering it could start an
                    // exchange of errors).
                    if let Ok(message) = serde_json::from_slice(bytes) {
                        return Some(message);
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // Closing stdin asks the server to exit; then SIGTERM; then SIGKILL.
        drop(self.stdin.lock().await.take());
        if tokio::time::timeout(EXIT_WAIT, self.child.wait())
            .await
            .is_ok()
        {
            return Ok(());
        }
        if let Some(pid) = self.child.id().and_then(|pid| i32::try_from(pid).ok()) {
            if let Some(pid) = rustix::process::Pid::from_raw(pid) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
            }
            if tokio::time::timeout(EXIT_WAIT, self.child.wait())
                .await
                .is_ok()
            {
                return Ok(());
            }
        }
        self.child.kill().await
    }
}
