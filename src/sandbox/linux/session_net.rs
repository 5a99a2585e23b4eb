//! The loopback shared by a session's commands: a user namespace and a
//! network namespace made once, kept by their fds, entered by every
//! command (`setns`), so a server one command starts answers the next one
//! while it runs.
#![allow(unsafe_code)] // the fork of the helper; each block says why it is sound.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::io::Errno;
use rustix::pipe::{PipeFlags, pipe_with};
use rustix::process::WaitOptions;
use rustix::thread::UnshareFlags;

use super::child::loopback_up;
use super::sys;
use crate::sandbox::paths::id_map;

/// The session's namespaces, by fd (`O_CLOEXEC`). They live as long as
/// these fds: the helper that made them has exited.
#[derive(Debug)]
pub(in crate::sandbox) struct SessionNet {
    pub(super) user: OwnedFd,
    pub(super) net: OwnedFd,
}

impl SessionNet {
    /// Forks a helper H that unshares a user and a network namespace,
    /// brings `lo` up and sends this process its `/proc/self/ns/{user,net}`
    /// (opened by H itself: this process, non-dumpable when the bash tool
    /// made it so, may not open another user's view of its children's
    /// `/proc` files when it is not root); lets H exit.
    ///
    /// The maps are identity maps: H writes its own single-id maps, or for
    /// root this process (root in the parent namespace) writes the identity
    /// of every id into H's maps.
    pub(in crate::sandbox) fn new() -> io::Result<Self> {
        let euid = rustix::process::geteuid();
        let root = euid.is_root();
        let uid_map = id_map(euid.as_raw(), false).into_bytes();
        let gid_map = id_map(rustix::process::getegid().as_raw(), false).into_bytes();
        let (ready_r, ready_w) = pipe_with(PipeFlags::CLOEXEC)?;
        let (go_r, go_w) = pipe_with(PipeFlags::CLOEXEC)?;
        let (fds_ours, fds_theirs) = rustix::net::socketpair(
            rustix::net::AddressFamily::UNIX,
            rustix::net::SocketType::SEQPACKET,
            rustix::net::SocketFlags::CLOEXEC,
            None,
        )?;
        // SAFETY: the child runs `helper`, async-signal-safe calls on the
        // data prepared above, and leaves by `_exit`.
        let pid = unsafe { sys::fork() }?;
        let Some(pid) = pid else {
            // SAFETY: this is the child just forked.
            let code = unsafe {
                helper(
                    root,
                    &uid_map,
                    &gid_map,
                    ready_w.as_fd(),
                    go_r.as_fd(),
                    fds_theirs.as_fd(),
                )
            };
            sys::exit_now(code);
        };
        drop(ready_w);
        drop(go_r);
        drop(fds_theirs);
        let mapped = (|| {
            read_byte(ready_r.as_fd())?;
            if root {
                let all = id_map(0, true);
                std::fs::write(format!("/proc/{pid}/uid_map"), &all)?;
                std::fs::write(format!("/proc/{pid}/gid_map"), &all)?;
            }
            Ok::<_, io::Error>(())
        })();
        // Tell H to bring `lo` up and send its namespaces (or, on an
        // error, to give up), then reap it.
        let _ = write_byte(go_w.as_fd(), u8::from(mapped.is_ok()));
        drop(go_w);
        let opened = mapped.and_then(|()| {
            let [user, net] = super::fd_pass::receive_two(fds_ours.as_fd())?;
            Ok((user, net))
        });
        let status = loop {
            match rustix::process::waitpid(Some(pid), WaitOptions::empty()) {
                Err(Errno::INTR) => {}
                Ok(Some((_, status))) => break status.as_raw(),
                _ => break 0,
            }
        };
        let (user, net) = opened?;
        if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
            let code = libc::WEXITSTATUS(status);
            return Err(io::Error::from_raw_os_error(if code == 0 {
                libc::EINTR
            } else {
                code
            }));
        }
        Ok(SessionNet { user, net })
    }
}

fn read_byte(end: BorrowedFd<'_>) -> io::Result<u8> {
    let mut byte = [0u8; 1];
    match rustix::io::read(end, &mut byte) {
        Ok(1) => Ok(byte[0]),
        Ok(_) => Err(io::Error::other("the namespace helper exited early")),
        Err(e) => Err(e.into()),
    }
}

fn write_byte(end: BorrowedFd<'_>, byte: u8) -> io::Result<()> {
    match rustix::io::write(end, &[byte]) {
        Ok(1) => Ok(()),
        Ok(_) => Err(Errno::IO.into()),
        Err(e) => Err(e.into()),
    }
}

/// H, in the forked child: returns its exit code (0, or the errno that
/// stopped it).
///
/// # Safety
///
/// Only in the child [`SessionNet::new`] forked (single-threaded, ending
/// by `_exit`): it unshares namespaces, making async-signal-safe calls
/// only.
unsafe fn helper(
    root: bool,
    uid_map: &[u8],
    gid_map: &[u8],
    ready: BorrowedFd<'_>,
    go: BorrowedFd<'_>,
    send: BorrowedFd<'_>,
) -> i32 {
    let errno = |e: io::Error| e.raw_os_error().unwrap_or(libc::EINVAL).clamp(1, 255);
    let namespaces = UnshareFlags::NEWUSER | UnshareFlags::NEWNET;
    // SAFETY: namespace flags only, no `CLONE_FILES`.
    if let Err(e) = unsafe { rustix::thread::unshare_unsafe(namespaces) } {
        return errno(e.into());
    }
    if !root && let Err(e) = super::child::write_own_maps(uid_map, gid_map) {
        return errno(e);
    }
    match rustix::io::write(ready, b"r") {
        Ok(1) => {}
        Ok(_) => return errno(Errno::IO.into()),
        Err(e) => return errno(e.into()),
    }
    let mut byte = [0u8; 1];
    if rustix::io::read(go, &mut byte) != Ok(1) || byte[0] != 1 {
        return libc::ECANCELED;
    }
    if let Err(e) = loopback_up() {
        return errno(e);
    }
    let open = |path: &std::ffi::CStr| {
        rustix::fs::open(
            path,
            rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
    };
    let (user, net) = match (open(c"/proc/self/ns/user"), open(c"/proc/self/ns/net")) {
        (Ok(user), Ok(net)) => (user, net),
        (Err(e), _) | (_, Err(e)) => return errno(e.into()),
    };
    match super::fd_pass::send_two(send, [user.as_fd(), net.as_fd()]) {
        Ok(()) => 0,
        Err(e) => errno(e.into()),
    }
}
