//! One hook process from start to finish, run like a bash command: `bash
//! -c COMMAND` at the workspace root, in a session and process group of
//! its own, the call's JSON on stdin, `CLAUDE_PROJECT_DIR` and
//! `AGENTCORE_PROJECT_DIR` set to the root, confined by the session's
//! sandbox unless the hook says `"unconfined": true`; its stdout and stderr kept up
//! to [`MAX_HOOK_OUTPUT`] bytes each; at its timeout (or the call's
//! cancellation) every process it started is killed, and so is whatever it
//! leaves running when it exits.

use std::io;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentcore_stages::Cancellation;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};
use tokio::time::{Instant, sleep, timeout};

use super::HookConfinement;
use super::config::CommandHook;
use crate::limits::hooks::MAX_HOOK_OUTPUT;
use crate::process::child::{KILL_GRACE, default_shell, prepare_child};
use crate::process::env::{CALL_MARKER, EnvPolicy};
use crate::process::tracking::{CallProcesses, new_token, shell_awaited, spawn_registered};
use crate::sandbox::Sandbox;

/// How long output may keep arriving after every process of the hook was
/// killed (one that cannot be killed, a setuid program, holds the pipe).
const PIPE_GRACE: Duration = Duration::from_secs(2);

/// How often to note the hook's processes while its shell runs.
const TRACK_EVERY: Duration = Duration::from_millis(100);

/// How often to look whether the hook's processes are gone.
const POLL: Duration = Duration::from_millis(20);

/// How a hook process ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Ending {
    /// It exited with this code.
    Exited(i32),
    /// It was killed by this signal.
    Signaled(i32),
    /// Its timeout fired; it was killed.
    TimedOut(Duration),
    /// The call was cancelled; it was killed.
    Cancelled,
    /// It could not be started.
    NotStarted(String),
    /// It was not started, on purpose: it must run confined and the
    /// sandbox cannot be set up. Blocks the call with this sentence.
    Refused(String),
}

impl Ending {
    /// The exit code, when there is one.
    pub(crate) fn code(&self) -> Option<i32> {
        match self {
            Ending::Exited(code) => Some(*code),
            _ => None,
        }
    }

    /// How a failure reads in a result: `exit 1`, `timed out after 5 s`, …
    pub(crate) fn describe(&self) -> String {
        match self {
            Ending::Exited(code) => format!("exit {code}"),
            Ending::Signaled(sig) => format!("killed by signal {sig}"),
            Ending::TimedOut(after) => format!("timed out after {}", seconds(*after)),
            Ending::Cancelled => "cancelled".to_owned(),
            Ending::NotStarted(why) => format!("could not start: {why}"),
            Ending::Refused(why) => format!("not run: {why}"),
        }
    }
}

