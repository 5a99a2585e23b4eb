//! The `grep` tool: ripgrep in-process, with ripgrep's own crates.
//!
//! The walk is parallel (ignore's parallel walker, one searcher per
//! thread); the output is assembled afterwards in path order, so it is
//! deterministic. The equivalence target is `rg --hidden` with the same
//! flags (`-U --multiline-dotall` for `multiline`).
//!
//! With a `head_limit`, content and count modes walk in path order and
//! stop once the window is filled by files the walk has finished (the
//! note then says `of more than B`); files mode, newest first, takes
//! every matching file.
//!
//! Content mode is bounded by the output cap, not by the number of
//! matches: the walk counts every file's output lines but keeps only a
//! prefix of them ([`FILE_KEEP_BYTES`] a file, [`KEEP_BYTES`] in all, and
//! never past `offset + head_limit`); the layout then streams the window
//! in path order and stops formatting once the 30,000-character cap is
//! passed, counting the rest. A file whose shown lines were not kept is
//! searched again, through handles beneath the root, and only if it is
//! still the same file (device and inode).
//!
//! One concept per file: the tool and the search's course here; the
//! arguments and what they are read into in `args`; the matcher and its
//! limits in `matcher`; the sink the searcher reports into (and the lines
//! it gives) in `sink`; the walk over the tree and what it keeps of each
//! file in `search`; the second search of files not kept in `again`;
//! paging (`offset`, `head_limit`) in `page`; the output cap in `capped`;
//! and the layout of each output mode in `layout`.

mod again;
mod args;
mod capped;
mod layout;
mod legacy;
mod matcher;
mod page;
mod search;
mod sink;

use std::sync::LazyLock;

use agentcore_stages::TypedTool;
use agentcore_stages::{
    CallContext, Content, Extensions, InterruptBehavior, ToolError, ToolOutput,
};
use grep_searcher::{BinaryDetection, SearcherBuilder};
use tokio_util::sync::CancellationToken;

pub use args::{DEFAULT_HEAD_LIMIT, GrepArgs, OutputMode};
pub use capped::MAX_OUTPUT_CHARS;
pub use matcher::{MAX_REPETITION, REGEX_DFA_CACHE, REGEX_SIZE_LIMIT};
pub use search::{FILE_KEEP_BYTES, KEEP_BYTES};
pub use sink::MAX_LINE_CHARS;

use self::again::Again;
use self::capped::cap_output;
use self::layout::{content_layout, count_layout, files_layout};
use self::matcher::build_matcher;
use self::page::Page;
use self::search::{Search, Window};
use crate::access::{Access, Permissions};
use crate::fs::blocking::run_blocking;
use crate::fs::walk::{SEARCH_CANCELLED, default_threads};
use crate::fs::workspace::Workspace;
use crate::tools::spec::ToolSpec;

/// The `grep` tool's identity: its name, label, Claude Code name and path argument.
pub const SPEC: ToolSpec = ToolSpec::new("grep", "Search Content")
    .claude_code("Grep")
    .path_fields(crate::tools::spec::path_fields!(GrepArgs: path));

static DESCRIPTION: LazyLock<String> = LazyLock::new(|| {
    format!(
        "Searches file contents with a regular expression (ripgrep syntax, \
e.g. `fn\\s+main` or `log.*Error`; escape literal braces as `\\{{`). `output_mode`: \
\"files_with_matches\" (default) lists matching files, newest first; \"content\" shows \
matching lines as `path:line:text` with optional context (-A, -B, -C); \"count\" shows the number of \
matching lines per file. Narrow with `path`, `glob` (e.g. \"*.rs\", \"**/*.{{ts,tsx}}\") or `type` (ripgrep \
file types such as rust, py, js, ts, go, md; a file extension such as rs also works). `multiline` lets a pattern span lines with `.` matching \
newlines. Gitignored files, version-control directories and binary files are skipped; hidden \
files are searched. `head_limit` (default {DEFAULT_HEAD_LIMIT}, 0 for no limit) and `offset` page through the \
output lines."
    )
});

