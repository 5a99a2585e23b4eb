//! The `edit` tool: exact string replacement in a file the model has read.
//!
//! The text replacement itself is [`apply_edit`] (on decoded text) and
//! [`edit_bytes`] (on a file's bytes: decode, normalize line endings,
//! replace, encode back), pure functions that property tests and the
//! `edit_apply` fuzz target call directly.
//!
//! ```
//! use agentcore::tools::edit::{EditError, apply_edit};
//!
//! assert_eq!(apply_edit("a b a", "b", "c", false).unwrap(), "a c a");
//! assert_eq!(apply_edit("a b a", "a", "x", true).unwrap(), "x b x");
//! let err = apply_edit("a b a", "a", "x", false).unwrap_err();
//! assert_eq!(err, EditError::Ambiguous(2));
//! assert_eq!(err.code(), 5);
//! ```

mod apply;
mod snippet;

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use agentcore_stages::{
    BoxFuture, CallContext, GatedArgs, InterruptBehavior, Tool, ToolError, ToolOutput,
    ValidationFailure,
};
use serde::Deserialize;
use serde_json::{Value, json};

pub use apply::{EditError, apply_edit, edit_bytes};

use self::apply::edit_decoded;
use self::snippet::snippet;
use super::atomic::{Base, CommitError, Written, commit};
use super::beneath::{CreatedDirs, FileError};
use super::blocking::{bad_args, run_blocking};
use super::diff::unified_diff;
use super::read::shown_arg;
use super::read_state::{FileReadState, Freshness, ReadStamp, hash_bytes};
use super::text;
use super::workspace::{OpenFile, Workspace};

/// Code and message when the file is not in the ledger (tools.md code 2).
pub const NOT_READ: (i64, &str) = (
    2,
    "File has not been read yet. Read it first before writing to it.",
);
/// Code and message when the file changed since it was read (code 3).
pub const MODIFIED_SINCE_READ: (i64, &str) = (
    3,
    "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.",
);
/// The message when the file changed while the call waited at the gate.
pub const MODIFIED_BEFORE_WRITE: &str =
    "File has been unexpectedly modified. Read it again before attempting to write it.";
/// The code for path problems (outside the workspace, missing, a
/// directory); codes 2–8 are tools.md's.
pub const PATH_ERROR_CODE: i64 = 1;

const DESCRIPTION: &str = "Performs an exact string replacement in a file. Read the file first \
with the read tool: editing a file you have not read, or that changed since you read it, is \
refused. `old_string` must match the file exactly, including indentation (copy it from the read \
output without the line-number prefix); it must be unique in the file unless `replace_all` is \
true, so include enough surrounding lines to make it unique. `replace_all` replaces every \
occurrence, e.g. to rename a variable. An empty `old_string` creates a new file with \
`new_string` as its content. Line endings (CRLF), a byte-order mark and UTF-16 encoding are kept.";


/// The `edit` tool. Holds the session's [`Workspace`] and
/// [`FileReadState`] (shared with `read` and `write`).
///
/// ```
/// use agentcore::tools::{edit::EditTool, read_state::FileReadState, workspace::Workspace};
/// use agentcore::Tool;
///
/// let ws = Workspace::new(std::env::temp_dir()).unwrap();
/// let edit = EditTool::new(ws, FileReadState::new());
/// assert_eq!(edit.label(), Some("Edit File"));
/// assert!(!edit.read_only(&serde_json::json!({})));
/// ```
#[derive(Debug)]
pub struct EditTool {
    workspace: Workspace,
    state: FileReadState,
    schema: Value,
}

