//! `agentcore run`: JSON Lines in, events out, one session per run.

use agentcore::checkpoint::{RewindMode, RewindTo};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use agentcore::limits::input::{MAX_LINE_BYTES, MAX_LINE_MIB};
use agentcore::message::jsonl::{Line, LineReader};
use agentcore::session::{Session, SessionConfig, SessionError};
use agentcore::{Event, EventSink, ToolResult};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, BufReader};

use super::args::{Format, Results, RunArgs, SessionArgs};
use super::out::{self, errln};
use super::pretty::Pretty;
use super::protocol::{Input, PROTOCOL, TurnInput, parse_line};
use super::stdin::ThreadStdin;
use super::term::Screen;

/// What `run` says on stderr when it reads tool calls from a terminal
/// (a person typing, who would otherwise see nothing happen).
pub(crate) const TERMINAL_HINT: &str = "agentcore run: reading tool calls from the terminal, \
one JSON object a line (docs/cli.md); Ctrl-D ends the input";

/// Where a run's events go.
pub(crate) enum Output {
    /// One JSON object a line, flushed per line.
    Jsonl,
    /// For people.
    Pretty(Box<Pretty>),
}

impl Output {
    pub(crate) fn hello(&mut self, session: &Session) {
        match self {
            Output::Jsonl => write_json(&Hello {
                kind: "hello",
                protocol: PROTOCOL,
                version: env!("CARGO_PKG_VERSION"),
                sandbox: session.sandbox_summary(),
            }),
            Output::Pretty(p) => p.hello(session),
        }
    }

    pub(crate) fn user(&mut self, text: &str) {
        match self {
            Output::Jsonl => write_json(&json!({"type": "run_start"})),
            Output::Pretty(p) => p.user(text),
        }
    }

    pub(crate) fn event(&mut self, event: &Event) {
        match self {
            Output::Jsonl => write_json(event),
            Output::Pretty(p) => p.event(event),
        }
    }

    pub(crate) fn input_error(&mut self, line: u64, message: &str) {
        match self {
            Output::Jsonl => write_json(&json!({
                "type": "input_error",
                "line": line,
                "message": message,
            })),
            Output::Pretty(p) => p.input_error(line, message),
        }
    }

    /// The `next_request` line of `--results`: what the next model request
    /// carries for this turn's results.
    pub(crate) fn next_request(&mut self, value: &Value) {
        match self {
            Output::Jsonl => write_json(value),
            Output::Pretty(p) => p.note(&format!("next request: {value}")),
        }
    }

    /// `{"type":"checkpoints", …Listing}`, or `{"type":"checkpoints",
    /// "error": …}` when they are off or cannot be listed.
    pub(crate) fn checkpoints(&mut self, session: &Session) {
        let line = match session.checkpoints() {
            None => {
                json!({"type": "checkpoints", "error": "checkpoints are off in this session (run with --checkpoints)"})
            }
            Some(Err(e)) => json!({"type": "checkpoints", "error": e.to_string()}),
            Some(Ok(listing)) => {
                if let Output::Pretty(p) = self {
                    let root = session.workspace().root();
                    for cp in &listing.checkpoints {
                        p.note(&format!(
                            "#{}  turn {}  {}  {}",
                            cp.id, cp.turn, cp.tool, cp.label
                        ));
                        for line in cp.describe(root) {
                            p.note(&format!("    {line}"));
                        }
                    }
                    return;
                }
                let mut line = serde_json::to_value(listing).unwrap_or_default();
                if let Some(map) = line.as_object_mut() {
                    map.insert("type".to_owned(), json!("checkpoints"));
                }
                line
            }
        };
        match self {
            Output::Jsonl => write_json(&line),
            Output::Pretty(p) => p.note(&format!(
                "checkpoints: {}",
                line["error"].as_str().unwrap_or("")
            )),
        }
    }

    /// `{"type":"rewind", …RewindReport}`, or `{"type":"rewind","error":…}`.
    pub(crate) fn rewind(&mut self, session: &Session, to: RewindTo, mode: RewindMode) {
        let line = match session.rewind(to, mode) {
            Err(e) => json!({"type": "rewind", "error": e.to_string()}),
            Ok(report) => {
                if let Output::Pretty(p) = self {
                    for line in report.describe(session.workspace().root()) {
                        p.note(&line);
                    }
                    return;
                }
                let mut line = serde_json::to_value(report).unwrap_or_default();
                if let Some(map) = line.as_object_mut() {
                    map.insert("type".to_owned(), json!("rewind"));
                }
                line
            }
        };
        match self {
            Output::Jsonl => write_json(&line),
            Output::Pretty(p) => {
                p.note(&format!("rewind: {}", line["error"].as_str().unwrap_or("")))
            }
        }
    }

