//! The PID namespace: M forks G, its PID 1, which forks S, the command's
//! shell; how M and G wait and end.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::io::Errno;
use rustix::mount::MountFlags;
use rustix::pipe::{PipeFlags, pipe_with};
use rustix::process::{Pid, Signal, WaitOptions};

use super::super::sys;
use super::{Reporter, Step, Watchdog};

/// M forks G, PID 1 of the new PID namespace, and waits for it; G mounts
/// `/proc` (with a mount namespace) and forks S, then reaps until S ends,
/// watching the limits meanwhile when it has a `/proc` of its own.
/// Returns in S only. G dies with M (`PR_SET_PDEATHSIG`), and the kernel
/// kills everything in the namespace when G dies.
///
/// # Safety
///
/// As [`super::enter`]: only in M, the single-threaded child forked for
/// the command, after `unshare(CLONE_NEWPID)`. M and G close every
/// descriptor but their own two and never return.
pub(super) unsafe fn fork_init(
    mount_proc: bool,
    parent: Option<Pid>,
    report: &Reporter<'_>,
    watchdog: &Watchdog,
    pids_events: Option<BorrowedFd<'_>>,
) -> io::Result<()> {
    let fork_failed = |e: io::Error| report.fail(Step::Fork, 0, e);
    let (alive_read, alive_write) =
        pipe_with(PipeFlags::CLOEXEC).map_err(|e| fork_failed(e.into()))?;
    let (relay_read, relay_write) =
        pipe_with(PipeFlags::CLOEXEC).map_err(|e| fork_failed(e.into()))?;
    // SAFETY: M is single-threaded (a forked child); G makes only the
    // async-signal-safe calls below.
    let init = unsafe { sys::fork() }.map_err(fork_failed)?;
    if let Some(init) = init {
        // M keeps only the liveness pipe's write end and the read end of
        // the shell's status: std's error pipe and the stdio copies must
        // close, or `spawn()` and the output reader wait for the whole
        // command.
        // SAFETY: M never returns (`end_like_the_shell` ends it), so no
        // descriptor closed here is used or dropped again.
        unsafe { sys::close_all_but(&[alive_write.as_raw_fd(), relay_read.as_raw_fd()]) };
        // M outlives a TERM, so that the command gets its grace before the
        // KILL that ends M (and so G and everything inside) arrives. G
        // and S were forked with the dispositions M had before.
        for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGQUIT] {
            sys::ignore_signal(sig);
        }
        end_like_the_shell(init, relay_read.as_fd(), parent);
    }
    // G. `getppid()` is 0 in a PID namespace's init, so M's death before
    // PDEATHSIG was armed shows as a hung-up liveness pipe instead.
    let _ = rustix::process::set_parent_process_death_signal(Some(Signal::KILL));
    drop(alive_write);
    let mut fds = [PollFd::new(&alive_read, PollFlags::IN)];
    let now = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    if !matches!(rustix::event::poll(&mut fds, Some(&now)), Ok(0)) {
        sys::exit_now(124);
    }
    drop(alive_read);
    if mount_proc {
        rustix::mount::mount(
            c"proc",
            c"/proc",
            c"proc",
            MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC,
            None::<&std::ffi::CStr>,
        )
        .map_err(|e| report.fail(Step::Proc, 0, e.into()))?;
    }
    // SAFETY: G is single-threaded; S returns to std, which execs.
    let shell = unsafe { sys::fork() }.map_err(fork_failed)?;
    if let Some(shell) = shell {
        // G is PID 1 of the namespace: a signal from outside reaches it
        // only when it has a handler, and the handlers it inherited (the
        // embedding program's) are not its own. TERM, INT and HUP (the
        // caller's TERM reaches G with M's group) go on to every process
        // inside at once, as a signal to a process group does outside: a
        // command's processes then cannot see one another die first.
        for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            // SAFETY: the handler only calls kill(2), which is
            // async-signal-safe.
            unsafe { sys::set_signal_handler(sig, forward_to_everyone) };
        }
        sys::default_signal(libc::SIGQUIT);
        if mount_proc && !watchdog.is_off() {
            // G keeps the failure pipe to report a limit on it, and the
            // cgroup's `pids.events`; SIGCHLD, blocked, wakes its wait
            // when a child ends.
            let events = pids_events.map_or(-1, |fd| fd.as_raw_fd());
            // SAFETY: G never returns (`exit_now` ends it).
            unsafe { sys::close_all_but(&[relay_write.as_raw_fd(), report.0.as_raw_fd(), events]) };
            sys::block_signal(libc::SIGCHLD);
            let status = super::watchdog::watch(shell, watchdog, report.0, pids_events);
            let _ = rustix::io::write(&relay_write, &status.to_ne_bytes());
            sys::exit_now(code_of(status));
        }
        // SAFETY: G never returns (`exit_with` ends it).
        unsafe { sys::close_all_but(&[relay_write.as_raw_fd()]) };
        exit_with(shell, true, Some(relay_write.as_fd()));
    }
    // S: neither end of the relay is its own.
    drop(relay_read);
    drop(relay_write);
    Ok(())
}

