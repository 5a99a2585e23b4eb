//! A terminal session's screen: what a program printed to its terminal,
//! as text the model reads rather than escape codes.
//!
//! Two renderings of the same bytes, one chosen per read:
//!
//! - **Lines** (a line program: a shell, a REPL, a prompt): the plain
//!   scrollback. Each finished line is the line as a terminal would show
//!   it once the program is done with it (carriage returns overwrite,
//!   backspaces step back, erase-in-line erases; colours and titles are
//!   dropped), and the unfinished last line (a prompt) is shown as it
//!   stands.
//! - **Screen** (a full-screen program: `less`, `vi`, `top`): the visible
//!   screen, rendered by a terminal emulator (`vt100`), when the program
//!   switched to the alternate screen or moved the cursor by address
//!   since the last read.
//!
//! A program that asks the terminal where its cursor is (`ESC [ 6 n`) or
//! what it is (`ESC [ c`) gets an answer, as from a real terminal: some
//! programs wait for one.

use std::fmt::Write as _;
use std::num::NonZeroU16;
use std::sync::{Arc, Mutex, MutexGuard};

use vte::{Params, Perform};

use crate::process::pty::Master;

/// Characters of one line kept; a longer line is broken there.
const MAX_LINE_CHARS: usize = 4096;

/// Columns between tab stops.
const TAB: usize = 8;

/// The primary device attributes a terminal answers `ESC [ c` with: a
/// VT102-like terminal.
const DEVICE_ATTRIBUTES: &[u8] = b"\x1b[?6c";

/// A command's terminal: its master side and what it shows.
#[derive(Debug)]
pub(crate) struct Terminal {
    master: Arc<Master>,
    screen: Mutex<Screen>,
    rows: u16,
    cols: u16,
}

/// What arrived from the program, parsed twice.
struct Screen {
    parser: vte::Parser,
    lines: Lines,
    emulator: vt100::Parser,
}

impl std::fmt::Debug for Screen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Screen")
            .field("alternate", &self.lines.alternate)
            .field("addressed", &self.lines.addressed)
            .finish_non_exhaustive()
    }
}

impl Terminal {
    /// The terminal of `master`, `rows` × `cols` characters (both at
    /// least 1).
    pub(crate) fn new(master: Arc<Master>, rows: u16, cols: u16) -> Self {
        let one = NonZeroU16::MIN;
        let emulator = vt100::Parser::new(
            NonZeroU16::new(rows).unwrap_or(one),
            NonZeroU16::new(cols).unwrap_or(one),
            0,
        );
        Self {
            master,
            screen: Mutex::new(Screen {
                parser: vte::Parser::new(),
                lines: Lines::default(),
                emulator,
            }),
            rows,
            cols,
        }
    }

    fn screen(&self) -> MutexGuard<'_, Screen> {
        self.screen.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The master side, to type into.
    pub(crate) fn master(&self) -> &Master {
        &self.master
    }

    /// Takes what the program printed: returns the lines it finished (as
    /// text, each ending in a newline), and answers its queries.
    pub(crate) fn feed(&self, bytes: &[u8]) -> String {
        let mut screen = self.screen();
        let Screen {
            parser,
            lines,
            emulator,
        } = &mut *screen;
        parser.advance(lines, bytes);
        emulator.process(bytes);
        let mut answers = std::mem::take(&mut lines.answers);
        for _ in 0..std::mem::take(&mut lines.position_queries) {
            let (row, col) = emulator.screen().cursor_position();
            let _ = write!(answers, "\x1b[{};{}R", row + 1, col + 1);
        }
        if !answers.is_empty() {
            self.master.answer(answers.as_bytes());
        }
        std::mem::take(&mut lines.finished)
    }

    /// The screen as text, when a full-screen program drew it since the
    /// last call (or still shows the alternate screen): its rows, blank
    /// ones at the end left out, under a line naming the size. `None` for
    /// a line program.
    pub(crate) fn take_screen(&self) -> Option<String> {
        let mut screen = self.screen();
        let drawn = screen.lines.alternate || screen.lines.addressed;
        screen.lines.addressed = false;
        if !drawn {
            return None;
        }
        let contents = screen.emulator.screen().contents();
        let mut text = format!("[screen, {} rows × {} columns]\n", self.rows, self.cols);
        let trimmed = contents.trim_end();
        if !trimmed.is_empty() {
            text.push_str(trimmed);
            text.push('\n');
        }
        Some(text)
    }

    /// The unfinished last line (a prompt), as it stands; empty when the
    /// program ended its last line.
    pub(crate) fn pending_line(&self) -> String {
        let screen = self.screen();
        if screen.lines.alternate {
            return String::new();
        }
        screen.lines.current.iter().collect()
    }
}

/// The line rendering: a [`Perform`] over the program's bytes.
#[derive(Default)]
struct Lines {
    /// The line being written, one char per column.
    current: Vec<char>,
    /// The cursor's column in it.
    col: usize,
    /// Lines finished since the last [`Terminal::feed`] returned them.
    finished: String,
    /// Whether the program shows the alternate screen (a full-screen
    /// program); nothing it prints is a line then.
    alternate: bool,
    /// Whether the program moved the cursor by address or cleared the
    /// screen since the last read: its output is a screen, not lines.
    addressed: bool,
    /// Answers owed to the program's queries, and how many cursor
    /// position reports (answered from the emulator, which knows the row).
    answers: String,
    position_queries: usize,
}

