//! The `checkpoints` tool, and beside it [`rewind`]: the session's
//! [checkpoints](crate::checkpoint) offered to the model.
//!
//! Both are offered only when named (`--tools …,checkpoints,rewind`): a
//! model should not undo the user's work unasked. Both need the session's
//! recorder, so a session that names them starts only with checkpoints on.
//! `checkpoints` lists what the recorder kept, as
//! [`Listing::describe`](crate::checkpoint::Listing::describe) words it;
//! `rewind` puts the files back.

use std::sync::LazyLock;

use agentcore_stages::TypedTool;
use agentcore_stages::{CallContext, Extensions, InterruptBehavior, ToolError, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::access::{Access, Permissions};
use crate::checkpoint::Checkpoints;
use crate::fs::blocking::spawn;
use crate::tools::spec::ToolSpec;

pub mod rewind;

static DESCRIPTION: LazyLock<String> = LazyLock::new(|| {
    "\
Lists this session's checkpoints, oldest first: every call that changed files (edit, write, \
bash, a background job, a rewind) is one, shown as `#ID  turn T  TOOL  LABEL  (call CALL_ID)` \
with the files it created, modified, deleted or renamed below it; then the store, which old \
checkpoints were dropped to keep it under its size, and what is never recorded (ignored files, \
version-control folders). The rewind tool takes an ID as `to`, a CALL_ID as `call` or a turn T \
as `turn`."
        .to_owned()
});

/// The `checkpoints` tool's identity: its name and label.
pub const SPEC: ToolSpec = ToolSpec::new("checkpoints", "List Checkpoints");

/// The arguments of `checkpoints`: none (an empty object; any argument
/// is refused, as with every built-in tool).
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[schemars(extend("properties" = {}))]
pub struct CheckpointsArgs {}

/// What a call of `checkpoints` touches: no file of the workspace (it
/// reads the recorder's store). Judged as a read.
pub fn permissions() -> Permissions {
    Permissions::typed(|_: &CheckpointsArgs| Access::nothing())
}

/// The `checkpoints` tool over a session's recorder.
#[derive(Debug)]
pub struct CheckpointsTool {
    checkpoints: Checkpoints,
}

impl CheckpointsTool {
    /// Lists the checkpoints of `checkpoints` (a handle on the session's
    /// recorder: [`Session::checkpoint_recorder`](crate::session::Session::checkpoint_recorder)).
    pub fn new(checkpoints: Checkpoints) -> Self {
        Self { checkpoints }
    }
}

impl TypedTool for CheckpointsTool {
    type Args = CheckpointsArgs;

    fn name(&self) -> &str {
        SPEC.name
    }

    fn description(&self) -> &str {
        &DESCRIPTION
    }

    fn label(&self) -> Option<&str> {
        Some(SPEC.label)
    }

    fn read_only(&self, _args: &CheckpointsArgs) -> bool {
        true
    }

    fn always_read_only(&self) -> bool {
        true
    }

    /// Never beside another call: listing looks at the roots first, and
    /// beside a call that writes it would learn that call's changes as
    /// nobody's before the call's own checkpoint took them.
    fn concurrency_safe(&self, _args: &CheckpointsArgs) -> Option<bool> {
        Some(false)
    }

    fn interrupt_behavior(&self, _args: &CheckpointsArgs) -> InterruptBehavior {
        InterruptBehavior::Block
    }

    fn activity(&self, _args: &CheckpointsArgs) -> Option<String> {
        Some("Listing checkpoints".to_owned())
    }

    fn extensions(&self) -> Extensions {
        permissions().into_extensions()
    }

    async fn execute(
        &self,
        _args: CheckpointsArgs,
        _cx: &CallContext,
    ) -> Result<ToolOutput, ToolError> {
        let recorder = self.checkpoints.clone();
        // The look at the roots walks them: off the runtime.
        let listing = spawn(move || recorder.list())
            .await?
            .map_err(|e| ToolError::new(format!("the checkpoints cannot be listed: {e}")))?;
        Ok(ToolOutput::text(
            listing.describe(self.checkpoints.root()).join("\n"),
        ))
    }
}
