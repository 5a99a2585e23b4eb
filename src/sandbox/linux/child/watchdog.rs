//! G's watchdog: while the shell runs, G (PID 1 of the command's PID
//! namespace, with a `/proc` of that namespace) looks at every process of
//! the namespace ten times a second and, when the command is over a limit,
//! kills all of them (`kill(-1, SIGKILL)`) and says which limit on the
//! failure pipe, a record `[LIMIT_RECORD, which, 0, 0]` the parent reads
//! after the command ends.
//!
//! It makes raw syscalls on buffers of its own stack: `openat`,
//! `getdents64`, `read`, `kill`, `wait4`, `rt_sigtimedwait` and
//! `clock_gettime`; nothing
//! allocates, nothing panics (every index is checked).

use std::ffi::CStr;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd};

use rustix::fs::{Mode, OFlags, RawDir};
use rustix::io::Errno;
use rustix::process::{Pid, WaitOptions};

use super::super::sys;

/// The first byte of a record on the failure pipe that reports a limit
/// (a [`super::Step`] record is a failed setup step).
pub(in crate::sandbox::linux) const LIMIT_RECORD: u8 = 0xF0;

/// Which limit a record reports (its second byte).
pub(in crate::sandbox::linux) const MEMORY: u8 = 1;
pub(in crate::sandbox::linux) const PROCESSES: u8 = 2;
pub(in crate::sandbox::linux) const CPU: u8 = 3;

/// How often G looks, in milliseconds.
const PERIOD_MS: u32 = 100;

/// What G enforces; 0 is no limit.
#[derive(Debug, Clone, Copy, Default)]
pub(in crate::sandbox::linux) struct Watchdog {
    /// Tasks (threads) of the namespace but G, at most: G kills at this
    /// many.
    pub(in crate::sandbox::linux) tasks: u64,
    /// Resident pages of the namespace's processes together (only without
    /// a memory cgroup).
    pub(in crate::sandbox::linux) rss_pages: u64,
    /// Clock ticks of CPU time of any one process.
    pub(in crate::sandbox::linux) cpu_ticks: u64,
}

impl Watchdog {
    pub(in crate::sandbox::linux) fn is_off(&self) -> bool {
        self.tasks == 0 && self.rss_pages == 0 && self.cpu_ticks == 0
    }
}

/// G's loop: reaps every child (the shell's status kept), checks the
/// limits between reaps, and returns the shell's raw wait status once it
/// has ended. Call it with `SIGCHLD` blocked, so that a child's end wakes
/// the wait at once.
pub(super) fn watch(
    shell: Pid,
    limits: &Watchdog,
    failure: BorrowedFd<'_>,
    pids_events: Option<BorrowedFd<'_>>,
) -> i32 {
    let mut killed = false;
    // A build that starts thousands of short processes wakes G on each
    // end: it reaps then, and looks at the namespace once a period only.
    let mut next = 0u64;
    loop {
        loop {
            match rustix::process::wait(WaitOptions::NOHANG) {
                Ok(Some((pid, status))) if pid == shell => return status.as_raw(),
                Ok(Some(_)) | Err(Errno::INTR) => {}
                Ok(None) => break,
                Err(_) => return 125 << 8,
            }
        }
        let now = sys::monotonic_ms();
        if now >= next {
            next = now + u64::from(PERIOD_MS);
            if killed {
                // Anything forked while the first kill went round.
                sys::kill_raw(-1, libc::SIGKILL);
            } else if let Some(which) = pids_events
                .filter(|events| forks_refused(*events))
                .map(|_| PROCESSES)
                .or_else(|| over(limits))
            {
                // A four-byte pipe write is atomic.
                let _ = rustix::io::write(failure, &[LIMIT_RECORD, which, 0, 0]);
                sys::kill_raw(-1, libc::SIGKILL);
                killed = true;
            }
        }
        let left = next
            .saturating_sub(sys::monotonic_ms())
            .clamp(1, u64::from(PERIOD_MS));
        sys::wait_for_signal(libc::SIGCHLD, u32::try_from(left).unwrap_or(PERIOD_MS));
    }
}

