//! The `kill_shell` tool: stops a background job and everything it
//! started.

use std::sync::{Arc, LazyLock};

use agentcore_stages::TypedTool;
use agentcore_stages::{CallContext, Extensions, InterruptBehavior, ToolError, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;

use super::Jobs;
use crate::access::{Access, Permissions};
use crate::tools::schema::builtin_args;
use crate::tools::spec::ToolSpec;

static DESCRIPTION: LazyLock<String> = LazyLock::new(|| {
    "\
Stops a background job started by bash with `run_in_background`, or a terminal \
session started with `tty`: the job and every process it started are killed \
(TERM, then KILL after a second), as on a timeout. Returns the output the job \
printed since the last bash_output and its final status."
        .to_owned()
});

/// The `kill_shell` tool's identity: its name, label, Claude Code name.
pub const SPEC: ToolSpec = ToolSpec::new("kill_shell", "Stop Job").claude_code("KillShell");

/// The arguments of `kill_shell`. The field docs are the descriptions the
/// model reads.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(transform = builtin_args)]
pub struct KillShellArgs {
    /// The job id bash returned ("Started background job ID" or "Started terminal session ID").
    pub job_id: String,
}

/// What a call of `kill_shell` touches: no file and no new command; it
/// stops a job this session started. Judged as a read, like any call that
/// touches nothing.
pub fn permissions() -> Permissions {
    Permissions::typed(|_: &KillShellArgs| Access::nothing())
}

/// The `kill_shell` tool over a session's [`Jobs`].
#[derive(Debug)]
pub struct KillShellTool {
    jobs: Arc<Jobs>,
}

impl KillShellTool {
    /// Stops jobs of `jobs` (the table the session's bash starts them in).
    pub fn new(jobs: Arc<Jobs>) -> Self {
        Self { jobs }
    }
}

impl TypedTool for KillShellTool {
    type Args = KillShellArgs;

    fn name(&self) -> &str {
        SPEC.name
    }

    fn description(&self) -> &str {
        &DESCRIPTION
    }

    async fn execute(
        &self,
        args: KillShellArgs,
        _cx: &CallContext,
    ) -> Result<ToolOutput, ToolError> {
        let job = self.jobs.get(&args.job_id).map_err(ToolError::new)?;
        let (was_running, report) = job.kill().await;
        let head = if was_running {
            format!("Stopped background job {}.", job.id())
        } else {
            format!("Background job {} had already ended.", job.id())
        };
        Ok(ToolOutput::text(format!("{head}\n{report}")))
    }

    fn label(&self) -> Option<&str> {
        Some(SPEC.label)
    }

    fn read_only(&self, _args: &KillShellArgs) -> bool {
        false
    }

    fn concurrency_safe(&self, _args: &KillShellArgs) -> Option<bool> {
        Some(false)
    }

    // The kill is started at once and takes at most the kill grace; it is
    // finished even when the call is interrupted.
    fn interrupt_behavior(&self, _args: &KillShellArgs) -> InterruptBehavior {
        InterruptBehavior::Block
    }

    fn activity(&self, args: &KillShellArgs) -> Option<String> {
        Some(format!("Stopping {}", args.job_id))
    }

    fn extensions(&self) -> Extensions {
        permissions().into_extensions()
    }
}
