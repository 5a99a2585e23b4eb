//! Commands born in their cgroups, on cgroup v1.
//!
//! Moving a process into a cgroup (a write to `cgroup.procs`) takes the
//! kernel's cgroup thread-group lock for writing, which waits for a grace
//! period of RCU: 5–19 ms on an idle machine, paid by every command whose
//! previous one ended more than a few milliseconds earlier (measured in
//! docs/performance.md, "Commands born in their cgroups"). The kernel
//! moves the calling thread alone (`0` to v1's `tasks`) without that lock
//! (a shortcut of long standing; measured on 6.18 here), so M and the
//! spawners join that way (about a tenth of a millisecond, "Fifth
//! pass"); a kernel that still takes the lock makes
//! every join pay the grace period, and the spawners keep it off the
//! commands' path. Even without the wait, a command born in a cgroup made
//! ahead skips the cgroup's making and limits (two `mkdir`s and their
//! files). A fork is not a move: a child starts in the cgroups of the
//! thread that forked it.
//!
//! So a few threads of this process, the spawners ([`WORKERS`]), each
//! move themselves ahead of time into a cgroup made for a coming command
//! (cgroup v1 moves single threads; v2 does not, and keeps M's join).
//! [`take`] hands a ready one to the next command's plan, with a
//! [`Ticket`]; the command is then forked on that spawner
//! ([`Ticket::spawn`]), so M starts inside, checks that it did (its own
//! `/proc/thread-self/cgroup`, the lines the spawner read) and skips the
//! join. Right after the fork the spawner moves into a new cgroup, paying
//! the grace period off every command's path, and the cgroup it left is
//! the command's alone. With several spawners, a command that follows
//! another at once finds one ready while the last one is still moving.
//!
//! A cgroup is made with the limits of the command that will use it
//! ([`Key`]); a command with other limits, or one that comes while every
//! spawner is busy, gets a cgroup of its own and joins it as before. A
//! spawner only ever forks from a cgroup it verified it is in; if a move
//! fails it goes back to this process's own cgroups, and after three
//! failures it stops (its commands then join).

use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use super::cgroup::{self, CommandCgroup};

/// The limits a cgroup is made with: memory bytes, and tasks (M and G
/// counted); `None`, not bounded by a cgroup.
pub(super) type Key = (Option<u64>, Option<u64>);

/// Moves after which a spawner gives up.
const MAX_FAILURES: u32 = 3;

/// Spawner threads, each with a cgroup of its own ready: a command that
/// follows another at once finds one ready while the other still moves
/// (a grace period can outlast a short command).
const WORKERS: usize = 3;

/// How long an unused ticket waits for the spawner to leave its cgroup
/// (a grace period, normally a few ms).
const LEAVE_WAIT: Duration = Duration::from_secs(2);

/// A cgroup made for the next command, the spawner inside.
#[derive(Debug)]
struct Slot {
    id: u64,
    key: Key,
    cgroup: CommandCgroup,
    join: Vec<OwnedFd>,
    lines: Vec<Vec<u8>>,
}

/// A command's cgroup from the spawner, and the ticket to fork it there.
#[derive(Debug)]
pub(super) struct Taken {
    pub(super) cgroup: CommandCgroup,
    /// The join file of each hierarchy, for M to join when it finds
    /// itself outside (forked elsewhere).
    pub(super) join: Vec<OwnedFd>,
    /// What M's `/proc/thread-self/cgroup` shows when born inside.
    pub(super) lines: Vec<Vec<u8>>,
    pub(super) ticket: Ticket,
}

/// A spawn to run on the spawner thread.
struct Job {
    cmd: tokio::process::Command,
    runtime: tokio::runtime::Handle,
    reply: mpsc::SyncSender<(tokio::process::Command, io::Result<tokio::process::Child>)>,
}

#[derive(Default)]
struct State {
    /// The limits of the cgroup to make next.
    want: Option<Key>,
    ready: Option<Slot>,
    /// The slot handed out and not yet forked in (or given up).
    reserved: Option<u64>,
    job: Option<Job>,
    /// The slot the spawner is in (ready or handed out), if any.
    inside: Option<u64>,
    failures: u32,
    /// Given up: the spawner is parked for good and never forks.
    stopped: bool,
    next_id: u64,
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // The state is plain data: a panic elsewhere leaves it usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The spawners, started by the first [`want`] on a machine whose
/// command cgroups are all v1 (those whose thread could be started).
fn workers() -> &'static [Arc<Shared>] {
    static SPAWNERS: OnceLock<Vec<Arc<Shared>>> = OnceLock::new();
    SPAWNERS.get_or_init(|| {
        (0..WORKERS)
            .filter_map(|_| {
                let shared = Arc::new(Shared {
                    state: Mutex::new(State::default()),
                    changed: Condvar::new(),
                });
                let theirs = shared.clone();
                std::thread::Builder::new()
                    .name("agentcore-spawner".to_owned())
                    .spawn(move || run(&theirs))
                    .ok()
                    .map(|_| shared)
            })
            .collect()
    })
}

