//! Claude Code command hooks, run unchanged, as parts of the pipeline.
//!
//! Teams keep guard and formatter scripts as Claude Code hooks
//! (`.claude/settings.json`). agentcore runs them where Claude Code does:
//!
//! - **PreToolUse** in the gate, before the approval engine
//!   ([`PreToolUseGate`]): exit 2 or `"permissionDecision": "deny"` denies
//!   the call with the hook's reason; `"ask"` makes the call ask (a deny
//!   when no one can be asked); `"allow"` skips an ask of the mode or of an
//!   ask rule, but not deny rules, plan mode, protected paths (deny wins)
//!   or a command's request to run outside the sandbox (only the policy's
//!   `allow_unsandboxed` or the person allows that); `updatedInput` rewrites the arguments, which go through coerce,
//!   validate and preview again and are judged by the engine as rewritten.
//! - **PostToolUse** (after a success) and **PostToolUseFailure** (after
//!   the tool failed) as a tower layer at the insertion point after Execute
//!   ([`PostToolUseLayer`]): `"decision": "block"` or exit 2 turns the
//!   result into an error the model reads, saying the tool already ran
//!   (`Denied`, so the breaker does not count it); `additionalContext` is
//!   appended to the result as a text block.
//!
//! Each hook is a process run like a bash command (`bash -c COMMAND` at
//! the workspace root): the call on stdin as JSON (`session_id`, `cwd`,
//! `hook_event_name`, `permission_mode`, `tool_name`, `tool_input`,
//! `tool_use_id`, and `tool_response` or `error`), `CLAUDE_PROJECT_DIR`
//! and `AGENTCORE_PROJECT_DIR` set to the workspace root, a process group
//! of its own killed at its timeout, output bounded. Matching hooks of one
//! event run side by side. Tool names are Claude Code's
//! ([`claude_tool_name`]), file paths in `tool_input` absolute.
//!
//! The hooks' own files are guarded: hooks run outside any sandbox with
//! the session's environment, so a call that writes into the workspace's
//! `.claude/` folder or to a file a hook command names asks (a deny when no
//! one can be asked), even where a hook or the mode allows it; not in
//! bypass mode, where protected paths do not ask either.
//!
//! A PostToolUse hook that changes a file (a formatter) does not refresh
//! the read-before-write ledger: the model saw its own write, not the
//! hook's, so its next `edit` or `write` of that file is refused with code
//! 3 until it reads the file again, rather than working from text that is
//! no longer there.
//!
//! A hook that fails (an exit other than 0 and 2, a signal, a timeout,
//! JSON that does not parse) is a non-blocking error, as in Claude Code,
//! unless it says `"onFailure": "block"` or the configuration has
//! `fail_closed`: then it blocks, and the result says
//! `PreToolUse hook "CMD" failed (exit 1); blocking as configured.`
//!
//! Every hook that ran shows as a `ToolExecUpdate{kind: hook}` of its call
//! with the event, the command, its exit code, its duration and its effect.
//!
//! Where the configuration comes from: [`HookConfig`] (the `hooks` section
//! of a Claude Code settings file, or the policy's `[hooks]` table);
//! [`SessionConfig::hooks`](crate::session::SessionConfig::hooks) wires it
//! into a session, `--hooks FILE` into `agentcore run` and `agentcore mcp`.
//!
//! ```no_run
//! use std::sync::Arc;
//! use agentcore::approval::ApprovalEngine;
//! use agentcore::hooks::{HookConfig, HookRunner, PostToolUseLayer, PreToolUseGate};
//! use agentcore::{Pipeline, ToolRegistry};
//! use tower::ServiceBuilder;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let root = std::env::current_dir()?;
//! let hooks = HookConfig::load_settings(".claude/settings.json")?;
//! let engine = ApprovalEngine::new(&root);
//! let runner = HookRunner::new(hooks, &root).with_approval(&engine);
//! let pipeline = Pipeline::builder()
//!     .registry(Arc::new(ToolRegistry::new()))
//!     .gate(Arc::new(PreToolUseGate::new(runner.clone(), engine)))
//!     .build();
//! let service = pipeline.service_with(ServiceBuilder::new().layer(PostToolUseLayer::new(runner)));
//! # let _ = service; Ok(()) }
//! ```

mod config;
mod input;
mod post;
mod pre;
mod protect;
mod reply;
mod run;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agentcore_stages::CallContext;
use futures::future::join_all;
use serde_json::{Map, Value};

pub use config::{
    CommandHook, HookConfig, HookConfigError, HookEntry, HookEvent, Matcher, MatcherGroup,
    OnFailure,
};
pub use input::{claude_tool_name, tool_input};
pub use post::{PostToolUse, PostToolUseLayer};
pub use pre::PreToolUseGate;
pub use reply::HookReport;

use crate::approval::ApprovalEngine;
use crate::sandbox::{Sandbox, SandboxError, SandboxMode};
use input::HookInput;
use reply::Reply;
use run::HookRun;

/// Runs the configured hooks of a session: the configuration, the
/// workspace root (the hooks' working directory and
/// `CLAUDE_PROJECT_DIR`), the session id the hooks see, and where the
/// permission mode is read. Clones share all of it.
#[derive(Clone, Debug)]
pub struct HookRunner {
    inner: Arc<RunnerInner>,
}

#[derive(Clone, Debug)]
struct RunnerInner {
    config: HookConfig,
    root: PathBuf,
    session_id: String,
    approval: Option<ApprovalEngine>,
    files: protect::HookFiles,
    confine: HookConfinement,
}

