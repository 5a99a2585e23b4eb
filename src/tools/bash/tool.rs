//! [`BashTool`]: its arguments ([`BashArgs`]), its metadata, what a call
//! touches ([`permissions`]), and the call itself.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use agentcore_stages::TypedTool;
use agentcore_stages::{CallContext, Extensions, InterruptBehavior, ToolError, ToolOutput};
use schemars::{JsonSchema, Schema};
use serde::Deserialize;
use serde_json::Value;

use super::jobs::{self, Jobs};
use super::output::{Collector, Shown};
use super::progress::Progress;
use super::prompt;
use super::run::{self, Ending, Sinks};
use super::spawn as process;
use super::spool::Spool;
use crate::access::{Access, Permissions};
use crate::limits::bash::{
    DEFAULT_COLS, DEFAULT_ROWS, DEFAULT_YIELD_MS, MAX_COLS, MAX_ROWS, MAX_YIELD_MS, MIN_COLS,
    MIN_ROWS,
};
use crate::limits::bash::{DEFAULT_JOB_LIFETIME, DEFAULT_MAX_JOBS, MAX_OUTPUT_CHARS};
use crate::limits::bash::{DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS};
use crate::process::child::default_shell;
use crate::process::env::EnvPolicy;
use crate::process::{OutputDir, OutputFile};
use crate::sandbox::{Sandbox, SandboxError, SandboxMode};
use crate::shell::read_only;
use crate::tools::spec::ToolSpec;
use crate::tools::text;

/// Characters of a command shown in [`TypedTool::activity`].
const ACTIVITY_CHARS: usize = 80;

/// What the model reads about the tool; the limits in it come from their
/// constants.
static DESCRIPTION: LazyLock<String> = LazyLock::new(|| {
    format!(
        "\
Runs a bash command and returns its exit code and output (stdout and stderr \
together, in the order they were written).

- Each command runs in a fresh shell at the workspace root: `cd`, exported \
variables and shell state do not persist between calls. To work in another \
directory, put `cd DIR && ...` in the same command, or use paths.
- Interactive programs get no input: stdin is empty (/dev/null) and there is \
no terminal. Use non-interactive flags (`-y`, `--no-edit`, `--yes`); pagers \
and editors are disabled.
- Only for a program that must be used interactively (a REPL, a prompt with no \
flag to answer it, a full-screen program), set `tty`: it runs in a terminal \
session, and the call returns after `yield_ms` (or as soon as the program waits \
for input) with its screen, a session id and its status; type into it with \
write_stdin, stop it with kill_shell. Everything else runs better without a \
terminal.
- `timeout` is in milliseconds: default {DEFAULT_TIMEOUT_MS} ({} minutes), at most {MAX_TIMEOUT_MS} \
({} minutes). On timeout the command and everything it started are killed and \
the output so far is returned.
- Every process the command starts is killed when the call ends (on exit, \
timeout or interruption), including processes sent to the background with \
`&` and those that detach with `setsid` or `nohup`. To keep a server, a \
watcher or a long build running, set `run_in_background`: the call returns at \
once with a job id and the first output; read more with bash_output, stop it \
with kill_shell. At most {max_jobs} background jobs run at once; each is killed \
after {job_minutes} minutes, and all when the session ends.
- Output longer than {} characters keeps its beginning and its end; the \
full output is saved: read it again with bash_output (`call_id` with `offset` \
and `limit`, or a `pattern`), as the cut result says.
- Prefer the dedicated tools for reading, searching and editing files.",
        DEFAULT_TIMEOUT_MS / MS_PER_MINUTE,
        MAX_TIMEOUT_MS / MS_PER_MINUTE,
        text::thousands(MAX_OUTPUT_CHARS),
        max_jobs = DEFAULT_MAX_JOBS,
        job_minutes = DEFAULT_JOB_LIFETIME.as_secs() / 60,
    )
});

/// The description's bullet on the sandbox: what a confined command may
/// do, and how to ask for more.
fn sandbox_bullet(sandbox: &Sandbox) -> String {
    if sandbox.mode() == SandboxMode::Off || sandbox.status().enforced() == "unconfined" {
        return String::new();
    }
    let network = if sandbox.network() {
        "the network is open".to_owned()
    } else if sandbox.network_access() == crate::sandbox::NetworkAccess::Allowlist {
        "the network reaches only the allowed names, through a proxy the environment \
         names (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY: use names, not IP addresses)"
            .to_owned()
    } else {
        "there is no network (a loopback shared by the session's commands only)".to_owned()
    };
    format!(
        "- Commands run in a sandbox: they can write only inside the workspace and \
$TMPDIR (never in existing .env files or what makes git run code: .git/config, \
hooks; git commit works), {network}, and some credential \
files appear empty. A command the sandbox refuses fails with `Permission denied`, \
`Read-only file system` or a network error. Only if a command truly needs more, \
set `dangerously_disable_sandbox` and say why in `description`: the user is asked."
    )
}

