//! The result snippet of an edit: the changed lines with some context,
//! numbered as `read` shows them.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::ops::Range;

/// Lines of context shown around the changed lines in the result.
pub(super) const RESULT_CONTEXT: usize = 4;
/// Lines of the result snippet shown at most.
const MAX_RESULT_LINES: usize = 400;
/// Characters of one result line shown before it is cut (as `read` does).
const MAX_LINE_CHARS: usize = 2000;

/// The changed lines of `text` with [`RESULT_CONTEXT`] lines around them,
/// numbered as `read` shows them; separate regions are split by `...`.
pub(crate) fn snippet(text: &str, spans: &[Range<usize>]) -> String {
    let bytes = text.as_bytes();
    let total_lines = {
        let n = memchr::memchr_iter(b'\n', bytes).count();
        if text.is_empty() || text.ends_with('\n') {
            n
        } else {
            n + 1
        }
    };
    if total_lines == 0 {
        return String::new();
    }
    // 0-based line ranges to show, merged in order.
    let mut regions: Vec<Range<usize>> = Vec::new();
    let (mut pos, mut line) = (0usize, 0usize);
    for span in spans {
        line += memchr::memchr_iter(b'\n', &bytes[pos..span.start]).count();
        pos = span.start;
        // A newline ending the inserted text ends its last line; the line
        // after it is unchanged.
        let inner_end = span.end.saturating_sub(1).max(span.start);
        let inner = memchr::memchr_iter(b'\n', &bytes[span.start..inner_end]).count();
        let first = line.min(total_lines - 1);
        let last = (line + inner).min(total_lines - 1);
        let from = first.saturating_sub(RESULT_CONTEXT);
        let to = (last + RESULT_CONTEXT + 1).min(total_lines);
        match regions.last_mut() {
            Some(prev) if from <= prev.end => prev.end = prev.end.max(to),
            _ => regions.push(from..to),
        }
    }
    let mut out = String::new();
    let mut shown = 0usize;
    let mut region = 0usize;
    for (i, body) in text.split('\n').enumerate() {
        let Some(r) = regions.get(region) else { break };
        if i >= total_lines {
            break;
        }
        if i < r.start {
            continue;
        }
        if shown == MAX_RESULT_LINES {
            let _ = write!(
                out,
                "\n(more changed lines not shown; read the file to see them)"
            );
            break;
        }
        if !out.is_empty() {
            out.push('\n');
            if i == r.start && region > 0 {
                out.push_str("...\n");
            }
        }
        let _ = write!(out, "{:>6}\t{}", i + 1, cut_line(body));
        shown += 1;
        if i + 1 >= r.end {
            region += 1;
        }
    }
    out
}

fn cut_line(line: &str) -> Cow<'_, str> {
    match line.char_indices().nth(MAX_LINE_CHARS) {
        None => line.into(),
        Some((at, _)) => {
            let more = line[at..].chars().count();
            format!("{} [… {more} more characters]", &line[..at]).into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::edit::apply::apply;

    #[test]
    fn snippet_shows_context_and_separates_regions() {
        let text: String = (1..=30).map(|i| format!("l{i}\n")).collect();
        let a = apply(&text, "l10\n", "ten\n", false, "l10\n").unwrap();
        let s = snippet(&a.text, &a.spans);
        let first = s.lines().next().unwrap();
        assert_eq!(first, "     6\tl6");
        assert_eq!(s.lines().last().unwrap(), "    14\tl14");
        assert!(s.contains("    10\tten"));

        let text = text.replace("l2\n", "X\n").replace("l25\n", "X\n");
        let a = apply(&text, "X\n", "Y\n", true, "X\n").unwrap();
        let s = snippet(&a.text, &a.spans);
        assert!(s.starts_with("     1\tl1\n     2\tY\n"), "{s}");
        assert!(s.contains("\n...\n    21\tl21"), "{s}");
        assert!(s.ends_with("    29\tl29"), "{s}");
    }

    #[test]
    fn snippet_of_a_deletion_and_of_an_empty_text() {
        let a = apply("a\nb\nc", "b\n", "", false, "b\n").unwrap();
        assert_eq!(snippet(&a.text, &a.spans), "     1\ta\n     2\tc");
        let a = apply("a", "a", "", false, "a").unwrap();
        assert_eq!(snippet(&a.text, &a.spans), "");
    }
}
