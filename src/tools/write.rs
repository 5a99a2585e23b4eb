//! The `write` tool: a whole file, written exactly as given.
//!
//! A new file is UTF-8. Content over an existing file in a legacy encoding
//! (windows-1252, Shift_JIS...) is written in that encoding, or refused
//! when the encoding cannot store one of its characters (code 12) or is
//! only a guess (code 13); ASCII content is the same bytes in all of them,
//! so only non-ASCII content makes the tool look at the old bytes.
//!
//! A new file needs no read; overwriting needs a full read of the file as
//! it is now (a partial read is not enough: the model would overwrite what
//! it never saw). The write is atomic, keeps mode and owner, and writes
//! hard-linked files in place.

use std::borrow::Cow;
use std::path::PathBuf;

use agentcore_stages::TypedTool;
use agentcore_stages::{
    CallContext, Extensions, InterruptBehavior, ToolError, ToolOutput, ValidationFailure,
};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::text::{self, Encoding, NotDecoded, Unencodable};
use crate::access::{Access, Permissions};
use crate::diff::unified_diff;
use crate::error_code::ErrorCode;
use crate::fs::beneath::FileError;
use crate::fs::file_tool::{
    FileTool, cancelled, cannot_read, commit_failure, path_failure, read_existing,
    refuse_read_denied, stamp_written, write_through,
};
use crate::fs::read_state::{FileReadState, Freshness, StaleRead, hash_bytes};
use crate::fs::workspace::Workspace;
use crate::tools::spec::ToolSpec;

const DESCRIPTION: &str = "Writes a file, replacing it if it exists; missing parent directories \
are created. The content is written exactly as given. To overwrite an existing file, read all of \
it first with the read tool (writing a file you have not read, or that changed since, is \
refused). Prefer the edit tool for changing part of an existing file; use write for new files \
or complete rewrites.";

/// The `write` tool's identity: its name, label, Claude Code name and path argument.
pub const SPEC: ToolSpec = ToolSpec::new("write", "Write File")
    .claude_code("Write")
    .path_fields(crate::tools::spec::path_fields!(WriteArgs: file_path));

/// The arguments of a `write` call. The field docs are the descriptions
/// the model reads in the schema.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
// The tool's description says what the call does; the schema adds nothing.
#[schemars(description = "")]
pub struct WriteArgs {
    /// The file to write, absolute or relative to the workspace root.
    pub file_path: String,
    /// The complete content of the file.
    pub content: String,
}

/// What a `write` call touches, for the approval engine: a write of its
/// `file_path`.
///
/// ```
/// use agentcore::access::Capability;
/// use serde_json::json;
///
/// let access = agentcore::tools::write::permissions()
///     .describe(&json!({"file_path": "notes.md", "content": ""}));
/// assert_eq!(access.capability, Capability::Write);
/// assert_eq!(access.paths, ["notes.md"]);
/// ```
pub fn permissions() -> Permissions {
    Permissions::typed(|args: &WriteArgs| Access::write([args.file_path.as_str()]))
}

/// The `write` tool. Holds the session's [`Workspace`] and
/// [`FileReadState`] (shared with `read` and `edit`). A [`TypedTool`]: the
/// kernel holds it as [`TypedTool::into_dyn`] makes it.
///
/// ```
/// use agentcore::fs::{read_state::FileReadState, workspace::Workspace};
/// use agentcore::tools::write::WriteTool;
/// use agentcore::TypedTool;
///
/// let ws = Workspace::new(std::env::temp_dir()).unwrap();
/// let write = WriteTool::new(ws, FileReadState::new()).into_dyn();
/// assert_eq!(write.label(), Some("Write File"));
/// ```
#[derive(Debug)]
pub struct WriteTool {
    files: FileTool,
}

impl WriteTool {
    /// A `write` tool confined to `workspace`, checking and recording in
    /// `state`.
    pub fn new(workspace: Workspace, state: FileReadState) -> Self {
        Self {
            files: FileTool { workspace, state },
        }
    }
}

impl TypedTool for WriteTool {
    type Args = WriteArgs;

