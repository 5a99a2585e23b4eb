//! Starting the shell in a session and process group of its own, as a
//! child subreaper, without `CAP_SYS_PTRACE`, and carrying the marker that
//! finds all its processes later ([`CallProcesses`]).

use std::ffi::OsString;
use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::Stdio;

use tokio::net::unix::pipe;
use tokio::process::{Child, Command};

use crate::process::child::{KILL_GRACE, prepare_child};
use crate::process::env::CALL_MARKER;
use crate::process::tracking::{self as procs, CallProcesses};
use crate::sandbox::{Confinement, Sandbox};

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
    /// What the sandbox installed, read after the command ends for the
    /// limit it reached ([`Confinement::limit_hit`]); holding it keeps the
    /// command's cgroup until then.
    pub(crate) confinement: Option<Confinement>,
}

impl Spawned {
    /// A handle on the command's confinement, to ask after it ended.
    pub(crate) fn confinement(&self) -> Option<Confinement> {
        self.confinement.clone()
    }
}

/// `(sandboxed: killed — … limit … reached)` when the confined command
/// that ended with `ending` reached a limit.
pub(crate) fn limit_line(
    confinement: Option<&Confinement>,
    ending: super::run::Ending,
) -> Option<String> {
    use super::run::Ending;
    let killed_by = match ending {
        Ending::Signaled(sig) => Some(sig),
        Ending::Exited(_) => None,
        Ending::TimedOut(_) | Ending::Interrupted => return None,
    };
    confinement?.limit_hit(killed_by).map(|hit| hit.line())
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
        confinement,
    })
}
