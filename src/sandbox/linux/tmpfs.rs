//! The session's `$TMPDIR` and `/dev/shm` folders as size-bounded tmpfs
//! mounts, made when the sandbox is built and unmounted with it. Mounted
//! on the host's folders (root only), so that the session's commands share
//! them, their files persist from one command to the next, and the
//! embedding program sees them as before.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::mount::{MountFlags, UnmountFlags};

/// The mounted folders; unmounted (lazily) when dropped.
#[derive(Debug)]
pub(in crate::sandbox) struct SessionTmpfs {
    mounted: Vec<PathBuf>,
}

impl SessionTmpfs {
    /// Mounts a tmpfs of `bytes` at most, mode 0700, owned by this user, on
    /// each of `dirs`; undoes them all when one fails.
    ///
    /// # Errors
    ///
    /// What `mount(2)` says (EPERM without root).
    pub(in crate::sandbox) fn mount(dirs: &[&Path], bytes: u64) -> io::Result<Self> {
        let options = CString::new(format!(
            "size={bytes},mode=0700,uid={},gid={}",
            rustix::process::geteuid().as_raw(),
            rustix::process::getegid().as_raw()
        ))
        .map_err(io::Error::other)?;
        let mut made = SessionTmpfs {
            mounted: Vec::new(),
        };
        for dir in dirs {
            let target = CString::new(dir.as_os_str().as_bytes()).map_err(io::Error::other)?;
            rustix::mount::mount(
                c"tmpfs",
                target.as_c_str(),
                c"tmpfs",
                MountFlags::NOSUID | MountFlags::NODEV,
                options.as_c_str(),
            )?;
            made.mounted.push(dir.to_path_buf());
        }
        Ok(made)
    }
}

impl Drop for SessionTmpfs {
    fn drop(&mut self) {
        for dir in self.mounted.iter().rev() {
            let _ = rustix::mount::unmount(dir, UnmountFlags::DETACH);
        }
    }
}