    /// With an allow list, what its proxies did in this session:
    /// `{"type":"network","connections_allowed":…,"connections_refused":…,
    /// "bytes_up":…,"bytes_down":…,"requests":…}`.
    pub(crate) fn network(&mut self, session: &Session) {
        let Some(proxy) = session.sandbox().and_then(|s| s.proxy()) else {
            return;
        };
        let counters = proxy.counters();
        match self {
            Output::Jsonl => {
                let mut line = serde_json::to_value(counters).unwrap_or_default();
                if let Some(map) = line.as_object_mut() {
                    map.insert("type".to_owned(), json!("network"));
                }
                write_json(&line);
            }
            Output::Pretty(p) => p.note(&format!(
                "network: {} connections allowed, {} refused, {} bytes up, {} down",
                counters.connections_allowed,
                counters.connections_refused,
                counters.bytes_up,
                counters.bytes_down
            )),
        }
    }

    /// A note for people (pretty only): what the next turn shows.
    pub(crate) fn note(&mut self, text: &str) {
        if let Output::Pretty(p) = self {
            p.note(text);
        }
    }
}

/// The hello line, its fields in the order docs/cli.md gives them (a
/// `json!` object would sort them).
#[derive(serde::Serialize)]
struct Hello {
    #[serde(rename = "type")]
    kind: &'static str,
    protocol: u32,
    version: &'static str,
    sandbox: String,
}

fn write_json(value: &impl serde::Serialize) {
    // A closed stdout (the reader went away) ends the output quietly
    // (`out`). U+2028 and U+2029 are escaped: line splitters break lines
    // at them.
    out::write_with(|stdout| {
        agentcore::message::line::to_line_writer(&mut *stdout, value)
            .map_err(std::io::Error::from)?;
        stdout.write_all(b"\n")
    });
}

/// Builds the session `run` and `mcp` use from their options, mounting
/// the policy's MCP servers; one that cannot be mounted is reported on
/// stderr (`PROGRAM: MCP server "x" …`) and the session starts without it.
pub(crate) async fn start_session(
    program: &str,
    args: &SessionArgs,
    tune: impl FnOnce(&mut SessionConfig),
) -> Result<Session, SessionError> {
    let config = session_config(args, tune)?;
    if let Some(notice) = config.all_hooks().notice() {
        errln!("agentcore: {notice}");
    }
    connect(program, config).await
}

/// The configuration [`start_session`] starts a session with (policy and
/// hook files read and checked), without starting it.
pub(crate) fn session_config(
    args: &SessionArgs,
    tune: impl FnOnce(&mut SessionConfig),
) -> Result<SessionConfig, SessionError> {
    let mut config =
        SessionConfig::from_options(args.root.clone(), args.mode, args.policy.as_deref())?;
    config.add_hook_files(&args.hooks)?;
    if let Some(tools) = &args.tools {
        config.tools = tools.clone();
    }
    tune(&mut config);
    Ok(config)
}

/// Starts a session with `config`, mounting its MCP servers; one that
/// cannot be mounted is reported on stderr.
pub(crate) async fn connect(program: &str, config: SessionConfig) -> Result<Session, SessionError> {
    let session = Session::connect(config).await?;
    for failure in session.mcp_failures() {
        errln!("{program}: {failure}");
    }
    Ok(session)
}