/// How long a background call waits for the job's first output.
const FIRST_OUTPUT_WAIT: Duration = Duration::from_secs(1);

const MS_PER_MINUTE: u64 = 60_000;

/// The `bash` tool's identity: its name, label, Claude Code name.
pub const SPEC: ToolSpec = ToolSpec::new("bash", "Run Command").claude_code("Bash");

/// The arguments of one `bash` call. The field docs are the descriptions
/// the model reads in the schema.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
// The tool's description says what the call does; the schema adds nothing.
#[schemars(description = "")]
pub struct BashArgs {
    /// The command to run with `bash -c`, in a fresh shell at the workspace root.
    pub command: String,
    /// Optional timeout in milliseconds (default 120000, at most 600000). The command and everything it started are killed when it fires.
    #[schemars(transform = timeout_schema)]
    pub timeout: Option<u64>,
    /// What the command does, in 5 to 10 words, shown to the person watching (e.g. "Run the unit tests").
    #[schemars(transform = not_null)]
    pub description: Option<String>,
    /// Run the command as a background job and return at once with its job id and first output (default false); for servers, watchers and long builds. Read more with bash_output, stop it with kill_shell. `timeout` does not apply.
    #[schemars(transform = not_null)]
    pub run_in_background: Option<bool>,
    /// Run outside the sandbox, with the user's full authority (default false). Only for a command the sandbox blocks (it needs the network or writes outside the workspace); always needs the user's approval, so say why in `description`.
    #[schemars(transform = not_null)]
    pub dangerously_disable_sandbox: Option<bool>,
    /// Run the command in a terminal session you can type into with write_stdin (default false); only for interactive programs (a REPL, a prompt that needs an answer, a full-screen program). Returns after `yield_ms` with the output, the session id and its status. `timeout` does not apply.
    #[schemars(transform = not_null)]
    pub tty: Option<bool>,
    /// With `tty`: milliseconds to wait for output before returning (default 1000, at most 60000); returns sooner when the program ends or waits for input.
    #[schemars(transform = yield_schema)]
    pub yield_ms: Option<u64>,
    /// With `tty`: the terminal's height in rows (default 30, from 5 to 200).
    #[schemars(transform = rows_schema)]
    pub rows: Option<u16>,
    /// With `tty`: the terminal's width in columns (default 120, from 20 to 500).
    #[schemars(transform = cols_schema)]
    pub cols: Option<u16>,
}

/// `yield_ms`: an integer from 0 to [`MAX_YIELD_MS`].
pub(crate) fn yield_schema(schema: &mut Schema) {
    bounded(schema, 0, MAX_YIELD_MS);
}

fn rows_schema(schema: &mut Schema) {
    bounded(schema, u64::from(MIN_ROWS), u64::from(MAX_ROWS));
}

fn cols_schema(schema: &mut Schema) {
    bounded(schema, u64::from(MIN_COLS), u64::from(MAX_COLS));
}

/// An optional integer from `min` to `max`, without `null` or `format`.
fn bounded(schema: &mut Schema, min: u64, max: u64) {
    not_null(schema);
    schema.remove("format");
    schema.insert("minimum".to_owned(), min.into());
    schema.insert("maximum".to_owned(), max.into());
}

/// `timeout`: an integer from 1 to [`MAX_TIMEOUT_MS`]. Absent means the
/// default; `null` is not offered, nor is the Rust type's `format`.
fn timeout_schema(schema: &mut Schema) {
    not_null(schema);
    schema.remove("format");
    schema.insert("minimum".to_owned(), 1.into());
    schema.insert("maximum".to_owned(), MAX_TIMEOUT_MS.into());
}

/// An optional member is left out, not sent as `null`: its schema names
/// only the value's own type.
fn not_null(schema: &mut Schema) {
    if let Some(Value::Array(types)) = schema.get("type") {
        let types: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        let one = match types.as_slice() {
            [one] => one.clone(),
            _ => Value::Array(types),
        };
        schema.insert("type".to_owned(), one);
    }
}

/// What a `bash` call touches, for the approval engine: its `command`,
/// run as a whole (the engine judges it part by part).
///
/// ```
/// use agentcore::access::Capability;
/// use serde_json::json;
///
/// let access = agentcore::tools::bash::permissions().describe(&json!({"command": "cargo test"}));
/// assert_eq!(access.capability, Capability::Exec);
/// assert_eq!(access.command.as_deref(), Some("cargo test"));
/// ```
pub fn permissions() -> Permissions {
    permissions_in(None)
}

