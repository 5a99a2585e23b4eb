//! A child process made ready to run a command: a session and process
//! group of its own, a child subreaper, no `CAP_SYS_PTRACE`.

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
#[allow(unsafe_code)] // `pre_exec`; the block says why it is sound.
pub(crate) fn prepare_child(cmd: &mut Command) {
    // SAFETY: `pre_exec` runs the closure in the forked child, where only
    // async-signal-safe work is allowed. The closure makes three rustix
    // syscalls (`setsid`, two `prctl`s: plain syscalls, no libc state) and
    // turns an errno into an `io::Error`, which neither allocates nor takes
    // a lock.
    unsafe {
        cmd.pre_exec(|| {
            rustix::process::setsid()?;
            #[cfg(target_os = "linux")]
            {
                // PR_SET_CHILD_SUBREAPER takes any non-zero value for "on";
                // rustix passes the pid it is given, here 1.
                rustix::process::set_child_subreaper(Some(rustix::process::Pid::INIT))?;
                // EPERM: no CAP_SETPCAP (not root), and then no
                // CAP_SYS_PTRACE to drop either, normally. EINVAL: a kernel
                // without that capability. Neither stops the command.
                let _ = rustix::thread::remove_capability_from_bounding_set(
                    rustix::thread::CapabilitySet::SYS_PTRACE,
                );
            }
            Ok(())
        });
    }
}

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
