//! The `edit` tool: string replacement in a file the model has read, exact
//! first, then by tolerant tiers.
//!
//! The text replacement itself is [`apply_edit`] (exact, on decoded text),
//! [`edit_bytes`] (exact, on a file's bytes: decode, normalize line
//! endings, replace, encode back) and their tiered forms
//! [`apply_edit_tiered`] and [`edit_bytes_tiered`] (what the tool does),
//! pure functions in `edit/apply.rs`; where a quote lands is [`locate`]
//! (`edit/tiers.rs`, shared with every tool that quotes text to change);
//! the near-miss help of code 4 is `edit/near.rs`. Property tests and the
//! `edit_apply` fuzz target call them directly; the tool ([`EditTool`],
//! its [`EditArgs`] and [`permissions`]) is here.
//!
//! ```
//! use agentcore::error_code::ErrorCode;
//! use agentcore::tools::edit::{EditError, apply_edit};
//!
//! assert_eq!(apply_edit("a b a", "b", "c", false).unwrap(), "a c a");
//! assert_eq!(apply_edit("a b a", "a", "x", true).unwrap(), "x b x");
//! let err = apply_edit("a b a", "a", "x", false).unwrap_err();
//! assert_eq!(err, EditError::Ambiguous(2));
//! assert_eq!(err.code(), ErrorCode::AmbiguousMatch);
//! ```

mod apply;
pub mod multi_edit;
mod near;
mod sequence;
mod snippet;
mod tiers;

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agentcore_stages::TypedTool;
use agentcore_stages::{
    CallContext, Extensions, InterruptBehavior, ToolError, ToolOutput, ValidationFailure,
};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

pub use apply::{
    EditError, TieredEdit, apply_edit, apply_edit_tiered, edit_bytes, edit_bytes_tiered,
};
pub use sequence::{EditsApplied, EditsError, Step, apply_edits_tiered, edit_bytes_sequence};
pub use tiers::{IndentationUnclear, Match, Place, Tier, locate};

pub(crate) use self::near::closest;
pub(crate) use self::sequence::edit_sequence_decoded;
pub(crate) use self::snippet::snippet;

use self::apply::{edit_decoded, find_tiered, locate_decoded, spans_of};
use super::text;
use crate::access::{Access, Permissions};
use crate::diff::{unified_diff, unified_diff_spliced};
use crate::fs::beneath::FileError;
use crate::fs::file_tool::{
    FileTool, cancelled, cannot_read, commit_failure, current_bytes, path_failure, read_all,
    refuse_read_denied, stamp_written, write_through,
};
use crate::fs::read_state::{FileReadState, Freshness, StaleRead, hash_bytes};
use crate::fs::replace::Written;
use crate::fs::workspace::OpenFile;
use crate::fs::workspace::Workspace;
use crate::tools::spec::ToolSpec;

const DESCRIPTION: &str = "Performs a string replacement in a file: one change, found by quoting \
a unique snippet (for several changes to one file prefer multi_edit; where offered, apply_patch for \
changes across files, and edit_lines when quoting text exactly keeps failing). Read the file first with \
the read tool: editing a file you have not read, or that changed since you read it, is refused. \
`old_string` should match the file exactly, including indentation (copy it from the read output \
without the line-number prefix); when it has no exact match, a place that differs from it only in \
trailing whitespace, in indentation (tabs or spaces, any depth; `new_string` is then re-indented \
to match), in runs of spaces inside a line, or in look-alike characters (curly quotes, non-breaking \
spaces, dashes) is used, and so is one where the file holds a character your `old_string` spells as \
an escape (`\\n`, `\\t`, `\\\"`: JSON escaped twice; `new_string` is then read the same way); the \
result says so. It must be unique in the file unless `replace_all` is true, so include enough \
surrounding lines to make it unique; an `old_string` of whitespace only is refused. `replace_all` \
replaces every occurrence, e.g. to rename a variable. An empty `old_string` creates a new file \
with `new_string` as its content. Line endings (CRLF), a byte-order mark, UTF-16 and legacy \
encodings (windows-1252, Shift_JIS, GBK...) are kept.";

