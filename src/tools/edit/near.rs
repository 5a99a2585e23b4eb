//! Near-miss help for an `old_string` that is not in the file (code 4): the
//! closest region of the file, by a similarity over windows of as many
//! lines as the quote has, shown as a line range and a short diff.
//!
//! The work is bounded whatever the file's size: every file line (up to
//! [`MAX_LINES`], each cut at [`MAX_LINE_CHARS`]) is compared with a few
//! anchor lines of the quote only, and full windows are scored only around
//! the [`CANDIDATES`] best anchor hits. The result is deterministic (no
//! timeouts), so validate and execute give the same message.

use std::fmt::Write as _;

/// File lines scanned at most.
const MAX_LINES: usize = 50_000;
/// Characters of a line compared at most.
const MAX_LINE_CHARS: usize = 400;
/// Quote lines used as anchors.
const ANCHORS: usize = 3;
/// Window starts scored in full.
const CANDIDATES: usize = 24;
/// The least window similarity (0 to 1) that counts as close.
const CLOSE: f64 = 0.6;
/// Diff lines shown at most.
pub(super) const MAX_DIFF_LINES: usize = 20;
/// Lines of the quote and of the region diffed at most: the diff shown is
/// cut at [`MAX_DIFF_LINES`] anyway, and a bounded input keeps the diff
/// fast without a timeout, so the message is the same on every call.
const MAX_DIFFED_LINES: usize = 200;

/// A line's character bigrams, sorted, for a Dice similarity.
fn bigrams(line: &str) -> Vec<(char, char)> {
    let chars: Vec<char> = line.trim().chars().take(MAX_LINE_CHARS).collect();
    let mut out: Vec<(char, char)> = chars.windows(2).map(|w| (w[0], w[1])).collect();
    if out.is_empty()
        && let Some(&c) = chars.first()
    {
        out.push((c, c));
    }
    out.sort_unstable();
    out
}

/// Dice similarity of two sorted bigram lists: 1 for equal lines (two
/// blank lines too), 0 for nothing in common.
fn similarity(a: &[(char, char)], b: &[(char, char)]) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    2.0 * common as f64 / (a.len() + b.len()) as f64
}

/// The closest region of `text` to `needle` and how they differ:
/// `The closest text is at lines A–B:\n<diff>`, lines of the quote marked
/// `-` and lines of the file `+`, at most [`MAX_DIFF_LINES`] lines. `None`
/// when nothing is reasonably close.
pub(crate) fn closest(text: &str, needle: &str) -> Option<String> {
    let quote: Vec<&str> = needle
        .strip_suffix('\n')
        .unwrap_or(needle)
        .split('\n')
        .collect();
    let file: Vec<&str> = text
        .strip_suffix('\n')
        .unwrap_or(text)
        .split('\n')
        .take(MAX_LINES)
        .collect();
    let n = quote.len();
    if text.is_empty() || file.len() < n || needle.trim().is_empty() {
        return None;
    }
    let quote_bg: Vec<Vec<(char, char)>> = quote.iter().map(|l| bigrams(l)).collect();
    // The longest quote lines are the most telling anchors.
    let mut anchors: Vec<usize> = (0..n).collect();
    anchors.sort_by_key(|&k| std::cmp::Reverse(quote_bg[k].len()));
    anchors.truncate(ANCHORS);
    let file_bg: Vec<Vec<(char, char)>> = file.iter().map(|l| bigrams(l)).collect();
    let mut hits: Vec<(f64, usize)> = Vec::new();
    for &k in &anchors {
        for (i, line) in file_bg.iter().enumerate() {
            if i < k || i - k + n > file.len() {
                continue;
            }
            hits.push((similarity(&quote_bg[k], line), i - k));
        }
    }
    hits.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut starts: Vec<usize> = hits.iter().map(|&(_, s)| s).collect();
    starts.dedup();
    let mut seen = std::collections::HashSet::new();
    let (score, start) = starts
        .into_iter()
        .filter(|s| seen.insert(*s))
        .take(CANDIDATES)
        .map(|s| {
            let total: f64 = (0..n)
                .map(|k| similarity(&quote_bg[k], &file_bg[s + k]))
                .sum();
            (total / n as f64, s)
        })
        .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)))?;
    if score < CLOSE {
        return None;
    }
    let region = &file[start..start + n];
    let mut out = format!("The closest text is at lines {}–{}:", start + 1, start + n);
    let diff = line_diff(&quote, region);
    let shown = diff.len().min(MAX_DIFF_LINES);
    for line in &diff[..shown] {
        let _ = write!(out, "\n{line}");
    }
    if diff.len() > shown {
        // Keep to the limit: the last line says what was left out.
        out.truncate(out.rfind('\n').unwrap_or(out.len()));
        let _ = write!(out, "\n({} more diff lines)", diff.len() - shown + 1);
    }
    Some(out)
}