impl Lines {
    fn end_line(&mut self) {
        let line: String = self.current.iter().collect();
        self.finished.push_str(line.trim_end());
        self.finished.push('\n');
        self.current.clear();
        self.col = 0;
    }

    fn put(&mut self, c: char) {
        if self.col >= MAX_LINE_CHARS {
            self.end_line();
        }
        while self.current.len() < self.col {
            self.current.push(' ');
        }
        if self.col < self.current.len() {
            self.current[self.col] = c;
        } else {
            self.current.push(c);
        }
        self.col += 1;
    }
}

/// The first parameter of a control sequence, `default` when absent or 0.
fn first(params: &Params, default: usize) -> usize {
    match params.iter().next().and_then(|p| p.first()) {
        Some(0) | None => default,
        Some(n) => usize::from(*n),
    }
}

impl Perform for Lines {
    fn print(&mut self, c: char) {
        if !self.alternate {
            self.put(c);
        }
    }

    fn execute(&mut self, byte: u8) {
        if self.alternate {
            return;
        }
        match byte {
            b'\n' | 0x0b | 0x0c => self.end_line(),
            b'\r' => self.col = 0,
            0x08 => self.col = self.col.saturating_sub(1),
            b'\t' => {
                let next = (self.col / TAB + 1) * TAB;
                self.col = next.min(MAX_LINE_CHARS);
            }
            _ => {}
        }
    }

    fn csi_dispatch(&mut self, params: &Params, intermediates: &[u8], _ignore: bool, action: char) {
        if intermediates == b"?" && matches!(action, 'h' | 'l') {
            let switches = params
                .iter()
                .filter_map(|p| p.first())
                .any(|mode| matches!(mode, 47 | 1047 | 1049));
            if switches {
                self.alternate = action == 'h';
                if self.alternate && !self.current.is_empty() {
                    self.end_line();
                }
            }
            return;
        }
        match (intermediates, action) {
            ([], 'n') => match first(params, 0) {
                6 => self.position_queries += 1,
                5 => self.answers.push_str("\x1b[0n"),
                _ => {}
            },
            ([] | [b'?'], 'c') if first(params, 0) == 0 => {
                self.answers
                    .push_str(std::str::from_utf8(DEVICE_ATTRIBUTES).unwrap_or_default());
            }
            _ if self.alternate => {}
            ([], 'K') => match first(params, 0) {
                0 => self.current.truncate(self.col),
                1 => {
                    let end = (self.col + 1).min(self.current.len());
                    self.current[..end].fill(' ');
                }
                _ => self.current.clear(),
            },
            ([], 'C') => self.col = (self.col + first(params, 1)).min(MAX_LINE_CHARS),
            ([], 'D') => self.col = self.col.saturating_sub(first(params, 1)),
            ([], 'G') => self.col = (first(params, 1) - 1).min(MAX_LINE_CHARS),
            ([], 'H' | 'f' | 'A' | 'd') => self.addressed = true,
            ([], 'J') if first(params, 0) >= 2 => self.addressed = true,
            _ => {}
        }
    }

    fn esc_dispatch(&mut self, intermediates: &[u8], _ignore: bool, byte: u8) {
        // Reverse index: a full-screen program scrolling back.
        if intermediates.is_empty() && byte == b'M' && !self.alternate {
            self.addressed = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(bytes: &[u8]) -> (String, String, bool) {
        let mut parser = vte::Parser::new();
        let mut lines = Lines::default();
        parser.advance(&mut lines, bytes);
        let pending: String = lines.current.iter().collect();
        (lines.finished, pending, lines.addressed || lines.alternate)
    }

    #[test]
    fn carriage_returns_overwrite_and_colours_go() {
        let (done, pending, screen) = lines(b"\x1b[32mok\x1b[0m\r\n10%\r50%\r100%\r\nname? ");
        assert_eq!(done, "ok\n100%\n");
        assert_eq!(pending, "name? ");
        assert!(!screen);
    }

    #[test]
    fn backspace_and_erase_in_line_edit_the_line() {
        let (done, _, _) = lines(b"abc\x08\x08X\r\nxyz\r\x1b[Knew\r\n");
        assert_eq!(done, "aXc\nnew\n");
    }

    #[test]
    fn the_alternate_screen_is_a_screen_and_prints_no_lines() {
        let (done, pending, screen) = lines(b"before\r\n\x1b[?1049hlots of\r\nscreen");
        assert_eq!(done, "before\n");
        assert_eq!(pending, "");
        assert!(screen);
        // Back from it (vi quit): lines again, and what it drew is not.
        let (done, pending, screen) =
            lines(b"before\r\n\x1b[?1049hlots of\r\nscreen\x1b[?1049lafter\r\n");
        assert_eq!(done, "before\nafter\n");
        assert_eq!(pending, "");
        assert!(!screen);
    }

    #[test]
    fn cursor_addressing_makes_a_screen() {
        assert!(lines(b"\x1b[2J\x1b[1;1Htop").2);
        assert!(!lines(b"plain text\r\n").2);
    }

    #[test]
    fn a_very_long_line_is_broken_not_kept_whole() {
        let long = vec![b'x'; MAX_LINE_CHARS * 3 + 5];
        let (done, pending, _) = lines(&long);
        assert_eq!(done.lines().count(), 3);
        assert_eq!(pending.len(), 5);
    }
}
