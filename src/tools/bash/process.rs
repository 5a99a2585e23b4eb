//! Starting the shell in a session and process group of its own, as a
//! child subreaper, without `CAP_SYS_PTRACE`, and carrying the marker that
//! finds all its processes later ([`CallProcesses`]).

use std::ffi::OsString;
use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::net::unix::pipe;
use tokio::process::{Child, Command};

use super::env::CALL_MARKER;
use super::procs::{self, CallProcesses};
use crate::sandbox::Sandbox;

/// How long the command's processes get between TERM and KILL.
pub(crate) const KILL_GRACE: Duration = Duration::from_secs(1);

/// A running shell: the child, every process of its call, and the read end
/// of the one pipe its stdout and stderr share.
#[derive(Debug)]
pub(crate) struct Spawned {
    pub(crate) child: Child,
    pub(crate) pid: i32,
    pub(crate) procs: CallProcesses,
    pub(crate) output: pipe::Receiver,
    /// Whether the sandbox confined the command (the first feature at
    /// least): its refusals are then explained in the result.
    pub(crate) sandboxed: bool,
}

/// Starts `shell -c command` in `cwd` with exactly `env` plus the call's
/// marker variable, in a new session (so a new process group with the
/// shell's pid as its id), stdin `/dev/null`, stdout and stderr the write
/// end of one pipe; confined by `sandbox` when given (`TMPDIR` then its
/// temporary directory), whose failed setup step the error names.
pub(crate) fn spawn(
    shell: &Path,
    command: &str,
    cwd: &Path,
    env: &[(OsString, OsString)],
    sandbox: Option<&Sandbox>,
) -> io::Result<Spawned> {
    let (reader, writer) = io::pipe()?;
    let writer_for_stderr = writer.try_clone()?;
    let (id, token) = procs::new_token();
    let mut cmd = Command::new(shell);
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env(CALL_MARKER, &token)
        .stdin(Stdio::null())
        .stdout(Stdio::from(writer))
        .stderr(Stdio::from(writer_for_stderr));
    prepare_child(&mut cmd);
    // The sandbox's step comes last: it forks the command's own PID 1, and
    // the shell's `setsid` and subreaper setting stay with the child we
    // wait for.
    let confinement = match sandbox {
        Some(sandbox) => {
            cmd.env("TMPDIR", sandbox.tmpdir());
            Some(sandbox.confine(&mut cmd).map_err(io::Error::other)?)
        }
        None => None,
    };
    let sandboxed = confinement
        .as_ref()
        .is_some_and(|c| c.enforced() != "unconfined");
    let (child, pid) = procs::spawn_registered(|| {
        let child = cmd.spawn().map_err(|e| match &confinement {
            Some(confinement) => confinement.explain(e),
            None => e,
        })?;
        let id = child.id();
        Ok((child, id))
    })?;
    // The command holds our copies of the pipe's write end; only the child
    // may keep it open, or the read end never sees end of file.
    drop(cmd);
    let procs = CallProcesses::new(id, CALL_MARKER, &token, pid, KILL_GRACE);
    let output = pipe::Receiver::from_owned_fd(OwnedFd::from(reader))?;
    Ok(Spawned {
        child,
        pid,
        procs,
        output,
        sandboxed,
    })
}

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
