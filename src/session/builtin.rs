//! The built-in tools' registry, for a session or a harness of its own.

use std::sync::Arc;

use agentcore_stages::TypedTool;
use agentcore_stages::{Tool, ToolRegistry};

use crate::fs::read_state::FileReadState;
use crate::fs::workspace::Workspace;
use crate::process::OutputDir;
use crate::tools::apply_patch::ApplyPatchTool;
use crate::tools::bash::bash_output::BashOutputTool;
use crate::tools::bash::kill_shell::KillShellTool;
use crate::tools::bash::{BashTool, Jobs};
use crate::tools::edit::EditTool;
use crate::tools::edit::multi_edit::MultiEditTool;
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
pub fn builtin_registry(
    workspace: &Workspace,
    read_state: &FileReadState,
    output_dir: &Arc<OutputDir>,
) -> ToolRegistry {
    let jobs = Arc::new(Jobs::default());
    builtin_registry_with_jobs(workspace, read_state, output_dir, &jobs)
}

/// [`builtin_registry`] whose `bash`, `bash_output` and `kill_shell` share
/// `jobs`.
pub fn builtin_registry_with_jobs(
    workspace: &Workspace,
    read_state: &FileReadState,
    output_dir: &Arc<OutputDir>,
    jobs: &Arc<Jobs>,
) -> ToolRegistry {
    builtin_registry_of(&ToolSet::default(), workspace, read_state, output_dir, jobs)
}

/// The built-in tools of `tools` only, as [`builtin_registry_with_jobs`]
/// builds them: what a session with [`SessionConfig::tools`](super::SessionConfig::tools) registers.
pub fn builtin_registry_of(
    tools: &ToolSet,
    workspace: &Workspace,
    read_state: &FileReadState,
    output_dir: &Arc<OutputDir>,
    jobs: &Arc<Jobs>,
) -> ToolRegistry {
    let bash = BashTool::new(workspace.root().to_path_buf(), output_dir.clone()).jobs(jobs.clone());
    builtin_tools_of(tools, workspace, read_state, jobs, bash)
}

/// The built-in tools of `tools`, with this `bash`.
pub(crate) fn builtin_tools_of(
    tools: &ToolSet,
    workspace: &Workspace,
    read_state: &FileReadState,
    jobs: &Arc<Jobs>,
    bash: BashTool,
) -> ToolRegistry {
    let mut bash = Some(bash);
    let mut registry = ToolRegistry::new();
    for builtin in tools.iter() {
        let tool: Arc<dyn Tool> = match builtin {
            Builtin::Read => ReadTool::new(workspace.clone(), read_state.clone()).into_dyn(),
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
            Builtin::Bash => match bash.take() {
                Some(bash) => bash.into_dyn(),
                // A set holds each tool once.
                None => continue,
            },
            Builtin::BashOutput => BashOutputTool::new(jobs.clone()).into_dyn(),
            Builtin::KillShell => KillShellTool::new(jobs.clone()).into_dyn(),
        };
        // The built-in names are distinct (a set holds each once) and their
        // schemas compile (tested).
        if let Err(err) = registry.register(tool) {
            unreachable!("built-in tool failed to register: {err}");
        }
    }
    registry
}