/// The `edit` tool's identity: its name, label, Claude Code name and path argument.
pub const SPEC: ToolSpec = ToolSpec::new("edit", "Edit File")
    .claude_code("Edit")
    .path_fields(crate::tools::spec::path_fields!(EditArgs: file_path));

/// The arguments of an `edit` call. The field docs are the descriptions
/// the model reads in the schema.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
// The tool's description says what the call does; the schema adds nothing.
#[schemars(description = "")]
pub struct EditArgs {
    /// The file to modify, absolute or relative to the workspace root.
    pub file_path: String,
    /// The exact text to replace, as it appears in the file (without read's line-number prefixes). Empty to create a new file.
    pub old_string: String,
    /// The text to replace it with (must differ from old_string).
    pub new_string: String,
    /// Replace every occurrence of old_string (default false: it must occur exactly once).
    #[serde(default)]
    pub replace_all: bool,
}

/// What an `edit` call touches, for the approval engine: a write of its
/// `file_path`.
///
/// ```
/// use agentcore::access::Capability;
/// use serde_json::json;
///
/// let access = agentcore::tools::edit::permissions()
///     .describe(&json!({"file_path": "src/a.rs", "old_string": "a", "new_string": "b"}));
/// assert_eq!(access.capability, Capability::Write);
/// assert_eq!(access.paths, ["src/a.rs"]);
/// ```
pub fn permissions() -> Permissions {
    Permissions::typed(|args: &EditArgs| Access::write([args.file_path.as_str()]))
}

/// The `edit` tool. Holds the session's [`Workspace`] and
/// [`FileReadState`] (shared with `read` and `write`). A [`TypedTool`]: the
/// kernel holds it as [`TypedTool::into_dyn`] makes it.
///
/// ```
/// use agentcore::fs::{read_state::FileReadState, workspace::Workspace};
/// use agentcore::tools::edit::EditTool;
/// use agentcore::TypedTool;
///
/// let ws = Workspace::new(std::env::temp_dir()).unwrap();
/// let edit = EditTool::new(ws, FileReadState::new()).into_dyn();
/// assert_eq!(edit.label(), Some("Edit File"));
/// assert!(!edit.read_only(&serde_json::json!({})));
/// ```
#[derive(Debug)]
pub struct EditTool {
    files: FileTool,
}

impl EditTool {
    /// An `edit` tool confined to `workspace`, checking and recording in
    /// `state`.
    pub fn new(workspace: Workspace, state: FileReadState) -> Self {
        Self {
            files: FileTool { workspace, state },
        }
    }
}

impl TypedTool for EditTool {
    type Args = EditArgs;