    fn name(&self) -> &str {
        SPEC.name
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn label(&self) -> Option<&str> {
        Some(SPEC.label)
    }

    fn read_only(&self, _args: &WriteArgs) -> bool {
        false
    }

    fn concurrency_safe(&self, _args: &WriteArgs) -> Option<bool> {
        Some(false)
    }

    fn interrupt_behavior(&self, _args: &WriteArgs) -> InterruptBehavior {
        InterruptBehavior::Block
    }

    /// Write watches cancellation itself, so the result it reports is what
    /// happened: Cancelled before the rename (nothing changed), Success
    /// after it.
    fn observes_cancellation(&self) -> bool {
        true
    }

    fn activity(&self, args: &WriteArgs) -> Option<String> {
        Some(self.files.activity("Writing", &args.file_path))
    }

    fn extensions(&self) -> Extensions {
        permissions().into_extensions()
    }

    async fn validate(&self, args: &WriteArgs, _cx: &CallContext) -> Result<(), ValidationFailure> {
        self.files.validate(args, check).await
    }

    async fn preview(
        &self,
        args: &WriteArgs,
        cx: &CallContext,
    ) -> Result<Option<String>, ToolError> {
        self.files.preview(args, cx, preview).await
    }

    async fn execute(&self, args: WriteArgs, cx: &CallContext) -> Result<ToolOutput, ToolError> {
        let file_path = args.file_path.clone();
        self.files.execute(&file_path, args, cx, execute).await
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
        .map_err(path_failure)?;
    let shown = workspace.display(&path);
    let open = match workspace.open_file(&path) {
        Err(FileError::NotFound) => return Ok(()),
        Err(e) => return Err(path_failure(e.message(&shown, "write"))),
        Ok(open) => open,
    };
    match state
        .freshness_of(&path, &open.file, &open.meta)
        .map_err(|e| path_failure(cannot_read(&shown, &e)))?
    {
        Freshness::Unchanged if args.content.is_ascii() => Ok(()),
        // Non-ASCII content: codes 12 and 13 of the file's encoding.
        Freshness::Unchanged => {
            let old = read_existing(workspace, &path)
                .map_err(|e| path_failure(e.message(&shown, "write")))?
                .unwrap_or_default();
            content_bytes(&args.content, &old)
                .map(|_| ())
                .map_err(|(code, message)| ValidationFailure::new(code.into(), message))
        }
        Freshness::NotRead => Err(StaleRead::NotRead.into()),
        // Overwriting what was never fully seen.
        Freshness::Partial => {
            Err(StaleRead::ReadInPart(state.get(&path).and_then(|stamp| stamp.shown)).into())
        }
        Freshness::Changed => Err(StaleRead::ModifiedSinceRead.into()),
    }
}

fn preview(
    workspace: &Workspace,
    _state: &FileReadState,
    args: &WriteArgs,
) -> Result<String, ToolError> {
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
    token: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let shown = workspace.display(&path);
    let existing = match workspace.open_file(&path) {
        Ok(open) => Some(open),
        Err(FileError::NotFound) => None,
        Err(e) => return Err(ToolError::new(e.message(&shown, "write"))),
    };
    let mut hash = 0;
    let mut bytes = Cow::Borrowed(args.content.as_bytes());
    if let Some(open) = &existing {
        // The last check, under the path lock, right before the write: a
        // file created or changed while the call waited at the gate is not
        // overwritten.
        match state.freshness_of(&path, &open.file, &open.meta) {
            Ok(Freshness::Unchanged) => {}
            Ok(_) => return Err(StaleRead::ModifiedBeforeWrite.into()),
            Err(e) => return Err(ToolError::new(cannot_read(&shown, &e))),
        }
        match state.get(&path) {
            Some(stamp) => hash = stamp.hash,
            None => return Err(StaleRead::ModifiedBeforeWrite.into()),
        }
        if !args.content.is_ascii() {
            // In the file's own encoding: judged on the bytes the model read.
            let old = read_existing(workspace, &path)
                .map_err(|e| ToolError::new(e.message(&shown, "write")))?
                .unwrap_or_default();
            if hash_bytes(&old) != hash {
                return Err(StaleRead::ModifiedBeforeWrite.into());
            }
            bytes = content_bytes(&args.content, &old)
                .map_err(|(_, message)| ToolError::new(message))?;
        }
    }
    if token.is_cancelled() {
        return Err(cancelled(&shown));
    }
    let written = write_through(workspace, &path, existing.as_ref(), hash, &bytes, token)
        .map_err(|e| commit_failure(e, &shown, "write"))?;
    // Past the point of no return: the call reports what happened.
    stamp_written(state, &path, &written, &bytes);
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

/// `content` as it is written over a file of bytes `old`: in the file's
/// legacy encoding when it is surely in one, else as given (UTF-8: a file
/// that is UTF-8, UTF-16 or not text at all is replaced by UTF-8). Refused
/// when that encoding cannot store a character of `content` (12), or when
/// the file's encoding is only a guess (13).
fn content_bytes<'a>(content: &'a str, old: &[u8]) -> Result<Cow<'a, [u8]>, (ErrorCode, String)> {
    if content.is_ascii() {
        return Ok(Cow::Borrowed(content.as_bytes()));
    }
    match text::try_decode(old) {
        Ok(decoded) => match decoded.format.encoding {
            Encoding::Legacy(charset) => text::legacy::encode(content, charset)
                .map(Cow::Owned)
                .map_err(|character| {
                    let e = Unencodable { character, charset };
                    (ErrorCode::Unencodable, e.to_string())
                }),
            _ => Ok(Cow::Borrowed(content.as_bytes())),
        },
        Err(NotDecoded::NotText) => Ok(Cow::Borrowed(content.as_bytes())),
        Err(unsure) => Err((unsure.code(), unsure.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use agentcore_stages::Typed;
    use serde_json::json;

    use super::*;

    fn tool() -> Typed<WriteTool> {
        let workspace = Workspace::new(std::env::temp_dir()).unwrap();
        Typed::new(WriteTool::new(workspace, FileReadState::new()))
    }

    #[test]
    fn a_call_writes_its_file_path() {
        let args = json!({"file_path": "notes/a.md", "content": "x"});
        assert_eq!(
            Permissions::of(&tool(), &args),
            Access::write(["notes/a.md"])
        );
    }

    #[test]
    fn arguments_that_are_not_a_write_are_not_described() {
        let args = json!({"file_path": "a.md", "content": 3});
        assert_eq!(Permissions::of(&tool(), &args), Access::unknown());
    }
}