fn seconds(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

/// What one hook did.
#[derive(Clone, Debug)]
pub(crate) struct HookRun {
    /// The hook.
    pub(crate) hook: CommandHook,
    /// How it ended.
    pub(crate) ending: Ending,
    /// Its stdout (lossy UTF-8, at most [`MAX_HOOK_OUTPUT`] bytes).
    pub(crate) stdout: String,
    /// Its stderr, likewise.
    pub(crate) stderr: String,
    /// How long it ran.
    pub(crate) duration: Duration,
}

/// Runs `hook` with `stdin` at `project_dir`, confined as `confine` says;
/// returns when the hook and every process it started are gone. Dropping
/// the future kills them too.
pub(crate) async fn run(
    hook: &CommandHook,
    stdin: Vec<u8>,
    project_dir: &Path,
    confine: &HookConfinement,
    cancellation: &Cancellation,
) -> HookRun {
    let started = Instant::now();
    let done = |ending, stdout: &Output, stderr: &Output| HookRun {
        hook: hook.clone(),
        ending,
        stdout: stdout.text(),
        stderr: stderr.text(),
        duration: started.elapsed(),
    };
    let stdout = Output::default();
    let stderr = Output::default();
    let sandbox = match confine {
        HookConfinement::None => None,
        HookConfinement::By(sandbox) => Some(sandbox),
        HookConfinement::Unavailable(why) => {
            return done(Ending::Refused(why.clone()), &stdout, &stderr);
        }
    };
    let (mut spawned, pid, mut procs) = match spawn(hook, project_dir, sandbox) {
        Ok(spawned) => spawned,
        Err(err) => return done(Ending::NotStarted(err.to_string()), &stdout, &stderr),
    };
    let mut readers = Vec::new();
    if let Some(pipe) = spawned.stdout.take() {
        readers.push(tokio::spawn(stdout.clone().fill(pipe)));
    }
    if let Some(pipe) = spawned.stderr.take() {
        readers.push(tokio::spawn(stderr.clone().fill(pipe)));
    }
    if let Some(mut pipe) = spawned.stdin.take() {
        // A hook that does not read its input closes the pipe: not an error.
        tokio::spawn(async move {
            let _ = pipe.write_all(&stdin).await;
        });
    }

    let deadline = Instant::now() + hook.timeout;
    let stop = loop {
        tokio::select! {
            biased;
            _ = cancellation.cancelled() => break Some(Ending::Cancelled),
            _ = tokio::time::sleep_until(deadline) => break Some(Ending::TimedOut(hook.timeout)),
            status = spawned.wait() => {
                shell_awaited(pid);
                procs.shell_exited(status.as_ref().is_ok_and(|s| s.code().is_some()));
                match status {
                    Ok(status) => return finish(ending_of(status), procs, readers, &done, &stdout, &stderr).await,
                    Err(err) => break Some(Ending::NotStarted(err.to_string())),
                }
            }
            // What the hook starts is noted while the shell lives, so that
            // what it leaves behind (even a process that left the session
            // and scrubbed its environment) is still known as the hook's.
            _ = sleep(TRACK_EVERY) => procs.track(),
        }
    };
    // Timed out or cancelled: TERM, then KILL after the grace, every
    // process of the hook.
    procs.terminate();
    if timeout(KILL_GRACE, spawned.wait()).await.is_err() {
        procs.kill();
        let _ = spawned.wait().await;
    }
    shell_awaited(pid);
    let ending = stop.unwrap_or(Ending::Exited(-1));
    kill_leftovers(&mut procs).await;
    collect(readers).await;
    done(ending, &stdout, &stderr)
}

/// The shell exited: kill what it left running, then take its output.
async fn finish(
    ending: Ending,
    mut procs: CallProcesses,
    readers: Vec<tokio::task::JoinHandle<()>>,
    done: &impl Fn(Ending, &Output, &Output) -> HookRun,
    stdout: &Output,
    stderr: &Output,
) -> HookRun {
    kill_leftovers(&mut procs).await;
    collect(readers).await;
    done(ending, stdout, stderr)
}

/// TERM whatever of the hook still runs, KILL it after the grace, and
/// forget the hook's processes.
async fn kill_leftovers(procs: &mut CallProcesses) {
    let mut gone = procs.is_empty();
    if !gone {
        procs.terminate();
        let until = Instant::now() + KILL_GRACE;
        while !gone && Instant::now() < until {
            sleep(POLL).await;
            gone = procs.is_empty();
        }
        if !gone {
            procs.kill();
            let until = Instant::now() + KILL_GRACE;
            while !gone && Instant::now() < until {
                sleep(POLL).await;
                gone = procs.is_empty();
            }
        }
    }
    procs.finish(gone);
}

/// Waits for the readers to reach the end of their pipes, at most
/// [`PIPE_GRACE`].
async fn collect(readers: Vec<tokio::task::JoinHandle<()>>) {
    let deadline = Instant::now() + PIPE_GRACE;
    for reader in readers {
        let abort = reader.abort_handle();
        if tokio::time::timeout_at(deadline, reader).await.is_err() {
            abort.abort();
        }
    }
}

/// Starts the hook's shell. Confined (`sandbox`), it gets what a confined
/// `bash` command gets: the environment scrubbed of secrets and made
/// non-interactive, `TMPDIR` the sandbox's, and the sandbox's step last.
/// Unconfined, the session's whole environment, as Claude Code gives it.
fn spawn(
    hook: &CommandHook,
    project_dir: &Path,
    sandbox: Option<&Sandbox>,
) -> io::Result<(Child, i32, CallProcesses)> {
    let (id, token) = new_token();
    let mut cmd = Command::new(default_shell());
    cmd.arg("-c").arg(&hook.command).current_dir(project_dir);
    if sandbox.is_some() {
        cmd.env_clear().envs(EnvPolicy::default().build());
    }
    cmd.env("CLAUDE_PROJECT_DIR", project_dir)
        .env("AGENTCORE_PROJECT_DIR", project_dir)
        .env(CALL_MARKER, &token)
        .env_remove(crate::process::TOKEN_ENV)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    prepare_child(&mut cmd);
    // The sandbox's step comes last, as for bash: it forks the command's
    // own PID 1 after `setsid` and the subreaper setting.
    let confinement = match sandbox {
        Some(sandbox) => {
            cmd.env("TMPDIR", sandbox.tmpdir());
            Some(sandbox.confine(&mut cmd).map_err(io::Error::other)?)
        }
        None => None,
    };
    let (child, pid) = spawn_registered(|| {
        let child = match &confinement {
            Some(confinement) => confinement.spawn(&mut cmd)?,
            None => cmd.spawn()?,
        };
        let id = child.id();
        Ok((child, id))
    })?;
    let contained = confinement
        .as_ref()
        .is_some_and(crate::sandbox::Confinement::tree_dies_with_child);
    let procs = CallProcesses::new(id, CALL_MARKER, &token, pid, KILL_GRACE).contained(contained);
    Ok((child, pid, procs))
}

fn ending_of(status: ExitStatus) -> Ending {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => Ending::Exited(code),
        (None, Some(sig)) => Ending::Signaled(sig),
        (None, None) => Ending::Exited(-1),
    }
}

