//! The `write` tool: a whole file, written exactly as given.
//!
//! A new file needs no read; overwriting needs a full read of the file as
//! it is now (a partial read is not enough: the model would overwrite what
//! it never saw). The write is atomic, keeps mode and owner, and writes
//! hard-linked files in place.

use std::io;
use std::path::PathBuf;

use agentcore_stages::{
    BoxFuture, CallContext, GatedArgs, InterruptBehavior, Tool, ToolError, ToolOutput,
    ValidationFailure,
};
use serde::Deserialize;
use serde_json::{Value, json};

use super::beneath::FileError;
use super::blocking::{bad_args, run_blocking};
use super::diff::unified_diff;
use super::edit::{
    MODIFIED_BEFORE_WRITE, MODIFIED_SINCE_READ, NOT_READ, PATH_ERROR_CODE, blocking_check,
    cancelled, commit_failure, lock_or_cancel, read_existing, refuse_read_denied, stamp_written,
    write_through,
};
use super::read::shown_arg;
use super::read_state::{FileReadState, Freshness, ShownLines};
use super::text;
use super::workspace::Workspace;

const DESCRIPTION: &str = "Writes a file, replacing it if it exists; missing parent directories \
are created. The content is written exactly as given. To overwrite an existing file, read all of \
it first with the read tool (writing a file you have not read, or that changed since, is \
refused). Prefer the edit tool for changing part of an existing file; use write for new files \
or complete rewrites.";

/// The `write` tool. Holds the session's [`Workspace`] and
/// [`FileReadState`] (shared with `read` and `edit`).
///
/// ```
/// use agentcore::tools::{read_state::FileReadState, workspace::Workspace, write::WriteTool};
/// use agentcore::Tool;
///
/// let ws = Workspace::new(std::env::temp_dir()).unwrap();
/// let write = WriteTool::new(ws, FileReadState::new());
/// assert_eq!(write.label(), Some("Write File"));
/// ```
#[derive(Debug)]
pub struct WriteTool {
    workspace: Workspace,
    state: FileReadState,
    schema: Value,
}