/// What a call of `grep` touches: a read of the file or directory
/// searched, `path` (the root `.` when absent).
///
/// ```
/// use serde_json::json;
///
/// let access = agentcore::tools::grep::permissions().describe(&json!({"pattern": "fn", "path": "src"}));
/// assert_eq!(access.paths, ["src"]);
/// ```
pub fn permissions() -> Permissions {
    Permissions::typed(|args: &GrepArgs| Access::read([args.path.as_deref().unwrap_or(".")]))
}

/// The `grep` tool.
#[derive(Debug)]
pub struct GrepTool {
    workspace: Workspace,
}

impl GrepTool {
    /// A `grep` tool confined to `workspace`.
    pub fn new(workspace: Workspace) -> Self {
        Self { workspace }
    }
}

impl TypedTool for GrepTool {
    type Args = GrepArgs;

    fn name(&self) -> &str {
        SPEC.name
    }

    fn description(&self) -> &str {
        &DESCRIPTION
    }

    async fn execute(&self, args: GrepArgs, cx: &CallContext) -> Result<ToolOutput, ToolError> {
        // The path as the gate judged it, when a gate did.
        let workspace = self.workspace.judged(cx.extensions().get());
        run_blocking(cx, move |token| grep(&workspace, &args, &token)).await
    }

    fn label(&self) -> Option<&str> {
        Some(SPEC.label)
    }

    fn read_only(&self, _args: &GrepArgs) -> bool {
        true
    }

    fn always_read_only(&self) -> bool {
        true
    }

    fn concurrency_safe(&self, _args: &GrepArgs) -> Option<bool> {
        Some(true)
    }

    fn interrupt_behavior(&self, _args: &GrepArgs) -> InterruptBehavior {
        InterruptBehavior::Cancel
    }

    fn activity(&self, args: &GrepArgs) -> Option<String> {
        Some(format!("Searching for {}", args.pattern))
    }

    fn extensions(&self) -> Extensions {
        permissions().into_extensions()
    }
}

/// One call: the arguments read, the tree searched, the output laid out
/// in the mode asked for.
fn grep(
    workspace: &Workspace,
    args: &GrepArgs,
    token: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let start = match &args.path {
        Some(p) => workspace
            .resolve(p)
            .map_err(|e| ToolError::new(e.to_string()))?,
        None => workspace.root().to_path_buf(),
    };
    let multiline = args.multiline.unwrap_or(false);
    let matcher = build_matcher(args, multiline)?;
    let (before, after) = args.context_lines();
    let mut searcher = SearcherBuilder::new();
    searcher
        .line_number(true)
        .multi_line(multiline)
        .before_context(before)
        .after_context(after)
        .binary_detection(BinaryDetection::quit(b'\x00'));
    let filters = args.filters(&start)?;
    let page = Page::of(args);
    // What decides whether a file matches: the pattern and the matcher's
    // flags (the searcher's context and mode do not).
    let verdicts_key = format!(
        "{:?} -i={case} -U={multiline}",
        args.pattern,
        case = args.case_insensitive.unwrap_or(false)
    );
    // Files mode lists the newest first, which takes every matching file
    // (each file's search stops at its first match); content and count
    // modes show files in path order, so a window stops the search.
    let window = match (args.output_mode, page.limit) {
        (OutputMode::FilesWithMatches, _) | (_, None) => None,
        (mode, Some(_)) => Some(Window {
            end: page.lines_shown(),
            lines: mode == OutputMode::Content,
            separators: before > 0 || after > 0,
        }),
    };
    let search = Search {
        matcher: &matcher,
        searcher: &searcher,
        mode: args.output_mode,
        keep_lines: page.lines_shown(),
        window,
        threads: default_threads(),
        context: (before, after),
        known: workspace.learned().verdicts(&verdicts_key),
        now: std::time::SystemTime::now(),
        token,
    };
    let mut found = search.walk(workspace, &start, &filters)?;
    if token.is_cancelled() {
        return Err(ToolError::cancelled(vec![Content::text(SEARCH_CANCELLED)]));
    }
    workspace
        .learned()
        .learn_verdicts(&verdicts_key, found.take_verdicts());
    let (hits, withheld, more) = found.finish();
    let withheld_note = withheld_note(withheld);
    if hits.is_empty() {
        let text = match withheld_note {
            Some(note) => format!("No matches found\n{note}"),
            None => "No matches found".to_owned(),
        };
        return Ok(ToolOutput::text(text));
    }
    let (mut out, changed_note) = match args.output_mode {
        OutputMode::FilesWithMatches => (cap_output(files_layout(workspace, hits, &page), 0), None),
        OutputMode::Content => {
            let mut again = Again {
                workspace,
                matcher: &matcher,
                searcher: searcher.build(),
                builder: &searcher,
                token,
                changed: Vec::new(),
            };
            let out = content_layout(
                workspace,
                &hits,
                args.line_numbers.unwrap_or(true),
                before > 0 || after > 0,
                &page,
                more,
                &mut again,
            );
            if token.is_cancelled() {
                return Err(ToolError::cancelled(vec![Content::text(SEARCH_CANCELLED)]));
            }
            (out, again.note())
        }
        OutputMode::Count => (
            cap_output(count_layout(workspace, &hits, &page, more), 0),
            None,
        ),
    };
    for note in [changed_note, withheld_note].into_iter().flatten() {
        out.push('\n');
        out.push_str(&note);
    }
    Ok(ToolOutput::text(out))
}

