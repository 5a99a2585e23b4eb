//! Capping: the output cut at a line boundary once it passes
//! [`MAX_OUTPUT_CHARS`], with a note saying how many lines were left out.

use crate::tools::text;

/// Characters of the whole result shown before it is cut.
pub const MAX_OUTPUT_CHARS: usize = 30_000;

/// Output laid out line by line up to just past [`MAX_OUTPUT_CHARS`].
#[derive(Default)]
pub(crate) struct Capped {
    out: String,
    chars: usize,
    /// Lines pushed.
    lines: usize,
    /// The position, in the whole sequence of output lines, after the
    /// last one laid out (or left out as a separator at an edge).
    pub(crate) next: usize,
}

impl Capped {
    /// Whether the cap is passed: nothing more is shown.
    pub(crate) fn full(&self) -> bool {
        self.chars > MAX_OUTPUT_CHARS
    }

    pub(crate) fn push(&mut self, line: &str) {
        if self.lines > 0 {
            self.out.push('\n');
            self.chars += 1;
        }
        self.out.push_str(line);
        self.chars += line.chars().count();
        self.lines += 1;
    }

    /// The output with the page's note, capped, with `more` lines beyond
    /// those pushed counted as cut.
    pub(crate) fn finish(mut self, note: Option<String>, more: usize) -> String {
        if let Some(note) = note {
            if self.full() {
                return cap_output(self.out, more + 1);
            }
            self.push(&note);
        }
        cap_output(self.out, more)
    }
}

/// Cuts `out` at a line boundary to at most [`MAX_OUTPUT_CHARS`]
/// characters, with a note saying how much was left out: the lines of
/// `out` cut, plus `more` lines that followed it and were not laid out.
pub(crate) fn cap_output(out: String, more: usize) -> String {
    let Some((limit, _)) = out.char_indices().nth(MAX_OUTPUT_CHARS) else {
        return out;
    };
    let cut = out[..limit].rfind('\n').unwrap_or(0);
    let omitted = out[cut..].lines().filter(|l| !l.is_empty()).count() + more;
    format!(
        "{}\n(Output truncated at {} characters: {omitted} more lines not shown. Use head_limit and offset to page, or narrow the pattern, path or glob.)",
        &out[..cut],
        text::thousands(MAX_OUTPUT_CHARS)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_is_capped_at_a_line_boundary() {
        let out: String = (0..5000).map(|i| format!("line {i:05}\n")).collect();
        let capped = cap_output(out, 0);
        let (body, note) = capped.rsplit_once('\n').unwrap();
        assert!(body.chars().count() <= MAX_OUTPUT_CHARS);
        assert!(note.starts_with("(Output truncated at 30,000 characters: "));
        assert!(body.ends_with(|c: char| c.is_ascii_digit()));
    }
}
