//! Unified diffs: the previews of `edit`, `write` and `apply_patch`, and
//! what a rewind would change.
//!
//! Lines common to the start and the end of both texts are cut off with
//! plain byte comparisons before `similar` sees anything (an edit in a
//! 50 MB file diffs a few lines, not a million), and the diff itself runs
//! under [`DIFF_TIMEOUT`], after which `similar` settles for a correct but
//! longer diff.

use std::fmt::Write as _;
use std::time::Duration;

use similar::{Algorithm, DiffTag, TextDiff};

/// How long the line diff may search for a minimal diff.
pub(crate) const DIFF_TIMEOUT: Duration = Duration::from_millis(500);
/// Unchanged lines shown around each change.
const CONTEXT: usize = 3;
/// The largest preview; a longer diff is cut with a note.
pub(crate) const MAX_DIFF_BYTES: usize = 512 * 1024;
/// Differing middles larger than this are shown as one replacing hunk
/// instead of being diffed line by line.
const MAX_DIFF_INPUT_BYTES: usize = 8 * 1024 * 1024;

/// The unified diff from `old` to `new`, with `--- a/PATH` and
/// `+++ b/PATH` headers; empty when the texts are equal.
pub(crate) fn unified_diff(path: &str, old: &str, new: &str) -> String {
    diff_from_line(path, old, new, 0)
}

/// Unchanged lines between two places past which they are diffed apart:
/// more than the context of two hunks and the margin each stretch takes,
/// so the two stretches never meet and the hunks are those of the whole.
const SEPARATE_AFTER: usize = 2 * (CONTEXT + 2) + 1;
/// The most old text one stretch takes before the preview stops: past it
/// the preview is cut (a stretch this dense in changes would pass the
/// 512 KiB cap anyway).
const MAX_STRETCH_BYTES: usize = 2 * MAX_DIFF_BYTES;

/// [`unified_diff`] from `old` to `old` with each of `places` (byte
/// ranges of `old`, in order, not overlapping) replaced by its text,
/// without building the new text whole: the places are taken as they come
/// and cut into stretches where more than a few unchanged lines part them;
/// each stretch, from a few lines before its first place to a few lines
/// after its last, is compared alone, and its hunks numbered as in the
/// whole file. The same output as `unified_diff` on the whole new text,
/// in memory bounded by the 512 KiB cap however many places there are.
pub(crate) fn unified_diff_spliced<S: AsRef<str>>(
    path: &str,
    old: &str,
    places: impl IntoIterator<Item = (std::ops::Range<usize>, S)>,
) -> String {
    let bytes = old.as_bytes();
    let mut out = format!("--- a/{path}\n+++ b/{path}\n");
    let header = out.len();
    let mut group: Vec<(std::ops::Range<usize>, S)> = Vec::new();
    // Lines of the old text before `line_at`, and how many lines the
    // stretches so far added (negative: removed).
    let (mut line_at, mut lines_before) = (0usize, 0usize);
    let mut shift = 0isize;
    let mut complete = true;
    let mut places = places.into_iter().peekable();
    while let Some(place) = places.next() {
        group.push(place);
        let (first, last) = (&group[0].0, &group[group.len() - 1].0);
        let next_apart = match places.peek() {
            None => true,
            Some((next, _)) => {
                let gap = memchr::memchr_iter(b'\n', &bytes[last.end.min(next.start)..next.start])
                    .take(SEPARATE_AFTER + 1)
                    .count();
                gap > SEPARATE_AFTER
            }
        };
        let too_big = last.end - first.start > MAX_STRETCH_BYTES;
        if !next_apart && !too_big {
            continue;
        }
        let start = lines_back(bytes, first.start, CONTEXT + 2);
        let end = lines_on(bytes, last.end, CONTEXT + 2);
        let mut new = String::with_capacity(end - start);
        let mut from = start;
        let mut added = 0isize;
        for (range, text) in &group {
            let text = text.as_ref();
            new.push_str(&old[from..range.start]);
            new.push_str(text);
            added += newlines(text) as isize - newlines(&old[range.clone()]) as isize;
            from = range.end;
        }
        new.push_str(&old[from..end]);
        lines_before += newlines(&old[line_at..start]);
        line_at = start;
        let old_before = lines_before;
        let new_before = lines_before.saturating_add_signed(shift);
        shift += added;
        group.clear();
        if !hunks(&mut out, &old[start..end], &new, old_before, new_before) {
            complete = false;
            break;
        }
        if too_big && !next_apart {
            // Cut: what follows was not compared.
            complete = out.len() > MAX_DIFF_BYTES;
            if !complete {
                out.push_str("(diff cut: more changes follow that are not shown)\n");
                complete = true;
            }
            break;
        }
    }
    if out.len() == header {
        return String::new();
    }
    finish(out, complete)
}

