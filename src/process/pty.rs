//! Pseudo-terminals for commands that talk back: made in the child that
//! runs the command (so that, in the sandbox, the terminal belongs to the
//! sandbox's own devpts), made its controlling terminal and its stdin,
//! stdout and stderr, and its master side sent back to agentcore over a
//! socket pair (`SCM_RIGHTS`).
//!
//! - [`Winsize`]-sized terminals: `attach_in_child` runs between fork
//!   and exec (async-signal-safe), `attach_on_exec` installs it as a
//!   command's `pre_exec` for an unconfined command; the sandbox calls
//!   `attach_in_child` in its last process before the exec.
//! - [`Master`]: the master side in this process, read and written
//!   without blocking the runtime.
//! - [`waiting_for_input`]: whether a process of the terminal's foreground
//!   group sleeps reading it, seen in `/proc`.

use std::io::{self, IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd, RawFd};
use std::time::Duration;

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::io::Errno;
use rustix::net::{
    AddressFamily, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags, SocketFlags, SocketType,
};
use rustix::pty::OpenptFlags;
use tokio::io::unix::AsyncFd;

pub use rustix::termios::Winsize;

/// How long [`receive_master`] waits for the child to send the terminal:
/// the sandbox's setup comes first, which takes milliseconds.
pub(crate) const SETUP_WAIT: Duration = Duration::from_secs(10);

/// A terminal size of `rows` × `cols` characters.
pub fn size(rows: u16, cols: u16) -> Winsize {
    Winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    }
}

/// The child's part of a terminal about to be made: its end of the socket
/// pair the master goes back over, and the size.
#[derive(Debug)]
pub(crate) struct ChildTerminal {
    pub(crate) socket: OwnedFd,
    pub(crate) size: Winsize,
}

impl ChildTerminal {
    /// [`attach_in_child`] with this socket and size.
    pub(crate) fn attach(&self) -> io::Result<()> {
        attach_in_child(self.socket.as_fd(), self.size)
    }
}

/// A connected pair of UNIX stream sockets (close-on-exec): the child
/// sends the master over its end, this process keeps the other.
pub(crate) fn socket_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let (ours, theirs) = rustix::net::socketpair(
        AddressFamily::UNIX,
        SocketType::STREAM,
        SocketFlags::CLOEXEC,
        None,
    )?;
    Ok((ours, theirs))
}

/// In the forked child, just before exec: opens a new terminal from
/// `/dev/ptmx` (the one the child's mount namespace shows), sets its size,
/// makes its slave side stdin, stdout and stderr and the controlling
/// terminal (the child must lead a session of its own already), and sends
/// the master side over `socket`.
///
/// Async-signal-safe: plain syscalls through rustix, the control buffer on
/// the stack, no allocation.
pub(crate) fn attach_in_child(socket: BorrowedFd<'_>, winsize: Winsize) -> io::Result<()> {
    let master =
        rustix::pty::openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC)?;
    rustix::pty::unlockpt(&master)?;
    let slave = rustix::pty::ioctl_tiocgptpeer(
        &master,
        OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC,
    )?;
    rustix::termios::tcsetwinsize(&slave, winsize)?;
    rustix::stdio::dup2_stdin(&slave)?;
    rustix::stdio::dup2_stdout(&slave)?;
    rustix::stdio::dup2_stderr(&slave)?;
    drop(slave);
    // SAFETY of the borrow: fd 0 is open (the dup above).
    rustix::process::ioctl_tiocsctty(rustix::stdio::stdin())?;
    send_fd(socket, master.as_fd())?;
    Ok(())
}

/// Makes an unconfined command's `pre_exec` [`attach_in_child`] over
/// the child's end of [`socket_pair`] (moved in). Install it
/// after the step that gives the child a session of its own.
#[allow(unsafe_code)] // `pre_exec`; the block says why it is sound.
pub(crate) fn attach_on_exec(cmd: &mut tokio::process::Command, terminal: ChildTerminal) {
    // SAFETY: `pre_exec` runs the closure in the forked child, where only
    // async-signal-safe work is allowed: `attach_in_child` keeps to plain
    // syscalls on descriptors it owns or borrows, with no allocation.
    unsafe {
        cmd.pre_exec(move || terminal.attach());
    }
}

