//! `agentcore mcp`: the built-in tools served over MCP, on stdio or (with
//! `--http`) streamable HTTP.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use agentcore::mcp::http::{BearerToken, HttpOptions, Origin, SessionFactory};
use agentcore::process::TOKEN_ENV;
use agentcore::sandbox::SandboxMode;
use agentcore::session::{SessionConfig, SessionError};

use tokio_util::sync::CancellationToken;

use super::args::McpArgs;
use super::client_gone::ClientGone;
use super::out::errln;
use super::run::{Signals, connect, session_config};
use super::stdin::ThreadStdin;

/// The port of `--http ADDR` without one.
const DEFAULT_PORT: u16 = 8080;

/// The configuration of every session `agentcore mcp` serves, stdio or
/// HTTP: the options', with the breaker off. An MCP connection has no user
/// prompt to reset the breaker, so a tripped tool would stay disabled for
/// the rest of the connection. A question put to the person through the
/// client (elicitation) waits `--ask-timeout` seconds at most. With
/// `--checkpoints`, every call that can write is recorded.
pub(crate) fn mcp_session_config(args: &McpArgs) -> Result<SessionConfig, SessionError> {
    session_config(&args.session, |config| {
        config.max_tool_errors = 0;
        config.ask_timeout = std::time::Duration::from_secs(args.ask_timeout);
        if args.checkpoints {
            config.checkpoints = agentcore::checkpoint::CheckpointConfig::default();
        }
    })
}

/// `agentcore mcp`: stdio, or HTTP with `--http`.
pub async fn serve(args: McpArgs) -> ExitCode {
    match &args.http {
        Some(address) => serve_http(address.clone(), args).await,
        None => serve_stdio(args).await,
    }
}

/// `agentcore mcp`: serves the built-in tools on stdin/stdout.
///
/// The workspace is `--root` (default: the current directory), the
/// approval mode `--mode` (default: `default`, where "ask" is a deny whose
/// reason says approval was required) and `--policy` a TOML policy file.
/// When the client declares elicitation, "ask" goes to the person through
/// it, unanswered for `--ask-timeout` seconds (default 120) meaning deny.
/// Exit status 2, with a message on stderr, when the session cannot start
/// (bad policy, unusable root); 0 when the client closed the connection.
pub async fn serve_stdio(args: McpArgs) -> ExitCode {
    let config = match mcp_session_config(&args) {
        Ok(config) => config,
        Err(message) => {
            errln!("agentcore mcp: {message}");
            return ExitCode::from(2);
        }
    };
    if let Some(notice) = config.all_hooks().notice() {
        errln!("agentcore: {notice}");
    }
    let session = match connect("agentcore mcp", config).await {
        Ok(session) => session,
        Err(message) => {
            errln!("agentcore mcp: {message}");
            return ExitCode::from(2);
        }
    };
    let (stop, signalled) = match stop_on_signals() {
        Ok(stop) => stop,
        Err(code) => return code,
    };
    let (reader, writer) = match stdio() {
        Ok(pair) => pair,
        Err(err) => {
            errln!("agentcore mcp: cannot start reading stdin: {err}");
            return ExitCode::from(1);
        }
    };
    // A client that stops reading (its end of stdout closed) has gone away
    // even if stdin stays open: the session ends then too, quietly.
    let gone = CancellationToken::new();
    let writer = ClientGone::new(writer, gone.clone());
    let stop = {
        let gone = gone.clone();
        async move {
            tokio::select! {
                () = stop => {}
                () = gone.cancelled() => {}
            }
        }
    };
    match agentcore::mcp::serve_until(session, reader, writer, stop).await {
        Ok(()) => match signalled.load(Ordering::SeqCst) {
            0 => ExitCode::SUCCESS,
            signal => ExitCode::from(128 + signal),
        },
        // The handshake's answer found no reader: the same quiet end.
        Err(_) if gone.is_cancelled() => ExitCode::SUCCESS,
        Err(err) => {
            errln!("agentcore mcp: {err}");
            ExitCode::from(1)
        }
    }
}

/// The connection's two ends. Pipes on both sides (how MCP clients start a
/// server) are driven by the reactor (rmcp's `stdio_pipes`), so a signal
/// ends the process while a read waits; anything else (a socket, a file, a
/// terminal) is read on a thread of its own, for the same reason: a read
/// on the runtime's blocking pool would hold the exit until the client
/// closed its end.
#[allow(clippy::type_complexity)]
fn stdio() -> std::io::Result<(
    Box<dyn tokio::io::AsyncRead + Send + Unpin>,
    Box<dyn tokio::io::AsyncWrite + Send + Unpin>,
)> {
    if is_fifo(&std::io::stdin()) && is_fifo(&std::io::stdout()) {
        let (reader, writer) = rmcp::transport::stdio_pipes();
        return Ok((Box::new(reader), Box::new(writer)));
    }
    Ok((Box::new(ThreadStdin::new()?), Box::new(tokio::io::stdout())))
}

