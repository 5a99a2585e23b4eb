//! The `ls` tool: a directory as an indented tree, gitignore-aware,
//! directories first then files, by name.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::LazyLock;

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
use crate::fs::walk::{Entry, Filters, Flow, Kind, walk_breadth_first, walk_error};
use crate::fs::workspace::Workspace;
use crate::limits::ls::MAX_ENTRIES;
use crate::tools::spec::ToolSpec;

/// Entries collected at most before the walk stops; bounds memory on huge
/// directories (the note then says "at least").
const MAX_COLLECTED: usize = 100_000;

static DESCRIPTION: LazyLock<String> = LazyLock::new(|| {
    format!(
        "Lists a directory as a tree: directories first, then files, by name; \
directories end in `/`. Files ignored by .gitignore and version-control directories are left \
out; hidden files are included. `ignore` takes glob patterns of further entries to leave out. \
At most {MAX_ENTRIES} entries are shown. Prefer glob or grep when you know what you are looking for."
    )
});

/// The `ls` tool's identity: its name, label, Claude Code name and path argument.
pub const SPEC: ToolSpec = ToolSpec::new("ls", "List Directory")
    .claude_code("LS")
    .path_fields(crate::tools::spec::path_fields!(LsArgs: path));

/// The arguments of `ls`. The field docs are the descriptions the model
/// reads.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(transform = builtin_args)]
pub struct LsArgs {
    /// The directory to list, absolute or relative to the workspace root ("." for the root).
    pub path: String,
    /// Glob patterns of files and directories to leave out, e.g. ["*.log", "target"].
    pub ignore: Option<Vec<String>>,
}

/// What a call of `ls` touches: a read of the directory listed, `path`.
///
/// ```
/// use serde_json::json;
///
/// let access = agentcore::tools::ls::permissions().describe(&json!({"path": "src"}));
/// assert_eq!(access.paths, ["src"]);
/// ```
pub fn permissions() -> Permissions {
    Permissions::typed(|args: &LsArgs| Access::read([args.path.as_str()]))
}

/// The `ls` tool.
#[derive(Debug)]
pub struct LsTool {
    workspace: Workspace,
}

impl LsTool {
    /// An `ls` tool confined to `workspace`.
    pub fn new(workspace: Workspace) -> Self {
        Self { workspace }
    }
}

impl TypedTool for LsTool {
    type Args = LsArgs;

    fn name(&self) -> &str {
        SPEC.name
    }

    fn description(&self) -> &str {
        &DESCRIPTION
    }

    async fn execute(&self, args: LsArgs, cx: &CallContext) -> Result<ToolOutput, ToolError> {
        // The path as the gate judged it, when a gate did.
        let workspace = self.workspace.judged(cx.extensions().get());
        run_blocking(cx, move |token| ls(&workspace, &args, &token)).await
    }

    fn label(&self) -> Option<&str> {
        Some(SPEC.label)
    }

    fn read_only(&self, _args: &LsArgs) -> bool {
        true
    }

    fn always_read_only(&self) -> bool {
        true
    }

    fn concurrency_safe(&self, _args: &LsArgs) -> Option<bool> {
        Some(true)
    }

    fn interrupt_behavior(&self, _args: &LsArgs) -> InterruptBehavior {
        InterruptBehavior::Cancel
    }

    fn activity(&self, args: &LsArgs) -> Option<String> {
        Some(format!("Listing {}", self.workspace.shown_arg(&args.path)))
    }

    fn extensions(&self) -> Extensions {
        permissions().into_extensions()
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

    /// Entries per depth (index 0 for this tree's own children).
    fn count_levels(&self, depth: usize, levels: &mut Vec<usize>) {
        if levels.len() <= depth {
            levels.resize(depth + 1, 0);
        }
        levels[depth] += self.children.len();
        for sub in self.children.values().flatten() {
            sub.count_levels(depth + 1, levels);
        }
    }

    /// Writes the children, directories first, then files, by name, as
    /// far as `cut` lets through.
    fn render(&self, depth: usize, out: &mut Vec<String>, cut: &mut Cut) {
        let dirs = self.children.iter().filter(|(_, t)| t.is_some());
        let files = self.children.iter().filter(|(_, t)| t.is_none());
        for (name, sub) in dirs.chain(files) {
            if !cut.admit(depth) {
                continue;
            }
            let indent = "  ".repeat(depth);
            match sub {
                Some(tree) => {
                    out.push(format!("{indent}- {name}/"));
                    tree.render(depth + 1, out, cut);
                }
                None => out.push(format!("{indent}- {name}")),
            }
        }
    }
}

/// The breadth-first budget: every entry above depth `depth` is shown,
/// the first `room` entries at `depth` (in print order, which at one depth
/// is breadth-first order), none below.
struct Cut {
    depth: usize,
    room: usize,
}

impl Cut {
    /// The cut for a tree with `levels[i]` entries at print depth `i + 1`.
    fn new(levels: &[usize], budget: usize) -> Self {
        let mut left = budget;
        for (i, &n) in levels.iter().enumerate() {
            if n > left {
                return Self {
                    depth: i + 1,
                    room: left,
                };
            }
            left -= n;
        }
        Self {
            depth: usize::MAX,
            room: 0,
        }
    }

