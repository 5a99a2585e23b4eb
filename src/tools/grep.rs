//! The `grep` tool: ripgrep in-process, with ripgrep's own crates.
//!
//! The walk is parallel (ignore's parallel walker, one searcher per
//! thread); the output is assembled afterwards in path order, so it is
//! deterministic. The equivalence target is `rg --hidden` with the same
//! flags (`-U --multiline-dotall` for `multiline`).
//!
//! Content mode is bounded by the output cap, not by the number of
//! matches: the walk counts every file's output lines but keeps only a
//! prefix of them ([`FILE_KEEP_BYTES`] a file, [`KEEP_BYTES`] in all, and
//! never past `offset + head_limit`); the layout then streams the window
//! in path order and stops formatting once the 30,000-character cap is
//! passed, counting the rest. A file whose shown lines were not kept is
//! searched again, through handles beneath the root, and only if it is
//! still the same file (device and inode).

use std::borrow::Cow;
use std::collections::HashMap;
use std::io;
use std::path::PathBuf;
use std::sync::{LazyLock, Mutex};
use std::time::SystemTime;

use agentcore_stages::TypedTool;
use agentcore_stages::{
    CallContext, Content, Extensions, InterruptBehavior, ToolError, ToolOutput,
};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{
    BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkMatch,
};
use ignore::overrides::OverrideBuilder;
use ignore::types::TypesBuilder;
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::schema::builtin_args;
use super::text;
use crate::access::{Access, Permissions};
use crate::fs::beneath;
use crate::fs::blocking::run_blocking;
use crate::fs::walk::{
    Entry, Filters, Flow, Kind, SEARCH_CANCELLED, default_threads, walk, walk_error,
};
use crate::fs::workspace::Workspace;
use crate::tools::spec::ToolSpec;

/// The default `head_limit` as a literal, for the texts that name it.
macro_rules! default_head_limit {
    () => {
        250
    };
}

/// Output lines shown when the model gives no `head_limit`.
pub const DEFAULT_HEAD_LIMIT: usize = default_head_limit!();
/// Characters of one matched or context line shown before it is cut.
pub const MAX_LINE_CHARS: usize = 500;
/// Characters of the whole result shown before it is cut.
pub const MAX_OUTPUT_CHARS: usize = 30_000;
/// Bytes of one file's content-mode lines kept during the walk at most
/// (text plus bookkeeping); the rest are counted, and searched again only
/// if the output reaches them.
pub const FILE_KEEP_BYTES: usize = 256 << 10;
/// Bytes of content-mode lines kept during the walk over all files at
/// most; a file that would go beyond is counted only.
pub const KEEP_BYTES: usize = 16 << 20;
/// What one kept line costs besides its text, for the budgets above.
const LINE_OVERHEAD: usize = std::mem::size_of::<Line>();

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

/// The largest compiled regular expression accepted, in bytes (the NFA's
/// approximate size, grep-regex's `size_limit`; the regex crate's default).
/// Patterns people write compile to a few KB; Unicode classes are large
/// (`\w{100}` is about 5 MB).
pub const REGEX_SIZE_LIMIT: usize = 10 << 20;
/// The largest repetition count accepted, nested counts multiplied (RE2's
/// and Go's limit). Search time grows with the count whatever the compiled
/// size: `a{30000}` compiles to under 1 MB and still took seconds per
/// 200 KB file.
pub const MAX_REPETITION: u64 = 1000;
/// The lazy DFA's cache per search thread, in bytes (grep-regex's
/// `dfa_size_limit`; ripgrep's default is 1,000 MB).
pub const REGEX_DFA_CACHE: usize = 64 << 20;

/// Which output `grep` gives.
// The variants are described in `GrepArgs::output_mode`'s doc, which the
// model reads: a doc comment per variant would turn the schema's plain
// `enum` into a `oneOf`.
#[allow(missing_docs)]
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum OutputMode {
    #[default]
    FilesWithMatches,
    Content,
    Count,
}

/// The `grep` tool's identity: its name, label, Claude Code name and path argument.
pub const SPEC: ToolSpec = ToolSpec::new("grep", "Search Content")
    .claude_code("Grep")
    .path_fields(crate::tools::spec::path_fields!(GrepArgs: path));

