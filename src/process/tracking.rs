//! Every process one command started: found in `/proc`, signalled, and
//! reaped, whatever group or session it moved to.
//!
//! A command's processes are found by, in order of strength:
//!
//! - the marker variable `AGENTCORE_CALL_ID=<token>` that every command's
//!   environment carries and its processes inherit (a process can scrub
//!   its environment, so this alone is not enough);
//! - the shell's session and process group (left by `setsid` and
//!   `setpgid`);
//! - descent: the shell is started as a *child subreaper*
//!   (`PR_SET_CHILD_SUBREAPER`), so while it lives every process the
//!   command started, orphaned or not, stays below it; processes seen
//!   below it are remembered (pid and start time, so a reused pid is never
//!   mistaken for one) and stay the call's after the shell exits;
//! - when this process adopts orphans itself ([`adopt_orphans`]), an orphan
//!   re-parented to it after the shell exited is the call's if it started
//!   while the call ran and while no other call that is still running had
//!   started ([`OrphanScope::Process`] only; otherwise the last of those
//!   calls to end takes it).
//!
//! Only processes started after the shell are considered (their start time
//! is not earlier), so nothing that existed before the call is touched.
//! Processes killed here that were re-parented to this process are reaped
//! here, by pid; the shells themselves are left to `tokio`, which waits for
//! each child by its pid and never for "any child".

use std::collections::{HashMap, HashSet};
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, Once};
use std::time::{Duration, Instant};

use rustix::io::Errno;
use rustix::process::{Pid, Signal, WaitOptions};

/// `kill(pid, sig)`; ESRCH for a pid that names no single process (0 or
/// less: every pid given here is a process's own, from `/proc` or a
/// shell).
fn kill(pid: i32, sig: Signal) -> rustix::io::Result<()> {
    positive(pid).and_then(|pid| rustix::process::kill_process(pid, sig))
}

/// `killpg(group, sig)`; ESRCH for a group id of 0 or less.
fn killpg(group: i32, sig: Signal) -> rustix::io::Result<()> {
    positive(group).and_then(|group| rustix::process::kill_process_group(group, sig))
}

/// `killpg(group, 0)`: whether the group exists (ESRCH when it does not).
fn test_killpg(group: i32) -> rustix::io::Result<()> {
    positive(group).and_then(rustix::process::test_kill_process_group)
}

fn positive(pid: i32) -> rustix::io::Result<Pid> {
    if pid > 0 {
        Pid::from_raw(pid).ok_or(Errno::SRCH)
    } else {
        Err(Errno::SRCH)
    }
}

/// How many rounds of STOP (then KILL) may go on finding new processes (a
/// command that forks as fast as it is stopped) before giving up.
const KILL_ROUNDS: usize = 200;

/// After KILL, how long a dropped call's helper thread waits for the killed
/// processes to die.
const DEATH_WAIT: Duration = Duration::from_millis(500);

/// How long a dropped call's helper thread waits for `tokio` to reap the
/// shell before it stops watching (the pid then stays off-limits here).
const SHELL_RELEASE_WAIT: Duration = Duration::from_secs(5);

/// How far this process takes charge of orphans (see [`adopt_orphans`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrphanScope {
    /// Orphans are adopted, and only those proven to be a call's (by the
    /// marker, the session, or descent seen while the shell lived) are
    /// killed and reaped. Safe in a program that starts processes of its
    /// own; an orphan that scrubbed its environment, left the session and
    /// was orphaned as the shell exited can outlive its call.
    Calls,
    /// This process starts no child processes other than through the bash
    /// tool: an adopted orphan that started while a call ran, and while no
    /// other still-running call had started, is that call's; every zombie
    /// child that is not a shell still awaited is reaped. The `agentcore`
    /// binary runs in this scope.
    Process,
}

/// 0: orphans go to init; 1: [`OrphanScope::Calls`]; 2: [`OrphanScope::Process`].
static SCOPE: AtomicU8 = AtomicU8::new(0);

