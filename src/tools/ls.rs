//! The `ls` tool: a directory as an indented tree, gitignore-aware,
//! directories first then files, by name.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use agentcore_stages::{
    BoxFuture, CallContext, Content, GatedArgs, InterruptBehavior, Tool, ToolError, ToolOutput,
};
use ignore::overrides::OverrideBuilder;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::blocking::{bad_args, run_blocking};
use super::walk::{symlink_inside, walker};
use super::workspace::Workspace;

/// Entries shown at most (the root line not counted).
pub const MAX_ENTRIES: usize = 1000;
/// Entries collected at most before the walk stops; bounds memory on huge
/// trees (the note then says "more than").
const MAX_COLLECTED: usize = 100_000;

const DESCRIPTION: &str = "Lists a directory as a tree: directories first, then files, by name; \
directories end in `/`. Files ignored by .gitignore and version-control directories are left \
out; hidden files are included. `ignore` takes glob patterns of further entries to leave out. \
At most 1000 entries are shown. Prefer glob or grep when you know what you are looking for.";

/// The `ls` tool.
#[derive(Debug)]
pub struct LsTool {
    workspace: Workspace,
    schema: Value,
}

impl LsTool {
    /// An `ls` tool confined to `workspace`.
    pub fn new(workspace: Workspace) -> Self {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "The directory to list, absolute or relative to the workspace root (\".\" for the root)."
                },
                "ignore": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Glob patterns of files and directories to leave out, e.g. [\"*.log\", \"target\"]."
                }
            },
            "required": ["path"],
            "additionalProperties": false
        });
        Self { workspace, schema }
    }
}

#[derive(Deserialize)]
struct LsArgs {
    path: String,
    #[serde(default)]
    ignore: Vec<String>,
}

impl Tool for LsTool {
    fn name(&self) -> &str {
        "ls"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn schema(&self) -> &Value {
        &self.schema
    }

    fn label(&self) -> Option<&str> {
        Some("List Directory")
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
        let path = args.get("path")?.as_str()?;
        Some(format!(
            "Listing {}",
            super::read::shown_arg(&self.workspace, path)
        ))
    }

    fn execute<'a>(
        &'a self,
        args: GatedArgs,
        cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let args: LsArgs = args.parse().map_err(|e| bad_args("ls", e))?;
            let workspace = self.workspace.clone();
            run_blocking(cx, move |token| ls(&workspace, &args, &token)).await
        })
    }
}

/// A directory's children: name → subtree (`None` for a file).
#[derive(Default)]
struct Tree {
    children: BTreeMap<String, Option<Tree>>,
}

impl Tree {
    fn insert(&mut self, rel: &Path, is_dir: bool) {
        let mut node = self;
        let mut parts = rel.iter().peekable();
        while let Some(part) = parts.next() {
            let name = part.to_string_lossy().into_owned();
            let last = parts.peek().is_none();
            let slot = node
                .children
                .entry(name)
                .or_insert_with(|| (!last || is_dir).then(Tree::default));
            match slot {
                Some(tree) => node = tree,
                None => return,
            }
        }
    }

    /// Writes the children, directories first, until `budget` lines.
    fn render(&self, depth: usize, out: &mut Vec<String>, budget: usize) {
        let dirs = self.children.iter().filter(|(_, t)| t.is_some());
        let files = self.children.iter().filter(|(_, t)| t.is_none());
        for (name, sub) in dirs.chain(files) {
            if out.len() >= budget {
                return;
            }
            let indent = "  ".repeat(depth);
            match sub {
                Some(tree) => {
                    out.push(format!("{indent}- {name}/"));
                    tree.render(depth + 1, out, budget);
                }
                None => out.push(format!("{indent}- {name}")),
            }
        }
    }
}

fn ls(
    workspace: &Workspace,
    args: &LsArgs,
    token: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let dir = workspace
        .resolve(&args.path)
        .map_err(|e| ToolError::new(e.to_string()))?;
    if !dir.is_dir() {
        return Err(ToolError::new(format!(
            "path \"{}\" is not a directory; use read for files",
            args.path
        )));
    }
    let mut overrides = OverrideBuilder::new(&dir);
    for pattern in &args.ignore {
        overrides
            .add(&format!("!{pattern}"))
            .map_err(|e| ToolError::new(format!("Invalid ignore pattern \"{pattern}\": {e}")))?;
    }
    let overrides = overrides
        .build()
        .map_err(|e| ToolError::new(format!("Invalid ignore pattern: {e}")))?;

    let mut tree = Tree::default();
    let mut count = 0usize;
    let mut stopped = false;
    for entry in walker(workspace, &dir).overrides(overrides).build() {
        if token.is_cancelled() {
            return Err(ToolError::cancelled(vec![Content::text(
                "Listing cancelled.",
            )]));
        }
        let Ok(entry) = entry else { continue };
        if entry.depth() == 0 {
            continue;
        }
        let Some(kind) = entry.file_type() else {
            continue;
        };
        let is_dir = if kind.is_symlink() {
            match symlink_inside(workspace, entry.path()) {
                // Listed, not followed.
                Some(_) => false,
                None => continue,
            }
        } else {
            kind.is_dir()
        };
        let rel: PathBuf = match entry.path().strip_prefix(&dir) {
            Ok(rel) => rel.to_path_buf(),
            Err(_) => continue,
        };
        tree.insert(&rel, is_dir);
        count += 1;
        if count >= MAX_COLLECTED {
            stopped = true;
            break;
        }
    }

    let head = if dir == workspace.root() {
        "./".to_owned()
    } else {
        format!("{}/", workspace.display(&dir))
    };
    let mut lines = Vec::with_capacity(count.min(MAX_ENTRIES));
    tree.render(1, &mut lines, MAX_ENTRIES);
    let mut out = format!("- {head}");
    for line in &lines {
        out.push('\n');
        out.push_str(line);
    }
    if count > MAX_ENTRIES {
        let total = if stopped {
            format!("more than {count}")
        } else {
            count.to_string()
        };
        out.push_str(&format!(
            "\n(Results are truncated: showing {MAX_ENTRIES} of {total} entries. List a subdirectory, add ignore patterns, or use glob to narrow the listing.)"
        ));
    }
    Ok(ToolOutput::text(out))
}
