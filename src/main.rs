//! The `agentcore` binary: run (JSON Lines), demo, tools, mcp.

use std::process::ExitCode;

fn main() -> ExitCode {
    agentcore::cli::main()
}