/// Makes this process a child subreaper (`PR_SET_CHILD_SUBREAPER`), so that
/// a process a bash command leaves behind when its parent exits is
/// re-parented to this process rather than to init, where the bash tool
/// finds, kills and reaps it when its call ends. Process-wide: call it
/// early in `main`, before starting threads that spawn processes. The
/// widest scope asked for holds.
///
/// Without it the bash tool still kills what it can find by marker,
/// session, group and descent.
///
/// Linux only; elsewhere it returns an `Unsupported` error.
pub fn adopt_orphans(scope: OrphanScope) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    // Any non-zero value means "on"; rustix passes the pid it is given.
    rustix::process::set_child_subreaper(Some(Pid::INIT)).map_err(io::Error::from)?;
    #[cfg(not(target_os = "linux"))]
    return Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "a child subreaper needs Linux",
    ));
    let level = match scope {
        OrphanScope::Calls => 1,
        OrphanScope::Process => 2,
    };
    SCOPE.fetch_max(level, Ordering::SeqCst);
    Ok(())
}

/// Makes this process non-dumpable (`PR_SET_DUMPABLE` 0): another process
/// of the same user, such as a command run by the bash tool, can no longer
/// read its `/proc/PID/environ` or `mem`, attach a debugger to it, or get
/// a core dump of it, so variables scrubbed from commands stay out of their
/// reach. A process holding `CAP_SYS_PTRACE` (root, normally) still can;
/// the bash tool takes that capability out of the commands it starts.
/// Called by [`BashTool::new`](crate::tools::bash::BashTool::new); idempotent. Linux
/// only; elsewhere it returns an `Unsupported` error.
pub fn make_undumpable() -> io::Result<()> {
    #[cfg(target_os = "linux")]
    return rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)
        .map_err(io::Error::from);
    #[cfg(not(target_os = "linux"))]
    return Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "PR_SET_DUMPABLE needs Linux",
    ));
}

/// Calls [`make_undumpable`] once per process.
pub(crate) fn make_undumpable_once() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // It fails only for an invalid argument; there is nothing to do
        // about that here, and the binary checks it at startup.
        let _ = make_undumpable();
    });
}

/// The calls running now, and the shells `tokio` still has to wait for.
#[derive(Default)]
struct Registry {
    /// Call id → (shell pid, shell start time).
    calls: HashMap<u64, (i32, u64)>,
    /// Shells spawned and not yet awaited: never reaped here.
    shells: HashSet<i32>,
}

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

fn registry() -> MutexGuard<'static, Option<Registry>> {
    // A panic while holding the lock leaves plain data; keep using it.
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

fn with_registry<T>(f: impl FnOnce(&mut Registry) -> T) -> T {
    let mut guard = registry();
    f(guard.get_or_insert_with(Registry::default))
}

/// A fresh token for one call's marker variable.
pub(crate) fn new_token() -> (u64, String) {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    (id, format!("{}-{id}", std::process::id()))
}

/// Spawns with the registry locked, so that no reaping here can take the
/// new shell before it is registered, and registers it.
pub(crate) fn spawn_registered<T>(
    spawn: impl FnOnce() -> io::Result<(T, Option<u32>)>,
) -> io::Result<(T, i32)> {
    let mut guard = registry();
    let reg = guard.get_or_insert_with(Registry::default);
    let (value, pid) = spawn()?;
    let pid = pid
        .and_then(|id| i32::try_from(id).ok())
        .ok_or_else(|| io::Error::other("the shell exited before it could be watched"))?;
    reg.shells.insert(pid);
    Ok((value, pid))
}

/// What `/proc/PID/stat` tells about a process.
#[derive(Clone, Copy, Debug)]
struct Stat {
    pid: i32,
    ppid: i32,
    pgrp: i32,
    session: i32,
    /// Start time in clock ticks after boot.
    start: u64,
    /// A zombie or dead: nothing left to kill.
    dead: bool,
}

