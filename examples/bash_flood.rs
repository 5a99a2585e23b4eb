//! Bench for the bash tool: a command printing 1 GB through the whole
//! pipeline. Measure the process's peak memory with
//! `/usr/bin/time -v target/release/examples/bash_flood`.
//!
//! Usage: `bash_flood [COMMAND [OUTPUT_FOLDER_CAP_BYTES]]` (defaults:
//! `yes | head -c 1000000000`, the folder's default cap of 512 MiB).

use std::sync::Arc;
use std::time::Instant;

use agentcore::TypedTool;
use agentcore::process::OutputDir;
use agentcore::tools::bash::BashTool;
use agentcore::{Call, Pipeline, ToolRegistry};
use serde_json::json;
use tower::ServiceExt;

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let command = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "yes | head -c 1000000000".to_owned());
    let root = std::env::current_dir()?;
    let capacity = match std::env::args().nth(2) {
        Some(cap) => cap.parse()?,
        None => OutputDir::DEFAULT_CAPACITY,
    };
    let output_dir = Arc::new(OutputDir::with_capacity(capacity)?);
    let tool = BashTool::new(root, output_dir.clone());
    let registry = ToolRegistry::new().with(tool.into_dyn())?;
    let service = Pipeline::builder()
        .registry(Arc::new(registry))
        .build()
        .service();
    let started = Instant::now();
    let result = service
        .oneshot(Call::new(
            "bench",
            "bash",
            json!({"command": command, "timeout": 600_000}),
        ))
        .await?;
    let elapsed = started.elapsed();
    let text = result.text();
    for line in text.lines().take(2) {
        println!("{line}");
    }
    println!("outcome: {}", result.outcome);
    println!("result characters: {}", text.chars().count());
    println!("output folder used: {} bytes", output_dir.used());
    println!("wall: {:.2} s", elapsed.as_secs_f64());
    Ok(())
}