    fn name(&self) -> &str {
        SPEC.name
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn label(&self) -> Option<&str> {
        Some(SPEC.label)
    }

    fn read_only(&self, _args: &EditArgs) -> bool {
        false
    }

    fn concurrency_safe(&self, _args: &EditArgs) -> Option<bool> {
        Some(false)
    }

    fn interrupt_behavior(&self, _args: &EditArgs) -> InterruptBehavior {
        InterruptBehavior::Block
    }

    /// Edit watches cancellation itself, so the result it reports is what
    /// happened: Cancelled before the rename (nothing changed), Success
    /// after it.
    fn observes_cancellation(&self) -> bool {
        true
    }

    fn activity(&self, args: &EditArgs) -> Option<String> {
        Some(self.files.activity("Editing", &args.file_path))
    }

    fn extensions(&self) -> Extensions {
        permissions().into_extensions()
    }

    async fn validate(&self, args: &EditArgs, _cx: &CallContext) -> Result<(), ValidationFailure> {
        self.files.validate(args, check).await
    }

    async fn preview(
        &self,
        args: &EditArgs,
        cx: &CallContext,
    ) -> Result<Option<String>, ToolError> {
        self.files.preview(args, cx, preview).await
    }

    async fn execute(&self, args: EditArgs, cx: &CallContext) -> Result<ToolOutput, ToolError> {
        let file_path = args.file_path.clone();
        self.files.execute(&file_path, args, cx, execute).await
    }
}

fn edit_failure(e: EditError) -> ValidationFailure {
    ValidationFailure::new(e.code().into(), e.to_string())
}

/// validate: a read-denied path, then codes 6, 1, 8, 7, 9, 2, 3, 4, 5 in
/// that order. Read-only.
fn check(
    workspace: &Workspace,
    state: &FileReadState,
    args: &EditArgs,
) -> Result<(), ValidationFailure> {
    // Whatever an earlier call kept is not this call's.
    state.drop_snapshot();
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
    // Read once: the preview and the change use these bytes while the
    // file's metadata stays as it is now.
    let bytes =
        read_all(&open.file, open.meta.len()).map_err(|e| path_failure(cannot_read(&shown, &e)))?;
    let hash = hash_bytes(&bytes);
    {
        let decoded = text::try_decode(&bytes).map_err(|why| edit_failure(why.into()))?;
        if args.old_string.is_empty() && !decoded.text.is_empty() {
            return Err(edit_failure(EditError::FileExists));
        }
        if !args.old_string.is_empty() && args.old_string.trim().is_empty() {
            return Err(edit_failure(EditError::Blank));
        }
        match state.freshness_by_hash(&path, &open.meta, hash) {
            Freshness::NotRead => return Err(StaleRead::NotRead.into()),
            Freshness::Changed => return Err(StaleRead::ModifiedSinceRead.into()),
            // An edit changes only text the model quotes: a partial read will do.
            Freshness::Partial | Freshness::Unchanged => {}
        }
        let format = decoded.format;
        // Code 12: the file's encoding must store new_string (the rest of
        // the new text comes from the file).
        format
            .encoding
            .check_storable(&args.new_string)
            .map_err(|e| edit_failure(e.into()))?;
        let (old, new) = (
            format.normalize(&args.old_string),
            format.normalize(&args.new_string),
        );
        count_check(&decoded.text, &old, &new, args)?;
    }
    state.keep_snapshot(&path, &open.meta, bytes, hash);
    Ok(())
}

/// Codes 6, 9, 4 and 5 (by the tiers) without building the new text.
fn count_check(text: &str, old: &str, new: &str, args: &EditArgs) -> Result<(), ValidationFailure> {
    if old == new {
        return Err(edit_failure(EditError::NoChange));
    }
    if old.is_empty() {
        return Ok(());
    }
    find_tiered(text, old, new, args.replace_all, &args.old_string)
        .map(|_| ())
        .map_err(edit_failure)
}

fn preview(
    workspace: &Workspace,
    state: &FileReadState,
    args: &EditArgs,
) -> Result<String, ToolError> {
    let path = workspace
        .resolve_new(&args.file_path)
        .map_err(|e| ToolError::new(e.to_string()))?;
    let shown = workspace.display(&path);
    let bytes = match workspace.open_file(&path) {
        Ok(open) => {
            current_bytes(state, &path, &open, false)
                .map_err(|e| ToolError::new(cannot_read(&shown, &e)))?
                .0
        }
        Err(FileError::NotFound) => Default::default(),
        Err(e) => return Err(ToolError::new(e.message(&shown, "edit"))),
    };
    if !args.old_string.is_empty() {
        // Diffed around the places, without building the new text.
        let located = locate_decoded(&bytes, &args.old_string, &args.new_string, args.replace_all)
            .map_err(|e| ToolError::new(e.to_string()))?;
        return Ok(unified_diff_spliced(
            &shown,
            &located.old_text,
            located.places(),
        ));
    }
    let edited = edit_decoded(
        &bytes,
        &args.old_string,
        &args.new_string,
        args.replace_all,
        true,
    )
    .map_err(|e| ToolError::new(e.to_string()))?;
    Ok(unified_diff(&shown, &edited.old_text, &edited.applied.text))
}

fn execute(
    workspace: &Workspace,
    state: &FileReadState,
    path: PathBuf,
    args: &EditArgs,
    token: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let shown = workspace.display(&path);
    let modified = || ToolError::from(StaleRead::ModifiedBeforeWrite);
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
        None => (Arc::default(), hash_bytes(b"")),
        Some(open) => {
            // The last check, under the path lock, right before the write.
            match state.freshness_of(&path, &open.file, &open.meta) {
                Ok(Freshness::Partial | Freshness::Unchanged) => {}
                Ok(Freshness::NotRead | Freshness::Changed) => return Err(modified()),
                Err(e) => return Err(ToolError::new(cannot_read(&shown, &e))),
            }
            // The bytes validate read, if the file is still as it was then
            // (the commit compares the bytes again when its change time
            // is too recent to tell a same-size write in the same tick).
            let (bytes, hash) = current_bytes(state, &path, open, true)
                .map_err(|e| ToolError::new(cannot_read(&shown, &e)))?;
            // The bytes edited must be the bytes the model saw.
            match state.get(&path) {
                Some(stamp) if stamp.hash == hash => (bytes, hash),
                _ => return Err(modified()),
            }
        }
    };
    if token.is_cancelled() {
        return Err(cancelled(&shown));
    }
    let bytes = if args.old_string.is_empty() {
        bytes
    } else {
        match splice_and_write(
            workspace,
            state,
            &path,
            existing.as_ref(),
            bytes,
            hash,
            args,
            token,
        ) {
            Ok(done) => {
                return done.map(|(written, tier, snippet)| {
                    ToolOutput::text(success_text(&shown, tier, &written, &snippet))
                });
            }
            Err(bytes) => bytes,
        }
    };
    let edited = edit_decoded(
        &bytes,
        &args.old_string,
        &args.new_string,
        args.replace_all,
        true,
    )
    .map_err(|e| ToolError::new(e.to_string()))?;
    let new_bytes = text::encode(&edited.applied.text, edited.format)
        .map_err(|e| ToolError::new(e.to_string()))?;
    let written = write_through(workspace, &path, existing.as_ref(), hash, &new_bytes, token)
        .map_err(|e| commit_failure(e, &shown, "edit"))?;
    // Past the point of no return: the call reports what happened.
    stamp_written(state, &path, &written, &new_bytes);
    let snippet = snippet(&edited.applied.text, &edited.applied.spans);
    Ok(ToolOutput::text(success_text(
        &shown,
        edited.applied.tier,
        &written,
        &snippet,
    )))
}

