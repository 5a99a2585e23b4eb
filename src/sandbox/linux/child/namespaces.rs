//! M's namespaces: a new user namespace with its id maps (or the session's
//! user and network namespaces, entered), the other namespaces with it,
//! and the loopback of a new network namespace.

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsFd, OwnedFd};

use rustix::fs::{Mode, OFlags};
use rustix::pipe::{PipeFlags, pipe_with};
use rustix::process::{DumpableBehavior, WaitOptions};
use rustix::thread::{LinkNameSpaceType, UnshareFlags};

use super::super::sys;
use super::Namespaces;

/// `unshare` and the id maps: M's own single-id maps, or for root the
/// identity of every id, written by a helper that stays outside.
pub(super) fn unshare_and_map(ns: &Namespaces) -> io::Result<()> {
    if let Some(shared) = &ns.shared {
        // The user namespace first: `nobody` may not enter the network
        // namespace from outside it.
        rustix::thread::move_into_link_name_space(
            shared.user.as_fd(),
            Some(LinkNameSpaceType::User),
        )?;
        rustix::thread::move_into_link_name_space(
            shared.net.as_fd(),
            Some(LinkNameSpaceType::Network),
        )?;
        // The session's mounts (its bounded tmpfs), which the command's own
        // mount namespace then copies.
        if let Some(mnt) = &shared.mnt {
            rustix::thread::move_into_link_name_space(mnt.as_fd(), Some(LinkNameSpaceType::Mount))?;
        }
        // SAFETY: no `CLONE_FILES` (nor `CLONE_FS`): the descriptor table
        // stays the one this single-threaded process has.
        return unsafe { rustix::thread::unshare_unsafe(ns.flags - UnshareFlags::NEWNET) }
            .map_err(io::Error::from);
    }
    let flags = UnshareFlags::NEWUSER | ns.flags;
    if !ns.root_helper {
        // SAFETY: as above, namespace flags only.
        unsafe { rustix::thread::unshare_unsafe(flags) }?;
        return write_own_maps(&ns.uid_map, &ns.gid_map);
    }
    let (go_read, go_write) = pipe_with(PipeFlags::CLOEXEC)?;
    let (done_read, done_write) = pipe_with(PipeFlags::CLOEXEC)?;
    let me = rustix::process::getpid();
    // SAFETY: this process is single-threaded already (a forked child);
    // the helper only reads, writes its files and leaves by `_exit`.
    let helper = unsafe { sys::fork() }?;
    let Some(helper) = helper else {
        let mut byte = [0u8; 1];
        let _ = rustix::io::read(&go_read, &mut byte);
        let mut path = [0u8; 48];
        let len = proc_path(&mut path, me.as_raw_nonzero().get(), b"uid_map");
        let uid_ok = write_file(&path[..=len], &ns.uid_map).is_ok();
        let len = proc_path(&mut path, me.as_raw_nonzero().get(), b"gid_map");
        let gid_ok = write_file(&path[..=len], &ns.gid_map).is_ok();
        let ok = [u8::from(uid_ok && gid_ok)];
        let _ = rustix::io::write(&done_write, &ok);
        // Without running any destructor.
        sys::exit_now(0);
    };
    // SAFETY: as above.
    let unshared = unsafe { rustix::thread::unshare_unsafe(flags) };
    let mut ok = [0u8; 1];
    let _ = rustix::io::write(&go_write, b"x");
    let _ = rustix::io::read(&done_read, &mut ok);
    let _ = rustix::process::waitpid(Some(helper), WaitOptions::empty());
    drop((go_read, go_write, done_read, done_write));
    unshared?;
    if ok[0] == 1 {
        Ok(())
    } else {
        write_own_maps(&ns.fallback_uid_map, &ns.fallback_gid_map)
    }
}

/// Writes this process's id maps after `unshare(CLONE_NEWUSER)`.
/// Async-signal-safe: for forked children (M, the probe's trial child,
/// the session's namespace helper).
///
/// The files of a non-dumpable process (the bash tool makes agentcore so,
/// and a fork inherits it) belong to root, so an unprivileged process
/// cannot open its own maps. It is made dumpable for the three writes only
/// and non-dumpable again at once: a process that could read its memory in
/// that window runs outside the sandbox as the same user (one the user
/// approved), not inside it (the command does not exist yet).
pub(in crate::sandbox::linux) fn write_own_maps(uid_map: &[u8], gid_map: &[u8]) -> io::Result<()> {
    let undumpable = matches!(
        rustix::process::dumpable_behavior(),
        Ok(DumpableBehavior::NotDumpable)
    );
    if undumpable {
        let _ = rustix::process::set_dumpable_behavior(DumpableBehavior::Dumpable);
    }
    let written = (|| {
        // `setgroups` must be denied before an unprivileged `gid_map` write.
        write_file(b"/proc/self/setgroups\0", b"deny")?;
        write_file(b"/proc/self/uid_map\0", uid_map)?;
        write_file(b"/proc/self/gid_map\0", gid_map)
    })();
    if undumpable {
        let _ = rustix::process::set_dumpable_behavior(DumpableBehavior::NotDumpable);
    }
    written
}

/// Writes `data` to the file `path` (NUL-terminated) in one `write`.
fn write_file(path: &[u8], data: &[u8]) -> io::Result<()> {
    let path =
        CStr::from_bytes_with_nul(path).map_err(|_| io::Error::from(rustix::io::Errno::INVAL))?;
    let fd: OwnedFd = rustix::fs::open(path, OFlags::WRONLY | OFlags::CLOEXEC, Mode::empty())?;
    let written = rustix::io::write(&fd, data)?;
    if written != data.len() {
        return Err(rustix::io::Errno::IO.into());
    }
    Ok(())
}

/// Brings the loopback interface of a new network namespace up, by ioctl
/// (no `ip` binary, no netlink). Async-signal-safe.
pub(in crate::sandbox::linux) fn loopback_up() -> io::Result<()> {
    let sock = rustix::net::socket_with(
        rustix::net::AddressFamily::INET,
        rustix::net::SocketType::DGRAM,
        rustix::net::SocketFlags::CLOEXEC,
        None,
    )?;
    sys::set_interface_up(sock.as_fd(), b"lo")
}

/// Writes `/proc/<pid>/<name>` into `buf`, NUL-terminated, and returns its
/// length without the NUL. procfs rejects leading zeros, so digits only.
fn proc_path(buf: &mut [u8; 48], pid: i32, name: &[u8]) -> usize {
    let mut len = 0;
    for b in b"/proc/" {
        buf[len] = *b;
        len += 1;
    }
    let mut digits = [0u8; 10];
    let mut count = 0;
    let mut n = pid.unsigned_abs();
    loop {
        digits[count] = b'0' + (n % 10) as u8;
        n /= 10;
        count += 1;
        if n == 0 {
            break;
        }
    }
    while count > 0 {
        count -= 1;
        buf[len] = digits[count];
        len += 1;
    }
    buf[len] = b'/';
    len += 1;
    for b in name {
        buf[len] = *b;
        len += 1;
    }
    buf[len] = 0;
    len
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_paths_have_no_leading_zeros() {
        let mut buf = [0u8; 48];
        let len = proc_path(&mut buf, 12345, b"uid_map");
        assert_eq!(&buf[..=len], b"/proc/12345/uid_map\0");
        let len = proc_path(&mut buf, 7, b"gid_map");
        assert_eq!(&buf[..=len], b"/proc/7/gid_map\0");
    }
}