fn newlines(s: &str) -> usize {
    memchr::memchr_iter(b'\n', s.as_bytes()).count()
}

/// The start of the line `n` lines before the one `at` is on.
fn lines_back(bytes: &[u8], at: usize, n: usize) -> usize {
    let mut start = at;
    for _ in 0..n {
        if start == 0 {
            break;
        }
        start = memchr::memrchr(b'\n', &bytes[..start - 1]).map_or(0, |i| i + 1);
    }
    start
}

/// The end of the line `n` lines after the one `at` ends.
fn lines_on(bytes: &[u8], at: usize, n: usize) -> usize {
    let mut end = at;
    for _ in 0..n {
        if end == bytes.len() {
            break;
        }
        end = memchr::memchr(b'\n', &bytes[end..]).map_or(bytes.len(), |i| end + i + 1);
    }
    end
}

/// The unified diff of `old` and `new`, which start after line `before`
/// of the files they are stretches of.
fn diff_from_line(path: &str, old: &str, new: &str, before: usize) -> String {
    if old == new {
        return String::new();
    }
    let mut out = format!("--- a/{path}\n+++ b/{path}\n");
    let complete = hunks(&mut out, old, new, before, before);
    finish(out, complete)
}

/// Appends the hunks from `old` to `new` (stretches that start after line
/// `old_before` and `new_before` of their files); false when cut at the
/// size cap.
fn hunks(out: &mut String, old: &str, new: &str, old_before: usize, new_before: usize) -> bool {
    if old == new {
        return true;
    }
    let (prefix, old_mid, new_mid) = trim_common_lines(old, new);
    let at = (old_before + prefix, new_before + prefix);
    if old_mid.len() + new_mid.len() > MAX_DIFF_INPUT_BYTES {
        // Too big to diff line by line in bounded memory: one hunk that
        // replaces the whole differing middle.
        whole_hunk(out, at, old_mid, new_mid)
    } else {
        line_diff(out, at, old_mid, new_mid)
    }
}

/// The diff's end: cut at the cap with a note when not `complete`, and
/// without a trailing newline, like every other tool text.
fn finish(mut out: String, complete: bool) -> String {
    if !complete {
        let mut end = MAX_DIFF_BYTES.min(out.len());
        while !out.is_char_boundary(end) {
            end -= 1;
        }
        out.truncate(end);
        if let Some(nl) = out.rfind('\n') {
            out.truncate(nl + 1);
        }
        let _ = writeln!(out, "(diff cut at {} KiB)", MAX_DIFF_BYTES / 1024);
    }
    if out.ends_with('\n') {
        out.pop();
    }
    out
}

/// The hunks of a `similar` line diff; false when cut at the size cap.
fn line_diff(out: &mut String, at: (usize, usize), old: &str, new: &str) -> bool {
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old, new);
    let old_lines: Vec<&str> = diff.iter_old_slices().collect();
    let new_lines: Vec<&str> = diff.iter_new_slices().collect();
    for group in diff.grouped_ops(CONTEXT) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old_range = first.old_range().start..last.old_range().end;
        let new_range = first.new_range().start..last.new_range().end;
        let _ = writeln!(
            out,
            "@@ -{} +{} @@",
            hunk_range(at.0 + old_range.start, old_range.len()),
            hunk_range(at.1 + new_range.start, new_range.len())
        );
        for op in &group {
            let (tag, olds, news) = op.as_tag_tuple();
            let fits = match tag {
                DiffTag::Equal => push_lines(out, ' ', old_lines[olds].iter().copied()),
                DiffTag::Delete => push_lines(out, '-', old_lines[olds].iter().copied()),
                DiffTag::Insert => push_lines(out, '+', new_lines[news].iter().copied()),
                DiffTag::Replace => {
                    push_lines(out, '-', old_lines[olds].iter().copied())
                        && push_lines(out, '+', new_lines[news].iter().copied())
                }
            };
            if !fits {
                return false;
            }
        }
    }
    true
}

