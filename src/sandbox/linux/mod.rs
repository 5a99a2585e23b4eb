//! The Linux sandbox: a user namespace with mount, PID and network
//! namespaces, Landlock and seccomp, set up between fork and exec by the
//! plan built here.
//!
//! - [`landlock_rules`], [`seccomp`] and [`mounts`]: the parts of the plan,
//!   built in the parent ([`confine`]);
//! - [`child`]: the code that runs between fork and exec and applies it;
//! - [`sys`]: the system calls rustix does not wrap, on libc;
//! - [`probe`]: what this machine can enforce; [`session_net`]: the
//!   loopback a session's commands share; [`failure`]: which step of the
//!   setup failed.
//!
//! System calls go through rustix; libc is used for the few calls rustix
//! has no wrapper for ([`sys`]) and for constants (syscall numbers, socket
//! families, BPF opcodes) the seccomp filters name.

mod cgroup;
mod child;
mod failure;
mod fd_pass;
mod landlock_rules;
mod mounts;
mod net_listen;
mod probe;
mod seccomp;
mod session_net;
mod spawner;
mod sys;

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::thread::UnshareFlags;

use super::status::Feature;
use super::{Confinement, Inner, LimitHit, SandboxError, SandboxLimits};

pub(super) use failure::Failure;
pub(super) use net_listen::listeners;
pub(super) use probe::{probe, probe_afresh};
pub(super) use session_net::SessionNet;

fn cstring(path: &Path) -> Result<CString, SandboxError> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| SandboxError::NulInPath(path.into()))
}

/// Builds the plan for one command and installs it as the command's
/// `pre_exec`.
///
/// The plan is built here, in the parent, in this order: the folders
/// writable inside; the Landlock ruleset ([`landlock_rules::ruleset`]);
/// the seccomp filters ([`seccomp::filters`]); the namespaces and mounts
/// ([`mounts::namespaces`]); the failure pipe. The child applies it in the
/// order [`child::enter`] gives: namespaces, mounts, the PID namespace's
/// init, then Landlock, seccomp and the capabilities.
pub(super) fn confine(
    inner: &Inner,
    cmd: &mut tokio::process::Command,
    terminal: Option<crate::process::pty::ChildTerminal>,
) -> Result<Confinement, SandboxError> {
    let status = &inner.status;
    let user = status.has(Feature::UserNamespace);
    let mount_ns = user && status.has(Feature::MountNamespace);
    let pids = user && status.has(Feature::PidNamespace);
    let new_net = user && !inner.network && status.has(Feature::NetworkNamespace);
    let with_landlock = status.has(Feature::Landlock);
    let with_seccomp = status.has(Feature::Seccomp);
    // Without a network namespace, Landlock (TCP) and seccomp (UDP) refuse
    // the network, loopback included.
    let fallback_net = !inner.network && !new_net;

    let (writable, bind_shm) = writable_folders(inner, mount_ns);
    let ruleset = if with_landlock {
        let mut rules = writable.clone();
        // The session's tmpfs roots, which the host's paths do not reach.
        if let Some(net) = &inner.session_net {
            use std::os::fd::AsRawFd;
            rules.extend(
                net.tmpfs_roots
                    .iter()
                    .map(|fd| PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()))),
            );
        }
        landlock_rules::ruleset(&rules, fallback_net)?
    } else {
        None
    };
    // Landlock ABI 9 tells the sandbox's own UNIX sockets from the host's;
    // below it, seccomp refuses UNIX sockets altogether.
    let landlock_governs_unix = with_landlock && status.landlock_abi().is_some_and(|abi| abi >= 9);
    let filters = if with_seccomp {
        seccomp::filters(fallback_net, !landlock_governs_unix)?
    } else {
        Vec::new()
    };

    let namespaces = if user {
        // An IPC namespace of its own: System V shared memory, semaphores
        // and message queues (and POSIX queues) of the host or of other
        // sessions are out of reach, and what the command makes is freed
        // with it instead of outliving it uncounted by any limit.
        let mut flags = UnshareFlags::NEWIPC;
        if mount_ns {
            flags |= UnshareFlags::NEWNS;
        }
        if pids {
            flags |= UnshareFlags::NEWPID;
        }
        if new_net {
            flags |= UnshareFlags::NEWNET;
        }
        Some(mounts::namespaces(inner, flags, &writable, bind_shm)?)
    } else {
        None
    };

    let cwd = match cmd.as_std().get_current_dir() {
        Some(dir) => dir.to_path_buf(),
        None => std::env::current_dir().map_err(SandboxError::Io)?,
    };
    let (failure_read, failure_write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
        .map_err(|e| SandboxError::Io(e.into()))?;
    rustix::fs::fcntl_setfl(&failure_read, rustix::fs::OFlags::NONBLOCK)
        .map_err(|e| SandboxError::Io(e.into()))?;
    let failure = failure_for(failure_read, namespaces.as_ref(), &cwd);
    let (limits, command_limits) = limits_for(&inner.limits, pids && mount_ns);
    let plan = child::Plan {
        namespaces,
        failure: failure_write,
        ruleset,
        filters,
        cwd: cstring(&cwd)?,
        keep_caps: if user && rustix::process::geteuid().is_root() {
            child::ROOT_KEEPS
        } else {
            0
        },
        pts_access: (mount_ns && with_landlock)
            .then(|| landlock_rules::pts_access(status.landlock_abi())),
        limits,
        terminal,
    };
    let command_limits = std::sync::Arc::new(command_limits);
    install(cmd, plan, command_limits.clone());
    Ok(Confinement {
        full: status.is_complete(),
        tree_dies_with_child: pids,
        enforced: status.enforced(),
        failure: Some(std::sync::Arc::new(failure)),
        limits: Some(command_limits),
        hit: std::sync::Arc::default(),
    })
}