/// [`permissions`] of a bash tool confined by `sandbox`: a command that
/// runs fully confined is [`Access::sandboxed`] (which the engine's
/// `auto_allow` may let run without asking), one with
/// `dangerously_disable_sandbox` under an active sandbox is
/// [`Access::outside_sandbox`] with its `description` as the reason.
pub fn permissions_in(sandbox: Option<&Sandbox>) -> Permissions {
    let active = sandbox.is_some_and(|s| s.mode() != SandboxMode::Off);
    let confining = sandbox.is_some_and(Sandbox::is_fully_confining);
    Permissions::typed(move |args: &BashArgs| {
        let mut access = Access::command(args.command.as_str());
        if args.tty == Some(true) {
            access = access.in_terminal();
        }
        if active && args.dangerously_disable_sandbox == Some(true) {
            access.outside_sandbox(args.description.clone())
        } else if confining {
            access.sandboxed()
        } else {
            access
        }
    })
}

/// How the tool's commands are confined.
#[derive(Debug, Clone)]
enum Confine {
    /// Not at all: the user's authority.
    No,
    /// By this sandbox.
    By(Sandbox),
    /// The sandbox cannot be built here: every command is refused with
    /// this message.
    Unavailable(Arc<str>),
}

/// The `bash` tool: runs a command in a fresh shell at the workspace root,
/// in its own session and process group, with a timeout, bounded output and
/// no processes left behind: every process the command started, also one
/// that moved to a group or session of its own, is killed when the call
/// ends (see the [module docs](super) for how they are found and what
/// [`adopt_orphans`](crate::process::adopt_orphans) adds).
///
/// The environment is scrubbed of secrets (see [`BashTool::allow_env`]),
/// and constructing the tool makes this process non-dumpable
/// ([`make_undumpable`](crate::process::make_undumpable)), so that a command cannot
/// read the unscrubbed environment back from `/proc/PPID/environ`.
///
/// A [`TypedTool`]; the kernel holds it as [`TypedTool::into_dyn`] makes
/// it.
///
/// ```no_run
/// use std::sync::Arc;
/// use agentcore::tools::bash::BashTool;
/// use agentcore::process::OutputDir;
/// use agentcore::TypedTool;
///
/// let output_dir = Arc::new(OutputDir::new()?);
/// let bash = BashTool::new("/path/to/workspace".into(), output_dir.clone())
///     .allow_env(["GITHUB_TOKEN"])
///     .into_dyn();
/// // Let `read` open `output_dir.path()` too.
/// # let _ = bash;
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct BashTool {
    root: PathBuf,
    output_dir: Arc<OutputDir>,
    shell: PathBuf,
    env: EnvPolicy,
    jobs: Arc<Jobs>,
    confine: Confine,
    /// [`DESCRIPTION`], with what the sandbox does when there is one.
    description: String,
}

impl BashTool {
    /// Where the allow list's refusal log stands, to show a command what
    /// was refused while it ran.
    #[cfg(feature = "sandbox")]
    fn proxy_mark(&self) -> Option<crate::sandbox::proxy::RefusalMark> {
        self.sandbox_in_use()
            .and_then(Sandbox::proxy)
            .map(crate::sandbox::proxy::Proxy::mark)
    }

    #[cfg(not(feature = "sandbox"))]
    fn proxy_mark(&self) -> Option<()> {
        None
    }

    /// The refusals since `mark`, one line each, at most
    /// [`MAX_REFUSAL_LINES`] and a count of the rest.
    #[cfg(feature = "sandbox")]
    fn proxy_refusals(&self, mark: Option<crate::sandbox::proxy::RefusalMark>) -> Vec<String> {
        let (Some(mark), Some(proxy)) = (mark, self.sandbox_in_use().and_then(Sandbox::proxy))
        else {
            return Vec::new();
        };
        let mut lines: Vec<String> = Vec::new();
        let mut more = 0usize;
        for refusal in proxy.refusals_since(mark) {
            let line = refusal.to_string();
            if lines.contains(&line) {
                continue;
            }
            if lines.len() < MAX_REFUSAL_LINES {
                lines.push(line);
            } else {
                more += 1;
            }
        }
        if more > 0 {
            lines.push(format!("(sandboxed: {more} more connections refused)"));
        }
        lines
    }

    #[cfg(not(feature = "sandbox"))]
    fn proxy_refusals(&self, _mark: Option<()>) -> Vec<String> {
        Vec::new()
    }

    /// A bash tool running commands in `root`, keeping full outputs in
    /// `output_dir`. The environment is inherited from this process, made
    /// non-interactive and scrubbed of secrets, and gets git's protected
    /// setting `safe.bareRepository=explicit` (through `GIT_CONFIG_COUNT`,
    /// after any pairs already set).
    ///
    /// The first call in a process makes the process non-dumpable
    /// (`PR_SET_DUMPABLE` 0, Linux): no debugger attaches to it and no core
    /// dump is written, unless by a process with `CAP_SYS_PTRACE`.
    ///
    /// **Unconfined** until [`sandbox`](Self::sandbox) is given: commands
    /// run with this process's rights (`root` is only their working
    /// directory). [`session::builtin_registry`](crate::session::builtin_registry)
    /// and a [`Session`](crate::session::Session) confine it for you.
    pub fn new(root: PathBuf, output_dir: Arc<OutputDir>) -> Self {
        #[cfg(target_os = "linux")]
        crate::process::tracking::make_undumpable_once();
        Self {
            root,
            output_dir,
            shell: default_shell(),
            env: EnvPolicy::default(),
            jobs: Arc::new(Jobs::default()),
            confine: Confine::No,
            description: DESCRIPTION.clone(),
        }
    }

