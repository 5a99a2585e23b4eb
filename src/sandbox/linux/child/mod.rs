//! The code that runs between fork and exec: the three processes of a
//! confined command, M (namespaces and mounts), G (PID 1 of the new PID
//! namespace, mounts `/proc` and reaps) and S (Landlock, seccomp, no
//! capabilities, then the exec std does).
//!
//! Everything here runs in a child forked from a multithreaded process, so
//! it makes raw, async-signal-safe syscalls only (rustix's, which are
//! plain syscalls, and the few libc calls of [`super::sys`]), on data
//! prepared before the fork ([`Plan`]): no allocation, no lock, no panic
//! path. Its only entry is the `unsafe fn` [`enter`].
//!
//! - [`namespaces`]: the user namespace (or the session's), its id maps,
//!   the loopback;
//! - [`mounts`]: the private mount tree, read-only but for the writable
//!   roots, the hidden and protected paths;
//! - [`init`]: G and S, forked in the new PID namespace, and how M and G
//!   end;
//! - [`restrict`]: Landlock, seccomp and the capabilities, in S (and the
//!   command's `RLIMIT_*`);
//! - [`watchdog`]: G's watch over the command's limits while it runs.
#![allow(unsafe_code)]

mod init;
mod mounts;
mod namespaces;
mod restrict;
mod watchdog;

use std::ffi::CString;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::mount::MountFlags;
use rustix::thread::UnshareFlags;
use seccompiler::BpfProgram;

pub(super) use namespaces::{loopback_up, write_own_maps};
pub(super) use watchdog::{CPU, LIMIT_RECORD, MEMORY, PROCESSES, Watchdog};

/// Everything the child needs, computed before the fork.
#[derive(Debug)]
pub(super) struct Plan {
    /// `None`: no user namespace, so no namespaces at all.
    pub(super) namespaces: Option<Namespaces>,
    /// The Landlock ruleset (`O_CLOEXEC`), or `None` without Landlock.
    pub(super) ruleset: Option<OwnedFd>,
    /// Seccomp programs, applied in order.
    pub(super) filters: Vec<BpfProgram>,
    /// The command's working directory, entered again after `unshare`.
    pub(super) cwd: CString,
    /// The write end of the pipe that tells the parent which step failed
    /// (see [`Step`]).
    pub(super) failure: OwnedFd,
    /// The capabilities the command keeps (a bit per capability number):
    /// none, or for root the file-access ones (see [`ROOT_KEEPS`]).
    pub(super) keep_caps: u64,
    /// With Landlock and a mount namespace: the access rights (directory,
    /// file) S grants on its own `/dev/pts` and `/dev/ptmx`, which M
    /// mounted fresh and which the parent's rules cannot name.
    pub(super) pts_access: Option<(u64, u64)>,
    /// The command's resource limits.
    pub(super) limits: Limits,
    /// A terminal for the command, made in S before its restrictions
    /// (from the `/dev/ptmx` of S's mount namespace: the sandbox's own
    /// devpts), its master sent back to the parent.
    pub(super) terminal: Option<crate::process::pty::ChildTerminal>,
}

/// The resource limits of one command, as the child applies them.
#[derive(Debug, Default)]
pub(super) struct Limits {
    /// The join files of the command's cgroups (one per hierarchy: v1's
    /// `tasks`, v2's `cgroup.procs`), to which M writes `0` first, so that G, S and everything they start are in them.
    pub(super) join: Vec<OwnedFd>,
    /// The lines of `/proc/thread-self/cgroup` (e.g.
    /// `4:memory:/agentcore-12-3`) that show M born in the command's
    /// cgroups, forked by a thread that was in them
    /// ([`super::spawner`]); when M finds every one, it skips the join
    /// (on a kernel that takes its cgroup thread-group lock for it, a
    /// grace period of RCU: several ms on an idle machine). Empty: M
    /// joins.
    pub(super) born_in: Vec<Vec<u8>>,
    /// `(resource, limit)`: set in S, soft and hard, before the exec.
    pub(super) rlimits: Vec<(rustix::process::Resource, u64)>,
    /// What G watches (with a `/proc` of its own only).
    pub(super) watchdog: Watchdog,
    /// The cgroup's `pids.events`, which G reads: a fork refused at the
    /// cgroup's limit is the process limit reached, whatever G counts.
    pub(super) pids_events: Option<OwnedFd>,
}