/// The arguments of `grep`. The field docs are the descriptions the model
/// reads; the names of the flags are ripgrep's.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(transform = builtin_args)]
pub struct GrepArgs {
    /// The regular expression to search for (ripgrep syntax).
    pub pattern: String,
    /// The file or directory to search, absolute or relative to the workspace root. Omit it to search the whole workspace.
    pub path: Option<String>,
    /// Only search files matching this glob, e.g. "*.js" or "src/**/*.{ts,tsx}"; a leading ! excludes instead.
    pub glob: Option<String>,
    /// Only search files of this ripgrep file type, e.g. "rust", "py", "js" (a file extension such as "rs" also works). More efficient than glob for standard types.
    #[serde(rename = "type")]
    pub file_type: Option<String>,
    /// "files_with_matches" (default): matching file paths; "content": matching lines; "count": matching lines per file.
    #[serde(default)]
    pub output_mode: OutputMode,
    /// Case-insensitive search.
    #[serde(rename = "-i")]
    pub case_insensitive: Option<bool>,
    /// Show line numbers in content mode (default true).
    #[serde(rename = "-n")]
    pub line_numbers: Option<bool>,
    /// Lines of context after each match (content mode).
    #[serde(rename = "-A")]
    pub after: Option<usize>,
    /// Lines of context before each match (content mode).
    #[serde(rename = "-B")]
    pub before: Option<usize>,
    /// Lines of context before and after each match (content mode).
    #[serde(rename = "-C")]
    pub context: Option<usize>,
    /// Let the pattern span lines; `.` then matches newlines too (default false).
    pub multiline: Option<bool>,
    #[doc = concat!("Show at most this many output lines (paths, content lines or count lines); default ", default_head_limit!(), ", 0 for no limit.")]
    pub head_limit: Option<usize>,
    /// Skip this many output lines first, to page through long results (default 0).
    pub offset: Option<usize>,
}

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

/// One line of content output, before layout.
enum Line {
    Match(u64, String),
    Context(u64, String),
    Break,
}

impl Line {
    /// What keeping it costs, for [`FILE_KEEP_BYTES`] and [`KEEP_BYTES`].
    fn weight(&self) -> usize {
        LINE_OVERHEAD
            + match self {
                Line::Match(_, t) | Line::Context(_, t) => t.capacity(),
                Line::Break => 0,
            }
    }
}

/// What one file contributed.
struct FileHit {
    path: PathBuf,
    /// (device, inode) as searched, so a second search can tell it is the
    /// same file.
    id: (u64, u64),
    matches: u64,
    /// Content mode: how many output lines the file gives.
    count: usize,
    /// Content mode: the first of those lines (all of them when
    /// `lines.len() == count`).
    lines: Vec<Line>,
}

impl FileHit {
    fn weight(&self) -> usize {
        self.lines.iter().map(Line::weight).sum()
    }
}

/// One content line as the searcher reports it, not yet decoded.
#[derive(Clone, Copy)]
enum Raw<'b> {
    Match(u64, &'b [u8]),
    Context(u64, &'b [u8]),
    Break,
}

impl Raw<'_> {
    /// The line as laid out: decoded and cut.
    fn line(self) -> Line {
        match self {
            Raw::Match(n, bytes) => Line::Match(n, cut_line(bytes)),
            Raw::Context(n, bytes) => Line::Context(n, cut_line(bytes)),
            Raw::Break => Line::Break,
        }
    }
}

