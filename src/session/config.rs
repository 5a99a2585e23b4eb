//! What a session is started from: [`SessionConfig`], and why it may not start.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agentcore_stages::{RegistryError, Tool};

use crate::approval::Mode;
use crate::config::{Policy, PolicyError};
use crate::hooks::{HookConfig, HookConfigError};
use crate::limits::session::DEFAULT_ASK_TIMEOUT;
#[cfg(feature = "mcp-client")]
use crate::mcp::client::McpServerConfig;
use crate::sandbox::SandboxPolicy;
use crate::scheduler::SteeringPolicy;
use crate::tools::bash::JobLimits;
use crate::tools::set::ToolSet;

/// How to set up a [`Session`](super::Session).
#[derive(Clone, Debug)]
#[non_exhaustive]
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
    /// How commands are confined; `None` takes the policy's `[sandbox]`
    /// table (or, without a policy, the default: `auto`, no network,
    /// `auto_allow`).
    pub sandbox: Option<SandboxPolicy>,
    /// Claude Code command hooks (`--hooks FILE`), run after the policy's
    /// `[hooks]`; see [`crate::hooks`].
    pub hooks: HookConfig,
    /// The files that configure the session (the policy file, hook
    /// settings files): commands cannot change them, so that no command
    /// opens the next session's sandbox. [`from_options`](Self::from_options)
    /// and [`add_hook_files`](Self::add_hook_files) add theirs.
    pub config_files: Vec<PathBuf>,
    /// External MCP servers to mount beside the policy's `[[mcp_servers]]`
    /// (see [`Session::connect`](super::Session::connect); feature `mcp-client`).
    #[cfg(feature = "mcp-client")]
    pub mcp_servers: Vec<McpServerConfig>,
    /// A person who can sign in (OAuth, in a browser) to a `url` server
    /// that asks for it while the session mounts it or later (step-up);
    /// `None` (the default): such a server fails its mount with the command
    /// that signs in, `agentcore mcp login NAME`. `agentcore run` sets it
    /// when its stdin is a terminal.
    #[cfg(feature = "mcp-client")]
    pub mcp_sign_in: Option<crate::mcp::client::SignIn>,
    /// The built-in tools registered, and so the tools the model sees
    /// (`--tools`); every default tool unless chosen.
    pub tools: ToolSet,
    /// How long a question to a person ("ask") may go unanswered before the
    /// call is denied (`agentcore mcp --ask-timeout`; default 120 s): the
    /// approval engine's [`ApprovalEngine::with_ask_timeout`](crate::approval::ApprovalEngine::with_ask_timeout). A session
    /// asks only once an approver is bound, as the MCP server does for a
    /// client that declares elicitation.
    pub ask_timeout: Duration,
    /// Tools of the harness's own, registered beside the built-in ones
    /// ([`with_tool`](Self::with_tool)); a name taken twice stops the
    /// session from starting. They are judged by the same approval engine
    /// (by the [`Permissions`](crate::access::Permissions) they carry; one
    /// without is an unknown access, which asks), and run through the same
    /// pipeline, hooks and scheduler.
    pub extra_tools: ExtraTools,
    /// Checkpoints of every call that can write, and rewind
    /// ([`crate::checkpoint`]); off unless enabled (`agentcore run
    /// --checkpoints` enables them).
    pub checkpoints: crate::checkpoint::CheckpointConfig,
    /// The repeated-call loop guard ([`crate::loop_guard`]): on, 3
    /// repeats, unless the policy's `[loop_guard]` says otherwise.
    pub loop_guard: crate::loop_guard::LoopGuardConfig,
    /// When mounted MCP tools are listed by name and one line only, with
    /// `tool_search` for their full definitions: past 10,000 estimated
    /// tokens of definitions, unless the policy's `[tool_search]` says
    /// otherwise.
    #[cfg(feature = "mcp-client")]
    pub tool_search: crate::mcp::client::ToolSearchConfig,
}

/// The tools a harness adds to a session: [`SessionConfig::extra_tools`].
#[derive(Clone, Default)]
pub struct ExtraTools(pub Vec<Arc<dyn Tool>>);

impl std::fmt::Debug for ExtraTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|t| t.name()))
            .finish()
    }
}

