//! A session with the built-in tools: one workspace, one read ledger, one
//! bash output folder, one table of background jobs, one approval engine,
//! one breaker, one scheduler.
//!
//! This is what the CLI and the MCP server run; a harness can use it as is
//! or assemble the parts itself.

use std::path::PathBuf;
use std::sync::Arc;

use agentcore_stages::{Breaker, EventSink, Gate, Pipeline, ToolRegistry};

use crate::approval::ApprovalEngine;
use crate::checkpoint::{
    CheckpointError, CheckpointLayer, Checkpoints, Listing, RewindMode, RewindReport, RewindTo,
};
use crate::config::RootAccess;
use crate::fs::read_state::FileReadState;
use crate::fs::workspace::Workspace;
use crate::hooks::{HookRunner, PostToolUseLayer, PreToolUseGate};
#[cfg(feature = "mcp-client")]
use crate::mcp::client::{Connection, MountFailure, Mounted};
use crate::process::OutputDir;
use crate::sandbox::{Sandbox, SandboxError, SandboxMode, SandboxPolicy};
use crate::scheduler::{Scheduler, SchedulerConfig};
use crate::tools::bash::{BashTool, JobExit, Jobs};
use crate::turn::Turn;

mod builtin;
mod config;

pub(crate) use builtin::builtin_tools_of;
pub use builtin::{
    builtin_registry, builtin_registry_in, builtin_registry_of, builtin_registry_unconfined,
};
pub use config::{ExtraTools, SessionConfig, SessionError};

/// How a session's commands are confined.
#[derive(Debug)]
enum SessionSandbox {
    /// Not at all (`mode = "off"`).
    Off,
    /// By this sandbox (`auto`: with what the kernel offers).
    On(Sandbox),
    /// `required`, and this machine cannot: commands are refused.
    Unavailable(SandboxError),
}

impl SessionSandbox {
    /// The sandbox of `policy` for `workspace`: its read-write roots are
    /// writable (the roots a policy adds read-only are not), and what the
    /// read-deny rules cover is hidden.
    fn build(
        policy: &SandboxPolicy,
        workspace: &Workspace,
        config: &SessionConfig,
        approval: &ApprovalEngine,
        protected: Vec<PathBuf>,
        checkpoint_store: Option<PathBuf>,
    ) -> Self {
        if policy.mode == SandboxMode::Off {
            return SessionSandbox::Off;
        }
        let root = workspace.root().to_path_buf();
        let mut writable = vec![root.clone()];
        if let Some(p) = &config.policy {
            writable.extend(
                p.resolved_roots(&root)
                    .into_iter()
                    .filter(|(_, access)| *access == RootAccess::ReadWrite)
                    .map(|(path, _)| path),
            );
        }
        let mut hidden = approval.read_filter().hidden_paths(workspace.roots());
        // The checkpoint store holds earlier versions of files: commands
        // never see it.
        hidden.extend(checkpoint_store);
        match policy.build(&root, writable, hidden, protected) {
            Ok(sandbox) => SessionSandbox::On(sandbox),
            Err(error) => SessionSandbox::Unavailable(error),
        }
    }
}

/// The built-in tools in a running session.
///
/// Its background jobs belong to it: they are killed when it is dropped,
/// or earlier, waiting for them to die, by [`Session::end_jobs`].
/// Steering and abort end calls, not jobs.
pub struct Session {
    jobs: Arc<Jobs>,
    checkpoints: Option<Checkpoints>,
    sandbox: SessionSandbox,
    workspace: Workspace,
    read_state: FileReadState,
    output_dir: Arc<OutputDir>,
    approval: ApprovalEngine,
    registry: Arc<ToolRegistry>,
    pipeline: Pipeline,
    scheduler: Scheduler,
    // Read by `refresh_mcp_tools` (feature `mcp-client`).
    #[cfg_attr(not(feature = "mcp-client"), allow(dead_code))]
    assembly: Assembly,
    #[cfg(feature = "mcp-client")]
    mcp: Mounted,
}

/// What a session's pipeline and scheduler are built from, kept to build
/// them again over a refreshed registry.
struct Assembly {
    gate: Arc<dyn Gate>,
    hooks: Option<HookRunner>,
    checkpoints: Option<CheckpointLayer>,
    loop_guard: Option<crate::loop_guard::LoopGuardLayer>,
    max_tool_errors: u32,
    scheduler: SchedulerConfig,
}

