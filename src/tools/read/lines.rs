//! Splitting decoded text into lines for `read`: the shown lines kept in
//! `cat -n` form, the others only counted.

use super::{MAX_LINE_CHARS, MAX_OUTPUT_BYTES};
use crate::tools::read_state::ShownLines;

/// Bytes of one line kept: enough for [`MAX_LINE_CHARS`] characters.
const LINE_KEEP_BYTES: usize = MAX_LINE_CHARS * 4 + 4;

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
        let room = LINE_KEEP_BYTES.saturating_sub(self.kept.len());
        let (kept, rest) = part.split_at(part.len().min(room));
        self.kept.extend_from_slice(kept);
        self.extra_chars += rest.iter().filter(|&&b| (b as i8) >= -0x40).count();
        self.last_byte_cr = part.last() == Some(&b'\r');
    }

    fn end_line(&mut self) {
        let mut extra = self.extra_chars;
        let mut kept = std::mem::take(&mut self.kept);
        if self.last_byte_cr {
            // CRLF: show the line without its CR.
            if extra > 0 {
                extra -= 1;
            } else {
                kept.pop();
            }
        }
        let text = String::from_utf8_lossy(&kept);
        let chars = text.chars().count() + extra;
        let line_no = self.line_no;
        let r = &mut self.report;
        let sep = usize::from(r.shown > 0);
        let mut line = String::new();
        if chars > MAX_LINE_CHARS {
            r.any_cut = true;
            r.cut.push(line_no);
            let cut: String = text.chars().take(MAX_LINE_CHARS).collect();
            line.push_str(&cut);
            line.push_str(&format!(" [… {} more characters]", chars - MAX_LINE_CHARS));
        } else {
            line.push_str(&text);
        }
        let entry = format!("{line_no:>6}\t{line}");
        r.body_len += sep + entry.len();
        if r.body_len <= MAX_OUTPUT_BYTES {
            if sep == 1 {
                r.body.push('\n');
            }
            r.body.push_str(&entry);
        }
        r.shown += 1;
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
}