impl WriteTool {
    /// A `write` tool confined to `workspace`, checking and recording in
    /// `state`.
    pub fn new(workspace: Workspace, state: FileReadState) -> Self {
        let schema = json!({
            "type": "object",
            "properties": {
                "file_path": {
                    "type": "string",
                    "description": "The file to write, absolute or relative to the workspace root."
                },
                "content": {
                    "type": "string",
                    "description": "The complete content of the file."
                }
            },
            "required": ["file_path", "content"],
            "additionalProperties": false
        });
        Self {
            workspace,
            state,
            schema,
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
struct WriteArgs {
    file_path: String,
    content: String,
}

impl Tool for WriteTool {
    fn name(&self) -> &str {
        "write"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn schema(&self) -> &Value {
        &self.schema
    }

    fn label(&self) -> Option<&str> {
        Some("Write File")
    }

    fn read_only(&self, _args: &Value) -> bool {
        false
    }

    fn concurrency_safe(&self, _args: &Value) -> Option<bool> {
        Some(false)
    }

    fn interrupt_behavior(&self, _args: &Value) -> InterruptBehavior {
        InterruptBehavior::Block
    }

    /// Write watches cancellation itself, so the result it reports is what
    /// happened: Cancelled before the rename (nothing changed), Success
    /// after it.
    fn observes_cancellation(&self) -> bool {
        true
    }

    fn activity(&self, args: &Value) -> Option<String> {
        let path = args.get("file_path")?.as_str()?;
        Some(format!("Writing {}", shown_arg(&self.workspace, path)))
    }

    fn validate<'a>(
        &'a self,
        args: &'a Value,
        _cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<(), ValidationFailure>> {
        Box::pin(async move {
            let args: WriteArgs = serde_json::from_value(args.clone()).map_err(|e| {
                ValidationFailure::new(PATH_ERROR_CODE, format!("invalid arguments: {e}"))
            })?;
            let workspace = self.workspace.clone();
            let state = self.state.clone();
            blocking_check(move || check(&workspace, &state, &args)).await
        })
    }

    fn preview<'a>(
        &'a self,
        args: &'a Value,
        _cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<Option<String>, ToolError>> {
        Box::pin(async move {
            let args: WriteArgs =
                serde_json::from_value(args.clone()).map_err(|e| bad_args("write", e))?;
            let workspace = self.workspace.clone();
            tokio::task::spawn_blocking(move || preview(&workspace, &args))
                .await
                .map_err(|e| ToolError::new(format!("internal error in the tool: {e}")))?
                .map(Some)
        })
    }

    fn execute<'a>(
        &'a self,
        args: GatedArgs,
        cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let args: WriteArgs = args.parse().map_err(|e| bad_args("write", e))?;
            let path = self
                .workspace
                .resolve_new(&args.file_path)
                .map_err(|e| ToolError::new(e.to_string()))?;
            let shown = self.workspace.display(&path);
            let lock = lock_or_cancel(&self.state, &path, cx, &shown).await?;
            let workspace = self.workspace.clone();
            let state = self.state.clone();
            run_blocking(cx, move |token| {
                let _lock = lock;
                execute(&workspace, &state, path, &args, &token)
            })
            .await
        })
    }
}

/// validate: a read-denied path, the path (1), then for an existing file a
/// full, fresh read (2, 3).
fn check(
    workspace: &Workspace,
    state: &FileReadState,
    args: &WriteArgs,
) -> Result<(), ValidationFailure> {
    // Whether a file is there is part of what a read-deny rule hides.
    refuse_read_denied(workspace, &args.file_path, "writes")?;
    let path = workspace
        .resolve_new(&args.file_path)
        .map_err(|e| ValidationFailure::new(PATH_ERROR_CODE, e.to_string()))?;
    let shown = workspace.display(&path);
    let cannot =
        |e: io::Error| ValidationFailure::new(PATH_ERROR_CODE, format!("Cannot read {shown}: {e}"));
    let open = match workspace.open_file(&path) {
        Err(FileError::NotFound) => return Ok(()),
        Err(e) => {
            return Err(ValidationFailure::new(
                PATH_ERROR_CODE,
                e.message(&shown, "write"),
            ));
        }
        Ok(open) => open,
    };
    match state
        .freshness_of(&path, &open.file, &open.meta)
        .map_err(cannot)?
    {
        Freshness::Unchanged => Ok(()),
        Freshness::NotRead => Err(ValidationFailure::new(NOT_READ.0, NOT_READ.1)),
        // Overwriting what was never fully seen.
        Freshness::Partial => Err(ValidationFailure::new(
            NOT_READ.0,
            read_in_part(state.get(&path).and_then(|stamp| stamp.shown)),
        )),
        Freshness::Changed => Err(ValidationFailure::new(
            MODIFIED_SINCE_READ.0,
            MODIFIED_SINCE_READ.1,
        )),
    }
}

/// Code 2's text for a file read only in part: the lines shown in full
/// (every range, e.g. `1–2000, 2101–2300`) and the file's line count.
fn read_in_part(shown: Option<ShownLines>) -> String {
    let lines = match shown {
        Some(shown) if shown.ranges().is_empty() => {
            format!("none of lines 1\u{2013}{}", shown.total())
        }
        Some(shown) => format!("lines {} of {}", shown.describe(), shown.total()),
        // Not a text read (no stamp of this kind comes out partial today).
        None => "not every line".to_owned(),
    };
    format!(
        "File has only been read in part ({lines}). Read all of it before overwriting it, or change it with edit."
    )
}

fn preview(workspace: &Workspace, args: &WriteArgs) -> Result<String, ToolError> {
    let path = workspace
        .resolve_new(&args.file_path)
        .map_err(|e| ToolError::new(e.to_string()))?;
    let shown = workspace.display(&path);
    let old = read_existing(workspace, &path)
        .map_err(|e| ToolError::new(e.message(&shown, "write")))?
        .unwrap_or_default();
    Ok(unified_diff(
        &shown,
        &text::for_display(&old),
        &args.content,
    ))
}

fn execute(
    workspace: &Workspace,
    state: &FileReadState,
    path: PathBuf,
    args: &WriteArgs,
    token: &tokio_util::sync::CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let shown = workspace.display(&path);
    let existing = match workspace.open_file(&path) {
        Ok(open) => Some(open),
        Err(FileError::NotFound) => None,
        Err(e) => return Err(ToolError::new(e.message(&shown, "write"))),
    };
    let mut hash = 0;
    if let Some(open) = &existing {
        // The last check, under the path lock, right before the write: a
        // file created or changed while the call waited at the gate is not
        // overwritten.
        match state.freshness_of(&path, &open.file, &open.meta) {
            Ok(Freshness::Unchanged) => {}
            Ok(_) => return Err(ToolError::new(MODIFIED_BEFORE_WRITE)),
            Err(e) => return Err(ToolError::new(format!("Cannot read {shown}: {e}"))),
        }
        match state.get(&path) {
            Some(stamp) => hash = stamp.hash,
            None => return Err(ToolError::new(MODIFIED_BEFORE_WRITE)),
        }
    }
    if token.is_cancelled() {
        return Err(cancelled(&shown));
    }
    let bytes = args.content.as_bytes();
    let written = write_through(workspace, &path, existing.as_ref(), hash, bytes, token)
        .map_err(|e| commit_failure(e, &shown, "write"))?;
    // Past the point of no return: the call reports what happened.
    stamp_written(state, &path, &written, bytes);
    let mut out = if existing.is_some() {
        format!("The file {shown} has been updated successfully.")
    } else {
        format!("File created successfully at: {shown}")
    };
    if let Some(note) = written.note() {
        out.push(' ');
        out.push_str(&note);
    }
    Ok(ToolOutput::text(out))
}
