//! `agentcore mcp`: the built-in tools served over MCP on stdio.

use std::process::ExitCode;

use super::args::McpArgs;
use super::run::{Signals, start_session};

/// `agentcore mcp`: serves the built-in tools on stdin/stdout.
///
/// The workspace is `--root` (default: the current directory), the
/// approval mode `--mode` (default: `default`, where "ask" is a deny whose
/// reason says approval was required) and `--policy` a TOML policy file.
/// When the client declares elicitation, "ask" goes to the person through
/// it, unanswered for `--ask-timeout` seconds (default 120) meaning deny.
/// Exit status 2, with a message on stderr, when the session cannot start
/// (bad policy, unusable root); 0 when the client closed the connection.
///
/// The breaker that disables a tool after consecutive failures is off: an
/// MCP connection has no user prompt to reset it, so a tripped tool would
/// stay disabled for the rest of the connection.
pub async fn serve_stdio(args: McpArgs) -> ExitCode {
    let session = match start_session("agentcore mcp", &args.session, |config| {
        config.max_tool_errors = 0;
        config.ask_timeout = std::time::Duration::from_secs(args.ask_timeout);
    })
    .await
    {
        Ok(session) => session,
        Err(message) => {
            eprintln!("agentcore mcp: {message}");
            return ExitCode::from(2);
        }
    };
    let signals = match Signals::new() {
        Ok(signals) => signals,
        Err(err) => {
            eprintln!("agentcore mcp: cannot watch for SIGTERM, SIGINT and SIGHUP: {err}");
            return ExitCode::from(1);
        }
    };
    let signalled = std::sync::Arc::new(std::sync::atomic::AtomicU8::new(0));
    let stop = {
        let signalled = signalled.clone();
        async move {
            let signal = signals.next().await;
            signalled.store(signal, std::sync::atomic::Ordering::SeqCst);
        }
    };
    let (reader, writer) = rmcp::transport::stdio_pipes();
    match agentcore::mcp::serve_until(session, reader, writer, stop).await {
        Ok(()) => match signalled.load(std::sync::atomic::Ordering::SeqCst) {
            0 => ExitCode::SUCCESS,
            signal => ExitCode::from(128 + signal),
        },
        Err(err) => {
            eprintln!("agentcore mcp: {err}");
            ExitCode::from(1)
        }
    }
}
