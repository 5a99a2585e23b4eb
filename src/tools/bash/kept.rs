//! Reading a saved output again, for `bash_output`: a page of its lines,
//! or the lines a pattern matches with context around them, numbered as
//! `read` numbers them (`cat -n`), capped at
//! [`MAX_OUTPUT_CHARS`](crate::limits::bash::MAX_OUTPUT_CHARS) characters.
//!
//! The file is streamed: memory holds one read buffer, one line cut at
//! [`LINE_KEEP_BYTES`], at most `context` lines before a match, and the
//! page, however large the file and however long its lines.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::io::{self, BufRead, BufReader, Read};

use regex::Regex;
use tokio_util::sync::CancellationToken;

use crate::limits::bash::{MAX_OUTPUT_CHARS, MAX_REREAD_LINE_CHARS};
use crate::tools::text;

/// Bytes of one line kept: enough for [`MAX_REREAD_LINE_CHARS`]
/// characters; the rest of a longer line is only counted.
pub(crate) const LINE_KEEP_BYTES: usize = MAX_REREAD_LINE_CHARS * 4 + 4;

/// The read buffer's size.
const READ_BUFFER: usize = 64 * 1024;

/// Lines between two looks at the cancellation token.
const CANCEL_EVERY: u64 = 4096;

/// Line numbers are right-aligned in this many columns (`cat -n`, as
/// `read` shows them).
const LINE_NUMBER_WIDTH: usize = 6;

/// What to show of a saved output.
#[derive(Debug)]
pub(crate) struct Query {
    /// The 1-based line to start at.
    pub(crate) offset: u64,
    /// Lines shown at most (matching lines, with a pattern).
    pub(crate) limit: u64,
    /// Only the lines this matches, each with `context` lines around it.
    pub(crate) pattern: Option<Regex>,
    /// Lines shown before and after each matching line.
    pub(crate) context: usize,
}

/// What [`read_page`] found.
#[derive(Debug, Default)]
pub(crate) struct Page {
    /// The shown lines in `cat -n` form, each ending in a newline; `--`
    /// between groups of matches that are not adjacent.
    pub(crate) body: String,
    /// Lines in the whole output (a last line without a newline counts).
    pub(crate) total_lines: u64,
    /// The first and last line numbers shown.
    pub(crate) first: u64,
    /// See [`Page::first`].
    pub(crate) last: u64,
    /// Lines shown (without a pattern), or matching lines shown.
    pub(crate) shown: u64,
    /// With a pattern: the lines from `offset` on that match it.
    pub(crate) matches: u64,
    /// Where the next page starts, when something is left to show.
    pub(crate) next: Option<u64>,
    /// Whether the page stopped at the character cap.
    pub(crate) capped: bool,
    /// The largest the line buffer ever was, in bytes (its capacity):
    /// at most [`LINE_KEEP_BYTES`].
    pub(crate) line_buffer: usize,
}

