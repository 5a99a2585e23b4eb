//! The `edit_lines` tool (offered on request, `--tools default,edit_lines`):
//! changes lines of a file by the anchors `read` shows beside each line
//! (`LINE:HASH`, [`anchor`]) — replace a range, delete a range, insert
//! after or before a line — all or nothing, with one preview, one atomic
//! write and one fresh stamp, under the ledger's rules as `edit`.
//!
//! Every anchor refers to the file as the model last read it, before any
//! of the call's operations, and must still stand for its line
//! ([`anchor`] says when it does); otherwise the call is refused with
//! [`ErrorCode::StaleAnchor`] (14) and the current lines around each bad
//! anchor, with their anchors, so the model can re-anchor without reading
//! again. The operations as given are [`Operation`]; checked (complete,
//! separate, text without read's prefixes) they are [`Operations`], which
//! is all that deserializes. The file is decoded and encoded as `edit`
//! does it (byte-order mark, UTF-16, line endings kept).

pub mod anchor;
pub(crate) mod lines;
mod ops;

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use agentcore_stages::TypedTool;
use agentcore_stages::{
    CallContext, Extensions, InterruptBehavior, ToolError, ToolOutput, ValidationFailure,
};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

pub use self::ops::{LineOp, OpKind, Operation, Operations};

use self::lines::{Applied, Line, apply, changed_lines, check_anchors, describe_bad_anchors};
use super::text::{self, Format, LineEnding};
use crate::access::{Access, Permissions};
use crate::diff::unified_diff;
use crate::error_code::ErrorCode;
use crate::fs::beneath::FileError;
use crate::fs::file_tool::{
    FileTool, cancelled, cannot_read, commit_failure, current_bytes, path_failure, read_all,
    refuse_read_denied, stamp_written, write_through,
};
use crate::fs::read_state::{FileReadState, Freshness, StaleRead, hash_bytes};
use crate::fs::workspace::Workspace;
use crate::tools::spec::ToolSpec;

const DESCRIPTION: &str = "Changes lines of a file by their anchors. When this tool is offered, \
read shows each line as `LINE:HASH` and a tab before the text (e.g. `12:a3f`); cite lines by \
those anchors. Prefer it when quoting text exactly for edit keeps failing, or to replace, delete \
or insert whole lines after a read; for a change you can quote uniquely, edit is simpler. Read the \
file first. `operations` is a list, each one of: \
`{\"op\":\"replace\",\"start\":\"12:a3f\",\"end\":\"14:9bc\",\"text\":\"...\"}` (lines 12–14 \
become text; end defaults to start), `{\"op\":\"delete\",\"start\":\"30:e01\",\"end\":...}`, \
`{\"op\":\"insert_after\",\"anchor\":\"20:17d\",\"text\":\"...\"}` (`\"0:\"` inserts at the top \
of the file) and `insert_before`. `text` is the new lines joined with \\n, without the anchors. \
Every anchor refers to the file as you last read it, before this call's operations, so give all \
the changes to one file in one call; operations may not overlap. If any anchor no longer matches \
its line, nothing is changed and the error shows the current lines with their anchors. Line \
endings (CRLF), a byte-order mark, UTF-16 and legacy encodings (windows-1252, Shift_JIS...) are \
kept.";

/// The `edit_lines` tool's identity: its name, label (Claude Code has no
/// such tool) and path argument.
pub const SPEC: ToolSpec = ToolSpec::new("edit_lines", "Edit Lines")
    .path_fields(crate::tools::spec::path_fields!(EditLinesArgs: file_path));

/// The arguments of an `edit_lines` call. The field docs are the
/// descriptions the model reads in the schema.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
// The tool's description says what the call does; the schema adds nothing.
#[schemars(description = "")]
pub struct EditLinesArgs {
    /// The file to modify, absolute or relative to the workspace root.
    pub file_path: String,
    /// The changes (1 to 100), each citing lines by read's LINE:HASH anchors as the file was before this call; none may overlap another.
    pub operations: Operations,
}

/// What an `edit_lines` call touches, for the approval engine: a write of
/// its `file_path`.
///
/// ```
/// use agentcore::access::Capability;
/// use serde_json::json;
///
/// let access = agentcore::tools::edit_lines::permissions().describe(&json!({
///     "file_path": "src/a.rs",
///     "operations": [{"op": "delete", "start": "3:a3f"}]
/// }));
/// assert_eq!(access.capability, Capability::Write);
/// assert_eq!(access.paths, ["src/a.rs"]);
/// ```
pub fn permissions() -> Permissions {
    Permissions::typed(|args: &EditLinesArgs| Access::write([args.file_path.as_str()]))
}

