//! One command from start to finish: read its output, watch the clock and
//! the cancellation, and leave none of its processes behind.

use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use agentcore_stages::Cancellation;
use tokio::time::{Instant, sleep_until};

use super::jobs::LiveOutput;
use super::output::Collector;
use super::progress::Progress;
use super::spawn::Spawned;
use super::spool::Spool;
use crate::process::child::KILL_GRACE;
use crate::process::tracking as procs;

/// How long output may keep arriving after the shell exited: a process of
/// the command that holds the pipe open and cannot be killed (a setuid
/// program) cannot delay the result more than this.
pub(crate) const PIPE_GRACE: Duration = Duration::from_secs(2);

/// After KILL, how long to wait for the command's processes to die before
/// returning anyway (a process stuck in the kernel).
const VANISH_GRACE: Duration = Duration::from_millis(500);

/// How often to look whether the command's processes are gone after the
/// shell exited.
const GROUP_POLL: Duration = Duration::from_millis(20);

/// How often to note the command's processes while the shell runs, so that
/// those orphaned when it exits are still known as the call's.
const TRACK_EVERY: Duration = Duration::from_millis(100);

/// Read buffer size. The pipe holds 1 MiB (`super::pipe`), so a fast
/// writer rarely waits for us; reads of 128 KiB follow one another without
/// a wake-up while it has data, and keep what is queued for the output
/// file at 1 MiB (reads of 1 MiB took the peak memory of a 100 MB flood
/// from 40 to 62 MB).
const CHUNK: usize = 128 * 1024;

/// How a command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ending {
    /// The shell exited with this code.
    Exited(i32),
    /// The shell was killed by this signal.
    Signaled(i32),
    /// The timeout (in ms) fired.
    TimedOut(u64),
    /// The call's cancellation fired.
    Interrupted,
}

impl Ending {
    /// The result's first line.
    pub(crate) fn status_line(self) -> String {
        match self {
            Ending::Exited(code) => format!("Exit code: {code}"),
            Ending::Signaled(sig) => format!("Killed by signal {sig}"),
            Ending::TimedOut(ms) => format!("Timed out after {ms} ms"),
            Ending::Interrupted => "Interrupted".to_owned(),
        }
    }
}

/// Why we stopped the command ourselves.
#[derive(Clone, Copy, Debug)]
enum Stop {
    TimedOut,
    Interrupted,
}

/// Where the output goes as it arrives.
#[derive(Debug)]
pub(crate) struct Sinks {
    pub(crate) collector: Collector,
    pub(crate) file: Option<Spool>,
    /// Progress events of a foreground call; a background job has none.
    pub(crate) progress: Option<Progress>,
    /// Output not yet read, of a background job.
    pub(crate) live: Option<Arc<LiveOutput>>,
    /// The terminal of a terminal session: what arrives is rendered as
    /// text first, and only its finished lines go on.
    #[cfg(target_os = "linux")]
    pub(crate) terminal: Option<Arc<super::terminal::Terminal>>,
}

impl Sinks {
    async fn take(&mut self, bytes: &[u8]) {
        #[cfg(target_os = "linux")]
        if let Some(terminal) = &self.terminal {
            let lines = terminal.feed(bytes);
            // Pushed even when empty: a prompt is news to a reader.
            if let Some(live) = &self.live {
                live.push(lines.as_bytes());
            }
            self.collector.push(lines.as_bytes());
            if let Some(file) = &self.file
                && !lines.is_empty()
            {
                file.write(lines.as_bytes()).await;
            }
            return;
        }
        self.collector.push(bytes);
        if let Some(progress) = &mut self.progress {
            progress.push(bytes);
        }
        if let Some(live) = &self.live {
            live.push(bytes);
        }
        if let Some(file) = &self.file {
            file.write(bytes).await;
        }
    }
}

