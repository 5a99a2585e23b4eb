//! The `apply_patch` tool: checks a whole patch before anything is
//! written, previews it as one unified diff, and writes it file by file,
//! putting back the files already written if a later write fails.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io;
use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use agentcore_stages::TypedTool;
use agentcore_stages::{
    CallContext, Content, Extensions, InterruptBehavior, ToolError, ToolOutput, ValidationFailure,
};
use rustix::fs::{AtFlags, unlinkat};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::apply::apply_hunks;
use super::parse::{FileOp, Patch, parse};
use crate::access::{Access, Permissions};
use crate::error_code::ErrorCode;
use crate::fs::atomic::CommitError;
use crate::fs::beneath::{self, FileError};
use crate::fs::blocking::{self, run_blocking};
use crate::fs::file_write::{
    FileTool, cannot_read, lock_all, read_all, refuse_read_denied, stamp_written, write_through,
};
use crate::fs::read_state::{FileReadState, Freshness, StaleRead, hash_bytes};
use crate::fs::workspace::{OpenFile, Workspace};
use crate::tools::diff::unified_diff;
use crate::tools::spec::ToolSpec;
use crate::tools::text;

const DESCRIPTION: &str = "Applies a patch that adds, deletes, updates and renames files, all or \
nothing. Read every file you update or delete first with the read tool. The patch is \
`*** Begin Patch`, then file sections, then `*** End Patch`. `*** Add File: PATH` is followed by \
the new file's lines, each after `+` (the file must not exist). `*** Delete File: PATH` stands \
alone. `*** Update File: PATH`, optionally followed by `*** Move to: NEW_PATH`, is followed by \
hunks: an `@@` line (optionally with the text of a line above the change, such as the line that \
starts its function, to find first), then the lines of the change: ` ` (a space) before a context \
line, `-` before a line removed, `+` before a line added. Give about 3 lines of context above and \
below each change; context and removed lines must match lines of the file in order (trailing \
whitespace, indentation and look-alike characters are forgiven when that leaves one place). \
`*** End of File` after a hunk's last line anchors it at the end of the file. If any hunk or \
file fails, no file is changed and the error names the file and the hunk.";

/// The `apply_patch` tool's identity: its name, label (Claude Code has no such tool).
pub const SPEC: ToolSpec = ToolSpec::new("apply_patch", "Apply Patch");

/// The arguments of an `apply_patch` call. The field doc is the
/// description the model reads in the schema.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(description = "")]
pub struct ApplyPatchArgs {
    /// The whole patch, from `*** Begin Patch` to `*** End Patch`.
    pub patch: String,
}

/// What an `apply_patch` call touches, for the approval engine: a write of
/// every path the patch names (added, deleted, updated, and moved to), so
/// a protected path anywhere in it makes the whole call ask. A patch that
/// does not parse is described as unknown (the engine asks; validation
/// refuses it first anyway).
///
/// ```
/// use agentcore::access::Capability;
/// use serde_json::json;
///
/// let patch = "*** Begin Patch\n*** Delete File: a.txt\n*** Update File: b.rs\n*** Move to: c.rs\n*** End Patch";
/// let access = agentcore::tools::apply_patch::permissions().describe(&json!({"patch": patch}));
/// assert_eq!(access.capability, Capability::Write);
/// assert_eq!(access.paths, ["a.txt", "b.rs", "c.rs"]);
/// ```
pub fn permissions() -> Permissions {
    Permissions::typed(|args: &ApplyPatchArgs| match parse(&args.patch) {
        Ok(patch) => Access::write(touched(&patch)),
        Err(_) => Access::unknown(),
    })
}

/// Every path the patch names, in order.
fn touched(patch: &Patch) -> Vec<String> {
    let mut paths = Vec::new();
    for op in &patch.ops {
        paths.push(op.path().to_owned());
        if let FileOp::Update {
            move_to: Some(to), ..
        } = op
        {
            paths.push(to.clone());
        }
    }
    paths
}