    /// Runs every command, foreground and background, confined by
    /// `sandbox` ([`Sandbox::confine`]), with `TMPDIR` its temporary
    /// directory. A call with `dangerously_disable_sandbox` (which the
    /// approval engine always asks about) runs unconfined.
    pub fn sandbox(mut self, sandbox: Sandbox) -> Self {
        let bullet = sandbox_bullet(&sandbox);
        self.description = if bullet.is_empty() {
            DESCRIPTION.clone()
        } else {
            format!("{}\n{bullet}", *DESCRIPTION)
        };
        self.confine = Confine::By(sandbox);
        self
    }

    /// Refuses every command because the sandbox could not be built
    /// (failing closed rather than running unconfined): one that is
    /// required and misses a feature on this machine, e.g. `The command
    /// was not run: the sandbox is required, but Landlock is not available
    /// (kernel without CONFIG_SECURITY_LANDLOCK). …`, or one whose setup
    /// failed (a writable root that cannot be read, no temporary
    /// directory).
    pub fn sandbox_unavailable(mut self, error: &SandboxError) -> Self {
        let message = match error {
            SandboxError::Unavailable { .. } => format!(
                "The command was not run: the sandbox is required, but {error}. Run it on a machine that has this feature, or ask the user to set `[sandbox] mode = \"auto\"` in the policy."
            ),
            _ => format!(
                "The command was not run: the sandbox could not be set up ({error}). Ask the user to run `agentcore sandbox check` and fix the policy's `[sandbox]` table, or to set `mode = \"off\"` there to run commands unconfined."
            ),
        };
        self.confine = Confine::Unavailable(message.into());
        self
    }

    /// The sandbox confining the commands, if any.
    pub fn sandbox_in_use(&self) -> Option<&Sandbox> {
        match &self.confine {
            Confine::By(sandbox) => Some(sandbox),
            _ => None,
        }
    }

