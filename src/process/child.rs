//! A child process made ready to run a command: a session and process
//! group of its own, a child subreaper, no `CAP_SYS_PTRACE`.

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::process::Command;

/// How long a command's (or a hook's) processes get between TERM and KILL.
pub(crate) const KILL_GRACE: Duration = Duration::from_secs(1);

/// Between fork and exec, the child:
/// - calls `setsid()`: a session and process group of its own;
/// - becomes a child subreaper (Linux): whatever the command starts stays
///   below the shell while the shell lives, orphaned or not, and the shell
///   reaps them;
/// - drops `CAP_SYS_PTRACE` from its capability bounding set (Linux, when
///   it may: as root), so that the command cannot read this process's
///   memory or environment even as root (this process is non-dumpable).
// `pre_exec` is unsafe because the closure runs in the forked child, where
// only async-signal-safe work is allowed. `setsid` and `prctl` are single
// async-signal-safe syscalls, and turning an errno into an `io::Error`
// neither allocates nor takes a lock, so the closure is sound.
#[allow(unsafe_code)]
pub(crate) fn prepare_child(cmd: &mut Command) {
    // SAFETY: see above; the closure only makes syscalls.
    unsafe {
        cmd.pre_exec(|| {
            nix::unistd::setsid()
                .map(drop)
                .map_err(|errno| io::Error::from_raw_os_error(errno as i32))?;
            #[cfg(target_os = "linux")]
            {
                nix::sys::prctl::set_child_subreaper(true)
                    .map_err(|errno| io::Error::from_raw_os_error(errno as i32))?;
                // EPERM: no CAP_SETPCAP (not root), and then no
                // CAP_SYS_PTRACE to drop either, normally. EINVAL: a kernel
                // without that capability. Neither stops the command.
                libc::prctl(
                    libc::PR_CAPBSET_DROP,
                    libc::c_ulong::from(CAP_SYS_PTRACE),
                    0 as libc::c_ulong,
                    0 as libc::c_ulong,
                    0 as libc::c_ulong,
                );
            }
            Ok(())
        });
    }
}

/// `CAP_SYS_PTRACE` (linux/capability.h).
#[cfg(target_os = "linux")]
const CAP_SYS_PTRACE: u32 = 19;

/// The shell commands run in: `/bin/bash`, or `/bin/sh` where there is no
/// bash.
pub(crate) fn default_shell() -> PathBuf {
    let bash = Path::new("/bin/bash");
    if bash.exists() {
        bash.to_owned()
    } else {
        PathBuf::from("/bin/sh")
    }
}