impl Assembly {
    fn build(&self, registry: &Arc<ToolRegistry>, breaker: Breaker) -> (Pipeline, Scheduler) {
        let pipeline = Pipeline::builder()
            .registry(registry.clone())
            .gate(self.gate.clone())
            .max_tool_errors(self.max_tool_errors)
            .breaker(breaker)
            .build();
        // Hooks see the result after the checkpoint is taken; the
        // checkpoint stage sits right around the tool's execution.
        let service = pipeline.service_with(
            tower::ServiceBuilder::new()
                .option_layer(self.loop_guard.clone())
                .option_layer(self.hooks.clone().map(PostToolUseLayer::new))
                .option_layer(self.checkpoints.clone()),
        );
        let scheduler = Scheduler::new(service, registry.clone(), self.scheduler);
        (pipeline, scheduler)
    }
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
    /// worker is spawned). A configuration that mounts MCP servers needs
    /// [`Session::connect`] instead.
    ///
    /// What it confines: the file tools to the workspace (and the policy's
    /// roots); commands in the sandbox of [`SessionConfig::sandbox_policy`]
    /// (by default `auto`: what the kernel offers, no network, writes only
    /// under the read-write roots; `off` runs them unconfined, `required`
    /// refuses them on a machine that cannot); every call through the
    /// approval engine of its mode and policy.
    pub fn start(config: SessionConfig) -> Result<Self, SessionError> {
        #[cfg(feature = "mcp-client")]
        if !config.all_mcp_servers().is_empty() {
            return Err(SessionError::McpNeedsConnect);
        }
        Self::start_mounted(
            config,
            #[cfg(feature = "mcp-client")]
            Mounted::default(),
        )
    }

    /// Starts a session and mounts the MCP servers of `config` (its own
    /// and its policy's): their tools join the registry as
    /// `mcp__SERVER__TOOL`. A server that cannot start (within its startup
    /// timeout) is left out and listed in [`Session::mcp_failures`]; the
    /// session starts all the same.
    #[cfg(feature = "mcp-client")]
    pub async fn connect(config: SessionConfig) -> Result<Self, SessionError> {
        // The sandbox's probe runs while the servers mount and the session
        // is put together.
        let sandbox_policy = config.sandbox_policy();
        if sandbox_policy.mode != crate::sandbox::SandboxMode::Off {
            crate::sandbox::prefetch(&sandbox_policy.limits);
        }
        let mounted =
            crate::mcp::client::mount_with(&config.all_mcp_servers(), config.mcp_sign_in.clone())
                .await;
        Self::start_mounted(config, mounted)
    }

