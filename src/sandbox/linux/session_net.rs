//! The loopback shared by a session's commands: a user namespace and a
//! network namespace made once, kept by their fds, entered by every
//! command (`setns`), so a server one command starts answers the next one
//! while it runs.
#![allow(unsafe_code)] // fork and raw syscalls; each block says why it is sound.

use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;

use super::child::loopback_up;
use crate::sandbox::paths::id_map;

/// The session's namespaces, by fd (`O_CLOEXEC`). They live as long as
/// these fds: the helper that made them has exited.
#[derive(Debug)]
pub(in crate::sandbox) struct SessionNet {
    pub(super) user: OwnedFd,
    pub(super) net: OwnedFd,
}

impl SessionNet {
    /// Forks a helper H that unshares a user and a network namespace and
    /// brings `lo` up; opens `/proc/H/ns/{user,net}`; lets H exit.
    ///
    /// The maps are identity maps: H writes its own single-id maps, or for
    /// root this process (root in the parent namespace) writes the identity
    /// of every id into H's maps.
    pub(in crate::sandbox) fn new() -> io::Result<Self> {
        let euid = nix::unistd::geteuid();
        let root = euid.is_root();
        let uid_map = id_map(euid.as_raw(), false).into_bytes();
        let gid_map = id_map(nix::unistd::getegid().as_raw(), false).into_bytes();
        let (ready_r, ready_w) = pipe()?;
        let (go_r, go_w) = pipe()?;
        // SAFETY: the child runs `helper`, raw syscalls on data prepared
        // above, and leaves by `_exit`.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        if pid == 0 {
            let code = helper(root, &uid_map, &gid_map, ready_w.0, go_r.0);
            // SAFETY: _exit never returns.
            unsafe { libc::_exit(code) };
        }
        drop(ready_w);
        drop(go_r);
        let opened = (|| {
            read_byte(&ready_r)?;
            if root {
                let all = id_map(0, true);
                std::fs::write(format!("/proc/{pid}/uid_map"), &all)?;
                std::fs::write(format!("/proc/{pid}/gid_map"), &all)?;
            }
            let user = OwnedFd::from(File::open(format!("/proc/{pid}/ns/user"))?);
            let net = OwnedFd::from(File::open(format!("/proc/{pid}/ns/net"))?);
            Ok::<_, io::Error>((user, net))
        })();
        // Tell H to bring `lo` up (or, on an error, to give up), then reap it.
        let _ = write_byte(&go_w, u8::from(opened.is_ok()));
        drop(go_w);
        let mut status = 0;
        // SAFETY: waitpid with a pointer to a local.
        while unsafe { libc::waitpid(pid, &mut status, 0) } < 0
            && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
        {}
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

/// A pipe end we own, closed on drop.
struct End(libc::c_int);

impl Drop for End {
    fn drop(&mut self) {
        // SAFETY: closing an fd this value owns.
        unsafe { libc::close(self.0) };
    }
}

fn pipe() -> io::Result<(End, End)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills the array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((End(fds[0]), End(fds[1])))
}

fn read_byte(end: &End) -> io::Result<u8> {
    let mut byte = [0u8; 1];
    // SAFETY: a one-byte read into a local.
    match unsafe { libc::read(end.0, byte.as_mut_ptr().cast(), 1) } {
        1 => Ok(byte[0]),
        0 => Err(io::Error::other("the namespace helper exited early")),
        _ => Err(io::Error::last_os_error()),
    }
}

fn write_byte(end: &End, byte: u8) -> io::Result<()> {
    // SAFETY: a one-byte write from a local.
    if unsafe { libc::write(end.0, [byte].as_ptr().cast(), 1) } == 1 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// H, in the forked child: returns its exit code (0, or the errno that
/// stopped it).
fn helper(root: bool, uid_map: &[u8], gid_map: &[u8], ready: libc::c_int, go: libc::c_int) -> i32 {
    let errno = |e: io::Error| e.raw_os_error().unwrap_or(libc::EINVAL).clamp(1, 255);
    // SAFETY: raw syscalls: unshare with flags, one-byte reads and writes on
    // the pipes inherited from the parent.
    unsafe {
        if libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) < 0 {
            return errno(io::Error::last_os_error());
        }
        if !root && let Err(e) = super::child::write_own_maps(uid_map, gid_map) {
            return errno(e);
        }
        if libc::write(ready, b"r".as_ptr().cast(), 1) != 1 {
            return errno(io::Error::last_os_error());
        }
        let mut byte = [0u8; 1];
        if libc::read(go, byte.as_mut_ptr().cast(), 1) != 1 || byte[0] != 1 {
            return libc::ECANCELED;
        }
    }
    match loopback_up() {
        Ok(()) => 0,
        Err(e) => errno(e),
    }
}
