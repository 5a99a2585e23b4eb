//! Splitting decoded text into lines for `read`: the shown lines kept in
//! `cat -n` form, the others only counted.

use std::borrow::Cow;

use super::{MAX_LINE_CHARS, MAX_OUTPUT_BYTES};
use crate::fs::read_state::ShownLines;
use crate::tools::edit_lines::anchor::{HASH_DIGITS, LineHasher};

/// Bytes of one line kept: enough for [`MAX_LINE_CHARS`] characters.
const LINE_KEEP_BYTES: usize = MAX_LINE_CHARS * 4 + 4;

/// Line numbers are right-aligned in this many columns (`cat -n`).
const LINE_NUMBER_WIDTH: usize = 6;

/// What the collector gathered: the shown lines in `cat -n` form.
pub(super) struct LineReport {
    pub(super) body: String,
    /// Bytes the body would have had, kept or not (the body stops growing
    /// past the output cap).
    pub(super) body_len: usize,
    pub(super) shown: u64,
    pub(super) total_lines: u64,
    any_cut: bool,
    /// The numbers of the shown lines that were cut, ascending.
    cut: Vec<u64>,
}

/// Splits decoded bytes into lines, keeping only lines `offset ..
/// offset + limit`, each cut at [`MAX_LINE_CHARS`]; all others are only
/// counted.
pub(super) struct LineCollector {
    first: u64,
    last: u64,
    /// The 1-based number of the line being read.
    line_no: u64,
    /// Whether the current line has any bytes yet (a final line without a
    /// newline still counts).
    open: bool,
    kept: Vec<u8>,
    /// Characters of the current line beyond `kept`.
    extra_chars: usize,
    last_byte_cr: bool,
    /// With anchors on: the hash of the current line so far, all of it
    /// (not only the bytes kept), shown as `{line_no:>6}:{hash}\t`.
    anchors: Option<LineHasher>,
    report: LineReport,
}

impl LineCollector {
    pub(super) fn new(offset: u64, limit: u64) -> Self {
        Self {
            first: offset,
            last: offset.saturating_add(limit - 1),
            line_no: 1,
            open: false,
            kept: Vec::new(),
            extra_chars: 0,
            last_byte_cr: false,
            anchors: None,
            report: LineReport {
                body: String::new(),
                body_len: 0,
                shown: 0,
                total_lines: 0,
                any_cut: false,
                cut: Vec::new(),
            },
        }
    }

    /// Shows each line's anchor hash after its number (`12:a3f\t…`), for
    /// `edit_lines`.
    pub(super) fn with_anchors(mut self) -> Self {
        self.anchors = Some(LineHasher::new());
        self
    }

    fn in_range(&self) -> bool {
        self.line_no >= self.first && self.line_no <= self.last
    }

