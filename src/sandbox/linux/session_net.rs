//! The loopback shared by a session's commands: a user namespace and a
//! network namespace made once, kept by their fds, entered by every
//! command (`setns`), so a server one command starts answers the next one
//! while it runs.
//!
//! The same helper also makes the session's mount namespace
//! when `$TMPDIR` is bounded: a size-bounded tmpfs on the session's tmp
//! and shm folders, which every command enters (`setns`) before its own
//! `unshare(CLONE_NEWNS)` copies it, so their files persist from one
//! command to the next (the host sees the folders empty).
#![allow(unsafe_code)] // the fork of the helper; each block says why it is sound.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::mount::MountFlags;

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
    /// The session's mount namespace, with the bounded tmpfs mounts, when
    /// made ([`SessionNet::new`]'s `tmpfs`).
    pub(super) mnt: Option<OwnedFd>,
    /// `O_PATH` descriptors of those tmpfs roots, for the Landlock rules
    /// (a rule on the host's folder under them would not cover them).
    pub(super) tmpfs_roots: Vec<OwnedFd>,
}

/// What the helper mounts: `(folders, bytes)`.
pub(in crate::sandbox) type SessionTmpfs<'a> = Option<(&'a [PathBuf], u64)>;

impl SessionNet {
    /// Whether the session's `$TMPDIR` and `/dev/shm` are its bounded tmpfs.
    pub(in crate::sandbox) fn has_tmpfs(&self) -> bool {
        self.mnt.is_some()
    }