/// Sends `fd` with one byte over `socket`.
fn send_fd(socket: BorrowedFd<'_>, fd: BorrowedFd<'_>) -> io::Result<()> {
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    let fds = [fd];
    if !control.push(SendAncillaryMessage::ScmRights(&fds)) {
        return Err(Errno::NOBUFS.into());
    }
    match rustix::net::sendmsg(
        socket,
        &[IoSlice::new(b"t")],
        &mut control,
        SendFlags::empty(),
    )? {
        1 => Ok(()),
        _ => Err(Errno::IO.into()),
    }
}

/// The master side the child sent over `socket` (close-on-exec), waiting
/// at most `wait`; an error when the child died or failed first (its end
/// closed without sending) or took longer.
pub(crate) fn receive_master(socket: &OwnedFd, wait: Duration) -> io::Result<OwnedFd> {
    let deadline = std::time::Instant::now() + wait;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Err(io::Error::other("the terminal was not set up in time"));
        }
        let timeout = Timespec {
            tv_sec: left.as_secs() as i64,
            tv_nsec: i64::from(left.subsec_nanos()),
        };
        let mut fds = [PollFd::new(socket, PollFlags::IN)];
        match rustix::event::poll(&mut fds, Some(&timeout)) {
            Err(Errno::INTR) | Ok(0) => continue,
            Err(e) => return Err(e.into()),
            Ok(_) => break,
        }
    }
    let mut byte = [0u8; 1];
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let got = rustix::net::recvmsg(
        socket,
        &mut [IoSliceMut::new(&mut byte)],
        &mut control,
        RecvFlags::CMSG_CLOEXEC,
    )?;
    let mut received = None;
    for message in control.drain() {
        if let RecvAncillaryMessage::ScmRights(rights) = message {
            for fd in rights {
                received.get_or_insert(fd);
            }
        }
    }
    match (got.bytes, received) {
        (1, Some(fd)) => Ok(fd),
        _ => Err(io::Error::other(
            "the command ended before its terminal was set up",
        )),
    }
}

/// The master side of a command's terminal, non-blocking, for the
/// runtime: what the command prints is read from it, what is typed is
/// written to it.
#[derive(Debug)]
pub struct Master {
    fd: AsyncFd<OwnedFd>,
    /// The terminal's number in its devpts (`/dev/pts/N`), to know its
    /// slave side in `/proc`.
    number: u32,
}

impl Master {
    /// Wraps the master side `fd` (made non-blocking here). Must run
    /// inside a tokio runtime.
    #[allow(unsafe_code)] // `AsyncFd::register`; the block says why it is sound.
    pub(crate) fn new(fd: OwnedFd) -> io::Result<Self> {
        let flags = rustix::fs::fcntl_getfl(&fd)?;
        rustix::fs::fcntl_setfl(&fd, flags | rustix::fs::OFlags::NONBLOCK)?;
        let number = rustix::pty::ptsname(&fd, Vec::new())
            .ok()
            .and_then(|name| {
                name.to_str()
                    .ok()
                    .and_then(|n| n.rsplit('/').next())
                    .and_then(|n| n.parse().ok())
            })
            .unwrap_or(u32::MAX);
        // SAFETY: the `OwnedFd` moved in owns an open descriptor, which is
        // neither closed nor replaced while the `AsyncFd` holds it (it is
        // closed when the `AsyncFd` drops it, after deregistering).
        let fd = unsafe { AsyncFd::register(fd)? };
        Ok(Self { fd, number })
    }

