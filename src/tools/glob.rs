//! The `glob` tool: files whose path matches a gitignore-style glob, most
//! recently modified first.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::SystemTime;

use agentcore_stages::{
    BoxFuture, CallContext, GatedArgs, InterruptBehavior, Tool, ToolError, ToolOutput,
};
use ignore::overrides::OverrideBuilder;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::blocking::{bad_args, run_blocking};
use super::walk::{Entry, Filters, Flow, Kind, default_threads, mtime_of, walk, walk_error};
use super::workspace::Workspace;

/// Paths shown at most.
pub const MAX_RESULTS: usize = 100;

const TRUNCATED: &str = "(Results are truncated. Consider using a more specific path or pattern.)";

const DESCRIPTION: &str = "Finds files by name with a gitignore-style glob pattern such as \
`**/*.rs` or `src/**/test_*.py` (a pattern without `/` matches file names at any depth). \
Returns matching file paths relative to the workspace root, most recently modified first, at \
most 100. Files ignored by .gitignore are skipped unless the pattern names them; hidden files \
are included. Use grep to search file contents.";

/// The `glob` tool.
#[derive(Debug)]
pub struct GlobTool {
    workspace: Workspace,
    schema: Value,
}

impl GlobTool {
    /// A `glob` tool confined to `workspace`.
    pub fn new(workspace: Workspace) -> Self {
        let schema = json!({
            "type": "object",
            "properties": {
                "pattern": {
                    "type": "string",
                    "description": "The gitignore-style glob to match file paths against, e.g. \"**/*.ts\" or \"src/**/mod.rs\"."
                },
                "path": {
                    "type": "string",
                    "description": "The directory to search in, absolute or relative to the workspace root. Omit it to search the whole workspace."
                }
            },
            "required": ["pattern"],
            "additionalProperties": false
        });
        Self { workspace, schema }
    }
}

#[derive(Deserialize)]
struct GlobArgs {
    pattern: String,
    path: Option<String>,
}

impl Tool for GlobTool {
    fn name(&self) -> &str {
        "glob"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn schema(&self) -> &Value {
        &self.schema
    }

    fn label(&self) -> Option<&str> {
        Some("Find Files")
    }

    fn read_only(&self, _args: &Value) -> bool {
        true
    }

    fn concurrency_safe(&self, _args: &Value) -> Option<bool> {
        Some(true)
    }

    fn interrupt_behavior(&self, _args: &Value) -> InterruptBehavior {
        InterruptBehavior::Cancel
    }

    fn activity(&self, args: &Value) -> Option<String> {
        let pattern = args.get("pattern")?.as_str()?;
        Some(format!("Finding files matching {pattern}"))
    }

    fn execute<'a>(
        &'a self,
        args: GatedArgs,
        cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let args: GlobArgs = args.parse().map_err(|e| bad_args("glob", e))?;
            let workspace = self.workspace.clone();
            run_blocking(cx, move |token| glob(&workspace, &args, &token)).await
        })
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
        return Err(ToolError::cancelled(vec![agentcore_stages::Content::text(
            "Search cancelled.",
        )]));
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