/// Where a search's content lines go: each with its index in the file's
/// output lines; `false` stops the search.
type Emit<'e> = &'e mut dyn FnMut(usize, Raw<'_>) -> bool;

/// Collects one file's results; binary files are dropped whole.
struct Collect<'a, 'e> {
    mode: OutputMode,
    matches: u64,
    /// Content lines reported so far.
    count: usize,
    emit: Emit<'e>,
    /// Whether `emit` asked to stop.
    stopped: bool,
    binary: bool,
    token: &'a CancellationToken,
    /// Matches and context lines since the token was last checked.
    seen: u32,
}

impl<'a, 'e> Collect<'a, 'e> {
    fn new(mode: OutputMode, token: &'a CancellationToken, emit: Emit<'e>) -> Self {
        Self {
            mode,
            matches: 0,
            count: 0,
            emit,
            stopped: false,
            binary: false,
            token,
            seen: 0,
        }
    }

    /// Every 1,024 lines reported: whether the call was cancelled.
    fn cancelled(&mut self) -> bool {
        self.seen += 1;
        if self.seen < 1024 {
            return false;
        }
        self.seen = 0;
        self.token.is_cancelled()
    }

    /// Hands one content line on; `false` to stop the search.
    fn push(&mut self, line: Raw<'_>) -> bool {
        let index = self.count;
        self.count += 1;
        if !self.stopped && !(self.emit)(index, line) {
            self.stopped = true;
        }
        !self.stopped
    }
}

impl Sink for Collect<'_, '_> {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, m: &SinkMatch<'_>) -> Result<bool, io::Error> {
        if self.cancelled() {
            return Ok(false);
        }
        self.matches += 1;
        match self.mode {
            OutputMode::FilesWithMatches => return Ok(false),
            OutputMode::Count => {}
            OutputMode::Content => {
                let first = m.line_number().unwrap_or(0);
                for (i, line) in m.lines().enumerate() {
                    if !self.push(Raw::Match(first + i as u64, line)) {
                        return Ok(false);
                    }
                }
            }
        }
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, c: &SinkContext<'_>) -> Result<bool, io::Error> {
        if self.cancelled() {
            return Ok(false);
        }
        if matches!(c.kind(), SinkContextKind::Before | SinkContextKind::After) {
            return Ok(self.push(Raw::Context(c.line_number().unwrap_or(0), c.bytes())));
        }
        Ok(true)
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, io::Error> {
        Ok(self.push(Raw::Break))
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, io::Error> {
        self.binary = true;
        Ok(false)
    }
}

/// A line without its terminator, lossily decoded, cut at
/// [`MAX_LINE_CHARS`] with ` [… truncated]`.
fn cut_line(bytes: &[u8]) -> String {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    // Never decode more than the cut needs.
    let head = &bytes[..bytes.len().min(MAX_LINE_CHARS * 4)];
    let text: Cow<'_, str> = String::from_utf8_lossy(head);
    match text.char_indices().nth(MAX_LINE_CHARS) {
        Some((at, _)) => format!("{} [… truncated]", &text[..at]),
        None if head.len() < bytes.len() => format!("{text} [… truncated]"),
        None => text.into_owned(),
    }
}

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
    let (before, after) = match args.output_mode {
        OutputMode::Content => (
            args.before.or(args.context).unwrap_or(0),
            args.after.or(args.context).unwrap_or(0),
        ),
        _ => (0, 0),
    };
    let mut searcher = SearcherBuilder::new();
    searcher
        .line_number(true)
        .multi_line(multiline)
        .before_context(before)
        .after_context(after)
        .binary_detection(BinaryDetection::quit(b'\x00'));

    let overrides = match &args.glob {
        Some(glob) => Some(
            OverrideBuilder::new(&start)
                .add(glob)
                .and_then(|b| b.build())
                .map_err(|e| ToolError::new(format!("Invalid glob \"{glob}\": {e}")))?,
        ),
        None => None,
    };
    let types = match &args.file_type {
        Some(name) => Some(file_types(name)?),
        None => None,
    };

    let page = Page {
        offset: args.offset.unwrap_or(0),
        limit: match args.head_limit {
            Some(0) => None,
            Some(n) => Some(n),
            None => Some(DEFAULT_HEAD_LIMIT),
        },
    };
    // A file's output lines past `offset + head_limit` are never shown,
    // wherever the file lands in path order.
    let keep_lines = page
        .limit
        .map_or(usize::MAX, |n| page.offset.saturating_add(n));
    let found: Mutex<Found> = Mutex::new(Found::default());
    let filters = Filters { overrides, types };
    walk(workspace, &start, &filters, default_threads(), || {
        let found = &found;
        let matcher = matcher.clone();
        let mut searcher = searcher.build();
        let mode = args.output_mode;
        move |entry: Entry<'_>| {
            if token.is_cancelled() {
                return Flow::Quit;
            }
            // Symlinks are not followed (as ripgrep without -L); FIFOs,
            // sockets and devices are not opened.
            if entry.kind() != Kind::File {
                return Flow::Continue;
            }
            let Ok(Some((file, stat))) = entry.open_file() else {
                return Flow::Continue;
            };
            // Keeps a prefix of the file's lines within the budgets; every
            // line is counted.
            let mut lines = Vec::new();
            let mut weight = 0;
            let mut keeping = true;
            let mut keep = |index: usize, raw: Raw<'_>| {
                if keeping && index < keep_lines {
                    let line = raw.line();
                    weight += line.weight();
                    if weight <= FILE_KEEP_BYTES {
                        lines.push(line);
                        return true;
                    }
                }
                keeping = false;
                true
            };
            let mut sink = Collect::new(mode, token, &mut keep);
            let reader = CancelReader { file, token };
            let searched = searcher.search_reader(&matcher, reader, &mut sink);
            let (binary, matches, count) = (sink.binary, sink.matches, sink.count);
            let hit = (searched.is_ok() && !binary && matches > 0).then(|| FileHit {
                path: entry.into_path(),
                // The stat fields' widths differ between targets.
                #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
                id: (stat.st_dev as u64, stat.st_ino as u64),
                matches,
                count,
                lines,
            });
            let mut found = found.lock().unwrap_or_else(|p| p.into_inner());
            let hit = hit.map(|hit| found.keep(hit));
            if stat.st_nlink > 1 {
                found.linked(&stat, hit);
            } else {
                found.hits.extend(hit);
            }
            Flow::Continue
        }
    })
    .map_err(|e| walk_error(workspace, &start, &e))?;
    if token.is_cancelled() {
        return Err(ToolError::cancelled(vec![Content::text(SEARCH_CANCELLED)]));
    }
    let found = found.into_inner().unwrap_or_else(|p| p.into_inner());
    let (hits, withheld) = found.finish();
    let withheld_note = (withheld > 0).then(|| {
        format!(
            "({withheld} file{} with several names (hard links) {} not searched: {} other names lie outside the searched files or are hidden by the policy.)",
            if withheld == 1 { "" } else { "s" },
            if withheld == 1 { "was" } else { "were" },
            if withheld == 1 { "its" } else { "their" },
        )
    });
    let mut hits = hits;
    if hits.is_empty() {
        let text = match withheld_note {
            Some(note) => format!("No matches found\n{note}"),
            None => "No matches found".to_owned(),
        };
        return Ok(ToolOutput::text(text));
    }
    hits.sort_by(|a, b| a.path.cmp(&b.path));
    let (out, changed_note) = match args.output_mode {
        OutputMode::FilesWithMatches => (cap_output(files_layout(workspace, hits, &page), 0), None),
        OutputMode::Content => {
            let mut again = Again {
                workspace,
                matcher: &matcher,
                searcher: searcher.build(),
                token,
                changed: Vec::new(),
            };
            let out = content_layout(
                workspace,
                &hits,
                args.line_numbers.unwrap_or(true),
                before > 0 || after > 0,
                &page,
                &mut again,
            );
            if token.is_cancelled() {
                return Err(ToolError::cancelled(vec![Content::text(SEARCH_CANCELLED)]));
            }
            (out, again.note())
        }
        OutputMode::Count => (cap_output(count_layout(workspace, &hits, &page), 0), None),
    };
    let mut out = out;
    for note in [changed_note, withheld_note].into_iter().flatten() {
        out.push('\n');
        out.push_str(&note);
    }
    Ok(ToolOutput::text(out))
}

