//! The read-side tools against the `rg` binary, in one run.
//!
//! ```text
//! CARGO_TARGET_DIR=/work/target-tools cargo bench -p agentcore-kernel --bench grep_vs_rg
//! AGENTCORE_BENCH_SIDE_BY_SIDE=15 cargo bench -p agentcore-kernel --bench grep_vs_rg
//! ```
//!
//! With `$AGENTCORE_BENCH_SIDE_BY_SIDE` set to a number of rounds, criterion
//! is not run: each round times every case once, the tool and `rg` one
//! right after the other, so a loaded machine weighs on both sides alike;
//! the medians, their spreads and the ratio of each pair are printed.
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
use std::io::{BufRead, BufReader};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentcore::TypedTool;
use agentcore::approval::ApprovalEngine;
use agentcore::fs::read_state::FileReadState;
use agentcore::fs::workspace::Workspace;
use agentcore::tools::glob::GlobTool;
use agentcore::tools::grep::GrepTool;
use agentcore::tools::ls::LsTool;
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

/// `rg … | head -n lines`: the first `lines` lines read, then the pipe
/// closed (ripgrep then stops, as under `head`).
fn rg_head(root: &Path, args: &[&str], lines: usize) -> usize {
    let mut child = Command::new(rg_bin())
        .current_dir(root)
        .args([
            "--hidden",
            "--no-config",
            "--no-ignore-global",
            "-g",
            "!.git",
        ])
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let mut bytes = 0;
    for _ in 0..lines {
        line.clear();
        match out.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(n) => bytes += n,
        }
    }
    drop(out);
    let _ = child.wait();
    bytes
}

/// The workspace a session gives its tools: the walk leaves out what a
/// read would not simply be allowed (protected paths), as `Session` sets
/// it up.
fn session_workspace(root: &Path) -> Workspace {
    let filter = ApprovalEngine::new(root).walk_filter();
    let entries = filter.clone();
    Workspace::new(root)
        .unwrap()
        .with_exclusions(Arc::new(move |p: &Path| filter.excludes(p)))
        .with_entry_exclusions(Arc::new(move |p: &Path, kind| {
            entries.excludes_entry(p, kind)
        }))
}

/// `files` files under `root`, `per_dir` to a folder, each a line.
fn make_flat_tree(root: &Path, files: usize, per_dir: usize) {
    let done = root.join(".complete");
    if done.exists() {
        return;
    }
    for i in 0..files {
        let dir = root.join(format!("folder_{:03}", i / per_dir));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(format!("file_{:03}.txt", i % per_dir)), "x\n").unwrap();
    }
    fs::write(done, "").unwrap();
}

/// One case of the side-by-side run: a name, the tool's call and the
/// other side's (none when there is nothing to compare with).
type Case<'a> = (
    &'a str,
    Box<dyn Fn() -> usize + 'a>,
    Option<Box<dyn Fn() -> usize + 'a>>,
);

fn median_spread(times: &mut [f64]) -> (f64, f64, f64) {
    times.sort_by(f64::total_cmp);
    let n = times.len();
    (times[n / 2], times[0], times[n - 1])
}