/// One pipe's bytes, bounded; shared so that a reader cut off by
/// [`PIPE_GRACE`] leaves what it read.
#[derive(Clone, Default)]
struct Output {
    bytes: Arc<Mutex<Vec<u8>>>,
}

impl Output {
    async fn fill(self, mut pipe: impl AsyncRead + Unpin) {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match pipe.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    let mut bytes = self.bytes.lock().unwrap_or_else(|e| e.into_inner());
                    let room = MAX_HOOK_OUTPUT.saturating_sub(bytes.len());
                    bytes.extend_from_slice(&buf[..n.min(room)]);
                }
            }
        }
    }

    fn text(&self) -> String {
        let bytes = self.bytes.lock().unwrap_or_else(|e| e.into_inner());
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook(command: &str, secs: f64) -> CommandHook {
        CommandHook {
            timeout: Duration::from_secs_f64(secs),
            ..CommandHook::new(command)
        }
    }

    #[tokio::test]
    async fn stdin_env_and_streams_reach_the_hook() {
        let dir = tempfile::tempdir().unwrap();
        let run = run(
            &hook(
                "cat; echo; echo \"$CLAUDE_PROJECT_DIR|$AGENTCORE_PROJECT_DIR|$PWD\"; echo oops >&2; exit 3",
                10.0,
            ),
            b"{\"a\":1}".to_vec(),
            dir.path(),
            &HookConfinement::None,
            &Cancellation::new(),
        )
        .await;
        let root = dir.path().display();
        assert_eq!(run.ending, Ending::Exited(3));
        assert_eq!(run.stdout, format!("{{\"a\":1}}\n{root}|{root}|{root}\n"));
        assert_eq!(run.stderr, "oops\n");
    }

    #[tokio::test]
    async fn output_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let run = run(
            &hook("head -c 3000000 /dev/zero", 20.0),
            Vec::new(),
            dir.path(),
            &HookConfinement::None,
            &Cancellation::new(),
        )
        .await;
        assert_eq!(run.ending, Ending::Exited(0));
        assert_eq!(run.stdout.len(), MAX_HOOK_OUTPUT);
    }

    #[tokio::test]
    async fn a_cancelled_hook_is_killed() {
        let dir = tempfile::tempdir().unwrap();
        let cancellation = Cancellation::new();
        let cancel = cancellation.clone();
        tokio::spawn(async move {
            sleep(Duration::from_millis(200)).await;
            cancel.cancel(agentcore_stages::CancelReason::Abort);
        });
        let run = run(
            &hook("sleep 30", 60.0),
            Vec::new(),
            dir.path(),
            &HookConfinement::None,
            &cancellation,
        )
        .await;
        assert_eq!(run.ending, Ending::Cancelled);
    }

    #[test]
    fn endings_read_as_sentences_parts() {
        assert_eq!(Ending::Exited(1).describe(), "exit 1");
        assert_eq!(
            Ending::TimedOut(Duration::from_secs(5)).describe(),
            "timed out after 5 s"
        );
        assert_eq!(
            Ending::TimedOut(Duration::from_millis(500)).describe(),
            "timed out after 0.5 s"
        );
    }
}