/// The second search of files whose shown lines the walk did not keep.
struct Again<'a> {
    workspace: &'a Workspace,
    matcher: &'a RegexMatcher,
    searcher: Searcher,
    token: &'a CancellationToken,
    /// Files that changed since the walk searched them (shown paths).
    changed: Vec<String>,
}

impl Again<'_> {
    /// Searches `hit` again, handing its output lines from index `from` on
    /// to `emit` until it returns `false`. `false` when the file is no
    /// longer the one the walk searched, or no longer gives the lines it
    /// gave (recorded for [`Again::note`]).
    fn search(&mut self, hit: &FileHit, from: usize, emit: &mut dyn FnMut(Line) -> bool) -> bool {
        let mut ended_early = false;
        let mut count = 0;
        let mut forward = |index: usize, raw: Raw<'_>| {
            count = index + 1;
            if index < from {
                return true;
            }
            if index >= hit.count || !emit(raw.line()) {
                ended_early = index < hit.count;
                return false;
            }
            true
        };
        let same = match self.open(hit) {
            Some(file) => {
                let mut sink = Collect::new(OutputMode::Content, self.token, &mut forward);
                let reader = CancelReader {
                    file,
                    token: self.token,
                };
                let searched = self.searcher.search_reader(self.matcher, reader, &mut sink);
                let binary = sink.binary;
                searched.is_ok() && !binary && (ended_early || count == hit.count)
            }
            None => false,
        };
        if !same && !self.token.is_cancelled() {
            self.changed.push(self.workspace.display(&hit.path));
        }
        same
    }

    /// Opens the file `hit` names beneath the root, without following a
    /// link, if it is still the file the walk searched.
    fn open(&self, hit: &FileHit) -> Option<std::fs::File> {
        use std::os::fd::AsFd;
        use std::os::unix::fs::MetadataExt;
        let (dir, name) = self.workspace.open_parent(&hit.path).ok()?;
        let file = beneath::open_file_at(dir.as_fd(), &name, beneath::Access::Read).ok()?;
        let meta = file.metadata().ok()?;
        ((meta.dev(), meta.ino()) == hit.id).then_some(file)
    }

    /// The note for files that changed while the search ran.
    fn note(&self) -> Option<String> {
        let (first, rest) = self.changed.split_first()?;
        let n = self.changed.len();
        Some(format!(
            "({n} file{} changed while the search ran, so some of {} lines are missing above: {}. Search again to see them.)",
            if n == 1 { "" } else { "s" },
            if n == 1 { "its" } else { "their" },
            std::iter::once(first)
                .chain(rest)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }
}

/// The files a search found, with hard-linked ones held back until the
/// walk shows that each of their names was seen.
#[derive(Default)]
struct Found {
    hits: Vec<FileHit>,
    /// Bytes of content lines kept, within [`KEEP_BYTES`].
    kept: usize,
    /// (device, inode) → names seen, link count, hits.
    linked: HashMap<(u64, u64), Linked>,
}

#[derive(Default)]
struct Linked {
    seen: u64,
    nlink: u64,
    hits: Vec<FileHit>,
}

impl Found {
    /// `hit`, its kept lines dropped when they would pass [`KEEP_BYTES`].
    fn keep(&mut self, mut hit: FileHit) -> FileHit {
        let weight = hit.weight();
        if self.kept.saturating_add(weight) > KEEP_BYTES {
            hit.lines = Vec::new();
        } else {
            self.kept += weight;
        }
        hit
    }

    fn linked(&mut self, stat: &rustix::fs::Stat, hit: Option<FileHit>) {
        let entry = self.linked.entry((stat.st_dev, stat.st_ino)).or_default();
        entry.seen += 1;
        // `st_nlink` is u32 on some targets.
        #[allow(clippy::useless_conversion)]
        let nlink = u64::from(stat.st_nlink);
        entry.nlink = entry.nlink.max(nlink);
        entry.hits.extend(hit);
    }

    /// The hits shown, and how many files with hits were withheld.
    ///
    /// A file with several names (hard links) is shown only when this walk
    /// met every one of its names, so every name is inside the searched
    /// tree and none is left out by the policy: otherwise a link placed
    /// beside a denied or protected file (`ln secrets/key notes.txt`, or
    /// `ln .env x`) would show the denied content under another name.
    fn finish(mut self) -> (Vec<FileHit>, usize) {
        let mut withheld = 0;
        for (_, linked) in self.linked {
            if linked.seen >= linked.nlink {
                self.hits.extend(linked.hits);
            } else if !linked.hits.is_empty() {
                withheld += 1;
            }
        }
        (self.hits, withheld)
    }
}

/// A file reader that stops when the call is cancelled (checked on every
/// read, about every 64 KiB), so a search of a huge file ends promptly.
struct CancelReader<'a> {
    file: std::fs::File,
    token: &'a CancellationToken,
}

