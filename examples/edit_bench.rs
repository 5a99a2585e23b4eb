//! Bench for the edit tools, through the whole pipeline (validate, preview
//! diff, gate, execute with its atomic write). Measure the process's peak
//! memory with `/usr/bin/time -v target/release/examples/edit_bench …`.
//!
//! Usage:
//!
//! - `edit_bench [MEGABYTES]` (default 50): one unique replacement in the
//!   middle of the file;
//! - `edit_bench replace-all [MEGABYTES]` (default 20): `replace_all` of a
//!   one-letter name that occurs twice on every 10-byte line (about 4
//!   million places in 20 MB);
//! - `edit_bench multi-edit [MEGABYTES]` (default 200): one `multi_edit`
//!   call of three edits: a `replace_all` over every line, then two unique
//!   replacements.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::Arc;
use std::time::Instant;

use agentcore::TypedTool;
use agentcore::fs::read_state::FileReadState;
use agentcore::fs::workspace::Workspace;
use agentcore::tools::edit::EditTool;
use agentcore::tools::edit::multi_edit::MultiEditTool;
use agentcore::tools::read::ReadTool;
use agentcore::{Call, Outcome, Pipeline, ToolRegistry};
use serde_json::{Value, json};
use tower::ServiceExt;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Unique,
    ReplaceAll,
    MultiEdit,
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1).peekable();
    let mode = match args.peek().map(String::as_str) {
        Some("replace-all") => Mode::ReplaceAll,
        Some("multi-edit") => Mode::MultiEdit,
        _ => Mode::Unique,
    };
    if mode != Mode::Unique {
        args.next();
    }
    let megabytes: usize = match args.next() {
        Some(arg) => arg.parse()?,
        None => match mode {
            Mode::Unique => 50,
            Mode::ReplaceAll => 20,
            Mode::MultiEdit => 200,
        },
    };
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("big.rs");
    // Written in pieces, so the file itself never sits in this process's
    // memory before the edit.
    let mut out = BufWriter::new(File::create(&path)?);
    let line_len = match mode {
        Mode::Unique => 64,
        Mode::ReplaceAll | Mode::MultiEdit => 10,
    };
    let lines = megabytes * 1_000_000 / line_len;
    for i in 0..lines {
        match mode {
            Mode::Unique => writeln!(
                out,
                "let value_{i:010} = compute(input, {i:010}); // padding.."
            )?,
            // 10 bytes, two places of `x`.
            _ => out.write_all(b"id(x, x);\n")?,
        }
    }
    if mode == Mode::MultiEdit {
        out.write_all(b"fn first() {}\nfn last() {}\n")?;
    }
    out.into_inner()?.sync_all()?;
    let size = std::fs::metadata(&path)?.len();

    let ws = Workspace::new(dir.path())?;
    let state = FileReadState::new();
    let registry = ToolRegistry::new()
        .with(ReadTool::new(ws.clone(), state.clone()).into_dyn())?
        .with(EditTool::new(ws.clone(), state.clone()).into_dyn())?
        .with(MultiEditTool::new(ws, state).into_dyn())?;
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

    let (tool, args): (&str, Value) = match mode {
        Mode::Unique => {
            let old = format!("let value_{middle:010} = compute(input, {middle:010});");
            (
                "edit",
                json!({"file_path": "big.rs", "old_string": old, "new_string": "let value = 42;"}),
            )
        }
        Mode::ReplaceAll => (
            "edit",
            json!({"file_path": "big.rs", "old_string": "x", "new_string": "value", "replace_all": true}),
        ),
        Mode::MultiEdit => (
            "multi_edit",
            json!({"file_path": "big.rs", "edits": [
                {"old_string": "id(x, x);", "new_string": "id(y, y);", "replace_all": true},
                {"old_string": "fn first() {}", "new_string": "fn first() { start(); }"},
                {"old_string": "fn last() {}", "new_string": "fn last() { stop(); }"},
            ]}),
        ),
    };
    let started = Instant::now();
    let edit = service.oneshot(Call::new("e", tool, args)).await?;
    let edit_time = started.elapsed();
    assert_eq!(edit.outcome, Outcome::Success, "{}", edit.text());
    println!(
        "file: {:.1} MB, {lines} lines; read (3 lines at the middle): {:.1} ms; {tool} (validate + preview + write): {:.1} ms; result: {} bytes",
        size as f64 / 1e6,
        read_time.as_secs_f64() * 1e3,
        edit_time.as_secs_f64() * 1e3,
        edit.text().len(),
    );
    Ok(())
}