/// Where hooks that are not `"unconfined": true` run.
#[derive(Clone, Debug, Default)]
pub(crate) enum HookConfinement {
    /// The session has no sandbox (`mode = "off"`, or a library runner
    /// given none): every hook runs with the user's authority.
    #[default]
    None,
    /// Inside this sandbox, as a confined `bash` command.
    By(Sandbox),
    /// The sandbox is required but cannot be built here: such a hook is
    /// not run, and its call is blocked; the sentence says why.
    Unavailable(String),
}

impl HookRunner {
    /// What commands must not change, since a hook may run unconfined
    /// (`"unconfined": true`, or a session without a sandbox): the
    /// workspace's `.claude` folder and the scripts the hook commands name
    /// (the sandbox makes those that exist read-only).
    pub fn protected_paths(&self) -> Vec<PathBuf> {
        self.inner.files.paths().cloned().collect()
    }

    /// Runs the hooks of `config` for a workspace at `root`, with a fresh
    /// session id.
    pub fn new(config: HookConfig, root: impl AsRef<Path>) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let files = protect::HookFiles::new(&config, root.as_ref());
        Self {
            inner: Arc::new(RunnerInner {
                files,
                config,
                root: root.as_ref().to_path_buf(),
                session_id: format!("agentcore-{}-{nanos:x}", std::process::id()),
                approval: None,
                confine: HookConfinement::None,
            }),
        }
    }

    /// Tells hooks this `session_id`.
    pub fn with_session_id(mut self, id: impl Into<String>) -> Self {
        Arc::make_mut(&mut self.inner).session_id = id.into();
        self
    }

    /// Reads `permission_mode` from `engine` at each call (default:
    /// `"default"`).
    pub fn with_approval(mut self, engine: &ApprovalEngine) -> Self {
        Arc::make_mut(&mut self.inner).approval = Some(engine.clone());
        self
    }

    /// Runs every hook that is not `"unconfined": true` inside `sandbox`,
    /// as a confined `bash` command runs: writes only under its writable
    /// roots (never its protected paths: `.git`, `.env*`, `.claude/` and
    /// the hook scripts in a session), its hidden paths unseen, network
    /// only as it allows, the environment scrubbed of secrets, and
    /// `TMPDIR` its own. A sandbox of mode `off` changes nothing.
    ///
    /// A [`Session`](crate::session::Session) gives its runner the
    /// session's sandbox.
    pub fn with_sandbox(mut self, sandbox: Sandbox) -> Self {
        Arc::make_mut(&mut self.inner).confine = if sandbox.mode() == SandboxMode::Off {
            HookConfinement::None
        } else {
            HookConfinement::By(sandbox)
        };
        self
    }

    /// The sandbox is required but could not be built (`error`): hooks that
    /// are not `"unconfined": true` are not run, and block their call with
    /// a result saying why, rather than running unconfined.
    pub fn with_sandbox_unavailable(mut self, error: &SandboxError) -> Self {
        Arc::make_mut(&mut self.inner).confine = HookConfinement::Unavailable(format!(
            "the hook runs confined by the session's sandbox, which cannot be set up here ({error}); it was not run and the call is blocked. Ask the user to fix the policy's [sandbox] table (see `agentcore sandbox check`), or to mark the hook \"unconfined\": true if it may run with the user's full authority."
        ));
        self
    }

    /// The sandbox hooks run in, when they run confined.
    pub fn sandbox(&self) -> Option<&Sandbox> {
        match &self.inner.confine {
            HookConfinement::By(sandbox) => Some(sandbox),
            _ => None,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &HookConfig {
        &self.inner.config
    }

    /// The workspace root.
    pub fn root(&self) -> &Path {
        &self.inner.root
    }

    /// The session id hooks see.
    pub fn session_id(&self) -> &str {
        &self.inner.session_id
    }

    /// Runs the hooks of `event` that match `tool`, side by side; each
    /// gets the call (with `extra` fields) on stdin. Returns each run and
    /// what it said, in the order configured.
    pub(crate) async fn run(
        &self,
        event: HookEvent,
        call_id: &str,
        tool: &str,
        tool_input: &Value,
        extra: Map<String, Value>,
        cx: &CallContext,
    ) -> Vec<(HookRun, Reply)> {
        let hooks = self.inner.config.matching(event, &claude_tool_name(tool));
        if hooks.is_empty() {
            return Vec::new();
        }
        let mode = self
            .inner
            .approval
            .as_ref()
            .map_or("default", |engine| input::permission_mode(engine.mode()));
        let stdin = HookInput {
            session_id: &self.inner.session_id,
            cwd: &self.inner.root,
            permission_mode: mode,
            tool,
            tool_input,
            tool_use_id: call_id,
        }
        .to_json(event, extra);
        let bytes = serde_json::to_vec(&stdin).unwrap_or_default();
        let cancellation = cx.cancellation();
        let runs = join_all(hooks.iter().map(|hook| {
            let confine = if hook.unconfined {
                &HookConfinement::None
            } else {
                &self.inner.confine
            };
            run::run(hook, bytes.clone(), &self.inner.root, confine, cancellation)
        }))
        .await;
        runs.into_iter()
            .map(|run| {
                let reply = Reply::of(&run);
                (run, reply)
            })
            .collect()
    }
}

/// Emits the update that shows a hook ran.
fn report(cx: &CallContext, event: HookEvent, run: &HookRun, reply: &Reply, effect: &str) {
    cx.report_hook(reply::update(event, run, reply, effect));
}
