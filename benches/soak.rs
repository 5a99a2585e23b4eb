//! The full soak: 10,000 turns of 10 calls with random outcomes in one
//! session, with the figures of `docs/performance.md` ("## Soak").
//!
//! `cargo bench --bench soak` (`AGENTCORE_SOAK_TURNS` changes the count).
//! The driver and its checks live in `tests/soak.rs`, which CI runs with
//! 300 turns.

#[path = "../tests/soak.rs"]
mod soak;

fn main() {
    let turns = std::env::var("AGENTCORE_SOAK_TURNS")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(10_000);
    let report = soak::runtime().block_on(soak::soak(turns, 0x5eed));
    let secs = report.elapsed.as_secs_f64();
    let mib = |b: usize| b as f64 / (1024.0 * 1024.0);
    let growth = |a: usize, b: usize| (b as f64 / a as f64 - 1.0) * 100.0;
    println!(
        "soak: {} turns of 10 calls ({} calls)",
        report.turns,
        report.turns * 10
    );
    println!(
        "turns: {} normal, {} aborted, {} steered",
        report.endings.0, report.endings.1, report.endings.2
    );
    let mut outcomes: Vec<_> = report.outcomes.iter().collect();
    outcomes.sort_by_key(|(o, _)| o.as_str());
    for (outcome, n) in outcomes {
        println!("  {outcome}: {n}");
    }
    println!(
        "| wall | {secs:.2} s | {:.0} turns/s | {:.0} calls/s |",
        report.turns as f64 / secs,
        report.turns as f64 * 10.0 / secs
    );
    println!(
        "| live heap | after {} turns: {:.3} MiB | end: {:.3} MiB | {:+.2} % |",
        report.warm_up_turns,
        mib(report.heap_warm),
        mib(report.heap_end),
        growth(report.heap_warm, report.heap_end)
    );
    println!(
        "| RSS | after {} turns: {:.2} MiB | end: {:.2} MiB | {:+.2} % |",
        report.warm_up_turns,
        mib(report.rss_warm),
        mib(report.rss_end),
        growth(report.rss_warm, report.rss_end)
    );
    println!(
        "| open fds | before: {} | after: {} |",
        report.fds.0, report.fds.1
    );
    let (before, warm, end, after) = report.tasks;
    println!(
        "| alive tasks | before: {before} | after warm-up: {warm} | end: {end} | session dropped: {after} |"
    );
    soak::check(&report);
    println!("soak: all checks passed");
}