/// Whether the cgroup's `pids.events` (read from its start) counts a
/// refused fork: its `max N` line with N above 0.
fn forks_refused(events: BorrowedFd<'_>) -> bool {
    let mut text = [0u8; 256];
    let Ok(len) = rustix::io::pread(events, &mut text, 0) else {
        return false;
    };
    let text = text.get(..len).unwrap_or_default();
    text.split(|b| *b == b'\n').any(|line| {
        line.strip_prefix(b"max ")
            .is_some_and(|n| n.iter().any(|d| (b'1'..=b'9').contains(d)))
    })
}

/// Which limit the namespace is over, if any.
fn over(limits: &Watchdog) -> Option<u8> {
    let proc = rustix::fs::open(
        c"/proc",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let mut tasks = 0u64;
    let mut pages = 0u64;
    let mut buf = [MaybeUninit::<u8>::uninit(); 4096];
    let mut dir = RawDir::new(proc.as_fd(), &mut buf);
    while let Some(entry) = dir.next() {
        let Ok(entry) = entry else { break };
        let name = entry.file_name().to_bytes();
        if name.is_empty() || name == b"1" || !name.iter().all(u8::is_ascii_digit) {
            continue;
        }
        let Some(stat) = read_stat(proc.as_fd(), name) else {
            continue;
        };
        tasks += stat.threads;
        pages += stat.rss_pages;
        if limits.cpu_ticks != 0 && stat.cpu_ticks >= limits.cpu_ticks {
            return Some(CPU);
        }
    }
    if limits.tasks != 0 && tasks >= limits.tasks {
        return Some(PROCESSES);
    }
    if limits.rss_pages != 0 && pages >= limits.rss_pages {
        return Some(MEMORY);
    }
    None
}

/// What `/proc/PID/stat` says of one process.
struct Stat {
    threads: u64,
    rss_pages: u64,
    cpu_ticks: u64,
}

/// Reads `/proc/NAME/stat` relative to `proc`; `None` for a process gone
/// meanwhile. A zombie is one task (it holds its pid, as the kernel
/// counts) and nothing else.
fn read_stat(proc: BorrowedFd<'_>, name: &[u8]) -> Option<Stat> {
    let mut path = [0u8; 32];
    let suffix = b"/stat\0";
    if name.len() + suffix.len() > path.len() {
        return None;
    }
    path[..name.len()].copy_from_slice(name);
    path[name.len()..name.len() + suffix.len()].copy_from_slice(suffix);
    let path = CStr::from_bytes_until_nul(&path).ok()?;
    let fd =
        rustix::fs::openat(proc, path, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()).ok()?;
    let mut text = [0u8; 1024];
    let len = rustix::io::read(&fd, &mut text).ok()?;
    parse_stat(text.get(..len)?)
}

/// The fields after the command name (which may hold spaces and `)`):
/// state is field 3, utime 14, stime 15, num_threads 20, rss 24.
fn parse_stat(text: &[u8]) -> Option<Stat> {
    let close = text.iter().rposition(|b| *b == b')')?;
    let rest = text.get(close + 2..)?;
    let mut stat = Stat {
        threads: 0,
        rss_pages: 0,
        cpu_ticks: 0,
    };
    for (i, field) in rest.split(|b| *b == b' ').enumerate() {
        let number = || {
            field
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .fold(0u64, |n, d| {
                    n.saturating_mul(10).saturating_add(u64::from(d - b'0'))
                })
        };
        match i + 3 {
            3 if field == b"Z" || field == b"X" => {
                stat.threads = 1;
                return Some(stat);
            }
            14 | 15 => stat.cpu_ticks += number(),
            20 => stat.threads = number(),
            24 => {
                stat.rss_pages = number();
                return Some(stat);
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_give_threads_memory_and_cpu() {
        let line = b"4242 (my (odd) cmd) R 1 4242 4242 0 -1 4194560 100 0 0 0 \
                     250 50 0 0 20 0 3 0 12345 104857600 2048 18446744073709551615 \
                     1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n";
        let stat = parse_stat(line).unwrap();
        assert_eq!(stat.cpu_ticks, 300);
        assert_eq!(stat.threads, 3);
        assert_eq!(stat.rss_pages, 2048);
        let zombie = b"7 (sh) Z 1 7 7 0 -1 0 0 0 0 0 90 9 0 0 20 0 1 0 1 0 0 0\n";
        let stat = parse_stat(zombie).unwrap();
        assert_eq!((stat.threads, stat.rss_pages, stat.cpu_ticks), (1, 0, 0));
    }
}