    /// Reads what the command printed; `Ok(0)` once every slave side is
    /// closed (the kernel's `EIO`). Cancel-safe.
    pub(crate) async fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let mut guard = self.fd.readable().await?;
            match guard
                .try_io(|fd| rustix::io::read(fd.get_ref(), &mut *buf).map_err(io::Error::from))
            {
                Ok(Ok(n)) => return Ok(n),
                Ok(Err(e)) if e.raw_os_error() == Some(libc::EIO) => return Ok(0),
                Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                Ok(Err(e)) => return Err(e),
                Err(_would_block) => {}
            }
        }
    }

    /// Writes as much of `bytes` as the terminal takes before `deadline`;
    /// how many bytes it took. A program that does not read fills the
    /// terminal's buffer, and the rest is not written.
    pub(crate) async fn write_until(
        &self,
        bytes: &[u8],
        deadline: tokio::time::Instant,
    ) -> io::Result<usize> {
        let mut written = 0;
        while written < bytes.len() {
            let ready = tokio::time::timeout_at(deadline, self.fd.writable()).await;
            let Ok(ready) = ready else {
                break;
            };
            let mut guard = ready?;
            match guard.try_io(|fd| {
                rustix::io::write(fd.get_ref(), &bytes[written..]).map_err(io::Error::from)
            }) {
                Ok(Ok(n)) => written += n,
                Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                Ok(Err(e)) if e.raw_os_error() == Some(libc::EIO) => break,
                Ok(Err(e)) => return Err(e),
                Err(_would_block) => {}
            }
        }
        Ok(written)
    }

    /// Writes what the terminal answers a program's query (a cursor
    /// position report) at once, or not at all.
    pub(crate) fn answer(&self, bytes: &[u8]) {
        let _ = rustix::io::write(self.fd.get_ref(), bytes);
    }

    /// Whether a process of the terminal's foreground group sleeps waiting
    /// to read it ([`waiting_for_input`]).
    pub(crate) fn waiting_for_input(&self) -> bool {
        let Ok(group) = rustix::termios::tcgetpgrp(self.fd.get_ref()) else {
            return false;
        };
        waiting_for_input(group.as_raw_nonzero().get(), self.number)
    }
}

/// The device number of `/dev/pts/N` (Unix98 terminals: majors 136–143).
fn slave_rdev(number: u32) -> u64 {
    rustix::fs::makedev(136 + number / 256, number % 256)
}

/// Whether a process of process group `group` (a terminal's foreground
/// group) is blocked in a system call that waits to read the terminal
/// `/dev/pts/NUMBER`: a `read` of it, or a `poll`, `select` or
/// `epoll_wait` whose set holds it for reading. Seen in
/// `/proc/PID/syscall` (the call and its arguments), `/proc/PID/fd` (what
/// a descriptor is), `/proc/PID/fdinfo` (an epoll set) and
/// `/proc/PID/mem` (a `poll` or `select` set); what cannot be read
/// counts as not waiting.
pub fn waiting_for_input(group: i32, number: u32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    let tty = slave_rdev(number);
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        if process_group(pid) != Some(group) {
            continue;
        }
        if blocked_reading(pid, tty) {
            return true;
        }
    }
    false
}

/// The process group of `pid`, from `/proc/PID/stat` (after the command
/// name, which may hold spaces and parentheses).
fn process_group(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    // state ppid pgrp
    rest.split(' ').nth(2)?.parse().ok()
}

/// Whether `pid` sleeps in a call that waits to read the terminal whose
/// device number is `tty`.
fn blocked_reading(pid: i32, tty: u64) -> bool {
    let Ok(syscall) = std::fs::read_to_string(format!("/proc/{pid}/syscall")) else {
        return false;
    };
    let mut fields = syscall.split_whitespace();
    let Some(nr) = fields.next().and_then(|n| n.parse::<i64>().ok()) else {
        // `running`, or `-1 …` (not in a system call).
        return false;
    };
    let args: Vec<u64> = fields
        .take(6)
        .filter_map(|a| u64::from_str_radix(a.trim_start_matches("0x"), 16).ok())
        .collect();
    if args.len() < 3 {
        return false;
    }
    let is_tty = |fd: u64| RawFd::try_from(fd).is_ok_and(|fd| fd_is(pid, fd, tty));
    if times_out_soon(pid, nr, &args) {
        // It will act on its own within a second (an editor's wait for
        // the rest of an escape sequence): not waiting for input yet.
        return false;
    }
    match Call::of(nr) {
        Some(Call::Read) => is_tty(args[0]),
        Some(Call::Epoll) => RawFd::try_from(args[0])
            .ok()
            .is_some_and(|epfd| epoll_watches(pid, epfd, &is_tty)),
        Some(Call::Poll) => poll_set(pid, args[0], args[1]).is_some_and(|fds| {
            fds.into_iter().any(|(fd, events)| {
                events & (libc::POLLIN | libc::POLLPRI) != 0 && fd >= 0 && is_tty(fd as u64)
            })
        }),
        Some(Call::Select) => select_set(pid, args[0], args[1])
            .is_some_and(|fds| fds.into_iter().any(|fd| is_tty(u64::from(fd)))),
        None => false,
    }
}

