//! `agentcore sandbox check`: what this machine offers the command sandbox
//! and what a session with the given options enforces; `agentcore sandbox
//! exec -- CMD`: one command run by hand in that sandbox.

use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitCode;

use agentcore::process::TOKEN_ENV;
use agentcore::sandbox::{self, Sandbox, SandboxMode};
use agentcore::session::{Session, SessionConfig};

use super::args::{SandboxCheckArgs, SandboxExecArgs, SessionArgs};
use super::out::{errln, outln};
use super::run::Signals;

/// The session a sandbox subcommand looks at: its options' workspace,
/// mode and policy, without the policy's MCP servers (the sandbox is about
/// commands). A policy or root that cannot be used is exit status 2.
fn command_session(program: &str, args: SessionArgs) -> Result<(Session, SandboxMode), ExitCode> {
    let mut config = SessionConfig::from_options(args.root, args.mode, args.policy.as_deref())
        .map_err(|err| {
            errln!("{program}: {err}");
            ExitCode::from(2)
        })?;
    let mode = config.sandbox_policy().mode;
    config.mcp_servers.clear();
    if let Some(policy) = &mut config.policy {
        policy.mcp_servers.clear();
    }
    let session = Session::start(config).map_err(|err| {
        errln!("{program}: {err}");
        ExitCode::from(2)
    })?;
    Ok((session, mode))
}

/// Prints the machine's capabilities, then the session's sandbox; fails
/// (exit 1) when the policy requires a sandbox this machine cannot build.
pub fn check(args: SandboxCheckArgs) -> ExitCode {
    let SandboxCheckArgs {
        session: args,
        toolchains,
    } = args;
    outln!("This machine:");
    outln!("{}", sandbox::check_afresh());
    let config =
        match SessionConfig::from_options(args.root.clone(), args.mode, args.policy.as_deref()) {
            Ok(config) => config,
            Err(err) => {
                errln!("agentcore sandbox check: {err}");
                return ExitCode::from(2);
            }
        };
    let policy = config.sandbox_policy();
    let session = match command_session("agentcore sandbox check", args) {
        Ok((session, _)) => session,
        Err(code) => return code,
    };
    outln!();
    outln!(
        "This session (workspace {}):",
        session.workspace().root().display()
    );
    outln!("sandbox:     {}", session.sandbox_summary());
    match session.checkpoint_recorder() {
        Some(recorder) => {
            outln!(
                "checkpoints: on, store {} (0700, hidden from commands)",
                recorder.store_dir().display()
            );
        }
        None => match agentcore::checkpoint::CheckpointConfig::default()
            .store_dir(session.workspace().root())
        {
            Ok(dir) => {
                outln!(
                    "checkpoints: off (`run --checkpoints` or a [checkpoints] table: store {})",
                    dir.display()
                );
            }
            Err(err) => {
                outln!("checkpoints: off ({err})");
            }
        },
    }
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
    outln!("writable:    {}", writable.join(", "));
    outln!(
        "protected:   in each writable root, what makes git run code (.git/config, \
         config.worktree, hooks/, info/, modules/, worktrees/; commits work), .claude and \
         existing .env* files (read-only)"
    );
    let hidden: Vec<String> = sandbox
        .hidden()
        .iter()
        .filter(|p| p.exists())
        .map(|p| p.display().to_string())
        .collect();
    if hidden.is_empty() {
        outln!("hidden:      none of the listed paths exists here");
    } else {
        outln!("hidden:      {}", hidden.join(", "));
    }
    match sandbox.network_access() {
        sandbox::NetworkAccess::Open => {
            outln!("network:     open");
        }
        sandbox::NetworkAccess::None => {
            outln!("network:     none (loopback only)");
        }
        sandbox::NetworkAccess::Allowlist if sandbox.proxy().is_some() => {
            let mut domains = policy.allow_domains.clone();
            for toolchain in &policy.toolchains {
                domains.extend(toolchain.domains().iter().map(|d| (*d).to_owned()));
            }
            outln!(
                "network:     allowlist, through the session's HTTP and SOCKS5 proxies: {}",
                domains.join(", ")
            );
            for (name, addresses) in &policy.resolve {
                let addresses: Vec<String> = addresses.0.iter().map(ToString::to_string).collect();
                outln!("resolve:     {name} -> {}", addresses.join(", "));
            }
        }
        sandbox::NetworkAccess::Allowlist => {
            outln!("network:     none (the allow list's proxies could not be started)");
        }
    }
    // Limits never fail a `required` sandbox: they bound what a command
    // consumes, not what it may reach; one nothing here enforces says so.
    for (i, line) in sandbox.limits_summary().iter().enumerate() {
        let label = if i == 0 { "limits:" } else { "" };
        outln!("{label:<13}{line}");
    }
    outln!(
        "auto_allow:  {}",
        if policy.auto_allow && sandbox.is_fully_confining() {
            "yes: confined commands run without asking in default and accept-edits modes"
        } else if policy.auto_allow {
            "no: commands are not fully confined here, so they are judged by the rules"
        } else {
            "no (policy)"
        }
    );
    if toolchains {
        outln!();
        outln!("Toolchains ([sandbox] toolchains; * = in this policy):");
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        for toolchain in sandbox::Toolchain::ALL {
            let listed = if policy.toolchains.contains(&toolchain) {
                "*"
            } else {
                " "
            };
            let caches: Vec<String> = home
                .as_deref()
                .map(|home| toolchain.caches(home))
                .unwrap_or_default()
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            outln!(
                "{listed} {:<6} writable: {}",
                toolchain.name(),
                caches.join(", ")
            );
            outln!("         allowed:  {}", toolchain.domains().join(", "));
        }
    }
    ExitCode::SUCCESS
}

