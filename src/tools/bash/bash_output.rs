//! The `bash_output` tool: what a background job printed since the last
//! look, and whether it still runs; or, read again from its saved file, the
//! whole output of a job or of a bash call whose result was cut, a page of
//! lines at a time or the lines a pattern matches.

use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use agentcore_stages::TypedTool;
use agentcore_stages::{CallContext, Extensions, InterruptBehavior, ToolError, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;

use super::Jobs;
use super::jobs::status_line;
use super::kept::{self, Query, Source};
use crate::access::{Access, Permissions};
use crate::fs::blocking::run_blocking;
use crate::limits::bash::{DEFAULT_REREAD_LIMIT, MAX_REREAD_CONTEXT, MAX_REREAD_LIMIT};
use crate::limits::bash::{MAX_REREAD_LINE_CHARS, MAX_WAIT_MS};
use crate::process::OutputDir;
use crate::tools::schema::builtin_args;
use crate::tools::spec::ToolSpec;
use crate::tools::text;

/// The most a `filter` pattern may compile to, in bytes.
const FILTER_SIZE_LIMIT: usize = 1 << 20;

static DESCRIPTION: LazyLock<String> = LazyLock::new(|| {
    format!(
        "\
Reads the output of a background job started by bash with `run_in_background`, \
or of a terminal session started with `tty`: what it printed since the previous \
bash_output of that job, then its status (`Status: running`, `Status: running, \
waiting for input` for a session whose program waits for what is typed, \
`Status: exited with code N`, `Status: killed by signal S` or `Status: stopped by kill_shell`).

- `wait_ms` waits (at most {MAX_WAIT_MS} ms) for new output or the job's exit, \
whichever comes first; without it the call returns at once.
- `filter` is a regular expression: only the new lines that match are shown (the \
others are read all the same).
- New output longer than {chars} characters keeps its beginning and its end; the full \
output is in the file whose path is given.

Reads a saved output again, whole: give `call_id` for a finished bash call whose \
output was cut (its result says `Read it again with bash_output {{\"call_id\": ...}}`), \
or `job_id` with `offset`, `limit` or `pattern` (a job's output is always saved; a \
running job's as far as it got). Give `job_id` or `call_id`, not both.
- Lines come numbered as `read` numbers them; `offset` is the line to start at (1-based), \
`limit` how many lines to show (default {DEFAULT_REREAD_LIMIT}, at most {MAX_REREAD_LIMIT}).
- `pattern` is a regular expression: only the lines that match are shown, each with \
`context` lines before and after (default 0, at most {MAX_REREAD_CONTEXT}), with `--` \
between groups that are not adjacent; `limit` then counts matching lines. A line is shown and matched on its \
first {line_chars} characters.
- At most {chars} characters are shown; the last line says which lines were shown and, \
when more is left, the call that reads on from the next `offset`.
- Saved outputs are removed when the session ends, the oldest first when they pass \
{capacity_mib} MiB together, and after {age_hours} hours.",
        chars = text::thousands(crate::limits::bash::MAX_OUTPUT_CHARS),
        line_chars = text::thousands(MAX_REREAD_LINE_CHARS),
        capacity_mib = OutputDir::DEFAULT_CAPACITY / (1024 * 1024),
        age_hours = OutputDir::DEFAULT_MAX_AGE.as_secs() / 3600,
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
    /// The job id bash returned ("Started background job ID"). Give this or call_id.
    pub job_id: Option<String>,
    /// The id of a finished bash call whose output was cut, to read its saved output again. Give this or job_id.
    pub call_id: Option<String>,
    /// Optional: wait up to this many milliseconds (at most 60000) for new output or the job's exit, whichever comes first.
    #[schemars(range(max = 60_000))]
    pub wait_ms: Option<u64>,
    /// Optional regular expression: show only the new lines that match it.
    pub filter: Option<String>,
    /// Optional: the line of the saved output to start at (1-based). Reads the whole saved output instead of the new lines.
    #[schemars(range(min = 1))]
    pub offset: Option<u64>,
    /// Optional: how many lines of the saved output to show (default 200, at most 2000; with pattern, matching lines).
    #[schemars(range(min = 1, max = 2000))]
    pub limit: Option<u64>,
    /// Optional regular expression: show only the lines of the saved output that match it.
    pub pattern: Option<String>,
    /// Optional: lines shown before and after each line that matches pattern (default 0, at most 10).
    #[schemars(range(max = 10))]
    pub context: Option<u64>,
}

impl BashOutputArgs {
    /// Whether the call reads the whole saved output rather than the new
    /// lines.
    fn rereads(&self) -> bool {
        self.call_id.is_some()
            || self.offset.is_some()
            || self.limit.is_some()
            || self.pattern.is_some()
            || self.context.is_some()
    }
}

/// What a call of `bash_output` touches: nothing (it reads what a job of
/// this session printed), judged as a read.
pub fn permissions() -> Permissions {
    Permissions::typed(|_: &BashOutputArgs| Access::nothing())
}

/// The `bash_output` tool over a session's [`Jobs`] and, for the saved
/// outputs of bash calls, its [`OutputDir`].
#[derive(Debug)]
pub struct BashOutputTool {
    jobs: Arc<Jobs>,
    output_dir: Option<Arc<OutputDir>>,
}

impl BashOutputTool {
    /// Reads the jobs of `jobs` (the table the session's bash starts them in).
    /// Without [`output_dir`](Self::output_dir), no `call_id` is known.
    pub fn new(jobs: Arc<Jobs>) -> Self {
        Self {
            jobs,
            output_dir: None,
        }
    }

    /// Finds the saved outputs of bash calls (`call_id`) in `output_dir`,
    /// the folder the session's bash saves them in
    /// ([`BashTool::output_dir`](super::BashTool::output_dir)).
    pub fn output_dir(mut self, output_dir: Arc<OutputDir>) -> Self {
        self.output_dir = Some(output_dir);
        self
    }

    /// The saved output of bash call `call_id`, or why there is none.
    fn kept_call(&self, call_id: &str) -> Result<PathBuf, ToolError> {
        let stem = format!("bash-{call_id}");
        self.output_dir
            .as_ref()
            .and_then(|dir| dir.kept(&stem))
            .ok_or_else(|| {
                ToolError::new(format!(
                    "No kept output for call {}: only outputs that were cut are kept (a result \
                     that shows everything has nothing more to read), each for this session only, \
                     until the session's output folder removes it ({}). Use the call_id a result \
                     names in its \"Read it again with bash_output\" line; for a background job \
                     give job_id.",
                    kept::quote(call_id),
                    self.folder_caps(),
                ))
            })
    }

    /// `the oldest first past 512 MiB, or after 12 hours`: when the
    /// output folder removes a saved output.
    fn folder_caps(&self) -> String {
        let (capacity, age) = match &self.output_dir {
            Some(dir) => (dir.capacity(), dir.max_age()),
            None => (OutputDir::DEFAULT_CAPACITY, OutputDir::DEFAULT_MAX_AGE),
        };
        let secs = age.as_secs();
        let age = match secs {
            s if s >= 3600 && s % 3600 == 0 => format!("{} hours", s / 3600),
            s if s >= 60 && s % 60 == 0 => format!("{} minutes", s / 60),
            s => format!("{s} seconds"),
        };
        format!(
            "the oldest first past {} MiB, or after {age}",
            capacity / (1024 * 1024)
        )
    }

    /// Reads a saved output again (`call_id`, or `job_id` with `offset`,
    /// `limit`, `pattern` or `context`).
    async fn reread(
        &self,
        args: &BashOutputArgs,
        wait_ms: u64,
        cx: &CallContext,
    ) -> Result<ToolOutput, ToolError> {
        if args.filter.is_some() {
            return Err(ToolError::new(
                "filter applies to a job's new output only. To search the saved output, give pattern (and context) instead of filter.",
            ));
        }
        let query = query(args)?;
        let (key, id, path, status) = match (&args.job_id, &args.call_id) {
            (Some(job_id), _) => {
                let job = self.jobs.get(job_id).map_err(ToolError::new)?;
                let status = job
                    .status_after(Duration::from_millis(wait_ms), cx.cancellation())
                    .await;
                let path = job.full_output().map(PathBuf::from).ok_or_else(|| {
                    ToolError::new(format!(
                        "The output of {job_id} was not saved (its file could not be made). Read its new output with bash_output {{\"job_id\": {}}}.",
                        kept::quote(job_id)
                    ))
                })?;
                ("job", job_id, path, Some(status))
            }
            (None, Some(call_id)) => {
                if args.wait_ms.is_some() {
                    return Err(ToolError::new(
                        "wait_ms applies to a background job; the saved output of a bash call is complete. Leave wait_ms out.",
                    ));
                }
                ("call", call_id, self.kept_call(call_id)?, None)
            }
            (None, None) => return Err(ToolError::new(NEITHER)),
        };
        let source = Source {
            key: if status.is_some() {
                "job_id"
            } else {
                "call_id"
            },
            id,
            pattern: args.pattern.as_deref().filter(|p| !p.is_empty()),
            context: args.context,
            limit: args.limit,
            growing: matches!(status, Some(None)),
        };
        let offset = query.offset;
        let gone = format!(
            "The saved output of {key} {} is gone: the session's output folder removed it ({}). Run the command again to see its output.",
            kept::quote(id),
            self.folder_caps(),
        );
        let page = run_blocking(cx, move |token| {
            // Never through a link put in its place.
            let file = std::fs::File::options()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&path);
            let file = file.map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => ToolError::new(gone.clone()),
                _ => ToolError::new(format!(
                    "Could not read the saved output {}: {e}",
                    path.display()
                )),
            })?;
            kept::read_page(file, &query, &token).map_err(|e| match e.kind() {
                std::io::ErrorKind::Interrupted => {
                    ToolError::cancelled(ToolOutput::text("Interrupted").content)
                }
                _ => ToolError::new(format!(
                    "Could not read the saved output {}: {e}",
                    path.display()
                )),
            })
        })
        .await?;
        kept::check_offset(&page, offset, &source).map_err(ToolError::new)?;
        let mut text = kept::render(&page, offset, &source);
        if let Some(status) = status {
            text.push('\n');
            text.push_str(&status_line(status));
        }
        Ok(ToolOutput::text(text))
    }
}

