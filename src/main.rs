//! The `agentcore` binary: run (JSON Lines), demo, tools, mcp, sandbox,
//! completions, man (docs/cli.md).

// `unsafe` only where allowed (one `set_var`, below), each block with its
// `// SAFETY:` comment.
#![deny(unsafe_code)]
#![warn(
    clippy::undocumented_unsafe_blocks,
    clippy::multiple_unsafe_ops_per_block
)]

mod cli;

use std::process::ExitCode;

/// The binary's allocator (the library leaves the choice to its user).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // Before any thread exists: see `wipe_initial_environment`.
    #[cfg(target_os = "linux")]
    wipe_initial_environment();
    if let Err(message) = harden() {
        eprintln!("agentcore: {message}");
        return ExitCode::FAILURE;
    }
    cli::main()
}

/// Process-wide protections, before any thread or command starts: commands
/// cannot read this process's environment or memory (non-dumpable), and
/// processes they leave behind are re-parented here, where the bash tool
/// kills and reaps them (the other processes this binary starts, hooks,
/// mounted MCP servers and the command of `sandbox exec`, it waits for).
#[cfg(target_os = "linux")]
fn harden() -> Result<(), String> {
    use agentcore::process::{OrphanScope, adopt_orphans, make_undumpable};
    make_undumpable()
        .map_err(|e| format!("could not make the process non-dumpable (PR_SET_DUMPABLE): {e}"))?;
    adopt_orphans(OrphanScope::Process)
        .map_err(|e| format!("could not become a child subreaper (PR_SET_CHILD_SUBREAPER): {e}"))
}

#[cfg(not(target_os = "linux"))]
fn harden() -> Result<(), String> {
    Ok(())
}

/// Copies every variable out of the environment block the kernel placed at
/// startup, then overwrites that block with zeros. `/proc/PID/environ` shows
/// that block (not the live environment), and a root command can still
/// read it from a non-dumpable process on some kernels (6.18 was seen to
/// allow it while refusing `/proc/PID/mem`); a wiped block shows nothing.
/// The variables stay available to this process, from the heap.
///
/// Best effort: if /proc cannot be read or written, the block stays as it
/// was and non-dumpability is the remaining protection.
#[cfg(target_os = "linux")]
fn wipe_initial_environment() {
    use std::io::{Seek, SeekFrom, Write};

    let vars: Vec<_> = std::env::vars_os().collect();
    for (name, value) in &vars {
        let bytes = name.as_encoded_bytes();
        if bytes.is_empty() || bytes.contains(&b'=') || bytes.contains(&0) {
            // `set_var` refuses these; they keep pointing into the block and
            // read as empty once it is wiped.
            continue;
        }
        // SAFETY: `set_var` is unsafe because another thread could read the
        // environment at the same time; this runs first thing in `main`,
        // before this program starts any thread. Setting each variable to
        // its own value makes the C library copy it to the heap and point
        // `environ` there, away from the block wiped below.
        #[allow(unsafe_code)]
        unsafe {
            std::env::set_var(name, value);
        }
    }
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return;
    };
    // Fields after the command name: (50) env_start and (51) env_end are the
    // 48th and 49th after the closing parenthesis (state is the 3rd field).
    let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
        return;
    };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let (Some(start), Some(end)) = (
        fields.get(47).and_then(|f| f.parse::<u64>().ok()),
        fields.get(48).and_then(|f| f.parse::<u64>().ok()),
    ) else {
        return;
    };
    if end <= start || end - start > 16 * 1024 * 1024 {
        return;
    }
    let Ok(mut mem) = std::fs::OpenOptions::new()
        .write(true)
        .open("/proc/self/mem")
    else {
        return;
    };
    let zeros = vec![0u8; usize::try_from(end - start).unwrap_or(0)];
    if mem.seek(SeekFrom::Start(start)).is_ok() {
        let _ = mem.write_all(&zeros);
    }
}
