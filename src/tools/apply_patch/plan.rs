//! The plan: every operation of a patch checked, in order, and every
//! file's new bytes made, before anything is written. Paths are resolved
//! and refused as the policy says, each file may be named once, updated
//! and deleted files need a fresh read stamp, and added files and move
//! targets must not exist. The first refusal is the answer.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use agentcore_stages::{ToolError, ValidationFailure};

use super::apply::apply_hunks;
use super::parse::{FileOp, Hunk, Patch};
use crate::error_code::ErrorCode;
use crate::fs::beneath::FileError;
use crate::fs::file_tool::{FileTool, cannot_read, read_all, refuse_read_denied};
use crate::fs::read_state::{Freshness, StaleRead, hash_bytes};
use crate::fs::workspace::{OpenFile, Workspace};
use crate::tools::text;

/// When a plan is made: before the gate (codes, read-only) or right before
/// the writes (under the path locks: a file changed since is refused as
/// modified before the write).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    Validate,
    Execute,
}

/// Why a patch cannot be applied: a code (none for a change found right
/// before the write, which is [`ErrorCode::ModifiedSinceRead`] if it is
/// ever reported as a refusal) and the message.
pub(crate) struct Refusal {
    code: Option<i64>,
    message: String,
}

impl Refusal {
    fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code: Some(code.into()),
            message: message.into(),
        }
    }

    pub(crate) fn into_failure(self) -> ValidationFailure {
        ValidationFailure::new(
            self.code.unwrap_or(ErrorCode::ModifiedSinceRead.into()),
            self.message,
        )
    }

    pub(crate) fn into_error(self) -> ToolError {
        ToolError::new(self.message)
    }
}

/// One file's change, checked, with its new bytes made.
pub(crate) struct Planned {
    /// `Update File P` and the like, for messages.
    pub(crate) title: String,
    /// The file the operation names, canonical.
    pub(crate) path: PathBuf,
    /// As results show it.
    pub(crate) shown: String,
    /// The file as opened and checked (`None` for an added file).
    pub(crate) existing: Option<OpenFile>,
    /// Its bytes (empty for an added file).
    pub(crate) old_bytes: Vec<u8>,
    /// The text before, for the preview.
    pub(crate) old_text: String,
    /// What happens to it.
    pub(crate) action: Action,
}

pub(crate) enum Action {
    /// A new file with these bytes.
    Create { bytes: Vec<u8>, text: String },
    /// The file is deleted.
    Remove,
    /// New content, in place or (with `to`) at another path, the old one
    /// deleted.
    Rewrite {
        bytes: Vec<u8>,
        text: String,
        to: Option<(PathBuf, String)>,
    },
}

/// Checks every operation of the patch, in order, and makes every file's
/// new bytes; nothing is written. The first refusal is the answer.
pub(crate) fn plan(files: &FileTool, patch: &Patch, stage: Stage) -> Result<Vec<Planned>, Refusal> {
    let mut seen: BTreeMap<PathBuf, String> = BTreeMap::new();
    let mut planned = Vec::with_capacity(patch.ops.len());
    for op in &patch.ops {
        planned.push(plan_op(files, op, stage, &mut seen)?);
    }
    Ok(planned)
}

/// Checks one operation and makes its file's new bytes. `seen` holds the
/// files the sections before it named, with their titles.
fn plan_op(
    files: &FileTool,
    op: &FileOp,
    stage: Stage,
    seen: &mut BTreeMap<PathBuf, String>,
) -> Result<Planned, Refusal> {
    let workspace = &files.workspace;
    let title = op.title();
    let (path, shown) = resolve(workspace, &title, op.path(), seen)?;
    let open = match workspace.open_file(&path) {
        Ok(open) => Some(open),
        Err(FileError::NotFound) => None,
        Err(e) => {
            return Err(Refusal::new(
                ErrorCode::BadPath,
                format!("{title}: {}", e.message(&shown, "change")),
            ));
        }
    };
    if let FileOp::Add { contents, .. } = op {
        if open.is_some() {
            return Err(Refusal::new(
                ErrorCode::FileExists,
                format!(
                    "{title}: the file exists already. To change it, read it and use `*** Update File: {shown}` with hunks; to replace it whole, delete it in one call and add it in the next."
                ),
            ));
        }
        return Ok(Planned {
            title,
            path,
            shown,
            existing: None,
            old_bytes: Vec::new(),
            old_text: String::new(),
            action: Action::Create {
                bytes: contents.clone().into_bytes(),
                text: contents.clone(),
            },
        });
    }
    let Some(open) = open else {
        return Err(Refusal::new(
            ErrorCode::BadPath,
            format!("{title}: File does not exist: {shown}."),
        ));
    };
    let bytes = read_all(&open.file, open.meta.len()).map_err(|e| {
        Refusal::new(
            ErrorCode::BadPath,
            format!("{title}: {}", cannot_read(&shown, &e)),
        )
    })?;
    fresh(files, &path, &open, &bytes, stage).map_err(|e| Refusal {
        code: (stage == Stage::Validate).then(|| e.code().into()),
        message: format!("{title}: {e}"),
    })?;
    let action = match op {
        FileOp::Delete { .. } => Action::Remove,
        FileOp::Update { move_to, hunks, .. } => {
            rewrite(workspace, &title, &bytes, hunks, move_to.as_deref(), seen)?
        }
        FileOp::Add { .. } => unreachable!("handled above"),
    };
    Ok(Planned {
        title,
        path,
        shown,
        existing: Some(open),
        old_text: text::for_display(&bytes).into_owned(),
        old_bytes: bytes,
        action,
    })
}