impl io::Read for CancelReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.token.is_cancelled() {
            return Err(io::Error::other("search cancelled"));
        }
        self.file.read(buf)
    }
}

fn build_matcher(args: &GrepArgs, multiline: bool) -> Result<RegexMatcher, ToolError> {
    let mut builder = RegexMatcherBuilder::new();
    builder
        .case_insensitive(args.case_insensitive.unwrap_or(false))
        .multi_line(true)
        .dot_matches_new_line(multiline);
    if !multiline {
        builder.line_terminator(Some(b'\n'));
    }
    builder
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_DFA_CACHE);
    if let Some(count) = repetition_count(&args.pattern)
        && count > MAX_REPETITION
    {
        return Err(too_large(
            &args.pattern,
            &format!(
                "it repeats a part {count} times, nested counts multiplied; the limit is {MAX_REPETITION}"
            ),
            "",
        ));
    }
    builder.build(&args.pattern).map_err(|e| {
        let text = e.to_string();
        if text.contains("size limit") {
            return too_large(
                &args.pattern,
                text.trim(),
                "fewer alternatives, or narrower character classes, ",
            );
        }
        ToolError::new(format!(
            "Invalid regular expression \"{}\": {e}\nEscape special characters such as ( [ {{ with a backslash to match them literally.",
            args.pattern
        ))
    })
}

