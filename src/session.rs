//! A session with the built-in tools: one workspace, one read ledger, one
//! bash output folder, one table of background jobs, one approval engine,
//! one breaker, one scheduler.
//!
//! This is what the CLI and the MCP server run; a harness can use it as is
//! or assemble the parts itself.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agentcore_stages::typed::TypedTool;
use agentcore_stages::{EventSink, Pipeline, Tool, ToolRegistry};

use crate::approval::{ApprovalEngine, Mode, Policy, PolicyError};
use crate::scheduler::{Scheduler, SchedulerConfig, SteeringPolicy};
use crate::tools::apply_patch::ApplyPatchTool;
use crate::tools::bash::{BashTool, JobExit, JobLimits, Jobs, OutputDir};
use crate::tools::bash_output::BashOutputTool;
use crate::tools::edit::EditTool;
use crate::tools::glob::GlobTool;
use crate::tools::grep::GrepTool;
use crate::tools::kill_shell::KillShellTool;
use crate::tools::ls::LsTool;
use crate::tools::multi_edit::MultiEditTool;
use crate::tools::read::ReadTool;
use crate::tools::read_state::FileReadState;
use crate::tools::set::{Builtin, ToolSet};
use crate::tools::workspace::Workspace;
use crate::tools::write::WriteTool;
use crate::turn::Turn;

/// How to set up a [`Session`].
#[derive(Clone, Debug)]
pub struct SessionConfig {
    /// The workspace root.
    pub root: PathBuf,
    /// The approval mode; `None` takes the policy's (or `default`).
    pub mode: Option<Mode>,
    /// Rules and extra roots for the approval engine.
    pub policy: Option<Policy>,
    /// Safe calls that may run side by side.
    pub max_concurrency: usize,
    /// Consecutive failures that disable a tool; 0 turns the breaker off.
    pub max_tool_errors: u32,
    /// What steering does.
    pub steering: SteeringPolicy,
    /// Background jobs alive at once and their lifetime cap.
    pub jobs: JobLimits,
    /// The built-in tools registered, and so the tools the model sees
    /// (`--tools`); every default tool unless chosen.
    pub tools: ToolSet,
}

impl SessionConfig {
    /// Defaults for a workspace at `root`: default mode, no policy, 10
    /// concurrent safe calls, 3 consecutive errors, skip on steering, 8
    /// background jobs of at most an hour each, the default tools.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            mode: None,
            policy: None,
            max_concurrency: 10,
            max_tool_errors: 3,
            steering: SteeringPolicy::SkipPending,
            jobs: JobLimits::default(),
            tools: ToolSet::default(),
        }
    }

    /// The configuration `agentcore run` and `agentcore mcp` start from
    /// their `--root`, `--mode` and `--policy` options: the workspace at
    /// `root` (the current directory when `None`), the policy read from
    /// `policy_file`, and `mode`, when given, over the policy's.
    ///
    /// ```
    /// use agentcore::approval::Mode;
    /// use agentcore::session::SessionConfig;
    ///
    /// let config = SessionConfig::from_options(Some(".".into()), Some(Mode::Plan), None).unwrap();
    /// assert_eq!(config.mode, Some(Mode::Plan));
    /// ```
    pub fn from_options(
        root: Option<PathBuf>,
        mode: Option<Mode>,
        policy_file: Option<&Path>,
    ) -> Result<Self, SessionError> {
        let root = match root {
            Some(root) => root,
            None => std::env::current_dir().map_err(SessionError::CurrentDir)?,
        };
        let mut config = Self::new(root);
        if let Some(path) = policy_file {
            config.policy = Some(Policy::load(path)?);
        }
        config.mode = mode;
        Ok(config)
    }
}

/// Why a session could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// No root was given and the current directory cannot be read.
    #[error("cannot read the current directory: {0}")]
    CurrentDir(std::io::Error),
    /// The workspace root cannot be used.
    #[error("cannot use {path} as the workspace root: {source}")]
    Root {
        /// The root given.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The bash output folder could not be created.
    #[error("cannot create the session's output folder: {0}")]
    OutputDir(std::io::Error),
    /// The policy file cannot be read or parsed, or its extra roots cannot
    /// be used.
    #[error(transparent)]
    Policy(#[from] PolicyError),
}

/// The built-in tools in a running session.
///
/// Its background jobs belong to it: they are killed when it is dropped,
/// or earlier, waiting for them to die, by [`Session::end_jobs`].
/// Steering and abort end calls, not jobs.
pub struct Session {
    jobs: Arc<Jobs>,
    workspace: Workspace,
    read_state: FileReadState,
    output_dir: Arc<OutputDir>,
    approval: ApprovalEngine,
    registry: Arc<ToolRegistry>,
    pipeline: Pipeline,
    scheduler: Scheduler,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("root", &self.workspace.root())
            .field("mode", &self.approval.mode())
            .finish_non_exhaustive()
    }
}

