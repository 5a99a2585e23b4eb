//! The `bash_output` tool: what a background job printed since the last
//! look, and whether it still runs.

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use agentcore_stages::TypedTool;
use agentcore_stages::{CallContext, Extensions, InterruptBehavior, ToolError, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;

use super::Jobs;
use crate::access::{Access, Permissions};
use crate::limits::bash::MAX_WAIT_MS;
use crate::tools::schema::builtin_args;
use crate::tools::spec::ToolSpec;
use crate::tools::text;

/// The most a `filter` pattern may compile to, in bytes.
const FILTER_SIZE_LIMIT: usize = 1 << 20;

static DESCRIPTION: LazyLock<String> = LazyLock::new(|| {
    format!(
        "\
Reads the output of a background job started by bash with `run_in_background`: \
what it printed since the previous bash_output of that job, then its status \
(`Status: running`, `Status: exited with code N`, `Status: killed by signal S` or \
`Status: stopped by kill_shell`).

- `wait_ms` waits (at most {MAX_WAIT_MS} ms) for new output or the job's exit, \
whichever comes first; without it the call returns at once.
- `filter` is a regular expression: only the new lines that match are shown (the \
others are read all the same).
- New output longer than {} characters keeps its beginning and its end; the full \
output is in the file whose path is given.",
        text::thousands(crate::limits::bash::MAX_OUTPUT_CHARS),
    )
});

/// The `bash_output` tool's identity: its name, label, Claude Code name.
pub const SPEC: ToolSpec =
    ToolSpec::new("bash_output", "Read Job Output").claude_code("BashOutput");

/// The arguments of `bash_output`. The field docs are the descriptions the
/// model reads.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(transform = builtin_args)]
pub struct BashOutputArgs {
    /// The job id bash returned ("Started background job ID").
    pub job_id: String,
    /// Optional: wait up to this many milliseconds (at most 60000) for new output or the job's exit, whichever comes first.
    #[schemars(range(max = 60_000))]
    pub wait_ms: Option<u64>,
    /// Optional regular expression: show only the new lines that match it.
    pub filter: Option<String>,
}

/// What a call of `bash_output` touches: nothing (it reads what a job of
/// this session printed), judged as a read.
pub fn permissions() -> Permissions {
    Permissions::typed(|_: &BashOutputArgs| Access::nothing())
}

/// The `bash_output` tool over a session's [`Jobs`].
#[derive(Debug)]
pub struct BashOutputTool {
    jobs: Arc<Jobs>,
}

impl BashOutputTool {
    /// Reads the jobs of `jobs` (the table the session's bash starts them in).
    pub fn new(jobs: Arc<Jobs>) -> Self {
        Self { jobs }
    }
}

impl TypedTool for BashOutputTool {
    type Args = BashOutputArgs;

    fn name(&self) -> &str {
        SPEC.name
    }

    fn description(&self) -> &str {
        &DESCRIPTION
    }

    async fn execute(
        &self,
        args: BashOutputArgs,
        cx: &CallContext,
    ) -> Result<ToolOutput, ToolError> {
        let wait_ms = args.wait_ms.unwrap_or(0);
        if wait_ms > MAX_WAIT_MS {
            return Err(ToolError::new(format!(
                "wait_ms must be at most {MAX_WAIT_MS}; got {wait_ms}. Call bash_output again to wait longer."
            )));
        }
        let filter = match args.filter.as_deref().filter(|f| !f.is_empty()) {
            None => None,
            Some(pattern) => Some(
                regex::RegexBuilder::new(pattern)
                    .size_limit(FILTER_SIZE_LIMIT)
                    .build()
                    .map_err(|e| {
                        ToolError::new(format!(
                            "filter is not a valid regular expression: {e}. Fix the pattern or leave filter out."
                        ))
                    })?,
            ),
        };
        let job = self.jobs.get(&args.job_id).map_err(ToolError::new)?;
        let text = job
            .read_after(
                Duration::from_millis(wait_ms),
                filter.as_ref(),
                cx.cancellation(),
            )
            .await;
        Ok(ToolOutput::text(text))
    }

    fn label(&self) -> Option<&str> {
        Some(SPEC.label)
    }

    fn read_only(&self, _args: &BashOutputArgs) -> bool {
        true
    }

    fn always_read_only(&self) -> bool {
        true
    }

    fn concurrency_safe(&self, _args: &BashOutputArgs) -> Option<bool> {
        Some(true)
    }

    fn interrupt_behavior(&self, _args: &BashOutputArgs) -> InterruptBehavior {
        InterruptBehavior::Cancel
    }

    fn observes_cancellation(&self) -> bool {
        true
    }

    fn activity(&self, args: &BashOutputArgs) -> Option<String> {
        Some(format!("Reading {}", args.job_id))
    }

    fn extensions(&self) -> Extensions {
        permissions().into_extensions()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentcore_stages::Typed;
    use agentcore_stages::{EventSink, GatedArgs, Tool};
    use serde_json::json;

    #[test]
    fn it_is_judged_as_a_read_and_a_background_command_as_a_command() {
        let args = json!({"job_id": "job-1", "wait_ms": 10, "filter": "x"});
        assert_eq!(permissions().describe(&args), Access::nothing());
        let background = json!({"command": "npm run dev", "run_in_background": true});
        assert_eq!(
            crate::tools::bash::permissions().describe(&background),
            Access::command("npm run dev")
        );
    }

    #[tokio::test]
    async fn waits_over_the_bound_are_refused_with_the_fix() {
        let tool = Typed::new(BashOutputTool::new(Arc::new(Jobs::default())));
        let cx = CallContext::for_test("u", EventSink::noop());
        let args = json!({"job_id": "job-1", "wait_ms": MAX_WAIT_MS + 1});
        let err = tool
            .execute(GatedArgs::for_test(args), &cx)
            .await
            .unwrap_err();
        assert_eq!(
            err,
            ToolError::new(
                "wait_ms must be at most 60000; got 60001. Call bash_output again to wait longer."
            )
        );
        assert!(tool.schema()["properties"]["wait_ms"]["maximum"] == 60_000);
    }
}