/// A wait that ends on its own within this long is not a wait for input.
const SHORT_WAIT: Duration = Duration::from_secs(1);

/// Whether the waiting call `nr` with `args` has a timeout shorter than
/// [`SHORT_WAIT`] (read from `pid`'s memory when it is a structure).
fn times_out_soon(pid: i32, nr: i64, args: &[u64]) -> bool {
    let is = |names: &[libc::c_long]| names.contains(&(nr as libc::c_long));
    let millis = |arg: u64| {
        let ms = arg as u32 as i32;
        ms >= 0 && Duration::from_millis(ms as u64) < SHORT_WAIT
    };
    // A `timespec` or `timeval` at `address`: (seconds, sub-second units).
    let pair = |address: u64| -> Option<(i64, i64)> {
        if address == 0 {
            return None;
        }
        let bytes = read_memory(pid, address, 16)?;
        let sec = i64::from_ne_bytes(bytes[..8].try_into().ok()?);
        let sub = i64::from_ne_bytes(bytes[8..].try_into().ok()?);
        Some((sec, sub))
    };
    let short = |(sec, _): (i64, i64)| sec >= 0 && (sec as u64) < SHORT_WAIT.as_secs();
    if args.len() < 5 {
        return false;
    }
    if is(&[libc::SYS_epoll_pwait]) {
        return millis(args[3]);
    }
    if is(&[libc::SYS_epoll_pwait2]) {
        return pair(args[3]).is_some_and(short);
    }
    if is(&[libc::SYS_ppoll]) {
        return pair(args[2]).is_some_and(short);
    }
    if is(&[libc::SYS_pselect6]) {
        return pair(args[4]).is_some_and(short);
    }
    #[cfg(target_arch = "x86_64")]
    {
        if is(&[libc::SYS_poll]) {
            return millis(args[2]);
        }
        if is(&[libc::SYS_epoll_wait]) {
            return millis(args[3]);
        }
        if is(&[libc::SYS_select]) {
            return pair(args[4]).is_some_and(short);
        }
    }
    false
}

/// The system calls that wait for a descriptor to be readable.
enum Call {
    Read,
    Poll,
    Select,
    Epoll,
}

impl Call {
    fn of(nr: i64) -> Option<Call> {
        let is = |names: &[libc::c_long]| names.contains(&(nr as libc::c_long));
        if is(&[libc::SYS_read, libc::SYS_readv, libc::SYS_pread64]) {
            return Some(Call::Read);
        }
        if is(&[libc::SYS_ppoll]) {
            return Some(Call::Poll);
        }
        if is(&[libc::SYS_pselect6]) {
            return Some(Call::Select);
        }
        if is(&[libc::SYS_epoll_pwait, libc::SYS_epoll_pwait2]) {
            return Some(Call::Epoll);
        }
        #[cfg(target_arch = "x86_64")]
        {
            if is(&[libc::SYS_poll]) {
                return Some(Call::Poll);
            }
            if is(&[libc::SYS_select]) {
                return Some(Call::Select);
            }
            if is(&[libc::SYS_epoll_wait]) {
                return Some(Call::Epoll);
            }
        }
        None
    }
}

/// Whether descriptor `fd` of `pid` is the character device `rdev`.
fn fd_is(pid: i32, fd: RawFd, rdev: u64) -> bool {
    std::fs::metadata(format!("/proc/{pid}/fd/{fd}")).is_ok_and(|m| {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        m.file_type().is_char_device() && m.rdev() == rdev
    })
}

