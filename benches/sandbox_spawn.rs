//! The cost of the command sandbox: `bash -c true` spawned and waited for,
//! plain and confined, interleaved, in one process (for
//! `docs/performance.md`).
//!
//! `cargo bench --bench sandbox_spawn` (`AGENTCORE_SANDBOX_RUNS` changes
//! the count, default 300). Prints p10, median and p90 in milliseconds for
//! each variant, the median added time, and the load average, since the
//! figures swing with the machine's load.

use std::process::Stdio;
use std::time::Instant;

#[cfg(target_os = "linux")]
use agentcore::sandbox::Sandbox;

#[cfg(target_os = "linux")]
fn main() {
    let runs: usize = std::env::var("AGENTCORE_SANDBOX_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(300);
    let workspace = tempfile::tempdir().expect("workspace");
    let shared = Sandbox::builder()
        .writable([workspace.path()])
        .build()
        .expect("sandbox");
    let per_command = Sandbox::builder()
        .writable([workspace.path()])
        .per_command_loopback()
        .build()
        .expect("sandbox");
    let network = Sandbox::builder()
        .writable([workspace.path()])
        .network(true)
        .build()
        .expect("sandbox");
    println!("{}\n", shared.status());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let variants: [(&str, Option<&Sandbox>); 4] = [
        ("plain", None),
        ("sandboxed, shared loopback", Some(&shared)),
        ("sandboxed, loopback per command", Some(&per_command)),
        ("sandboxed, network allowed", Some(&network)),
    ];
    let mut times = vec![Vec::with_capacity(runs); variants.len()];
    runtime.block_on(async {
        for _ in 0..runs {
            for (i, (_, sandbox)) in variants.iter().enumerate() {
                let mut cmd = tokio::process::Command::new("/bin/bash");
                cmd.arg("-c")
                    .arg("true")
                    .current_dir(workspace.path())
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null());
                let start = Instant::now();
                if let Some(sandbox) = sandbox {
                    sandbox.confine(&mut cmd).expect("confine");
                }
                let status = cmd.spawn().expect("spawn").wait().await.expect("wait");
                times[i].push(start.elapsed().as_secs_f64() * 1e3);
                assert!(status.success());
            }
        }
    });
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("{runs} runs each, load average {}", load.trim());
    let mut plain_median = 0.0;
    for (i, (name, _)) in variants.iter().enumerate() {
        let t = &mut times[i];
        t.sort_by(f64::total_cmp);
        let at = |q: f64| t[((t.len() - 1) as f64 * q) as usize];
        let median = at(0.5);
        if i == 0 {
            plain_median = median;
        }
        println!(
            "{name:<32} p10 {:6.2} ms  median {:6.2} ms  p90 {:6.2} ms  added (median) {:+.2} ms",
            at(0.1),
            median,
            at(0.9),
            median - plain_median
        );
    }
}

#[cfg(not(target_os = "linux"))]
fn main() {
    println!("sandbox_spawn: the command sandbox is Linux only");
}
