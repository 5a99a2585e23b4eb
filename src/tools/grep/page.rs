//! Paging: `offset` and `head_limit`, both counted in output lines.
//! With a `head_limit`, content and count modes stop searching once the
//! window is filled; the note then says `of more than B` instead of a total.

use super::args::{DEFAULT_HEAD_LIMIT, GrepArgs};

/// `offset` and `head_limit`, both counted in output lines.
pub(crate) struct Page {
    pub(crate) offset: usize,
    pub(crate) limit: Option<usize>,
}

impl Page {
    /// The page the arguments ask for: `head_limit` 0 is no limit, none is
    /// [`DEFAULT_HEAD_LIMIT`].
    pub(crate) fn of(args: &GrepArgs) -> Self {
        Self {
            offset: args.offset.unwrap_or(0),
            limit: match args.head_limit {
                Some(0) => None,
                Some(n) => Some(n),
                None => Some(DEFAULT_HEAD_LIMIT),
            },
        }
    }

    /// How many of a file's output lines can be shown at most: those past
    /// `offset + head_limit` never are, wherever the file lands in path
    /// order.
    pub(crate) fn lines_shown(&self) -> usize {
        self.limit
            .map_or(usize::MAX, |n| self.offset.saturating_add(n))
    }

    /// The window of `lines`, and a note when lines lie beyond it (`more`:
    /// some lie beyond `lines`, not counted).
    pub(crate) fn apply(
        &self,
        lines: Vec<String>,
        what: &str,
        more: bool,
    ) -> (Vec<String>, Option<String>) {
        let (start, end, note) = self.window(lines.len(), what, more);
        let window = lines.into_iter().skip(start).take(end - start).collect();
        (window, note)
    }

    /// The window `start..end` of `total` lines, and a note when lines lie
    /// beyond it. `more`: the search stopped once the window was filled,
    /// so lines lie beyond `total` and their number is not known.
    pub(crate) fn window(
        &self,
        total: usize,
        what: &str,
        more: bool,
    ) -> (usize, usize, Option<String>) {
        let end = match self.limit {
            Some(n) => self.offset.saturating_add(n).min(total),
            None => total,
        };
        let start = self.offset.min(end);
        let note = (end < total || more).then(|| {
            let of = if more {
                format!("more than {end}")
            } else {
                total.to_string()
            };
            format!(
                "(Results are truncated: showing {what} {}–{end} of {of}. Use offset {end} to see more, or narrow the pattern, path or glob.)",
                start + 1
            )
        });
        (start, end, note)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_count_output_lines() {
        let lines: Vec<String> = (1..=10).map(|i| i.to_string()).collect();
        let page = Page {
            offset: 2,
            limit: Some(3),
        };
        let (w, note) = page.apply(lines.clone(), "lines", false);
        assert_eq!(w, ["3", "4", "5"]);
        assert!(note.unwrap().contains("showing lines 3–5 of 10"));
        let (w, note) = page.apply(lines.clone(), "lines", true);
        assert_eq!(w, ["3", "4", "5"]);
        assert!(
            note.unwrap()
                .contains("showing lines 3–5 of more than 5. Use offset 5")
        );
        let all = Page {
            offset: 0,
            limit: None,
        };
        assert_eq!(
            all.apply(lines, "lines", false),
            ((1..=10).map(|i| i.to_string()).collect(), None)
        );
    }
}
