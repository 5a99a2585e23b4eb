//! The `rewind` tool: the files put back to what they held before a
//! checkpoint, a call or a turn ([`Checkpoints::rewind`]).
//!
//! It writes the workspace, so it is not read-only and asks in the default
//! mode: which paths it writes depends on the checkpoints kept when it
//! runs, so it declares an unknown access (fail closed). Its rewind is
//! recorded as a checkpoint by the recorder itself, so the checkpoint stage
//! leaves its calls alone ([`RecordsItself`]). A rewind stopped by
//! conflicts (files changed since by something not recorded, usually the
//! user) changes nothing and ends in an error that lists them and says how
//! to skip or force them.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use agentcore_stages::TypedTool;
use agentcore_stages::{
    CallContext, Extensions, InterruptBehavior, ToolError, ToolOutput, ValidationFailure,
};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::access::{Access, Permissions};
use crate::checkpoint::{Checkpoints, RecordsItself, RewindMode, RewindTo};
use crate::error_code::ErrorCode;
use crate::fs::blocking::spawn;
use crate::tools::schema::builtin_args;
use crate::tools::spec::ToolSpec;

static DESCRIPTION: LazyLock<String> = LazyLock::new(|| {
    "\
Puts the workspace's files back to what they held before a checkpoint (list them with the \
checkpoints tool), undoing that checkpoint and every later one: files the calls created are \
removed, files they changed or deleted are restored byte for byte. Give exactly one of `to` (a \
checkpoint ID), `call` (a call id) or `turn` (a turn number). Only when the user asks for it: \
it undoes work. A file changed since by something that was not recorded (the user's editor) is \
a conflict: by default nothing is changed and the conflicts are listed; `mode` \"skip\" leaves \
those files and rewinds the rest, \"force\" overwrites them too. The rewind is a checkpoint of its \
own and can be undone the same way. A restored file must be read again before it is edited."
        .to_owned()
});

/// The `rewind` tool's identity: its name and label.
pub const SPEC: ToolSpec = ToolSpec::new("rewind", "Rewind Files");

/// What `rewind` does about conflicts (the `mode` argument).
// The variants are described in `RewindArgs::mode`'s doc, which the model
// reads: a doc comment per variant would turn the schema's plain `enum`
// into a `oneOf`.
#[allow(missing_docs)]
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum OnConflict {
    #[default]
    Safe,
    Skip,
    Force,
}

impl From<OnConflict> for RewindMode {
    fn from(mode: OnConflict) -> Self {
        match mode {
            OnConflict::Safe => RewindMode::Safe,
            OnConflict::Skip => RewindMode::Skip,
            OnConflict::Force => RewindMode::Force,
        }
    }
}

/// The arguments of `rewind`: exactly one of `to`, `call` and `turn`. The
/// field docs are the descriptions the model reads.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[schemars(transform = builtin_args)]
pub struct RewindArgs {
    /// Rewind to before this checkpoint ID (as the checkpoints tool lists it): it and every later one are undone.
    #[schemars(range(min = 1))]
    pub to: Option<u64>,
    /// Rewind to before the call with this id: its checkpoint and every later one are undone.
    pub call: Option<String>,
    /// Rewind to before this turn (user prompt, from 1): its checkpoints and every later one are undone.
    #[schemars(range(min = 1))]
    pub turn: Option<u64>,
    /// "safe" (default): if a file changed since by something not recorded, change nothing and list the conflicts; "skip": leave those files and rewind the rest; "force": overwrite them too.
    #[serde(default)]
    pub mode: OnConflict,
}

impl RewindArgs {
    /// Where the rewind goes, or why the arguments do not say.
    pub fn target(&self) -> Result<RewindTo, String> {
        match (self.to, &self.call, self.turn) {
            (Some(n), None, None) => Ok(RewindTo::Checkpoint(n)),
            (None, Some(call), None) => Ok(RewindTo::Call(call.clone())),
            (None, None, Some(turn)) => Ok(RewindTo::Turn(turn)),
            (None, None, None) => Err("say where to rewind to: give one of `to` (a checkpoint ID \
                 from the checkpoints tool), `call` (a call id) or `turn` (a turn number)"
                .to_owned()),
            _ => Err(
                "give only one of `to`, `call` and `turn`: each names a place to rewind to"
                    .to_owned(),
            ),
        }
    }
}

/// What a call of `rewind` touches, for the approval engine: unknown. It
/// writes whatever the checkpoints from its target on touched, which is
/// known only when it runs (a background job may add one meanwhile), so it
/// is judged as a tool that says nothing of what it does: it asks in the
/// default and accept-edits modes, is denied in plan mode, and a rule
/// naming it (`allow = ["rewind"]`) decides for it.
///
/// ```
/// use agentcore::access::Capability;
/// use serde_json::json;
///
/// let access = agentcore::tools::checkpoints::rewind::permissions().describe(&json!({"to": 3}));
/// assert_eq!(access.capability, Capability::Exec);
/// assert!(!access.described);
/// ```
pub fn permissions() -> Permissions {
    Permissions::typed(|_: &RewindArgs| Access::unknown())
}

/// The `rewind` tool over a session's recorder.
#[derive(Debug)]
pub struct RewindTool {
    checkpoints: Checkpoints,
    /// What each call's preview showed (by call id), so that a rewind
    /// acts only on what the person approved.
    shown: Mutex<HashMap<String, String>>,
}