    /// Lets these variables through although they look like secrets (exact
    /// names; adds to earlier calls). Scrubbed by default: names containing
    /// `KEY`, `TOKEN`, `SECRET`, `PASSWORD`, `PASSWD`, `CREDENTIAL`,
    /// `PRIVATE`, `COOKIE`, `SESSION` or `AUTH` (but not as part of
    /// `AUTHOR`), names ending in `PAT`, `PWD` (but not `PWD` and `OLDPWD`)
    /// or `DSN`, case ignored, and any variable whose value holds a URL
    /// with a password (`scheme://user:pass@host`).
    pub fn allow_env<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.env.allowed.extend(names.into_iter().map(Into::into));
        self
    }

    /// Starts commands from these variables instead of this process's
    /// environment (still made non-interactive and scrubbed).
    pub fn base_env<I, K, V>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<OsString>,
        V: Into<OsString>,
    {
        self.env.base = Some(
            vars.into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        );
        self
    }

    /// Runs commands with this shell (`SHELL -c COMMAND`) instead of
    /// `/bin/bash` (or `/bin/sh` where there is no bash).
    pub fn shell(mut self, shell: impl Into<PathBuf>) -> Self {
        self.shell = shell.into();
        self
    }

    /// Starts background jobs in `jobs` (shared with `bash_output` and
    /// `kill_shell`) instead of a table of this tool's own.
    pub fn jobs(mut self, jobs: Arc<Jobs>) -> Self {
        self.jobs = jobs;
        self
    }

    /// The background jobs this tool starts.
    pub fn job_table(&self) -> &Arc<Jobs> {
        &self.jobs
    }

    /// The workspace root, where every command starts.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The folder holding full outputs.
    pub fn output_dir(&self) -> &Arc<OutputDir> {
        &self.output_dir
    }

    /// The names allowed through the secret scrub.
    pub fn allowed_env(&self) -> &BTreeSet<OsString> {
        &self.env.allowed
    }

    async fn run(&self, args: BashArgs, cx: &CallContext) -> Result<ToolOutput, ToolError> {
        // The schema bounds it; a caller that skips the schema is refused
        // here, before anything runs.
        let timeout_ms = args.timeout.unwrap_or(DEFAULT_TIMEOUT_MS);
        if timeout_ms == 0 || timeout_ms > MAX_TIMEOUT_MS {
            return Err(ToolError::new(format!(
                "timeout must be between 1 and {MAX_TIMEOUT_MS} ms; got {timeout_ms}."
            )));
        }
        if let Confine::Unavailable(message) = &self.confine {
            return Err(ToolError::new(message.to_string()));
        }
        if args.tty == Some(true) {
            return self.run_in_terminal(args, cx).await;
        }
        if args.run_in_background == Some(true) {
            return self.run_in_background(args, cx).await;
        }
        let unconfined = args.dangerously_disable_sandbox == Some(true);
        let proxy_mark = self.proxy_mark();
        let index_mark = self
            .sandbox_in_use()
            .filter(|_| !unconfined)
            .map(Sandbox::index_mark);
        let Started {
            spawned,
            file,
            file_error,
            ..
        } = self
            .start(
                &args.command,
                &format!("bash-{}", cx.call_id()),
                unconfined,
                None,
            )
            .map_err(ToolError::new)?;
        let sandboxed = spawned.sandboxed;
        let confinement = spawned.confinement();
        let mut sinks = Sinks {
            collector: Collector::default(),
            file,
            progress: Some(Progress::new(cx.progress())),
            live: None,
            #[cfg(target_os = "linux")]
            terminal: None,
        };
        let ending = run::run(spawned, timeout_ms, cx.cancellation(), &mut sinks).await;
        let (file, file_error) = match sinks.file.take() {
            Some(spool) => match spool.finish().await {
                Some(file) => (Some(file), None),
                None => (None, Some("the writer stopped".to_owned())),
            },
            None => (None, file_error),
        };
        let mut text = render(ending, &sinks.collector, file, file_error, cx.call_id());
        let limit = process::limit_line(confinement.as_ref(), ending);
        drop(confinement);
        if sandboxed
            && limit.is_none()
            && let Some(sandbox) = self.sandbox_in_use()
            && refused_by_sandbox(ending, &sinks.collector)
        {
            text.push('\n');
            text.push_str(&sandbox_note(sandbox));
        }
        if sandboxed {
            // What the proxies refused while it ran (a command beside it
            // may have caused some: the session's commands share them).
            for line in self.proxy_refusals(proxy_mark) {
                text.push('\n');
                text.push_str(&line);
            }
            if let (Some(sandbox), Some(mark)) = (self.sandbox_in_use(), &index_mark) {
                for git in sandbox.new_linked_repositories(mark) {
                    text.push('\n');
                    text.push_str(&Sandbox::linked_repository_warning(&git));
                }
            }
        }
        if let Ending::TimedOut(_) = ending
            && let Some(line) = prompt::waiting_line(&sinks.collector)
        {
            text.push('\n');
            text.push_str(&prompt::notice(&line));
        }
        // A command the sandbox killed at a limit failed, as one the
        // timeout ended did: the model should not read its output as done.
        let killed_at_limit = limit.is_some();
        if let Some(limit) = limit {
            text.push('\n');
            text.push_str(&limit);
        }
        match ending {
            Ending::Exited(_) | Ending::Signaled(_) if killed_at_limit => Err(ToolError::new(text)),
            Ending::Exited(_) | Ending::Signaled(_) => Ok(ToolOutput::text(text)),
            Ending::TimedOut(_) => Err(ToolError::new(text)),
            Ending::Interrupted => Err(ToolError::cancelled(ToolOutput::text(text).content)),
        }
    }
}

impl BashTool {
    /// Starts `command` (the one spawn path of foreground commands and
    /// background jobs) and the file its full output goes to, named after
    /// `stem`; a file that cannot be made is reported, not fatal.
    fn start(
        &self,
        command: &str,
        stem: &str,
        unconfined: bool,
        terminal: Option<(u16, u16)>,
    ) -> Result<Started, String> {
        let env = self.env.build();
        let sandbox = self.sandbox_in_use().filter(|_| !unconfined);
        #[cfg(target_os = "linux")]
        let terminal = terminal.map(|(rows, cols)| crate::process::pty::size(rows, cols));
        #[cfg(not(target_os = "linux"))]
        let terminal = terminal.map(|_| ());
        let spawned = process::spawn(&self.shell, command, &self.root, &env, sandbox, terminal)
            .map_err(|e| {
                format!(
                    "Could not start {} in {}: {e}",
                    self.shell.display(),
                    self.root.display()
                )
            })?;
        if !spawned.sandboxed {
            self.output_dir.register_unconfined(spawned.pid);
        }
        let (file, path, file_error) = match self.output_dir.create(stem) {
            Ok(file) => {
                let path = file.path().to_owned();
                (Some(Spool::start(file)), Some(path), None)
            }
            Err(e) => (None, None, Some(e.to_string())),
        };
        Ok(Started {
            spawned,
            file,
            path,
            file_error,
        })
    }