/// One hunk deleting all of `old` and adding all of `new`; false when cut
/// at the size cap.
fn whole_hunk(out: &mut String, at: (usize, usize), old: &str, new: &str) -> bool {
    let count = |s: &str| {
        memchr::memchr_iter(b'\n', s.as_bytes()).count()
            + usize::from(!s.ends_with('\n') && !s.is_empty())
    };
    let _ = writeln!(
        out,
        "@@ -{} +{} @@",
        hunk_range(at.0, count(old)),
        hunk_range(at.1, count(new))
    );
    push_lines(out, '-', old.split_inclusive('\n'))
        && push_lines(out, '+', new.split_inclusive('\n'))
}

/// `start,len` in unified-diff form: 1-based, `,len` left out for one
/// line, and an empty range named by the line before it.
fn hunk_range(start: usize, len: usize) -> String {
    match len {
        0 => format!("{start},0"),
        1 => format!("{}", start + 1),
        _ => format!("{},{len}", start + 1),
    }
}

/// Appends `lines` with their sign; false once the output is over
/// [`MAX_DIFF_BYTES`].
fn push_lines<'a>(out: &mut String, sign: char, lines: impl Iterator<Item = &'a str>) -> bool {
    for line in lines {
        if out.len() > MAX_DIFF_BYTES {
            return false;
        }
        out.push(sign);
        match line.strip_suffix('\n') {
            Some(body) => {
                out.push_str(body);
                out.push('\n');
            }
            None => {
                out.push_str(line);
                out.push_str("\n\\ No newline at end of file\n");
            }
        }
    }
    out.len() <= MAX_DIFF_BYTES
}