    pub(super) fn feed(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            if !self.in_range() {
                // Outside the range: count newlines until the range starts.
                if self.line_no < self.first {
                    let need = (self.first - self.line_no) as usize;
                    let mut seen = 0usize;
                    let mut cut = None;
                    for i in memchr::memchr_iter(b'\n', bytes) {
                        seen += 1;
                        if seen == need {
                            cut = Some(i + 1);
                            break;
                        }
                    }
                    self.line_no += seen as u64;
                    match cut {
                        Some(at) => {
                            self.open = false;
                            bytes = &bytes[at..];
                        }
                        None => {
                            self.open = !bytes.ends_with(b"\n");
                            return;
                        }
                    }
                } else {
                    let n = memchr::memchr_iter(b'\n', bytes).count();
                    self.line_no += n as u64;
                    self.open = !bytes.ends_with(b"\n");
                    return;
                }
                continue;
            }
            self.open = true;
            match memchr::memchr(b'\n', bytes) {
                Some(i) => {
                    self.keep(&bytes[..i]);
                    self.end_line();
                    bytes = &bytes[i + 1..];
                }
                None => {
                    self.keep(bytes);
                    return;
                }
            }
        }
    }

    fn keep(&mut self, part: &[u8]) {
        if part.is_empty() {
            return;
        }
        if let Some(hasher) = &mut self.anchors {
            hasher.update(part);
        }
        let room = LINE_KEEP_BYTES.saturating_sub(self.kept.len());
        let (kept, rest) = part.split_at(part.len().min(room));
        self.kept.extend_from_slice(kept);
        self.extra_chars += rest.iter().filter(|&&b| (b as i8) >= -0x40).count();
        self.last_byte_cr = part.last() == Some(&b'\r');
    }

    fn end_line(&mut self) {
        let mut extra = self.extra_chars;
        if self.last_byte_cr {
            // CRLF: show the line without its CR.
            if extra > 0 {
                extra -= 1;
            } else {
                self.kept.pop();
            }
        }
        // Valid UTF-8 (the common case) is checked by the fast validator;
        // anything else is shown with U+FFFD for each invalid sequence.
        let text = match std::str::from_utf8(&self.kept) {
            Ok(text) => Cow::Borrowed(text),
            Err(_) => String::from_utf8_lossy(&self.kept),
        };
        // A line's bytes bound its characters, so only a long one is counted.
        let chars = if text.len() + extra <= MAX_LINE_CHARS {
            0
        } else {
            text.chars().count() + extra
        };
        let line_no = self.line_no;
        let anchor = self.anchors.as_mut().map(LineHasher::finish);
        let r = &mut self.report;
        let sep = usize::from(r.shown > 0);
        let mut number = itoa::Buffer::new();
        let number = number.format(line_no);
        // `{line_no:>6}\t` and the line (cut when too long).
        let cut = (chars > MAX_LINE_CHARS).then(|| {
            let cut_at = text
                .char_indices()
                .nth(MAX_LINE_CHARS)
                .map_or(text.len(), |(at, _)| at);
            (
                &text[..cut_at],
                format!(" [… {} more characters]", chars - MAX_LINE_CHARS),
            )
        });
        let line_len = cut
            .as_ref()
            .map_or(text.len(), |(kept, note)| kept.len() + note.len());
        let anchor_len = anchor.map_or(0, |_| 1 + HASH_DIGITS);
        let entry_len = number.len().max(LINE_NUMBER_WIDTH) + anchor_len + 1 + line_len;
        r.body_len += sep + entry_len;
        if r.body_len <= MAX_OUTPUT_BYTES {
            if sep == 1 {
                r.body.push('\n');
            }
            for _ in number.len()..LINE_NUMBER_WIDTH {
                r.body.push(' ');
            }
            r.body.push_str(number);
            if let Some(hash) = anchor {
                use std::fmt::Write as _;
                let _ = write!(r.body, ":{hash}");
            }
            r.body.push('\t');
            match &cut {
                Some((kept, note)) => {
                    r.body.push_str(kept);
                    r.body.push_str(note);
                }
                None => r.body.push_str(&text),
            }
        }
        if cut.is_some() {
            r.any_cut = true;
            r.cut.push(line_no);
        }
        r.shown += 1;
        self.kept.clear();
        self.extra_chars = 0;
        self.last_byte_cr = false;
        self.line_no += 1;
        self.open = false;
    }

    pub(super) fn finish(mut self) -> LineReport {
        if self.open && self.in_range() {
            self.end_line();
        } else if self.open {
            self.line_no += 1;
        }
        self.report.total_lines = self.line_no - 1;
        self.report
    }
}

