//! Background jobs: commands started with `run_in_background`, which
//! outlive their call and belong to the session ([`Jobs`]).
//!
//! A job is started by the same spawn as a foreground command and run by
//! the same loop ([`run::run`]): its lifetime cap is that loop's timeout,
//! and stopping it (`kill_shell`, the session's end) is that loop's
//! cancellation, so a job is killed exactly as a command that times out:
//! TERM to every process of its call, KILL after the grace, and nothing
//! it started is left. A dropped job (its runtime shut down) is killed by
//! the drop of its processes, as a dropped call is.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use agentcore_stages::{CancelReason, Cancellation};
use regex::Regex;
use tokio::sync::{broadcast, watch};

use super::output::{Collector, Shown};
use super::run::{self, Ending, Sinks};
use super::spawn::Spawned;
use super::spool::Spool;
#[cfg(target_os = "linux")]
use super::terminal::Terminal;
use crate::limits::bash::{DEFAULT_JOB_LIFETIME, DEFAULT_MAX_JOBS};

/// How long a terminal's program must have printed nothing before a wait
/// looks whether it waits for input (typed text counts: the terminal
/// echoes it, so a program just woken by it is given this long to run).
#[cfg(target_os = "linux")]
const QUIET_BEFORE_LOOKING: Duration = Duration::from_millis(50);

/// How long after a look that saw the program waiting a second look must
/// see it still waiting, with nothing printed between: a program woken but
/// not yet scheduled still shows the read it is leaving.
#[cfg(target_os = "linux")]
const CONFIRM_AFTER: Duration = Duration::from_millis(10);

/// How often a wait on a quiet terminal looks again.
#[cfg(target_os = "linux")]
const LOOK_EVERY: Duration = Duration::from_millis(25);

/// Finished jobs kept for a last `bash_output`; the oldest go first.
const KEPT_FINISHED: usize = 32;

/// Characters of a command shown where jobs are listed.
const LISTED_CHARS: usize = 60;

/// How many jobs may run at once and for how long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobLimits {
    /// Jobs alive at once; one more is refused.
    pub max_alive: usize,
    /// After this long a job is killed.
    pub lifetime: Duration,
}

impl Default for JobLimits {
    /// [`DEFAULT_MAX_JOBS`] jobs, each for [`DEFAULT_JOB_LIFETIME`].
    fn default() -> Self {
        Self {
            max_alive: DEFAULT_MAX_JOBS,
            lifetime: DEFAULT_JOB_LIFETIME,
        }
    }
}

/// How a job ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobStatus {
    /// Its shell exited with this code.
    Exited(i32),
    /// Its shell was killed by this signal (not by agentcore).
    Signaled(i32),
    /// `kill_shell` stopped it.
    Stopped,
    /// It ran for its whole lifetime cap and was killed.
    LifetimeOver(Duration),
    /// The session ended and killed it.
    SessionEnded,
}

impl JobStatus {
    /// How the job ended, as a `Status:` line says it: `exited with code
    /// N`, `killed by signal S`, `stopped by kill_shell`, `killed after its
    /// lifetime cap of T s`, `killed when the session ended`.
    pub fn describe(self) -> String {
        match self {
            JobStatus::Exited(code) => format!("exited with code {code}"),
            JobStatus::Signaled(sig) => format!("killed by signal {sig}"),
            JobStatus::Stopped => "stopped by kill_shell".to_owned(),
            JobStatus::LifetimeOver(cap) => {
                format!("killed after its lifetime cap of {} s", cap.as_secs())
            }
            JobStatus::SessionEnded => "killed when the session ended".to_owned(),
        }
    }
}

/// A job ended: what [`Jobs::exits`] delivers, so that a harness can tell
/// the model (`agentcore run` writes it as a `job_exit` line, `agentcore
/// mcp` as a logging notification).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct JobExit {
    /// The job's id.
    pub job_id: String,
    /// How it ended ([`JobStatus::describe`]).
    pub status: String,
    /// The command it ran.
    pub command: String,
}

impl From<JobExit> for agentcore_stages::Event {
    /// [`Event::JobExit`](agentcore_stages::Event::JobExit), which
    /// serializes to the `job_exit` line of `agentcore run`.
    fn from(exit: JobExit) -> Self {
        agentcore_stages::Event::JobExit {
            job_id: exit.job_id,
            status: exit.status,
            command: exit.command,
        }
    }
}