    /// Forks a helper H that unshares a user and a network namespace and
    /// brings `lo` up; opens `/proc/H/ns/{user,net}`; lets H exit.
    ///
    /// The maps are identity maps: H writes its own single-id maps, or for
    /// root this process (root in the parent namespace) writes the identity
    /// of every id into H's maps.
    ///
    /// With `tmpfs`, H also unshares a mount namespace and mounts a tmpfs of
    /// that many bytes on each folder; this process keeps the namespace
    /// and the tmpfs roots by fd. A failed mount fails the whole.
    pub(in crate::sandbox) fn new(tmpfs: SessionTmpfs<'_>) -> io::Result<Self> {
        let euid = rustix::process::geteuid();
        let mounts: Vec<CString> = match tmpfs {
            Some((dirs, _)) => dirs
                .iter()
                .map(|d| CString::new(d.as_os_str().as_bytes()).map_err(io::Error::other))
                .collect::<io::Result<_>>()?,
            None => Vec::new(),
        };
        let options = CString::new(format!("size={},mode=0700", tmpfs.map_or(0, |t| t.1)))
            .map_err(io::Error::other)?;
        let root = euid.is_root();
        let uid_map = id_map(euid.as_raw(), false).into_bytes();
        let gid_map = id_map(rustix::process::getegid().as_raw(), false).into_bytes();
        let (ready_r, ready_w) = pipe_with(PipeFlags::CLOEXEC)?;
        let (go_r, go_w) = pipe_with(PipeFlags::CLOEXEC)?;
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
                    (&mounts, &options),
                    ready_w.as_fd(),
                    go_r.as_fd(),
                )
            };
            sys::exit_now(code);
        };
        drop(ready_w);
        drop(go_r);
        let opened = (|| {
            read_byte(ready_r.as_fd())?;
            if root {
                let all = id_map(0, true);
                std::fs::write(format!("/proc/{pid}/uid_map"), &all)?;
                std::fs::write(format!("/proc/{pid}/gid_map"), &all)?;
            }
            let user = OwnedFd::from(File::open(format!("/proc/{pid}/ns/user"))?);
            let net = OwnedFd::from(File::open(format!("/proc/{pid}/ns/net"))?);
            Ok::<_, io::Error>((user, net))
        })();
        // Tell H to bring `lo` up and mount (or, on an error, to give up);
        // with mounts, H says it has mounted and waits for this process to
        // open what it keeps.
        let _ = write_byte(go_w.as_fd(), u8::from(opened.is_ok()));
        let mut mounted = Ok((None, Vec::new()));
        if opened.is_ok() && !mounts.is_empty() {
            mounted = (|| {
                let errno = read_byte(ready_r.as_fd())?;
                if errno != 0 {
                    let e = io::Error::from_raw_os_error(i32::from(errno));
                    return Err(io::Error::new(e.kind(), format!("mounting a tmpfs: {e}")));
                }
                let mnt = OwnedFd::from(File::open(format!("/proc/{pid}/ns/mnt"))?);
                let mut roots = Vec::new();
                for dir in tmpfs.map_or(&[][..], |t| t.0) {
                    let inside = Path::new(&format!("/proc/{pid}/root"))
                        .join(dir.strip_prefix("/").unwrap_or(dir));
                    let root = rustix::fs::open(
                        &inside,
                        rustix::fs::OFlags::PATH | rustix::fs::OFlags::CLOEXEC,
                        rustix::fs::Mode::empty(),
                    )
                    .map_err(|e| {
                        io::Error::new(
                            io::Error::from(e).kind(),
                            format!("opening {}: {e}", inside.display()),
                        )
                    })?;
                    roots.push(root);
                }
                Ok::<_, io::Error>((Some(mnt), roots))
            })();
            let _ = write_byte(go_w.as_fd(), 1);
        }
        drop(go_w);
        let status = loop {
            match rustix::process::waitpid(Some(pid), WaitOptions::empty()) {
                Err(Errno::INTR) => {}
                Ok(Some((_, status))) => break status.as_raw(),
                _ => break 0,
            }
        };
        let (user, net) = opened?;
        let (mnt, tmpfs_roots) = mounted?;
        if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
            let code = libc::WEXITSTATUS(status);
            return Err(io::Error::from_raw_os_error(if code == 0 {
                libc::EINTR
            } else {
                code
            }));
        }
        Ok(SessionNet {
            user,
            net,
            mnt,
            tmpfs_roots,
        })
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
    (mounts, options): (&[CString], &CString),
    ready: BorrowedFd<'_>,
    go: BorrowedFd<'_>,
) -> i32 {
    let errno = |e: io::Error| e.raw_os_error().unwrap_or(libc::EINVAL).clamp(1, 255);
    let mut namespaces = UnshareFlags::NEWUSER | UnshareFlags::NEWNET;
    if !mounts.is_empty() {
        namespaces |= UnshareFlags::NEWNS;
    }
    // SAFETY: namespace flags only, no `CLONE_FILES`.
    if let Err(e) = unsafe { rustix::thread::unshare_unsafe(namespaces) } {
        return errno(e.into());
    }
    if !root && let Err(e) = super::child::write_own_maps(uid_map, gid_map) {
        return errno(e);
    }
    if !mounts.is_empty() {
        // The parent opens H's namespaces and, through `/proc/H/root`, the
        // tmpfs roots: refused, with a mount namespace of H's own, unless
        // H is dumpable (the bash tool makes agentcore non-dumpable and H
        // inherits it). H runs only this code, before any command exists.
        let _ = rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::Dumpable);
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
    if mounts.is_empty() {
        return 0;
    }
    // Nothing mounted here reaches the host: the copied tree's shared
    // mounts are slaves in a namespace of a less privileged user namespace.
    let mut failed = 0u8;
    for dir in mounts {
        if let Err(e) = rustix::mount::mount(
            c"tmpfs",
            dir.as_c_str(),
            c"tmpfs",
            MountFlags::NOSUID | MountFlags::NODEV,
            options.as_c_str(),
        ) {
            failed = errno(e.into()) as u8;
            break;
        }
    }
    let _ = rustix::io::write(ready, &[failed]);
    // Alive until this process has opened the namespace and the roots.
    let _ = rustix::io::read(go, &mut byte);
    i32::from(failed)
}