/// G's handler: the signal to every process of the namespace but G (`-1`
/// in a PID namespace's init).
extern "C" fn forward_to_everyone(sig: libc::c_int) {
    sys::kill_raw(-1, sig);
}

/// `waitpid` until `pid` ends (reaping any other child when `reap_all`),
/// writes its raw wait status to `report` when given, then `_exit`s with
/// its code, a death by signal as `128 + signal`.
fn exit_with(pid: Pid, reap_all: bool, report: Option<BorrowedFd<'_>>) -> ! {
    let status = wait_for(pid, reap_all);
    if let Some(fd) = report {
        // A failed write leaves M with G's own status.
        let _ = rustix::io::write(fd, &status.to_ne_bytes());
    }
    sys::exit_now(code_of(status))
}

/// M's end: waits for G, then ends as the command's shell ended, whose
/// raw status G sent through `relay`: with its exit code, or killed by the
/// same signal, so that the caller sees `Killed by signal 9` and not exit
/// code 137. Without a status from G (G itself was killed), as G ended.
///
/// While it waits, M checks five times a second that its parent (the
/// embedding process, `parent`) is alive: when that process dies, even by
/// SIGKILL, M is reparented and kills G, and with it the whole PID
/// namespace. (`PR_SET_PDEATHSIG` would fire when the *thread* that
/// spawned M ends, which a thread pool does at any time.)
fn end_like_the_shell(init: Pid, relay: BorrowedFd<'_>, parent: Option<Pid>) -> ! {
    if let Some(parent) = parent {
        let period = Timespec {
            tv_sec: 0,
            tv_nsec: 200_000_000,
        };
        loop {
            let mut fds = [PollFd::from_borrowed_fd(relay, PollFlags::IN)];
            match rustix::event::poll(&mut fds, Some(&period)) {
                Err(Errno::INTR) => continue,
                Ok(0) => {}
                _ => break,
            }
            if rustix::process::getppid() != Some(parent) {
                let _ = rustix::process::kill_process(init, Signal::KILL);
                break;
            }
        }
    }
    let own = wait_for(init, false);
    // G's write end is closed (G is dead), so the read cannot block.
    let mut relayed = [0u8; 4];
    let status = match rustix::io::read(relay, &mut relayed) {
        Ok(4) => i32::from_ne_bytes(relayed),
        _ => own,
    };
    if libc::WIFSIGNALED(status) {
        // The default action of a signal that killed a process ends this
        // one too.
        let sig = libc::WTERMSIG(status);
        sys::default_signal(sig);
        sys::unblock_signal(sig);
        sys::kill_raw(rustix::process::getpid().as_raw_nonzero().get(), sig);
    }
    sys::exit_now(code_of(status))
}

/// `waitpid` until `pid` ends (reaping any other child when `reap_all`);
/// its raw status, or that of an exit with code 125 when waiting fails.
fn wait_for(pid: Pid, reap_all: bool) -> i32 {
    loop {
        let waited = if reap_all {
            rustix::process::wait(WaitOptions::empty())
        } else {
            rustix::process::waitpid(Some(pid), WaitOptions::empty())
        };
        match waited {
            Ok(Some((waited, status))) if waited == pid => return status.as_raw(),
            Ok(_) | Err(Errno::INTR) => {}
            Err(_) => return 125 << 8,
        }
    }
}

/// The exit code standing for a raw wait status: its code, or `128 +
/// signal`.
fn code_of(status: i32) -> i32 {
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    }
}