/// Does ahead, on a thread of its own, what the first command of a
/// session would otherwise do on its path, once per process: the
/// machine's cgroups, `mount_setattr`'s presence and the seccomp programs
/// `status` calls for (with or without the network namespace).
pub(super) fn warm_up(status: &super::SandboxStatus) {
    let _ = cgroup::machine();
    mounts::warm_up();
    if status.has(Feature::Seccomp) {
        let landlock_governs_unix =
            status.has(Feature::Landlock) && status.landlock_abi().is_some_and(|abi| abi >= 9);
        for deny_udp in [false, true] {
            let _ = seccomp::filters(deny_udp, !landlock_governs_unix);
        }
    }
}

/// The limits of one command: its cgroup when this machine has one for a
/// controller, RLIMIT_* and G's watchdog (`watchdog`: G has a `/proc` of
/// its own) for the rest. A cgroup that cannot be made falls back to the
/// watchdog for that command.
fn limits_for(values: &SandboxLimits, watchdog: bool) -> (child::Limits, CommandLimits) {
    use rustix::process::Resource;
    let machine = cgroup::machine();
    let (memory_cap, pids_cap) = cgroup_key(values);
    let (cgroup, join, born_in, ticket) = if memory_cap.is_some() || pids_cap.is_some() {
        match spawner::take(machine, (memory_cap, pids_cap)) {
            Some(taken) => (
                Some(taken.cgroup),
                taken.join,
                taken.lines,
                Some(taken.ticket),
            ),
            None => match cgroup::CommandCgroup::create(machine, memory_cap, pids_cap) {
                Ok((cgroup, join)) => (Some(cgroup), join, Vec::new(), None),
                Err(_) => (None, Vec::new(), Vec::new(), None),
            },
        }
    } else {
        (None, Vec::new(), Vec::new(), None)
    };
    let memory_by_cgroup = cgroup.as_ref().is_some_and(|c| c.has_memory());
    let pids_by_cgroup = cgroup.as_ref().is_some_and(|c| c.has_pids());
    let mut rlimits = Vec::new();
    let mut push = |resource: Resource, limit: u64| {
        // Never above the hard limit this process has (setrlimit would
        // refuse to raise it).
        let hard = rustix::process::getrlimit(resource).maximum;
        rlimits.push((resource, hard.map_or(limit, |hard| hard.min(limit))));
    };
    let mut dog = child::Watchdog::default();
    if let Some(bytes) = values.memory
        && !memory_by_cgroup
    {
        // The address space bounds one process at twice the limit (room
        // for what is reserved and never touched); the watchdog bounds the
        // resident memory of all of them.
        push(Resource::As, bytes.saturating_mul(2));
        if watchdog {
            dog.rss_pages = bytes / sys::page_size();
        }
    }
    if let Some(n) = values.processes {
        if watchdog {
            dog.tasks = n;
        }
        if !pids_by_cgroup {
            // Per user namespace (Linux 5.14): the session's commands share
            // one, so this bounds them together; with the watchdog it is a
            // backstop above the per-command count the watchdog kills at.
            let cap = if watchdog { n.saturating_mul(2) } else { n };
            push(Resource::Nproc, cap.saturating_add(2));
        }
    }
    if let Some(seconds) = values.cpu_seconds {
        let ticks = sys::clock_ticks();
        if watchdog {
            dog.cpu_ticks = seconds.saturating_mul(ticks);
            // A second later: the watchdog's report comes first.
            push(Resource::Cpu, seconds.saturating_add(1));
        } else {
            push(Resource::Cpu, seconds);
        }
    }
    if let Some(bytes) = values.file_size {
        push(Resource::Fsize, bytes);
    }
    (
        child::Limits {
            join,
            born_in,
            rlimits,
            watchdog: dog,
            pids_events: cgroup
                .as_ref()
                .filter(|_| watchdog)
                .and_then(cgroup::CommandCgroup::pids_events),
        },
        CommandLimits {
            values: *values,
            ticket: std::sync::Mutex::new(ticket),
            cgroup,
        },
    )
}

