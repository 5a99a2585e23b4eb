//! What a checkpoint adds to a call, on trees of 10,000 and 100,000 files:
//! the recorder's look before and after (the call's own work not timed),
//! for an edit (the exact file), a command that changes one file and one
//! that changes 1,000 (the whole roots compared by `lstat` key). Also
//! prints the store's growth per call and the first look's cost (the
//! baseline that later sessions reuse).
//!
//! `cargo bench --bench checkpoint_cost` (figures in docs/performance.md).

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use agentcore::checkpoint::{CheckpointConfig, Checkpoints};
use agentcore::fs::workspace::Workspace;
use criterion::{Criterion, criterion_group, criterion_main};

/// A tree of `n` small files, 100 to a folder.
fn make_tree(root: &Path, n: usize) {
    for i in 0..n {
        let dir = root.join(format!("d{}", i / 100));
        if i % 100 == 0 {
            fs::create_dir_all(&dir).unwrap();
        }
        fs::write(
            dir.join(format!("f{i}.rs")),
            format!("// file {i}\nfn f{i}() {{}}\n"),
        )
        .unwrap();
    }
}

fn open(root: &Path, store: &Path) -> Checkpoints {
    let config = CheckpointConfig {
        store: Some(store.to_path_buf()),
        ..CheckpointConfig::default()
    };
    Checkpoints::open(
        &config,
        &Workspace::new(root).unwrap(),
        vec![root.to_path_buf()],
    )
    .unwrap()
}

fn bench(c: &mut Criterion) {
    for n in [10_000usize, 100_000] {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let store = tempfile::tempdir().unwrap();
        make_tree(&root, n);
        let started = Instant::now();
        let recorder = open(&root, store.path());
        eprintln!(
            "{n} files: first look (baseline) {:?}, store {} bytes",
            started.elapsed(),
            store_bytes(store.path())
        );
        let one: PathBuf = root.join("d0/f0.rs");
        let mut group = c.benchmark_group(format!("checkpoint/{n}_files"));
        group.sample_size(10);
        group.measurement_time(Duration::from_secs(10));
        let mut k = 0u64;
        group.bench_function("edit_one_file", |b| {
            b.iter_custom(|iters| {
                let mut spent = Duration::ZERO;
                for _ in 0..iters {
                    k += 1;
                    let t = Instant::now();
                    let r = recorder
                        .begin("e", "edit", "edit", Some(vec![one.clone()]))
                        .unwrap();
                    spent += t.elapsed();
                    fs::write(&one, format!("edit {k}\n")).unwrap();
                    let t = Instant::now();
                    recorder.end(r).unwrap();
                    spent += t.elapsed();
                }
                spent
            })
        });
        for changed in [1usize, 1000] {
            group.bench_function(format!("bash_changing_{changed}"), |b| {
                b.iter_custom(|iters| {
                    let mut spent = Duration::ZERO;
                    for _ in 0..iters {
                        k += 1;
                        let t = Instant::now();
                        let r = recorder.begin("b", "bash", "cmd", None).unwrap();
                        spent += t.elapsed();
                        for i in 0..changed {
                            let path = root.join(format!("d{}/f{i}.rs", i / 100));
                            fs::write(path, format!("bash {k}\n")).unwrap();
                        }
                        let t = Instant::now();
                        recorder.end(r).unwrap();
                        spent += t.elapsed();
                    }
                    spent
                })
            });
        }
        group.finish();
        // Store growth: one more call of each kind, measured alone.
        for (label, changed, exact) in [
            ("edit", 1, true),
            ("bash 1", 1, false),
            ("bash 1000", 1000, false),
        ] {
            let before = store_bytes(store.path());
            k += 1;
            let r = recorder
                .begin("g", "bash", "cmd", exact.then(|| vec![one.clone()]))
                .unwrap();
            for i in 0..changed {
                let path = root.join(format!("d{}/f{i}.rs", i / 100));
                fs::write(path, format!("growth {k} {i}\n")).unwrap();
            }
            recorder.end(r).unwrap();
            eprintln!(
                "{n} files: {label}: store grew {} bytes of objects",
                store_bytes(store.path()) - before
            );
        }
    }
}

/// Bytes of the store's kept versions.
fn store_bytes(store: &Path) -> u64 {
    let mut total = 0;
    let mut todo = vec![store.join("objects")];
    while let Some(d) = todo.pop() {
        for e in fs::read_dir(&d).into_iter().flatten().flatten() {
            let meta = e.metadata().unwrap();
            if meta.is_dir() {
                todo.push(e.path());
            } else {
                total += meta.len();
            }
        }
    }
    total
}

criterion_group!(benches, bench);
criterion_main!(benches);