/// The error when neither `job_id` nor `call_id` is given.
const NEITHER: &str = "Give job_id (a background job: \"Started background job ID\") or call_id (a bash call whose output was cut: its result says \"Read it again with bash_output {\"call_id\": ...}\").";

/// `offset`, `limit`, `pattern` and `context`, checked, with their defaults.
fn query(args: &BashOutputArgs) -> Result<Query, ToolError> {
    let limit = args.limit.unwrap_or(DEFAULT_REREAD_LIMIT);
    if limit == 0 {
        return Err(ToolError::new(format!(
            "limit must be at least 1 (default {DEFAULT_REREAD_LIMIT}). Give a number of lines from 1 to {MAX_REREAD_LIMIT}, or leave limit out."
        )));
    }
    if limit > MAX_REREAD_LIMIT {
        return Err(ToolError::new(format!(
            "limit must be at most {MAX_REREAD_LIMIT}; got {limit}. Read the output in pages: each result names the offset to read on from."
        )));
    }
    let context = args.context.unwrap_or(0);
    if context > MAX_REREAD_CONTEXT {
        return Err(ToolError::new(format!(
            "context must be at most {MAX_REREAD_CONTEXT} lines; got {context}. To see more around a line, read it with offset and limit."
        )));
    }
    let pattern = match args.pattern.as_deref().filter(|p| !p.is_empty()) {
        None => None,
        Some(pattern) => Some(compile(pattern).map_err(|e| {
            ToolError::new(format!(
                "pattern is not a valid regular expression: {e}. Fix the pattern (escape ( ) [ ] {{ }} . * + ? | \\ with a backslash to match them as text) or leave pattern out."
            ))
        })?),
    };
    if pattern.is_none() && context > 0 {
        return Err(ToolError::new(
            "context applies to the lines pattern matches; give a pattern, or read lines with offset and limit.",
        ));
    }
    Ok(Query {
        // `read` takes 0 for the first line too.
        offset: args.offset.unwrap_or(1).max(1),
        limit,
        pattern,
        context: usize::try_from(context).unwrap_or(0),
    })
}

