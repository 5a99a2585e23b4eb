//! `agentcore sandbox check`: what this machine offers the command sandbox
//! and what a session with the given options enforces.

use std::process::ExitCode;

use agentcore::sandbox::{self, SandboxMode};
use agentcore::session::{Session, SessionConfig};

use super::args::SessionArgs;

/// Prints the machine's capabilities, then the session's sandbox; fails
/// (exit 1) when the policy requires a sandbox this machine cannot build.
pub fn check(args: SessionArgs) -> ExitCode {
    println!("This machine:");
    println!("{}", sandbox::check());
    let config = match SessionConfig::from_options(args.root, args.mode, args.policy.as_deref()) {
        Ok(config) => config,
        Err(err) => {
            eprintln!("agentcore sandbox check: {err}");
            return ExitCode::from(2);
        }
    };
    let policy = config.sandbox_policy();
    // The check is about commands: MCP servers are not started for it.
    let mut config = config;
    config.mcp_servers.clear();
    if let Some(policy) = &mut config.policy {
        policy.mcp_servers.clear();
    }
    let session = match Session::start(config) {
        Ok(session) => session,
        Err(err) => {
            eprintln!("agentcore sandbox check: {err}");
            return ExitCode::from(2);
        }
    };
    println!();
    println!(
        "This session (workspace {}):",
        session.workspace().root().display()
    );
    println!("sandbox:     {}", session.sandbox_summary());
    let Some(sandbox) = session.sandbox() else {
        return match policy.mode {
            SandboxMode::Off => ExitCode::SUCCESS,
            _ => ExitCode::from(1),
        };
    };
    let writable: Vec<String> = sandbox
        .writable()
        .iter()
        .map(|p| p.display().to_string())
        .chain([format!("$TMPDIR ({})", sandbox.tmpdir().display())])
        .collect();
    println!("writable:    {}", writable.join(", "));
    println!(
        "protected:   .git, .claude and existing .env* files in each writable root (read-only)"
    );
    let hidden: Vec<String> = sandbox
        .hidden()
        .iter()
        .filter(|p| p.exists())
        .map(|p| p.display().to_string())
        .collect();
    if hidden.is_empty() {
        println!("hidden:      none of the listed paths exists here");
    } else {
        println!("hidden:      {}", hidden.join(", "));
    }
    println!(
        "network:     {}",
        if sandbox.network() {
            "open"
        } else {
            "none (loopback only)"
        }
    );
    println!(
        "auto_allow:  {}",
        if policy.auto_allow && sandbox.is_fully_confining() {
            "yes: confined commands run without asking in default and accept-edits modes"
        } else if policy.auto_allow {
            "no: commands are not fully confined here, so they are judged by the rules"
        } else {
            "no (policy)"
        }
    );
    ExitCode::SUCCESS
}