/// Job exits buffered for a slow receiver; one further behind misses the
/// oldest (and learns how many it missed).
const EXITS_BUFFERED: usize = 64;

/// The status line of a terminal session whose program sleeps reading its
/// terminal.
#[cfg(target_os = "linux")]
pub(crate) const WAITING_LINE: &str = "Status: running, waiting for input";

/// What a read of a job shows when nothing new arrived.
const NO_NEW_OUTPUT: &str = "(no new output)\n";

/// How long a job has run, to the second: `45 s`, `2 min 05 s`,
/// `1 h 02 min`.
fn running_for(elapsed: Duration) -> String {
    let s = elapsed.as_secs();
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, s % 3600 / 60),
    }
}

/// The `Status: …` line of a job: `None` is running.
pub(crate) fn status_line(status: Option<JobStatus>) -> String {
    match status {
        None => "Status: running".to_owned(),
        Some(status) => format!("Status: {}", status.describe()),
    }
}

/// Why agentcore stopped a job.
#[derive(Clone, Copy, Debug)]
enum Stop {
    KillShell,
    SessionEnd,
}

/// Output a job printed that no `bash_output` has read yet, bounded like
/// a result ([`Collector`]), and a counter that moves on every change.
#[derive(Debug, Default)]
pub(crate) struct LiveOutput {
    unread: Mutex<Collector>,
    changes: watch::Sender<u64>,
}

impl LiveOutput {
    fn unread(&self) -> MutexGuard<'_, Collector> {
        self.unread.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes the next chunk of output.
    pub(crate) fn push(&self, bytes: &[u8]) {
        self.unread().push(bytes);
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Everything unread, leaving nothing unread.
    fn take(&self) -> Collector {
        std::mem::take(&mut *self.unread())
    }

    fn is_empty(&self) -> bool {
        self.unread().total_bytes() == 0
    }
}

/// One background job.
#[derive(Debug)]
pub(crate) struct Job {
    id: String,
    command: String,
    cancel: Cancellation,
    stop: OnceLock<Stop>,
    live: Arc<LiveOutput>,
    status: watch::Sender<Option<JobStatus>>,
    full_output: Option<PathBuf>,
    exits: broadcast::Sender<JobExit>,
    /// When the job started: a read with nothing new says how long it has
    /// run.
    started: std::time::Instant,
    /// The terminal of a terminal session (`bash` with `tty`).
    #[cfg(target_os = "linux")]
    terminal: Option<Arc<Terminal>>,
}

impl Job {
    /// The job's id, as the model names it.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    fn status(&self) -> Option<JobStatus> {
        *self.status.borrow()
    }

    fn is_running(&self) -> bool {
        self.status().is_none()
    }

    /// Stops the job (TERM, then KILL after the grace, to every process of
    /// it); `why` is kept unless it was already stopped.
    fn stop(&self, why: Stop) {
        let _ = self.stop.set(why);
        self.cancel.cancel(CancelReason::Abort);
    }

    /// Waits until the job has ended.
    async fn ended(&self) -> JobStatus {
        let mut rx = self.status.subscribe();
        loop {
            if let Some(status) = *rx.borrow_and_update() {
                return status;
            }
            if rx.changed().await.is_err() {
                // The sender lives in `self`: not reached.
                return self.status().unwrap_or(JobStatus::SessionEnded);
            }
        }
    }

    /// Waits at most `wait` (or until `cancel` fires) for output or the
    /// job's end, unless there is unread output or it ended already.
    async fn wait_for_news(&self, wait: Duration, cancel: &Cancellation) {
        if wait.is_zero() {
            return;
        }
        let mut output = self.live.changes.subscribe();
        let mut status = self.status.subscribe();
        if !self.live.is_empty() || status.borrow_and_update().is_some() {
            return;
        }
        tokio::select! {
            _ = output.changed() => {}
            _ = status.changed() => {}
            () = tokio::time::sleep(wait) => {}
            () = cancel.cancelled() => {}
        }
    }

    /// The output since the last read (filtered to the lines `filter`
    /// matches), then the status line.
    pub(crate) fn read(&self, filter: Option<&Regex>) -> String {
        // The status first: a job marked ended has pushed all its output.
        let status = self.status();
        let unread = self.live.take();
        #[cfg(target_os = "linux")]
        if let Some(terminal) = &self.terminal {
            let mut text = self.shown_terminal(terminal, &unread, filter);
            if status.is_none() && terminal.master().waiting_for_input() {
                // A program waiting for input prints nothing until it
                // gets some: looking again is not waiting for progress.
                text.push_str(WAITING_LINE);
            } else {
                self.say_how_long(&mut text, status);
                text.push_str(&status_line(status));
            }
            return text;
        }
        let mut text = self.shown(&unread, filter);
        self.say_how_long(&mut text, status);
        text.push_str(&status_line(status));
        text
    }