/// The lines a read starting at `offset` showed in full: the shown range
/// without the lines cut at [`MAX_LINE_CHARS`].
pub(super) fn shown_lines(offset: u64, report: &LineReport) -> ShownLines {
    let mut shown = ShownLines::new(report.total_lines);
    if report.shown == 0 {
        return shown;
    }
    let last = offset + report.shown - 1;
    let mut start = offset;
    for &cut in &report.cut {
        if cut > start {
            shown.add(start, cut - 1);
        }
        start = cut + 1;
    }
    if start <= last {
        shown.add(start, last);
    }
    shown
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn collect(input: &[&[u8]], offset: u64, limit: u64) -> LineReport {
        let mut c = LineCollector::new(offset, limit);
        for chunk in input {
            c.feed(chunk);
        }
        c.finish()
    }

    #[test]
    fn lines_split_across_chunks() {
        let r = collect(&[b"ab", b"c\nde", b"f\n", b"g"], 1, 10);
        assert_eq!(r.body, "     1\tabc\n     2\tdef\n     3\tg");
        assert_eq!(r.total_lines, 3);
    }

    #[test]
    fn offset_and_limit_count_all_lines() {
        let r = collect(&[b"1\n2\n3\n4\n5\n"], 2, 2);
        assert_eq!(r.body, "     2\t2\n     3\t3");
        assert_eq!((r.shown, r.total_lines), (2, 5));
        let r = collect(&[b"1\n", b"2\n3", b"\n4"], 4, 9);
        assert_eq!(r.body, "     4\t4");
        assert_eq!(r.total_lines, 4);
    }

    #[test]
    fn crlf_is_shown_without_cr() {
        let r = collect(&[b"a\r\nb\r", b"\n"], 1, 10);
        assert_eq!(r.body, "     1\ta\n     2\tb");
    }

    #[test]
    fn anchors_follow_the_numbers_and_hash_whole_lines() {
        use crate::tools::edit_lines::anchor::line_hash;
        let mut c = LineCollector::new(2, 2).with_anchors();
        c.feed(b"a\r\nb\r");
        c.feed(b"\nc ");
        let r = c.finish();
        let (b, c) = (line_hash(b"b"), line_hash(b"c "));
        assert_eq!(r.body, format!("     2:{b}\tb\n     3:{c}\tc "));
        assert_eq!(r.body_len, r.body.len());
        // A cut line is hashed whole.
        let line = "x".repeat(MAX_LINE_CHARS + LINE_KEEP_BYTES);
        let mut c = LineCollector::new(1, 1).with_anchors();
        for chunk in line.as_bytes().chunks(1000) {
            c.feed(chunk);
        }
        let r = c.finish();
        let expected = format!("     1:{}\t", line_hash(line.as_bytes()));
        assert!(r.body.starts_with(&expected), "{}", &r.body[..20]);
    }

    #[test]
    fn long_lines_are_cut_with_the_count() {
        let line = "é".repeat(MAX_LINE_CHARS + 5000);
        let r = collect(&[line.as_bytes()], 1, 10);
        assert!(r.body.ends_with(" [… 5000 more characters]"));
        assert!(r.any_cut);
    }

    #[test]
    fn shown_lines_leave_out_cut_lines() {
        let wide = "x".repeat(MAX_LINE_CHARS + 1);
        let text = format!("a\n{wide}\nb\n{wide}\nc\n");
        let r = collect(&[text.as_bytes()], 1, 10);
        assert_eq!(r.cut, [2, 4]);
        assert_eq!(shown_lines(1, &r).ranges(), &[(1, 1), (3, 3), (5, 5)]);
        let r = collect(&[text.as_bytes()], 2, 2);
        assert_eq!(shown_lines(2, &r).ranges(), &[(3, 3)]);
        let r = collect(&[text.as_bytes()], 9, 2);
        assert!(shown_lines(9, &r).ranges().is_empty());
        let r = collect(&[b"1\n2\n3\n"], 2, 5);
        let shown = shown_lines(2, &r);
        assert_eq!((shown.ranges(), shown.total()), (&[(2, 3)][..], 3));
    }

    /// The layout written plainly: every line lossily decoded, its CR
    /// before the newline dropped, cut at [`MAX_LINE_CHARS`] characters,
    /// numbered `{n:>6}\t`.
    fn reference(bytes: &[u8], offset: u64, limit: u64) -> (String, u64, Vec<u64>) {
        let mut lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
        if bytes.ends_with(b"\n") || bytes.is_empty() {
            lines.pop();
        }
        let mut shown = Vec::new();
        let mut cut = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            let n = i as u64 + 1;
            if n < offset || n >= offset + limit {
                continue;
            }
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let text = String::from_utf8_lossy(line);
            let chars = text.chars().count();
            let line = if chars > MAX_LINE_CHARS {
                cut.push(n);
                let kept: String = text.chars().take(MAX_LINE_CHARS).collect();
                format!("{kept} [… {} more characters]", chars - MAX_LINE_CHARS)
            } else {
                text.into_owned()
            };
            shown.push(format!("{n:>6}\t{line}"));
        }
        (shown.join("\n"), lines.len() as u64, cut)
    }

    fn short_part() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..40),
            proptest::collection::vec(proptest::sample::select(b"ab\r\n\xc3\xa9".to_vec()), 0..40),
        ]
    }

    /// A line near [`MAX_LINE_CHARS`]: of two-byte characters or of CRs.
    fn long_part() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            (0usize..3).prop_map(|n| "é".repeat(MAX_LINE_CHARS - 1 + n).into_bytes()),
            (0usize..3).prop_map(|n| "\r".repeat(MAX_LINE_CHARS - 1 + n).into_bytes()),
        ]
    }

    proptest! {
        /// `read` with anchors and `edit_lines` agree on what the lines
        /// are and on each one's hash, whatever the line endings (LF,
        /// CRLF, lone CRs, a CR at the end) and however the bytes come.
        #[test]
        fn anchors_are_the_hashes_edit_lines_checks(
            parts in proptest::collection::vec(
                proptest::collection::vec(proptest::sample::select(b"ab \r\n".to_vec()), 0..12),
                0..6,
            ),
        ) {
            use crate::tools::edit_lines::anchor::line_hash;
            use crate::tools::edit_lines::lines::split;
            let bytes = parts.concat();
            let text = std::str::from_utf8(&bytes).unwrap();
            let mut c = LineCollector::new(1, 1000).with_anchors();
            for part in &parts {
                c.feed(part);
            }
            let r = c.finish();
            let expected: Vec<String> = split(text)
                .iter()
                .enumerate()
                .map(|(i, l)| format!("{:>6}:{}\t{}", i + 1, line_hash(l.content.as_bytes()), l.content))
                .collect();
            prop_assert_eq!(r.body, expected.join("\n"));
            prop_assert_eq!(r.total_lines, expected.len() as u64);
        }

        /// Whatever the bytes and however they are chunked, the lines are
        /// laid out as the plain reference lays them out.
        #[test]
        fn the_layout_is_the_plain_one(
            mut parts in proptest::collection::vec(short_part(), 0..8),
            long in proptest::option::of((0usize..8, long_part())),
            offset in 1u64..4,
            limit in 1u64..6,
        ) {
            if let Some((at, long)) = long {
                parts.insert(at.min(parts.len()), long);
            }
            let bytes = parts.concat();
            let chunks: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
            let r = collect(&chunks, offset, limit);
            let (body, total, cut) = reference(&bytes, offset, limit);
            prop_assert_eq!(&r.body, &body);
            prop_assert_eq!(r.body_len, body.len());
            prop_assert_eq!(r.total_lines, total);
            prop_assert_eq!(&r.cut, &cut);
        }
    }
}