/// Reads `input` and lays out the page `query` asks for. Lines after the
/// page are read too, only to count them (and the matches). Stops with
/// [`io::ErrorKind::Interrupted`] when `cancel` fires.
pub(crate) fn read_page(
    input: impl Read,
    query: &Query,
    cancel: &CancellationToken,
) -> io::Result<Page> {
    let mut lines = Lines::new(input);
    let mut page = Page::default();
    let mut out = Out::default();
    let offset = query.offset.max(1);
    let end = offset.saturating_add(query.limit);
    let mut n = 0u64;
    // With a pattern: lines kept before the next match, after-context
    // still to show, and the last line shown (for the `--` separators).
    let mut before: VecDeque<(u64, Shown)> = VecDeque::with_capacity(query.context);
    let mut after_left = 0usize;
    let mut last_match_shown = 0u64;
    loop {
        if n.is_multiple_of(CANCEL_EVERY) && cancel.is_cancelled() {
            return Err(io::ErrorKind::Interrupted.into());
        }
        let needed = n + 1 >= offset && (query.pattern.is_some() || (n + 1 < end && !out.full));
        let more = if needed {
            lines.next_line()?
        } else {
            lines.skip_line()?
        };
        if !more {
            break;
        }
        n += 1;
        if !needed {
            if n == end && page.next.is_none() && query.pattern.is_none() {
                page.next = Some(n);
            }
            continue;
        }
        let Some(regex) = &query.pattern else {
            let line = lines.shown();
            if !out.push(n, &line.text) {
                page.next = Some(n);
                page.capped = true;
                continue;
            }
            page.shown += 1;
            continue;
        };
        let line = lines.shown();
        let showing = page.shown < query.limit && !out.full;
        if regex.is_match(line.own()) {
            page.matches += 1;
            if !showing {
                page.next.get_or_insert(n);
                // Still shown as the last shown match's context.
                if after_left > 0 && out.push(n, &line.text) {
                    after_left -= 1;
                }
                continue;
            }
            let group_start = before.front().map_or(n, |(at, _)| *at);
            if out.last > 0 && group_start > out.last + 1 {
                out.separator();
            }
            let mut fits = true;
            for (at, text) in before.drain(..) {
                fits = fits && out.push(at, &text.text);
            }
            if fits && out.push(n, &line.text) {
                page.shown += 1;
                last_match_shown = n;
                after_left = query.context;
            } else {
                page.capped = true;
                page.next.get_or_insert(n);
            }
        } else if after_left > 0 && !out.full {
            after_left -= 1;
            if !out.push(n, &line.text) {
                page.capped = true;
            }
        } else if query.context > 0 && showing {
            if before.len() == query.context {
                before.pop_front();
            }
            before.push_back((n, line));
        }
    }
    if query.pattern.is_some() {
        // The next page starts early enough to show the context before
        // its first match, but after the last match shown here.
        page.next = page.next.map(|next| {
            let context = u64::try_from(query.context).unwrap_or(0);
            next.saturating_sub(context)
                .max(last_match_shown + 1)
                .max(offset)
        });
    }
    page.total_lines = n;
    page.first = out.first;
    page.last = out.last;
    page.body = out.text;
    page.line_buffer = lines.line.capacity();
    Ok(page)
}

/// The page being laid out, up to [`MAX_OUTPUT_CHARS`] characters.
#[derive(Debug, Default)]
struct Out {
    text: String,
    chars: usize,
    first: u64,
    last: u64,
    /// Set once a line did not fit: nothing more is shown.
    full: bool,
    /// A `--` to write before the next line.
    separate: bool,
}

impl Out {
    /// Adds line `n`, unless it would pass the cap (then nothing more is
    /// added); whether it was added.
    fn push(&mut self, n: u64, line: &str) -> bool {
        if self.full {
            return false;
        }
        let mut number = itoa::Buffer::new();
        let number = number.format(n);
        let width = number.len().max(LINE_NUMBER_WIDTH);
        let separator = if self.separate { "--\n" } else { "" };
        let chars = separator.len() + width + 1 + line.chars().count() + 1;
        if self.chars + chars > MAX_OUTPUT_CHARS {
            self.full = true;
            return false;
        }
        self.separate = false;
        self.text.push_str(separator);
        for _ in number.len()..LINE_NUMBER_WIDTH {
            self.text.push(' ');
        }
        self.text.push_str(number);
        self.text.push('\t');
        self.text.push_str(line);
        self.text.push('\n');
        self.chars += chars;
        if self.first == 0 {
            self.first = n;
        }
        self.last = n;
        true
    }

    /// Separates the next line from the last one (written with it, so
    /// that a page never ends in a separator).
    fn separator(&mut self) {
        self.separate = true;
    }
}

