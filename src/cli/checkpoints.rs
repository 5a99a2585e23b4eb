//! `agentcore checkpoints ls|rewind`: a workspace's checkpoints, also after
//! its session ended (the store outlives the process).

use std::path::PathBuf;
use std::process::ExitCode;

use agentcore::checkpoint::{CheckpointConfig, Checkpoints, RewindMode, RewindTo};
use agentcore::fs::workspace::Workspace;

use super::args::{CheckpointStoreArgs, CheckpointsCommand, CheckpointsRewindArgs};
use super::out::{errln, outln};

/// Runs a subcommand: 0 when done, 1 when conflicts stopped a rewind
/// (nothing changed), 2 on an error (a store in use by a running session).
pub fn run(command: CheckpointsCommand) -> ExitCode {
    match command {
        CheckpointsCommand::Ls(args) => ls(&args.store),
        CheckpointsCommand::Rewind(args) => rewind(&args),
    }
}

/// The store of `args`, with the root it records.
fn open(program: &str, args: &CheckpointStoreArgs) -> Result<(Checkpoints, PathBuf), ExitCode> {
    let fail = |message: String| {
        errln!("{program}: {message}");
        ExitCode::from(2)
    };
    let root = match &args.root {
        Some(root) => root.clone(),
        None => std::env::current_dir().map_err(|e| fail(format!("no current folder: {e}")))?,
    };
    let root = std::fs::canonicalize(&root)
        .map_err(|e| fail(format!("cannot open the root {}: {e}", root.display())))?;
    let workspace = Workspace::new(&root)
        .map_err(|e| fail(format!("cannot open the root {}: {e}", root.display())))?;
    let config = CheckpointConfig {
        store: args.store.clone(),
        ..CheckpointConfig::default()
    };
    let store = config.store_dir(&root).map_err(|e| fail(e.to_string()))?;
    if !store.join("log.jsonl").exists() {
        return Err(fail(format!(
            "no checkpoints for {} (no store at {}): run sessions with --checkpoints",
            root.display(),
            store.display()
        )));
    }
    let recorder = Checkpoints::open(&config, &workspace, vec![root.clone()])
        .map_err(|e| fail(e.to_string()))?;
    Ok((recorder, root))
}

fn ls(args: &CheckpointStoreArgs) -> ExitCode {
    const PROGRAM: &str = "agentcore checkpoints ls";
    let (recorder, root) = match open(PROGRAM, args) {
        Ok(opened) => opened,
        Err(code) => return code,
    };
    let listing = match recorder.list() {
        Ok(listing) => listing,
        Err(e) => {
            errln!("{PROGRAM}: {e}");
            return ExitCode::from(2);
        }
    };
    if args.json {
        outln!("{}", serde_json::to_string(&listing).unwrap_or_default());
        return ExitCode::SUCCESS;
    }
    for line in listing.describe(&root) {
        outln!("{line}");
    }
    ExitCode::SUCCESS
}

fn rewind(args: &CheckpointsRewindArgs) -> ExitCode {
    const PROGRAM: &str = "agentcore checkpoints rewind";
    let (recorder, root) = match open(PROGRAM, &args.store) {
        Ok(opened) => opened,
        Err(code) => return code,
    };
    let to = match (&args.to, &args.call, &args.turn) {
        (Some(n), _, _) => RewindTo::Checkpoint(*n),
        (_, Some(call), _) => RewindTo::Call(call.clone()),
        (_, _, Some(turn)) => RewindTo::Turn(*turn),
        _ => {
            errln!("{PROGRAM}: say where to: --to N, --call ID or --turn T");
            return ExitCode::from(2);
        }
    };
    let mode = if args.force {
        RewindMode::Force
    } else if args.skip_conflicts {
        RewindMode::Skip
    } else {
        RewindMode::Safe
    };
    let report = match recorder.rewind(to, mode) {
        Ok(report) => report,
        Err(e) => {
            errln!("{PROGRAM}: {e}");
            return ExitCode::from(2);
        }
    };
    if args.store.json {
        outln!("{}", serde_json::to_string(&report).unwrap_or_default());
    } else {
        for line in report.describe(&root) {
            outln!("{line}");
        }
    }
    if report.applied {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
