//! The MCP face measured from a Rust client: the release `agentcore mcp`
//! binary driven through rmcp's client over stdio (a child process and its
//! pipes), against the same tool called in-process through a [`Session`]'s
//! scheduler in the same run, so the difference is the transport's cost
//! (JSON-RPC framing, the pipes, rmcp on both sides, the MCP server's
//! arrival order).
//!
//! `cargo bench --bench mcp_stdio` (cargo builds the `agentcore` binary with
//! the bench profile and hands its path to this bench). Groups, each with
//! the stdio figure and its in-process baseline side by side:
//!
//! - `read_80KB`: `read` of an 80,000-byte file (1,000 lines of 80 bytes);
//! - `glob_5000_files`: `glob` `**/*_042.txt` over a tree of 5,000 files
//!   (50 folders of 100), 50 matches;
//! - `grep_5000_files`: `grep` `needle_1[0-9]` (files_with_matches) over the
//!   same tree, 10 matching files;
//! - `ping`: the protocol floor over stdio (no tool, no scheduler);
//! - `cold_start`: from spawning `agentcore mcp` to the `initialize` answer,
//!   through rmcp's client and through raw pipes (one JSON line written, one
//!   read), and through raw pipes with a policy that turns the command
//!   sandbox off (building the sandbox is part of starting a session),
//!   against spawning `agentcore --version` until it exits (what any start
//!   of this binary costs).
//!
//! Every call is checked once to succeed before it is timed.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use agentcore::Call;
use agentcore::session::{Session, SessionConfig};
use criterion::{Criterion, criterion_group, criterion_main};
use rmcp::model::{CallToolRequestParams, ClientRequest, JsonObject, PingRequest};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tower::ServiceExt;

/// The `agentcore` binary cargo built for this bench.
const BINARY: &str = env!("CARGO_BIN_EXE_agentcore");

/// Lines of the 80 KB file, 80 bytes each with the newline.
const BIG_FILE_LINES: usize = 1_000;
/// Folders of the tree, and files in each.
const TREE_DIRS: usize = 50;
const TREE_FILES_PER_DIR: usize = 100;

/// Writes the workspace: `big.txt` (80,000 bytes) and `tree/` (5,000
/// small files, `needle_N` in the file numbered N).
fn write_workspace(root: &Path) {
    let mut big = String::with_capacity(BIG_FILE_LINES * 80);
    for i in 0..BIG_FILE_LINES {
        // 79 characters and a newline.
        let line =
            format!("line {i:05}: the quick brown fox jumps over the lazy dog, again and again");
        big.push_str(&format!("{line:<79}\n"));
    }
    assert_eq!(big.len(), 80_000);
    std::fs::write(root.join("big.txt"), big).expect("write big.txt");
    for d in 0..TREE_DIRS {
        let dir = root.join("tree").join(format!("d{d:02}"));
        std::fs::create_dir_all(&dir).expect("create tree folder");
        for f in 0..TREE_FILES_PER_DIR {
            let n = d * TREE_FILES_PER_DIR + f;
            let text = format!(
                "file {n}\nsome ordinary text that does not match\nneedle_{n}\nmore text at the end\n"
            );
            std::fs::write(dir.join(format!("f_{f:03}.txt")), text).expect("write tree file");
        }
    }
}

/// One operation: a tool name and its arguments.
struct Op {
    group: &'static str,
    tool: &'static str,
    args: Value,
}

fn ops(root: &Path) -> Vec<Op> {
    vec![
        Op {
            group: "read_80KB",
            tool: "read",
            args: json!({"file_path": root.join("big.txt")}),
        },
        Op {
            group: "glob_5000_files",
            tool: "glob",
            args: json!({"pattern": "**/*_042.txt", "path": "tree"}),
        },
        Op {
            group: "grep_5000_files",
            tool: "grep",
            args: json!({"pattern": "needle_1[0-9]\\b", "path": "tree"}),
        },
    ]
}

fn object(value: &Value) -> JsonObject {
    value.as_object().cloned().unwrap_or_default()
}

/// `agentcore mcp --root ROOT`, connected and initialized.
async fn connect(root: &Path) -> RunningService<RoleClient, ()> {
    let mut command = tokio::process::Command::new(BINARY);
    command
        .arg("mcp")
        .arg("--root")
        .arg(root)
        .kill_on_drop(true);
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn agentcore mcp");
    rmcp::serve_client((), transport)
        .await
        .expect("MCP handshake with agentcore mcp")
}

/// Closes the client, and so the server's stdin; the server then exits.
async fn close(client: RunningService<RoleClient, ()>) {
    let _ = tokio::time::timeout(Duration::from_secs(10), client.cancel()).await;
}