    fn start_mounted(
        config: SessionConfig,
        #[cfg(feature = "mcp-client")] mut mcp: Mounted,
    ) -> Result<Self, SessionError> {
        let mut workspace = Workspace::new(&config.root).map_err(|source| SessionError::Root {
            path: config.root.clone(),
            source,
        })?;
        // The folders of sessions whose agentcore died (a SIGKILL) go; their
        // unconfined commands still running are named, with how to end them
        // (`tools::bash::StaleSessions::kill_orphans` ends them too).
        let stale = crate::process::sweep_stale_sessions(&std::env::temp_dir());
        if let Some(line) = stale.summary() {
            eprintln!("agentcore: {line}");
        }
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
        let sandbox_policy = config.sandbox_policy();
        approval = approval
            .with_auto_allow(sandbox_policy.auto_allow)
            .with_ask_timeout(Some(config.ask_timeout));
        // Files whose reading would be denied or would ask (read-deny and
        // read-ask rules, protected paths outside bypass mode) are left out
        // of glob, grep and ls.
        let filter = approval.walk_filter();
        let entries = filter.clone();
        workspace = workspace
            .with_exclusions(Arc::new(move |path| filter.excludes(path)))
            .with_entry_exclusions(Arc::new(move |path, kind| {
                entries.excludes_entry(path, kind)
            }));
        // Paths a read-deny rule covers, which edit and write refuse before
        // looking at them (a protected path asks at the gate instead).
        let denied = approval.read_filter();
        if !denied.is_empty() {
            workspace = workspace.with_read_denied(Arc::new(move |path| denied.is_denied(path)));
        }
        // Hooks: PreToolUse in the gate before the engine, PostToolUse
        // after Execute.
        let hooks = config.all_hooks();
        let hooks = (!hooks.is_empty())
            .then(|| HookRunner::new(hooks, workspace.root()).with_approval(&approval));
        // Hooks may run unconfined (`"unconfined": true`): commands may not
        // change their scripts, nor the files that configure the session.
        let mut protected = config.config_files.clone();
        if let Some(runner) = &hooks {
            protected.extend(runner.protected_paths());
        }
        let read_state = FileReadState::new();
        let jobs = Arc::new(Jobs::new(config.jobs));
        // Opened before the sandbox is built: its store is hidden from
        // commands.
        let need_checkpoints: Vec<&'static str> = config
            .tools
            .iter()
            .filter(|tool| tool.needs_checkpoints())
            .map(|tool| tool.name())
            .collect();
        let checkpoints = match open_checkpoints(&config, &workspace, &read_state, &jobs) {
            Ok(Some(recorder)) => Some(recorder),
            Ok(None) if need_checkpoints.is_empty() => None,
            Ok(None) => return Err(SessionError::CheckpointsOff(need_checkpoints)),
            Err(error) if need_checkpoints.is_empty() => {
                eprintln!("agentcore: checkpoints are off: {error}");
                None
            }
            Err(source) => {
                return Err(SessionError::CheckpointsUnavailable {
                    tools: need_checkpoints,
                    source,
                });
            }
        };
        let store = checkpoints.as_ref().map(|c| c.store_dir().to_path_buf());
        let sandbox = SessionSandbox::build(
            &sandbox_policy,
            &workspace,
            &config,
            &approval,
            protected,
            store,
        );
        // Hooks run confined by the same sandbox unless marked unconfined.
        let hooks = hooks.map(|runner| match &sandbox {
            SessionSandbox::Off => runner,
            SessionSandbox::On(sandbox) => runner.with_sandbox(sandbox.clone()),
            SessionSandbox::Unavailable(error) => runner.with_sandbox_unavailable(error),
        });
        let mut bash = BashTool::new(workspace.root().to_path_buf(), output_dir.clone());
        match &sandbox {
            SessionSandbox::Off => {}
            SessionSandbox::On(sandbox) => bash = bash.sandbox(sandbox.clone()),
            SessionSandbox::Unavailable(error) => bash = bash.sandbox_unavailable(error),
        }
        let mut registry = builtin_tools_of(
            &config.tools,
            &workspace,
            &read_state,
            &jobs,
            bash.jobs(jobs.clone()),
            checkpoints.as_ref(),
        );
        for tool in &config.extra_tools.0 {
            registry.register(tool.clone())?;
        }
        #[cfg(feature = "mcp-client")]
        {
            for connection in &mcp.connections {
                connection.keep_results_in(output_dir.clone());
                connection.ask_through(approval.clone());
            }
            mcp.register_into(&mut registry);
            let tool_search = config
                .policy
                .as_ref()
                .and_then(|p| p.tool_search)
                .unwrap_or(config.tool_search);
            if let Some(search) = mcp.list_by_summary(&tool_search) {
                use agentcore_stages::TypedTool as _;
                if let Err(err) = registry.register(search.into_dyn()) {
                    mcp.failures.push(MountFailure {
                        server: String::new(),
                        message: format!(
                            "the mounted tools are listed by name only, but tool_search could not be added ({err}): their full definitions reach the model only through errors"
                        ),
                    });
                }
            }
        }
        let registry = Arc::new(registry);
        let gate: Arc<dyn Gate> = match &hooks {
            Some(runner) => Arc::new(PreToolUseGate::new(runner.clone(), approval.clone())),
            None => Arc::new(approval.clone()),
        };
        let file_tools = ["edit", "multi_edit", "edit_lines", "write", "apply_patch"]
            .into_iter()
            .filter(|name| registry.get(name).is_some())
            .map(str::to_owned)
            .collect::<Vec<_>>();
        let assembly = Assembly {
            gate,
            hooks,
            checkpoints: checkpoints
                .clone()
                .map(|c| CheckpointLayer::new(c, file_tools)),
            loop_guard: loop_guard_of(&config, approval.mode()),
            max_tool_errors: config.max_tool_errors,
            scheduler: SchedulerConfig {
                max_concurrency: config.max_concurrency,
                steering: config.steering,
                ..SchedulerConfig::default()
            },
        };
        let (pipeline, scheduler) = assembly.build(&registry, Breaker::default());
        Ok(Self {
            jobs,
            checkpoints,
            sandbox,
            workspace,
            read_state,
            output_dir,
            approval,
            registry,
            pipeline,
            scheduler,
            assembly,
            #[cfg(feature = "mcp-client")]
            mcp,
        })
    }