/// Whether commands with this machine's cgroups can be born in them.
fn applies(machine: &cgroup::Cgroups) -> bool {
    let versions: Vec<_> = machine
        .memory
        .iter()
        .chain(machine.pids.iter())
        .map(|(_, v)| *v)
        .collect();
    !versions.is_empty() && versions.iter().all(|v| *v == cgroup::Version::V1)
}

/// Asks for a cgroup with `key`'s limits to be ready for the next
/// command (at a sandbox's start: its first command finds it made). One
/// spawner is set to work now; the others join in once commands come
/// ([`take`]), so that a start makes one cgroup, not [`WORKERS`].
pub(super) fn want(machine: &cgroup::Cgroups, key: Key) {
    want_of(machine, key, 1);
}

fn want_of(machine: &cgroup::Cgroups, key: Key, spawners: usize) {
    if key == (None, None) || !applies(machine) {
        return;
    }
    for shared in workers().iter().take(spawners) {
        let mut state = shared.lock();
        if state.want != Some(key) {
            state.want = Some(key);
            shared.changed.notify_all();
        }
    }
}

/// The ready cgroup for a command with `key`'s limits, if the spawner has
/// one; `None` (the caller makes one and M joins it) otherwise. Never
/// waits for the spawner.
pub(super) fn take(machine: &cgroup::Cgroups, key: Key) -> Option<Taken> {
    if key == (None, None) || !applies(machine) {
        return None;
    }
    want_of(machine, key, WORKERS);
    workers().iter().find_map(|shared| {
        let mut state = shared.lock();
        if state.stopped || state.reserved.is_some() || state.ready.as_ref()?.key != key {
            return None;
        }
        let slot = state.ready.take()?;
        state.reserved = Some(slot.id);
        Some(Taken {
            cgroup: slot.cgroup,
            join: slot.join,
            lines: slot.lines,
            ticket: Ticket {
                worker: shared.clone(),
                id: slot.id,
                used: false,
            },
        })
    })
}

/// The right to fork one command in the cgroup [`take`] handed out.
/// Dropped unused, it lets the spawner leave that cgroup (and waits until
/// it has, so the cgroup can be removed).
pub(super) struct Ticket {
    worker: Arc<Shared>,
    id: u64,
    used: bool,
}

impl std::fmt::Debug for Ticket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ticket")
            .field("id", &self.id)
            .field("used", &self.used)
            .finish_non_exhaustive()
    }
}