fn read_stat(pid: i32) -> Option<Stat> {
    // One open and one read (no size query, no read of the end): a stat
    // line is a few hundred bytes (the command name is at most 16), far
    // under the buffer; a full buffer is read again the long way.
    let file = rustix::fs::open(
        format!("/proc/{pid}/stat"),
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .ok()?;
    let mut buf = [0u8; 4096];
    let n = rustix::io::read(&file, &mut buf).ok()?;
    if n == buf.len() {
        let text = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
        return parse_stat(pid, &text);
    }
    parse_stat(pid, &buf[..n])
}

fn parse_stat(pid: i32, text: &[u8]) -> Option<Stat> {
    // The command name may hold spaces, parentheses and bytes that are not
    // UTF-8 (a process names itself): fields start after the last ')',
    // and are ASCII. Then: state ppid pgrp session tty tpgid flags minflt
    // cminflt majflt cmajflt utime stime cutime cstime priority nice
    // num_threads itrealvalue starttime.
    let close = text.iter().rposition(|b| *b == b')')?;
    let rest = std::str::from_utf8(&text[close + 1..]).ok()?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    Some(Stat {
        pid,
        ppid: fields.get(1)?.parse().ok()?,
        pgrp: fields.get(2)?.parse().ok()?,
        session: fields.get(3)?.parse().ok()?,
        start: fields.get(19)?.parse().ok()?,
        dead: matches!(state, 'Z' | 'X' | 'x'),
    })
}

/// Every process in `/proc` started at or after `since`.
fn scan(since: u64) -> Vec<Stat> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()))
        .filter_map(read_stat)
        .filter(|s| s.start >= since)
        .collect()
}

/// Whether the process's environment holds `needle`; `None` when it could
/// not be read.
fn environ_has(pid: i32, needle: &[u8]) -> Option<bool> {
    std::fs::read(format!("/proc/{pid}/environ"))
        .ok()
        .map(|env| env.split(|b| *b == 0).any(|var| var == needle))
}

fn own_pid() -> i32 {
    i32::try_from(std::process::id()).unwrap_or(i32::MAX)
}

/// Every process of one call. Dropping it before [`CallProcesses::disarm`]
/// kills them all: TERM now, KILL after `grace` from a helper thread, so a
/// dropped call leaves nothing running.
#[derive(Debug)]
pub(crate) struct CallProcesses {
    id: u64,
    /// `AGENTCORE_CALL_ID=<token>`, as it appears in `/proc/PID/environ`.
    marker: Vec<u8>,
    shell: i32,
    /// The shell's start time; `None` if it was gone before it was read.
    shell_start: Option<u64>,
    /// Every process seen as the call's: pid → start time.
    known: Mutex<HashMap<i32, u64>>,
    /// Processes whose environment was read and had no marker: a process
    /// gets its environment when it is forked or execs, so one that had no
    /// marker and is not a descendant never becomes the call's by it.
    strangers: Mutex<HashSet<(i32, u64)>>,
    grace: Duration,
    armed: bool,
    /// Every process of the call lives in a PID namespace whose init the
    /// shell waits for before it exits (a confined command's M and G):
    /// the shell's own exit then means that all are gone.
    contained: bool,
    /// The shell exited on its own with a code while `contained`: every
    /// process of the call is gone, without a look in `/proc`.
    gone: AtomicBool,
}

impl CallProcesses {
    /// Starts watching the call whose shell is `shell` and whose processes
    /// carry `marker_var=token`.
    pub(crate) fn new(id: u64, marker_var: &str, token: &str, shell: i32, grace: Duration) -> Self {
        let shell_start = read_stat(shell).map(|s| s.start);
        if let Some(start) = shell_start {
            with_registry(|r| r.calls.insert(id, (shell, start)));
        }
        let known = shell_start
            .map(|start| HashMap::from([(shell, start)]))
            .unwrap_or_default();
        Self {
            id,
            marker: format!("{marker_var}={token}").into_bytes(),
            shell,
            shell_start,
            known: Mutex::new(known),
            strangers: Mutex::new(HashSet::new()),
            grace,
            armed: true,
            contained: false,
            gone: AtomicBool::new(false),
        }
    }

