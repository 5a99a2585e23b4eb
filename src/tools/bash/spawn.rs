//! Starting the shell in a session and process group of its own, as a
//! child subreaper, without `CAP_SYS_PTRACE`, and carrying the marker that
//! finds all its processes later ([`CallProcesses`]).

use std::ffi::OsString;
use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;

use tokio::net::unix::pipe;
use tokio::process::{Child, Command};

use super::pipe::Enlarged;
use crate::process::child::{KILL_GRACE, prepare_child};
use crate::process::env::CALL_MARKER;
#[cfg(target_os = "linux")]
use crate::process::pty::{self, ChildTerminal, Master, Winsize};
use crate::process::tracking::{self as procs, CallProcesses};
use crate::sandbox::{Confinement, Sandbox};

/// A terminal size where terminals cannot be made (not Linux): terminal
/// sessions are refused there.
#[cfg(not(target_os = "linux"))]
pub(crate) type Winsize = ();

/// Where a command's output is read: the pipe its stdout and stderr
/// share, or the master side of its terminal.
#[derive(Debug)]
pub(crate) enum Output {
    /// The read end of the pipe.
    Pipe {
        receiver: pipe::Receiver,
        /// Its share of the enlarged pipes' budget, held while it is open.
        _share: Option<Enlarged>,
    },
    /// The terminal's master side (shared with whoever types into it).
    #[cfg(target_os = "linux")]
    Terminal(Arc<Master>),
}

impl Output {
    /// Reads the next bytes; `Ok(0)` at the end. Cancel-safe.
    pub(crate) async fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        use tokio::io::AsyncReadExt;
        match self {
            Output::Pipe { receiver, .. } => receiver.read(buf).await,
            #[cfg(target_os = "linux")]
            Output::Terminal(master) => master.read(buf).await,
        }
    }
}

/// A running shell: the child, every process of its call, and where its
/// output is read.
#[derive(Debug)]
pub(crate) struct Spawned {
    pub(crate) child: Child,
    pub(crate) pid: i32,
    pub(crate) procs: CallProcesses,
    pub(crate) output: Output,
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

/// The `TERM` of a command with a terminal: what the screen rendering
/// understands.
pub(crate) const TERMINAL_TYPE: &str = "xterm-256color";

/// Starts `shell -c command` in `cwd` with exactly `env` plus the call's
/// marker variable, in a new session (so a new process group with the
/// shell's pid as its id), stdin `/dev/null`, stdout and stderr the write
/// end of one pipe; confined by `sandbox` when given (`TMPDIR` then its
/// temporary directory), whose failed setup step the error names.
///
/// With `terminal`, the command gets a terminal of that size instead
/// (stdin, stdout, stderr and controlling terminal; `TERM` is
/// [`TERMINAL_TYPE`]), made in the child that runs it: in the sandbox,
/// one of the sandbox's own devpts.
pub(crate) fn spawn(
    shell: &Path,
    command: &str,
    cwd: &Path,
    env: &[(OsString, OsString)],
    sandbox: Option<&Sandbox>,
    terminal: Option<Winsize>,
) -> io::Result<Spawned> {
    #[cfg(not(target_os = "linux"))]
    if terminal.is_some() {
        return Err(io::Error::other(
            "terminal sessions are supported on Linux only",
        ));
    }
    let (id, token) = procs::new_token();
    let mut cmd = Command::new(shell);
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env(CALL_MARKER, &token)
        .stdin(Stdio::null());
    let mut reader = None;
    let mut enlarged = None;
    #[cfg(target_os = "linux")]
    let mut ours = None;
    #[cfg(target_os = "linux")]
    let mut child_terminal = None;
    #[cfg(not(target_os = "linux"))]
    let child_terminal: Option<()> = None;
    match terminal {
        None => {
            let (read_end, writer, share) = super::pipe::output_pipe()?;
            enlarged = share;
            let writer_for_stderr = writer.try_clone()?;
            cmd.stdout(Stdio::from(writer))
                .stderr(Stdio::from(writer_for_stderr));
            reader = Some(read_end);
        }
        #[cfg(target_os = "linux")]
        Some(size) => {
            // The child replaces all three with its terminal.
            cmd.stdout(Stdio::null())
                .stderr(Stdio::null())
                .env("TERM", TERMINAL_TYPE);
            let (parent_end, child_end) = pty::socket_pair()?;
            ours = Some(parent_end);
            child_terminal = Some(ChildTerminal {
                socket: child_end,
                size,
            });
        }
        #[cfg(not(target_os = "linux"))]
        Some(()) => {}
    }
    prepare_child(&mut cmd);
    // The sandbox's step comes last: it forks the command's own PID 1, and
    // the shell's `setsid` and subreaper setting stay with the child we
    // wait for. The terminal is made in the sandbox's last process, or,
    // unconfined, in the child itself.
    let (confinement, child_terminal) = match sandbox {
        Some(sandbox) => {
            cmd.env("TMPDIR", sandbox.tmpdir());
            let (confinement, left) = sandbox
                .confine_with_terminal(&mut cmd, child_terminal)
                .map_err(io::Error::other)?;
            (Some(confinement), left)
        }
        None => (None, child_terminal),
    };
    #[cfg(target_os = "linux")]
    if let Some(terminal) = child_terminal {
        pty::attach_on_exec(&mut cmd, terminal);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = child_terminal;
    let sandboxed = confinement
        .as_ref()
        .is_some_and(|c| c.enforced() != "unconfined");
    let (child, pid) = procs::spawn_registered(|| {
        let child = match &confinement {
            Some(confinement) => confinement.spawn(&mut cmd)?,
            None => cmd.spawn()?,
        };
        let id = child.id();
        Ok((child, id))
    })?;
    // The command holds our copies of the pipe's write end; only the child
    // may keep it open, or the read end never sees end of file.
    drop(cmd);
    let contained = confinement
        .as_ref()
        .is_some_and(Confinement::tree_dies_with_child);
    let procs = CallProcesses::new(id, CALL_MARKER, &token, pid, KILL_GRACE).contained(contained);
    let output = match reader {
        Some(reader) => Output::Pipe {
            receiver: pipe::Receiver::from_owned_fd(OwnedFd::from(reader))?,
            _share: enlarged,
        },
        #[cfg(target_os = "linux")]
        None => {
            // The child sends its terminal just before its exec; a child
            // that failed first closes its end. On an error, `procs`
            // dropped kills whatever started.
            let ours = ours.ok_or_else(|| io::Error::other("no terminal was asked for"))?;
            let master = pty::receive_master(&ours, pty::SETUP_WAIT)
                .map_err(|e| io::Error::other(format!("the terminal could not be set up: {e}")))?;
            Output::Terminal(Arc::new(Master::new(master)?))
        }
        #[cfg(not(target_os = "linux"))]
        None => {
            return Err(io::Error::other(
                "terminal sessions are supported on Linux only",
            ));
        }
    };
    Ok(Spawned {
        child,
        pid,
        procs,
        output,
        sandboxed,
        confinement,
    })
}