    /// Turns `(no new output)` of a running job into `(no new output;
    /// running for T)`: a model waiting for a long quiet command learns
    /// that time passes, and the loop guard sees a changed result when it
    /// waited a second or more (polls within one second stay identical).
    fn say_how_long(&self, text: &mut String, status: Option<JobStatus>) {
        if status.is_none() && text == NO_NEW_OUTPUT {
            *text = format!(
                "(no new output; running for {})\n",
                running_for(self.started.elapsed())
            );
        }
    }

    /// What a read of a terminal session shows: the screen of a
    /// full-screen program; or the lines finished since the last read, then
    /// the unfinished last line (a prompt) as it stands.
    #[cfg(target_os = "linux")]
    fn shown_terminal(
        &self,
        terminal: &Terminal,
        unread: &Collector,
        filter: Option<&Regex>,
    ) -> String {
        if let Some(screen) = terminal.take_screen() {
            return screen;
        }
        let mut text = if unread.total_bytes() > 0 {
            self.shown(unread, filter)
        } else {
            String::new()
        };
        let pending = terminal.pending_line();
        if !pending.trim().is_empty() && filter.is_none_or(|f| f.is_match(&pending)) {
            text.push_str(&pending);
            text.push('\n');
        }
        if text.is_empty() {
            text.push_str(NO_NEW_OUTPUT);
        }
        text
    }

    /// Whether this job is a terminal session.
    pub(crate) fn has_terminal(&self) -> bool {
        #[cfg(target_os = "linux")]
        {
            self.terminal.is_some()
        }
        #[cfg(not(target_os = "linux"))]
        {
            false
        }
    }

    /// Whether the job still runs.
    pub(crate) fn running(&self) -> bool {
        self.is_running()
    }

    /// Types `bytes` into the session's terminal, waiting at most `wait`
    /// for the program to take them; how many it took. `None` when the job
    /// has no terminal.
    #[cfg(target_os = "linux")]
    pub(crate) async fn type_in(
        &self,
        bytes: &[u8],
        wait: Duration,
    ) -> Option<std::io::Result<usize>> {
        let terminal = self.terminal.as_ref()?;
        let deadline = tokio::time::Instant::now() + wait;
        Some(terminal.master().write_until(bytes, deadline).await)
    }

    /// Waits up to `wait` for a terminal session: until the job ends, or
    /// its program has printed nothing for a short while and sleeps
    /// reading its terminal (it waits for input), or `cancel` fires.
    #[cfg(target_os = "linux")]
    pub(crate) async fn settle_terminal(&self, wait: Duration, cancel: &Cancellation) {
        let Some(terminal) = &self.terminal else {
            return self.settle(wait, cancel).await;
        };
        let started = tokio::time::Instant::now();
        let deadline = started + wait;
        let mut output = self.live.changes.subscribe();
        let mut status = self.status.subscribe();
        let mut next_look = started + QUIET_BEFORE_LOOKING;
        // Whether the last look saw the program waiting (and nothing was
        // printed since).
        let mut seen_waiting = false;
        loop {
            if status.borrow_and_update().is_some() {
                return;
            }
            tokio::select! {
                _ = output.changed() => {
                    next_look = tokio::time::Instant::now() + QUIET_BEFORE_LOOKING;
                    seen_waiting = false;
                }
                _ = status.changed() => {}
                () = tokio::time::sleep_until(deadline) => return,
                () = cancel.cancelled() => return,
                () = tokio::time::sleep_until(next_look) => {
                    let waiting = terminal.master().waiting_for_input();
                    if waiting && seen_waiting {
                        return;
                    }
                    seen_waiting = waiting;
                    let after = if waiting { CONFIRM_AFTER } else { LOOK_EVERY };
                    next_look = tokio::time::Instant::now() + after;
                }
            }
        }
    }