/// The limits of a command's cgroup for `values` on this machine:
/// `(memory bytes, tasks)`, each `None` when no cgroup bounds it. The
/// tasks count M and G besides the command's own.
fn cgroup_key(values: &SandboxLimits) -> spawner::Key {
    let machine = cgroup::machine();
    let tasks_cap = values.processes.map(|n| n.saturating_add(2));
    (
        values.memory.filter(|_| machine.memory.is_some()),
        tasks_cap.filter(|_| machine.pids.is_some()),
    )
}

/// Has a cgroup made ahead for the first command of a sandbox with these
/// limits (see [`spawner`]).
pub(super) fn prepare_cgroups(values: &SandboxLimits) {
    spawner::want(cgroup::machine(), cgroup_key(values));
}

/// One command's limits, read once it has ended: which one it reached.
#[derive(Debug)]
pub(super) struct CommandLimits {
    values: SandboxLimits,
    /// The right to fork the command in its cgroup, on the spawner
    /// ([`CommandLimits::spawn`]); dropped before the cgroup, so that an
    /// unused one lets the spawner leave it first.
    ticket: std::sync::Mutex<Option<spawner::Ticket>>,
    /// Removed when the last clone of the command's `Confinement` goes.
    cgroup: Option<cgroup::CommandCgroup>,
}

impl CommandLimits {
    /// Spawns the command: on the spawner thread when its cgroup came
    /// from there (M is born inside), else here.
    pub(super) fn spawn(
        &self,
        cmd: &mut tokio::process::Command,
    ) -> std::io::Result<tokio::process::Child> {
        let ticket = self.ticket.lock().unwrap_or_else(|e| e.into_inner()).take();
        match ticket {
            Some(ticket) => ticket.spawn(cmd),
            None => cmd.spawn(),
        }
    }

    /// The limit the command reached: the watchdog's report on `failure`,
    /// the cgroup's events, or the shell's death by `SIGXCPU` or `SIGXFSZ`
    /// (`signal`).
    pub(super) fn hit(&self, failure: &Failure, signal: Option<i32>) -> Option<LimitHit> {
        let v = &self.values;
        let reported = failure.limit_reported();
        match reported {
            Some(child::MEMORY) => return v.memory.map(LimitHit::Memory),
            Some(child::PROCESSES) => return v.processes.map(LimitHit::Processes),
            Some(child::CPU) => return v.cpu_seconds.map(LimitHit::Cpu),
            _ => {}
        }
        if let Some(cgroup) = &self.cgroup {
            if cgroup.memory_hit() {
                return v.memory.map(LimitHit::Memory);
            }
            if cgroup.pids_hit() {
                return v.processes.map(LimitHit::Processes);
            }
        }
        match signal {
            Some(libc::SIGXCPU) => v.cpu_seconds.map(LimitHit::Cpu),
            Some(libc::SIGXFSZ) => v.file_size.map(LimitHit::FileSize),
            _ => None,
        }
    }
}

