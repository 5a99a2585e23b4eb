//! The pure part of `edit_lines`: a file's text as the lines `read`
//! numbers, the check of every anchor against them, and the operations
//! applied by line number, all at once.
//!
//! The text is the file decoded with its line endings as they are (a CRLF
//! file's `\r\n` kept), so that a line is exactly what `read` shows: the
//! bytes up to a `\n`, without one `\r` before it (or one at the very end
//! of the file). New lines take the line ending of the line they replace
//! or sit beside; the last line of a file that did not end with a line
//! ending still does not.

use std::fmt::Write as _;
use std::ops::Range;

use super::anchor::{Anchor, LineHash, WINDOW, line_hash};
use super::ops::{LineOp, text_lines};

/// One line: its content as `read` shows it and the ending after it
/// (`"\n"`, `"\r\n"`, or at the end of the file `""` or a lone `"\r"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Line<'a> {
    pub(crate) content: &'a str,
    pub(crate) end: &'a str,
}

impl Line<'_> {
    fn has_newline(&self) -> bool {
        self.end.ends_with('\n')
    }
}

/// The lines of `text`, as `read` numbers them.
pub(crate) fn split(text: &str) -> Vec<Line<'_>> {
    let mut lines = Vec::new();
    let mut pos = 0;
    for i in memchr::memchr_iter(b'\n', text.as_bytes()) {
        let segment = &text[pos..i];
        lines.push(match segment.strip_suffix('\r') {
            Some(content) => Line {
                content,
                end: &text[i - 1..=i],
            },
            None => Line {
                content: segment,
                end: &text[i..=i],
            },
        });
        pos = i + 1;
    }
    if pos < text.len() {
        let segment = &text[pos..];
        lines.push(match segment.strip_suffix('\r') {
            Some(content) => Line {
                content,
                end: &segment[content.len()..],
            },
            None => Line {
                content: segment,
                end: "",
            },
        });
    }
    lines
}

/// The anchor hash of every line.
pub(crate) fn hashes(lines: &[Line<'_>]) -> Vec<LineHash> {
    lines
        .iter()
        .map(|l| line_hash(l.content.as_bytes()))
        .collect()
}

/// Why an anchor does not stand for a line of the file as it is now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AnchorProblem {
    /// The file has fewer lines.
    PastEnd,
    /// The line has another hash now (this one).
    Stale(LineHash),
    /// The line still has the hash, but so does this other line (1-based)
    /// within [`WINDOW`] lines of it, and the model has not read the line
    /// as the file is now.
    Ambiguous(usize),
}

/// An anchor that does not stand for a line, with the operation citing it
/// (0-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BadAnchor {
    /// The operation citing it, 0-based.
    pub(crate) op: usize,
    /// The anchor.
    pub(crate) anchor: Anchor,
    /// Why it does not stand.
    pub(crate) problem: AnchorProblem,
}

/// Checks every anchor of `ops` against `lines` (with their `hashes`):
/// the line exists and has the hash, and the line was shown to the model
/// as the file is now (`exact`, 1-based) or its hash is unique within
/// [`WINDOW`] lines. Every anchor that fails, in order.
pub(crate) fn check_anchors(
    hashes: &[LineHash],
    ops: &[LineOp],
    exact: &dyn Fn(usize) -> bool,
) -> Vec<BadAnchor> {
    let mut bad = Vec::new();
    for (op_index, op) in ops.iter().enumerate() {
        for anchor in op.anchors() {
            let Some(hash) = anchor.hash else {
                // `0:`, the top of the file: nothing to check.
                continue;
            };
            let problem = match hashes.get(anchor.line - 1) {
                None => Some(AnchorProblem::PastEnd),
                Some(&now) if now != hash => Some(AnchorProblem::Stale(now)),
                Some(_) if exact(anchor.line) => None,
                Some(_) => {
                    let from = anchor.line.saturating_sub(WINDOW).max(1);
                    let to = (anchor.line + WINDOW).min(hashes.len());
                    (from..=to)
                        .filter(|&n| n != anchor.line && hashes[n - 1] == hash)
                        .min_by_key(|&n| n.abs_diff(anchor.line))
                        .map(AnchorProblem::Ambiguous)
                }
            };
            if let Some(problem) = problem {
                bad.push(BadAnchor {
                    op: op_index,
                    anchor,
                    problem,
                });
            }
        }
    }
    bad
}