/// What a successful edit says.
fn success_text(shown: &str, tier: Tier, written: &Written, snippet: &str) -> String {
    let mut out = format!("The file {shown} has been updated successfully.");
    if let Some(note) = tier.note() {
        out.push(' ');
        out.push_str(note);
    }
    if let Some(note) = written.note() {
        out.push(' ');
        out.push_str(&note);
    }
    if !snippet.is_empty() {
        out.push('\n');
        out.push_str(snippet);
    }
    out
}

/// A spliced edit written: what was written, how the places were found,
/// and the snippet of the result.
type Spliced = (Written, Tier, String);

/// Places at most spliced into the file's own bytes; more are built into
/// a new text.
const MAX_SPLICED_PLACES: usize = 16;

/// The change for a plain UTF-8 file with LF line endings (optionally
/// with a byte-order mark): the replacements are spliced into the bytes
/// read, which are then written, so the file is held once, not twice.
/// `Err(bytes)` back when the file is not such a file or has too many
/// places (the caller builds the new text instead). `bytes` is the file
/// as checked.
#[allow(clippy::too_many_arguments)]
fn splice_and_write(
    workspace: &Workspace,
    state: &FileReadState,
    path: &Path,
    existing: Option<&OpenFile>,
    bytes: Arc<Vec<u8>>,
    hash: u128,
    args: &EditArgs,
    token: &CancellationToken,
) -> Result<Result<Spliced, ToolError>, Arc<Vec<u8>>> {
    let shown = workspace.display(path);
    let plan = match locate_decoded(&bytes, &args.old_string, &args.new_string, args.replace_all) {
        Err(e) => return Ok(Err(ToolError::new(e.to_string()))),
        Ok(located) => match &located.old_text {
            Cow::Borrowed(text) => {
                let places: Vec<(std::ops::Range<usize>, String)> = located
                    .places()
                    .take(MAX_SPLICED_PLACES + 1)
                    .map(|(range, text)| (range, text.into_owned()))
                    .collect();
                // The text is the bytes after a byte-order mark, if any.
                let offset = bytes.len() - text.len();
                (places.len() <= MAX_SPLICED_PLACES).then(|| {
                    let spans = spans_of(&places);
                    (places, located.tier, spans, offset)
                })
            }
            Cow::Owned(_) => None,
        },
    };
    let Some((places, tier, spans, offset)) = plan else {
        return Err(bytes);
    };
    // The only other holder was the ledger's slot, emptied when taken;
    // a copy otherwise.
    let mut new_bytes = Arc::unwrap_or_clone(bytes);
    for (range, text) in places.iter().rev() {
        new_bytes.splice(offset + range.start..offset + range.end, text.bytes());
    }
    let written = match write_through(workspace, path, existing, hash, &new_bytes, token) {
        Ok(written) => written,
        Err(e) => return Ok(Err(commit_failure(e, &shown, "edit"))),
    };
    // Past the point of no return: the call reports what happened.
    stamp_written(state, path, &written, &new_bytes);
    let snippet = std::str::from_utf8(&new_bytes[offset..])
        .map(|text| snippet(text, &spans))
        .unwrap_or_default();
    Ok(Ok((written, tier, snippet)))
}

