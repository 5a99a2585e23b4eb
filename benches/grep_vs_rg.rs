//! The read-side tools against the `rg` binary, in one run.
//!
//! ```text
//! CARGO_TARGET_DIR=/work/target-tools cargo bench -p agentcore-kernel --bench grep_vs_rg
//! ```
//!
//! Generates (once, under `$AGENTCORE_BENCH_DIR` or the temp dir) a ~200 MB
//! tree of ~20,000 files, a 50-file tree and a 200 MB single file, then
//! times: grep (files_with_matches, content) vs `rg`, per-call latency on
//! the small tree, glob vs `rg --files -g`, grep over the cargo registry
//! sources when present, and read at offset 1,000,000 of the big file
//! (with the process's peak RSS before and after). The `rg` runs capture
//! stdout through a pipe (ripgrep stops at the first match when stdout is
//! /dev/null). Without `rg` only the tool side runs; `$AGENTCORE_BENCH_RG`
//! names another ripgrep binary.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use agentcore::TypedTool;
use agentcore::fs::read_state::FileReadState;
use agentcore::fs::workspace::Workspace;
use agentcore::tools::glob::GlobTool;
use agentcore::tools::grep::GrepTool;
use agentcore::tools::read::ReadTool;
use agentcore::{CallContext, EventSink, GatedArgs, Tool};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

const WORDS: [&str; 16] = [
    "alpha", "beta", "gamma", "delta", "let", "fn", "struct", "impl", "return", "match", "self",
    "value", "index", "buffer", "error", "result",
];

/// A deterministic line generator (an LCG), so every run sees the same tree.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn line(&mut self, out: &mut String) {
        let n = 4 + self.next() % 10;
        for i in 0..n {
            if i > 0 {
                out.push(' ');
            }
            out.push_str(WORDS[(self.next() % 16) as usize]);
        }
        // About one line in 400 carries a needle.
        if self.next().is_multiple_of(400) {
            out.push_str(&format!(" needle_{}", self.next() % 1000));
        }
        out.push('\n');
    }
}

fn data_dir() -> PathBuf {
    std::env::var_os("AGENTCORE_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("agentcore-bench"))
}

/// `files` files of about `bytes` each under `root`, 100 per directory.
fn make_tree(root: &Path, files: usize, bytes: usize) {
    let done = root.join(".complete");
    if done.exists() {
        return;
    }
    let mut g = Gen(files as u64);
    let exts = ["rs", "py", "md", "txt", "js"];
    for i in 0..files {
        let dir = root.join(format!("d{:03}/s{}", i / 100, i % 3));
        fs::create_dir_all(&dir).unwrap();
        let mut body = String::with_capacity(bytes + 200);
        while body.len() < bytes {
            g.line(&mut body);
        }
        fs::write(dir.join(format!("f{i}.{}", exts[i % exts.len()])), body).unwrap();
    }
    fs::write(root.join(".gitignore"), "*.log\n").unwrap();
    fs::write(done, "").unwrap();
}

fn make_big_file(path: &Path, bytes: u64) {
    if fs::metadata(path).is_ok_and(|m| m.len() >= bytes) {
        return;
    }
    let mut g = Gen(7);
    let mut w = BufWriter::new(File::create(path).unwrap());
    let mut written = 0u64;
    let mut line = String::new();
    while written < bytes {
        line.clear();
        g.line(&mut line);
        w.write_all(line.as_bytes()).unwrap();
        written += line.len() as u64;
    }
    w.flush().unwrap();
}

/// The ripgrep binary: `$AGENTCORE_BENCH_RG`, else `rg` on the PATH.
fn rg_bin() -> PathBuf {
    std::env::var_os("AGENTCORE_BENCH_RG")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("rg"))
}

fn rg_available() -> bool {
    match Command::new(rg_bin()).arg("--version").output() {
        Ok(out) => {
            let version = String::from_utf8_lossy(&out.stdout);
            eprintln!("comparing with {}", version.lines().next().unwrap_or("rg"));
            true
        }
        Err(_) => false,
    }
}

fn rg(root: &Path, args: &[&str]) -> usize {
    let out = Command::new(rg_bin())
        .current_dir(root)
        .args([
            "--hidden",
            "--no-config",
            "--no-ignore-global",
            "-g",
            "!.git",
        ])
        .args(args)
        .output()
        .unwrap();
    out.stdout.len()
}

struct Runner {
    rt: tokio::runtime::Runtime,
    cx: CallContext,
}

impl Runner {
    fn call(&self, tool: &dyn Tool, args: &Value) -> usize {
        let out = self
            .rt
            .block_on(tool.execute(GatedArgs::for_test(args.clone()), &self.cx))
            .unwrap_or_else(|e| panic!("{args}: {e:?}"));
        out.content.len()
    }
}