impl Ticket {
    /// Runs `cmd.spawn()` on the spawner thread, inside the cgroup, and
    /// gives `cmd` back (its pipes are the caller's to close). Without a
    /// runtime to register the child with, or without the spawner, spawns
    /// here (M then joins).
    pub(super) fn spawn(
        mut self,
        cmd: &mut tokio::process::Command,
    ) -> io::Result<tokio::process::Child> {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return cmd.spawn();
        };
        let shared = self.worker.clone();
        let (reply, answer) = mpsc::sync_channel(1);
        {
            let mut state = shared.lock();
            if state.reserved != Some(self.id) || state.stopped {
                drop(state);
                return cmd.spawn();
            }
            let taken = std::mem::replace(cmd, tokio::process::Command::new("/"));
            state.job = Some(Job {
                cmd: taken,
                runtime,
                reply,
            });
            self.used = true;
            shared.changed.notify_all();
        }
        match answer.recv() {
            Ok((back, spawned)) => {
                *cmd = back;
                spawned
            }
            Err(_) => Err(io::Error::other("the sandbox's spawner thread ended")),
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if self.used {
            return;
        }
        let shared = &self.worker;
        let mut state = shared.lock();
        if state.reserved == Some(self.id) {
            state.reserved = None;
            shared.changed.notify_all();
        }
        let deadline = std::time::Instant::now() + LEAVE_WAIT;
        while state.inside == Some(self.id) && !state.stopped {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                break;
            }
            state = shared
                .changed
                .wait_timeout(state, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

/// The spawner's loop: runs the forks it is given, and keeps a cgroup
/// ready for the limits last asked for.
fn run(shared: &Shared) {
    let machine = cgroup::machine();
    // The `pids` folder (and its limit without the spawner) of the slot
    // the spawner is in, lowered once it has left.
    let mut inside_pids: Option<(PathBuf, u64)> = None;
    let mut state = shared.lock();
    loop {
        if let Some(job) = state.job.take() {
            drop(state);
            let spawned = {
                let _runtime = job.runtime.enter();
                let mut cmd = job.cmd;
                let spawned = cmd.spawn();
                (cmd, spawned)
            };
            let _ = job.reply.send(spawned);
            state = shared.lock();
            state.reserved = None;
            continue;
        }
        let stale = match (&state.ready, state.want) {
            (_, None) => false,
            (None, Some(_)) => true,
            (Some(slot), Some(want)) => slot.key != want,
        };
        if !state.stopped && state.reserved.is_none() && (stale || state.inside_unready()) {
            let Some(key) = state.want else {
                state = wait(shared, state);
                continue;
            };
            let old = state.ready.take();
            state.next_id += 1;
            let id = state.next_id;
            drop(state);
            let made = prepare(machine, key, id);
            let left_pids = inside_pids.take();
            let new_pids = made
                .as_ref()
                .ok()
                .and_then(|slot| Some((slot.cgroup.pids_dir()?.to_path_buf(), key.1?)));
            if made.is_err() {
                // Back where this process's own threads are; if even that
                // fails, stop: this thread never forks from a cgroup it
                // has not verified.
                let home = go_home(machine);
                let mut s = shared.lock();
                s.failures += 1;
                if home.is_err() || s.failures >= MAX_FAILURES {
                    s.stopped = true;
                }
                s.inside = None;
                drop(s);
            }
            // Out of the cgroup the last command was forked in: its
            // processes alone count against its `pids.max` from now on.
            if let Some((dir, max)) = left_pids {
                let _ = std::fs::write(dir.join("pids.max"), max.to_string());
            }
            // An unused ready slot, now empty: removed by its drop.
            drop(old);
            state = shared.lock();
            if let Ok(slot) = made {
                inside_pids = new_pids;
                state.inside = Some(slot.id);
                state.ready = Some(slot);
            }
            shared.changed.notify_all();
            continue;
        }
        state = wait(shared, state);
    }
}

impl State {
    /// The spawner is still in a slot that is neither ready nor handed
    /// out (a command was forked there, or its ticket was dropped): it
    /// must leave, so that the cgroup is the command's alone.
    fn inside_unready(&self) -> bool {
        self.inside.is_some() && self.ready.is_none() && self.reserved.is_none()
    }
}

fn wait<'a>(shared: &'a Shared, state: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
    shared
        .changed
        .wait(state)
        .unwrap_or_else(|e| e.into_inner())
}

/// Makes a cgroup with `key`'s limits, moves this thread into it and
/// checks that it is there.
fn prepare(machine: &cgroup::Cgroups, (memory, tasks): Key, id: u64) -> io::Result<Slot> {
    // One task more while the spawner is inside; lowered once it left.
    let (made, join) = CommandCgroup::create(machine, memory, tasks.map(|n| n.saturating_add(1)))?;
    for dir in made.dirs() {
        move_here(dir)?;
    }
    let lines = own_lines(&made)?;
    Ok(Slot {
        id,
        key: (memory, tasks),
        cgroup: made,
        join,
        lines,
    })
}

/// The lines of this thread's `/proc/thread-self/cgroup` that name
/// `made`'s folder, one per hierarchy; an error unless every hierarchy
/// of `made` shows it.
fn own_lines(made: &CommandCgroup) -> io::Result<Vec<Vec<u8>>> {
    let text = std::fs::read("/proc/thread-self/cgroup")?;
    let suffix = format!("/{}", made.name());
    let lines: Vec<Vec<u8>> = text
        .split(|b| *b == b'\n')
        .filter(|line| line.ends_with(suffix.as_bytes()))
        .map(<[u8]>::to_vec)
        .collect();
    if lines.len() != made.dirs().len() {
        return Err(io::Error::other(format!(
            "this thread is not in {} in every hierarchy",
            made.name()
        )));
    }
    Ok(lines)
}

/// Moves this thread back into this process's own cgroups (the parents of
/// the command cgroups).
fn go_home(machine: &cgroup::Cgroups) -> io::Result<()> {
    let mut dirs: Vec<&Path> = Vec::new();
    for (dir, _) in machine.memory.iter().chain(machine.pids.iter()) {
        if !dirs.contains(&dir.as_path()) {
            dirs.push(dir);
        }
    }
    for dir in dirs {
        move_here(dir)?;
    }
    Ok(())
}

/// Moves this thread into the v1 cgroup at `dir`: `0` ("the calling
/// thread") to its `tasks`, which the kernel does without its cgroup
/// thread-group lock (and so without waiting for a grace period of RCU);
/// a thread id, even this thread's own, takes the lock.
fn move_here(dir: &Path) -> io::Result<()> {
    std::fs::write(dir.join("tasks"), "0")
}
