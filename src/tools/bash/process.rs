//! Starting the shell in a session and process group of its own, and
//! signalling that group as a whole.

use std::ffi::OsString;
use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::net::unix::pipe;
use tokio::process::{Child, Command};

/// How long a group gets between TERM and KILL.
pub(crate) const KILL_GRACE: Duration = Duration::from_secs(1);

/// A running shell: the child, its group, and the read end of the one pipe
/// its stdout and stderr share.
#[derive(Debug)]
pub(crate) struct Spawned {
    pub(crate) child: Child,
    pub(crate) group: ProcessGroup,
    pub(crate) output: pipe::Receiver,
}

/// Starts `shell -c command` in `cwd` with exactly `env`, in a new session
/// (so a new process group with the shell's pid as its id), stdin
/// `/dev/null`, stdout and stderr the write end of one pipe.
pub(crate) fn spawn(
    shell: &Path,
    command: &str,
    cwd: &Path,
    env: &[(OsString, OsString)],
) -> io::Result<Spawned> {
    let (reader, writer) = io::pipe()?;
    let writer_for_stderr = writer.try_clone()?;
    let mut cmd = Command::new(shell);
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::from(writer))
        .stderr(Stdio::from(writer_for_stderr));
    new_session_on_exec(&mut cmd);
    let child = cmd.spawn()?;
    // The command holds our copies of the pipe's write end; only the child
    // may keep it open, or the read end never sees end of file.
    drop(cmd);
    let pid = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .ok_or_else(|| io::Error::other("the shell exited before it could be watched"))?;
    let group = ProcessGroup::new(Pid::from_raw(pid));
    let output = pipe::Receiver::from_owned_fd(OwnedFd::from(reader))?;
    Ok(Spawned {
        child,
        group,
        output,
    })
}

/// Makes the child call `setsid()` between fork and exec.
// `pre_exec` is unsafe because the closure runs in the forked child, where
// only async-signal-safe work is allowed. `setsid` is a single
// async-signal-safe syscall, and turning its errno into an `io::Error`
// neither allocates nor takes a lock, so the closure is sound. This is the
// one `unsafe` in the crate.
#[allow(unsafe_code)]
fn new_session_on_exec(cmd: &mut Command) {
    // SAFETY: see above; the closure only calls setsid(2).
    unsafe {
        cmd.pre_exec(|| {
            nix::unistd::setsid()
                .map(drop)
                .map_err(|errno| io::Error::from_raw_os_error(errno as i32))
        });
    }
}

/// The shell's process group. Dropping it before [`ProcessGroup::disarm`]
/// kills the group: TERM now, KILL after [`KILL_GRACE`] from a helper
/// thread, so a dropped call leaves nothing running.
#[derive(Debug)]
pub(crate) struct ProcessGroup {
    pgid: Pid,
    armed: bool,
}

impl ProcessGroup {
    fn new(pgid: Pid) -> Self {
        Self { pgid, armed: true }
    }

    /// Sends TERM to every process in the group.
    pub(crate) fn terminate(&self) {
        signal(self.pgid, Some(Signal::SIGTERM));
    }

    /// Sends KILL to every process in the group.
    pub(crate) fn kill(&self) {
        signal(self.pgid, Some(Signal::SIGKILL));
    }

    /// True when no process is left in the group (zombies not yet reaped by
    /// their new parent still count).
    pub(crate) fn is_empty(&self) -> bool {
        is_empty(self.pgid)
    }

    /// The group has been dealt with; dropping it does nothing more.
    pub(crate) fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        if !self.armed || is_empty(self.pgid) {
            return;
        }
        signal(self.pgid, Some(Signal::SIGTERM));
        let pgid = self.pgid;
        let escalate = move || {
            let until = Instant::now() + KILL_GRACE;
            while Instant::now() < until {
                if is_empty(pgid) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            signal(pgid, Some(Signal::SIGKILL));
        };
        // No thread to be had: KILL at once rather than leave the group.
        if std::thread::Builder::new()
            .name("bash-group-kill".into())
            .spawn(escalate)
            .is_err()
        {
            signal(pgid, Some(Signal::SIGKILL));
        }
    }
}

/// Signals the group; `None` only checks that it exists. Returns whether
/// some process received it.
fn signal(pgid: Pid, sig: Option<Signal>) -> bool {
    match killpg(pgid, sig) {
        Ok(()) => true,
        // EPERM: members exist that we may not signal (e.g. a setuid
        // program); they are still there.
        Err(Errno::EPERM) => true,
        Err(_) => false,
    }
}

fn is_empty(pgid: Pid) -> bool {
    !signal(pgid, None)
}