    /// What a result shows of `unread`: the truncation notice when cut,
    /// then head and tail (only matching lines with a filter), each part
    /// ending in a newline; a note when there is nothing.
    fn shown(&self, unread: &Collector, filter: Option<&Regex>) -> String {
        let Shown {
            head,
            tail,
            omitted,
        } = unread.shown();
        let mut text = String::new();
        if let Some(omitted) = omitted {
            let full = match &self.full_output {
                Some(path) => path.display().to_string(),
                None => "not saved".to_owned(),
            };
            let _ = writeln!(
                text,
                "[Output truncated: {} lines ({} bytes) omitted from the middle. Full output: {full}]",
                omitted.lines, omitted.bytes
            );
            if self.full_output.is_some() {
                let _ = writeln!(text, "{}", super::kept::read_again_hint("job_id", &self.id));
            }
        }
        let mut body = head;
        if !tail.is_empty() {
            if !body.is_empty() && !body.ends_with('\n') {
                body.push('\n');
            }
            body.push_str(&tail);
        }
        if let Some(filter) = filter {
            body = body
                .lines()
                .filter(|line| filter.is_match(line))
                .map(|line| format!("{line}\n"))
                .collect();
            if body.is_empty() && unread.total_bytes() > 0 {
                text.push_str("(no new line matches the filter)\n");
                return text;
            }
        }
        if body.is_empty() {
            text.push_str(NO_NEW_OUTPUT);
        } else {
            text.push_str(&body);
            if !text.ends_with('\n') {
                text.push('\n');
            }
        }
        text
    }
}

/// The output of a job in the result that started it: what it printed so
/// far, without a note when it printed nothing.
pub(crate) fn first_output(job: &Job) -> String {
    let unread = job.live.take();
    if unread.total_bytes() == 0 {
        return String::new();
    }
    job.shown(&unread, None)
}

/// A session's background jobs: at most [`JobLimits::max_alive`] alive,
/// each killed after [`JobLimits::lifetime`], all killed when the session
/// ends ([`Jobs::end_all`], or when the table is dropped).
///
/// Shared by `bash` (which starts jobs), `bash_output` and `kill_shell`.
#[derive(Debug)]
pub struct Jobs {
    table: Mutex<Table>,
    limits: JobLimits,
    exits: broadcast::Sender<JobExit>,
}

#[derive(Debug, Default)]
struct Table {
    next: u64,
    jobs: BTreeMap<u64, Arc<Job>>,
    ended: bool,
}

impl Default for Jobs {
    fn default() -> Self {
        Self::new(JobLimits::default())
    }
}

impl Jobs {
    /// An empty table with these limits.
    pub fn new(limits: JobLimits) -> Self {
        Self {
            table: Mutex::default(),
            limits,
            exits: broadcast::Sender::new(EXITS_BUFFERED),
        }
    }

    /// The limits.
    pub fn limits(&self) -> JobLimits {
        self.limits
    }