/// Whether the epoll set `epfd` of `pid` watches a descriptor `is_tty`
/// takes (`tfd:` lines of its fdinfo).
fn epoll_watches(pid: i32, epfd: RawFd, is_tty: &dyn Fn(u64) -> bool) -> bool {
    let Ok(info) = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{epfd}")) else {
        return false;
    };
    info.lines().any(|line| {
        let Some(rest) = line.strip_prefix("tfd:") else {
            return false;
        };
        let mut words = rest.split_whitespace();
        let fd = words.next().and_then(|w| w.parse::<u64>().ok());
        // `events: HEX`: EPOLLIN is 0x1.
        let events = words
            .skip_while(|w| *w != "events:")
            .nth(1)
            .and_then(|e| u32::from_str_radix(e, 16).ok());
        fd.is_some_and(|fd| events.is_none_or(|e| e & 1 != 0) && is_tty(fd))
    })
}

/// The most descriptors of a `poll` or `select` set looked at.
const MAX_SET: u64 = 1024;

/// The `(fd, events)` of the `poll` set of `nfds` entries at `address` in
/// `pid`'s memory.
fn poll_set(pid: i32, address: u64, nfds: u64) -> Option<Vec<(i32, i16)>> {
    let nfds = nfds.min(MAX_SET);
    let bytes = read_memory(pid, address, (nfds * 8) as usize)?;
    Some(
        bytes
            .chunks_exact(8)
            .map(|entry| {
                let fd = i32::from_ne_bytes([entry[0], entry[1], entry[2], entry[3]]);
                let events = i16::from_ne_bytes([entry[4], entry[5]]);
                (fd, events)
            })
            .collect(),
    )
}

/// The descriptors set in the `select` read set of `nfds` bits at
/// `address` in `pid`'s memory.
fn select_set(pid: i32, nfds: u64, address: u64) -> Option<Vec<u32>> {
    if address == 0 {
        return Some(Vec::new());
    }
    let nfds = nfds.min(MAX_SET);
    let bytes = read_memory(pid, address, nfds.div_ceil(8) as usize)?;
    let mut fds = Vec::new();
    for fd in 0..nfds as u32 {
        if bytes[(fd / 8) as usize] & (1 << (fd % 8)) != 0 {
            fds.push(fd);
        }
    }
    Some(fds)
}

/// `len` bytes at `address` in `pid`'s memory (`/proc/PID/mem`).
fn read_memory(pid: i32, address: u64, len: usize) -> Option<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let mem = std::fs::File::open(format!("/proc/{pid}/mem")).ok()?;
    let mut bytes = vec![0u8; len];
    mem.read_exact_at(&mut bytes, address).ok()?;
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_numbers_map_to_their_devices() {
        assert_eq!(slave_rdev(0), rustix::fs::makedev(136, 0));
        assert_eq!(slave_rdev(257), rustix::fs::makedev(137, 1));
    }

    #[test]
    fn the_process_group_is_read_past_a_name_with_spaces() {
        let own = std::process::id() as i32;
        let group = rustix::process::getpgrp().as_raw_nonzero().get();
        assert_eq!(process_group(own), Some(group));
    }

    #[test]
    fn a_wait_that_ends_within_a_second_is_not_a_wait_for_input() {
        let own = std::process::id() as i32;
        let pwait = libc::SYS_epoll_pwait;
        assert!(times_out_soon(own, pwait, &[3, 0, 8, 100, 0, 8]));
        assert!(!times_out_soon(own, pwait, &[3, 0, 8, 4000, 0, 8]));
        assert!(!times_out_soon(
            own,
            pwait,
            &[3, 0, 8, u64::from(u32::MAX), 0, 8]
        ));
        // ppoll without a timeout structure waits for ever.
        assert!(!times_out_soon(own, libc::SYS_ppoll, &[1, 1, 0, 0, 8, 0]));
    }

    #[test]
    fn a_process_not_in_a_read_is_not_waiting() {
        // This test's own process is running, not sleeping in a read of a
        // terminal numbered u32::MAX.
        let own = std::process::id() as i32;
        assert!(!blocked_reading(own, slave_rdev(u32::MAX)));
    }
}
