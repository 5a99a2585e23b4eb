//! The `agentcore` binary: run (JSON Lines), demo, tools, mcp.

use std::process::ExitCode;

fn main() -> ExitCode {
    if let Err(message) = harden() {
        eprintln!("agentcore: {message}");
        return ExitCode::FAILURE;
    }
    agentcore::cli::main()
}

/// Process-wide protections, before any thread or command starts: commands
/// cannot read this process's environment or memory (non-dumpable), and
/// processes they leave behind are re-parented here, where the bash tool
/// kills and reaps them (this binary starts no other child processes).
#[cfg(target_os = "linux")]
fn harden() -> Result<(), String> {
    use agentcore::tools::bash::{OrphanScope, adopt_orphans, make_undumpable};
    make_undumpable().map_err(|e| {
        format!("could not make the process non-dumpable (PR_SET_DUMPABLE): {e}")
    })?;
    adopt_orphans(OrphanScope::Process)
        .map_err(|e| format!("could not become a child subreaper (PR_SET_CHILD_SUBREAPER): {e}"))
}

#[cfg(not(target_os = "linux"))]
fn harden() -> Result<(), String> {
    Ok(())
}