/// A file's lines, one at a time, each kept to [`LINE_KEEP_BYTES`].
struct Lines<R> {
    reader: BufReader<R>,
    /// The kept bytes of the current line, its line end left out.
    line: Vec<u8>,
    /// Characters of the current line beyond `line` (counted as the bytes
    /// that start a UTF-8 sequence).
    extra_chars: usize,
}

impl<R: Read> Lines<R> {
    fn new(input: R) -> Self {
        Self {
            reader: BufReader::with_capacity(READ_BUFFER, input),
            line: Vec::with_capacity(LINE_KEEP_BYTES),
            extra_chars: 0,
        }
    }

    /// Reads the next line, keeping its first bytes; `false` at the end.
    fn next_line(&mut self) -> io::Result<bool> {
        self.line.clear();
        self.extra_chars = 0;
        let mut any = false;
        let mut last_cr = false;
        loop {
            let buf = match self.reader.fill_buf() {
                Ok(buf) => buf,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                return Ok(any);
            }
            any = true;
            let (chunk, used, done) = match memchr::memchr(b'\n', buf) {
                Some(at) => (&buf[..at], at + 1, true),
                None => (buf, buf.len(), false),
            };
            let take = (LINE_KEEP_BYTES - self.line.len()).min(chunk.len());
            self.line.extend_from_slice(&chunk[..take]);
            self.extra_chars += chunk[take..]
                .iter()
                .filter(|b| !is_continuation(**b))
                .count();
            if let Some(last) = chunk.last() {
                last_cr = *last == b'\r';
            }
            self.reader.consume(used);
            if done {
                // A CRLF line end: the CR is not part of the line.
                if last_cr {
                    if self.extra_chars > 0 {
                        self.extra_chars -= 1;
                    } else {
                        self.line.pop();
                    }
                }
                return Ok(true);
            }
        }
    }

    /// Passes over the next line without keeping it; `false` at the end.
    fn skip_line(&mut self) -> io::Result<bool> {
        let mut any = false;
        loop {
            let buf = match self.reader.fill_buf() {
                Ok(buf) => buf,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                return Ok(any);
            }
            any = true;
            match memchr::memchr(b'\n', buf) {
                Some(at) => {
                    self.reader.consume(at + 1);
                    return Ok(true);
                }
                None => {
                    let len = buf.len();
                    self.reader.consume(len);
                }
            }
        }
    }

    /// The current line as shown: decoded lossily, cut at
    /// [`MAX_REREAD_LINE_CHARS`] characters with a note of the rest.
    fn shown(&self) -> Shown {
        let text = String::from_utf8_lossy(&self.line);
        let chars = text.chars().count() + self.extra_chars;
        if chars <= MAX_REREAD_LINE_CHARS {
            let own = text.len();
            return Shown {
                text: text.into_owned(),
                own,
            };
        }
        let own = text
            .char_indices()
            .nth(MAX_REREAD_LINE_CHARS)
            .map_or(text.len(), |(at, _)| at);
        Shown {
            text: format!(
                "{} [… {} more characters]",
                &text[..own],
                chars - MAX_REREAD_LINE_CHARS
            ),
            own,
        }
    }
}

/// A line as shown, and how much of it is the line's own text (the rest
/// is the note on a cut line, which a pattern does not see).
#[derive(Debug)]
struct Shown {
    text: String,
    own: usize,
}

impl Shown {
    /// What a pattern is matched against.
    fn own(&self) -> &str {
        &self.text[..self.own]
    }
}

/// Whether `byte` continues a UTF-8 sequence (`10xxxxxx`).
fn is_continuation(byte: u8) -> bool {
    byte & 0xC0 == 0x80
}

/// How a later call names the output: `"call_id": "ID"` or
/// `"job_id": "ID"`, with the arguments of this call that a next page
/// keeps.
#[derive(Debug)]
pub(crate) struct Source<'a> {
    /// `call_id` or `job_id`.
    pub(crate) key: &'static str,
    /// The id.
    pub(crate) id: &'a str,
    /// The pattern as the model gave it.
    pub(crate) pattern: Option<&'a str>,
    /// `context` as the model gave it.
    pub(crate) context: Option<u64>,
    /// `limit` as the model gave it.
    pub(crate) limit: Option<u64>,
    /// Whether the output may still grow (a running job).
    pub(crate) growing: bool,
}