impl SessionConfig {
    /// Defaults for a workspace at `root`: default mode, no policy, 10
    /// concurrent safe calls, 3 consecutive errors, skip on steering, 8
    /// background jobs of at most an hour each, the default tools, 120 s
    /// to answer a question.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            mode: None,
            policy: None,
            max_concurrency: 10,
            max_tool_errors: 3,
            steering: SteeringPolicy::SkipPending,
            jobs: JobLimits::default(),
            sandbox: None,
            hooks: HookConfig::default(),
            config_files: Vec::new(),
            #[cfg(feature = "mcp-client")]
            mcp_servers: Vec::new(),
            #[cfg(feature = "mcp-client")]
            mcp_sign_in: None,
            tools: ToolSet::default(),
            ask_timeout: DEFAULT_ASK_TIMEOUT,
            extra_tools: ExtraTools::default(),
            checkpoints: crate::checkpoint::CheckpointConfig::off(),
            loop_guard: crate::loop_guard::LoopGuardConfig::default(),
            #[cfg(feature = "mcp-client")]
            tool_search: crate::mcp::client::ToolSearchConfig::default(),
        }
    }

    /// The same configuration with `tool` registered beside the built-in
    /// tools (see [`extra_tools`](Self::extra_tools)).
    ///
    /// ```
    /// use agentcore::session::{Session, SessionConfig};
    /// use agentcore::{CallContext, ToolError, ToolOutput, TypedTool};
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Args { name: String }
    /// struct Greet;
    /// impl TypedTool for Greet {
    ///     type Args = Args;
    ///     fn name(&self) -> &str { "greet" }
    ///     fn description(&self) -> &str { "Greets `name`." }
    ///     async fn execute(&self, args: Args, _cx: &CallContext) -> Result<ToolOutput, ToolError> {
    ///         Ok(ToolOutput::text(format!("hello, {}", args.name)))
    ///     }
    /// }
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let dir = tempfile::tempdir().unwrap();
    /// let session = Session::start(SessionConfig::new(dir.path()).with_tool(Greet.into_dyn())).unwrap();
    /// assert!(session.registry().get("greet").is_some());
    /// assert!(session.registry().get("bash").is_some());
    /// # });
    /// ```
    pub fn with_tool(mut self, tool: Arc<dyn Tool>) -> Self {
        self.extra_tools.0.push(tool);
        self
    }

    /// The same configuration with these built-in tools only.
    pub fn with_tools(mut self, tools: ToolSet) -> Self {
        self.tools = tools;
        self
    }

    /// The same configuration in approval mode `mode`.
    pub fn with_mode(mut self, mode: Mode) -> Self {
        self.mode = Some(mode);
        self
    }

    /// The same configuration with `policy`'s rules, roots, sandbox,
    /// hooks and servers.
    pub fn with_policy(mut self, policy: Policy) -> Self {
        self.policy = Some(policy);
        self
    }

    /// The same configuration with commands confined as `sandbox` says
    /// (over the policy's `[sandbox]`).
    pub fn with_sandbox(mut self, sandbox: SandboxPolicy) -> Self {
        self.sandbox = Some(sandbox);
        self
    }

    /// Every MCP server to mount: [`mcp_servers`](Self::mcp_servers), then
    /// the policy's.
    #[cfg(feature = "mcp-client")]
    pub fn all_mcp_servers(&self) -> Vec<McpServerConfig> {
        let mut servers = self.mcp_servers.clone();
        if let Some(policy) = &self.policy {
            servers.extend(policy.mcp_servers.iter().cloned());
        }
        servers
    }

    /// The sandbox settings in force: [`sandbox`](Self::sandbox), else the
    /// policy's, else the default.
    pub fn sandbox_policy(&self) -> SandboxPolicy {
        self.sandbox
            .clone()
            .or_else(|| self.policy.as_ref().map(|p| p.sandbox.clone()))
            .unwrap_or_default()
    }

    /// Adds the hooks of these Claude Code settings files (`--hooks FILE`,
    /// repeatable), in order; a file that cannot be read or parsed is an
    /// error naming it and the place.
    pub fn add_hook_files(&mut self, files: &[PathBuf]) -> Result<(), SessionError> {
        for file in files {
            self.hooks.merge(HookConfig::load_settings(file)?);
            self.config_files.push(file.clone());
        }
        Ok(())
    }

    /// Every hook the session runs: the policy's `[hooks]`, then
    /// [`SessionConfig::hooks`].
    pub fn all_hooks(&self) -> HookConfig {
        let mut all = self
            .policy
            .as_ref()
            .map(|p| p.hooks.clone())
            .unwrap_or_default();
        all.merge(self.hooks.clone());
        all
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
            config.config_files.push(path.to_path_buf());
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
    /// A hooks settings file cannot be read or parsed.
    #[error(transparent)]
    Hooks(#[from] HookConfigError),
    /// The configuration mounts MCP servers, which [`Session::start`](super::Session::start)
    /// cannot connect to.
    #[error(
        "this configuration mounts MCP servers; start the session with Session::connect, which connects to them"
    )]
    McpNeedsConnect,
    /// A tool of [`SessionConfig::extra_tools`] cannot be registered (its
    /// name is taken, or its schema does not compile).
    #[error("cannot add the tool: {0}")]
    Tool(#[from] RegistryError),
    /// `checkpoints` or `rewind` is among the tools, and checkpoints are
    /// off ([`SessionConfig::checkpoints`], the policy's `[checkpoints]`).
    #[error(
        "{} only with checkpoints on: add --checkpoints or a [checkpoints] table to the policy (library: SessionConfig::checkpoints), or leave {} out of the tools",
        works(.0),
        .0.join(" and ")
    )]
    CheckpointsOff(Vec<&'static str>),
    /// `checkpoints` or `rewind` is among the tools, and the checkpoint
    /// store cannot be opened (another session records into it, no state
    /// directory, inside a writable root).
    #[error("{} only with checkpoints on, and they cannot be: {source}", works(.tools))]
    CheckpointsUnavailable {
        /// The tools that need them.
        tools: Vec<&'static str>,
        /// Why the store cannot be opened.
        source: crate::checkpoint::CheckpointError,
    },
}

/// `rewind works`, `checkpoints and rewind work`.
fn works(tools: &[&str]) -> String {
    match tools {
        [one] => format!("{one} works"),
        many => format!("{} work", many.join(" and ")),
    }
}