/// The `apply_patch` tool. Holds the session's [`Workspace`] and read-before-write
/// ledger (shared with `read`, `edit` and `write`).
///
/// ```
/// use agentcore::fs::workspace::Workspace;
/// use agentcore::tools::apply_patch::ApplyPatchTool;
/// use agentcore::TypedTool;
///
/// let ws = Workspace::new(std::env::temp_dir()).unwrap();
/// let tool = ApplyPatchTool::new(ws, Default::default()).into_dyn();
/// assert_eq!(tool.label(), Some("Apply Patch"));
/// ```
#[derive(Debug)]
pub struct ApplyPatchTool {
    files: FileTool,
}

impl ApplyPatchTool {
    /// An `apply_patch` tool confined to `workspace`, checking and
    /// recording in `state`.
    pub fn new(workspace: Workspace, state: FileReadState) -> Self {
        Self {
            files: FileTool { workspace, state },
        }
    }
}

impl TypedTool for ApplyPatchTool {
    type Args = ApplyPatchArgs;

    fn name(&self) -> &str {
        SPEC.name
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn label(&self) -> Option<&str> {
        Some(SPEC.label)
    }

    fn read_only(&self, _args: &ApplyPatchArgs) -> bool {
        false
    }

    fn concurrency_safe(&self, _args: &ApplyPatchArgs) -> Option<bool> {
        Some(false)
    }

    fn interrupt_behavior(&self, _args: &ApplyPatchArgs) -> InterruptBehavior {
        InterruptBehavior::Block
    }

    /// Watches cancellation itself: Cancelled before the first write
    /// (nothing changed), Success after the last.
    fn observes_cancellation(&self) -> bool {
        true
    }

    fn activity(&self, args: &ApplyPatchArgs) -> Option<String> {
        let paths = parse(&args.patch).ok().map(|p| touched(&p))?;
        let shown: Vec<String> = paths
            .iter()
            .map(|p| self.files.workspace.shown_arg(p))
            .collect();
        Some(format!("Patching {}", shown.join(", ")))
    }

    fn extensions(&self) -> Extensions {
        permissions().into_extensions()
    }

    async fn validate(
        &self,
        args: &ApplyPatchArgs,
        _cx: &CallContext,
    ) -> Result<(), ValidationFailure> {
        let (files, text) = (self.files.clone(), args.patch.clone());
        blocking::spawn(move || {
            let patch = parse(&text).map_err(|e| {
                ValidationFailure::new(ErrorCode::InvalidPatch.into(), e.to_string())
            })?;
            plan(&files, &patch, Stage::Validate)
                .map(|_| ())
                .map_err(Refusal::into_failure)
        })
        .await
        .unwrap_or_else(|lost| {
            Err(ValidationFailure::new(
                ErrorCode::BadPath.into(),
                lost.to_string(),
            ))
        })
    }

    async fn preview(
        &self,
        args: &ApplyPatchArgs,
        cx: &CallContext,
    ) -> Result<Option<String>, ToolError> {
        let (files, text) = (self.files.clone(), args.patch.clone());
        run_blocking(cx, move |_| {
            let patch = parse(&text).map_err(|e| ToolError::new(e.to_string()))?;
            let planned = plan(&files, &patch, Stage::Validate).map_err(Refusal::into_error)?;
            Ok(Some(preview(&planned)))
        })
        .await
    }

    async fn execute(
        &self,
        args: ApplyPatchArgs,
        cx: &CallContext,
    ) -> Result<ToolOutput, ToolError> {
        let patch = parse(&args.patch).map_err(|e| ToolError::new(e.to_string()))?;
        // Every file as the gate judged it, when a gate did: resolved again
        // here each must lead to the same file, and that file is what opens.
        let files = FileTool {
            workspace: self.files.workspace.judged(cx.extensions().get()),
            state: self.files.state.clone(),
        };
        let mut paths = Vec::new();
        for given in touched(&patch) {
            let path = files
                .workspace
                .resolve_new(&given)
                .map_err(|e| ToolError::new(e.to_string()))?;
            paths.push(path);
        }
        let locks = lock_all(&files.state, &paths, cx, "every file of the patch").await?;
        run_blocking(cx, move |token| {
            // Held until every write is done and stamped.
            let _locks = locks;
            let planned = plan(&files, &patch, Stage::Execute).map_err(Refusal::into_error)?;
            if token.is_cancelled() {
                return Err(cancelled());
            }
            commit_all(&files, planned, &token, &|_| None)
        })
        .await
    }
}

fn cancelled() -> ToolError {
    ToolError::cancelled(vec![Content::text(
        "Cancelled before anything was written; no file of the patch was changed.",
    )])
}

/// When a plan is made: before the gate (codes, read-only) or right before
/// the writes (under the path locks: a file changed since is refused as
/// modified before the write).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    Validate,
    Execute,
}

