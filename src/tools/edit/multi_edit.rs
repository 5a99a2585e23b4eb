//! The `multi_edit` tool: several string replacements in one file, applied
//! in order and all or nothing, with one preview, one atomic write and one
//! fresh stamp.
//!
//! Each edit is found as `edit` finds its `old_string` (exactly, then by
//! the tolerant tiers of [`locate`](super::locate)) in the text the
//! edits before it left. The sequence itself is the pure
//! [`apply_edits_tiered`](super::apply_edits_tiered); this file is
//! the tool ([`MultiEditTool`], its [`MultiEditArgs`] and
//! [`permissions`]), on the same validate, preview and locked-write steps as `edit` and `write`.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::path::PathBuf;

use agentcore_stages::TypedTool;
use agentcore_stages::{
    CallContext, Extensions, InterruptBehavior, ToolError, ToolOutput, ValidationFailure,
};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::{EditsError, Step, edit_sequence_decoded, snippet};
use crate::access::{Access, Permissions};
use crate::diff::unified_diff;
use crate::fs::beneath::FileError;
use crate::fs::file_tool::{
    FileTool, cancelled, cannot_read, commit_failure, current_bytes, path_failure, read_all,
    refuse_read_denied, stamp_written, write_through,
};
use crate::fs::read_state::{FileReadState, Freshness, StaleRead, hash_bytes};
use crate::fs::workspace::Workspace;
use crate::limits::multi_edit::MAX_EDITS;
use crate::tools::spec::ToolSpec;
use crate::tools::text;

const DESCRIPTION: &str = "Makes several string replacements in one file in a single call. Read \
the file first with the read tool. Each edit works like the edit tool (same `old_string` matching, \
same refusals) and applies to the result of the edits before it, in order, so an edit must quote \
the text as the earlier edits leave it. All or nothing: if any edit cannot be applied, the file is \
not changed and the error names the edit (`Edit K of N:` and why). Prefer it to several edit calls on \
the same file. To create a file, give the first edit an empty `old_string`. Where offered, prefer \
apply_patch for changes across files, and edit_lines when quoting text exactly keeps failing.";

/// The `multi_edit` tool's identity: its name, label, Claude Code name and path argument.
pub const SPEC: ToolSpec = ToolSpec::new("multi_edit", "Multi-Edit File")
    .claude_code("MultiEdit")
    .path_fields(crate::tools::spec::path_fields!(MultiEditArgs: file_path));

/// The arguments of a `multi_edit` call. The field docs are the
/// descriptions the model reads in the schema.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
// The tool's description says what the call does; the schema adds nothing.
#[schemars(description = "")]
pub struct MultiEditArgs {
    /// The file to modify, absolute or relative to the workspace root.
    pub file_path: String,
    /// The edits, applied in order, each to the result of the ones before it (1 to 100).
    pub edits: Edits,
}

/// One edit of a `multi_edit` call.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(description = "")]
pub struct OneEdit {
    /// The exact text to replace, as the edits before this one leave it (without read's line-number prefixes).
    pub old_string: String,
    /// The text to replace it with (must differ from old_string).
    pub new_string: String,
    /// Replace every occurrence of old_string (default false: it must occur exactly once).
    #[serde(default)]
    pub replace_all: bool,
}

/// The edits of a call: 1 to [`MAX_EDITS`], in order. Only a list of that
/// length deserializes (the schema says so too, with `minItems` and
/// `maxItems`).
///
/// ```
/// use agentcore::tools::edit::multi_edit::Edits;
/// use serde_json::json;
///
/// let one = json!([{"old_string": "a", "new_string": "b"}]);
/// assert_eq!(serde_json::from_value::<Edits>(one).unwrap().len(), 1);
/// assert!(serde_json::from_value::<Edits>(json!([])).is_err());
/// ```
#[derive(Clone, Debug, Deserialize)]
#[serde(try_from = "Vec<OneEdit>")]
pub struct Edits(Vec<OneEdit>);

impl Edits {
    /// The edits, in order.
    pub fn as_slice(&self) -> &[OneEdit] {
        &self.0
    }

    /// How many (1 to [`MAX_EDITS`]).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Never true: a call has at least one edit.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn steps(&self) -> Vec<Step<'_>> {
        self.0
            .iter()
            .map(|e| Step {
                old: &e.old_string,
                new: &e.new_string,
                replace_all: e.replace_all,
            })
            .collect()
    }
}

impl TryFrom<Vec<OneEdit>> for Edits {
    type Error = String;

    fn try_from(edits: Vec<OneEdit>) -> Result<Self, String> {
        if (1..=MAX_EDITS).contains(&edits.len()) {
            Ok(Self(edits))
        } else {
            Err(format!(
                "edits must hold 1 to {MAX_EDITS} edits, not {}; split a longer change over several calls",
                edits.len()
            ))
        }
    }
}

impl JsonSchema for Edits {
    fn schema_name() -> Cow<'static, str> {
        "Edits".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let mut schema = <Vec<OneEdit>>::json_schema(generator);
        schema.insert("minItems".to_owned(), 1.into());
        schema.insert("maxItems".to_owned(), MAX_EDITS.into());
        schema
    }
}