impl Session {
    /// Starts a session; must run inside a tokio runtime (the scheduler's
    /// worker is spawned).
    pub fn start(config: SessionConfig) -> Result<Self, SessionError> {
        let mut workspace = Workspace::new(&config.root).map_err(|source| SessionError::Root {
            path: config.root.clone(),
            source,
        })?;
        let output_dir = Arc::new(OutputDir::new().map_err(SessionError::OutputDir)?);
        workspace
            .add_root(output_dir.path())
            .map_err(SessionError::OutputDir)?;
        let mut approval = ApprovalEngine::new(workspace.root());
        if let Some(policy) = &config.policy {
            policy.apply_roots(&mut workspace)?;
            approval = approval.with_policy(policy);
        }
        if let Some(mode) = config.mode {
            approval = approval.with_mode(mode);
        }
        // Files whose reading would be denied or would ask (read-deny and
        // read-ask rules, protected paths outside bypass mode) are left out
        // of glob, grep and ls.
        let filter = approval.walk_filter();
        workspace = workspace.with_exclusions(Arc::new(move |path| filter.excludes(path)));
        // Paths a read-deny rule covers, which edit and write refuse before
        // looking at them (a protected path asks at the gate instead).
        let denied = approval.read_filter();
        if !denied.is_empty() {
            workspace = workspace.with_read_denied(Arc::new(move |path| denied.is_denied(path)));
        }
        let read_state = FileReadState::new();
        let jobs = Arc::new(Jobs::new(config.jobs));
        let registry = Arc::new(builtin_registry_of(
            &config.tools,
            &workspace,
            &read_state,
            &output_dir,
            &jobs,
        ));
        let pipeline = Pipeline::builder()
            .registry(registry.clone())
            .gate(Arc::new(approval.clone()))
            .max_tool_errors(config.max_tool_errors)
            .build();
        let scheduler = Scheduler::new(
            pipeline.service(),
            registry.clone(),
            SchedulerConfig {
                max_concurrency: config.max_concurrency,
                steering: config.steering,
                ..SchedulerConfig::default()
            },
        );
        Ok(Self {
            jobs,
            workspace,
            read_state,
            output_dir,
            approval,
            registry,
            pipeline,
            scheduler,
        })
    }

    /// A new turn whose events go to `sink`.
    pub fn turn(&self, sink: EventSink) -> Turn {
        Turn::new(&self.scheduler, sink)
    }

    /// A new user prompt starts a run: the breaker's counts reset.
    pub fn new_prompt(&self) {
        self.pipeline.breaker().reset();
    }

    /// The scheduler, for calls that are not part of a turn (MCP requests).
    pub fn scheduler(&self) -> &Scheduler {
        &self.scheduler
    }

    /// The tools.
    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.registry
    }

    /// The workspace.
    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// The read-before-write ledger.
    pub fn read_state(&self) -> &FileReadState {
        &self.read_state
    }

    /// The approval engine.
    pub fn approval(&self) -> &ApprovalEngine {
        &self.approval
    }

    /// Where bash keeps full outputs (removed when the session ends).
    pub fn output_dir(&self) -> &Arc<OutputDir> {
        &self.output_dir
    }

    /// The background jobs of the session.
    pub fn jobs(&self) -> &Arc<Jobs> {
        &self.jobs
    }

    /// Every background job's end from now on, as it happens
    /// ([`Jobs::exits`]), for a harness to tell the model.
    pub fn job_exits(&self) -> tokio::sync::broadcast::Receiver<JobExit> {
        self.jobs.exits()
    }

    /// Ends the session's background jobs: kills every one (and all they
    /// started), refuses new ones, and waits until they are gone. What
    /// `agentcore run` does at the end of its input and `agentcore mcp`
    /// when the connection closes, and both on SIGTERM, SIGINT and SIGHUP.
    pub async fn end_jobs(&self) {
        self.jobs.end_all().await;
    }
}

impl Drop for Session {
    /// Kills the background jobs (without waiting: they die within the
    /// kill grace, or with the runtime's tasks).
    fn drop(&mut self) {
        self.jobs.kill_all();
    }
}

/// The built-in tools over one workspace and ledger, each carrying its
/// approval [`Permissions`](crate::approval::Permissions) (declared in the
/// tool's own file), with a table of background jobs of their own (killed
/// when the last tool holding it is dropped).
pub fn builtin_registry(
    workspace: &Workspace,
    read_state: &FileReadState,
    output_dir: &Arc<OutputDir>,
) -> ToolRegistry {
    let jobs = Arc::new(Jobs::default());
    builtin_registry_with_jobs(workspace, read_state, output_dir, &jobs)
}