/// Characters of one line shown in a refusal or a result before it is cut.
const SHOWN_LINE_CHARS: usize = 500;
/// Lines of context shown around a stale anchor.
const STALE_CONTEXT: usize = 3;
/// Bad anchors described at most in one refusal.
const MAX_DESCRIBED: usize = 8;
/// Lines shown at most in a refusal or a result.
const MAX_SHOWN_LINES: usize = 200;

/// Appends line `n` (1-based) as `read` shows it with anchors:
/// `{n:>6}:{hash}\t{content}`, cut at [`SHOWN_LINE_CHARS`].
fn push_anchored(out: &mut String, n: usize, hash: LineHash, content: &str) {
    let _ = write!(out, "{n:>6}:{hash}\t");
    match content.char_indices().nth(SHOWN_LINE_CHARS) {
        None => out.push_str(content),
        Some((at, _)) => {
            let more = content[at..].chars().count();
            out.push_str(&content[..at]);
            let _ = write!(out, " [… {more} more characters]");
        }
    }
}

/// The 0-based line ranges `regions` (merged, in order) shown with their
/// anchors, `...` between separate ones, at most [`MAX_SHOWN_LINES`].
fn show_regions(lines: &[Line<'_>], hashes: &[LineHash], mut regions: Vec<Range<usize>>) -> String {
    regions.sort_by_key(|r| r.start);
    let mut merged: Vec<Range<usize>> = Vec::new();
    for r in regions {
        let r = r.start.min(lines.len())..r.end.min(lines.len());
        if r.is_empty() {
            continue;
        }
        match merged.last_mut() {
            Some(prev) if r.start <= prev.end => prev.end = prev.end.max(r.end),
            _ => merged.push(r),
        }
    }
    let mut out = String::new();
    let mut shown = 0;
    for (k, r) in merged.iter().enumerate() {
        if k > 0 {
            out.push_str("\n...");
        }
        for i in r.clone() {
            if shown == MAX_SHOWN_LINES {
                out.push_str("\n(more lines not shown; read the file to see them)");
                return out;
            }
            if !out.is_empty() {
                out.push('\n');
            }
            push_anchored(&mut out, i + 1, hashes[i], lines[i].content);
            shown += 1;
        }
    }
    out
}

/// The refusal for `bad` anchors: each one, why, and the lines around it
/// as they are now, with their anchors.
pub(crate) fn describe_bad_anchors(
    lines: &[Line<'_>],
    hashes: &[LineHash],
    ops: &[LineOp],
    bad: &[BadAnchor],
) -> String {
    let total_ops = ops.len();
    let n = lines.len();
    let mut out = format!(
        "Nothing was changed: {} anchor{} no longer stand{} for the line{} you meant.",
        bad.len(),
        if bad.len() == 1 { "" } else { "s" },
        if bad.len() == 1 { "s" } else { "" },
        if bad.len() == 1 { "" } else { "s" },
    );
    let mut regions = Vec::new();
    for b in bad.iter().take(MAX_DESCRIBED) {
        let line = b.anchor.line;
        let _ = write!(
            out,
            "\nOperation {} of {total_ops} ({}): ",
            b.op + 1,
            ops[b.op].describe()
        );
        match b.problem {
            AnchorProblem::PastEnd => {
                let _ = write!(
                    out,
                    "{} is past the end: the file has {n} line{}.",
                    b.anchor,
                    if n == 1 { "" } else { "s" }
                );
                regions.push(n.saturating_sub(STALE_CONTEXT)..n);
            }
            AnchorProblem::Stale(now) => {
                let _ = write!(
                    out,
                    "{} is stale: line {line} is now {line}:{now}.",
                    b.anchor
                );
                regions.push(line.saturating_sub(1 + STALE_CONTEXT)..line + STALE_CONTEXT);
            }
            AnchorProblem::Ambiguous(other) => {
                let _ = write!(
                    out,
                    "{} is ambiguous: line {other} has the same hash, within {WINDOW} lines of it, and you have not read line {line} since the file last changed (after an edit, lines move), so it may not be the line you meant.",
                    b.anchor
                );
                let (lo, hi) = (line.min(other), line.max(other));
                regions.push(lo.saturating_sub(1 + STALE_CONTEXT)..hi + STALE_CONTEXT);
            }
        }
    }
    if bad.len() > MAX_DESCRIBED {
        let _ = write!(out, "\n({} more not shown.)", bad.len() - MAX_DESCRIBED);
    }
    if n == 0 {
        out.push_str("\nThe file is empty now; to add lines, use insert_after \"0:\".");
        return out;
    }
    out.push_str("\nThe lines around them now, with their anchors:\n");
    out.push_str(&show_regions(lines, hashes, regions));
    out.push_str(
        "\nCall edit_lines again with anchors from these lines (for an ambiguous anchor, read the lines again first: read shows their anchors as they are now).",
    );
    out
}

/// The operations applied: the new text, and where it changed.
#[derive(Debug)]
pub(crate) struct Applied {
    /// The whole new text, line endings as the file's.
    pub(crate) text: String,
    /// The new lines of each operation, 0-based in the new text (empty
    /// where lines were only removed), in order of place.
    pub(crate) changed: Vec<Range<usize>>,
    /// Line counts before and after.
    pub(crate) lines_before: usize,
    pub(crate) lines_after: usize,
}

/// Applies `ops` (checked: separate places) to `lines` by line number.
pub(crate) fn apply<'a>(lines: &[Line<'a>], ops: &'a [LineOp]) -> Applied {
    let default_end = lines
        .iter()
        .find(|l| l.has_newline())
        .map_or("\n", |l| l.end);
    let end_of = |i: usize| -> &str {
        match lines.get(i) {
            Some(l) if l.has_newline() => l.end,
            _ => default_end,
        }
    };
    let mut order: Vec<&LineOp> = ops.iter().collect();
    order.sort_by_key(|op| op.splice());
    let mut out: Vec<Line<'_>> = Vec::with_capacity(lines.len());
    let mut changed = Vec::with_capacity(ops.len());
    let mut next = 0;
    for op in order {
        let (at, remove) = op.splice();
        out.extend_from_slice(&lines[next..at]);
        // The ending of the line the new ones replace or sit beside.
        let end = match op {
            LineOp::Replace { end, .. } => end_of(end.line - 1),
            LineOp::InsertAfter { anchor, .. } if anchor.line > 0 => end_of(anchor.line - 1),
            LineOp::InsertAfter { .. } => end_of(0),
            LineOp::InsertBefore { anchor, .. } => end_of(anchor.line - 1),
            LineOp::Delete { .. } => default_end,
        };
        let first = out.len();
        out.extend(
            text_lines(op.text())
                .into_iter()
                .map(|content| Line { content, end }),
        );
        changed.push(first..out.len());
        next = at + remove;
    }
    out.extend_from_slice(&lines[next..]);
    // Only the last line may go without a line ending; and it does when
    // the file's did.
    let no_final_newline = lines.last().is_some_and(|l| !l.has_newline());
    let count = out.len();
    let mut text = String::new();
    let mut lines_after = count;
    for (i, line) in out.iter().enumerate() {
        text.push_str(line.content);
        let end = if i + 1 < count {
            if line.has_newline() {
                line.end
            } else {
                default_end
            }
        } else if no_final_newline && line.has_newline() {
            if line.content.is_empty() {
                // An empty last line without an ending is no line: the
                // line before it ends the file.
                lines_after -= 1;
            }
            ""
        } else {
            line.end
        };
        text.push_str(end);
    }
    Applied {
        text,
        changed,
        lines_before: lines.len(),
        lines_after,
    }
}

