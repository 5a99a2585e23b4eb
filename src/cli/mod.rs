//! The `agentcore` command line (see `cli.md`): `run` reads tool calls as
//! JSON Lines and writes events, `demo` shows the kernel at work, `tools`
//! prints the tool definitions, `mcp` serves the tools over MCP on stdio or streamable HTTP.

mod args;
mod demo;
mod mcp;
mod pretty;
mod protocol;
mod run;
mod sandbox;
mod tools;

use std::process::ExitCode;

use clap::Parser;

use args::{Cli, Command};

/// Parses the command line and runs it; the exit status follows `cli.md`
/// (0 when input was read to the end, 2 for bad options or input files).
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
    runtime.block_on(async move {
        match cli.command {
            Command::Run(args) => run::run(args).await,
            Command::Demo => demo::demo().await,
            Command::Tools(args) => tools::print(args).await,
            Command::Mcp(args) => mcp::serve(args).await,
            Command::Sandbox(args::SandboxCommand::Check(args)) => sandbox::check(args),
        }
    })
}