    /// Mounts again the tools of every MCP server that said its tool list
    /// changed (`notifications/tools/list_changed`) since it was listed:
    /// tools it added join the registry, tools it dropped leave it, and the
    /// pipeline and scheduler are built again over it (the breaker's counts
    /// are kept). Call it between turns, with no call running: `agentcore
    /// run` does before each turn. Returns the tools that could not be
    /// mounted (also kept in [`Session::mcp_failures`]); nothing changes
    /// when no list changed.
    #[cfg(feature = "mcp-client")]
    pub async fn refresh_mcp_tools(&mut self) -> Vec<MountFailure> {
        let Some((registry, failures)) = self.mcp.refreshed(&self.registry).await else {
            return Vec::new();
        };
        let registry = Arc::new(registry);
        let (pipeline, scheduler) = self
            .assembly
            .build(&registry, self.pipeline.breaker().clone());
        self.registry = registry;
        self.pipeline = pipeline;
        self.scheduler = scheduler;
        self.mcp.failures.extend(failures.iter().cloned());
        failures
    }

    /// The MCP servers mounted (those that started).
    #[cfg(feature = "mcp-client")]
    pub fn mcp_servers(&self) -> &[Arc<Connection>] {
        &self.mcp.connections
    }

    /// The MCP servers (or single tools of them) that could not be mounted,
    /// each with a message naming the server and the cause.
    #[cfg(feature = "mcp-client")]
    pub fn mcp_failures(&self) -> &[MountFailure] {
        &self.mcp.failures
    }

    /// Closes the connections to the mounted MCP servers (their processes
    /// are stopped). Their tools fail from then on.
    pub async fn end_mcp(&self) {
        #[cfg(feature = "mcp-client")]
        self.mcp.close().await;
    }

    /// A new turn whose events go to `sink`.
    pub fn turn(&self, sink: EventSink) -> Turn {
        Turn::new(&self.scheduler, sink)
    }

    /// A new user prompt starts a run: the breaker's counts reset.
    pub fn new_prompt(&self) {
        self.pipeline.breaker().reset();
        if let Some(checkpoints) = &self.checkpoints {
            checkpoints.new_turn();
        }
    }

    /// The session's checkpoint recorder, when checkpoints are on
    /// ([`SessionConfig::checkpoints`]) and its store could be opened.
    pub fn checkpoint_recorder(&self) -> Option<&Checkpoints> {
        self.checkpoints.as_ref()
    }

    /// The checkpoints kept, oldest first (what every call that could
    /// write changed); `None` when checkpoints are off.
    pub fn checkpoints(&self) -> Option<Result<Listing, CheckpointError>> {
        let recorder = self.checkpoints.as_ref()?;
        Some(recorder.list().map_err(CheckpointError::from))
    }