/// Runs `agentcore run`: exit status 0 at the end of the input (or when
/// stdout's reader went away), 1 with `--fail-on-error` when a call ended
/// in an error result.
pub async fn run(args: RunArgs, screen: &Screen) -> ExitCode {
    let input: Box<dyn AsyncRead + Unpin + Send> = match &args.file {
        None => match stdin() {
            Ok(stdin) => stdin,
            Err(code) => return code,
        },
        Some(path) if path == &PathBuf::from("-") => match stdin() {
            Ok(stdin) => stdin,
            Err(code) => return code,
        },
        Some(path) => match tokio::fs::File::open(path).await {
            Ok(file) => Box::new(file),
            Err(err) => {
                errln!("agentcore run: cannot read {}: {err}", path.display());
                return ExitCode::from(2);
            }
        },
    };
    let mut session = match start_session("agentcore run", &args.session, |config| {
        config.max_concurrency = args.max_concurrency;
        config.max_tool_errors = args.max_tool_errors;
        config.steering = args.steering.into();
        // A person at the terminal can sign in to a server that asks
        // (OAuth in the browser); without one, such a server's mount fails
        // with the command that signs in.
        if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
            config.mcp_sign_in = Some(agentcore::mcp::client::SignIn::browser());
        }
        if args.checkpoints {
            config.checkpoints = agentcore::checkpoint::CheckpointConfig::default();
        }
    })
    .await
    {
        Ok(session) => session,
        Err(message) => {
            errln!("agentcore run: {message}");
            return ExitCode::from(2);
        }
    };
    let format = args.format.unwrap_or(if screen.is_terminal {
        Format::Pretty
    } else {
        Format::Jsonl
    });
    let exits = matches!(format, Format::Jsonl).then(|| forward_job_exits(&session));
    let mut output = match format {
        Format::Jsonl => Output::Jsonl,
        Format::Pretty => Output::Pretty(Box::new(Pretty::new(session.registry().clone(), screen))),
    };
    let signals = match Signals::new() {
        Ok(signals) => signals,
        Err(err) => {
            errln!("agentcore run: cannot watch for SIGTERM, SIGINT and SIGHUP: {err}");
            return ExitCode::from(1);
        }
    };
    // The session ends at the end of the input or on a signal; either way
    // its background jobs are killed and awaited before the exit.
    let code = tokio::select! {
        read = run_lines(&mut session, input, &mut output, args.results) => match read {
            // A reader that went away is a quiet end (the turn it cut short
            // does not count against the run).
            Ok(errors) if errors && args.fail_on_error && !out::closed() => ExitCode::from(1),
            Ok(_) => ExitCode::SUCCESS,
            Err(err) => {
                errln!("agentcore run: cannot read the input: {err}");
                ExitCode::from(2)
            }
        },
        signal = signals.next() => ExitCode::from(128 + signal),
    };
    session.end_jobs().await;
    session.end_mcp().await;
    if let Some((stop, forwarder)) = exits {
        let _ = stop.send(());
        let _ = forwarder.await;
    }
    output.network(&session);
    code
}

/// Standard input on a thread of its own ([`ThreadStdin`]): a signal ends
/// the run while a read waits for the next line. A terminal gets a hint
/// on stderr first ([`TERMINAL_HINT`]).
fn stdin() -> Result<Box<dyn AsyncRead + Unpin + Send>, ExitCode> {
    if std::io::stdin().is_terminal() {
        errln!("{TERMINAL_HINT}");
    }
    match ThreadStdin::new() {
        Ok(stdin) => Ok(Box::new(stdin)),
        Err(err) => {
            errln!("agentcore run: cannot start reading the input: {err}");
            Err(ExitCode::from(1))
        }
    }
}

/// Writes `{"type":"job_exit","job_id":…,"status":…,"command":…}` for every
/// background job that ends, as it ends, until told to stop (then the
/// exits already delivered are written too).
fn forward_job_exits(
    session: &Session,
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
) {
    use tokio::sync::broadcast::error::{RecvError, TryRecvError};
    let mut exits = session.jobs().exits();
    let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
    let write = |exit: &agentcore::tools::bash::JobExit| {
        // The library's event, as every other line.
        if let Ok(line) = serde_json::to_value(Event::from(exit.clone())) {
            write_json(&line);
        }
    };
    let forwarder = tokio::spawn(async move {
        loop {
            tokio::select! {
                biased;
                got = exits.recv() => match got {
                    Ok(exit) => write(&exit),
                    Err(RecvError::Lagged(_)) => {}
                    Err(RecvError::Closed) => return,
                },
                _ = &mut stopped => loop {
                    match exits.try_recv() {
                        Ok(exit) => write(&exit),
                        Err(TryRecvError::Lagged(_)) => {}
                        Err(_) => return,
                    }
                },
            }
        }
    });
    (stop, forwarder)
}

/// SIGTERM, SIGINT and SIGHUP, watched from the start of a session so that
/// it can end (killing its background jobs) instead of dying with them
/// left running.
pub(crate) struct Signals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

impl Signals {
    /// Starts watching (the default action, dying, no longer applies).
    pub(crate) fn new() -> std::io::Result<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Self {
            term: signal(SignalKind::terminate())?,
            int: signal(SignalKind::interrupt())?,
            hup: signal(SignalKind::hangup())?,
        })
    }

    /// Waits for the first of them; returns its number.
    pub(crate) async fn next(mut self) -> u8 {
        tokio::select! {
            _ = self.term.recv() => 15,
            _ = self.int.recv() => 2,
            _ = self.hup.recv() => 1,
        }
    }
}