/// The refusal of a pattern too large once compiled: `why` it is, and the
/// ways to simplify it beyond smaller counts (`more`, ending in ", ").
fn too_large(pattern: &str, why: &str, more: &str) -> ToolError {
    ToolError::new(format!(
        "Invalid regular expression \"{pattern}\": the pattern is too large once compiled ({why}); simplify it: use smaller repetition counts (e.g. `a{{1,100}}` or `a+` instead of `a{{30000}}`), {more}or search for a shorter literal part of what you want."
    ))
}

/// The largest number of times the pattern repeats any part, nested
/// counted repetitions multiplied (`(a{10}){20}` is 200; `*` and `+` count
/// their minimum). `None` when the pattern does not parse (the matcher
/// then reports the syntax error).
fn repetition_count(pattern: &str) -> Option<u64> {
    use regex_syntax::hir::{Hir, HirKind};
    fn walk(hir: &Hir) -> u64 {
        match hir.kind() {
            HirKind::Repetition(rep) => {
                let count = u64::from(rep.max.unwrap_or(rep.min).max(1));
                count.saturating_mul(walk(&rep.sub))
            }
            HirKind::Capture(cap) => walk(&cap.sub),
            HirKind::Concat(subs) | HirKind::Alternation(subs) => {
                subs.iter().map(walk).max().unwrap_or(1)
            }
            _ => 1,
        }
    }
    let hir = regex_syntax::ParserBuilder::new()
        .utf8(false)
        .build()
        .parse(pattern)
        .ok()?;
    Some(walk(&hir))
}

/// `offset` and `head_limit`, both counted in output lines.
struct Page {
    offset: usize,
    limit: Option<usize>,
}

impl Page {
    /// The window of `lines`, and a note when lines lie beyond it.
    fn apply(&self, lines: Vec<String>, what: &str) -> (Vec<String>, Option<String>) {
        let (start, end, note) = self.window(lines.len(), what);
        let window = lines.into_iter().skip(start).take(end - start).collect();
        (window, note)
    }

    /// The window `start..end` of `total` lines, and a note when lines lie
    /// beyond it.
    fn window(&self, total: usize, what: &str) -> (usize, usize, Option<String>) {
        let end = match self.limit {
            Some(n) => self.offset.saturating_add(n).min(total),
            None => total,
        };
        let start = self.offset.min(end);
        let note = (end < total).then(|| {
            format!(
                "(Results are truncated: showing {what} {}–{end} of {total}. Use offset {end} to see more, or narrow the pattern, path or glob.)",
                start + 1
            )
        });
        (start, end, note)
    }
}

fn files_layout(workspace: &Workspace, mut hits: Vec<FileHit>, page: &Page) -> String {
    let mut dated: Vec<(SystemTime, PathBuf)> = hits
        .drain(..)
        .map(|h| {
            let mtime = std::fs::metadata(&h.path)
                .and_then(|m| m.modified())
                .unwrap_or(SystemTime::UNIX_EPOCH);
            (mtime, h.path)
        })
        .collect();
    dated.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let total = dated.len();
    let paths = dated.iter().map(|(_, p)| workspace.display(p)).collect();
    let (window, note) = page.apply(paths, "files");
    let mut out = vec![format!(
        "Found {total} file{}",
        if total == 1 { "" } else { "s" }
    )];
    out.extend(window);
    out.extend(note);
    out.join("\n")
}