    /// Starts `args.command` as a background job and returns its id and
    /// what it printed in about the first second.
    async fn run_in_background(
        &self,
        args: BashArgs,
        cx: &CallContext,
    ) -> Result<ToolOutput, ToolError> {
        let job = self
            .jobs
            .start(&args.command, None, || {
                let stem = format!("job-{}", cx.call_id());
                let unconfined = args.dangerously_disable_sandbox == Some(true);
                let started = self.start(&args.command, &stem, unconfined, None)?;
                Ok((started.spawned, started.file, started.path))
            })
            .map_err(ToolError::new)?;
        // Steering and abort end this wait, not the job: it outlives the call.
        job.settle(FIRST_OUTPUT_WAIT, cx.cancellation()).await;
        let id = job.id();
        let mut text = format!("Started background job {id}: {}\n", args.command.trim());
        text.push_str(&jobs::first_output(&job));
        text.push_str(&format!(
            "Read more with bash_output {{\"job_id\": \"{id}\"}}; stop it with kill_shell."
        ));
        Ok(ToolOutput::text(text))
    }
}

impl BashTool {
    /// Starts `args.command` in a terminal session (a job with a
    /// terminal) and returns what it printed within `yield_ms`, its id and
    /// its status.
    async fn run_in_terminal(
        &self,
        args: BashArgs,
        cx: &CallContext,
    ) -> Result<ToolOutput, ToolError> {
        let wait = yield_of(args.yield_ms)?;
        let rows = args.rows.unwrap_or(DEFAULT_ROWS);
        let cols = args.cols.unwrap_or(DEFAULT_COLS);
        if !(MIN_ROWS..=MAX_ROWS).contains(&rows) || !(MIN_COLS..=MAX_COLS).contains(&cols) {
            return Err(ToolError::new(format!(
                "rows must be from {MIN_ROWS} to {MAX_ROWS} and cols from {MIN_COLS} to {MAX_COLS}; got {rows} × {cols}."
            )));
        }
        if !cfg!(target_os = "linux") {
            return Err(ToolError::new(
                "Terminal sessions are supported on Linux only: run the command without tty.",
            ));
        }
        let job = self
            .jobs
            .start(&args.command, Some((rows, cols)), || {
                let stem = format!("tty-{}", cx.call_id());
                let unconfined = args.dangerously_disable_sandbox == Some(true);
                let started = self.start(&args.command, &stem, unconfined, Some((rows, cols)))?;
                Ok((started.spawned, started.file, started.path))
            })
            .map_err(ToolError::new)?;
        #[cfg(target_os = "linux")]
        job.settle_terminal(wait, cx.cancellation()).await;
        #[cfg(not(target_os = "linux"))]
        let _ = wait;
        let id = job.id();
        let mut text = format!(
            "Started terminal session {id} ({rows} rows × {cols} columns): {}\n",
            args.command.trim()
        );
        text.push_str(&job.read(None));
        if job.running() {
            text.push_str(&format!(
                "\nType into it with write_stdin {{\"session_id\": \"{id}\", \"text\": \"...\\n\"}}; stop it with kill_shell."
            ));
        }
        Ok(ToolOutput::text(text))
    }
}

/// The wait a call gives in `yield_ms` (default [`DEFAULT_YIELD_MS`]),
/// refused past [`MAX_YIELD_MS`].
pub(crate) fn yield_of(yield_ms: Option<u64>) -> Result<Duration, ToolError> {
    let ms = yield_ms.unwrap_or(DEFAULT_YIELD_MS);
    if ms > MAX_YIELD_MS {
        return Err(ToolError::new(format!(
            "yield_ms must be at most {MAX_YIELD_MS}; got {ms}. Call write_stdin with empty text to wait longer."
        )));
    }
    Ok(Duration::from_millis(ms))
}

/// A command just started, and the file its full output goes to.
struct Started {
    spawned: process::Spawned,
    file: Option<Spool>,
    path: Option<PathBuf>,
    file_error: Option<String>,
}

/// The result text: status line, truncation notice when cut (with how to
/// read the saved output of call `call_id` again), output.
fn render(
    ending: Ending,
    collector: &Collector,
    file: Option<OutputFile>,
    file_error: Option<String>,
    call_id: &str,
) -> String {
    let Shown {
        head,
        tail,
        omitted,
    } = collector.shown();
    let mut text = ending.status_line();
    match (omitted, file) {
        (None, file) => {
            if let Some(file) = file {
                file.discard();
            }
        }
        (Some(omitted), file) => {
            let full = match &file {
                Some(f) if f.is_cut() => format!(
                    "{} (only its first {} bytes: the output folder is full)",
                    f.path().display(),
                    f.written()
                ),
                Some(f) => f.path().display().to_string(),
                None => format!(
                    "not saved ({})",
                    file_error.as_deref().unwrap_or("no output folder")
                ),
            };
            text.push_str(&format!(
                "\n[Output truncated: {} lines ({} bytes) omitted from the middle. Full output: {full}]",
                omitted.lines, omitted.bytes
            ));
            if let Some(file) = file {
                text.push('\n');
                text.push_str(&super::kept::read_again_hint("call_id", call_id));
                file.keep();
            }
        }
    }
    if !head.is_empty() || !tail.is_empty() {
        text.push('\n');
        text.push_str(&head);
        if !tail.is_empty() {
            if !head.is_empty() && !head.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&tail);
        }
    }
    text
}

