//! The `grep` tool: ripgrep in-process, with ripgrep's own crates.
//!
//! The walk is parallel (ignore's parallel walker, one searcher per
//! thread); each file's results are collected whole and the output is
//! assembled afterwards in a fixed order, so it is deterministic. The
//! equivalence target is `rg --hidden` with the same flags
//! (`-U --multiline-dotall` for `multiline`).

use std::borrow::Cow;
use std::collections::HashMap;
use std::io;
use std::path::PathBuf;
use std::sync::{LazyLock, Mutex};
use std::time::SystemTime;

use agentcore_stages::typed::TypedTool;
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

use super::blocking::run_blocking;
use super::schema::builtin_args;
use super::text;
use super::walk::{
    Entry, Filters, Flow, Kind, SEARCH_CANCELLED, default_threads, walk, walk_error,
};
use super::workspace::Workspace;
use crate::approval::{Access, Permissions};

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

static DESCRIPTION: LazyLock<String> = LazyLock::new(|| {
    format!(
        "Searches file contents with a regular expression (ripgrep syntax, \
e.g. `fn\\s+main` or `log.*Error`; escape literal braces as `\\{{`). `output_mode`: \
\"files_with_matches\" (default) lists matching files, newest first; \"content\" shows \
matching lines as `path:line:text` with optional context (-A, -B, -C); \"count\" shows matches \
per file. Narrow with `path`, `glob` (e.g. \"*.rs\", \"**/*.{{ts,tsx}}\") or `type` (ripgrep \
file types such as rs, py, js). `multiline` lets a pattern span lines with `.` matching \
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
    /// Only search files of this ripgrep file type, e.g. "rs", "py", "js". More efficient than glob for standard types.
    #[serde(rename = "type")]
    pub file_type: Option<String>,
    /// "files_with_matches" (default): matching file paths; "content": matching lines; "count": match counts per file.
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
        "grep"
    }

    fn description(&self) -> &str {
        &DESCRIPTION
    }

    async fn execute(&self, args: GrepArgs, cx: &CallContext) -> Result<ToolOutput, ToolError> {
        let workspace = self.workspace.clone();
        run_blocking(cx, move |token| grep(&workspace, &args, &token)).await
    }

    fn label(&self) -> Option<&str> {
        Some("Search Content")
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

/// What one file contributed.
struct FileHit {
    path: PathBuf,
    matches: u64,
    lines: Vec<Line>,
}

/// Collects one file's results; binary files are dropped whole.
struct Collect<'a> {
    mode: OutputMode,
    matches: u64,
    lines: Vec<Line>,
    binary: bool,
    token: &'a CancellationToken,
    /// Matches and context lines since the token was last checked.
    seen: u32,
}

impl Collect<'_> {
    /// Every 1,024 lines reported: whether the call was cancelled.
    fn cancelled(&mut self) -> bool {
        self.seen += 1;
        if self.seen < 1024 {
            return false;
        }
        self.seen = 0;
        self.token.is_cancelled()
    }
}

impl Sink for Collect<'_> {
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
                    self.lines
                        .push(Line::Match(first + i as u64, cut_line(line)));
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
            self.lines.push(Line::Context(
                c.line_number().unwrap_or(0),
                cut_line(c.bytes()),
            ));
        }
        Ok(true)
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, io::Error> {
        self.lines.push(Line::Break);
        Ok(true)
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
        Some(name) => Some(TypesBuilder::new()
            .add_defaults()
            .select(name)
            .build()
            .map_err(|e| {
                ToolError::new(format!(
                    "Unknown file type \"{name}\" ({e}); use a ripgrep type such as rs, py, js, ts, go, java, c, cpp, md, or use glob instead."
                ))
            })?),
        None => None,
    };

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
            let mut sink = Collect {
                mode,
                matches: 0,
                lines: Vec::new(),
                binary: false,
                token,
                seen: 0,
            };
            let reader = CancelReader { file, token };
            let searched = searcher.search_reader(&matcher, reader, &mut sink);
            let hit = (searched.is_ok() && !sink.binary && sink.matches > 0).then(|| FileHit {
                path: entry.into_path(),
                matches: sink.matches,
                lines: sink.lines,
            });
            let mut found = found.lock().unwrap_or_else(|p| p.into_inner());
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
    let page = Page {
        offset: args.offset.unwrap_or(0),
        limit: match args.head_limit {
            Some(0) => None,
            Some(n) => Some(n),
            None => Some(DEFAULT_HEAD_LIMIT),
        },
    };
    let out = match args.output_mode {
        OutputMode::FilesWithMatches => files_layout(workspace, hits, &page),
        OutputMode::Content => content_layout(
            workspace,
            &hits,
            args.line_numbers.unwrap_or(true),
            before > 0 || after > 0,
            &page,
        ),
        OutputMode::Count => count_layout(workspace, &hits, &page),
    };
    let out = cap_output(out);
    Ok(ToolOutput::text(match withheld_note {
        Some(note) => format!("{out}\n{note}"),
        None => out,
    }))
}

/// The files a search found, with hard-linked ones held back until the
/// walk shows that each of their names was seen.
#[derive(Default)]
struct Found {
    hits: Vec<FileHit>,
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
        let total = lines.len();
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
        let window = lines.into_iter().skip(start).take(end - start).collect();
        (window, note)
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

fn content_layout(
    workspace: &Workspace,
    hits: &[FileHit],
    numbers: bool,
    with_context: bool,
    page: &Page,
) -> String {
    let mut lines = Vec::new();
    for (i, hit) in hits.iter().enumerate() {
        if with_context && i > 0 {
            lines.push("--".to_owned());
        }
        let path = workspace.display(&hit.path);
        for line in &hit.lines {
            lines.push(match (line, numbers) {
                (Line::Match(n, text), true) => format!("{path}:{n}:{text}"),
                (Line::Match(_, text), false) => format!("{path}:{text}"),
                (Line::Context(n, text), true) => format!("{path}-{n}-{text}"),
                (Line::Context(_, text), false) => format!("{path}-{text}"),
                (Line::Break, _) => "--".to_owned(),
            });
        }
    }
    let (mut window, note) = page.apply(lines, "lines");
    // A separator at either edge of the window separates nothing shown.
    if window.first().is_some_and(|l| l == "--") {
        window.remove(0);
    }
    if window.last().is_some_and(|l| l == "--") {
        window.pop();
    }
    window.extend(note);
    window.join("\n")
}

fn count_layout(workspace: &Workspace, hits: &[FileHit], page: &Page) -> String {
    let total: u64 = hits.iter().map(|h| h.matches).sum();
    let lines = hits
        .iter()
        .map(|h| format!("{}:{}", workspace.display(&h.path), h.matches))
        .collect();
    let (mut window, note) = page.apply(lines, "files");
    window.extend(note);
    window.push(format!(
        "Total: {total} match{} in {} file{}",
        if total == 1 { "" } else { "es" },
        hits.len(),
        if hits.len() == 1 { "" } else { "s" }
    ));
    window.join("\n")
}

/// Cuts `out` at a line boundary to at most [`MAX_OUTPUT_CHARS`]
/// characters, with a note saying how much was left out.
fn cap_output(out: String) -> String {
    let Some((limit, _)) = out.char_indices().nth(MAX_OUTPUT_CHARS) else {
        return out;
    };
    let cut = out[..limit].rfind('\n').unwrap_or(0);
    let omitted = out[cut..].lines().filter(|l| !l.is_empty()).count();
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
        let capped = cap_output(out);
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