/// The changed lines of the new text with `context` lines around them,
/// with their new anchors (empty for an empty file).
pub(crate) fn changed_lines(text: &str, changed: &[Range<usize>], context: usize) -> String {
    let lines = split(text);
    let hashes = hashes(&lines);
    let regions = changed
        .iter()
        .map(|r| r.start.saturating_sub(context)..r.end + context)
        .collect();
    show_regions(&lines, &hashes, regions)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::edit_lines::anchor::Anchor;

    fn anchor(lines: &[Line<'_>], n: usize) -> Anchor {
        Anchor {
            line: n,
            hash: Some(line_hash(lines[n - 1].content.as_bytes())),
        }
    }

    #[test]
    fn lines_are_reads_lines() {
        let l = split("a\r\nb\nc\r");
        assert_eq!(
            l,
            [
                Line {
                    content: "a",
                    end: "\r\n"
                },
                Line {
                    content: "b",
                    end: "\n"
                },
                Line {
                    content: "c",
                    end: "\r"
                },
            ]
        );
        assert!(split("").is_empty());
        assert_eq!(split("\n").len(), 1);
        assert_eq!(split("x\r\r\n")[0].content, "x\r");
        assert_eq!(split("x\ry")[0].content, "x\ry");
    }

    #[test]
    fn crlf_lines_stay_crlf_and_a_missing_final_newline_stays_missing() {
        let text = "a\r\nb\r\nc";
        let lines = split(text);
        let ops = [
            LineOp::Replace {
                start: anchor(&lines, 2),
                end: anchor(&lines, 2),
                text: "B1\nB2\n".into(),
            },
            LineOp::InsertAfter {
                anchor: anchor(&lines, 3),
                text: "d".into(),
            },
        ];
        let applied = apply(&lines, &ops);
        assert_eq!(applied.text, "a\r\nB1\r\nB2\r\nc\r\nd");
        assert_eq!(applied.changed, [1..3, 4..5]);
        assert_eq!((applied.lines_before, applied.lines_after), (3, 5));
    }

    #[test]
    fn inserting_into_an_empty_file_ends_its_lines() {
        let ops = [LineOp::InsertAfter {
            anchor: "0:".parse().unwrap(),
            text: "x\ny".into(),
        }];
        assert_eq!(apply(&[], &ops).text, "x\ny\n");
    }

    #[test]
    fn stale_past_end_and_ambiguous_anchors_are_told_apart() {
        let text = "fn a() {\n}\nfn b() {\n}\n";
        let lines = split(text);
        let h = hashes(&lines);
        let brace = anchor(&lines, 2);
        let ops = [
            LineOp::Delete {
                start: brace,
                end: brace,
            },
            LineOp::Delete {
                start: Anchor {
                    line: 9,
                    hash: brace.hash,
                },
                end: Anchor {
                    line: 9,
                    hash: brace.hash,
                },
            },
            LineOp::Delete {
                start: Anchor {
                    line: 3,
                    hash: brace.hash,
                },
                end: Anchor {
                    line: 3,
                    hash: brace.hash,
                },
            },
        ];
        let bad = check_anchors(&h, &ops, &|_| false);
        assert_eq!(
            bad.iter().map(|b| b.problem).collect::<Vec<_>>(),
            [
                AnchorProblem::Ambiguous(4),
                AnchorProblem::PastEnd,
                AnchorProblem::Stale(h[2]),
            ]
        );
        // Read as it is now, line 2 is exact: the repeat does not matter.
        let bad = check_anchors(&h, &ops[..1], &|n| n == 2);
        assert!(bad.is_empty());
        let message = describe_bad_anchors(&lines, &h, &ops, &check_anchors(&h, &ops, &|_| false));
        assert!(
            message.starts_with("Nothing was changed: 3 anchors"),
            "{message}"
        );
        assert!(
            message.contains(&format!("     3:{}\tfn b() {{", h[2])),
            "{message}"
        );
        assert!(
            message.contains("is past the end: the file has 4 lines"),
            "{message}"
        );
    }

    #[test]
    fn a_repeat_outside_the_window_does_not_matter() {
        let mut text = String::from("}\n");
        for i in 0..WINDOW {
            text.push_str(&format!("line {i}\n"));
        }
        text.push_str("}\n");
        let lines = split(&text);
        let h = hashes(&lines);
        let first = anchor(&lines, 1);
        let ops = [LineOp::Delete {
            start: first,
            end: first,
        }];
        assert!(check_anchors(&h, &ops, &|_| false).is_empty());
        text.insert_str(0, "x\n");
        let lines = split(&text);
        let h = hashes(&lines);
        let second = anchor(&lines, 2);
        let ops = [LineOp::Delete {
            start: second,
            end: second,
        }];
        assert!(check_anchors(&h, &ops, &|_| false).is_empty());
    }

    #[test]
    #[allow(clippy::single_range_in_vec_init)]
    fn long_lines_are_cut_when_shown() {
        let long = "é".repeat(SHOWN_LINE_CHARS + 7);
        let lines = split(&long);
        let shown = show_regions(&lines, &hashes(&lines), vec![0..1]);
        assert!(shown.ends_with(" [… 7 more characters]"), "{shown}");
    }
}
