//! The `write_stdin` tool: types into a terminal session started by bash
//! with `tty`, and returns what the program printed since.

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use agentcore_stages::TypedTool;
use agentcore_stages::{CallContext, Extensions, InterruptBehavior, ToolError, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;

use super::Jobs;
use super::tool::{yield_of, yield_schema};
use crate::access::{Access, Permissions};
use crate::limits::bash::{DEFAULT_YIELD_MS, MAX_INPUT_BYTES, MAX_YIELD_MS};
use crate::tools::schema::builtin_args;
use crate::tools::spec::ToolSpec;
use crate::tools::text;

/// How long typing may wait for the program to take the text (a program
/// that does not read fills its terminal's buffer).
const TYPE_WAIT: Duration = Duration::from_secs(2);

static DESCRIPTION: LazyLock<String> = LazyLock::new(|| {
    format!(
        "\
Types into a terminal session started by bash with `tty: true`, then returns what \
the program printed since the last look and the session's status (`Status: running`, \
`Status: running, waiting for input`, or how it ended).

- `text` is typed as is: end a line with `\\n` to press Enter; control keys are \
characters, e.g. `\\u0003` for Ctrl-C, `\\u0004` for Ctrl-D (end of input), \
`\\u001b` for Escape. Empty `text` types nothing and only reads.
- `yield_ms` waits (default {DEFAULT_YIELD_MS}, at most {MAX_YIELD_MS} ms) for \
output; it returns sooner when the program ends or waits for input again.
- At most {} bytes per call. A session is killed by kill_shell, after its lifetime \
cap, and when the session ends.",
        text::thousands(MAX_INPUT_BYTES),
    )
});

/// The `write_stdin` tool's identity: its name and label.
pub const SPEC: ToolSpec = ToolSpec::new("write_stdin", "Type Into Session");

/// The arguments of `write_stdin`. The field docs are the descriptions
/// the model reads.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(transform = builtin_args)]
pub struct WriteStdinArgs {
    /// The session id bash returned ("Started terminal session ID").
    pub session_id: String,
    /// The text to type; `\n` presses Enter, `\u0003` is Ctrl-C. Empty to only read.
    pub text: String,
    /// Optional: milliseconds to wait for output before returning (default 1000, at most 60000).
    #[schemars(transform = yield_schema)]
    pub yield_ms: Option<u64>,
}

/// What a call of `write_stdin` touches: nothing new. Typing into a
/// session goes to the program the session's own `bash` call started, as
/// that call was judged (in the sandbox, if it ran there): the session's
/// decision covers it.
pub fn permissions() -> Permissions {
    Permissions::typed(|_: &WriteStdinArgs| Access::nothing())
}

/// The `write_stdin` tool over a session's [`Jobs`].
#[derive(Debug)]
pub struct WriteStdinTool {
    jobs: Arc<Jobs>,
}

impl WriteStdinTool {
    /// Types into the terminal sessions of `jobs` (the table the session's
    /// bash starts them in).
    pub fn new(jobs: Arc<Jobs>) -> Self {
        Self { jobs }
    }
}

impl TypedTool for WriteStdinTool {
    type Args = WriteStdinArgs;

    fn name(&self) -> &str {
        SPEC.name
    }

    fn description(&self) -> &str {
        &DESCRIPTION
    }

    async fn execute(
        &self,
        args: WriteStdinArgs,
        cx: &CallContext,
    ) -> Result<ToolOutput, ToolError> {
        let wait = yield_of(args.yield_ms)?;
        if args.text.len() > MAX_INPUT_BYTES {
            return Err(ToolError::new(format!(
                "text is {} bytes; at most {} bytes are typed in one call. Split it over several calls.",
                args.text.len(),
                text::thousands(MAX_INPUT_BYTES)
            )));
        }
        let job = self.jobs.get(&args.session_id).map_err(ToolError::new)?;
        if !job.has_terminal() {
            return Err(ToolError::new(format!(
                "{} is a background job without a terminal: nothing can be typed into it. \
                 Read it with bash_output; to type into a program, start it with bash and `tty: true`.",
                job.id()
            )));
        }
        if !job.running() {
            let report = job.read(None);
            return Err(ToolError::new(format!(
                "Session {} has ended; nothing was typed.\n{report}",
                job.id()
            )));
        }
        let mut note = String::new();
        #[cfg(target_os = "linux")]
        if !args.text.is_empty() {
            let bytes = args.text.as_bytes();
            match job.type_in(bytes, TYPE_WAIT).await {
                Some(Ok(n)) if n == bytes.len() => {}
                Some(Ok(n)) => {
                    note = format!(
                        "(only {n} of {} bytes were typed: the program is not reading its input)\n",
                        bytes.len()
                    );
                }
                Some(Err(e)) => {
                    return Err(ToolError::new(format!(
                        "Could not type into session {}: {e}. Read it with bash_output or stop it with kill_shell.",
                        job.id()
                    )));
                }
                None => {}
            }
        }
        #[cfg(target_os = "linux")]
        job.settle_terminal(wait, cx.cancellation()).await;
        #[cfg(not(target_os = "linux"))]
        let _ = (wait, cx, TYPE_WAIT);
        note.push_str(&job.read(None));
        Ok(ToolOutput::text(note))
    }

    fn label(&self) -> Option<&str> {
        Some(SPEC.label)
    }

    fn read_only(&self, _args: &WriteStdinArgs) -> bool {
        false
    }

    fn concurrency_safe(&self, _args: &WriteStdinArgs) -> Option<bool> {
        Some(false)
    }

    // What was typed is typed; an interrupt ends the wait for output.
    fn interrupt_behavior(&self, _args: &WriteStdinArgs) -> InterruptBehavior {
        InterruptBehavior::Cancel
    }

    fn observes_cancellation(&self) -> bool {
        true
    }

    fn activity(&self, args: &WriteStdinArgs) -> Option<String> {
        Some(format!("Typing into {}", args.session_id))
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

    fn text(err: &ToolError) -> String {
        err.content.iter().filter_map(|c| c.as_text()).collect()
    }

    #[tokio::test]
    async fn oversized_text_and_waits_are_refused_with_the_fix() {
        let tool = Typed::new(WriteStdinTool::new(Arc::new(Jobs::default())));
        let cx = CallContext::for_test("u", EventSink::noop());
        let huge = "x".repeat(MAX_INPUT_BYTES + 1);
        let err = tool
            .execute(
                GatedArgs::for_test(json!({"session_id": "job-1", "text": huge})),
                &cx,
            )
            .await
            .unwrap_err();
        assert!(text(&err).contains("at most 65,536 bytes"), "{err:?}");
        let err = tool
            .execute(
                GatedArgs::for_test(
                    json!({"session_id": "job-1", "text": "", "yield_ms": MAX_YIELD_MS + 1}),
                ),
                &cx,
            )
            .await
            .unwrap_err();
        assert!(
            text(&err).contains("yield_ms must be at most 60000"),
            "{err:?}"
        );
        assert_eq!(tool.schema()["properties"]["yield_ms"]["maximum"], 60_000);
    }

    #[tokio::test]
    async fn an_unknown_session_is_refused_naming_the_running_ones() {
        let tool = Typed::new(WriteStdinTool::new(Arc::new(Jobs::default())));
        let cx = CallContext::for_test("u", EventSink::noop());
        let err = tool
            .execute(
                GatedArgs::for_test(json!({"session_id": "job-9", "text": "y\n"})),
                &cx,
            )
            .await
            .unwrap_err();
        assert!(
            text(&err).contains("no background job \"job-9\""),
            "{err:?}"
        );
    }

    #[test]
    fn it_declares_no_new_access() {
        let args = json!({"session_id": "job-1", "text": "rm -rf /\n"});
        assert_eq!(permissions().describe(&args), Access::nothing());
    }
}