    fn admit(&mut self, depth: usize) -> bool {
        match depth.cmp(&self.depth) {
            std::cmp::Ordering::Less => true,
            std::cmp::Ordering::Equal if self.room > 0 => {
                self.room -= 1;
                true
            }
            _ => false,
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
    for pattern in args.ignore.iter().flatten() {
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
    // The directory whose entries the walk is giving; when it changes,
    // every entry counted so far is of directories read whole.
    let mut reading: Option<std::path::PathBuf> = None;
    let filters = Filters {
        overrides: Some(overrides),
        types: None,
    };
    // One thread, breadth first, each level's directories in print order:
    // the walk stops once the entries shown are known (see below), or at
    // the collection bound within one huge directory.
    walk_breadth_first(workspace, &dir, &filters, |entry: Entry<'_>| {
        {
            if token.is_cancelled() {
                return Flow::Quit;
            }
            if entry.depth() == 0 {
                return Flow::Continue;
            }
            let parent = entry.path().parent();
            if reading.as_deref() != parent {
                // The walk goes level by level, each level's directories in
                // print order, each read whole: once more entries than
                // shown are counted, the entries shown are all known
                // (every level above the cut, and the first entries of
                // the cut's level in print order), so the walk stops.
                if count > MAX_ENTRIES {
                    stopped = true;
                    return Flow::Quit;
                }
                reading = parent.map(Path::to_path_buf);
            }
            let is_dir = match entry.kind() {
                Kind::Symlink => match entry.symlink_inside(workspace) {
                    // Listed, not followed.
                    Some(_) => false,
                    None => return Flow::Continue,
                },
                kind => kind == Kind::Dir,
            };
            let Ok(rel) = entry.path().strip_prefix(&dir) else {
                return Flow::Continue;
            };
            tree.insert(rel, is_dir);
            count += 1;
            if count >= MAX_COLLECTED {
                stopped = true;
                return Flow::Quit;
            }
            Flow::Continue
        }
    })
    .map_err(|e| walk_error(workspace, &dir, &e))?;
    if token.is_cancelled() {
        return Err(ToolError::cancelled(vec![Content::text(
            "Listing cancelled.",
        )]));
    }

    let head = if dir == workspace.root() {
        "./".to_owned()
    } else {
        format!("{}/", workspace.display(&dir))
    };
    let mut levels = Vec::new();
    tree.count_levels(0, &mut levels);
    let cut = Cut::new(&levels, MAX_ENTRIES);
    let cut_depth = cut.depth;
    let mut cut = cut;
    let mut lines = Vec::with_capacity(count.min(MAX_ENTRIES));
    tree.render(1, &mut lines, &mut cut);
    let mut out = format!("- {head}");
    for line in &lines {
        out.push('\n');
        out.push_str(line);
    }
    if count > MAX_ENTRIES {
        // Stopped before the end: the counts are of what was read.
        let more = if stopped { "at least " } else { "" };
        let deeper = if cut_depth > 1 {
            format!(
                "; {more}{} entries at depth {cut_depth} or deeper (the listed directory's own entries are depth 1) are not shown",
                count - lines.len()
            )
        } else {
            String::new()
        };
        out.push_str(&format!(
            "\n(Results are truncated: showing {MAX_ENTRIES} of {more}{count} entries{deeper}. List a subdirectory, add ignore patterns, or use glob to narrow the listing.)"
        ));
    }
    Ok(ToolOutput::text(out))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_cut_fills_levels_in_order() {
        let cut = Cut::new(&[4, 5000, 10], 1000);
        assert_eq!((cut.depth, cut.room), (2, 996));
        let cut = Cut::new(&[1200], 1000);
        assert_eq!((cut.depth, cut.room), (1, 1000));
        let cut = Cut::new(&[3, 4], 1000);
        assert_eq!(cut.depth, usize::MAX);
    }

    #[test]
    fn a_call_reads_the_directory_listed() {
        let args = json!({"path": "src", "ignore": ["*.log"]});
        assert_eq!(permissions().describe(&args), Access::read(["src"]));
        let ws = Workspace::new(std::env::temp_dir()).unwrap();
        let tool = LsTool::new(ws).into_dyn();
        assert_eq!(Permissions::of(tool.as_ref(), &args), Access::read(["src"]));
    }
}