/// The text of a result, for the check that a call succeeded.
fn text_of(content: &[rmcp::model::ContentBlock]) -> String {
    content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

fn tools(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let workspace = tempfile::tempdir().expect("workspace");
    let root = workspace.path().canonicalize().expect("canonical root");
    write_workspace(&root);

    let client = runtime.block_on(connect(&root));
    // The baseline: what `agentcore mcp` runs for a call, in this process.
    let session = runtime.block_on(async {
        let mut config =
            SessionConfig::from_options(Some(root.clone()), None, None).expect("session config");
        config.max_tool_errors = 0;
        Session::start(config).expect("session")
    });

    for op in ops(&root) {
        let params = CallToolRequestParams::new(op.tool).with_arguments(object(&op.args));
        // Both ways succeed and agree before anything is timed.
        let over_stdio = runtime
            .block_on(client.peer().call_tool(params.clone()))
            .expect("tools/call");
        assert_ne!(
            over_stdio.is_error,
            Some(true),
            "{} failed over stdio: {}",
            op.tool,
            text_of(&over_stdio.content)
        );
        let in_process = runtime
            .block_on(session.scheduler().clone().oneshot(Call::new(
                "c1",
                op.tool,
                op.args.clone(),
            )))
            .expect("scheduler");
        assert!(!in_process.is_error(), "{} failed in-process", op.tool);

        let mut group = c.benchmark_group(op.group);
        group.bench_function("stdio", |b| {
            b.to_async(&runtime).iter(|| {
                let peer = client.peer().clone();
                let params = params.clone();
                async move { peer.call_tool(params).await.expect("tools/call") }
            })
        });
        group.bench_function("in_process", |b| {
            b.to_async(&runtime).iter(|| {
                let scheduler = session.scheduler().clone();
                let call = Call::new("c1", op.tool, op.args.clone());
                async move { scheduler.oneshot(call).await.expect("scheduler") }
            })
        });
        group.finish();
    }

    let mut group = c.benchmark_group("ping");
    group.bench_function("stdio", |b| {
        b.to_async(&runtime).iter(|| {
            let peer = client.peer().clone();
            async move {
                peer.send_request(ClientRequest::PingRequest(PingRequest::default()))
                    .await
                    .expect("ping")
            }
        })
    });
    group.finish();

    runtime.block_on(async {
        close(client).await;
        session.end_jobs().await;
    });
    drop(session);
}

/// The first line `agentcore mcp` answers to an `initialize` written on its
/// stdin: raw pipes, no MCP library on this side.
/// `extra` goes after `mcp --root ROOT` (e.g. a policy that turns the
/// command sandbox off).
async fn raw_initialize(root: &Path, extra: &[&std::ffi::OsStr]) -> Duration {
    let started = Instant::now();
    let mut child = tokio::process::Command::new(BINARY)
        .arg("mcp")
        .arg("--root")
        .arg(root)
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn agentcore mcp");
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "mcp_stdio bench", "version": "0"}
        }
    });
    let mut line = serde_json::to_vec(&initialize).expect("json");
    line.push(b'\n');
    stdin.write_all(&line).await.expect("write initialize");
    stdin.flush().await.expect("flush");
    let mut answer = String::new();
    BufReader::new(stdout)
        .read_line(&mut answer)
        .await
        .expect("read the answer");
    let elapsed = started.elapsed();
    assert!(
        answer.contains("\"result\"") && answer.contains("agentcore"),
        "unexpected answer to initialize: {answer}"
    );
    drop(stdin);
    let _ = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
    elapsed
}

/// Spawning `agentcore --version` until it exits.
async fn version() -> Duration {
    let started = Instant::now();
    let status = tokio::process::Command::new(BINARY)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .await
        .expect("spawn agentcore --version");
    let elapsed = started.elapsed();
    assert!(status.success());
    elapsed
}

fn cold_start(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let workspace = tempfile::tempdir().expect("workspace");
    let root: PathBuf = workspace.path().canonicalize().expect("canonical root");
    write_workspace(&root);
    // A policy that turns the command sandbox off: what starting costs
    // without building the sandbox.
    let policy_dir = tempfile::tempdir().expect("policy folder");
    let sandbox_off = policy_dir.path().join("sandbox-off.toml");
    std::fs::write(&sandbox_off, "[sandbox]\nmode = \"off\"\n").expect("write policy");

    let mut group = c.benchmark_group("cold_start");
    group.sample_size(20);
    group.bench_function("rmcp_client_to_initialize", |b| {
        b.to_async(&runtime).iter_custom(|iters| {
            let root = root.clone();
            async move {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let started = Instant::now();
                    let client = connect(&root).await;
                    total += started.elapsed();
                    close(client).await;
                }
                total
            }
        })
    });
    group.bench_function("raw_pipes_to_initialize", |b| {
        b.to_async(&runtime).iter_custom(|iters| {
            let root = root.clone();
            async move {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    total += raw_initialize(&root, &[]).await;
                }
                total
            }
        })
    });
    group.bench_function("raw_pipes_to_initialize_sandbox_off", |b| {
        b.to_async(&runtime).iter_custom(|iters| {
            let root = root.clone();
            let policy = sandbox_off.clone();
            async move {
                let extra = [std::ffi::OsStr::new("--policy"), policy.as_os_str()];
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    total += raw_initialize(&root, &extra).await;
                }
                total
            }
        })
    });
    group.bench_function("baseline_version_to_exit", |b| {
        b.to_async(&runtime).iter_custom(|iters| async move {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                total += version().await;
            }
            total
        })
    });
    group.finish();
}

criterion_group!(benches, tools, cold_start);
criterion_main!(benches);