/// A pattern or filter, compiled to at most [`FILTER_SIZE_LIMIT`] bytes.
fn compile(pattern: &str) -> Result<regex::Regex, regex::Error> {
    regex::RegexBuilder::new(pattern)
        .size_limit(FILTER_SIZE_LIMIT)
        .build()
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
        if args.job_id.is_some() && args.call_id.is_some() {
            return Err(ToolError::new(
                "Give job_id or call_id, not both: job_id names a background job, call_id a bash call whose output was cut.",
            ));
        }
        if args.rereads() {
            return self.reread(&args, wait_ms, cx).await;
        }
        let Some(job_id) = &args.job_id else {
            return Err(ToolError::new(NEITHER));
        };
        let filter = match args.filter.as_deref().filter(|f| !f.is_empty()) {
            None => None,
            Some(pattern) => Some(compile(pattern).map_err(|e| {
                ToolError::new(format!(
                    "filter is not a valid regular expression: {e}. Fix the pattern or leave filter out."
                ))
            })?),
        };
        let job = self.jobs.get(job_id).map_err(ToolError::new)?;
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
        match (&args.job_id, &args.call_id) {
            (Some(job_id), _) => Some(format!("Reading {job_id}")),
            (None, Some(call_id)) => Some(format!("Reading the output of call {call_id}")),
            (None, None) => None,
        }
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

    /// What a caller that skips the schema gets (the pipeline's schema
    /// check refuses most of these first).
    #[tokio::test]
    async fn bad_reread_arguments_are_refused_with_the_fix() {
        let tool = Typed::new(BashOutputTool::new(Arc::new(Jobs::default())));
        let cx = CallContext::for_test("u", EventSink::noop());
        for (args, message) in [
            (
                json!({"call_id": "c", "limit": 2001}),
                "limit must be at most 2000; got 2001. Read the output in pages: each result names the offset to read on from.",
            ),
            (
                json!({"call_id": "c", "limit": 0}),
                "limit must be at least 1 (default 200). Give a number of lines from 1 to 2000, or leave limit out.",
            ),
            (
                json!({"call_id": "c", "pattern": "x", "context": 11}),
                "context must be at most 10 lines; got 11. To see more around a line, read it with offset and limit.",
            ),
            (
                json!({"call_id": "c", "context": 2}),
                "context applies to the lines pattern matches; give a pattern, or read lines with offset and limit.",
            ),
            (
                json!({"call_id": "c", "wait_ms": 5}),
                "wait_ms applies to a background job; the saved output of a bash call is complete. Leave wait_ms out.",
            ),
        ] {
            let err = tool
                .execute(GatedArgs::for_test(args), &cx)
                .await
                .unwrap_err();
            assert_eq!(err, ToolError::new(message));
        }
        // Without an output folder no call is known.
        let err = tool
            .execute(GatedArgs::for_test(json!({"call_id": "c"})), &cx)
            .await
            .unwrap_err();
        assert!(
            format!("{err:?}").contains("No kept output for call"),
            "{err:?}"
        );
    }
}
