//! The `agentcore` command line (see `docs/cli.md`): `run` reads tool calls as
//! JSON Lines and writes events, `demo` shows the kernel at work, `tools`
//! prints the tool definitions, `mcp` serves the tools over MCP on stdio or
//! streamable HTTP, `sandbox` checks the command sandbox and runs a command
//! in it, `completions` and `man` describe the command line.

mod args;
mod checkpoints;
mod client_gone;
mod completions;
mod demo;
mod mcp;
pub(crate) mod out;
mod pretty;
mod protocol;
mod run;
mod sandbox;
mod stdin;
mod term;
mod tools;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

use args::{Cli, Command};
use out::errln;

/// Parses the command line and runs it; the exit status follows `docs/cli.md`
/// and `args::EXIT_STATUS` (0 success, 1 runtime error, 2 usage error,
/// 128 + the signal's number on SIGTERM, SIGINT or SIGHUP: 143, 130, 129).
pub fn main() -> ExitCode {
    let cli = match parse(std::env::args_os().collect()) {
        Ok(cli) => cli,
        Err(err) => {
            let code = if err.use_stderr() { 2 } else { 0 };
            let _ = err.print();
            return ExitCode::from(code);
        }
    };
    let screen = term::Screen::current();
    term::apply(cli.color, &screen);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(err) => {
            errln!("agentcore: cannot start the async runtime: {err}");
            return ExitCode::from(1);
        }
    };
    let code = runtime.block_on(async move {
        match cli.command {
            Command::Run(args) => run::run(args, &screen).await,
            Command::Demo => demo::demo(&screen).await,
            Command::Tools(args) => tools::print(args).await,
            Command::Mcp(args) => match args.action {
                Some(action) => mcp::account(action).await,
                None => mcp::serve(args).await,
            },
            Command::Sandbox(args::SandboxCommand::Check(args)) => sandbox::check(args),
            Command::Sandbox(args::SandboxCommand::Exec(args)) => sandbox::exec(args).await,
            Command::Checkpoints(args) => checkpoints::run(args),
            Command::Completions(args) => completions::completions(args.shell),
            Command::Man => completions::man(),
        }
    });
    // The session has ended (jobs killed and awaited, folders removed). A
    // runtime waits for its blocking threads when dropped; one stuck in a
    // write to a reader that went away must not hold the exit.
    runtime.shutdown_timeout(SHUTDOWN_GRACE);
    // Output lost otherwise than to a reader that went away (a full disk)
    // is a runtime error.
    if out::failed() && code == ExitCode::SUCCESS {
        return ExitCode::from(1);
    }
    code
}

/// Parses `args`, with clap's own help and errors coloured as `--color`
/// says (clap reads `NO_COLOR` and the terminal itself under `auto`).
fn parse(args: Vec<std::ffi::OsString>) -> Result<Cli, clap::Error> {
    let color = match term::color_in_args(&args) {
        term::ColorChoice::Auto => clap::ColorChoice::Auto,
        term::ColorChoice::Always => clap::ColorChoice::Always,
        term::ColorChoice::Never => clap::ColorChoice::Never,
    };
    let matches = Cli::command().color(color).try_get_matches_from(args)?;
    Cli::from_arg_matches(&matches)
}

/// How long the exit waits for the runtime's blocking threads once the
/// command is done (standard input is read on a thread of its own, which
/// is never waited for).
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_millis(500);