    /// Every job's end from now on, as it happens (also those the
    /// session's end kills).
    pub fn exits(&self) -> broadcast::Receiver<JobExit> {
        self.exits.subscribe()
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every job of the session, oldest first: id, command, and whether it
    /// still runs.
    pub fn all(&self) -> Vec<(String, String, bool)> {
        self.table()
            .jobs
            .values()
            .map(|j| (j.id.clone(), j.command.clone(), j.is_running()))
            .collect()
    }

    /// The ids of the jobs still running, oldest first.
    pub fn running(&self) -> Vec<String> {
        self.table()
            .jobs
            .values()
            .filter(|j| j.is_running())
            .map(|j| j.id.clone())
            .collect()
    }

    /// Starts a job: `spawn` starts its command (the foreground spawn) and
    /// gives the spool of its full output and that file's path. Refused
    /// when the session has ended or [`JobLimits::max_alive`] jobs run.
    /// Must run inside a tokio runtime.
    pub(crate) fn start(
        &self,
        command: &str,
        terminal_size: Option<(u16, u16)>,
        spawn: impl FnOnce() -> Result<(Spawned, Option<Spool>, Option<PathBuf>), String>,
    ) -> Result<Arc<Job>, String> {
        let mut table = self.table();
        if table.ended {
            return Err("The session is ending; no background job can be started now.".to_owned());
        }
        if self.limits.max_alive == 0 {
            return Err(
                "Background jobs are turned off in this session. Run the command in the \
                 foreground, with a timeout long enough for it."
                    .to_owned(),
            );
        }
        let running: Vec<&Arc<Job>> = table.jobs.values().filter(|j| j.is_running()).collect();
        if running.len() >= self.limits.max_alive {
            let listed: Vec<String> = running
                .iter()
                .map(|j| format!("{} ({})", j.id, shorten(&j.command)))
                .collect();
            return Err(format!(
                "{} background jobs are running, the most this session allows: {}. \
                 Stop one with kill_shell or wait for one to exit, then start this command again.",
                running.len(),
                listed.join(", ")
            ));
        }
        let (spawned, spool, full_output) = spawn()?;
        #[cfg(target_os = "linux")]
        let terminal = match (&spawned.output, terminal_size) {
            (super::spawn::Output::Terminal(master), Some((rows, cols))) => {
                Some(Arc::new(Terminal::new(master.clone(), rows, cols)))
            }
            _ => None,
        };
        #[cfg(not(target_os = "linux"))]
        let _ = terminal_size;
        table.next += 1;
        let number = table.next;
        let job = Arc::new(Job {
            id: format!("job-{number}"),
            command: command.to_owned(),
            cancel: Cancellation::new(),
            stop: OnceLock::new(),
            live: Arc::default(),
            status: watch::Sender::new(None),
            full_output,
            exits: self.exits.clone(),
            started: std::time::Instant::now(),
            #[cfg(target_os = "linux")]
            terminal,
        });
        table.jobs.insert(number, job.clone());
        prune(&mut table);
        let lifetime_ms = u64::try_from(self.limits.lifetime.as_millis()).unwrap_or(u64::MAX);
        tokio::spawn(drive(job.clone(), spawned, spool, lifetime_ms));
        Ok(job)
    }

    /// The job named `id`, running or finished; an error naming the
    /// running jobs when there is none.
    pub(crate) fn get(&self, id: &str) -> Result<Arc<Job>, String> {
        let table = self.table();
        if let Some(job) = table.jobs.values().find(|j| j.id == id.trim()) {
            return Ok(job.clone());
        }
        let running: Vec<&str> = table
            .jobs
            .values()
            .filter(|j| j.is_running())
            .map(|j| j.id.as_str())
            .collect();
        let known = if running.is_empty() {
            "No background job is running.".to_owned()
        } else {
            format!("The running jobs are: {}.", running.join(", "))
        };
        Err(format!(
            "There is no background job \"{id}\". {known} Use a job id that bash returned when it \
             started the job (\"Started background job ID\")."
        ))
    }

    /// Stops every running job and refuses new ones: what the session's
    /// end does. Returns at once; the jobs die within the kill grace.
    pub fn kill_all(&self) {
        let jobs: Vec<Arc<Job>> = {
            let mut table = self.table();
            table.ended = true;
            table.jobs.values().cloned().collect()
        };
        for job in jobs {
            job.stop(Stop::SessionEnd);
        }
    }

    /// [`Jobs::kill_all`], then waits until every job has ended and its
    /// processes are gone.
    pub async fn end_all(&self) {
        self.kill_all();
        let jobs: Vec<Arc<Job>> = self.table().jobs.values().cloned().collect();
        for job in jobs {
            job.ended().await;
        }
    }
}

impl Drop for Jobs {
    fn drop(&mut self) {
        self.kill_all();
    }
}

/// Job operations for `bash_output` and `kill_shell`.
impl Job {
    /// Waits up to `wait` for news, then reads (see [`Job::read`]).
    pub(crate) async fn read_after(
        &self,
        wait: Duration,
        filter: Option<&Regex>,
        cancel: &Cancellation,
    ) -> String {
        self.wait_for_news(wait, cancel).await;
        self.read(filter)
    }

    /// The file holding all the job printed, from its start (`None` when
    /// it could not be made).
    pub(crate) fn full_output(&self) -> Option<&Path> {
        self.full_output.as_deref()
    }

    /// Waits up to `wait` for news (as [`Job::read_after`] does), then
    /// the job's status: `None` while it runs.
    pub(crate) async fn status_after(
        &self,
        wait: Duration,
        cancel: &Cancellation,
    ) -> Option<JobStatus> {
        self.wait_for_news(wait, cancel).await;
        self.status()
    }

    /// Stops the job as a timeout would and waits for it to end; then
    /// reads. Whether it was still running when asked.
    pub(crate) async fn kill(&self) -> (bool, String) {
        let was_running = self.is_running();
        if was_running {
            self.stop(Stop::KillShell);
            self.ended().await;
        }
        (was_running, self.read(None))
    }

