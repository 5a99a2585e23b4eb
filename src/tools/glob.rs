//! The `glob` tool: files whose path matches a gitignore-style glob, most
//! recently modified first.

use std::path::PathBuf;
use std::sync::{LazyLock, Mutex};
use std::time::SystemTime;

use agentcore_stages::TypedTool;
use agentcore_stages::{
    CallContext, Content, Extensions, InterruptBehavior, ToolError, ToolOutput,
};
use ignore::overrides::OverrideBuilder;
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::schema::builtin_args;
use crate::access::{Access, Permissions};
use crate::fs::blocking::run_blocking;
use crate::fs::walk::{
    Entry, Filters, Flow, Kind, SEARCH_CANCELLED, default_threads, mtime_of, walk, walk_error,
};
use crate::fs::workspace::Workspace;
use crate::limits::glob::MAX_RESULTS;
use crate::tools::spec::ToolSpec;

const TRUNCATED: &str = "(Results are truncated. Consider using a more specific path or pattern.)";

static DESCRIPTION: LazyLock<String> = LazyLock::new(|| {
    format!(
        "Finds files by name with a gitignore-style glob pattern such as \
`**/*.rs` or `src/**/test_*.py` (a pattern without `/` matches file names at any depth). \
Returns matching file paths relative to the workspace root, most recently modified first, at \
most {MAX_RESULTS}. Files ignored by .gitignore are skipped unless the pattern names them; hidden files \
are included. Use grep to search file contents."
    )
});

/// The `glob` tool's identity: its name, label, Claude Code name and path argument.
pub const SPEC: ToolSpec = ToolSpec::new("glob", "Find Files")
    .claude_code("Glob")
    .path_fields(crate::tools::spec::path_fields!(GlobArgs: path));

/// The arguments of `glob`. The field docs are the descriptions the model
/// reads.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(transform = builtin_args)]
pub struct GlobArgs {
    /// The gitignore-style glob to match file paths against, e.g. "**/*.ts" or "src/**/mod.rs".
    pub pattern: String,
    /// The directory to search in, absolute or relative to the workspace root. Omit it to search the whole workspace.
    pub path: Option<String>,
}

/// What a call of `glob` touches: a read of the directory searched,
/// `path` (the root `.` when absent).
///
/// ```
/// use serde_json::json;
///
/// let access = agentcore::tools::glob::permissions().describe(&json!({"pattern": "*.rs"}));
/// assert_eq!(access.paths, ["."]);
/// ```
pub fn permissions() -> Permissions {
    Permissions::typed(|args: &GlobArgs| Access::read([args.path.as_deref().unwrap_or(".")]))
}

/// The `glob` tool.
#[derive(Debug)]
pub struct GlobTool {
    workspace: Workspace,
}

impl GlobTool {
    /// A `glob` tool confined to `workspace`.
    pub fn new(workspace: Workspace) -> Self {
        Self { workspace }
    }
}

impl TypedTool for GlobTool {
    type Args = GlobArgs;

    fn name(&self) -> &str {
        SPEC.name
    }

    fn description(&self) -> &str {
        &DESCRIPTION
    }

    async fn execute(&self, args: GlobArgs, cx: &CallContext) -> Result<ToolOutput, ToolError> {
        // The path as the gate judged it, when a gate did.
        let workspace = self.workspace.judged(cx.extensions().get());
        run_blocking(cx, move |token| glob(&workspace, &args, &token)).await
    }

    fn label(&self) -> Option<&str> {
        Some(SPEC.label)
    }

    fn read_only(&self, _args: &GlobArgs) -> bool {
        true
    }

    fn always_read_only(&self) -> bool {
        true
    }

    fn concurrency_safe(&self, _args: &GlobArgs) -> Option<bool> {
        Some(true)
    }

    fn interrupt_behavior(&self, _args: &GlobArgs) -> InterruptBehavior {
        InterruptBehavior::Cancel
    }

    fn activity(&self, args: &GlobArgs) -> Option<String> {
        Some(format!("Finding files matching {}", args.pattern))
    }

    fn extensions(&self) -> Extensions {
        permissions().into_extensions()
    }
}

fn glob(
    workspace: &Workspace,
    args: &GlobArgs,
    token: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let dir = match &args.path {
        Some(p) => workspace
            .resolve(p)
            .map_err(|e| ToolError::new(e.to_string()))?,
        None => workspace.root().to_path_buf(),
    };
    if !dir.is_dir() {
        return Err(ToolError::new(format!(
            "path \"{}\" is not a directory; give the directory to search in",
            args.path.as_deref().unwrap_or_default()
        )));
    }
    let overrides = OverrideBuilder::new(&dir)
        .add(&args.pattern)
        .and_then(|b| b.build())
        .map_err(|e| ToolError::new(format!("Invalid glob pattern \"{}\": {e}", args.pattern)))?;

    let found: Mutex<Vec<(SystemTime, PathBuf)>> = Mutex::new(Vec::new());
    let filters = Filters {
        overrides: Some(overrides),
        types: None,
    };
    walk(workspace, &dir, &filters, default_threads(), || {
        let found = &found;
        move |entry: Entry<'_>| {
            if token.is_cancelled() {
                return Flow::Quit;
            }
            let mtime = match entry.kind() {
                Kind::File => entry.stat().ok().map(|s| mtime_of(&s)),
                // Symlinks to files inside are listed, sorted by their
                // target's mtime.
                Kind::Symlink if entry.symlink_inside(workspace) == Some(false) => Some(
                    std::fs::metadata(entry.path())
                        .and_then(|m| m.modified())
                        .unwrap_or(SystemTime::UNIX_EPOCH),
                ),
                _ => None,
            };
            if let Some(mtime) = mtime {
                found
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push((mtime, entry.into_path()));
            }
            Flow::Continue
        }
    })
    .map_err(|e| walk_error(workspace, &dir, &e))?;
    if token.is_cancelled() {
        return Err(ToolError::cancelled(vec![Content::text(SEARCH_CANCELLED)]));
    }
    let mut found = found.into_inner().unwrap_or_else(|p| p.into_inner());
    if found.is_empty() {
        return Ok(ToolOutput::text("No files found"));
    }
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let truncated = found.len() > MAX_RESULTS;
    let mut out: Vec<String> = found
        .iter()
        .take(MAX_RESULTS)
        .map(|(_, p)| workspace.display(p))
        .collect();
    if truncated {
        out.push(TRUNCATED.to_owned());
    }
    Ok(ToolOutput::text(out.join("\n")))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_call_reads_the_directory_searched() {
        let args = json!({"pattern": "**/*.rs", "path": "src"});
        assert_eq!(permissions().describe(&args), Access::read(["src"]));
        let root = json!({"pattern": "**/*.rs"});
        assert_eq!(permissions().describe(&root), Access::read(["."]));
        let ws = Workspace::new(std::env::temp_dir()).unwrap();
        let tool = GlobTool::new(ws).into_dyn();
        assert_eq!(Permissions::of(tool.as_ref(), &root), Access::read(["."]));
    }
}
