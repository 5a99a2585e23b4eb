//! The layout of each output mode: files newest first, content lines in
//! path order (streamed, so only what the cap lets through is
//! formatted), and counts per file with a total.

use std::path::PathBuf;
use std::time::SystemTime;

use super::again::Again;
use super::capped::Capped;
use super::page::Page;
use super::search::FileHit;
use super::sink::Line;
use crate::fs::workspace::Workspace;

pub(crate) fn files_layout(workspace: &Workspace, mut hits: Vec<FileHit>, page: &Page) -> String {
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
    let (window, note) = page.apply(paths, "files", false);
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
/// [`cap_output`](super::capped::cap_output) caps it. Streams: lines are
/// formatted only until the cap is passed and counted after that; lines
/// the walk did not keep are searched again through `again`.
pub(crate) fn content_layout(
    workspace: &Workspace,
    hits: &[FileHit],
    numbers: bool,
    with_context: bool,
    page: &Page,
    more: bool,
    again: &mut Again<'_>,
) -> String {
    let separators = if with_context { hits.len() - 1 } else { 0 };
    let total = hits.iter().map(|h| h.count).sum::<usize>() + separators;
    let (start, end, note) = page.window(total, "lines", more);
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
            push(out, first + index, content_line(&path, line, numbers));
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

/// One content line as shown, `path:line:text` for a match and
/// `path-line-text` for context (without the line number when `numbers`
/// is off); `None` for a break between groups of lines.
fn content_line(path: &str, line: &Line, numbers: bool) -> Option<String> {
    Some(match (line, numbers) {
        (Line::Match(n, text), true) => format!("{path}:{n}:{text}"),
        (Line::Match(_, text), false) => format!("{path}:{text}"),
        (Line::Context(n, text), true) => format!("{path}-{n}-{text}"),
        (Line::Context(_, text), false) => format!("{path}-{text}"),
        (Line::Break, _) => return None,
    })
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

/// Count mode's output: `path:N` for the window of files in path order,
/// then the total (`more`: the search stopped once the window was
/// filled, so the total is of the files found up to there, "at least").
pub(crate) fn count_layout(
    workspace: &Workspace,
    hits: &[FileHit],
    page: &Page,
    more: bool,
) -> String {
    let total: u64 = hits.iter().map(|h| h.matches).sum();
    let lines = hits
        .iter()
        .map(|h| format!("{}:{}", workspace.display(&h.path), h.matches))
        .collect();
    let (mut window, note) = page.apply(lines, "files", more);
    window.extend(note);
    // Lines, as `rg -c` counts: a line with two matches counts once.
    let at_least = if more { "at least " } else { "" };
    window.push(format!(
        "Total: {at_least}{total} matching line{} in {at_least}{} file{}",
        if total == 1 { "" } else { "s" },
        hits.len(),
        if hits.len() == 1 { "" } else { "s" }
    ));
    window.join("\n")
}