/// A line diff of the quote against the region: `-` quote, `+` file,
/// ` ` both (tabs and trailing spaces made visible in changed lines).
fn line_diff(quote: &[&str], region: &[&str]) -> Vec<String> {
    let quote = &quote[..quote.len().min(MAX_DIFFED_LINES)];
    let region = &region[..region.len().min(MAX_DIFFED_LINES)];
    let diff = similar::TextDiff::configure().diff_slices(quote, region);
    diff.iter_all_changes()
        .map(|change| {
            let line = change.value();
            match change.tag() {
                similar::ChangeTag::Equal => format!(" {line}"),
                similar::ChangeTag::Delete => format!("-{}", visible(line)),
                similar::ChangeTag::Insert => format!("+{}", visible(line)),
            }
        })
        .collect()
}

/// A changed line with what a reader cannot see named: tabs as `→`,
/// trailing spaces as `·`, and non-ASCII look-alike spaces as `⍽`.
fn visible(line: &str) -> String {
    let body = line.trim_end_matches(' ');
    let mut out: String = body
        .chars()
        .map(|c| match c {
            '\t' => '→',
            '\u{00A0}' | '\u{2000}'..='\u{200B}' | '\u{202F}' | '\u{3000}' => '⍽',
            c => c,
        })
        .collect();
    out.extend(std::iter::repeat_n('·', line.len() - body.len()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_close_region_is_shown_with_its_lines_and_diff() {
        let text = "fn a() {}\nfn b() {\n    let total = compute(x, y);\n    total\n}\n";
        let got = closest(
            text,
            "fn b() {\n    let total = compute(x, z);\n    total\n}",
        )
        .unwrap();
        assert_eq!(
            got,
            "The closest text is at lines 2–5:\n fn b() {\n-    let total = compute(x, z);\n+    let total = compute(x, y);\n     total\n }"
        );
    }

    #[test]
    fn nothing_is_shown_when_nothing_is_close() {
        assert_eq!(closest("alpha\nbeta\n", "gamma\ndelta"), None);
        assert_eq!(closest("", "x"), None);
        assert_eq!(closest("a\nb\n", "a\nb\nc\nd"), None);
    }

    #[test]
    fn the_diff_is_at_most_twenty_lines() {
        let text: String = (0..100)
            .map(|i| format!("line number {i} here\n"))
            .collect();
        let quote: String = (40..70)
            .map(|i| format!("line number {i} there\n"))
            .collect();
        let got = closest(&text, &quote).unwrap_or_default();
        // Close enough by bigrams, and cut to the limit.
        assert!(
            got.starts_with("The closest text is at lines 41–70:"),
            "{got}"
        );
        assert_eq!(got.lines().count(), 1 + MAX_DIFF_LINES, "{got}");
        assert!(got.ends_with("more diff lines)"), "{got}");
    }

    #[test]
    fn invisible_differences_are_made_visible() {
        assert_eq!(visible("\tx\u{00A0}y  "), "→x⍽y··");
    }

    #[test]
    fn a_huge_file_is_scanned_with_bounded_work() {
        let text = "x\n".repeat(200_000);
        assert_eq!(closest(&text, "something else entirely"), None);
    }

    #[test]
    fn the_help_is_the_same_on_every_call() {
        // A long quote of near-blank lines: the diff is bounded, never
        // timed, so repeated calls agree (the edit_apply fuzzer found a
        // timed diff that differed between two calls).
        let text: String = (0..400).map(|i| format!("value {i} = f({i})\n")).collect();
        let quote: String = (0..300)
            .map(|i| format!("value {i} = f({i}, y)\n"))
            .collect();
        let first = closest(&text, &quote);
        assert!(first.is_some());
        for _ in 0..3 {
            assert_eq!(closest(&text, &quote), first);
        }
    }
}