impl Source<'_> {
    /// `bash_output {"call_id": "ID", …, "offset": N}`: the call that
    /// reads on from line `offset`.
    fn read_on(&self, offset: u64) -> String {
        let mut args = format!("{}: {}", quote(self.key), quote(self.id));
        if let Some(pattern) = self.pattern {
            let _ = write!(args, ", \"pattern\": {}", quote(pattern));
        }
        if let Some(context) = self.context.filter(|c| *c > 0) {
            let _ = write!(args, ", \"context\": {context}");
        }
        let _ = write!(args, ", \"offset\": {offset}");
        if let Some(limit) = self.limit {
            let _ = write!(args, ", \"limit\": {limit}");
        }
        format!("bash_output {{{args}}}")
    }
}

/// The line after a cut result's `[Output truncated: …]` notice:
/// `Read it again with bash_output {"call_id": "ID", "pattern": "REGEX"}
/// or {"call_id": "ID", "offset": N, "limit": M}.` (`key` is `call_id` or
/// `job_id`).
pub(crate) fn read_again_hint(key: &str, id: &str) -> String {
    let named = format!("{}: {}", quote(key), quote(id));
    format!(
        "Read it again with bash_output {{{named}, \"pattern\": \"REGEX\"}} or {{{named}, \"offset\": N, \"limit\": M}}."
    )
}