    /// Marks the call as contained: every process it starts lives in a
    /// PID namespace whose init (and with it every process inside, which
    /// the kernel kills and reaps first) the shell waits for before it
    /// exits with a code ([`Confinement::tree_dies_with_child`]). Then
    /// [`Self::track`] has nothing to remember, and once
    /// [`Self::shell_exited`] says the shell exited with a code,
    /// [`Self::is_empty`] holds without a scan of `/proc`.
    ///
    /// [`Confinement::tree_dies_with_child`]: crate::sandbox::Confinement::tree_dies_with_child
    pub(crate) fn contained(mut self, contained: bool) -> Self {
        self.contained = contained;
        self
    }

    /// The shell has been awaited: `exited` when it exited with a code. A
    /// shell killed by a signal may have died before its PID namespace's
    /// init (a `KILL` from outside), whose processes then die after it:
    /// those are still looked for.
    pub(crate) fn shell_exited(&self, exited: bool) {
        if self.contained && exited {
            self.gone.store(true, Ordering::SeqCst);
        }
    }

    fn known(&self) -> MutexGuard<'_, HashMap<i32, u64>> {
        self.known.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The call's processes now, dead ones included; remembers them.
    fn members(&self) -> Vec<Stat> {
        // Without the shell's start time nothing can be told apart safely:
        // fall back to its group alone (signalled by `killpg`).
        let Some(since) = self.shell_start else {
            return Vec::new();
        };
        self.classify(&scan(since), since)
    }

    /// The call's processes among `procs` (all started at or after `since`,
    /// the shell's start time); remembers them.
    fn classify(&self, procs: &[Stat], since: u64) -> Vec<Stat> {
        let me = own_pid();
        // The shell's pid names our session and group only while no other
        // process holds that pid (it cannot be reused while they exist).
        let reused = procs
            .iter()
            .any(|p| p.pid == self.shell && p.start != since);
        let mut known = self.known();
        let mut strangers = self.strangers.lock().unwrap_or_else(|e| e.into_inner());
        let mut found: HashMap<i32, Stat> = HashMap::new();
        for p in procs {
            if p.pid == me {
                continue;
            }
            let mut marked = || {
                if p.dead || strangers.contains(&(p.pid, p.start)) {
                    return false;
                }
                match environ_has(p.pid, &self.marker) {
                    Some(true) => true,
                    Some(false) => {
                        strangers.insert((p.pid, p.start));
                        false
                    }
                    None => false,
                }
            };
            let ours = known.get(&p.pid) == Some(&p.start)
                || (!reused && (p.session == self.shell || p.pgrp == self.shell))
                || marked();
            if ours {
                found.insert(p.pid, *p);
            }
        }
        drop(strangers);
        // Orphans adopted by this process that no rule above claimed.
        if SCOPE.load(Ordering::SeqCst) >= 2 {
            let (others, shells) = with_registry(|r| {
                let others: Vec<u64> = r
                    .calls
                    .iter()
                    .filter(|(id, _)| **id != self.id)
                    .map(|(_, (_, start))| *start)
                    .collect();
                (others, r.shells.clone())
            });
            for p in procs {
                if p.ppid == me
                    && !p.dead
                    && !shells.contains(&p.pid)
                    && !found.contains_key(&p.pid)
                    && !others.iter().any(|start| *start <= p.start)
                {
                    found.insert(p.pid, *p);
                }
            }
        }
        // Descendants of what was found.
        loop {
            let before = found.len();
            for p in procs {
                if !found.contains_key(&p.pid) && found.contains_key(&p.ppid) && p.ppid != me {
                    found.insert(p.pid, *p);
                }
            }
            if found.len() == before {
                break;
            }
        }
        for p in found.values() {
            known.insert(p.pid, p.start);
        }
        found.into_values().collect()
    }

    /// Remembers the call's processes now, so that those re-parented later
    /// stay known as the call's.
    pub(crate) fn track(&self) {
        // In a PID namespace of its own nothing leaves the tree below
        // the shell: an orphan goes to the namespace's init.
        if self.contained {
            return;
        }
        let _ = self.members();
    }