/// Content mode's output: the window of the output lines in path order
/// (with `--` between files when there is context), capped as
/// [`cap_output`] caps it. Streams: lines are formatted only until the cap
/// is passed and counted after that; lines the walk did not keep are
/// searched again through `again`.
fn content_layout(
    workspace: &Workspace,
    hits: &[FileHit],
    numbers: bool,
    with_context: bool,
    page: &Page,
    again: &mut Again<'_>,
) -> String {
    let separators = if with_context { hits.len() - 1 } else { 0 };
    let total = hits.iter().map(|h| h.count).sum::<usize>() + separators;
    let (start, end, note) = page.window(total, "lines");
    let mut out = Capped::default();
    // The output line at `pos` of the whole sequence; a separator at
    // either edge of the window separates nothing shown and is left out.
    let push = |out: &mut Capped, pos: usize, text: Option<String>| {
        match text {
            Some(text) => out.push(&text),
            None if pos == start || pos + 1 == end => {}
            None => out.push("--"),
        }
        out.next = pos + 1;
    };
    let mut pos = 0;
    for (i, hit) in hits.iter().enumerate() {
        if pos >= end || out.full() {
            break;
        }
        if with_context && i > 0 {
            if pos >= start {
                push(&mut out, pos, None);
            }
            pos += 1;
        }
        let first = pos;
        let from = start.saturating_sub(first).min(hit.count);
        let to = end.saturating_sub(first).min(hit.count);
        pos = first + hit.count;
        if from >= to {
            continue;
        }
        let path = workspace.display(&hit.path);
        let show = |line: &Line, index: usize, out: &mut Capped| {
            let text = match (line, numbers) {
                (Line::Match(n, text), true) => format!("{path}:{n}:{text}"),
                (Line::Match(_, text), false) => format!("{path}:{text}"),
                (Line::Context(n, text), true) => format!("{path}-{n}-{text}"),
                (Line::Context(_, text), false) => format!("{path}-{text}"),
                (Line::Break, _) => return push(out, first + index, None),
            };
            push(out, first + index, Some(text));
        };
        let kept = hit.lines.len().min(to);
        for index in from..kept {
            if out.full() {
                break;
            }
            show(&hit.lines[index], index, &mut out);
        }
        if kept < to && !out.full() {
            let mut index = from.max(kept);
            again.search(hit, index, &mut |line| {
                show(&line, index, &mut out);
                index += 1;
                index < to && !out.full()
            });
        }
    }
    if out.full() {
        // Every line of the window not laid out is one more line cut,
        // except a separator at its end.
        let mut more = end.saturating_sub(out.next);
        if more > 0 && last_is_separator(hits, with_context, end - 1, again) {
            more -= 1;
        }
        return out.finish(note, more);
    }
    out.finish(note, 0)
}

/// Whether output line `pos` of the whole sequence is a separator (`--`).
fn last_is_separator(
    hits: &[FileHit],
    with_context: bool,
    pos: usize,
    again: &mut Again<'_>,
) -> bool {
    if !with_context {
        return false;
    }
    let mut first = 0;
    for (i, hit) in hits.iter().enumerate() {
        if i > 0 {
            if first == pos {
                return true;
            }
            first += 1;
        }
        if pos < first + hit.count {
            let index = pos - first;
            // A break always has a line of its own file after it.
            if index + 1 == hit.count {
                return false;
            }
            if let Some(line) = hit.lines.get(index) {
                return matches!(line, Line::Break);
            }
            let mut is_break = false;
            again.search(hit, index, &mut |line| {
                is_break = matches!(line, Line::Break);
                false
            });
            return is_break;
        }
        first += hit.count;
    }
    false
}

/// Output laid out line by line up to just past [`MAX_OUTPUT_CHARS`].
#[derive(Default)]
struct Capped {
    out: String,
    chars: usize,
    /// Lines pushed.
    lines: usize,
    /// The position, in the whole sequence of output lines, after the
    /// last one laid out (or left out as a separator at an edge).
    next: usize,
}

impl Capped {
    /// Whether the cap is passed: nothing more is shown.
    fn full(&self) -> bool {
        self.chars > MAX_OUTPUT_CHARS
    }

    fn push(&mut self, line: &str) {
        if self.lines > 0 {
            self.out.push('\n');
            self.chars += 1;
        }
        self.out.push_str(line);
        self.chars += line.chars().count();
        self.lines += 1;
    }

    /// The output with the page's note, capped, with `more` lines beyond
    /// those pushed counted as cut.
    fn finish(mut self, note: Option<String>, more: usize) -> String {
        if let Some(note) = note {
            if self.full() {
                return cap_output(self.out, more + 1);
            }
            self.push(&note);
        }
        cap_output(self.out, more)
    }
}

/// The ripgrep file type `name` (any of its names: `py` or `python`,
/// `md` or `markdown`), or, for a name ripgrep does not know, the one
/// type whose globs include `*.NAME` (`rs` is `rust`, `yml` is `yaml`).
fn file_types(name: &str) -> Result<ignore::types::Types, ToolError> {
    let mut defaults = TypesBuilder::new();
    defaults.add_defaults();
    let known = defaults.definitions();
    let chosen = if known.iter().any(|d| d.name() == name) {
        Some(name.to_owned())
    } else {
        let glob = format!("*.{}", name.trim_start_matches('.'));
        let mut owners: Vec<&str> = known
            .iter()
            .filter(|d| d.globs().contains(&glob))
            .map(|d| d.name())
            .collect();
        owners.dedup();
        match owners.as_slice() {
            [one] => Some((*one).to_owned()),
            _ => None,
        }
    };
    let refused = |why: String| {
        ToolError::new(format!(
            "Unknown file type \"{name}\" ({why}); use a ripgrep type such as rust, py, js, ts, go, java, c, cpp, md (or a file extension such as rs), or use glob instead, e.g. \"*.{name}\"."
        ))
    };
    let Some(chosen) = chosen else {
        return Err(refused("ripgrep has no type of that name".to_owned()));
    };
    defaults
        .select(&chosen)
        .build()
        .map_err(|e| refused(e.to_string()))
}