/// Whether `stream` is a pipe.
fn is_fifo(stream: &impl std::os::fd::AsFd) -> bool {
    use std::os::unix::fs::FileTypeExt;
    stream
        .as_fd()
        .try_clone_to_owned()
        .map(std::fs::File::from)
        .and_then(|file| file.metadata())
        .is_ok_and(|metadata| metadata.file_type().is_fifo())
}

/// A future that completes on SIGTERM, SIGINT or SIGHUP, and where it
/// stores the signal's number.
fn stop_on_signals() -> Result<(impl Future<Output = ()> + Send + 'static, Arc<AtomicU8>), ExitCode>
{
    let signals = match Signals::new() {
        Ok(signals) => signals,
        Err(err) => {
            errln!("agentcore mcp: cannot watch for SIGTERM, SIGINT and SIGHUP: {err}");
            return Err(ExitCode::from(1));
        }
    };
    let signalled = Arc::new(AtomicU8::new(0));
    let stop = {
        let signalled = signalled.clone();
        async move {
            let signal = signals.next().await;
            signalled.store(signal, Ordering::SeqCst);
        }
    };
    Ok((stop, signalled))
}

/// `agentcore mcp --http ADDR[:PORT]`: one session per MCP session, until
/// SIGTERM, SIGINT or SIGHUP; then every session ends and the exit status
/// is 0. Exit status 2 for bad options (including a non-loopback address
/// without a token), 1 when the address cannot be bound.
async fn serve_http(address: String, args: McpArgs) -> ExitCode {
    let fail = |message: &dyn std::fmt::Display| {
        errln!("agentcore mcp: {message}");
        ExitCode::from(2)
    };
    let config = match mcp_session_config(&args) {
        Ok(config) => config,
        Err(message) => return fail(&message),
    };
    if let Some(notice) = config.all_hooks().notice() {
        errln!("agentcore: {notice}");
    }
    let token = match read_token(&args) {
        Ok(token) => token,
        Err(message) => return fail(&message),
    };
    let mut config = config;
    let mut sandbox = config.sandbox_policy();
    // Commands never read the token (its file is hidden, its variable is
    // not passed on): with it they could use this server, whose approvals
    // they could answer themselves.
    if let Some(file) = &args.token_file {
        sandbox
            .hidden
            .push(std::path::absolute(file).unwrap_or_else(|_| file.clone()));
        if let Ok(real) = std::fs::canonicalize(file) {
            sandbox.hidden.push(real);
        }
    }
    if token.is_none() && sandbox.mode != SandboxMode::Off && sandbox.reaches_host_loopback() {
        return fail(&format!(
            "commands may use the network here ([sandbox] network = \"open\", or an allow list \
             reaching a loopback address), so a confined command \
             could reach this server on loopback and answer its own approval questions; give a \
             token with --token-file FILE or {TOKEN_ENV}, or turn the commands' network off"
        ));
    }
    config.sandbox = Some(sandbox);
    let mut allowed_origins = Vec::new();
    for origin in &args.allow_origin {
        match Origin::parse(origin) {
            Some(parsed) => allowed_origins.push(parsed),
            None => {
                return fail(&format!(
                    "--allow-origin {origin:?} is not an origin; write scheme://host[:port], e.g. https://app.example.com"
                ));
            }
        }
    }
    let mut options = HttpOptions::default();
    options.token = token;
    options.allowed_origins = allowed_origins;
    options.idle_timeout = args.idle_timeout;
    options.max_sessions = args.max_sessions;
    options.max_body_bytes = args.max_body_bytes;
    options.max_connections = args.max_connections;

    let addresses = match resolve(&address).await {
        Ok(addresses) => addresses,
        Err(message) => return fail(&message),
    };
    // Refuse before binding: nothing listens off loopback without a token.
    for candidate in &addresses {
        if let Err(err) = options.validate(*candidate) {
            return fail(&err);
        }
    }
    let listener = match tokio::net::TcpListener::bind(addresses.as_slice()).await {
        Ok(listener) => listener,
        Err(err) => {
            errln!("agentcore mcp: cannot listen on {address}: {err}");
            return ExitCode::from(1);
        }
    };
    let bound = match listener.local_addr() {
        Ok(bound) => bound,
        Err(err) => {
            errln!("agentcore mcp: cannot listen on {address}: {err}");
            return ExitCode::from(1);
        }
    };
    if let Err(err) = options.validate(bound) {
        return fail(&err);
    }
    let (stop, _signalled) = match stop_on_signals() {
        Ok(stop) => stop,
        Err(code) => return code,
    };
    let factory: SessionFactory = Arc::new(move || {
        let config = config.clone();
        Box::pin(async move {
            connect("agentcore mcp", config)
                .await
                .map_err(|err| err.to_string())
        })
    });
    errln!("agentcore mcp: listening on http://{bound}/mcp");
    match agentcore::mcp::http::serve_http(listener, options, factory, stop).await {
        Ok(()) => {
            errln!("agentcore mcp: stopped; every session ended");
            ExitCode::SUCCESS
        }
        Err(err) => {
            errln!("agentcore mcp: {err}");
            ExitCode::from(1)
        }
    }
}

/// The token of `--token-file`, or of `AGENTCORE_MCP_TOKEN`; both at once
/// is refused (which one was meant?).
fn read_token(args: &McpArgs) -> Result<Option<BearerToken>, String> {
    let from_env = std::env::var_os(TOKEN_ENV);
    let (text, source) = match (&args.token_file, from_env) {
        (Some(_), Some(_)) => {
            return Err(format!(
                "both --token-file and {TOKEN_ENV} give a token; give one of them"
            ));
        }
        (Some(path), None) => match std::fs::read_to_string(path) {
            Ok(text) => (text, format!("the token file {}", path.display())),
            Err(err) => {
                return Err(format!(
                    "cannot read the token file {}: {err}",
                    path.display()
                ));
            }
        },
        (None, Some(value)) => match value.into_string() {
            Ok(text) => (text, TOKEN_ENV.to_owned()),
            Err(_) => return Err(format!("{TOKEN_ENV} is not UTF-8 text")),
        },
        (None, None) => return Ok(None),
    };
    BearerToken::new(&text)
        .map(Some)
        .map_err(|err| format!("{source}: {err}"))
}

/// The addresses of `ADDR[:PORT]`: an IP address (`[v6]` with a port), or
/// a host name, with [`DEFAULT_PORT`] when none is given.
async fn resolve(address: &str) -> Result<Vec<SocketAddr>, String> {
    if let Ok(addr) = address.parse::<SocketAddr>() {
        return Ok(vec![addr]);
    }
    let bare = address.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<std::net::IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, DEFAULT_PORT)]);
    }
    let with_port = match address.rsplit_once(':') {
        Some((_, port)) if port.parse::<u16>().is_ok() => address.to_owned(),
        _ => format!("{address}:{DEFAULT_PORT}"),
    };
    let found: Vec<SocketAddr> = tokio::net::lookup_host(&with_port)
        .await
        .map_err(|err| {
            format!("--http {address:?}: cannot resolve it ({err}); write ADDR[:PORT], e.g. 127.0.0.1:8080")
        })?
        .collect();
    if found.is_empty() {
        return Err(format!("--http {address:?} resolves to no address"));
    }
    Ok(found)
}

