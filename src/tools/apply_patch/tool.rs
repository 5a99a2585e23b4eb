//! The `apply_patch` tool: its description, arguments and permissions,
//! the [`TypedTool`] steps (a whole patch checked before anything is
//! written, then written as one transaction), and the preview, one
//! unified diff over every file.

use agentcore_stages::TypedTool;
use agentcore_stages::{
    CallContext, Content, Extensions, InterruptBehavior, ToolError, ToolOutput, ValidationFailure,
};
use schemars::JsonSchema;
use serde::Deserialize;

use super::parse::{FileOp, Patch, parse};
use super::plan::{Action, Planned, Refusal, Stage, plan};
use super::transaction::commit_all;
use crate::access::{Access, Permissions};
use crate::diff::unified_diff;
use crate::error_code::ErrorCode;
use crate::fs::blocking::{self, run_blocking};
use crate::fs::file_tool::{FileTool, lock_all};
use crate::fs::read_state::FileReadState;
use crate::fs::workspace::Workspace;
use crate::tools::spec::ToolSpec;

const DESCRIPTION: &str = "Applies a patch that adds, deletes, updates and renames files, all or \
nothing. Prefer it for changes across several files, or if you are used to writing this patch \
format; for one change to one file, edit is simpler. Read every file you update or delete first with the read tool. The patch is \
`*** Begin Patch`, then file sections, then `*** End Patch`. `*** Add File: PATH` is followed by \
the new file's lines, each after `+` (the file must not exist). `*** Delete File: PATH` stands \
alone. `*** Update File: PATH`, optionally followed by `*** Move to: NEW_PATH`, is followed by \
hunks: an `@@` line (optionally with the text of a line above the change, such as the line that \
starts its function, to find first), then the lines of the change: ` ` (a space) before a context \
line, `-` before a line removed, `+` before a line added. Give about 3 lines of context above and \
below each change; context and removed lines must match lines of the file in order (trailing \
whitespace, indentation, runs of spaces inside a line, look-alike characters and quotes escaped \
twice are forgiven when that leaves one place). \
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