/// Why a patch cannot be applied: a code (none for a change found right
/// before the write, which is [`ErrorCode::ModifiedSinceRead`] if it is
/// ever reported as a refusal) and the message.
struct Refusal {
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

    fn into_failure(self) -> ValidationFailure {
        ValidationFailure::new(
            self.code.unwrap_or(ErrorCode::ModifiedSinceRead.into()),
            self.message,
        )
    }

    fn into_error(self) -> ToolError {
        ToolError::new(self.message)
    }
}

/// One file's change, checked, with its new bytes made.
struct Planned {
    /// `Update File P` and the like, for messages.
    title: String,
    /// The file the operation names, canonical.
    path: PathBuf,
    /// As results show it.
    shown: String,
    /// The file as opened and checked (`None` for an added file).
    existing: Option<OpenFile>,
    /// Its bytes (empty for an added file).
    old_bytes: Vec<u8>,
    /// The text before, for the preview.
    old_text: String,
    /// What happens to it.
    action: Action,
}

enum Action {
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
fn plan(files: &FileTool, patch: &Patch, stage: Stage) -> Result<Vec<Planned>, Refusal> {
    let workspace = &files.workspace;
    let mut seen: BTreeMap<PathBuf, String> = BTreeMap::new();
    let mut planned = Vec::with_capacity(patch.ops.len());
    for op in &patch.ops {
        let title = op.title();
        let resolve = |given: &str, seen: &mut BTreeMap<PathBuf, String>| {
            refuse_read_denied(workspace, given, "changes").map_err(|f| Refusal {
                code: Some(f.code),
                message: format!("{title}: {}", f.message),
            })?;
            let path = workspace
                .resolve_new(given)
                .map_err(|e| Refusal::new(ErrorCode::BadPath, format!("{title}: {e}")))?;
            let shown = workspace.display(&path);
            if let Some(before) = seen.insert(path.clone(), title.clone()) {
                return Err(Refusal::new(
                    ErrorCode::BadPath,
                    format!(
                        "{title}: the patch names {shown} twice (also in {before}). Put every change to a file in one section."
                    ),
                ));
            }
            Ok((path, shown))
        };
        let (path, shown) = resolve(op.path(), &mut seen)?;
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
            planned.push(Planned {
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
            continue;
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
                let decoded = text::decode(&bytes).ok_or_else(|| {
                    Refusal::new(
                        ErrorCode::NotText,
                        format!(
                            "{title}: File is not valid UTF-8 or UTF-16 text; refusing to edit it so that nothing is corrupted."
                        ),
                    )
                })?;
                let patched = apply_hunks(&decoded.text, hunks).map_err(|(i, e)| {
                    Refusal::new(e.code(), format!("{title}, hunk {}: {e}", i + 1))
                })?;
                let new_bytes = text::encode(&patched.text, decoded.format).into_owned();
                let to = match move_to {
                    None => None,
                    Some(given) => {
                        let (to, to_shown) = resolve(given, &mut seen)?;
                        match workspace.open_file(&to) {
                            Err(FileError::NotFound) => {}
                            Ok(_) => {
                                return Err(Refusal::new(
                                    ErrorCode::FileExists,
                                    format!(
                                        "{title}: cannot move it to {to_shown}: that file exists already. Choose another name, or delete {to_shown} in an earlier call."
                                    ),
                                ));
                            }
                            Err(e) => {
                                return Err(Refusal::new(
                                    ErrorCode::BadPath,
                                    format!("{title}: {}", e.message(&to_shown, "move to")),
                                ));
                            }
                        }
                        Some((to, to_shown))
                    }
                };
                Action::Rewrite {
                    bytes: new_bytes,
                    text: patched.text,
                    to,
                }
            }
            FileOp::Add { .. } => unreachable!("handled above"),
        };
        planned.push(Planned {
            title,
            path,
            shown,
            existing: Some(open),
            old_text: text::for_display(&bytes).into_owned(),
            old_bytes: bytes,
            action,
        });
    }
    Ok(planned)
}

/// The read-before-write rule for a file the patch changes or deletes: a
/// stamp (a partial one will do, as for edit), and the file unchanged
/// since; right before the write, the bytes must be the stamped bytes.
fn fresh(
    files: &FileTool,
    path: &std::path::Path,
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

/// One unified diff over every file, in the patch's order.
fn preview(planned: &[Planned]) -> String {
    let mut out = Vec::new();
    for p in planned {
        let diff = match &p.action {
            Action::Create { text, .. } => retitle(
                unified_diff(&p.shown, "", text),
                None,
                Some("/dev/null"),
                &p.shown,
            ),
            Action::Remove => retitle(
                unified_diff(&p.shown, &p.old_text, ""),
                Some("/dev/null"),
                None,
                &p.shown,
            ),
            Action::Rewrite { text, to, .. } => {
                let diff = unified_diff(&p.shown, &p.old_text, text);
                match to {
                    None => diff,
                    Some((_, to_shown)) => {
                        let to = format!("b/{to_shown}");
                        retitle(diff, Some(&to), None, &p.shown)
                    }
                }
            }
        };
        out.push(diff);
    }
    out.retain(|d| !d.is_empty());
    out.join("\n")
}

/// A diff's headers changed: `+++` to `plus` (a path or `/dev/null`), or
/// `---` to `minus`; an empty diff (nothing changed in the text) gets the
/// two headers alone.
fn retitle(diff: String, plus: Option<&str>, minus: Option<&str>, shown: &str) -> String {
    let from = minus.map_or_else(|| format!("a/{shown}"), str::to_owned);
    let to = plus.map_or_else(|| format!("b/{shown}"), str::to_owned);
    let body = diff
        .split_once('\n')
        .and_then(|(_, rest)| rest.split_once('\n'))
        .map_or("", |(_, rest)| rest);
    if body.is_empty() {
        format!("--- {from}\n+++ {to}")
    } else {
        format!("--- {from}\n+++ {to}\n{body}")
    }
}

/// What was done to a file, to be undone if a later step fails.
enum Done {
    /// A file was created at this path.
    Created(PathBuf),
    /// The file at this path was replaced: its bytes before, and the bytes
    /// written.
    Replaced {
        path: PathBuf,
        old: Vec<u8>,
        new: Vec<u8>,
    },
    /// The file at this path was deleted: its bytes and mode.
    Removed {
        path: PathBuf,
        old: Vec<u8>,
        mode: u32,
    },
}

/// A step's failure, as the model reads it.
type StepFailure = String;

/// Writes the planned changes: every new and rewritten file first, each
/// atomically, then the deletions (of deleted and moved files). When a
/// step fails, the steps before it are undone, newest first, and the call
/// fails saying so. `fault` makes step N fail (tests only pass one that
/// does).
fn commit_all(
    files: &FileTool,
    planned: Vec<Planned>,
    token: &CancellationToken,
    fault: &dyn Fn(usize) -> Option<io::Error>,
) -> Result<ToolOutput, ToolError> {
    let (workspace, state) = (&files.workspace, &files.state);
    let mut done: Vec<Done> = Vec::new();
    let mut stamps = Vec::new();
    let mut step = 0usize;
    let mut result: Result<(), StepFailure> = Ok(());
    // Writes first.
    for p in &planned {
        if token.is_cancelled() && !matches!(p.action, Action::Remove) {
            result = Err(format!("Cancelled before {} was written.", p.shown));
            break;
        }
        let outcome = match &p.action {
            Action::Remove => continue,
            Action::Create { bytes, .. } => {
                write_step(workspace, &p.path, None, bytes, token, step, fault)
                    .map(|w| {
                        done.push(Done::Created(p.path.clone()));
                        stamps.push((p.path.clone(), w, bytes.clone()));
                    })
                    .map_err(|e| format!("{}: {e}", p.title))
            }
            Action::Rewrite { bytes, to, .. } => {
                let (target, base) = match to {
                    None => (
                        &p.path,
                        p.existing
                            .as_ref()
                            .map(|open| (open, p.old_bytes.as_slice())),
                    ),
                    Some((to, _)) => (to, None),
                };
                write_step(workspace, target, base, bytes, token, step, fault)
                    .map(|w| {
                        done.push(match base {
                            Some(_) => Done::Replaced {
                                path: target.clone(),
                                old: p.old_bytes.clone(),
                                new: bytes.clone(),
                            },
                            None => Done::Created(target.clone()),
                        });
                        stamps.push((target.clone(), w, bytes.clone()));
                    })
                    .map_err(|e| format!("{}: {e}", p.title))
            }
        };
        step += 1;
        if let Err(e) = outcome {
            result = Err(e);
            break;
        }
    }
    // Then deletions.
    if result.is_ok() {
        for p in &planned {
            let removes = matches!(
                p.action,
                Action::Remove | Action::Rewrite { to: Some(_), .. }
            );
            let Some(open) = p.existing.as_ref().filter(|_| removes) else {
                continue;
            };
            if token.is_cancelled() {
                result = Err(format!("Cancelled before {} was deleted.", p.shown));
                break;
            }
            let outcome = remove_step(open, step, fault)
                .map(|()| {
                    done.push(Done::Removed {
                        path: p.path.clone(),
                        old: p.old_bytes.clone(),
                        mode: open.meta.mode(),
                    });
                })
                .map_err(|e| format!("{}: {e}", p.title));
            step += 1;
            if let Err(e) = outcome {
                result = Err(e);
                break;
            }
        }
    }
    if let Err(failure) = result {
        let not_restored = undo(workspace, done);
        // A cancellation between the writes is reported as one (the
        // outcome is Cancelled), saying what was put back.
        let was_cancelled = token.is_cancelled();
        let what = if was_cancelled {
            "the cancellation"
        } else {
            "this failure"
        };
        let mut message = failure;
        if not_restored.is_empty() {
            let _ = write!(
                message,
                "\nNo file was changed: the files written before {what} were put back as they were."
            );
        } else {
            let _ = write!(
                message,
                "\nThe files written before {what} were put back, except: {}. Read them to see what they hold now.",
                not_restored.join(", ")
            );
        }
        return Err(if was_cancelled {
            ToolError::cancelled(vec![Content::text(message)])
        } else {
            ToolError::new(message)
        });
    }
    // Past the point of no return: stamps and the report.
    let mut notes = Vec::new();
    for (path, written, bytes) in &stamps {
        stamp_written(state, path, written, bytes);
        if let Some(note) = written.note() {
            notes.push(format!("{}: {note}", workspace.display(path)));
        }
    }
    for p in &planned {
        if matches!(
            p.action,
            Action::Remove | Action::Rewrite { to: Some(_), .. }
        ) {
            state.forget(&p.path);
        }
    }
    let mut out = String::from("The patch was applied:");
    for p in &planned {
        let _ = match &p.action {
            Action::Create { .. } => write!(out, "\nA {}", p.shown),
            Action::Remove => write!(out, "\nD {}", p.shown),
            Action::Rewrite { to: None, .. } => write!(out, "\nM {}", p.shown),
            Action::Rewrite {
                to: Some((_, to)), ..
            } => write!(out, "\nR {} -> {to}", p.shown),
        };
    }
    for note in notes {
        out.push('\n');
        out.push_str(&note);
    }
    Ok(ToolOutput::text(out))
}

fn write_step(
    workspace: &Workspace,
    path: &std::path::Path,
    base: Option<(&OpenFile, &[u8])>,
    bytes: &[u8],
    token: &CancellationToken,
    step: usize,
    fault: &dyn Fn(usize) -> Option<io::Error>,
) -> Result<crate::fs::atomic::Written, String> {
    let shown = workspace.display(path);
    if let Some(e) = fault(step) {
        return Err(format!("cannot write {shown}: {e}"));
    }
    let (existing, hash) = match base {
        Some((open, old)) => (Some(open), hash_bytes(old)),
        None => (None, hash_bytes(b"")),
    };
    write_through(workspace, path, existing, hash, bytes, token).map_err(|e| match e {
        CommitError::Cancelled => format!("Cancelled before {shown} was written."),
        CommitError::Moved => StaleRead::ModifiedBeforeWrite.to_string(),
        CommitError::File(e) => e.message(&shown, "write"),
    })
}

/// Deletes the opened file, if it is still the file checked.
fn remove_step(
    open: &OpenFile,
    step: usize,
    fault: &dyn Fn(usize) -> Option<io::Error>,
) -> Result<(), String> {
    if let Some(e) = fault(step) {
        return Err(format!("cannot delete it: {e}"));
    }
    match beneath::stat_at(open.dir.as_fd(), &open.name) {
        Ok(Some(st)) => {
            // The stat fields' widths differ between architectures.
            #[allow(clippy::unnecessary_cast)]
            let same = (st.st_dev as u64, st.st_ino as u64) == (open.meta.dev(), open.meta.ino());
            if !same {
                return Err(StaleRead::ModifiedBeforeWrite.to_string());
            }
        }
        Ok(None) => return Err(StaleRead::ModifiedBeforeWrite.to_string()),
        Err(e) => return Err(format!("cannot delete it: {}", e.message("it", "delete"))),
    }
    unlinkat(&open.dir, open.name.as_os_str(), AtFlags::empty())
        .map_err(|e| format!("cannot delete it: {}", io::Error::from(e)))
}

/// Undoes `done`, newest first; returns the paths (as shown) that could
/// not be put back.
fn undo(workspace: &Workspace, done: Vec<Done>) -> Vec<String> {
    let mut failed = Vec::new();
    let token = CancellationToken::new();
    for step in done.into_iter().rev() {
        let (path, ok) = match step {
            Done::Created(path) => {
                let ok = workspace
                    .open_parent(&path)
                    .ok()
                    .and_then(|(dir, name)| unlinkat(&dir, name.as_os_str(), AtFlags::empty()).ok())
                    .is_some();
                (path, ok)
            }
            Done::Replaced { path, old, new } => {
                let ok = workspace.open_file(&path).ok().is_some_and(|open| {
                    write_through(
                        workspace,
                        &path,
                        Some(&open),
                        hash_bytes(&new),
                        &old,
                        &token,
                    )
                    .is_ok()
                });
                (path, ok)
            }
            Done::Removed { path, old, mode } => {
                let ok =
                    write_through(workspace, &path, None, hash_bytes(b""), &old, &token).is_ok();
                if ok && let Ok(open) = workspace.open_file(&path) {
                    use std::os::unix::fs::PermissionsExt;
                    let _ = open
                        .file
                        .set_permissions(std::fs::Permissions::from_mode(mode & 0o7777));
                }
                (path, ok)
            }
        };
        // The ledger's stamps still describe the old bytes, which are
        // back (and no stamp was made for the steps undone).
        if !ok {
            failed.push(workspace.display(&path));
        }
    }
    failed
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    /// A workspace whose files are all stamped as read.
    fn workspace(files: &[(&str, &str)]) -> (tempfile::TempDir, FileTool) {
        let dir = tempfile::tempdir().unwrap();
        let tool = FileTool {
            workspace: Workspace::new(dir.path()).unwrap(),
            state: Default::default(),
        };
        for (name, text) in files {
            fs::write(dir.path().join(name), text).unwrap();
            let path = tool.workspace.resolve(name).unwrap();
            tool.state
                .record_after_write(&path, text.as_bytes())
                .unwrap();
        }
        (dir, tool)
    }

    fn run(files: &FileTool, body: &str, fail_at: usize) -> Result<ToolOutput, ToolError> {
        let patch = parse(&format!("*** Begin Patch\n{body}*** End Patch")).unwrap();
        let planned = plan(files, &patch, Stage::Execute).map_err(Refusal::into_error)?;
        let fault =
            move |step: usize| (step == fail_at).then(|| io::Error::other("injected failure"));
        commit_all(files, planned, &CancellationToken::new(), &fault)
    }

    fn text_of(e: &ToolError) -> String {
        e.content
            .iter()
            .filter_map(|c| c.as_text())
            .collect::<Vec<_>>()
            .join("\n")
    }

    const BODY: &str = "*** Update File: a.txt\n@@\n-a\n+A\n*** Add File: new/n.txt\n+n\n*** Delete File: gone.txt\n*** Update File: c.txt\n*** Move to: d.txt\n@@\n-c\n+C\n";

    #[test]
    fn a_failed_write_midway_puts_back_every_file_already_written() {
        // Steps: write a.txt (0), new/n.txt (1), d.txt (2); delete
        // gone.txt (3), c.txt (4).
        for fail_at in 0..=4 {
            let files = [("a.txt", "a\n"), ("gone.txt", "keep\n"), ("c.txt", "c\n")];
            let (dir, tool) = workspace(&files);
            let err = run(&tool, BODY, fail_at).unwrap_err();
            let message = text_of(&err);
            assert!(message.contains("injected failure"), "{fail_at}: {message}");
            assert!(
                message.ends_with("No file was changed: the files written before this failure were put back as they were."),
                "{fail_at}: {message}"
            );
            for (name, text) in files {
                assert_eq!(
                    fs::read_to_string(dir.path().join(name)).unwrap(),
                    text,
                    "{fail_at}"
                );
            }
            assert!(!dir.path().join("new/n.txt").exists(), "{fail_at}");
            assert!(!dir.path().join("d.txt").exists(), "{fail_at}");
            // The stamps still describe the files: the patch can be tried again.
            run(&tool, BODY, usize::MAX).unwrap();
            assert_eq!(fs::read_to_string(dir.path().join("a.txt")).unwrap(), "A\n");
            assert_eq!(fs::read_to_string(dir.path().join("d.txt")).unwrap(), "C\n");
            assert!(!dir.path().join("gone.txt").exists());
            assert!(!dir.path().join("c.txt").exists());
        }
    }

    #[test]
    fn a_cancellation_between_the_writes_is_reported_as_cancelled_with_what_was_put_back() {
        // Steps: write a.txt (0), new/n.txt (1), d.txt (2); delete
        // gone.txt (3), c.txt (4). The call is cancelled right after step
        // `at` began; cancelled during the last step, the call is past its
        // point of no return and succeeds.
        for at in 0..=4 {
            let files = [("a.txt", "a\n"), ("gone.txt", "keep\n"), ("c.txt", "c\n")];
            let (dir, tool) = workspace(&files);
            let patch = parse(&format!("*** Begin Patch\n{BODY}*** End Patch")).unwrap();
            let planned = plan(&tool, &patch, Stage::Execute).map_err(Refusal::into_error);
            let token = CancellationToken::new();
            let canceller = token.clone();
            let fault = move |step: usize| {
                if step == at {
                    canceller.cancel();
                }
                None
            };
            let outcome = commit_all(&tool, planned.unwrap(), &token, &fault);
            if at == 4 {
                assert!(
                    outcome.is_ok(),
                    "{}",
                    outcome.map_err(|e| text_of(&e)).unwrap_err()
                );
                continue;
            }
            let err = outcome.unwrap_err();
            let message = text_of(&err);
            assert!(err.cancelled, "{at}: {message}");
            assert!(message.contains("Cancelled before"), "{at}: {message}");
            assert!(
                message.ends_with("No file was changed: the files written before the cancellation were put back as they were."),
                "{at}: {message}"
            );
            for (name, text) in files {
                assert_eq!(
                    fs::read_to_string(dir.path().join(name)).unwrap(),
                    text,
                    "{at}"
                );
            }
            assert!(!dir.path().join("new/n.txt").exists(), "{at}");
            assert!(!dir.path().join("d.txt").exists(), "{at}");
        }
    }

    #[test]
    fn a_deleted_file_is_put_back_with_its_mode() {
        let (dir, tool) = workspace(&[("x.txt", "x\n"), ("y.txt", "y\n")]);
        fs::set_permissions(dir.path().join("x.txt"), fs::Permissions::from_mode(0o640)).unwrap();
        let err = run(&tool, "*** Delete File: x.txt\n*** Delete File: y.txt\n", 1).unwrap_err();
        assert!(text_of(&err).starts_with("Delete File y.txt: cannot delete it: injected failure"));
        let meta = fs::metadata(dir.path().join("x.txt")).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o640);
        assert_eq!(fs::read(dir.path().join("x.txt")).unwrap(), b"x\n");
    }
}