/// What root keeps inside: `CAP_DAC_OVERRIDE` and `CAP_DAC_READ_SEARCH`,
/// so that files of other users stay as readable and writable as outside
/// (CI checkouts owned by another uid); Landlock and the read-only mounts
/// bind root all the same. `CAP_CHOWN` and `CAP_FOWNER` are dropped with
/// every other one: root inside can neither give a file away nor change
/// the mode, times or attributes of a file it does not own.
pub(super) const ROOT_KEEPS: u64 = (1 << 1) | (1 << 2);

/// The most folders [`Namespaces::writable`] and [`Namespaces::binds`]
/// may hold together (the child keeps their descriptors on its stack).
pub(super) const MAX_WRITABLE_MOUNTS: usize = 64;

/// The namespaces and mounts of M.
#[derive(Debug)]
pub(super) struct Namespaces {
    /// `CLONE_NEW*` flags besides `CLONE_NEWUSER` (and `CLONE_NEWNET` in
    /// a shared network namespace).
    pub(super) flags: UnshareFlags,
    /// The session's user and network namespaces, entered instead of
    /// making a user namespace (and then no maps are written).
    pub(super) shared: Option<std::sync::Arc<super::session_net::SessionNet>>,
    /// `uid_map` and `gid_map` text.
    pub(super) uid_map: Vec<u8>,
    pub(super) gid_map: Vec<u8>,
    /// Root: a helper left in the parent user namespace writes the
    /// identity maps of every id (M may not, once unshared).
    pub(super) root_helper: bool,
    /// The single-id maps M writes itself when the helper fails (a root
    /// without the whole id range, e.g. in a container).
    pub(super) fallback_uid_map: Vec<u8>,
    pub(super) fallback_gid_map: Vec<u8>,
    /// Folders bound onto themselves first, so that they cannot be renamed
    /// or removed (EBUSY): the ancestors, inside a writable root, of the
    /// hidden and protected paths, which would otherwise be moved out from
    /// under the next command's mounts.
    pub(super) pins: Vec<CString>,
    pub(super) hidden_dirs: Vec<CString>,
    pub(super) hidden_files: Vec<CString>,
    /// `(source, target)` plain binds (the session's shm dir on `/dev/shm`),
    /// read-write over the read-only tree.
    pub(super) binds: Vec<(CString, CString)>,
    /// The folders that stay writable (the writable roots, the temporary
    /// directory), bound read-write onto themselves over the read-only
    /// tree; one that is no longer a directory (or is now a symbolic link)
    /// stays read-only.
    pub(super) writable: Vec<CString>,
    /// Every mount point of the parent's tree (with its locked flags),
    /// remounted read-only one by one on a kernel without
    /// `mount_setattr` (before Linux 5.12).
    pub(super) mount_points: Vec<(CString, MountFlags)>,
    /// Read-only binds with the mount flags locked on their mount.
    pub(super) read_only: Vec<(CString, MountFlags)>,
}

impl Namespaces {
    fn has(&self, flag: UnshareFlags) -> bool {
        self.flags.intersects(flag)
    }
}

/// A step of the setup, reported with an index (which hidden path, which
/// read-only bind) over the failure pipe when it fails, so the parent can
/// say more than the errno std passes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum Step {
    Namespaces = 1,
    Loopback,
    PrivateMounts,
    HiddenDir,
    HiddenFile,
    Bind,
    ReadOnly,
    Fork,
    Proc,
    Landlock,
    Seccomp,
    Chdir,
    Pin,
    ReadOnlyRoot,
    Writable,
    Cgroup,
    Rlimit,
    Terminal,
}