    /// Waits up to `wait` for the job to end or print something (for the
    /// result that started it), or until `cancel` fires.
    pub(crate) async fn settle(&self, wait: Duration, cancel: &Cancellation) {
        let mut status = self.status.subscribe();
        if status.borrow_and_update().is_some() {
            return;
        }
        tokio::select! {
            _ = status.changed() => {}
            () = tokio::time::sleep(wait) => {}
            () = cancel.cancelled() => {}
        }
    }
}

/// Runs a job to its end and records how it ended.
async fn drive(job: Arc<Job>, spawned: Spawned, spool: Option<Spool>, lifetime_ms: u64) {
    let mut sinks = Sinks {
        collector: Collector::default(),
        file: spool,
        progress: None,
        live: Some(job.live.clone()),
        #[cfg(target_os = "linux")]
        terminal: job.terminal.clone(),
    };
    let confinement = spawned.confinement();
    let ending = run::run(spawned, lifetime_ms, &job.cancel, &mut sinks).await;
    if let Some(line) = super::spawn::limit_line(confinement.as_ref(), ending) {
        let line = format!("\n{line}\n");
        if let Some(live) = &sinks.live {
            live.push(line.as_bytes());
        }
        if let Some(spool) = &sinks.file {
            spool.write(line.as_bytes()).await;
        }
    }
    drop(confinement);
    if let Some(spool) = sinks.file.take()
        && let Some(file) = spool.finish().await
    {
        file.keep();
    }
    let status = match ending {
        Ending::Exited(code) => JobStatus::Exited(code),
        Ending::Signaled(sig) => JobStatus::Signaled(sig),
        Ending::TimedOut(ms) => JobStatus::LifetimeOver(Duration::from_millis(ms)),
        Ending::Interrupted => match job.stop.get() {
            Some(Stop::SessionEnd) => JobStatus::SessionEnded,
            Some(Stop::KillShell) | None => JobStatus::Stopped,
        },
    };
    // The exit is sent before the status is set, so that whoever waited
    // for the job's end ([`Jobs::end_all`]) finds its exit already sent.
    // No receiver: no one listens, which is fine.
    let _ = job.exits.send(JobExit {
        job_id: job.id.clone(),
        status: status.describe(),
        command: job.command.clone(),
    });
    job.status.send_replace(Some(status));
}

/// Drops the oldest finished jobs beyond [`KEPT_FINISHED`].
fn prune(table: &mut Table) {
    let finished: Vec<u64> = table
        .jobs
        .iter()
        .filter(|(_, j)| !j.is_running())
        .map(|(n, _)| *n)
        .collect();
    let excess = finished.len().saturating_sub(KEPT_FINISHED);
    for number in finished.into_iter().take(excess) {
        table.jobs.remove(&number);
    }
}

/// A command cut to its first line and [`LISTED_CHARS`].
pub(crate) fn shorten(command: &str) -> String {
    let command = command.trim();
    let first = command.lines().next().unwrap_or_default();
    let mut shown: String = first.chars().take(LISTED_CHARS).collect();
    if shown.len() < command.len() {
        shown.push('…');
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_times_are_said_to_the_second() {
        assert_eq!(running_for(Duration::from_millis(999)), "0 s");
        assert_eq!(running_for(Duration::from_secs(59)), "59 s");
        assert_eq!(running_for(Duration::from_secs(125)), "2 min 05 s");
        assert_eq!(running_for(Duration::from_secs(3_720)), "1 h 02 min");
    }

    #[test]
    fn status_lines_are_the_documented_ones() {
        assert_eq!(status_line(None), "Status: running");
        assert_eq!(
            status_line(Some(JobStatus::Exited(3))),
            "Status: exited with code 3"
        );
        assert_eq!(
            status_line(Some(JobStatus::Signaled(9))),
            "Status: killed by signal 9"
        );
        assert_eq!(
            status_line(Some(JobStatus::Stopped)),
            "Status: stopped by kill_shell"
        );
    }

    #[test]
    fn unknown_ids_are_refused_naming_none_when_none_runs() {
        let jobs = Jobs::default();
        let err = jobs.get("job-7").unwrap_err();
        assert!(err.contains("no background job \"job-7\""), "{err}");
        assert!(err.contains("No background job is running."), "{err}");
    }

    #[test]
    fn commands_are_listed_short() {
        assert_eq!(shorten("sleep 1\nsleep 2"), "sleep 1…");
        assert_eq!(shorten("npm run dev"), "npm run dev");
    }
}