fn count_layout(workspace: &Workspace, hits: &[FileHit], page: &Page) -> String {
    let total: u64 = hits.iter().map(|h| h.matches).sum();
    let lines = hits
        .iter()
        .map(|h| format!("{}:{}", workspace.display(&h.path), h.matches))
        .collect();
    let (mut window, note) = page.apply(lines, "files");
    window.extend(note);
    // Lines, as `rg -c` counts: a line with two matches counts once.
    window.push(format!(
        "Total: {total} matching line{} in {} file{}",
        if total == 1 { "" } else { "s" },
        hits.len(),
        if hits.len() == 1 { "" } else { "s" }
    ));
    window.join("\n")
}

/// Cuts `out` at a line boundary to at most [`MAX_OUTPUT_CHARS`]
/// characters, with a note saying how much was left out: the lines of
/// `out` cut, plus `more` lines that followed it and were not laid out.
fn cap_output(out: String, more: usize) -> String {
    let Some((limit, _)) = out.char_indices().nth(MAX_OUTPUT_CHARS) else {
        return out;
    };
    let cut = out[..limit].rfind('\n').unwrap_or(0);
    let omitted = out[cut..].lines().filter(|l| !l.is_empty()).count() + more;
    format!(
        "{}\n(Output truncated at {} characters: {omitted} more lines not shown. Use head_limit and offset to page, or narrow the pattern, path or glob.)",
        &out[..cut],
        text::thousands(MAX_OUTPUT_CHARS)
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn lines_are_cut_at_500_characters() {
        assert_eq!(cut_line(b"short\n"), "short");
        let long = "é".repeat(600);
        let cut = cut_line(long.as_bytes());
        assert_eq!(cut, format!("{} [… truncated]", "é".repeat(500)));
        assert_eq!(cut_line(&[b'x'; 500]), "x".repeat(500));
    }

    #[test]
    fn pages_count_output_lines() {
        let lines: Vec<String> = (1..=10).map(|i| i.to_string()).collect();
        let page = Page {
            offset: 2,
            limit: Some(3),
        };
        let (w, note) = page.apply(lines.clone(), "lines");
        assert_eq!(w, ["3", "4", "5"]);
        assert!(note.unwrap().contains("showing lines 3–5 of 10"));
        let all = Page {
            offset: 0,
            limit: None,
        };
        assert_eq!(
            all.apply(lines, "lines"),
            ((1..=10).map(|i| i.to_string()).collect(), None)
        );
    }

    #[test]
    fn a_pattern_repeating_too_often_is_refused_with_the_fix() {
        let args: GrepArgs = serde_json::from_value(json!({"pattern": "a{30000}"})).unwrap();
        let Err(err) = build_matcher(&args, false) else {
            panic!("a{{30000}} compiled");
        };
        let text = err.content[0].as_text().unwrap_or_default().to_owned();
        assert_eq!(
            text,
            "Invalid regular expression \"a{30000}\": the pattern is too large once compiled (it repeats a part 30000 times, nested counts multiplied; the limit is 1000); simplify it: use smaller repetition counts (e.g. `a{1,100}` or `a+` instead of `a{30000}`), or search for a shorter literal part of what you want."
        );
        assert!(
            too_large("x", "why", "fewer alternatives, or narrower character classes, ")
                .content[0]
                .as_text()
                .unwrap_or_default()
                .ends_with("instead of `a{30000}`), fewer alternatives, or narrower character classes, or search for a shorter literal part of what you want.")
        );
    }

    #[test]
    fn output_is_capped_at_a_line_boundary() {
        let out: String = (0..5000).map(|i| format!("line {i:05}\n")).collect();
        let capped = cap_output(out, 0);
        let (body, note) = capped.rsplit_once('\n').unwrap();
        assert!(body.chars().count() <= MAX_OUTPUT_CHARS);
        assert!(note.starts_with("(Output truncated at 30,000 characters: "));
        assert!(body.ends_with(|c: char| c.is_ascii_digit()));
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