#[cfg(test)]
mod tests {
    use agentcore_stages::Tool;
    use agentcore_stages::Typed;
    use serde_json::json;

    use super::*;

    fn tool() -> Typed<EditTool> {
        let workspace = Workspace::new(std::env::temp_dir()).unwrap();
        Typed::new(EditTool::new(workspace, FileReadState::new()))
    }

    #[test]
    fn a_call_writes_its_file_path() {
        let args = json!({"file_path": "src/a.rs", "old_string": "a", "new_string": "b"});
        assert_eq!(Permissions::of(&tool(), &args), Access::write(["src/a.rs"]));
        let args = json!({"file_path": "/abs/b.rs", "old_string": "", "new_string": "b", "replace_all": true});
        assert_eq!(
            Permissions::of(&tool(), &args),
            Access::write(["/abs/b.rs"])
        );
    }

    #[test]
    fn arguments_that_are_not_an_edit_are_not_described() {
        // Never reaches the gate (validation reads the arguments first);
        // the engine would ask.
        let args = json!({"file_path": 3, "old_string": "a", "new_string": "b"});
        assert_eq!(Permissions::of(&tool(), &args), Access::unknown());
    }

    #[test]
    fn capabilities_see_the_typed_arguments() {
        let tool = tool();
        let args = json!({"file_path": "src/a.rs", "old_string": "a", "new_string": "b"});
        assert_eq!(tool.activity(&args).as_deref(), Some("Editing src/a.rs"));
        assert!(!tool.read_only(&args));
        assert_eq!(tool.concurrency_safe(&args), Some(false));
        assert!(tool.observes_cancellation());
    }
}