/// The `edit_lines` tool. Holds the session's [`Workspace`] and
/// read-before-write ledger (shared with `read`, `edit` and `write`).
///
/// ```
/// use agentcore::fs::workspace::Workspace;
/// use agentcore::tools::edit_lines::EditLinesTool;
/// use agentcore::TypedTool;
///
/// let ws = Workspace::new(std::env::temp_dir()).unwrap();
/// let tool = EditLinesTool::new(ws, Default::default()).into_dyn();
/// assert_eq!(tool.label(), Some("Edit Lines"));
/// ```
#[derive(Debug)]
pub struct EditLinesTool {
    files: FileTool,
}

impl EditLinesTool {
    /// An `edit_lines` tool confined to `workspace`, checking and
    /// recording in `state`.
    pub fn new(workspace: Workspace, state: FileReadState) -> Self {
        Self {
            files: FileTool { workspace, state },
        }
    }
}

impl TypedTool for EditLinesTool {
    type Args = EditLinesArgs;

    fn name(&self) -> &str {
        SPEC.name
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn label(&self) -> Option<&str> {
        Some(SPEC.label)
    }

    fn read_only(&self, _args: &EditLinesArgs) -> bool {
        false
    }

    fn concurrency_safe(&self, _args: &EditLinesArgs) -> Option<bool> {
        Some(false)
    }

    fn interrupt_behavior(&self, _args: &EditLinesArgs) -> InterruptBehavior {
        InterruptBehavior::Block
    }

    /// Watches cancellation itself, as edit does: Cancelled before the
    /// rename (nothing changed), Success after it.
    fn observes_cancellation(&self) -> bool {
        true
    }

    fn activity(&self, args: &EditLinesArgs) -> Option<String> {
        Some(self.files.activity("Editing", &args.file_path))
    }

    fn extensions(&self) -> Extensions {
        permissions().into_extensions()
    }

    async fn validate(
        &self,
        args: &EditLinesArgs,
        _cx: &CallContext,
    ) -> Result<(), ValidationFailure> {
        self.files.validate(args, check).await
    }

    async fn preview(
        &self,
        args: &EditLinesArgs,
        cx: &CallContext,
    ) -> Result<Option<String>, ToolError> {
        self.files.preview(args, cx, preview).await
    }

    async fn execute(
        &self,
        args: EditLinesArgs,
        cx: &CallContext,
    ) -> Result<ToolOutput, ToolError> {
        let file_path = args.file_path.clone();
        self.files.execute(&file_path, args, cx, execute).await
    }
}

/// A refusal: its code and the message the model reads.
type Refusal = (ErrorCode, String);

fn failure((code, message): Refusal) -> ValidationFailure {
    ValidationFailure::new(code.into(), message)
}

/// The file's text with its line endings as they are (a CRLF file's
/// `\r\n` back), so that its lines are `read`'s; and its format.
fn raw_text(bytes: &[u8]) -> Result<(Cow<'_, str>, Format), Refusal> {
    // Code 8 for what is not text, 13 for a legacy encoding that is only
    // a guess.
    let decoded = text::try_decode(bytes).map_err(|e| (e.code(), e.to_string()))?;
    let format = decoded.format;
    let raw = match format.line_ending {
        LineEnding::Crlf => Cow::Owned(decoded.text.replace('\n', "\r\n")),
        LineEnding::Cr => Cow::Owned(decoded.text.replace('\n', "\r")),
        _ => decoded.text,
    };
    Ok((raw, format))
}

/// The change: every anchor checked against the file's `bytes` (whose
/// XXH3-128 is `hash`), then the operations applied. `exact` lines are
/// those the ledger says the model was shown as the file is now.
struct Change {
    old_text: String,
    applied: Applied,
    format: Format,
}

fn change(
    state: &FileReadState,
    path: &Path,
    bytes: &[u8],
    hash: u128,
    ops: &Operations,
) -> Result<Change, Refusal> {
    let (raw, format) = raw_text(bytes)?;
    let lines: Vec<Line<'_>> = lines::split(&raw);
    let hashes = lines::hashes(&lines);
    // The lines a read of this very content showed in full.
    let shown = state
        .get(path)
        .filter(|stamp| stamp.hash == hash)
        .and_then(|stamp| stamp.shown);
    let exact = |n: usize| {
        shown.as_ref().is_some_and(|shown| {
            let n = n as u64;
            shown.ranges().iter().any(|&(a, b)| a <= n && n <= b)
        })
    };
    let ops = ops.as_slice();
    let bad = check_anchors(&hashes, ops, &exact);
    if !bad.is_empty() {
        return Err((
            ErrorCode::StaleAnchor,
            describe_bad_anchors(&lines, &hashes, ops, &bad),
        ));
    }
    let applied = apply(&lines, ops);
    // Code 12: a file in a legacy encoding must store every new character.
    format
        .encoding
        .check_storable(&applied.text)
        .map_err(|e| (ErrorCode::Unencodable, e.to_string()))?;
    if applied.text == raw {
        return Err((
            ErrorCode::NoChange,
            "No changes to make: the operations leave every line as it is.".to_owned(),
        ));
    }
    Ok(Change {
        old_text: raw.into_owned(),
        applied,
        format,
    })
}

/// validate: a read-denied path, then codes 1, 8, 2, 3, 14 and 6 in that
/// order. Read-only.
fn check(
    workspace: &Workspace,
    state: &FileReadState,
    args: &EditLinesArgs,
) -> Result<(), ValidationFailure> {
    // Whatever an earlier call kept is not this call's.
    state.drop_snapshot();
    refuse_read_denied(workspace, &args.file_path, "edits")?;
    let path = workspace
        .resolve_new(&args.file_path)
        .map_err(path_failure)?;
    let shown = workspace.display(&path);
    let open = match workspace.open_file(&path) {
        Ok(open) => open,
        Err(FileError::NotFound) => {
            return Err(path_failure(format!(
                "File does not exist: {shown}. edit_lines changes lines of a file you have read; to create a file, use the write tool."
            )));
        }
        Err(e) => return Err(path_failure(e.message(&shown, "edit"))),
    };
    // Read once: the preview and the change use these bytes while the
    // file's metadata stays as it is now.
    let bytes =
        read_all(&open.file, open.meta.len()).map_err(|e| path_failure(cannot_read(&shown, &e)))?;
    let hash = hash_bytes(&bytes);
    raw_text(&bytes).map_err(failure)?;
    match state.freshness_by_hash(&path, &open.meta, hash) {
        Freshness::NotRead => return Err(StaleRead::NotRead.into()),
        Freshness::Changed => return Err(StaleRead::ModifiedSinceRead.into()),
        // The anchors say which lines the model saw: a partial read will do.
        Freshness::Partial | Freshness::Unchanged => {}
    }
    change(state, &path, &bytes, hash, &args.operations).map_err(failure)?;
    state.keep_snapshot(&path, &open.meta, bytes, hash);
    Ok(())
}

/// A text for a diff: a CRLF file's lines without their CRs.
fn for_diff(text: &str, format: Format) -> Cow<'_, str> {
    if format.line_ending == LineEnding::Crlf {
        Cow::Owned(text.replace("\r\n", "\n"))
    } else {
        Cow::Borrowed(text)
    }
}