/// The file a section names (`given`), canonical and as results show it:
/// refused when the policy denies reading it, when it is no path in the
/// workspace, or when an earlier section named it (recorded in `seen`).
fn resolve(
    workspace: &Workspace,
    title: &str,
    given: &str,
    seen: &mut BTreeMap<PathBuf, String>,
) -> Result<(PathBuf, String), Refusal> {
    refuse_read_denied(workspace, given, "changes").map_err(|f| Refusal {
        code: Some(f.code),
        message: format!("{title}: {}", f.message),
    })?;
    let path = workspace
        .resolve_new(given)
        .map_err(|e| Refusal::new(ErrorCode::BadPath, format!("{title}: {e}")))?;
    let shown = workspace.display(&path);
    if let Some(before) = seen.insert(path.clone(), title.to_owned()) {
        return Err(Refusal::new(
            ErrorCode::BadPath,
            format!(
                "{title}: the patch names {shown} twice (also in {before}). Put every change to a file in one section."
            ),
        ));
    }
    Ok((path, shown))
}

/// An update's new content: the hunks placed in the file's decoded text,
/// encoded as the file was; with `move_to`, the path it moves to, which
/// must not exist.
fn rewrite(
    workspace: &Workspace,
    title: &str,
    bytes: &[u8],
    hunks: &[Hunk],
    move_to: Option<&str>,
    seen: &mut BTreeMap<PathBuf, String>,
) -> Result<Action, Refusal> {
    let decoded = text::try_decode(bytes)
        .map_err(|why| Refusal::new(why.code(), format!("{title}: {why}")))?;
    let patched = apply_hunks(&decoded.text, hunks)
        .map_err(|(i, e)| Refusal::new(e.code(), format!("{title}, hunk {}: {e}", i + 1)))?;
    // Code 12: a legacy encoding that cannot store a character the hunks
    // add refuses the whole patch.
    let new_bytes = text::encode(&patched.text, decoded.format)
        .map_err(|e| Refusal::new(ErrorCode::Unencodable, format!("{title}: {e}")))?
        .into_owned();
    let to = match move_to {
        None => None,
        Some(given) => Some(move_target(workspace, title, given, seen)?),
    };
    Ok(Action::Rewrite {
        bytes: new_bytes,
        text: patched.text,
        to,
    })
}

/// The path an update moves its file to, canonical and as shown; refused
/// when a file is there already.
fn move_target(
    workspace: &Workspace,
    title: &str,
    given: &str,
    seen: &mut BTreeMap<PathBuf, String>,
) -> Result<(PathBuf, String), Refusal> {
    let (to, to_shown) = resolve(workspace, title, given, seen)?;
    match workspace.open_file(&to) {
        Err(FileError::NotFound) => Ok((to, to_shown)),
        Ok(_) => Err(Refusal::new(
            ErrorCode::FileExists,
            format!(
                "{title}: cannot move it to {to_shown}: that file exists already. Choose another name, or delete {to_shown} in an earlier call."
            ),
        )),
        Err(e) => Err(Refusal::new(
            ErrorCode::BadPath,
            format!("{title}: {}", e.message(&to_shown, "move to")),
        )),
    }
}

/// The read-before-write rule for a file the patch changes or deletes: a
/// stamp (a partial one will do, as for edit), and the file unchanged
/// since; right before the write, the bytes must be the stamped bytes.
fn fresh(
    files: &FileTool,
    path: &Path,
    open: &OpenFile,
    bytes: &[u8],
    stage: Stage,
) -> Result<(), StaleRead> {
    let state = &files.state;
    let freshness = state
        .freshness_of(path, &open.file, &open.meta)
        .map_err(|_| StaleRead::ModifiedSinceRead)?;
    match (freshness, stage) {
        (Freshness::Partial | Freshness::Unchanged, Stage::Validate) => Ok(()),
        (Freshness::NotRead, Stage::Validate) => Err(StaleRead::NotRead),
        (Freshness::Changed, Stage::Validate) => Err(StaleRead::ModifiedSinceRead),
        (Freshness::Partial | Freshness::Unchanged, Stage::Execute) => match state.get(path) {
            Some(stamp) if stamp.hash == hash_bytes(bytes) => Ok(()),
            _ => Err(StaleRead::ModifiedBeforeWrite),
        },
        (Freshness::NotRead | Freshness::Changed, Stage::Execute) => {
            Err(StaleRead::ModifiedBeforeWrite)
        }
    }
}