/// Runs `args.command` (directly, not through a shell) in the workspace,
/// confined by the sandbox a session with these options gives bash, with
/// this process's stdin, stdout and stderr, and exits with its status
/// (128 + the signal's number when a signal killed it).
///
/// Fails closed: when this session would run commands unconfined (the
/// sandbox is off, required but unavailable, or could not be set up), the
/// command is not run and the exit status is 1. A sandbox that confines
/// only in part (`auto` on a machine missing a feature) runs it as a
/// session would, after a notice on stderr saying what is missing.
pub async fn exec(args: SandboxExecArgs) -> ExitCode {
    const PROGRAM: &str = "agentcore sandbox exec";
    let (session, _) = match command_session(PROGRAM, args.session) {
        Ok(session) => session,
        Err(code) => return code,
    };
    let Some(sandbox) = session
        .sandbox()
        .filter(|sandbox| sandbox.mode() != SandboxMode::Off)
    else {
        errln!(
            "{PROGRAM}: the command was not run: this session would run commands unconfined \
             (sandbox {}), and `sandbox exec` never does. `agentcore sandbox check` shows why.",
            session.sandbox_summary()
        );
        return ExitCode::from(1);
    };
    let Some((program, rest)) = args.command.split_first() else {
        errln!("{PROGRAM}: name the command after `--`");
        return ExitCode::from(2);
    };
    let code = run_confined(PROGRAM, sandbox, &session, program, rest).await;
    drop(session);
    code
}

/// Spawns the command confined by `sandbox` and waits for it; a signal to
/// this process (SIGTERM, SIGINT, SIGHUP) kills it and is the exit status.
async fn run_confined(
    name: &str,
    sandbox: &Sandbox,
    session: &Session,
    program: &OsString,
    args: &[OsString],
) -> ExitCode {
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args)
        .current_dir(session.workspace().root())
        // The environment a session's bash command gets: secrets (the MCP
        // token among them) scrubbed, non-interactive settings added.
        .env_clear()
        .envs(agentcore::process::command_environment())
        .env("TMPDIR", sandbox.tmpdir())
        .env_remove(TOKEN_ENV)
        .kill_on_drop(true);
    let confinement = match sandbox.confine(&mut cmd) {
        Ok(confinement) => confinement,
        Err(err) => {
            errln!("{name}: the command was not run: the sandbox could not be set up: {err}");
            return ExitCode::from(1);
        }
    };
    if confinement.enforced() == "unconfined" {
        errln!(
            "{name}: the command was not run: the sandbox enforces nothing on this machine \
             (sandbox {}), and `sandbox exec` never runs unconfined. `agentcore sandbox check` \
             shows why.",
            session.sandbox_summary()
        );
        return ExitCode::from(1);
    }
    if !confinement.is_full() {
        errln!(
            "{name}: running partly confined, as a session's commands are here: sandbox {}",
            session.sandbox_summary()
        );
    }
    let signals = match Signals::new() {
        Ok(signals) => signals,
        Err(err) => {
            errln!("{name}: cannot watch for SIGTERM, SIGINT and SIGHUP: {err}");
            return ExitCode::from(1);
        }
    };
    let mut child = match confinement.spawn(&mut cmd) {
        Ok(child) => child,
        Err(err) => {
            errln!("{name}: cannot run {}: {err}", program.to_string_lossy());
            return ExitCode::from(if err.kind() == std::io::ErrorKind::NotFound {
                127
            } else {
                1
            });
        }
    };
    drop(cmd);
    tokio::select! {
        status = child.wait() => match status {
            Ok(status) => {
                if let Some(hit) = confinement.limit_hit(status.signal()) {
                    errln!("{}", hit.line());
                }
                exit_code(status)
            }
            Err(err) => {
                errln!("{name}: cannot wait for the command: {err}");
                ExitCode::from(1)
            }
        },
        signal = signals.next() => {
            let _ = child.kill().await;
            ExitCode::from(128 + signal)
        }
    }
}

/// The command's exit code, or 128 + the signal's number that killed it.
fn exit_code(status: std::process::ExitStatus) -> ExitCode {
    match (status.code(), status.signal()) {
        (Some(code), _) => ExitCode::from(u8::try_from(code & 0xff).unwrap_or(1)),
        (None, Some(signal)) => ExitCode::from(u8::try_from(128 + (signal & 0x7f)).unwrap_or(1)),
        (None, None) => ExitCode::from(1),
    }
}