/// Previews kept for calls not yet run (a denied call's is never taken
/// back); past this many the oldest go.
const SHOWN_KEPT: usize = 64;

impl RewindTool {
    /// Rewinds with `checkpoints` (a handle on the session's recorder:
    /// [`Session::checkpoint_recorder`](crate::session::Session::checkpoint_recorder)).
    pub fn new(checkpoints: Checkpoints) -> Self {
        Self {
            checkpoints,
            shown: Mutex::new(HashMap::new()),
        }
    }
}

impl TypedTool for RewindTool {
    type Args = RewindArgs;

    fn name(&self) -> &str {
        SPEC.name
    }

    fn description(&self) -> &str {
        &DESCRIPTION
    }

    fn label(&self) -> Option<&str> {
        Some(SPEC.label)
    }

    fn read_only(&self, _args: &RewindArgs) -> bool {
        false
    }

    fn concurrency_safe(&self, _args: &RewindArgs) -> Option<bool> {
        Some(false)
    }

    /// A rewind that started is finished: stopping halfway would leave
    /// some files rewound and others not.
    fn interrupt_behavior(&self, _args: &RewindArgs) -> InterruptBehavior {
        InterruptBehavior::Block
    }

    fn activity(&self, args: &RewindArgs) -> Option<String> {
        Some(match args.target() {
            Ok(RewindTo::Checkpoint(n)) => format!("Rewinding to before checkpoint #{n}"),
            Ok(RewindTo::Call(call)) => format!("Rewinding to before call {call}"),
            Ok(RewindTo::Turn(turn)) => format!("Rewinding to before turn {turn}"),
            Err(_) => "Rewinding".to_owned(),
        })
    }

    fn extensions(&self) -> Extensions {
        let mut extensions = permissions().into_extensions();
        extensions.insert(RecordsItself);
        extensions
    }

    /// Refuses, before anyone is asked to approve it, a rewind that names
    /// no place or several, or a place no kept checkpoint matches.
    async fn validate(
        &self,
        args: &RewindArgs,
        _cx: &CallContext,
    ) -> Result<(), ValidationFailure> {
        let refuse =
            |message: String| ValidationFailure::new(ErrorCode::NoSuchCheckpoint.into(), message);
        let to = args.target().map_err(refuse)?;
        self.checkpoints.first_undone(&to).map_err(|e| {
            refuse(format!(
                "{e}; the checkpoints tool lists the checkpoints kept"
            ))
        })?;
        Ok(())
    }

    /// What the rewind would change, file by file (`Checkpoints::diff`), so
    /// that the person asked to approve it sees it; nothing is written.
    /// Past 512 KiB the rest is cut with a note.
    async fn preview(
        &self,
        args: &RewindArgs,
        cx: &CallContext,
    ) -> Result<Option<String>, ToolError> {
        let Ok(to) = args.target() else {
            return Ok(None);
        };
        let recorder = self.checkpoints.clone();
        let diff = spawn(move || recorder.diff(&to)).await?.map_err(|e| {
            ToolError::new(format!("what the rewind would change cannot be shown: {e}"))
        })?;
        let mut text = diff.describe(self.checkpoints.root());
        {
            let mut shown = self.shown.lock().unwrap_or_else(|e| e.into_inner());
            if shown.len() >= SHOWN_KEPT {
                shown.clear();
            }
            shown.insert(cx.call_id().to_owned(), text.clone());
        }
        if text.len() > crate::diff::MAX_DIFF_BYTES {
            let mut cut = crate::diff::MAX_DIFF_BYTES;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
            text.push_str(
                "\n… (the rest of what the rewind would change is not shown: over 512 KiB)\n",
            );
        }
        Ok(Some(text))
    }

    /// Rewinds, when what it would change is still what its preview showed
    /// (what the person approved); when files or checkpoints changed
    /// meanwhile, nothing is done and the model is told to ask again.
    async fn execute(&self, args: RewindArgs, cx: &CallContext) -> Result<ToolOutput, ToolError> {
        let to = args.target().map_err(ToolError::new)?;
        let shown = self
            .shown
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(cx.call_id());
        if let Some(shown) = shown {
            let recorder = self.checkpoints.clone();
            let target = to.clone();
            let now = spawn(move || recorder.diff(&target))
                .await?
                .map_err(|e| ToolError::new(format!("the rewind failed: {e}")))?
                .describe(self.checkpoints.root());
            if now != shown {
                return Err(ToolError::new(
                    "Not rewound: what the rewind would change is no longer what its preview showed when it was approved (files changed, or new checkpoints were recorded, meanwhile). Nothing was changed; call rewind again to show and approve what it would change now.",
                ));
            }
        }
        let mode = RewindMode::from(args.mode);
        let recorder = self.checkpoints.clone();
        // Reads and writes files: off the runtime. Not cancelled once
        // started (see `interrupt_behavior`).
        let report = spawn(move || recorder.rewind(to, mode))
            .await?
            .map_err(|e| ToolError::new(format!("the rewind failed: {e}")))?;
        let text = report.describe(self.checkpoints.root()).join("\n");
        if !report.applied {
            return Err(ToolError::new(format!(
                "{text}\nTo rewind anyway, call rewind again with \"mode\": \"skip\" (those files stay as they are) or \"mode\": \"force\" (they are overwritten). Those changes are probably the user's: ask before forcing."
            )));
        }
        Ok(ToolOutput::text(text))
    }
}
