//! Bench for grep's content mode on a pattern that matches millions of
//! lines with `head_limit: 0`: the output is capped at 30,000 characters,
//! so the tool's memory should be bounded by the cap, not by the number of
//! matches. Measure the process's peak memory with
//! `/usr/bin/time -v target/release/examples/grep_memory`.
//!
//! Usage: `grep_memory [MILLION_LINES] [FILES]` (default 10 million
//! matching lines in 100 files). The tree is generated once under
//! `$AGENTCORE_BENCH_DIR` (default `$TMPDIR/agentcore-bench`) and reused.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::time::Instant;

use agentcore::TypedTool;
use agentcore::fs::workspace::Workspace;
use agentcore::tools::grep::GrepTool;
use agentcore::{CallContext, EventSink, GatedArgs};
use serde_json::json;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let millions: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(10);
    let files: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(100);
    let base = std::env::var_os("AGENTCORE_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("agentcore-bench"));
    let root = base.join(format!("grep-memory-{millions}m-{files}f"));
    let lines_per_file = millions * 1_000_000 / files;
    if !root.join("done").exists() {
        fs::create_dir_all(&root)?;
        for f in 0..files {
            let mut out = BufWriter::new(File::create(root.join(format!("f{f:04}.txt")))?);
            for i in 0..lines_per_file {
                writeln!(out, "match {i}")?;
            }
            out.flush()?;
        }
        File::create(root.join("done"))?;
    }
    let rt = tokio::runtime::Builder::new_multi_thread().build()?;
    let tool = GrepTool::new(Workspace::new(&root)?).into_dyn();
    let cx = CallContext::for_test("grep_memory", EventSink::noop());
    let call =
        json!({"pattern": "match", "output_mode": "content", "head_limit": 0, "glob": "*.txt"});
    let started = Instant::now();
    let out = rt
        .block_on(tool.execute(GatedArgs::for_test(call), &cx))
        .map_err(|e| format!("{e:?}"))?;
    let took = started.elapsed();
    let text = out.content[0].as_text().unwrap_or_default();
    let last = text.lines().last().unwrap_or_default();
    println!(
        "{} matching lines in {files} files: {:.1} ms, {} characters out; last line: {last}",
        lines_per_file * files,
        took.as_secs_f64() * 1e3,
        text.chars().count()
    );
    Ok(())
}