/// What a `multi_edit` call touches, for the approval engine: a write of
/// its `file_path`.
///
/// ```
/// use agentcore::access::Capability;
/// use serde_json::json;
///
/// let access = agentcore::tools::edit::multi_edit::permissions().describe(&json!({
///     "file_path": "src/a.rs",
///     "edits": [{"old_string": "a", "new_string": "b"}]
/// }));
/// assert_eq!(access.capability, Capability::Write);
/// assert_eq!(access.paths, ["src/a.rs"]);
/// ```
pub fn permissions() -> Permissions {
    Permissions::typed(|args: &MultiEditArgs| Access::write([args.file_path.as_str()]))
}

/// The `multi_edit` tool. Holds the session's [`Workspace`] and read-before-write
/// ledger (shared with `read`, `edit` and `write`).
///
/// ```
/// use agentcore::fs::workspace::Workspace;
/// use agentcore::tools::edit::multi_edit::MultiEditTool;
/// use agentcore::TypedTool;
///
/// let ws = Workspace::new(std::env::temp_dir()).unwrap();
/// let tool = MultiEditTool::new(ws, Default::default()).into_dyn();
/// assert_eq!(tool.label(), Some("Multi-Edit File"));
/// ```
#[derive(Debug)]
pub struct MultiEditTool {
    files: FileTool,
}

impl MultiEditTool {
    /// A `multi_edit` tool confined to `workspace`, checking and recording
    /// in `state`.
    pub fn new(workspace: Workspace, state: FileReadState) -> Self {
        Self {
            files: FileTool { workspace, state },
        }
    }
}

impl TypedTool for MultiEditTool {
    type Args = MultiEditArgs;