impl Step {
    pub(super) fn from_u8(byte: u8) -> Option<Step> {
        use Step::*;
        [
            Namespaces,
            Loopback,
            PrivateMounts,
            HiddenDir,
            HiddenFile,
            Bind,
            ReadOnly,
            Fork,
            Proc,
            Landlock,
            Seccomp,
            Chdir,
            Pin,
            ReadOnlyRoot,
            Writable,
            Cgroup,
            Rlimit,
            Terminal,
        ]
        .into_iter()
        .find(|step| *step as u8 == byte)
    }

    /// Whether the probe's trial vouches for this step working (its
    /// failure means the machine is not what the probe found).
    pub(super) fn was_probed(self) -> bool {
        matches!(
            self,
            Step::Namespaces | Step::Loopback | Step::Fork | Step::Proc | Step::Seccomp
        )
    }
}

/// Writes the failed step to the failure pipe and passes the error on.
struct Reporter<'a>(BorrowedFd<'a>);

impl Reporter<'_> {
    fn fail(&self, step: Step, index: usize, error: io::Error) -> io::Error {
        let index = u16::try_from(index).unwrap_or(u16::MAX).to_le_bytes();
        let record = [step as u8, 0, index[0], index[1]];
        // A four-byte pipe write is atomic, and the pipe is empty (one
        // record per command).
        let _ = rustix::io::write(self.0, &record);
        error
    }
}

