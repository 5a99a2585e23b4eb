//! The built-in tools' registry, for a session or a harness of its own.

use std::sync::Arc;

use agentcore_stages::TypedTool;
use agentcore_stages::{Tool, ToolRegistry};

use crate::checkpoint::Checkpoints;
use crate::fs::read_state::FileReadState;
use crate::fs::workspace::Workspace;
use crate::process::OutputDir;
use crate::sandbox::{Sandbox, SandboxError, SandboxPolicy};
use crate::tools::apply_patch::ApplyPatchTool;
use crate::tools::bash::bash_output::BashOutputTool;
use crate::tools::bash::kill_shell::KillShellTool;
use crate::tools::bash::write_stdin::WriteStdinTool;
use crate::tools::bash::{BashTool, Jobs};
use crate::tools::checkpoints::CheckpointsTool;
use crate::tools::checkpoints::rewind::RewindTool;
use crate::tools::edit::EditTool;
use crate::tools::edit::multi_edit::MultiEditTool;
use crate::tools::edit_lines::EditLinesTool;
use crate::tools::glob::GlobTool;
use crate::tools::grep::GrepTool;
use crate::tools::ls::LsTool;
use crate::tools::read::ReadTool;
use crate::tools::set::{Builtin, ToolSet};
use crate::tools::write::WriteTool;

/// The built-in tools over one workspace and ledger, each carrying its
/// approval [`Permissions`](crate::access::Permissions) (declared in the
/// tool's own file), with a table of background jobs of their own (killed
/// when the last tool holding it is dropped).
///
/// **What it confines.** The file tools are confined to `workspace`
/// (handle-based resolution, in every mode). `bash` runs its commands in
/// the default sandbox ([`SandboxPolicy::default`]: `auto`, no network,
/// writes only under the workspace root, the home directory's secrets
/// hidden), as a [`Session`](super::Session) without a policy does; if
/// that sandbox cannot be set up, `bash` refuses every command and says
/// why. No approval gate comes with a registry: a pipeline built without
/// one allows every call, so pair it with an
/// [`ApprovalEngine`](crate::approval::ApprovalEngine). To run commands
/// unconfined, say so: [`builtin_registry_unconfined`].
///
/// **Checkpoints.** `checkpoints` and `rewind` work over a session's
/// recorder, which a registry alone has not: the registries of this
/// module leave them out even when named. Register
/// [`CheckpointsTool::new`] and [`RewindTool::new`] over a
/// [`Checkpoints`] of your own, or start a [`Session`](super::Session)
/// with checkpoints on.
pub fn builtin_registry(
    workspace: &Workspace,
    read_state: &FileReadState,
    output_dir: &Arc<OutputDir>,
) -> ToolRegistry {
    let jobs = Arc::new(Jobs::default());
    builtin_registry_of(
        &ToolSet::default(),
        workspace,
        read_state,
        output_dir,
        &jobs,
    )
}

/// The built-in tools of `tools` only, whose `bash`, `bash_output` and
/// `kill_shell` share `jobs`: what a session with
/// [`SessionConfig::tools`](super::SessionConfig::tools) registers.
/// Confined as [`builtin_registry`] is: commands in the default sandbox;
/// without `checkpoints` and `rewind` (see [`builtin_registry`]).
pub fn builtin_registry_of(
    tools: &ToolSet,
    workspace: &Workspace,
    read_state: &FileReadState,
    output_dir: &Arc<OutputDir>,
    jobs: &Arc<Jobs>,
) -> ToolRegistry {
    let bash = match default_sandbox(workspace) {
        Ok(sandbox) => bash_tool(workspace, output_dir).sandbox(sandbox),
        Err(error) => bash_tool(workspace, output_dir).sandbox_unavailable(&error),
    };
    builtin_tools_of(
        tools,
        workspace,
        read_state,
        jobs,
        bash.jobs(jobs.clone()),
        None,
    )
}

/// [`builtin_registry_of`] whose commands run in `sandbox` (one a harness
/// built with [`Sandbox::builder`] or a [`SandboxPolicy`]).
pub fn builtin_registry_in(
    sandbox: &Sandbox,
    tools: &ToolSet,
    workspace: &Workspace,
    read_state: &FileReadState,
    output_dir: &Arc<OutputDir>,
    jobs: &Arc<Jobs>,
) -> ToolRegistry {
    let bash = bash_tool(workspace, output_dir)
        .sandbox(sandbox.clone())
        .jobs(jobs.clone());
    builtin_tools_of(tools, workspace, read_state, jobs, bash, None)
}