fn preview(
    workspace: &Workspace,
    state: &FileReadState,
    args: &EditLinesArgs,
) -> Result<String, ToolError> {
    let path = workspace
        .resolve_new(&args.file_path)
        .map_err(|e| ToolError::new(e.to_string()))?;
    let shown = workspace.display(&path);
    let open = workspace
        .open_file(&path)
        .map_err(|e| ToolError::new(e.message(&shown, "edit")))?;
    let (bytes, hash) = current_bytes(state, &path, &open, false)
        .map_err(|e| ToolError::new(cannot_read(&shown, &e)))?;
    let change = change(state, &path, &bytes, hash, &args.operations)
        .map_err(|(_, message)| ToolError::new(message))?;
    Ok(unified_diff(
        &shown,
        &for_diff(&change.old_text, change.format),
        &for_diff(&change.applied.text, change.format),
    ))
}

fn execute(
    workspace: &Workspace,
    state: &FileReadState,
    path: PathBuf,
    args: &EditLinesArgs,
    token: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let shown = workspace.display(&path);
    let modified = || ToolError::from(StaleRead::ModifiedBeforeWrite);
    let open = match workspace.open_file(&path) {
        Ok(open) => open,
        // It existed when validated and is gone now.
        Err(FileError::NotFound) => return Err(modified()),
        Err(e) => return Err(ToolError::new(e.message(&shown, "edit"))),
    };
    // The last check, under the path lock, right before the write.
    match state.freshness_of(&path, &open.file, &open.meta) {
        Ok(Freshness::Partial | Freshness::Unchanged) => {}
        Ok(Freshness::NotRead | Freshness::Changed) => return Err(modified()),
        Err(e) => return Err(ToolError::new(cannot_read(&shown, &e))),
    }
    // The bytes validate read, if the file is still as it was then.
    let (bytes, hash) = current_bytes(state, &path, &open, true)
        .map_err(|e| ToolError::new(cannot_read(&shown, &e)))?;
    // The bytes edited must be the bytes the model saw.
    match state.get(&path) {
        Some(stamp) if stamp.hash == hash => {}
        _ => return Err(modified()),
    }
    if token.is_cancelled() {
        return Err(cancelled(&shown));
    }
    let change = change(state, &path, &bytes, hash, &args.operations)
        .map_err(|(_, message)| ToolError::new(message))?;
    // The line endings are in the text already: only the encoding is the
    // file's to put back.
    let format = Format {
        line_ending: LineEnding::Mixed,
        ..change.format
    };
    let new_bytes =
        text::encode(&change.applied.text, format).map_err(|e| ToolError::new(e.to_string()))?;
    let written = write_through(workspace, &path, Some(&open), hash, &new_bytes, token)
        .map_err(|e| commit_failure(e, &shown, "edit"))?;
    // Past the point of no return: the call reports what happened.
    stamp_written(state, &path, &written, &new_bytes);
    Ok(ToolOutput::text(success_text(
        &shown,
        args.operations.len(),
        &change.applied,
        written.note(),
    )))
}

