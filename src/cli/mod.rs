//! The `agentcore` command line (see `docs/cli.md`): `run` reads tool calls as
//! JSON Lines and writes events, `demo` shows the kernel at work, `tools`
//! prints the tool definitions, `mcp` serves the tools over MCP on stdio or streamable HTTP.

mod args;
mod demo;
mod mcp;
mod pretty;
mod protocol;
mod run;
mod sandbox;
mod stdin;
mod tools;

use std::process::ExitCode;

use clap::Parser;

use args::{Cli, Command};

/// Parses the command line and runs it; the exit status follows `docs/cli.md`
/// (0 when input was read to the end, 2 for bad options or input files,
/// 128 + the signal's number on SIGTERM, SIGINT or SIGHUP: 143, 130, 129).
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let code = if err.use_stderr() { 2 } else { 0 };
            let _ = err.print();
            return ExitCode::from(code);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(err) => {
            eprintln!("agentcore: cannot start the async runtime: {err}");
            return ExitCode::from(1);
        }
    };
    let code = runtime.block_on(async move {
        match cli.command {
            Command::Run(args) => run::run(args).await,
            Command::Demo => demo::demo().await,
            Command::Tools(args) => tools::print(args).await,
            Command::Mcp(args) => mcp::serve(args).await,
            Command::Sandbox(args::SandboxCommand::Check(args)) => sandbox::check(args),
        }
    });
    // The session has ended (jobs killed and awaited, folders removed). A
    // runtime waits for its blocking threads when dropped; one stuck in a
    // write to a reader that went away must not hold the exit.
    runtime.shutdown_timeout(SHUTDOWN_GRACE);
    code
}

/// How long the exit waits for the runtime's blocking threads once the
/// command is done (standard input is read on a thread of its own, which
/// is never waited for).
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_millis(500);