/// One line per limit of `values` and what enforces it here, e.g.
/// `memory: 4G (cgroup v1)`; `watchdog`: commands get a PID namespace
/// and a `/proc` of their own; `tmpfs`: the session's `$TMPDIR` is one.
pub(super) fn limits_summary(values: &SandboxLimits, watchdog: bool, tmpfs: bool) -> Vec<String> {
    let machine = cgroup::machine();
    let root = rustix::process::geteuid().is_root();
    let line = |name: &str, value: Option<String>, how: String| match value {
        None => format!("{name}: off"),
        Some(value) => format!("{name}: {value} ({how})"),
    };
    let size = |v: Option<u64>| v.map(crate::sandbox::limits::format_size);
    let memory = match (&machine.memory, watchdog) {
        (Some((_, version)), _) => version.name().to_owned(),
        (None, true) => "watchdog + RLIMIT_AS".to_owned(),
        (None, false) => "RLIMIT_AS per process only: no PID namespace to watch".to_owned(),
    };
    let processes = match (&machine.pids, watchdog) {
        (Some((_, version)), true) => format!("{} + watchdog", version.name()),
        (Some((_, version)), false) => format!("{}: forks refused, not killed", version.name()),
        (None, true) if root => "watchdog (root is exempt from RLIMIT_NPROC)".to_owned(),
        (None, true) => "RLIMIT_NPROC + watchdog".to_owned(),
        (None, false) if root => {
            "not enforced: root is exempt from RLIMIT_NPROC and there is no PID namespace"
                .to_owned()
        }
        (None, false) => "RLIMIT_NPROC, shared by the user's processes".to_owned(),
    };
    let cpu = if watchdog {
        "watchdog + RLIMIT_CPU, per process"
    } else {
        "RLIMIT_CPU, per process"
    };
    let tmp = if tmpfs {
        "tmpfs, $TMPDIR and /dev/shm each".to_owned()
    } else {
        "not enforced: the session's tmpfs lives in its shared namespaces, which a session with the network or a loopback per command does not have".to_owned()
    };
    vec![
        line("memory", size(values.memory), memory),
        line(
            "processes",
            values.processes.map(|n| n.to_string()),
            processes,
        ),
        line(
            "cpu_seconds",
            values.cpu_seconds.map(|n| n.to_string()),
            cpu.to_owned(),
        ),
        line("tmp_size", size(values.tmp_size), tmp),
        line(
            "file_size",
            size(values.file_size),
            "RLIMIT_FSIZE".to_owned(),
        ),
    ]
}

/// The folders writable inside: the writable roots, the temporary
/// directory and, with a mount namespace, the session's shm folder when it
/// is bound on `/dev/shm` (the second value).
fn writable_folders(inner: &Inner, mounts: bool) -> (Vec<PathBuf>, bool) {
    let mut writable = inner.writable.clone();
    writable.push(inner.tmp.clone());
    let bind_shm = mounts && inner.shm.is_dir() && Path::new("/dev/shm").is_dir();
    if bind_shm {
        // A bind's mount root takes Landlock's walk to its own rules: the
        // bound directory needs one of its own.
        writable.push(inner.shm.clone());
    }
    (writable, bind_shm)
}

/// The read end of the failure pipe, with the paths the child's records
/// index.
fn failure_for(
    read: std::os::fd::OwnedFd,
    namespaces: Option<&child::Namespaces>,
    cwd: &Path,
) -> failure::Failure {
    let to_paths = |list: &[CString]| -> Vec<PathBuf> {
        list.iter()
            .map(|c| PathBuf::from(std::ffi::OsStr::from_bytes(c.as_bytes())))
            .collect()
    };
    match namespaces {
        Some(ns) => failure::Failure {
            read,
            hidden_dirs: to_paths(&ns.hidden_dirs),
            hidden_files: to_paths(&ns.hidden_files),
            binds: ns
                .binds
                .iter()
                .map(|(_, target)| PathBuf::from(std::ffi::OsStr::from_bytes(target.as_bytes())))
                .collect(),
            read_only: ns
                .read_only
                .iter()
                .map(|(path, _)| PathBuf::from(std::ffi::OsStr::from_bytes(path.as_bytes())))
                .collect(),
            pins: to_paths(&ns.pins),
            writable: to_paths(&ns.writable),
            cwd: cwd.to_path_buf(),
        },
        None => failure::Failure {
            read,
            hidden_dirs: Vec::new(),
            hidden_files: Vec::new(),
            binds: Vec::new(),
            read_only: Vec::new(),
            pins: Vec::new(),
            writable: Vec::new(),
            cwd: cwd.to_path_buf(),
        },
    }
}

/// Makes `plan` the command's `pre_exec`: std runs it in the forked child,
/// after its own setup (stdio, working directory) and before the exec.
///
/// The command holds `limits` too: its cgroup stays until both the command
/// and every clone of its [`Confinement`] are dropped (a caller may drop
/// the one before spawning, or the other right after).
#[allow(unsafe_code)]
fn install(
    cmd: &mut tokio::process::Command,
    plan: child::Plan,
    limits: std::sync::Arc<CommandLimits>,
) {
    let enter = move || {
        let _ = &limits;
        // SAFETY: std calls this closure only in the child it forked for
        // this command, between fork and exec, which is what `enter`
        // requires; the plan was built for this command and moved here.
        unsafe { child::enter(&plan) }
    };
    // SAFETY: `pre_exec` asks that the closure be async-signal-safe; it
    // only calls `child::enter`, which keeps to async-signal-safe calls on
    // the plan moved into it (see its `# Safety`).
    unsafe { cmd.pre_exec(enter) };
}