/// Times every case `rounds` times, the two sides of a case back to back,
/// and prints medians (min–max) and the ratio of the medians.
fn side_by_side(rounds: usize, cases: &[Case<'_>]) {
    let load = fs::read_to_string("/proc/loadavg").unwrap_or_default();
    eprintln!(
        "side by side, {rounds} rounds; load average at start: {}",
        load.trim()
    );
    let mut tool: Vec<Vec<f64>> = vec![Vec::new(); cases.len()];
    let mut other: Vec<Vec<f64>> = vec![Vec::new(); cases.len()];
    for round in 0..=rounds {
        for (i, (_, ours, theirs)) in cases.iter().enumerate() {
            // Alternate which side goes first.
            let time = |f: &dyn Fn() -> usize| {
                let t = Instant::now();
                std::hint::black_box(f());
                t.elapsed().as_secs_f64() * 1e3
            };
            let (a, b) = if round % 2 == 0 {
                let a = time(ours);
                (a, theirs.as_ref().map(|f| time(f)))
            } else {
                let b = theirs.as_ref().map(|f| time(f));
                (time(ours), b)
            };
            // Round 0 warms up.
            if round > 0 {
                tool[i].push(a);
                other[i].extend(b);
            }
        }
    }
    let load = fs::read_to_string("/proc/loadavg").unwrap_or_default();
    eprintln!("load average at end: {}", load.trim());
    eprintln!("| case | tool median (min–max) | other side median (min–max) | ratio |");
    eprintln!("|---|---|---|---|");
    for (i, (name, _, _)) in cases.iter().enumerate() {
        let (t, tmin, tmax) = median_spread(&mut tool[i]);
        if other[i].is_empty() {
            eprintln!("| {name} | {t:.2} ms ({tmin:.2}–{tmax:.2}) | — | — |");
            continue;
        }
        let (o, omin, omax) = median_spread(&mut other[i]);
        eprintln!(
            "| {name} | {t:.2} ms ({tmin:.2}–{tmax:.2}) | {o:.2} ms ({omin:.2}–{omax:.2}) | {:.2}× |",
            t / o
        );
    }
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

    if let Some(rounds) = std::env::var("AGENTCORE_BENCH_SIDE_BY_SIDE")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    {
        let flat = base.join("flat5000");
        make_flat_tree(&flat, 5_000, 100);
        // A new workspace per call: nothing learned by earlier calls
        // (a first search), except where a case says "repeated".
        let grep_large = || GrepTool::new(Workspace::new(&large).unwrap()).into_dyn();
        let grep_session = || GrepTool::new(session_workspace(&large)).into_dyn();
        let grep_small = || GrepTool::new(Workspace::new(&small).unwrap()).into_dyn();
        let glob_large = || GlobTool::new(Workspace::new(&large).unwrap()).into_dyn();
        let ls_flat = || LsTool::new(session_workspace(&flat)).into_dyn();
        let grep_kept = GrepTool::new(Workspace::new(&large).unwrap()).into_dyn();
        let (runner, large, small) = (&runner, &large, &small);
        fn side<'a>(
            have: bool,
            f: Box<dyn Fn() -> usize + 'a>,
        ) -> Option<Box<dyn Fn() -> usize + 'a>> {
            have.then_some(f)
        }
        let cases: Vec<Case<'_>> = vec![
            (
                "grep files, 200 MB / 20k files",
                Box::new(|| runner.call(&*grep_large(), &json!({"pattern": "needle_12[0-9]"}))),
                side(have_rg, Box::new(|| rg(large, &["-l", "needle_12[0-9]"]))),
            ),
            (
                "grep content (head_limit 0), same tree",
                Box::new(|| {
                    runner.call(
                        &*grep_large(),
                        &json!({"pattern": "needle_12[0-9]", "output_mode": "content", "head_limit": 0}),
                    )
                }),
                side(have_rg, Box::new(|| rg(large, &["-n", "needle_12[0-9]"]))),
            ),
            (
                "grep files, session's walk filter, same tree",
                Box::new(|| runner.call(&*grep_session(), &json!({"pattern": "needle_12[0-9]"}))),
                side(have_rg, Box::new(|| rg(large, &["-l", "needle_12[0-9]"]))),
            ),
            (
                "grep content head_limit 250 (`return`) vs rg | head -n 250",
                Box::new(|| {
                    runner.call(
                        &*grep_large(),
                        &json!({"pattern": "return", "output_mode": "content"}),
                    )
                }),
                side(have_rg, Box::new(|| rg_head(large, &["-n", "return"], 250))),
            ),
            (
                "grep content head_limit 1 (`return`) vs rg | head -n 1",
                Box::new(|| {
                    runner.call(
                        &*grep_large(),
                        &json!({"pattern": "return", "output_mode": "content", "head_limit": 1}),
                    )
                }),
                side(have_rg, Box::new(|| rg_head(large, &["-n", "return"], 1))),
            ),
            (
                "grep count head_limit 250 (`return`) vs rg -c | head -n 250",
                Box::new(|| {
                    runner.call(
                        &*grep_large(),
                        &json!({"pattern": "return", "output_mode": "count"}),
                    )
                }),
                side(have_rg, Box::new(|| rg_head(large, &["-c", "return"], 250))),
            ),
            (
                "glob **/*.rs vs rg --files -g '*.rs'",
                Box::new(|| runner.call(&*glob_large(), &json!({"pattern": "**/*.rs"}))),
                side(have_rg, Box::new(|| rg(large, &["--files", "-g", "*.rs"]))),
            ),
            (
                "grep content on the 50-file tree",
                Box::new(|| {
                    runner.call(
                        &*grep_small(),
                        &json!({"pattern": "needle_[0-9]+", "output_mode": "content"}),
                    )
                }),
                side(have_rg, Box::new(|| rg(small, &["-n", "needle_[0-9]+"]))),
            ),
            (
                "ls of a 5,000-file root (50 folders of 100), session's filter",
                Box::new(|| runner.call(&*ls_flat(), &json!({"path": "."}))),
                None,
            ),
            (
                "grep files repeated (kept listings and verdicts) vs the first search",
                Box::new(|| runner.call(&*grep_kept, &json!({"pattern": "needle_12[0-9]"}))),
                Some(Box::new(|| {
                    runner.call(&*grep_large(), &json!({"pattern": "needle_12[0-9]"}))
                })),
            ),
            (
                "grep content repeated vs the first search",
                Box::new(|| {
                    runner.call(
                        &*grep_kept,
                        &json!({"pattern": "needle_12[0-9]", "output_mode": "content"}),
                    )
                }),
                Some(Box::new(|| {
                    runner.call(
                        &*grep_large(),
                        &json!({"pattern": "needle_12[0-9]", "output_mode": "content"}),
                    )
                })),
            ),
            (
                "grep content (head_limit 0) repeated vs the first search",
                Box::new(|| {
                    runner.call(
                        &*grep_kept,
                        &json!({"pattern": "needle_12[0-9]", "output_mode": "content", "head_limit": 0}),
                    )
                }),
                Some(Box::new(|| {
                    runner.call(
                        &*grep_large(),
                        &json!({"pattern": "needle_12[0-9]", "output_mode": "content", "head_limit": 0}),
                    )
                })),
            ),
        ];
        // `$AGENTCORE_BENCH_ONLY`: the cases whose name contains it (for a
        // profile of one).
        let only = std::env::var("AGENTCORE_BENCH_ONLY").unwrap_or_default();
        let cases: Vec<Case<'_>> = cases
            .into_iter()
            .filter(|(name, _, _)| name.contains(only.as_str()))
            .collect();
        side_by_side(rounds, &cases);
        return;
    }

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