/// [`builtin_registry`] whose `bash`, `bash_output` and `kill_shell` share
/// `jobs`.
pub fn builtin_registry_with_jobs(
    workspace: &Workspace,
    read_state: &FileReadState,
    output_dir: &Arc<OutputDir>,
    jobs: &Arc<Jobs>,
) -> ToolRegistry {
    builtin_registry_of(&ToolSet::default(), workspace, read_state, output_dir, jobs)
}

/// The built-in tools of `tools` only, as [`builtin_registry_with_jobs`]
/// builds them: what a session with [`SessionConfig::tools`] registers.
pub fn builtin_registry_of(
    tools: &ToolSet,
    workspace: &Workspace,
    read_state: &FileReadState,
    output_dir: &Arc<OutputDir>,
    jobs: &Arc<Jobs>,
) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    for builtin in tools.iter() {
        let tool: Arc<dyn Tool> = match builtin {
            Builtin::Read => ReadTool::new(workspace.clone(), read_state.clone()).into_dyn(),
            Builtin::Glob => GlobTool::new(workspace.clone()).into_dyn(),
            Builtin::Grep => GrepTool::new(workspace.clone()).into_dyn(),
            Builtin::Ls => LsTool::new(workspace.clone()).into_dyn(),
            Builtin::Edit => EditTool::new(workspace.clone(), read_state.clone()).into_dyn(),
            Builtin::MultiEdit => {
                MultiEditTool::new(workspace.clone(), read_state.clone()).into_dyn()
            }
            Builtin::Write => WriteTool::new(workspace.clone(), read_state.clone()).into_dyn(),
            Builtin::ApplyPatch => {
                ApplyPatchTool::new(workspace.clone(), read_state.clone()).into_dyn()
            }
            Builtin::Bash => BashTool::new(workspace.root().to_path_buf(), output_dir.clone())
                .jobs(jobs.clone())
                .into_dyn(),
            Builtin::BashOutput => BashOutputTool::new(jobs.clone()).into_dyn(),
            Builtin::KillShell => KillShellTool::new(jobs.clone()).into_dyn(),
        };
        // The built-in names are distinct (a set holds each once) and their
        // schemas compile (tested).
        if let Err(err) = registry.register(tool) {
            unreachable!("built-in tool failed to register: {err}");
        }
    }
    registry
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_give_the_config_run_and_mcp_start_from() {
        let config = SessionConfig::from_options(None, None, None).unwrap();
        assert_eq!(config.root, std::env::current_dir().unwrap());
        assert_eq!(config.mode, None);
        assert!(config.policy.is_none());

        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("policy.toml");
        std::fs::write(&file, "mode = \"plan\"\nallow = [\"bash(ls *)\"]\n").unwrap();
        let config =
            SessionConfig::from_options(Some(dir.path().into()), None, Some(&file)).unwrap();
        assert_eq!(config.policy.map(|p| p.mode), Some(Mode::Plan));
        assert_eq!(config.mode, None);
    }

    #[tokio::test]
    async fn a_session_registers_the_chosen_tools_only() {
        let dir = tempfile::tempdir().unwrap();
        let names = |tools: ToolSet| {
            let mut config = SessionConfig::new(dir.path());
            config.tools = tools;
            let session = Session::start(config).unwrap();
            let mut names: Vec<String> = session
                .registry()
                .iter()
                .map(|e| e.tool().name().to_owned())
                .collect();
            names.sort();
            names
        };
        assert_eq!(names("edit,read".parse().unwrap()), ["edit", "read"]);
        let default = names(ToolSet::default());
        assert_eq!(default.len(), Builtin::ALL.len() - 1);
        assert!(default.iter().any(|n| n == "multi_edit"));
        assert!(!default.iter().any(|n| n == "apply_patch"));
        let all = names(ToolSet::new(Builtin::ALL).unwrap());
        assert!(all.iter().any(|n| n == "apply_patch"));
    }

    #[test]
    fn a_missing_policy_file_is_named_in_the_error() {
        let missing = Path::new("/nonexistent/policy.toml");
        let err = SessionConfig::from_options(Some(".".into()), None, Some(missing)).unwrap_err();
        assert!(matches!(
            err,
            SessionError::Policy(PolicyError::Read { .. })
        ));
        assert!(
            err.to_string()
                .starts_with("cannot read policy file /nonexistent/policy.toml: "),
            "{err}"
        );
    }
}