/// Whether every one of `lines` is a whole line of this process's
/// `/proc/thread-self/cgroup`; `false` when it cannot be read whole into
/// a page. Async-signal-safe: a stack buffer and raw `open`/`read`.
fn in_cgroups(lines: &[Vec<u8>]) -> bool {
    let Ok(file) = rustix::fs::open(
        c"/proc/thread-self/cgroup",
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    ) else {
        return false;
    };
    let mut buf = [0u8; 4096];
    let mut len = 0;
    loop {
        match rustix::io::read(&file, &mut buf[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(_) => return false,
        }
        if len == buf.len() {
            return false;
        }
    }
    has_lines(&buf[..len], lines)
}

/// Whether every one of `lines` is a whole line of `text`.
fn has_lines(text: &[u8], lines: &[Vec<u8>]) -> bool {
    lines.iter().all(|want| {
        text.split(|b| *b == b'\n')
            .any(|line| line == want.as_slice())
    })
}

/// Runs in the forked child: builds the sandbox around it, and returns
/// only in S, for std to exec the command; M and G never return.
///
/// The order of the steps is part of the sandbox and stays as it is:
/// `setsid`; the command's cgroups joined; the user namespace (or the session's) with its id maps,
/// together with the mount, PID and network namespaces; the loopback of a
/// new network namespace; the mounts (private tree, read-only tree,
/// terminals, pins, hidden paths, read-only binds), made with the
/// capabilities the new user namespace gives; G and S forked into the PID
/// namespace, G mounting `/proc` (then watching the limits); then, in S
/// alone, the command's terminal when it has one, then [`restrict::restrict`]: the `RLIMIT_*`, Landlock, the seccomp filters, the capabilities dropped, the working
/// directory entered again, inherited descriptors marked close-on-exec.
///
/// # Safety
///
/// Call it only where std's `pre_exec` runs its closures: in the child
/// just forked for this command, before exec. The caller vouches that:
///
/// - this process is a fork of a possibly multithreaded one, so it may
///   make only async-signal-safe calls; `enter` keeps to that: rustix's
///   raw syscalls with `CStr` paths of the plan (rustix copies no `CStr`),
///   libc's `fork`, `_exit`, `signal`, `sigemptyset`, `sigaddset`,
///   `sigprocmask`, `sigtimedwait`, `clock_gettime`, `kill`, `close_range`,
///   `fcntl`, `ioctl`, `mount` and `syscall` (through [`super::sys`]), and
///   `seccompiler::apply_filter`
///   (a `prctl` and a `seccomp` call on a program built before the fork).
///   It allocates nothing (errors are `io::Error`s made from an errno) and
///   takes no lock; its indexing stays within bounds known before the fork
///   ([`MAX_WRITABLE_MOUNTS`], checked by the plan), so no panic path is
///   reachable;
/// - `plan` was built for this child and its descriptors are open;
/// - nothing runs after it in M and G: they close every descriptor but
///   their own one or two (std's error pipe and stdio included) and leave
///   by `_exit`, so nothing of std's or the plan's is used or dropped
///   there again. In S it returns, `Ok` for std to exec, `Err` for std to
///   report.
pub(super) unsafe fn enter(plan: &Plan) -> io::Result<()> {
    // EPERM when an earlier `pre_exec` closure made this process a session
    // leader already.
    let _ = rustix::process::setsid();
    // The embedding process, whose death M watches for.
    let parent = rustix::process::getppid();
    let report = Reporter(plan.failure.as_fd());
    // Before any namespace: "0" for this task (M has one thread) to the
    // cgroup's join file; G and S are forked into it. Unless M was born in it, which
    // it checks for itself: a fork from any other thread joins.
    let born_in = !plan.limits.born_in.is_empty() && in_cgroups(&plan.limits.born_in);
    for (index, join) in plan.limits.join.iter().enumerate() {
        if born_in {
            break;
        }
        match rustix::io::write(join, b"0") {
            Ok(1) => {}
            Ok(_) => return Err(report.fail(Step::Cgroup, index, rustix::io::Errno::IO.into())),
            Err(e) => return Err(report.fail(Step::Cgroup, index, e.into())),
        }
    }
    if let Some(ns) = &plan.namespaces {
        namespaces::unshare_and_map(ns).map_err(|e| report.fail(Step::Namespaces, 0, e))?;
        if ns.has(UnshareFlags::NEWNET) && ns.shared.is_none() {
            loopback_up().map_err(|e| report.fail(Step::Loopback, 0, e))?;
        }
        if ns.has(UnshareFlags::NEWNS) {
            mounts::mount_all(ns).map_err(|(step, index, e)| report.fail(step, index, e))?;
        }
        if ns.has(UnshareFlags::NEWPID) {
            // SAFETY: this is the forked child `enter`'s caller vouches
            // for; `fork_init` returns only in S.
            unsafe {
                init::fork_init(
                    ns.has(UnshareFlags::NEWNS),
                    parent,
                    &report,
                    &plan.limits.watchdog,
                    plan.limits.pids_events.as_ref().map(AsFd::as_fd),
                )
            }?;
            // Only S gets here: a new process, not a group leader.
            let _ = rustix::process::setsid();
        }
    }
    if let Some(terminal) = &plan.terminal {
        terminal
            .attach()
            .map_err(|e| report.fail(Step::Terminal, 0, e))?;
    }
    restrict::restrict(plan, &report)
}

#[cfg(test)]
mod tests {
    use super::has_lines;

    #[test]
    fn born_in_means_every_line_whole_never_a_prefix_or_a_part() {
        let text = b"8:pids:/agentcore-7-10\n4:memory:/p/agentcore-7-10\n0::/\n";
        let line = |s: &str| s.as_bytes().to_vec();
        assert!(has_lines(
            text,
            &[
                line("8:pids:/agentcore-7-10"),
                line("4:memory:/p/agentcore-7-10")
            ]
        ));
        // `-1` is a prefix of `-10`: another command's cgroup.
        assert!(!has_lines(text, &[line("8:pids:/agentcore-7-1")]));
        assert!(!has_lines(text, &[line("pids:/agentcore-7-10")]));
        // One hierarchy inside and the other not is not born in.
        assert!(!has_lines(
            text,
            &[
                line("8:pids:/agentcore-7-10"),
                line("4:memory:/p/agentcore-7-11")
            ]
        ));
    }
}