/// The note for files with hits withheld because not every one of their
/// names was met (see [`search::Found::finish`]).
fn withheld_note(withheld: usize) -> Option<String> {
    (withheld > 0).then(|| {
        format!(
            "({withheld} file{} with several names (hard links) {} not searched: {} other names lie outside the searched files or are hidden by the policy.)",
            if withheld == 1 { "" } else { "s" },
            if withheld == 1 { "was" } else { "were" },
            if withheld == 1 { "its" } else { "their" },
        )
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::fs::learned::Stamp;

    /// A verdict an earlier search left is used while the file's stamp is
    /// the same, and no longer once the file changed: shown here with a
    /// verdict no search could have given (a file that does not match,
    /// marked as matching).
    #[test]
    fn a_known_verdict_is_used_only_while_the_stamp_holds() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plain.txt");
        std::fs::write(&path, "nothing here\n").unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        let args: GrepArgs = serde_json::from_value(json!({"pattern": "needle"})).unwrap();
        let token = CancellationToken::new();
        let text = |out: ToolOutput| out.content[0].as_text().unwrap_or_default().to_owned();
        let key = "\"needle\" -i=false -U=false";
        assert_eq!(text(grep(&ws, &args, &token).unwrap()), "No matches found");
        let stamp = Stamp::of(&rustix::fs::stat(&path).unwrap());
        ws.learned()
            .learn_verdicts(key, vec![crate::fs::learned::Verdict::of(stamp, true)]);
        assert_eq!(
            text(grep(&ws, &args, &token).unwrap()),
            "Found 1 file\nplain.txt"
        );
        // Any write moves the change time, even one of the same bytes (a
        // clock tick later: the verdict set by hand above skipped the rule
        // that keeps only verdicts on files settled for a few seconds).
        std::thread::sleep(std::time::Duration::from_millis(50));
        std::fs::write(&path, "nothing here\n").unwrap();
        assert_eq!(text(grep(&ws, &args, &token).unwrap()), "No matches found");
    }

    #[test]
    fn a_call_reads_the_file_or_directory_searched() {
        let args = json!({"pattern": "fn", "path": "src/lib.rs", "-i": true});
        assert_eq!(permissions().describe(&args), Access::read(["src/lib.rs"]));
        let root = json!({"pattern": "fn", "output_mode": "content"});
        assert_eq!(permissions().describe(&root), Access::read(["."]));
        let ws = Workspace::new(std::env::temp_dir()).unwrap();
        let tool = GrepTool::new(ws).into_dyn();
        assert_eq!(Permissions::of(tool.as_ref(), &root), Access::read(["."]));
    }
}