    /// Signals the group and every live process of the call; returns the
    /// live processes signalled, as (pid, start time).
    fn signal_all(&self, sig: Signal) -> HashSet<(i32, u64)> {
        let _ = killpg(self.shell, sig);
        let members = self.members();
        // Each process group of the call at once, as the shell's own group
        // above, so that no process sees another of its group die first
        // (and carries on, as a shell waiting for its child would). The
        // call's processes are in sessions the call made (its shell's, or
        // one a process of it started), so these groups are the call's.
        let groups: HashSet<i32> = members
            .iter()
            .filter(|p| !p.dead && p.pgrp > 1 && p.pgrp != self.shell && p.pgrp != own_pid())
            .map(|p| p.pgrp)
            .collect();
        for &group in &groups {
            let _ = killpg(group, sig);
        }
        let mut signalled = HashSet::new();
        for p in members {
            if p.dead {
                continue;
            }
            signalled.insert((p.pid, p.start));
            // A process of a group signalled above has the signal already:
            // a second one would run a shell's trap twice (a TERM trap
            // that cleans up and exits would clean up twice).
            if p.pgrp == self.shell || groups.contains(&p.pgrp) {
                continue;
            }
            // ESRCH: it died meanwhile; EPERM: a setuid program we may not
            // signal. Neither can be helped here.
            let _ = kill(p.pid, sig);
        }
        signalled
    }

    /// Sends TERM to every process of the call.
    pub(crate) fn terminate(&self) {
        self.signal_all(Signal::TERM);
    }

    /// Sends KILL to every process of the call, without waiting for them
    /// to die. First every process is stopped (a stopped process cannot
    /// fork), again while new ones turn up, so that a command that starts a
    /// new process as fast as the last one is found cannot outrun it: after
    /// the first round, a round reads only the `/proc` entries of pids not
    /// seen before, so it stays faster than a fork and an exec.
    pub(crate) fn kill(&self) {
        let _ = killpg(self.shell, Signal::STOP);
        let Some(since) = self.shell_start else {
            let _ = killpg(self.shell, Signal::KILL);
            return;
        };
        // Every process seen in this kill, by pid (pids of processes that
        // are stopped cannot be reused meanwhile).
        let mut seen: HashMap<i32, Option<Stat>> = HashMap::new();
        let mut stopped: HashSet<i32> = HashSet::new();
        for _ in 0..KILL_ROUNDS {
            let Ok(dir) = std::fs::read_dir("/proc") else {
                break;
            };
            let mut fresh = false;
            for pid in dir
                .flatten()
                .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()))
            {
                seen.entry(pid).or_insert_with(|| {
                    fresh = true;
                    read_stat(pid).filter(|s| s.start >= since)
                });
            }
            if !fresh && !stopped.is_empty() {
                break;
            }
            let procs: Vec<Stat> = seen.values().flatten().copied().collect();
            for p in self.classify(&procs, since) {
                if !p.dead && stopped.insert(p.pid) {
                    let _ = kill(p.pid, Signal::STOP);
                }
            }
            if !fresh {
                break;
            }
        }
        // Nothing of the call can fork now: KILL all, found afresh.
        for _ in 0..3 {
            if self.signal_all(Signal::KILL).is_empty() {
                break;
            }
        }
    }

    /// True when no process of the call is alive (zombies are dead).
    pub(crate) fn is_empty(&self) -> bool {
        if self.gone.load(Ordering::SeqCst) {
            return true;
        }
        if self.shell_start.is_none() {
            // No /proc to look in: the group is all that can be seen.
            return matches!(test_killpg(self.shell), Err(Errno::SRCH));
        }
        self.members().iter().all(|p| p.dead)
    }

    /// Ends the call: KILL whatever is left (without waiting), reap the
    /// dead that were re-parented to this process, and forget the call.
    /// Call it once the shell has been awaited and [`Self::is_empty`] held
    /// (`seen_empty`: then nothing is left that could have started more),
    /// or the wait for it is over.
    pub(crate) fn finish(&mut self, seen_empty: bool) {
        self.armed = false;
        if !seen_empty {
            self.kill();
        }
        reap(self);
        with_registry(|r| r.calls.remove(&self.id));
    }
}