    /// Rewinds the roots to what they held before `to` (see
    /// [`Checkpoints::rewind`]); call it with no call running. An error
    /// when checkpoints are off.
    pub fn rewind(&self, to: RewindTo, mode: RewindMode) -> Result<RewindReport, CheckpointError> {
        match &self.checkpoints {
            Some(recorder) => recorder.rewind(to, mode),
            None => Err(CheckpointError::NoSuchCheckpoint(
                "checkpoints are off in this session".to_owned(),
            )),
        }
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

    /// The sandbox confining the session's commands, if one does.
    pub fn sandbox(&self) -> Option<&Sandbox> {
        match &self.sandbox {
            SessionSandbox::On(sandbox) => Some(sandbox),
            _ => None,
        }
    }

    /// One line on how commands are confined, for the `hello` line of
    /// `agentcore run` and the MCP server's instructions, e.g. `auto: fs
    /// writes (Landlock ABI 7), …` or `off: commands run with the user's
    /// authority`.
    pub fn sandbox_summary(&self) -> String {
        match &self.sandbox {
            SessionSandbox::Off => "off: commands run with the user's authority".to_owned(),
            SessionSandbox::On(sandbox) => {
                let mode = match sandbox.mode() {
                    SandboxMode::Required => "required",
                    _ => "auto",
                };
                let mut line = format!("{mode}: {}", sandbox.status().enforced());
                if let Some((feature, reason)) = sandbox.status().first_missing() {
                    line.push_str(&format!(
                        "; not fully confined: {feature} {} not available ({reason})",
                        feature.verb()
                    ));
                }
                line
            }
            SessionSandbox::Unavailable(error @ SandboxError::Unavailable { .. }) => {
                format!("required but {error}: commands are refused")
            }
            SessionSandbox::Unavailable(error) => {
                format!("could not be set up ({error}): commands are refused")
            }
        }
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

    /// Emits [`Event::JobExit`](agentcore_stages::Event::JobExit) to
    /// `sink` for every background job that ends from now on, as it ends,
    /// until the session's job table is gone: a harness passes its own
    /// sink (or a [`tee`](EventSink::tee) of it) to have job exits in its
    /// event stream beside the calls' events.
    pub fn forward_job_exits(&self, sink: EventSink) -> tokio::task::JoinHandle<()> {
        use tokio::sync::broadcast::error::RecvError;
        let mut exits = self.jobs.exits();
        tokio::spawn(async move {
            loop {
                match exits.recv().await {
                    Ok(exit) => sink.emit(exit.into()),
                    Err(RecvError::Lagged(_)) => {}
                    Err(RecvError::Closed) => return,
                }
            }
        })
    }

    /// Ends the session's background jobs: kills every one (and all they
    /// started), refuses new ones, and waits until they are gone. What
    /// `agentcore run` does at the end of its input and `agentcore mcp`
    /// when the connection closes, and both on SIGTERM, SIGINT and SIGHUP.
    pub async fn end_jobs(&self) {
        self.jobs.end_all().await;
    }
}

/// The loop guard of a session: the policy's `[loop_guard]` or the
/// session's own settings; none when `repeats` is 0, or in bypass mode
/// when the settings say `in_bypass = false`.
fn loop_guard_of(
    config: &SessionConfig,
    mode: crate::approval::Mode,
) -> Option<crate::loop_guard::LoopGuardLayer> {
    let settings = config
        .policy
        .as_ref()
        .and_then(|p| p.loop_guard)
        .unwrap_or(config.loop_guard);
    if settings.repeats == 0 || (mode == crate::approval::Mode::Bypass && !settings.in_bypass) {
        return None;
    }
    Some(crate::loop_guard::LoopGuardLayer::new(settings))
}

/// The recorder of a session whose configuration enables checkpoints
/// (`None` when it does not), or why its store cannot be opened (in use,
/// no state directory, inside a writable root): the session then runs
/// without checkpoints, saying why on stderr, unless a tool needs them.
fn open_checkpoints(
    config: &SessionConfig,
    workspace: &Workspace,
    read_state: &FileReadState,
    jobs: &Arc<Jobs>,
) -> Result<Option<Checkpoints>, CheckpointError> {
    // The policy's table, if any; the session's own switch turns it on
    // and its own store wins.
    let mut settings = config
        .policy
        .as_ref()
        .and_then(|p| p.checkpoints.clone())
        .unwrap_or_else(|| config.checkpoints.clone());
    if config.checkpoints.enabled {
        settings.enabled = true;
        if config.checkpoints.store.is_some() {
            settings.store = config.checkpoints.store.clone();
        }
    }
    if !settings.enabled {
        return Ok(None);
    }
    let root = workspace.root().to_path_buf();
    let mut roots = vec![root.clone()];
    if let Some(p) = &config.policy {
        roots.extend(
            p.resolved_roots(&root)
                .into_iter()
                .filter(|(_, access)| *access == RootAccess::ReadWrite)
                .map(|(path, _)| path),
        );
    }
    let recorder = Checkpoints::open(&settings, workspace, roots)?;
    recorder.use_ledger(read_state.clone());
    let jobs = jobs.clone();
    recorder.watch_jobs(Arc::new(move || {
        jobs.all()
            .into_iter()
            .map(|(id, command, running)| crate::checkpoint::JobSeen {
                id,
                command,
                running,
            })
            .collect()
    }));
    Ok(Some(recorder))
}

impl Drop for Session {
    /// Kills the background jobs (without waiting: they die within the
    /// kill grace, or with the runtime's tasks).
    fn drop(&mut self) {
        self.jobs.kill_all();
        if let Some(checkpoints) = &self.checkpoints
            && let Err(error) = checkpoints.save()
        {
            eprintln!("agentcore: the checkpoint index could not be saved: {error}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    use crate::approval::Mode;
    use crate::config::PolicyError;
    use crate::tools::set::{Builtin, ToolSet};

    /// Issue 26 item 3: each built-in tool's spec names it by the name and
    /// label the registered tool reports, and its path fields are exactly
    /// the tool's arguments that name a path (`path`, `file_path`),
    /// strings in its schema.
    #[tokio::test]
    async fn every_spec_matches_its_tool() {
        let dir = tempfile::tempdir().unwrap();
        let store = tempfile::tempdir().unwrap();
        let mut config = SessionConfig::new(dir.path());
        config.tools = ToolSet::new(Builtin::ALL).unwrap();
        config.checkpoints = checkpoints_in(store.path());
        let session = Session::start(config).unwrap();
        assert_eq!(session.registry().iter().count(), Builtin::ALL.len());
        for builtin in Builtin::ALL {
            let id = builtin.spec();
            let entry = session
                .registry()
                .get(id.name)
                .unwrap_or_else(|| panic!("{} is not registered", id.name));
            assert_eq!(entry.tool().name(), id.name);
            assert_eq!(entry.tool().label(), Some(id.label));
            let properties = entry.tool().schema()["properties"]
                .as_object()
                .cloned()
                .unwrap_or_default();
            for field in id.path_fields {
                assert_eq!(properties[*field]["type"], "string", "{}.{field}", id.name);
            }
            for name in properties.keys() {
                if name == "path" || name == "file_path" {
                    assert!(
                        id.path_fields.contains(&name.as_str()),
                        "{}.{name}",
                        id.name
                    );
                }
            }
        }
    }

    #[cfg(feature = "mcp-client")]
    #[tokio::test]
    async fn a_session_mounting_servers_needs_connect() {
        use crate::session::{Session, SessionConfig, SessionError};
        let dir = tempfile::tempdir().unwrap();
        let mut config = SessionConfig::new(dir.path());
        config
            .mcp_servers
            .push(crate::mcp::client::McpServerConfig::command(
                "x",
                "/nonexistent",
                ["a"],
            ));
        assert!(matches!(
            Session::start(config.clone()),
            Err(SessionError::McpNeedsConnect)
        ));
        // connect starts it, without the server that cannot start.
        let session = Session::connect(config).await.unwrap();
        assert!(session.mcp_servers().is_empty());
        assert_eq!(session.mcp_failures().len(), 1);
        assert!(
            session.mcp_failures()[0]
                .message
                .starts_with("MCP server \"x\" could not be started: `/nonexistent`: "),
            "{}",
            session.mcp_failures()[0]
        );
        assert!(session.registry().get("read").is_some());
    }

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

    /// Checkpoints on, recorded into `store`.
    fn checkpoints_in(store: &Path) -> crate::checkpoint::CheckpointConfig {
        crate::checkpoint::CheckpointConfig {
            store: Some(store.to_path_buf()),
            ..crate::checkpoint::CheckpointConfig::default()
        }
    }

    #[tokio::test]
    async fn a_session_registers_the_chosen_tools_only() {
        let dir = tempfile::tempdir().unwrap();
        let store = tempfile::tempdir().unwrap();
        let names = |tools: ToolSet| {
            let mut config = SessionConfig::new(dir.path());
            config.tools = tools;
            config.checkpoints = checkpoints_in(store.path());
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
        assert_eq!(default.len(), Builtin::ALL.len() - 4);
        assert!(default.iter().any(|n| n == "multi_edit"));
        for on_request in ["apply_patch", "edit_lines", "checkpoints", "rewind"] {
            assert!(!default.iter().any(|n| n == on_request), "{on_request}");
        }
        let all = names(ToolSet::new(Builtin::ALL).unwrap());
        for on_request in ["apply_patch", "edit_lines", "checkpoints", "rewind"] {
            assert!(all.iter().any(|n| n == on_request), "{on_request}");
        }
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