/// [`builtin_registry_of`] whose `bash` runs commands **unconfined**: with
/// this process's rights, able to write anywhere it can and to reach the
/// network. Only the file tools stay confined to `workspace`. For a
/// harness that confines commands itself (a container, a VM).
pub fn builtin_registry_unconfined(
    tools: &ToolSet,
    workspace: &Workspace,
    read_state: &FileReadState,
    output_dir: &Arc<OutputDir>,
    jobs: &Arc<Jobs>,
) -> ToolRegistry {
    let bash = bash_tool(workspace, output_dir).jobs(jobs.clone());
    builtin_tools_of(tools, workspace, read_state, jobs, bash, None)
}

/// `bash` over `workspace`, spooling to `output_dir`, not yet confined.
fn bash_tool(workspace: &Workspace, output_dir: &Arc<OutputDir>) -> BashTool {
    BashTool::new(workspace.root().to_path_buf(), output_dir.clone())
}

/// The sandbox a session without a policy confines commands in: the
/// default policy, the workspace root writable.
fn default_sandbox(workspace: &Workspace) -> Result<Sandbox, SandboxError> {
    let root = workspace.root();
    SandboxPolicy::default().build(root, [root.to_path_buf()], [], [])
}

/// The built-in tools of `tools`, with this `bash`; `checkpoints` and
/// `rewind` over `checkpoints`, left out without it.
pub(crate) fn builtin_tools_of(
    tools: &ToolSet,
    workspace: &Workspace,
    read_state: &FileReadState,
    jobs: &Arc<Jobs>,
    bash: BashTool,
    checkpoints: Option<&Checkpoints>,
) -> ToolRegistry {
    let output_dir = bash.output_dir().clone();
    let mut bash = Some(bash);
    let mut registry = ToolRegistry::new();
    for builtin in tools.iter() {
        let tool: Arc<dyn Tool> = match builtin {
            // A model offered edit_lines sees each line's anchor.
            Builtin::Read => ReadTool::new(workspace.clone(), read_state.clone())
                .line_anchors(tools.contains(Builtin::EditLines))
                .into_dyn(),
            Builtin::Glob => GlobTool::new(workspace.clone()).into_dyn(),
            Builtin::Grep => GrepTool::new(workspace.clone()).into_dyn(),
            Builtin::Ls => LsTool::new(workspace.clone()).into_dyn(),
            Builtin::Edit => EditTool::new(workspace.clone(), read_state.clone()).into_dyn(),
            Builtin::MultiEdit => {
                MultiEditTool::new(workspace.clone(), read_state.clone()).into_dyn()
            }
            Builtin::Write => WriteTool::new(workspace.clone(), read_state.clone()).into_dyn(),
            Builtin::ApplyPatch => {
                ApplyPatchTool::new(workspace.clone(), read_state.clone()).into_dyn()
            }
            Builtin::EditLines => {
                EditLinesTool::new(workspace.clone(), read_state.clone()).into_dyn()
            }
            Builtin::Bash => match bash.take() {
                Some(bash) => bash.into_dyn(),
                // A set holds each tool once.
                None => continue,
            },
            Builtin::BashOutput => BashOutputTool::new(jobs.clone())
                .output_dir(output_dir.clone())
                .into_dyn(),
            Builtin::KillShell => KillShellTool::new(jobs.clone()).into_dyn(),
            Builtin::WriteStdin => WriteStdinTool::new(jobs.clone()).into_dyn(),
            Builtin::Checkpoints => match checkpoints {
                Some(recorder) => CheckpointsTool::new(recorder.clone()).into_dyn(),
                None => continue,
            },
            Builtin::Rewind => match checkpoints {
                Some(recorder) => RewindTool::new(recorder.clone()).into_dyn(),
                None => continue,
            },
        };
        // The built-in names are distinct (a set holds each once) and their
        // schemas compile (tested).
        if let Err(err) = registry.register(tool) {
            unreachable!("built-in tool failed to register: {err}");
        }
    }
    registry
}