/// Ends a dropped call from a thread of its own: KILL, wait for the dead,
/// reap, forget, and let go of the shell once `tokio` has reaped it.
fn finish_blocking(call: &CallProcesses) {
    call.kill();
    let until = Instant::now() + DEATH_WAIT;
    while !call.is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
        call.kill();
    }
    reap(call);
    with_registry(|r| r.calls.remove(&call.id));
    // The dropped shell is reaped by tokio's orphan queue; until then its
    // pid must not be reaped here.
    let until = Instant::now() + SHELL_RELEASE_WAIT;
    while Instant::now() < until {
        let same = read_stat(call.shell).is_some_and(|s| Some(s.start) == call.shell_start);
        if !same {
            shell_awaited(call.shell);
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Reaps the call's dead processes that are this process's children (all
/// but the shell, which `tokio` awaits), and in [`OrphanScope::Process`]
/// every other zombie child that is not a shell still awaited.
fn reap(call: &CallProcesses) {
    let me = own_pid();
    let known: Vec<(i32, u64)> = call.known().iter().map(|(p, s)| (*p, *s)).collect();
    let mut guard = registry();
    let reg = guard.get_or_insert_with(Registry::default);
    let reap_one = |stat: Stat| {
        if stat.dead && stat.ppid == me && !reg.shells.contains(&stat.pid) {
            // A zombie child of ours that no one else waits for: the
            // registry lock keeps a new shell from taking its pid meanwhile.
            if let Some(pid) = Pid::from_raw(stat.pid) {
                let _ = rustix::process::waitpid(Some(pid), WaitOptions::NOHANG);
            }
        }
    };
    for (pid, start) in known {
        if pid == call.shell {
            continue;
        }
        if let Some(stat) = read_stat(pid).filter(|s| s.start == start) {
            reap_one(stat);
        }
    }
    if SCOPE.load(Ordering::SeqCst) >= 2 {
        for stat in own_zombies(me) {
            reap_one(stat);
        }
    }
}

/// Zombie children of this process: from the children lists of its
/// threads (an orphan is re-parented to one of them), or, where the kernel
/// has no such lists, from a scan of `/proc`.
fn own_zombies(me: i32) -> Vec<Stat> {
    match children(me) {
        Some(pids) => pids
            .into_iter()
            .filter_map(read_stat)
            .filter(|s| s.dead && s.ppid == me)
            .collect(),
        None => scan(0)
            .into_iter()
            .filter(|s| s.dead && s.ppid == me)
            .collect(),
    }
}

/// The children of every thread of process `me`
/// (`/proc/me/task/*/children`, Linux 3.5 with `CONFIG_PROC_CHILDREN`);
/// `None` when a list cannot be read. A child forked meanwhile may be
/// missing: it is not a zombie yet, and the next call's reaping finds it.
fn children(me: i32) -> Option<Vec<i32>> {
    let mut pids = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{me}/task"))
        .ok()?
        .flatten()
    {
        let mut path = task.path();
        path.push("children");
        let text = match std::fs::read(&path) {
            Ok(text) => text,
            // A thread that ended meanwhile has no children left.
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(_) => return None,
        };
        let text = std::str::from_utf8(&text).ok()?;
        pids.extend(
            text.split_whitespace()
                .filter_map(|p| p.parse::<i32>().ok()),
        );
    }
    Some(pids)
}

/// The shell has been awaited by `tokio`: it may be reaped no longer.
pub(crate) fn shell_awaited(pid: i32) {
    with_registry(|r| r.shells.remove(&pid));
}

impl Drop for CallProcesses {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        self.terminate();
        let call = CallProcesses {
            id: self.id,
            marker: std::mem::take(&mut self.marker),
            shell: self.shell,
            shell_start: self.shell_start,
            known: Mutex::new(std::mem::take(&mut *self.known())),
            strangers: Mutex::new(HashSet::new()),
            grace: self.grace,
            armed: false,
            contained: self.contained,
            gone: AtomicBool::new(self.gone.load(Ordering::SeqCst)),
        };
        let escalate = move || {
            let until = Instant::now() + call.grace;
            while Instant::now() < until && !call.is_empty() {
                std::thread::sleep(Duration::from_millis(20));
            }
            finish_blocking(&call);
        };
        // No thread to be had: KILL at once rather than leave them.
        if std::thread::Builder::new()
            .name("bash-call-kill".into())
            .spawn(escalate)
            .is_err()
        {
            self.kill();
            with_registry(|r| r.calls.remove(&self.id));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_is_read_after_the_last_parenthesis_whatever_the_name() {
        let line = b"42 (a) b\xff(c)) S 7 8 9 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 12345 0 0\n";
        let stat = parse_stat(42, line).unwrap();
        assert_eq!(
            (stat.ppid, stat.pgrp, stat.session, stat.start, stat.dead),
            (7, 8, 9, 12345, false)
        );
        let zombie = b"5 (x) Z 1 5 5 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0\n";
        assert!(parse_stat(5, zombie).unwrap().dead);
        assert!(parse_stat(5, b"5 (x").is_none());
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn this_process_reads_its_own_stat_and_finds_its_zombie_child() {
        let me = own_pid();
        assert_eq!(read_stat(me).map(|s| s.pid), Some(me));
        let child = std::process::Command::new("true").spawn().unwrap();
        let pid = i32::try_from(child.id()).unwrap();
        // Wait until it is a zombie, without reaping it.
        let until = Instant::now() + Duration::from_secs(10);
        while !read_stat(pid).is_some_and(|s| s.dead) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
        if let Some(listed) = children(me) {
            assert!(listed.contains(&pid), "{listed:?} lacks {pid}");
        }
        assert!(own_zombies(me).iter().any(|s| s.pid == pid));
        drop(child);
        let _ = rustix::process::waitpid(Pid::from_raw(pid), WaitOptions::empty());
    }

    /// A contained call is judged empty without a look in `/proc` only
    /// once its shell exited with a code; a shell killed by a signal, or a
    /// call not contained, is looked for. The tree below is deliberately
    /// not contained here (a plain `sh` leaves a sleeper behind), so the
    /// answers show which path was taken.
    #[test]
    #[cfg(target_os = "linux")]
    fn a_contained_call_is_empty_once_its_shell_exited_with_a_code() {
        let mut shell = std::process::Command::new("sh")
            .args(["-c", "sleep 30 >/dev/null & echo $!"])
            .env("AGENTCORE_TEST_CONTAINED", "marked")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = i32::try_from(shell.id()).unwrap();
        let call = |contained| {
            CallProcesses::new(
                u64::MAX - u64::from(contained),
                "AGENTCORE_TEST_CONTAINED",
                "marked",
                pid,
                Duration::from_secs(1),
            )
            .contained(contained)
        };
        let (mut plain, mut contained) = (call(false), call(true));
        let mut out = String::new();
        std::io::Read::read_to_string(shell.stdout.as_mut().unwrap(), &mut out).unwrap();
        let sleeper: i32 = out.trim().parse().unwrap();
        assert!(shell.wait().unwrap().success());
        // Not yet told how the shell ended: the sleeper is found.
        assert!(!contained.is_empty());
        contained.shell_exited(false);
        assert!(!contained.is_empty(), "a shell killed by a signal");
        plain.shell_exited(true);
        assert!(!plain.is_empty(), "a call not contained");
        contained.shell_exited(true);
        assert!(contained.is_empty(), "exited with a code, contained");
        let _ = kill(sleeper, Signal::KILL);
        plain.finish(false);
        contained.finish(true);
        let _ = rustix::process::waitpid(Pid::from_raw(sleeper), WaitOptions::empty());
    }
}
