//! `agentcore checkpoints ls|diff|rewind`: a workspace's checkpoints, also after
//! its session ended (the store outlives the process).

use std::path::PathBuf;
use std::process::ExitCode;

use agentcore::checkpoint::{CheckpointConfig, Checkpoints, RewindMode, RewindTo};
use agentcore::fs::workspace::Workspace;

use super::args::{
    CheckpointStoreArgs, CheckpointTargetArgs, CheckpointsCommand, CheckpointsDiffArgs,
    CheckpointsRewindArgs,
};
use super::out::{errln, outln};

/// Runs a subcommand: 0 when done, 1 when conflicts stopped a rewind
/// (nothing changed), 2 on an error (a store in use by a running session).
pub fn run(command: CheckpointsCommand) -> ExitCode {
    match command {
        CheckpointsCommand::Ls(args) => ls(&args.store),
        CheckpointsCommand::Diff(args) => diff(&args),
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
    // The roots the session recorded: the workspace's and the policy's
    // other writable roots.
    let roots = config
        .recorded_roots(&root)
        .unwrap_or_else(|| vec![root.clone()]);
    let mut workspace = workspace;
    for extra in roots.iter().skip(1) {
        workspace
            .add_root(extra)
            .map_err(|e| fail(format!("cannot open the root {}: {e}", extra.display())))?;
    }
    let recorder =
        Checkpoints::open(&config, &workspace, roots).map_err(|e| fail(e.to_string()))?;
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
    let to = match target(PROGRAM, &args.target) {
        Ok(to) => to,
        Err(code) => return code,
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

/// The rewind target of the arguments; clap requires one, and without
/// one nothing is done (exit 2).
fn target(program: &str, args: &CheckpointTargetArgs) -> Result<RewindTo, ExitCode> {
    match (&args.to, &args.call, &args.turn) {
        (Some(n), _, _) => Ok(RewindTo::Checkpoint(*n)),
        (_, Some(call), _) => Ok(RewindTo::Call(call.clone())),
        (_, _, Some(turn)) => Ok(RewindTo::Turn(*turn)),
        (None, None, None) => {
            errln!("{program}: say where to: --to N, --call ID or --turn T");
            Err(ExitCode::from(2))
        }
    }
}

fn diff(args: &CheckpointsDiffArgs) -> ExitCode {
    const PROGRAM: &str = "agentcore checkpoints diff";
    let (recorder, root) = match open(PROGRAM, &args.store) {
        Ok(opened) => opened,
        Err(code) => return code,
    };
    let to = match target(PROGRAM, &args.target) {
        Ok(to) => to,
        Err(code) => return code,
    };
    let diff = match recorder.diff(&to) {
        Ok(diff) => diff,
        Err(e) => {
            errln!("{PROGRAM}: {e}");
            return ExitCode::from(2);
        }
    };
    if args.store.json {
        outln!("{}", serde_json::to_string(&diff).unwrap_or_default());
    } else {
        outln!("{}", diff.describe(&root).trim_end());
    }
    ExitCode::SUCCESS
}