fn max_rss_kib() -> i64 {
    let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap_or(-1)
}

fn benches(c: &mut Criterion) {
    let base = data_dir();
    let large = base.join("large");
    let small = base.join("small");
    let big_file_dir = base.join("bigfile");
    fs::create_dir_all(&big_file_dir).unwrap();
    let rss_start = max_rss_kib();
    make_tree(&large, 20_000, 10_000);
    make_tree(&small, 50, 4_000);
    let big_file = big_file_dir.join("big.txt");
    make_big_file(&big_file, 200 * 1024 * 1024);
    let have_rg = rg_available();
    if !have_rg {
        eprintln!("`rg` not found: timing the tools only");
    }
    let runner = Runner {
        rt: tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap(),
        cx: CallContext::for_test("bench", EventSink::noop()),
    };

    // read at offset 1,000,000 of the 200 MB file: time and peak memory.
    let read =
        ReadTool::new(Workspace::new(&big_file_dir).unwrap(), FileReadState::new()).into_dyn();
    let read_args = json!({"file_path": "big.txt", "offset": 1_000_000, "limit": 100});
    let before = max_rss_kib();
    runner.call(&*read, &read_args);
    let after = max_rss_kib();
    eprintln!(
        "read offset 1,000,000 of 200 MB: peak RSS {before} KiB before, {after} KiB after (process start {rss_start} KiB)"
    );
    let mut g = c.benchmark_group("read");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    g.bench_function("offset_1M_of_200MB", |b| {
        b.iter(|| runner.call(&*read, &read_args))
    });
    g.finish();

    let grep_large = GrepTool::new(Workspace::new(&large).unwrap()).into_dyn();
    let mut g = c.benchmark_group("grep_200MB_20k_files");
    g.sample_size(10).measurement_time(Duration::from_secs(15));
    let files = json!({"pattern": "needle_12[0-9]"});
    let content = json!({"pattern": "needle_12[0-9]", "output_mode": "content", "head_limit": 0});
    g.bench_function("tool_files_with_matches", |b| {
        b.iter(|| runner.call(&*grep_large, &files))
    });
    g.bench_function("tool_content", |b| {
        b.iter(|| runner.call(&*grep_large, &content))
    });
    if have_rg {
        g.bench_function("rg_files_with_matches", |b| {
            b.iter(|| rg(&large, &["-l", "needle_12[0-9]"]))
        });
        g.bench_function("rg_content", |b| {
            b.iter(|| rg(&large, &["-n", "needle_12[0-9]"]))
        });
    }
    g.finish();

    let glob_large = GlobTool::new(Workspace::new(&large).unwrap()).into_dyn();
    let mut g = c.benchmark_group("glob_200MB_20k_files");
    g.sample_size(10);
    let glob_args = json!({"pattern": "**/*.rs"});
    g.bench_function("tool", |b| b.iter(|| runner.call(&*glob_large, &glob_args)));
    if have_rg {
        g.bench_function("rg_files", |b| {
            b.iter(|| rg(&large, &["--files", "-g", "*.rs"]))
        });
    }
    g.finish();

    let grep_small = GrepTool::new(Workspace::new(&small).unwrap()).into_dyn();
    let mut g = c.benchmark_group("grep_50_files_latency");
    let small_args = json!({"pattern": "needle_[0-9]+", "output_mode": "content"});
    g.bench_function("tool", |b| {
        b.iter(|| runner.call(&*grep_small, &small_args))
    });
    if have_rg {
        g.bench_function("rg", |b| b.iter(|| rg(&small, &["-n", "needle_[0-9]+"])));
    }
    g.finish();

    let registry = dirs_registry();
    if let Some(registry) = registry {
        let grep_reg = GrepTool::new(Workspace::new(&registry).unwrap()).into_dyn();
        let mut g = c.benchmark_group("grep_cargo_registry_src");
        g.sample_size(10).measurement_time(Duration::from_secs(15));
        let args = json!({"pattern": "fn [a-z_]+_unchecked"});
        g.bench_function("tool_files_with_matches", |b| {
            b.iter(|| runner.call(&*grep_reg, &args))
        });
        if have_rg {
            g.bench_function("rg_files_with_matches", |b| {
                b.iter(|| rg(&registry, &["-l", "fn [a-z_]+_unchecked"]))
            });
        }
        g.finish();
    }
}

/// `~/.cargo/registry/src`, when it exists.
fn dirs_registry() -> Option<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
    let src = home.join("registry/src");
    src.is_dir().then_some(src)
}

criterion_group!(grep_vs_rg, benches);
criterion_main!(grep_vs_rg);
