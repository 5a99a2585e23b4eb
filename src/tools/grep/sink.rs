//! What the searcher reports into: the sink ([`Collect`]) that hands one
//! file's content lines on as they come, the lines themselves ([`Raw`] as
//! reported, [`Line`] decoded and cut at [`MAX_LINE_CHARS`]), and the
//! reader that stops a search when the call is cancelled.

use std::borrow::Cow;
use std::io;

use grep_searcher::{Searcher, Sink, SinkContext, SinkContextKind, SinkMatch};
use tokio_util::sync::CancellationToken;

use super::args::OutputMode;

/// Characters of one matched or context line shown before it is cut.
pub const MAX_LINE_CHARS: usize = 500;

/// What one kept line costs besides its text, for the budgets of what
/// the walk keeps.
const LINE_OVERHEAD: usize = std::mem::size_of::<Line>();

/// One line of content output, before layout.
#[derive(Clone)]
pub(crate) enum Line {
    Match(u64, String),
    Context(u64, String),
    Break,
}

impl Line {
    /// What keeping it costs, for [`FILE_KEEP_BYTES`](super::FILE_KEEP_BYTES) and
    /// [`KEEP_BYTES`](super::KEEP_BYTES).
    pub(crate) fn weight(&self) -> usize {
        LINE_OVERHEAD
            + match self {
                Line::Match(_, t) | Line::Context(_, t) => t.capacity(),
                Line::Break => 0,
            }
    }
}

/// One content line as the searcher reports it, not yet decoded.
#[derive(Clone, Copy)]
pub(crate) enum Raw<'b> {
    Match(u64, &'b [u8]),
    Context(u64, &'b [u8]),
    Break,
}

impl Raw<'_> {
    /// The line as laid out: decoded and cut.
    pub(crate) fn line(self) -> Line {
        match self {
            Raw::Match(n, bytes) => Line::Match(n, cut_line(bytes)),
            Raw::Context(n, bytes) => Line::Context(n, cut_line(bytes)),
            Raw::Break => Line::Break,
        }
    }
}

/// Where a search's content lines go: each with its index in the file's
/// output lines; `false` stops the search.
pub(crate) type Emit<'e> = &'e mut dyn FnMut(usize, Raw<'_>) -> bool;

/// Collects one file's results; binary files are dropped whole.
pub(crate) struct Collect<'a, 'e> {
    mode: OutputMode,
    pub(crate) matches: u64,
    /// Content lines reported so far.
    pub(crate) count: usize,
    emit: Emit<'e>,
    /// Whether `emit` asked to stop.
    stopped: bool,
    pub(crate) binary: bool,
    token: &'a CancellationToken,
    /// Matches and context lines since the token was last checked.
    seen: u32,
}

impl<'a, 'e> Collect<'a, 'e> {
    pub(crate) fn new(mode: OutputMode, token: &'a CancellationToken, emit: Emit<'e>) -> Self {
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

/// A file reader that stops when the call is cancelled (checked on every
/// read, about every 64 KiB), so a search of a huge file ends promptly.
pub(crate) struct CancelReader<'a> {
    pub(crate) file: std::fs::File,
    pub(crate) token: &'a CancellationToken,
}

impl io::Read for CancelReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.token.is_cancelled() {
            return Err(io::Error::other("search cancelled"));
        }
        self.file.read(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_cut_at_500_characters() {
        assert_eq!(cut_line(b"short\n"), "short");
        let long = "é".repeat(600);
        let cut = cut_line(long.as_bytes());
        assert_eq!(cut, format!("{} [… truncated]", "é".repeat(500)));
        assert_eq!(cut_line(&[b'x'; 500]), "x".repeat(500));
    }
}
