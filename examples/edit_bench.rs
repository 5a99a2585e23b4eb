//! Bench for the edit tool: one unique replacement in the middle of a
//! 50 MB file, through the whole pipeline (validate, preview diff, gate,
//! execute with its atomic write). Measure the process's peak memory with
//! `/usr/bin/time -v target/release/examples/edit_bench`.
//!
//! Usage: `edit_bench [MEGABYTES]` (default 50).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::Arc;
use std::time::Instant;

use agentcore::TypedTool;
use agentcore::tools::edit::EditTool;
use agentcore::tools::read::ReadTool;
use agentcore::tools::read_state::FileReadState;
use agentcore::tools::workspace::Workspace;
use agentcore::{Call, Outcome, Pipeline, ToolRegistry};
use serde_json::json;
use tower::ServiceExt;

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let megabytes: usize = match std::env::args().nth(1) {
        Some(arg) => arg.parse()?,
        None => 50,
    };
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("big.rs");
    // Written in pieces, so the file itself never sits in this process's
    // memory before the edit.
    let line_len = 64;
    let lines = megabytes * 1_000_000 / line_len;
    let mut out = BufWriter::new(File::create(&path)?);
    for i in 0..lines {
        writeln!(
            out,
            "let value_{i:010} = compute(input, {i:010}); // padding.."
        )?;
    }
    out.into_inner()?.sync_all()?;
    let size = std::fs::metadata(&path)?.len();

    let ws = Workspace::new(dir.path())?;
    let state = FileReadState::new();
    let registry = ToolRegistry::new()
        .with(ReadTool::new(ws.clone(), state.clone()).into_dyn())?
        .with(EditTool::new(ws, state).into_dyn())?;
    let service = Pipeline::builder()
        .registry(Arc::new(registry))
        .build()
        .service();

    let middle = lines / 2;
    let started = Instant::now();
    let read = service
        .clone()
        .oneshot(Call::new(
            "r",
            "read",
            json!({"file_path": "big.rs", "offset": middle + 1, "limit": 3}),
        ))
        .await?;
    let read_time = started.elapsed();
    assert_eq!(read.outcome, Outcome::Success, "{}", read.text());

    let old = format!("let value_{middle:010} = compute(input, {middle:010});");
    let started = Instant::now();
    let edit = service
        .oneshot(Call::new(
            "e",
            "edit",
            json!({"file_path": "big.rs", "old_string": old, "new_string": "let value = 42;"}),
        ))
        .await?;
    let edit_time = started.elapsed();
    assert_eq!(edit.outcome, Outcome::Success, "{}", edit.text());
    println!(
        "file: {:.1} MB, {lines} lines; read (3 lines at the middle): {:.1} ms; edit (validate + preview + write): {:.1} ms",
        size as f64 / 1e6,
        read_time.as_secs_f64() * 1e3,
        edit_time.as_secs_f64() * 1e3,
    );
    Ok(())
}