/// What the shell or a program prints when the sandbox refused it.
const REFUSALS: &[&str] = &[
    "Permission denied",
    "Read-only file system",
    "Operation not permitted",
    "Network is unreachable",
    "Connection refused",
    "Address family not supported",
    "Temporary failure in name resolution",
    "Could not resolve host",
    "Name or service not known",
    "EACCES",
    "EROFS",
    "EPERM",
    "ENETUNREACH",
];

/// Whether a confined command failed, with output that reads like a
/// refusal of the sandbox (a failure with other output, a failing test,
/// gets no note: it would send the model looking for the wrong cause).
fn refused_by_sandbox(ending: Ending, collector: &Collector) -> bool {
    if matches!(ending, Ending::Exited(0) | Ending::Interrupted) {
        return false;
    }
    let Shown { head, tail, .. } = collector.shown();
    REFUSALS
        .iter()
        .any(|refusal| head.contains(refusal) || tail.contains(refusal))
}

/// Most refusals of the proxies shown after a command's output.
#[cfg(feature = "sandbox")]
const MAX_REFUSAL_LINES: usize = 10;

/// `(sandboxed: writes outside ROOTS and network are blocked)`: the last
/// line of a confined command that failed as if refused.
fn sandbox_note(sandbox: &Sandbox) -> String {
    let mut writable: Vec<String> = sandbox
        .writable()
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    writable.push("$TMPDIR".to_owned());
    let network = if sandbox.network() {
        ""
    } else if sandbox.network_access() == crate::sandbox::NetworkAccess::Allowlist {
        " and connections to names not in allow_domains"
    } else {
        " and network"
    };
    format!(
        "(sandboxed: writes outside {}{network} are blocked)",
        writable.join(", ")
    )
}

/// `Running: COMMAND`, cut to its first line and [`ACTIVITY_CHARS`].
fn activity(command: &str) -> String {
    let command = command.trim();
    let first = command.lines().next().unwrap_or_default();
    let mut shown: String = first.chars().take(ACTIVITY_CHARS).collect();
    if shown.len() < command.len() {
        shown.push('…');
    }
    format!("Running: {shown}")
}

impl TypedTool for BashTool {
    type Args = BashArgs;