/// Cuts whole lines common to the start and the end of both texts, keeping
/// [`CONTEXT`] of them on each side. Returns how many lines were cut from
/// the start and the two middles.
fn trim_common_lines<'o, 'n>(old: &'o str, new: &'n str) -> (usize, &'o str, &'n str) {
    let (o, n) = (old.as_bytes(), new.as_bytes());
    let common = o.iter().zip(n).take_while(|(a, b)| a == b).count();
    // Back up to the start of the line the first difference is on.
    let mut start = o[..common]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    for _ in 0..CONTEXT {
        if start == 0 {
            break;
        }
        start = o[..start - 1]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
    }
    let prefix_lines = memchr::memchr_iter(b'\n', &o[..start]).count();

    let room = o.len().min(n.len()) - start;
    let tail = o
        .iter()
        .rev()
        .zip(n.iter().rev())
        .take(room)
        .take_while(|(a, b)| a == b)
        .count();
    // The common tail must start a line in both texts: move past its first
    // newline unless it already starts right after one in both.
    let (o_tail, n_tail) = (o.len() - tail, n.len() - tail);
    let at_line_start = |bytes: &[u8], at: usize| at == 0 || bytes[at - 1] == b'\n';
    let mut skip = if at_line_start(o, o_tail) && at_line_start(n, n_tail) {
        0
    } else {
        match memchr::memchr(b'\n', &o[o_tail..]) {
            Some(i) => i + 1,
            None => tail,
        }
    };
    // Keep CONTEXT lines of the tail too.
    for _ in 0..CONTEXT {
        if skip >= tail {
            break;
        }
        skip = match memchr::memchr(b'\n', &o[o_tail + skip..]) {
            Some(i) => skip + i + 1,
            None => tail,
        };
    }
    let tail = tail - skip.min(tail);
    (
        prefix_lines,
        &old[start..old.len() - tail],
        &new[start..new.len() - tail],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full(old: &str, new: &str) -> String {
        let mut s = TextDiff::from_lines(old, new)
            .unified_diff()
            .context_radius(CONTEXT)
            .header("a/f", "b/f")
            .to_string();
        if s.ends_with('\n') {
            s.pop();
        }
        s
    }

    #[test]
    fn the_spliced_diff_is_the_whole_texts_diff() {
        let old: String = (1..=60).map(|i| format!("line {i}\n")).collect();
        let at = |needle: &str| {
            let start = old.find(needle).unwrap();
            start..start + needle.len()
        };
        let cases: Vec<Vec<(std::ops::Range<usize>, String)>> = vec![
            vec![(at("line 1\n"), "first\n".into())],
            vec![(at("line 60\n"), "last\n".into())],
            vec![(at("line 30\n"), String::new())],
            vec![(at("line 30\n"), "line 30\nline 30\n".into())],
            vec![(at("ne 30\nli"), "ne 30\nline 30\nli".into())],
            vec![
                (at("line 5\n"), "five\n".into()),
                (at("line 50\n"), "fifty\n".into()),
            ],
            vec![
                (at("line 10\n"), "ten\n".into()),
                (at("line 12\n"), "twelve\n".into()),
            ],
            vec![(at("line 59\nline 60\n"), "end".into())],
            vec![(at("line 2\n"), "line 2\n".into())],
        ];
        for places in cases {
            let mut new = String::new();
            let mut from = 0;
            for (range, text) in &places {
                new.push_str(&old[from..range.start]);
                new.push_str(text);
                from = range.end;
            }
            new.push_str(&old[from..]);
            assert_eq!(
                unified_diff_spliced(
                    "f",
                    &old,
                    places.iter().map(|(r, t)| (r.clone(), t.as_str()))
                ),
                unified_diff("f", &old, &new),
                "{places:?}"
            );
        }
    }

    proptest::proptest! {
        /// Issue 25 item 10: the spliced diff, taken stretch by stretch
        /// as the places come, is a shortest diff of the whole texts,
        /// however many places there are and however they are spread.
        #[test]
        fn the_spliced_diff_of_periodic_lines_is_as_short_and_right(
            lines in 1..400usize,
            picks in proptest::collection::vec((0..400usize, 0..4usize, 0..3usize), 0..120),
        ) {
            let old: String = (0..lines).map(|i| format!("line {}\n", i % 7)).collect();
            let (places, new) = splice(&old, picks);
            let spliced =
                unified_diff_spliced("f", &old, places.iter().map(|(r, t)| (r.clone(), t.as_str())));
            let whole = unified_diff("f", &old, &new);
            // Periodic lines make the shortest diff ambiguous (the same
            // seven lines can be dropped at several periods): the spliced
            // diff must then be as short as the whole texts' diff and
            // turn the old text into the new; with distinct lines the two
            // are the same text (the law above).
            proptest::prop_assert_eq!(changed_lines(&spliced), changed_lines(&whole));
            proptest::prop_assert_eq!(apply_unified(&old, &spliced), new);
        }

        /// With distinct lines the shortest diff is unique, and the
        /// spliced diff is exactly the whole texts' diff.
        #[test]
        fn the_spliced_diff_of_distinct_lines_is_the_whole_texts_diff(
            lines in 1..400usize,
            picks in proptest::collection::vec((0..400usize, 0..4usize, 0..3usize), 0..120),
        ) {
            let old: String = (0..lines).map(|i| format!("line {i}\n")).collect();
            let (places, new) = splice(&old, picks);
            proptest::prop_assert_eq!(
                unified_diff_spliced("f", &old, places.iter().map(|(r, t)| (r.clone(), t.as_str()))),
                unified_diff("f", &old, &new)
            );
        }
    }

    /// Places at picked line starts (cutting 0–3 bytes, writing nothing,
    /// a line, or text without a final newline), and the text they make.
    fn splice(
        old: &str,
        picks: Vec<(usize, usize, usize)>,
    ) -> (Vec<(std::ops::Range<usize>, String)>, String) {
        let starts: Vec<usize> = std::iter::once(0)
            .chain(old.match_indices('\n').map(|(i, _)| i + 1))
            .filter(|&i| i < old.len())
            .collect();
        let mut chosen: Vec<(usize, usize, usize)> = picks
            .into_iter()
            .map(|(l, len, what)| (l % starts.len(), len, what))
            .collect();
        chosen.sort();
        chosen.dedup_by_key(|c| c.0);
        let mut places: Vec<(std::ops::Range<usize>, String)> = Vec::new();
        for (l, len, what) in chosen {
            let start = starts[l];
            if places.last().is_some_and(|(r, _)| r.end > start) {
                continue;
            }
            let end = (start + len).min(old.len());
            let text = match what {
                0 => String::new(),
                1 => "new\n".to_owned(),
                _ => "x\ny".to_owned(),
            };
            places.push((start..end, text));
        }
        let mut new = String::new();
        let mut from = 0;
        for (range, text) in &places {
            new.push_str(&old[from..range.start]);
            new.push_str(text);
            from = range.end;
        }
        new.push_str(&old[from..]);
        (places, new)
    }

    /// The number of removed and of added lines of a unified diff.
    fn changed_lines(diff: &str) -> (usize, usize) {
        let body = diff
            .lines()
            .filter(|l| !l.starts_with("---") && !l.starts_with("+++"));
        body.fold((0, 0), |(minus, plus), line| {
            match line.as_bytes().first() {
                Some(b'-') => (minus + 1, plus),
                Some(b'+') => (minus, plus + 1),
                _ => (minus, plus),
            }
        })
    }

    /// `old` with a unified diff (as `unified_diff` writes it) applied.
    fn apply_unified(old: &str, diff: &str) -> String {
        let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
        let mut out = String::new();
        let mut next = 0; // the next old line not yet copied
        let mut last_pushed: Option<bool> = None; // whether it came from `+`/` `
        // Each line of the diff ends with a newline unless marked (the
        // diff's own text leaves out the last one).
        for line in diff.lines().skip(2) {
            if let Some(header) = line.strip_prefix("@@ -") {
                let range = header.split(' ').next().expect("a hunk header");
                let (start, count) = match range.split_once(',') {
                    Some((start, count)) => (start, count),
                    None => (range, "1"),
                };
                let start: usize = start.parse().expect("a line number");
                // An empty old range names the line it follows.
                let start = if count == "0" { start } else { start - 1 };
                out.extend(old_lines[next..start].iter().copied());
                next = start;
                continue;
            }
            if line.starts_with("\\ No newline at end of file") {
                if last_pushed.is_some() && out.ends_with('\n') {
                    out.pop();
                }
                continue;
            }
            let (sign, text) = line.split_at(1);
            match sign {
                " " => {
                    out.push_str(text);
                    out.push('\n');
                    next += 1;
                    last_pushed = Some(true);
                }
                "-" => {
                    next += 1;
                    last_pushed = None;
                }
                "+" => {
                    out.push_str(text);
                    out.push('\n');
                    last_pushed = Some(true);
                }
                other => panic!("unexpected diff line {other:?}{text:?}"),
            }
        }
        out.extend(old_lines[next..].iter().copied());
        out
    }

    #[test]
    fn a_million_places_are_previewed_within_the_cap() {
        let old = "id(x, x);\n".repeat(200_000);
        let places = old.match_indices('x').map(|(i, _)| (i..i + 1, "value"));
        let d = unified_diff_spliced("f", &old, places);
        assert!(d.len() <= MAX_DIFF_BYTES + 100, "{}", d.len());
        assert!(d.starts_with("--- a/f\n+++ b/f\n@@ -1,"), "{}", &d[..100]);
        assert!(
            d.ends_with("(diff cut at 512 KiB)"),
            "{}",
            &d[d.len() - 100..]
        );
    }

    #[test]
    fn equals_similars_own_unified_diff() {
        let lines: String = (1..=40).map(|i| format!("line {i}\n")).collect();
        let cases = [
            (lines.clone(), lines.replace("line 20\n", "LINE 20\n")),
            (lines.clone(), lines.replace("line 1\n", "")),
            (lines.clone(), lines.replace("line 40\n", "line 40")),
            (lines.clone(), format!("{lines}more\n")),
            (
                lines.clone(),
                lines.replace("line 3\n", "x\ny\n").replace("line 30\n", ""),
            ),
            (String::new(), "a\nb\n".to_owned()),
            ("a\nb".to_owned(), String::new()),
            (
                "same\nno newline".to_owned(),
                "same\nno newline!".to_owned(),
            ),
        ];
        for (old, new) in cases {
            assert_eq!(
                unified_diff("f", &old, &new),
                full(&old, &new),
                "{old:?} -> {new:?}"
            );
        }
    }

    #[test]
    fn the_whole_hunk_fallback_matches_a_full_replacement() {
        for (old, new) in [("a\nb\n", "c\n"), ("a", "b\nc"), ("", "x\n"), ("x\n", "")] {
            let mut out = String::from("--- a/f\n+++ b/f\n");
            assert!(whole_hunk(&mut out, (0, 0), old, new));
            out.pop();
            assert_eq!(out, full(old, new), "{old:?} -> {new:?}");
        }
    }

    #[test]
    fn a_huge_diff_is_cut() {
        let new = "added line\n".repeat(100_000);
        let d = unified_diff("f", "", &new);
        assert!(d.len() < MAX_DIFF_BYTES + 100);
        assert!(d.ends_with("(diff cut at 512 KiB)"));
    }

    #[test]
    fn new_file_is_all_added() {
        assert_eq!(
            unified_diff("src/a.rs", "", "x\ny\n"),
            "--- a/src/a.rs\n+++ b/src/a.rs\n@@ -0,0 +1,2 @@\n+x\n+y"
        );
        assert_eq!(unified_diff("f", "same", "same"), "");
    }

    #[test]
    fn a_big_file_diffs_only_the_middle() {
        let old: String = (0..200_000).map(|i| format!("{i}\n")).collect();
        let new = old.replacen("100000\n", "changed\n", 1);
        let d = unified_diff("big", &old, &new);
        assert!(d.contains("@@ -99998,7 +99998,7 @@"), "{d}");
        assert!(d.contains("-100000\n+changed"));
    }
}