    fn name(&self) -> &str {
        SPEC.name
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn label(&self) -> Option<&str> {
        Some(SPEC.label)
    }

    fn read_only(&self, _args: &MultiEditArgs) -> bool {
        false
    }

    fn concurrency_safe(&self, _args: &MultiEditArgs) -> Option<bool> {
        Some(false)
    }

    fn interrupt_behavior(&self, _args: &MultiEditArgs) -> InterruptBehavior {
        InterruptBehavior::Block
    }

    /// Watches cancellation itself, as edit does: Cancelled before the
    /// rename (nothing changed), Success after it.
    fn observes_cancellation(&self) -> bool {
        true
    }

    fn activity(&self, args: &MultiEditArgs) -> Option<String> {
        Some(self.files.activity("Editing", &args.file_path))
    }

    fn extensions(&self) -> Extensions {
        permissions().into_extensions()
    }

    async fn validate(
        &self,
        args: &MultiEditArgs,
        _cx: &CallContext,
    ) -> Result<(), ValidationFailure> {
        self.files.validate(args, check).await
    }

    async fn preview(
        &self,
        args: &MultiEditArgs,
        cx: &CallContext,
    ) -> Result<Option<String>, ToolError> {
        self.files.preview(args, cx, preview).await
    }

    async fn execute(
        &self,
        args: MultiEditArgs,
        cx: &CallContext,
    ) -> Result<ToolOutput, ToolError> {
        let file_path = args.file_path.clone();
        self.files.execute(&file_path, args, cx, execute).await
    }
}

fn edits_failure(e: EditsError) -> ValidationFailure {
    ValidationFailure::new(e.code().into(), e.to_string())
}

/// Whether the first edit creates the file (an empty `old_string`).
fn creates(args: &MultiEditArgs) -> bool {
    args.edits
        .as_slice()
        .first()
        .is_some_and(|e| e.old_string.is_empty())
}

/// validate: a read-denied path, then codes 1, 8, 2, 3, then every edit
/// in order on the text the ones before it leave (codes 4–7 and 9 as
/// `Edit K of N: …`). Read-only.
fn check(
    workspace: &Workspace,
    state: &FileReadState,
    args: &MultiEditArgs,
) -> Result<(), ValidationFailure> {
    // Whatever an earlier call kept is not this call's.
    state.drop_snapshot();
    refuse_read_denied(workspace, &args.file_path, "edits")?;
    let path = workspace
        .resolve_new(&args.file_path)
        .map_err(path_failure)?;
    let shown = workspace.display(&path);
    let steps = args.edits.steps();
    let open = match workspace.open_file(&path) {
        Ok(open) => open,
        Err(FileError::NotFound) if creates(args) => {
            // Creating a new file needs no read; the edits after the first
            // apply to its content.
            return edit_sequence_decoded(b"", &steps)
                .map(|_| ())
                .map_err(edits_failure);
        }
        Err(FileError::NotFound) => {
            return Err(path_failure(format!(
                "File does not exist: {shown}. To create it, give the first edit an empty old_string (or use the write tool)."
            )));
        }
        Err(e) => return Err(path_failure(e.message(&shown, "edit"))),
    };
    // Read once: the preview and the change use these bytes while the
    // file's metadata stays as it is now.
    let bytes =
        read_all(&open.file, open.meta.len()).map_err(|e| path_failure(cannot_read(&shown, &e)))?;
    let hash = hash_bytes(&bytes);
    if let Err(why) = text::try_decode(&bytes) {
        return Err(edits_failure(EditsError::File(why.into())));
    }
    match state.freshness_by_hash(&path, &open.meta, hash) {
        Freshness::NotRead => return Err(StaleRead::NotRead.into()),
        Freshness::Changed => return Err(StaleRead::ModifiedSinceRead.into()),
        // Edits change only text the model quotes: a partial read will do.
        Freshness::Partial | Freshness::Unchanged => {}
    }
    edit_sequence_decoded(&bytes, &steps)
        .map(|_| ())
        .map_err(edits_failure)?;
    state.keep_snapshot(&path, &open.meta, bytes, hash);
    Ok(())
}

fn preview(
    workspace: &Workspace,
    state: &FileReadState,
    args: &MultiEditArgs,
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
    let edited = edit_sequence_decoded(&bytes, &args.edits.steps())
        .map_err(|e| ToolError::new(e.to_string()))?;
    Ok(unified_diff(&shown, &edited.old_text, &edited.applied.text))
}

fn execute(
    workspace: &Workspace,
    state: &FileReadState,
    path: PathBuf,
    args: &MultiEditArgs,
    token: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let shown = workspace.display(&path);
    let modified = || ToolError::from(StaleRead::ModifiedBeforeWrite);
    let existing = match workspace.open_file(&path) {
        Ok(open) => Some(open),
        Err(FileError::NotFound) => None,
        Err(e) => return Err(ToolError::new(e.message(&shown, "edit"))),
    };
    let (bytes, hash) = match &existing {
        // It existed when validated and is gone now.
        None if !creates(args) => return Err(modified()),
        None => (Default::default(), hash_bytes(b"")),
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
    let edited = edit_sequence_decoded(&bytes, &args.edits.steps())
        .map_err(|e| ToolError::new(e.to_string()))?;
    let new_bytes = text::encode(&edited.applied.text, edited.format)
        .map_err(|e| ToolError::new(e.to_string()))?;
    let written = write_through(workspace, &path, existing.as_ref(), hash, &new_bytes, token)
        .map_err(|e| commit_failure(e, &shown, "edit"))?;
    // Past the point of no return: the call reports what happened.
    stamp_written(state, &path, &written, &new_bytes);
    let total = args.edits.len();
    let mut out = format!(
        "The file {shown} has been updated successfully ({total} edit{}).",
        if total == 1 { "" } else { "s" }
    );
    if let Some(note) = written.note() {
        out.push(' ');
        out.push_str(&note);
    }
    for (i, tier) in edited.applied.tiers.iter().enumerate() {
        if let Some(note) = tier.note() {
            let _ = write!(out, "\nEdit {} of {total}: {note}", i + 1);
        }
    }
    let snippet = snippet(&edited.applied.text, &edited.applied.spans);
    if !snippet.is_empty() {
        out.push('\n');
        out.push_str(&snippet);
    }
    Ok(ToolOutput::text(out))
}

#[cfg(test)]
mod tests {
    use agentcore_stages::{Typed, schema_for};
    use serde_json::json;

    use super::*;

    fn tool() -> Typed<MultiEditTool> {
        let workspace = Workspace::new(std::env::temp_dir()).unwrap();
        Typed::new(MultiEditTool::new(workspace, Default::default()))
    }

    #[test]
    fn a_call_writes_its_file_path() {
        let args =
            json!({"file_path": "src/a.rs", "edits": [{"old_string": "a", "new_string": "b"}]});
        assert_eq!(Permissions::of(&tool(), &args), Access::write(["src/a.rs"]));
    }

    #[test]
    fn the_schema_bounds_the_edits_and_closes_each_one() {
        let schema = schema_for::<MultiEditArgs>(true);
        let edits = &schema["properties"]["edits"];
        assert_eq!(edits["minItems"], 1);
        assert_eq!(edits["maxItems"], 100);
        assert_eq!(edits["items"]["additionalProperties"], false);
        assert_eq!(
            edits["items"]["required"],
            json!(["old_string", "new_string"])
        );
    }

    #[test]
    fn the_types_refuse_no_edits_and_too_many() {
        let edit = json!({"old_string": "a", "new_string": "b"});
        let many = json!({"file_path": "a", "edits": vec![edit.clone(); 101]});
        let err = serde_json::from_value::<MultiEditArgs>(many).unwrap_err();
        assert!(err.to_string().contains("1 to 100 edits, not 101"), "{err}");
        let full = json!({"file_path": "a", "edits": vec![edit; 100]});
        assert_eq!(
            serde_json::from_value::<MultiEditArgs>(full)
                .unwrap()
                .edits
                .len(),
            100
        );
        let none = json!({"file_path": "a", "edits": []});
        assert!(serde_json::from_value::<MultiEditArgs>(none).is_err());
    }
}