impl EditTool {
    /// An `edit` tool confined to `workspace`, checking and recording in
    /// `state`.
    pub fn new(workspace: Workspace, state: FileReadState) -> Self {
        let schema = json!({
            "type": "object",
            "properties": {
                "file_path": {
                    "type": "string",
                    "description": "The file to modify, absolute or relative to the workspace root."
                },
                "old_string": {
                    "type": "string",
                    "description": "The exact text to replace, as it appears in the file (without read's line-number prefixes). Empty to create a new file."
                },
                "new_string": {
                    "type": "string",
                    "description": "The text to replace it with (must differ from old_string)."
                },
                "replace_all": {
                    "type": "boolean",
                    "default": false,
                    "description": "Replace every occurrence of old_string (default false: it must occur exactly once)."
                }
            },
            "required": ["file_path", "old_string", "new_string"],
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
struct EditArgs {
    file_path: String,
    old_string: String,
    new_string: String,
    #[serde(default)]
    replace_all: bool,
}

impl Tool for EditTool {
    fn name(&self) -> &str {
        "edit"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn schema(&self) -> &Value {
        &self.schema
    }

    fn label(&self) -> Option<&str> {
        Some("Edit File")
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

    /// Edit watches cancellation itself, so the result it reports is what
    /// happened: Cancelled before the rename (nothing changed), Success
    /// after it.
    fn observes_cancellation(&self) -> bool {
        true
    }

    fn activity(&self, args: &Value) -> Option<String> {
        let path = args.get("file_path")?.as_str()?;
        Some(format!("Editing {}", shown_arg(&self.workspace, path)))
    }

    fn validate<'a>(
        &'a self,
        args: &'a Value,
        _cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<(), ValidationFailure>> {
        Box::pin(async move {
            let args = parse_for_check(args)?;
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
            let args: EditArgs =
                serde_json::from_value(args.clone()).map_err(|e| bad_args("edit", e))?;
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
            let args: EditArgs = args.parse().map_err(|e| bad_args("edit", e))?;
            let path = self
                .workspace
                .resolve_new(&args.file_path)
                .map_err(|e| ToolError::new(e.to_string()))?;
            let shown = self.workspace.display(&path);
            let lock = lock_or_cancel(&self.state, &path, cx, &shown).await?;
            let workspace = self.workspace.clone();
            let state = self.state.clone();
            run_blocking(cx, move |token| {
                // Held until the write is done and stamped, even if the
                // call's future is dropped meanwhile.
                let _lock = lock;
                execute(&workspace, &state, path, &args, &token)
            })
            .await
        })
    }
}

fn parse_for_check<T: for<'de> Deserialize<'de>>(args: &Value) -> Result<T, ValidationFailure> {
    serde_json::from_value(args.clone())
        .map_err(|e| ValidationFailure::new(PATH_ERROR_CODE, format!("invalid arguments: {e}")))
}

/// Runs a read-only check on the blocking pool.
pub(crate) async fn blocking_check<F>(check: F) -> Result<(), ValidationFailure>
where
    F: FnOnce() -> Result<(), ValidationFailure> + Send + 'static,
{
    tokio::task::spawn_blocking(check)
        .await
        .unwrap_or_else(|e| {
            Err(ValidationFailure::new(
                PATH_ERROR_CODE,
                format!("internal error in the tool: {e}"),
            ))
        })
}

fn path_failure(e: impl ToString) -> ValidationFailure {
    ValidationFailure::new(PATH_ERROR_CODE, e.to_string())
}

fn edit_failure(e: EditError) -> ValidationFailure {
    ValidationFailure::new(e.code(), e.to_string())
}

/// Waits for the path lock of `path`, or for the call's cancellation
/// (then nothing was done: Cancelled).
pub(crate) async fn lock_or_cancel(
    state: &FileReadState,
    path: &Path,
    cx: &CallContext,
    shown: &str,
) -> Result<tokio::sync::OwnedMutexGuard<()>, ToolError> {
    let lock = state.path_lock(path);
    tokio::select! {
        biased;
        () = cx.cancellation().cancelled() => Err(cancelled(shown)),
        guard = lock.lock_owned() => Ok(guard),
    }
}

/// The result of a write or edit cancelled before its point of no return.
pub(crate) fn cancelled(shown: &str) -> ToolError {
    ToolError::cancelled(vec![agentcore_stages::Content::text(format!(
        "Cancelled before anything was written; {shown} is unchanged."
    ))])
}

/// The failure for a [`CommitError`]: the call did not change the file.
pub(crate) fn commit_failure(e: CommitError, shown: &str, verb: &str) -> ToolError {
    match e {
        CommitError::Cancelled => cancelled(shown),
        CommitError::Moved => ToolError::new(MODIFIED_BEFORE_WRITE),
        CommitError::File(e) => ToolError::new(e.message(shown, verb)),
    }
}

/// Records the ledger stamp of the tool's own write, from the metadata of
/// the handle the bytes went through, so it matches the file as written.
pub(crate) fn stamp_written(state: &FileReadState, path: &Path, written: &Written, bytes: &[u8]) {
    let stamp = ReadStamp::new(&written.meta, hash_bytes(bytes), false, SystemTime::now());
    state.record(path, stamp);
}

/// Reads a whole open file.
pub(crate) fn read_all(mut file: &File, len: u64) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Refuses a path that a read-deny rule covers
/// ([`Workspace::is_read_denied`], fed from the approval engine's read
/// filter), before
/// anything about the file is looked at: the tools' own checks run before
/// the gate, and their answers (not read yet, does not exist, is a
/// directory, …) would tell what is there. One answer, whatever is there.
/// Judged on the path as given, then on the path with symlinks resolved.
pub(crate) fn refuse_read_denied(
    workspace: &Workspace,
    given: &str,
    verb: &str,
) -> Result<(), ValidationFailure> {
    let denied = || {
        ValidationFailure::new(
            PATH_ERROR_CODE,
            format!(
                "denied by a policy rule that denies reading {given}: this call {verb} {given}. The user does not allow it; do not retry it or work around it with another tool, and choose a different approach."
            ),
        )
    };
    if workspace.is_read_denied(&workspace.root().join(given)) {
        return Err(denied());
    }
    // The longest prefix that resolves: a path that cannot be resolved
    // (`link/x/y` with `x` a file) is judged by where its resolvable part
    // leads, so the resolution error cannot tell what is there either.
    for prefix in Path::new(given).ancestors() {
        if prefix.as_os_str().is_empty() {
            break;
        }
        let Some(prefix) = prefix.to_str() else {
            break;
        };
        if let Ok(resolved) = workspace.resolve_new(prefix) {
            if workspace.is_read_denied(&resolved) {
                return Err(denied());
            }
            break;
        }
    }
    Ok(())
}

/// Reads a whole file through the workspace (beneath its root, no link
/// followed, regular files only); `Ok(None)` when there is none.
pub(crate) fn read_existing(
    workspace: &Workspace,
    path: &Path,
) -> Result<Option<Vec<u8>>, FileError> {
    match workspace.open_file(path) {
        Ok(open) => Ok(Some(read_all(&open.file, open.meta.len())?)),
        Err(FileError::NotFound) => Ok(None),
        Err(e) => Err(e),
    }
}

/// validate: a read-denied path, then codes 6, 1, 8, 7, 2, 3, 4, 5 in that
/// order. Read-only.
fn check(
    workspace: &Workspace,
    state: &FileReadState,
    args: &EditArgs,
) -> Result<(), ValidationFailure> {
    refuse_read_denied(workspace, &args.file_path, "edits")?;
    if args.old_string == args.new_string {
        return Err(edit_failure(EditError::NoChange));
    }
    let path = workspace
        .resolve_new(&args.file_path)
        .map_err(path_failure)?;
    let shown = workspace.display(&path);
    let open = match workspace.open_file(&path) {
        Ok(open) => open,
        Err(FileError::NotFound) => {
            return if args.old_string.is_empty() {
                // Creating a new file needs no read.
                Ok(())
            } else {
                Err(path_failure(format!(
                    "File does not exist: {shown}. To create it, give an empty old_string (or use the write tool)."
                )))
            };
        }
        Err(e) => return Err(path_failure(e.message(&shown, "edit"))),
    };
    let bytes = read_all(&open.file, open.meta.len())
        .map_err(|e| path_failure(format!("Cannot read {shown}: {e}")))?;
    let decoded = text::decode(&bytes).ok_or_else(|| edit_failure(EditError::NotText))?;
    if args.old_string.is_empty() && !decoded.text.is_empty() {
        return Err(edit_failure(EditError::FileExists));
    }
    match state
        .freshness_of(&path, &open.file, &open.meta)
        .map_err(|e| path_failure(format!("Cannot read {shown}: {e}")))?
    {
        Freshness::NotRead => return Err(ValidationFailure::new(NOT_READ.0, NOT_READ.1)),
        Freshness::Changed => {
            return Err(ValidationFailure::new(
                MODIFIED_SINCE_READ.0,
                MODIFIED_SINCE_READ.1,
            ));
        }
        // An edit changes only text the model quotes: a partial read will do.
        Freshness::Partial | Freshness::Unchanged => {}
    }
    let format = decoded.format;
    let (old, new) = (
        format.normalize(&args.old_string),
        format.normalize(&args.new_string),
    );
    count_check(&decoded.text, &old, &new, args)
}

/// Codes 4 and 5 without building the new text.
fn count_check(text: &str, old: &str, new: &str, args: &EditArgs) -> Result<(), ValidationFailure> {
    if old == new {
        return Err(edit_failure(EditError::NoChange));
    }
    if old.is_empty() {
        return Ok(());
    }
    match text.matches(old).count() {
        0 => Err(edit_failure(EditError::NotFound(args.old_string.clone()))),
        n if n > 1 && !args.replace_all => Err(edit_failure(EditError::Ambiguous(n))),
        _ => Ok(()),
    }
}

fn preview(workspace: &Workspace, args: &EditArgs) -> Result<String, ToolError> {
    let path = workspace
        .resolve_new(&args.file_path)
        .map_err(|e| ToolError::new(e.to_string()))?;
    let shown = workspace.display(&path);
    let bytes = read_existing(workspace, &path)
        .map_err(|e| ToolError::new(e.message(&shown, "edit")))?
        .unwrap_or_default();
    let edited = edit_decoded(&bytes, &args.old_string, &args.new_string, args.replace_all)
        .map_err(|e| ToolError::new(e.to_string()))?;
    Ok(unified_diff(&shown, &edited.old_text, &edited.applied.text))
}

fn execute(
    workspace: &Workspace,
    state: &FileReadState,
    path: PathBuf,
    args: &EditArgs,
    token: &tokio_util::sync::CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let shown = workspace.display(&path);
    let modified = || ToolError::new(MODIFIED_BEFORE_WRITE);
    let describe = |e: FileError| ToolError::new(e.message(&shown, "edit"));
    let existing = match workspace.open_file(&path) {
        Ok(open) => Some(open),
        Err(FileError::NotFound) => None,
        Err(e) => return Err(describe(e)),
    };
    let (bytes, hash) = match &existing {
        None if !args.old_string.is_empty() => {
            // It existed when validated and is gone now.
            return Err(modified());
        }
        None => (Vec::new(), hash_bytes(b"")),
        Some(open) => {
            // The last check, under the path lock, right before the write.
            match state.freshness_of(&path, &open.file, &open.meta) {
                Ok(Freshness::Partial | Freshness::Unchanged) => {}
                Ok(Freshness::NotRead | Freshness::Changed) => return Err(modified()),
                Err(e) => return Err(ToolError::new(format!("Cannot read {shown}: {e}"))),
            }
            let bytes = read_all(&open.file, open.meta.len())
                .map_err(|e| ToolError::new(format!("Cannot read {shown}: {e}")))?;
            // The bytes edited must be the bytes the model saw.
            let hash = hash_bytes(&bytes);
            match state.get(&path) {
                Some(stamp) if stamp.hash == hash => (bytes, hash),
                _ => return Err(modified()),
            }
        }
    };
    if token.is_cancelled() {
        return Err(cancelled(&shown));
    }
    let edited = edit_decoded(&bytes, &args.old_string, &args.new_string, args.replace_all)
        .map_err(|e| ToolError::new(e.to_string()))?;
    let new_bytes = text::encode(&edited.applied.text, edited.format);
    let written = write_through(workspace, &path, existing.as_ref(), hash, &new_bytes, token)
        .map_err(|e| commit_failure(e, &shown, "edit"))?;
    // Past the point of no return: the call reports what happened.
    stamp_written(state, &path, &written, &new_bytes);
    let mut out = format!("The file {shown} has been updated successfully.");
    if let Some(note) = written.note() {
        out.push(' ');
        out.push_str(&note);
    }
    let snippet = snippet(&edited.applied.text, &edited.applied.spans);
    if !snippet.is_empty() {
        out.push('\n');
        out.push_str(&snippet);
    }
    Ok(ToolOutput::text(out))
}

/// Commits `bytes` to `path`: over `existing` (the file as opened and
/// checked, whose bytes hash to `hash`), or as a new file, creating its
/// missing parent directories beneath the root.
pub(crate) fn write_through(
    workspace: &Workspace,
    path: &Path,
    existing: Option<&OpenFile>,
    hash: u128,
    bytes: &[u8],
    token: &tokio_util::sync::CancellationToken,
) -> Result<Written, CommitError> {
    match existing {
        Some(open) => {
            let base = Base {
                file: &open.file,
                meta: &open.meta,
                hash,
            };
            commit(
                &open.dir,
                &open.name,
                Some(base),
                bytes,
                token,
                CreatedDirs::default(),
            )
        }
        None => {
            if token.is_cancelled() {
                return Err(CommitError::Cancelled);
            }
            let (dir, name, created) = workspace.create_parent(path)?;
            commit(&dir, &name, None, bytes, token, created)
        }
    }
}