/// `s` as a JSON string.
pub(crate) fn quote(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

/// Why a page cannot be shown: an offset past the end. The message says
/// how far the output goes.
pub(crate) fn check_offset(page: &Page, offset: u64, source: &Source<'_>) -> Result<(), String> {
    if offset <= page.total_lines.max(1) {
        return Ok(());
    }
    let so_far = if source.growing { " so far" } else { "" };
    let lines = page.total_lines;
    if lines == 0 {
        return Err(format!(
            "offset {offset} is past the end: the saved output is empty{so_far}. Leave offset out."
        ));
    }
    Err(format!(
        "offset {offset} is past the end: the saved output has {lines} line{}{so_far}. Give an offset from 1 to {lines}.",
        if lines == 1 { "" } else { "s" }
    ))
}

/// The page's text: its lines, then a line in brackets saying what was
/// shown and, when more is left, the call that reads on.
pub(crate) fn render(page: &Page, offset: u64, source: &Source<'_>) -> String {
    let mut text = page.body.clone();
    let total = page.total_lines;
    let (of, lines) = if source.growing {
        (
            format!("{total} written so far"),
            format!("{total} lines written so far"),
        )
    } else {
        (total.to_string(), format!("{total} lines"))
    };
    let capped = if page.capped {
        format!(" (cut at {} characters)", text::thousands(MAX_OUTPUT_CHARS))
    } else {
        String::new()
    };
    let read_on = page
        .next
        .map(|next| format!(" Read on with {}.", source.read_on(next)))
        .unwrap_or_default();
    let footer = if source.pattern.is_some() {
        let from = if offset > 1 {
            format!(" from line {offset} on")
        } else {
            String::new()
        };
        let matching = |n: u64| format!("{n} matching line{}", if n == 1 { "" } else { "s" });
        if page.matches == 0 {
            format!("[No line{from} matches the pattern; the output has {lines}.]")
        } else if page.next.is_none() {
            format!("[{}{from} of {lines}, all shown.]", matching(page.matches))
        } else {
            format!(
                "[{} of {}{from} shown{capped}, of {lines}.{read_on}]",
                page.shown,
                matching(page.matches)
            )
        }
    } else if page.shown == 0 {
        format!("[No line shown{capped}; the output has {lines}.{read_on}]")
    } else if page.next.is_none() && !source.growing {
        format!(
            "[Lines {}-{} of {of}: the end of the output.]",
            page.first, page.last
        )
    } else {
        format!(
            "[Lines {}-{} of {of}{capped}.{read_on}]",
            page.first, page.last
        )
    };
    text.push_str(&footer);
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(offset: u64, limit: u64, pattern: Option<&str>, context: usize) -> Query {
        Query {
            offset,
            limit,
            pattern: pattern.map(|p| Regex::new(p).unwrap()),
            context,
        }
    }

    fn page(input: &[u8], q: &Query) -> Page {
        read_page(input, q, &CancellationToken::new()).unwrap()
    }

    fn source(pattern: Option<&str>) -> Source<'_> {
        Source {
            key: "call_id",
            id: "c1",
            pattern,
            context: None,
            limit: None,
            growing: false,
        }
    }

    fn seq(n: u64) -> Vec<u8> {
        (1..=n)
            .map(|i| format!("{i}\n"))
            .collect::<String>()
            .into_bytes()
    }

    #[test]
    fn pages_are_numbered_as_read_numbers_them_and_say_where_to_go_on() {
        let p = page(&seq(10), &query(3, 2, None, 0));
        assert_eq!(p.body, "     3\t3\n     4\t4\n");
        assert_eq!((p.total_lines, p.next), (10, Some(5)));
        assert_eq!(
            render(&p, 3, &source(None)),
            "     3\t3\n     4\t4\n[Lines 3-4 of 10. Read on with bash_output {\"call_id\": \"c1\", \"offset\": 5}.]"
        );
        let p = page(&seq(10), &query(9, 5, None, 0));
        assert_eq!(
            render(&p, 9, &source(None)),
            "     9\t9\n    10\t10\n[Lines 9-10 of 10: the end of the output.]"
        );
        let p = page(b"a\r\nb", &query(1, 200, None, 0));
        assert_eq!(p.body, "     1\ta\n     2\tb\n");
        assert_eq!(p.total_lines, 2);
    }

    #[test]
    fn matches_come_with_context_and_separators_like_grep() {
        let input = seq(100);
        let q = query(1, 200, Some("^(5|9|50)$"), 1);
        let p = page(&input, &q);
        assert_eq!(
            p.body,
            "     4\t4\n     5\t5\n     6\t6\n--\n     8\t8\n     9\t9\n    10\t10\n--\n    49\t49\n    50\t50\n    51\t51\n"
        );
        assert_eq!((p.matches, p.shown, p.next), (3, 3, None));
        assert_eq!(
            render(&p, 1, &source(Some("^(5|9|50)$"))),
            format!("{}[3 matching lines of 100 lines, all shown.]", p.body)
        );
        // Adjacent groups merge; the limit counts matches.
        let q = query(1, 2, Some("^[4-6]$"), 1);
        let p = page(&input, &q);
        assert_eq!(p.body, "     3\t3\n     4\t4\n     5\t5\n     6\t6\n");
        assert_eq!((p.matches, p.shown, p.next), (3, 2, Some(6)));
        let mut s = source(Some("^[4-6]$"));
        s.context = Some(1);
        assert!(
            render(&p, 1, &s).ends_with(
                "[2 of 3 matching lines shown, of 100 lines. Read on with bash_output {\"call_id\": \"c1\", \"pattern\": \"^[4-6]$\", \"context\": 1, \"offset\": 6}.]"
            ),
            "{}",
            render(&p, 1, &s)
        );
        let p = page(&input, &query(1, 10, Some("nothing"), 0));
        assert_eq!(
            render(&p, 1, &source(Some("nothing"))),
            "[No line matches the pattern; the output has 100 lines.]"
        );
    }

    #[test]
    fn a_pattern_sees_a_cut_lines_text_not_its_note() {
        let long = format!("{}\nshort\n", "z".repeat(MAX_REREAD_LINE_CHARS + 5));
        let p = page(long.as_bytes(), &query(1, 10, Some("more characters"), 0));
        assert_eq!(p.matches, 0);
        let p = page(long.as_bytes(), &query(1, 10, Some("^z+$"), 0));
        assert_eq!(p.matches, 1);
        assert!(p.body.ends_with(" [… 5 more characters]\n"), "{}", p.body);
    }

    #[test]
    fn a_page_cut_by_the_cap_never_ends_in_a_separator() {
        // Groups of one long line each, apart: the cap falls between them.
        let line = "m".repeat(1900);
        let input: String = (0..40).map(|i| format!("{line}\n{i}\n")).collect();
        let p = page(input.as_bytes(), &query(1, 2000, Some("^m"), 0));
        assert!(p.capped);
        assert!(!p.body.ends_with("--\n"));
        assert!(p.body.chars().count() <= MAX_OUTPUT_CHARS);
        assert_eq!(p.next, Some(2 * p.shown + 1));
    }

    #[test]
    fn the_page_is_capped_at_the_characters_of_a_result() {
        let line = "x".repeat(1000);
        let input: String = (0..100).map(|_| format!("{line}\n")).collect();
        let p = page(input.as_bytes(), &query(1, 2000, None, 0));
        assert!(p.capped);
        assert!(p.body.chars().count() <= MAX_OUTPUT_CHARS);
        assert_eq!(p.next, Some(p.last + 1));
        let text = render(&p, 1, &source(None));
        assert!(
            text.ends_with(&format!(
                "[Lines 1-{} of 100 (cut at 30,000 characters). Read on with bash_output {{\"call_id\": \"c1\", \"offset\": {}}}.]",
                p.last,
                p.last + 1
            )),
            "{text}"
        );
    }

    #[test]
    fn offsets_past_the_end_say_how_far_the_output_goes() {
        let p = page(&seq(10), &query(11, 5, None, 0));
        assert_eq!(
            check_offset(&p, 11, &source(None)).unwrap_err(),
            "offset 11 is past the end: the saved output has 10 lines. Give an offset from 1 to 10."
        );
        assert!(check_offset(&p, 10, &source(None)).is_ok());
    }

    /// One line of 50 MB without a newline, then a short line: the line
    /// buffer never grows past its cap, the shown line is cut with a
    /// count of the rest, and the page stays within the result's cap.
    #[test]
    fn an_enormous_line_is_read_in_bounded_memory() {
        struct Huge {
            left: usize,
            tail: &'static [u8],
        }
        impl Read for Huge {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if self.left > 0 {
                    let n = buf.len().min(self.left);
                    buf[..n].fill(b'y');
                    self.left -= n;
                    return Ok(n);
                }
                let n = buf.len().min(self.tail.len());
                buf[..n].copy_from_slice(&self.tail[..n]);
                self.tail = &self.tail[n..];
                Ok(n)
            }
        }
        let size = 50 * 1024 * 1024;
        for pattern in [None, Some("y"), Some("^end$")] {
            let input = Huge {
                left: size,
                tail: b"\nend\n",
            };
            let q = query(1, 200, pattern, 2);
            let p = read_page(input, &q, &CancellationToken::new()).unwrap();
            assert_eq!(p.total_lines, 2);
            assert!(p.line_buffer <= LINE_KEEP_BYTES, "{}", p.line_buffer);
            assert!(p.body.len() < 2 * MAX_REREAD_LINE_CHARS + 100);
            assert!(
                p.body.contains(&format!(
                    " [… {} more characters]",
                    size - MAX_REREAD_LINE_CHARS
                )),
                "{pattern:?}"
            );
        }
    }

    #[test]
    fn a_cancelled_read_stops() {
        let cancel = CancellationToken::new();
        cancel.cancel();
        let err = read_page(&seq(10)[..], &query(1, 5, None, 0), &cancel).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::Interrupted);
    }
}