    fn name(&self) -> &str {
        SPEC.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    async fn execute(&self, args: BashArgs, cx: &CallContext) -> Result<ToolOutput, ToolError> {
        self.run(args, cx).await
    }

    fn label(&self) -> Option<&str> {
        Some(SPEC.label)
    }

    fn read_only(&self, _args: &BashArgs) -> bool {
        false
    }

    /// A command whose every part only reads (`ls`, `cat`, `grep`, `git
    /// status`, …, with no redirection to a file; see `read_only`) runs
    /// side by side with other safe calls; anything else, and a background
    /// start, runs alone.
    fn concurrency_safe(&self, args: &BashArgs) -> Option<bool> {
        Some(
            args.run_in_background != Some(true)
                && args.tty != Some(true)
                && read_only::is_read_only(&args.command),
        )
    }

    fn activity(&self, args: &BashArgs) -> Option<String> {
        Some(activity(&args.command))
    }

    fn interrupt_behavior(&self, _args: &BashArgs) -> InterruptBehavior {
        InterruptBehavior::Cancel
    }

    fn observes_cancellation(&self) -> bool {
        true
    }

    fn extensions(&self) -> Extensions {
        permissions_in(self.sandbox_in_use()).into_extensions()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    use agentcore_stages::Typed;
    use agentcore_stages::{CancelReason, EventSink, GatedArgs, Tool};
    use serde_json::json;

    /// The tool as the kernel holds it, arguments as JSON.
    fn tool() -> (Typed<BashTool>, tempfile::TempDir) {
        let root = tempfile::tempdir().unwrap();
        let dir = Arc::new(OutputDir::new().unwrap());
        (Typed::new(BashTool::new(root.path().to_owned(), dir)), root)
    }

    /// Runs one call of `bash` with `args`.
    async fn run(
        bash: &Typed<BashTool>,
        cx: &CallContext,
        args: Value,
    ) -> Result<ToolOutput, ToolError> {
        bash.execute(GatedArgs::for_test(args), cx).await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn exits_are_output_and_timeouts_are_errors() {
        let (bash, _root) = tool();
        let cx = CallContext::for_test("u", EventSink::noop());
        let out = run(&bash, &cx, json!({"command": "echo hi; exit 4"}))
            .await
            .unwrap();
        assert_eq!(out, ToolOutput::text("Exit code: 4\nhi\n"));
        let err = run(
            &bash,
            &cx,
            json!({"command": "echo a; sleep 30", "timeout": 200}),
        )
        .await
        .unwrap_err();
        assert!(!err.cancelled);
        assert_eq!(err, ToolError::new("Timed out after 200 ms\na\n"));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn cancellation_returns_a_cancelled_error_with_the_output() {
        let (bash, _root) = tool();
        let cx = CallContext::for_test("u", EventSink::noop());
        let cancel = cx.cancellation().clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            cancel.cancel(CancelReason::Skip);
        });
        let err = run(&bash, &cx, json!({"command": "echo a; sleep 30"}))
            .await
            .unwrap_err();
        assert!(err.cancelled);
        assert_eq!(err.content, ToolOutput::text("Interrupted\na\n").content);
    }

    #[tokio::test]
    async fn out_of_range_timeouts_are_refused_without_running() {
        let (bash, root) = tool();
        let cx = CallContext::for_test("u", EventSink::noop());
        for timeout in [0, MAX_TIMEOUT_MS + 1] {
            let args = json!({"command": "touch ran", "timeout": timeout});
            let err = bash
                .execute(GatedArgs::for_test(args), &cx)
                .await
                .unwrap_err();
            assert!(!err.cancelled);
        }
        assert!(!root.path().join("ran").exists());
    }

    #[test]
    fn a_call_runs_its_command() {
        let (bash, _root) = tool();
        let args = json!({"command": "cargo test && git status", "timeout": 5000});
        assert_eq!(
            Permissions::of(&bash, &args),
            Access::command("cargo test && git status")
        );
        // Not a bash call's arguments: the engine knows nothing and asks.
        assert_eq!(
            Permissions::of(&bash, &json!({"command": ["ls"]})),
            Access::unknown()
        );
    }

    #[tokio::test]
    async fn a_sandbox_that_could_not_be_set_up_refuses_every_command() {
        let root = tempfile::tempdir().unwrap();
        let dir = Arc::new(OutputDir::new().unwrap());
        let error = SandboxError::Io(std::io::Error::other("no space left"));
        let bash =
            Typed::new(BashTool::new(root.path().to_owned(), dir).sandbox_unavailable(&error));
        let cx = CallContext::for_test("u", EventSink::noop());
        for background in [false, true] {
            let args = json!({"command": "touch ran", "run_in_background": background});
            let err = run(&bash, &cx, args).await.unwrap_err();
            assert_eq!(
                err,
                ToolError::new(
                    "The command was not run: the sandbox could not be set up (no space left). Ask the user to run `agentcore sandbox check` and fix the policy's `[sandbox]` table, or to set `mode = \"off\"` there to run commands unconfined."
                )
            );
        }
        assert!(!root.path().join("ran").exists());
    }

    #[test]
    fn activity_is_one_line() {
        assert_eq!(activity("cargo test"), "Running: cargo test");
        assert_eq!(activity("echo a\necho b"), "Running: echo a…");
        let long = "x".repeat(200);
        assert_eq!(
            activity(&long).chars().count(),
            "Running: ".len() + ACTIVITY_CHARS + 1
        );
    }

    #[test]
    fn schema_is_strict_and_described() {
        let (bash, _root) = tool();
        let s = bash.schema();
        assert_eq!(s["additionalProperties"], false);
        assert_eq!(s["required"], json!(["command"]));
        assert_eq!(s["properties"]["timeout"]["maximum"], 600_000);
        for (_, p) in s["properties"].as_object().unwrap() {
            assert!(p["description"].as_str().is_some_and(|d| !d.is_empty()));
        }
    }

    #[test]
    fn description_promises_that_every_process_is_killed() {
        // Kept true by `procs` (tests/attack_bash_processes.rs).
        assert!(
            DESCRIPTION.contains("Every process the command starts is killed when the call ends")
        );
        assert!(DESCRIPTION.contains("`setsid`"));
    }

    #[test]
    fn the_texts_give_the_limits_of_the_constants() {
        assert_eq!(text::thousands(30_000), "30,000");
        assert_eq!(text::thousands(999), "999");
        assert_eq!(text::thousands(1_234_567), "1,234,567");
        assert!(DESCRIPTION.contains("default 120000 (2 minutes), at most 600000 (10 minutes)"));
        // The schema's text is the field's doc comment, which cannot name
        // the constants: it is held to them here.
        let (bash, _root) = tool();
        let timeout = bash.schema()["properties"]["timeout"]["description"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(timeout.contains(&format!(
            "(default {DEFAULT_TIMEOUT_MS}, at most {MAX_TIMEOUT_MS})"
        )));
    }

    #[test]
    fn description_warns_about_cd_and_input() {
        assert!(DESCRIPTION.contains("`cd`"));
        assert!(DESCRIPTION.contains("do not persist"));
        assert!(DESCRIPTION.contains("Interactive programs get no input"));
        assert!(DESCRIPTION.contains("set `tty`"));
    }
}