/// Lines of context shown around the changed lines in the result.
const RESULT_CONTEXT: usize = 2;

/// What a successful call says: the counts, and the changed lines with
/// their new anchors.
fn success_text(shown: &str, ops: usize, applied: &Applied, note: Option<String>) -> String {
    let (before, after) = (applied.lines_before, applied.lines_after);
    let mut out = format!(
        "The file {shown} has been updated successfully ({ops} operation{}); it has {after} line{} (before: {before}).",
        if ops == 1 { "" } else { "s" },
        if after == 1 { "" } else { "s" },
    );
    if let Some(note) = note {
        out.push(' ');
        out.push_str(&note);
    }
    let snippet = changed_lines(&applied.text, &applied.changed, RESULT_CONTEXT);
    if snippet.is_empty() {
        out.push_str("\nThe file is empty now.");
        return out;
    }
    if before != after {
        out.push_str(
            " Lines below a change have moved: anchor on the lines shown here, or read the file again.",
        );
    }
    out.push_str("\nThe changed lines, with their anchors now:\n");
    out.push_str(&snippet);
    out
}

#[cfg(test)]
mod tests {
    use agentcore_stages::{Typed, schema_for};
    use serde_json::json;

    use super::*;

    fn tool() -> Typed<EditLinesTool> {
        let workspace = Workspace::new(std::env::temp_dir()).unwrap();
        Typed::new(EditLinesTool::new(workspace, Default::default()))
    }

    #[test]
    fn a_call_writes_its_file_path() {
        let args =
            json!({"file_path": "src/a.rs", "operations": [{"op": "delete", "start": "1:abc"}]});
        assert_eq!(Permissions::of(&tool(), &args), Access::write(["src/a.rs"]));
    }

    #[test]
    fn the_schema_bounds_the_operations_and_names_the_kinds() {
        let schema = schema_for::<EditLinesArgs>(true);
        let ops = &schema["properties"]["operations"];
        assert_eq!(ops["minItems"], 1);
        assert_eq!(ops["maxItems"], 100);
        assert_eq!(ops["items"]["required"], json!(["op"]));
        let text = schema.to_string();
        for kind in ["replace", "delete", "insert_after", "insert_before"] {
            assert!(text.contains(&format!("\"{kind}\"")), "{text}");
        }
    }

    #[test]
    fn the_description_names_every_kind_and_the_top_of_the_file() {
        for word in [
            "replace",
            "delete",
            "insert_after",
            "insert_before",
            "\"0:\"",
        ] {
            assert!(DESCRIPTION.contains(word), "{word}");
        }
    }
}