/// Runs the spawned command to its end and returns how it ended; the output
/// is in `sinks`. On return the shell is reaped and every process of the
/// call is killed (and reaped, when it was re-parented to this process).
pub(crate) async fn run(
    mut spawned: Spawned,
    timeout_ms: u64,
    cancellation: &Cancellation,
    sinks: &mut Sinks,
) -> Ending {
    let started = Instant::now();
    let deadline = started + Duration::from_millis(timeout_ms);
    let mut buf = vec![0u8; CHUNK];
    let mut stop: Option<Stop> = None;
    let mut kill_at: Option<Instant> = None;
    let mut killed_at: Option<Instant> = None;
    let mut status: Option<Option<ExitStatus>> = None;
    let mut pipe_open = true;
    let mut pipe_deadline: Option<Instant> = None;
    let mut group_gone = false;
    // Whether `group_gone` was seen (every process dead), not assumed after
    // the wait for it ran out.
    let mut seen_empty = false;
    let mut next_group_check = started;
    let mut next_track = started + TRACK_EVERY;
    let far = started + Duration::from_secs(60 * 60 * 24 * 365);

    loop {
        if status.is_some() && group_gone && !pipe_open {
            break;
        }
        // Timers are checked before the pipe, so that a flood of output
        // cannot starve them.
        let group_check = status.is_some() && !group_gone;
        let progress_due = sinks.progress.as_ref().and_then(Progress::due);
        tokio::select! {
            biased;
            _ = cancellation.cancelled(), if stop.is_none() && status.is_none() => {
                stop = Some(Stop::Interrupted);
                spawned.procs.terminate();
                kill_at = Some(Instant::now() + KILL_GRACE);
            }
            _ = sleep_until(deadline), if stop.is_none() && status.is_none() => {
                stop = Some(Stop::TimedOut);
                spawned.procs.terminate();
                kill_at = Some(Instant::now() + KILL_GRACE);
            }
            _ = sleep_until(kill_at.unwrap_or(far)), if kill_at.is_some() => {
                spawned.procs.kill();
                kill_at = None;
                killed_at = Some(Instant::now());
            }
            exited = spawned.child.wait(), if status.is_none() => {
                // An error here means the child was already reaped; its
                // status is then unknown.
                status = Some(exited.ok());
                procs::shell_awaited(spawned.pid);
                spawned
                    .procs
                    .shell_exited(status.flatten().is_some_and(|s| s.code().is_some()));
                pipe_deadline = Some(Instant::now() + PIPE_GRACE);
                next_group_check = Instant::now();
                // What the shell left behind goes too, wherever it went.
                if spawned.procs.is_empty() {
                    group_gone = true;
                    seen_empty = true;
                } else {
                    spawned.procs.terminate();
                    if kill_at.is_none() && killed_at.is_none() {
                        kill_at = Some(Instant::now() + KILL_GRACE);
                    }
                }
            }
            _ = sleep_until(pipe_deadline.unwrap_or(far)), if pipe_open && pipe_deadline.is_some() => {
                pipe_open = false;
            }
            _ = sleep_until(next_group_check), if group_check => {
                let vanish_over = killed_at.is_some_and(|t| t.elapsed() >= VANISH_GRACE);
                let empty = spawned.procs.is_empty();
                if empty || vanish_over {
                    group_gone = true;
                    seen_empty = empty;
                    kill_at = None;
                }
                next_group_check = Instant::now() + GROUP_POLL;
            }
            _ = sleep_until(next_track), if status.is_none() => {
                spawned.procs.track();
                next_track = Instant::now() + TRACK_EVERY;
            }
            _ = sleep_until(progress_due.unwrap_or(far)), if progress_due.is_some() => {
                if let Some(progress) = &mut sinks.progress {
                    progress.flush(sinks.collector.total_bytes(), sinks.collector.total_lines());
                }
            }
            read = spawned.output.read(&mut buf), if pipe_open => {
                match read {
                    Ok(0) | Err(_) => pipe_open = false,
                    Ok(n) => sinks.take(&buf[..n]).await,
                }
            }
        }
    }
    spawned.procs.finish(seen_empty);

    match (stop, status.flatten()) {
        (Some(Stop::TimedOut), _) => Ending::TimedOut(timeout_ms),
        (Some(Stop::Interrupted), _) => Ending::Interrupted,
        (None, Some(status)) => ending_of(status),
        // The status was lost: report a failure the model can see.
        (None, None) => Ending::Exited(-1),
    }
}

fn ending_of(status: ExitStatus) -> Ending {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => Ending::Exited(code),
        (None, Some(sig)) => Ending::Signaled(sig),
        (None, None) => Ending::Exited(-1),
    }
}