/// `agentcore mcp login NAME` and `agentcore mcp logout NAME`: exit status
/// 0 when done, 1 when the sign-in (or the deletion) failed, 2 when the
/// policy cannot be read or has no such server.
pub async fn account(action: super::args::McpAction) -> ExitCode {
    use super::args::McpAction;
    let (args, login) = match action {
        McpAction::Login(args) => (args, true),
        McpAction::Logout(args) => (args, false),
    };
    let program = if login {
        "agentcore mcp login"
    } else {
        "agentcore mcp logout"
    };
    let policy = match agentcore::config::Policy::load(&args.policy) {
        Ok(policy) => policy,
        Err(err) => {
            errln!("{program}: {err}");
            return ExitCode::from(2);
        }
    };
    let Some(server) = policy
        .mcp_servers
        .iter()
        .find(|server| server.name == args.name)
    else {
        let names: Vec<&str> = policy.mcp_servers.iter().map(|s| s.name.as_str()).collect();
        errln!(
            "{program}: {} has no [[mcp_servers]] entry named {:?}; its servers: {}",
            args.policy.display(),
            args.name,
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        );
        return ExitCode::from(2);
    };
    if !login {
        return match agentcore::mcp::client::oauth::logout(server) {
            Ok((true, path)) => {
                errln!(
                    "{program}: deleted the tokens of {:?} ({})",
                    server.name,
                    path.display()
                );
                ExitCode::SUCCESS
            }
            Ok((false, _)) => {
                errln!("{program}: no tokens were kept for {:?}", server.name);
                ExitCode::SUCCESS
            }
            Err(err) => {
                errln!("{program}: {err}");
                ExitCode::from(1)
            }
        };
    }
    let sign_in = agentcore::mcp::client::SignIn::browser()
        .with_timeout(std::time::Duration::from_secs(args.timeout));
    let path = match agentcore::mcp::client::oauth::login(server, sign_in.clone()).await {
        Ok(path) => path,
        Err(err) => {
            errln!("{program}: {err}");
            return ExitCode::from(1);
        }
    };
    // The tokens work: the server is mounted with them (a step-up it asks
    // for is signed in to as well).
    let mounted =
        agentcore::mcp::client::mount_with(std::slice::from_ref(server), Some(sign_in)).await;
    let tools = mounted.tools.len();
    for connection in &mounted.connections {
        connection.close().await;
    }
    if let Some(failure) = mounted.failures.first() {
        errln!(
            "{program}: signed in (tokens in {}), but the server could not be mounted with them: {failure}",
            path.display()
        );
        return ExitCode::from(1);
    }
    errln!(
        "{program}: signed in to {:?}: {tools} tools; its tokens are in {}",
        server.name,
        path.display()
    );
    ExitCode::SUCCESS
}