/// Reads every line of `input` and runs it; returns at the end of input,
/// or once stdout's reader has gone away, whether any call ended in an
/// error result.
///
/// A line longer than [`MAX_LINE_BYTES`] (16 MiB, newline excluded) is read
/// on to its newline without being kept and answered with an
/// `input_error`; the run goes on with the next line.
pub(crate) async fn run_lines(
    session: &mut Session,
    input: impl AsyncRead + Unpin,
    output: &mut Output,
    results: Option<Results>,
) -> std::io::Result<bool> {
    output.hello(session);
    let mut lines = LineReader::new(BufReader::new(input), MAX_LINE_BYTES);
    let mut line_no = 0u64;
    let mut errors = false;
    loop {
        if out::closed() {
            return Ok(errors);
        }
        let bytes = match lines.next(&mut |_| {}).await? {
            Line::End => return Ok(errors),
            Line::Text(bytes) => bytes,
            Line::TooLong { len } => {
                line_no += 1;
                output.input_error(line_no, &too_long(len));
                continue;
            }
        };
        line_no += 1;
        let Ok(line) = std::str::from_utf8(bytes) else {
            output.input_error(line_no, "the line is not valid UTF-8");
            continue;
        };
        match parse_line(line) {
            Ok(None) => {}
            Ok(Some(Input::User(text))) => {
                session.new_prompt();
                output.user(&text);
            }
            Ok(Some(Input::Checkpoints)) => output.checkpoints(session),
            Ok(Some(Input::Rewind(to, mode))) => output.rewind(session, to, mode),
            Ok(Some(Input::Turn(turn))) => {
                // A mounted MCP server's tool list changed: its tools are
                // mounted again between turns.
                for failure in session.refresh_mcp_tools().await {
                    errln!("agentcore run: {failure}");
                }
                errors |= run_turn(session, turn, output, results).await;
            }
            Err(message) => output.input_error(line_no, &message),
        }
    }
}

/// The `input_error` message of a line over [`MAX_LINE_BYTES`].
fn too_long(len: u64) -> String {
    format!(
        "the line is {len} bytes long, over the limit of {MAX_LINE_BYTES} bytes \
         ({MAX_LINE_MIB} MiB); it was skipped. Send each input as one line of at most \
         {MAX_LINE_MIB} MiB"
    )
}

/// Runs one turn, writing its events as they happen; returns whether a
/// call ended in an error result (any outcome but success). Once stdout's
/// reader has gone away, the turn is aborted: no one sees it.
pub(crate) async fn run_turn(
    session: &Session,
    input: TurnInput,
    output: &mut Output,
    results: Option<Results>,
) -> bool {
    let (sink, mut events) = EventSink::channel();
    let turn = session.turn(sink);
    let control = turn.control();
    let mut timers = Vec::new();
    if let Some(ms) = input.steer_after_ms {
        let control = control.clone();
        timers.push(tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            control.steer();
        }));
    }
    if let Some(ms) = input.abort_after_ms {
        let control = control.clone();
        timers.push(tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            control.abort();
        }));
    }
    let mut run = std::pin::pin!(turn.run(input.calls));
    let mut errors = false;
    let mut show = |event: &Event, output: &mut Output| {
        if let Event::ToolExecEnd { is_error, .. } = event {
            errors |= *is_error;
        }
        output.event(event);
    };
    let mut aborted = false;
    let finished = loop {
        tokio::select! {
            biased;
            Some(event) = events.recv() => {
                show(&event, output);
                if out::closed() && !aborted {
                    aborted = true;
                    control.abort();
                }
            }
            result = &mut run => break result,
        }
    };
    for timer in timers {
        timer.abort();
    }
    while let Ok(event) = events.try_recv() {
        show(&event, output);
    }
    match finished {
        Ok(turn) => {
            if let Some(provider) = results {
                output.next_request(&next_request(provider, &turn.results));
            }
        }
        // The scheduler is gone: nothing more can run in this session.
        Err(err) => errln!("agentcore run: the turn could not finish: {err}"),
    }
    errors
}

/// The `next_request` line of `--results`: the turn's results in the
/// shape `provider`'s next request takes them, in the calls' order.
fn next_request(provider: Results, results: &[ToolResult]) -> Value {
    use agentcore::message::{anthropic, openai};
    match provider {
        Results::Anthropic => json!({
            "type": "next_request",
            "provider": "anthropic",
            "messages": [anthropic::user_message(results)],
        }),
        Results::Openai => json!({
            "type": "next_request",
            "provider": "openai",
            "messages": openai::messages(results),
        }),
        Results::OpenaiResponses => json!({
            "type": "next_request",
            "provider": "openai-responses",
            "input": openai::responses::function_call_outputs(results),
        }),
    }
}
