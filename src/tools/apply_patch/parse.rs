//! The patch format of `apply_patch`, parsed: an envelope
//! (`*** Begin Patch` … `*** End Patch`) around file operations.
//!
//! ```text
//! *** Begin Patch
//! *** Add File: docs/new.md
//! +every line of the new file, each after a +
//! *** Delete File: old.txt
//! *** Update File: src/a.rs
//! *** Move to: src/b.rs            (optional: the file is renamed)
//! @@ fn main()                     (optional text: a line to find first)
//!  a context line (after a space)
//! -a line removed
//! +a line added
//! *** End of File                  (optional: the hunk ends the file)
//! *** End Patch
//! ```
//!
//! The parser is lenient where the meaning is plain (blank lines around the
//! envelope, a CR before each newline, a `<<'EOF'` heredoc wrapper, a first
//! hunk without `@@`, an empty line in a hunk read as an empty context
//! line, unified-diff line numbers after `@@`) and strict everywhere else:
//! every refusal names the line of the patch and what it should be.

use std::fmt;

/// A parsed patch: its file operations, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Patch {
    /// What the patch does, file by file.
    pub ops: Vec<FileOp>,
}

/// One file operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileOp {
    /// `*** Add File: path`: a new file with these contents.
    Add {
        /// The path as written.
        path: String,
        /// The new file's text: every `+` line, each ending in `\n`.
        contents: String,
    },
    /// `*** Delete File: path`.
    Delete {
        /// The path as written.
        path: String,
    },
    /// `*** Update File: path`, maybe with `*** Move to: path`.
    Update {
        /// The path as written.
        path: String,
        /// Where the file is moved to, if anywhere.
        move_to: Option<String>,
        /// Its hunks, in file order.
        hunks: Vec<Hunk>,
    },
}

impl FileOp {
    /// The path the operation names first.
    pub fn path(&self) -> &str {
        match self {
            FileOp::Add { path, .. } | FileOp::Delete { path } | FileOp::Update { path, .. } => {
                path
            }
        }
    }

    /// `Add File P`, `Delete File P` or `Update File P`, as errors name it.
    pub fn title(&self) -> String {
        match self {
            FileOp::Add { path, .. } => format!("Add File {path}"),
            FileOp::Delete { path } => format!("Delete File {path}"),
            FileOp::Update { path, .. } => format!("Update File {path}"),
        }
    }
}

/// One hunk of an update: lines to find and what replaces them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hunk {
    /// The texts after `@@`, in order: each a line to find (after the
    /// hunks before) before the hunk's lines are looked for.
    pub headers: Vec<String>,
    /// The hunk's lines.
    pub lines: Vec<Line>,
    /// `*** End of File`: the hunk's lines end the file.
    pub end_of_file: bool,
}

impl Hunk {
    /// The lines the file has now (context and removed), each with `\n`.
    pub fn old_text(&self) -> String {
        self.text(|l| !matches!(l, Line::Add(_)))
    }

    /// The lines the file will have (context and added), each with `\n`.
    pub fn new_text(&self) -> String {
        self.text(|l| !matches!(l, Line::Remove(_)))
    }

    fn text(&self, keep: impl Fn(&Line) -> bool) -> String {
        let mut out = String::new();
        for line in self.lines.iter().filter(|l| keep(l)) {
            out.push_str(line.text());
            out.push('\n');
        }
        out
    }
}

/// A line of a hunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Line {
    /// ` text`: a line that stays.
    Context(String),
    /// `-text`: a line removed.
    Remove(String),
    /// `+text`: a line added.
    Add(String),
}

impl Line {
    /// The line's text, without its marker.
    pub fn text(&self) -> &str {
        match self {
            Line::Context(t) | Line::Remove(t) | Line::Add(t) => t,
        }
    }
}

/// Why a patch cannot be read: the line of the patch (1-based) and what is
/// wrong there, with the fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// The line of the patch, counting from 1.
    pub line: usize,
    /// What is wrong and how to write it.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Invalid patch, line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ParseError {}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File: ";
const DELETE: &str = "*** Delete File: ";
const UPDATE: &str = "*** Update File: ";
const MOVE: &str = "*** Move to: ";
const END_OF_FILE: &str = "*** End of File";

/// Parses a patch.
///
/// ```
/// use agentcore::tools::apply_patch::{FileOp, Line, parse};
///
/// let patch = parse("*** Begin Patch\n*** Update File: a.txt\n@@\n-old\n+new\n*** End Patch\n").unwrap();
/// let FileOp::Update { path, hunks, .. } = &patch.ops[0] else { panic!() };
/// assert_eq!(path, "a.txt");
/// assert_eq!(hunks[0].lines, [Line::Remove("old".into()), Line::Add("new".into())]);
/// assert!(parse("*** Begin Patch\n*** End Patch").unwrap_err().to_string().contains("changes no file"));
/// ```
pub fn parse(patch: &str) -> Result<Patch, ParseError> {
    let lines: Vec<(usize, &str)> = patch
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .collect();
    let mut body: &[(usize, &str)] = &lines;
    // Blank lines around the envelope.
    while let [(_, first), rest @ ..] = body
        && first.trim().is_empty()
    {
        body = rest;
    }
    while let [rest @ .., (_, last)] = body
        && last.trim().is_empty()
    {
        body = rest;
    }
    // A heredoc wrapper (`apply_patch <<'EOF'` … `EOF`).
    if let [(_, first), inner @ .., (_, last)] = body {
        let first = first.trim();
        let last = last.trim();
        if (first.starts_with("<<") || first.starts_with("apply_patch <<"))
            && !last.is_empty()
            && last.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            body = inner;
        }
    }
    let Some(((first_no, first), rest)) = body.split_first() else {
        return Err(ParseError {
            line: 1,
            message: format!(
                "the patch is empty; it must start with `{BEGIN}` and end with `{END}`."
            ),
        });
    };
    if first.trim() != BEGIN {
        return Err(ParseError {
            line: *first_no,
            message: format!("the patch must start with the line `{BEGIN}`."),
        });
    }
    let Some(((last_no, last), inner)) = rest.split_last() else {
        return Err(ParseError {
            line: *first_no,
            message: format!("the patch must end with the line `{END}`."),
        });
    };
    if last.trim() != END {
        return Err(ParseError {
            line: *last_no,
            message: format!("the patch must end with the line `{END}`."),
        });
    }
    let mut parser = Parser {
        lines: inner,
        at: 0,
        end_line: *last_no,
    };
    let mut ops = Vec::new();
    while let Some((no, line)) = parser.peek() {
        // Headers may be padded, as the envelope's lines may.
        let header = line.trim_start();
        if let Some(path) = header.strip_prefix(ADD) {
            parser.at += 1;
            ops.push(parser.add(no, path)?);
        } else if let Some(path) = header.strip_prefix(DELETE) {
            parser.at += 1;
            ops.push(FileOp::Delete {
                path: file_path(no, path)?,
            });
        } else if let Some(path) = header.strip_prefix(UPDATE) {
            parser.at += 1;
            ops.push(parser.update(no, path)?);
        } else if line.trim().is_empty() {
            parser.at += 1;
        } else {
            return Err(ParseError {
                line: no,
                message: format!(
                    "expected a file operation (`{ADD}PATH`, `{DELETE}PATH` or `{UPDATE}PATH`), found `{}`.",
                    shorten(line)
                ),
            });
        }
    }
    if ops.is_empty() {
        return Err(ParseError {
            line: *last_no,
            message: "the patch changes no file: put at least one `*** Add File:`, `*** Delete File:` or `*** Update File:` section between the first and last lines.".into(),
        });
    }
    Ok(Patch { ops })
}

struct Parser<'a> {
    lines: &'a [(usize, &'a str)],
    at: usize,
    end_line: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<(usize, &'a str)> {
        self.lines.get(self.at).map(|(n, l)| (*n, *l))
    }

    /// The line number of the next line, or of `*** End Patch`.
    fn next_line_no(&self) -> usize {
        self.peek().map_or(self.end_line, |(n, _)| n)
    }

    fn add(&mut self, no: usize, path: &str) -> Result<FileOp, ParseError> {
        let path = file_path(no, path)?;
        let mut contents = String::new();
        while let Some((n, line)) = self.peek() {
            if let Some(text) = line.strip_prefix('+') {
                contents.push_str(text);
                contents.push('\n');
                self.at += 1;
            } else if is_operation(line) {
                break;
            } else {
                return Err(ParseError {
                    line: n,
                    message: format!(
                        "in `{ADD}{path}`, every line of the new file must start with `+`, found `{}`.",
                        shorten(line)
                    ),
                });
            }
        }
        Ok(FileOp::Add { path, contents })
    }

    fn update(&mut self, no: usize, path: &str) -> Result<FileOp, ParseError> {
        let path = file_path(no, path)?;
        let mut move_to = None;
        if let Some((n, line)) = self.peek()
            && let Some(to) = line.trim_start().strip_prefix(MOVE)
        {
            move_to = Some(file_path(n, to)?);
            self.at += 1;
        }
        let mut hunks: Vec<Hunk> = Vec::new();
        let mut hunk = Hunk::default();
        let mut hunk_line = self.next_line_no();
        while let Some((n, line)) = self.peek() {
            if is_operation(line) {
                break;
            }
            self.at += 1;
            if let Some(rest) = line.strip_prefix("@@") {
                if !hunk.lines.is_empty() {
                    hunks.push(std::mem::take(&mut hunk));
                    hunk_line = n;
                } else if hunk.headers.is_empty() {
                    hunk_line = n;
                }
                if let Some(header) = header(rest) {
                    hunk.headers.push(header);
                }
                continue;
            }
            if line.trim() == END_OF_FILE {
                if hunk.lines.is_empty() {
                    return Err(ParseError {
                        line: n,
                        message: format!(
                            "`{END_OF_FILE}` must end a hunk: put it after the hunk's last line."
                        ),
                    });
                }
                hunk.end_of_file = true;
                hunks.push(std::mem::take(&mut hunk));
                hunk_line = self.next_line_no();
                continue;
            }
            let parsed = match line.chars().next() {
                Some(' ') => Line::Context(line[1..].to_owned()),
                Some('-') => Line::Remove(line[1..].to_owned()),
                Some('+') => Line::Add(line[1..].to_owned()),
                None => Line::Context(String::new()),
                Some(_) => {
                    return Err(ParseError {
                        line: n,
                        message: format!(
                            "in `{UPDATE}{path}`, a hunk line must start with a space (context), `-` (removed) or `+` (added), or be an `@@` line; found `{}`.",
                            shorten(line)
                        ),
                    });
                }
            };
            hunk.lines.push(parsed);
        }
        if !hunk.lines.is_empty() {
            hunks.push(hunk);
        } else if !hunk.headers.is_empty() {
            return Err(ParseError {
                line: hunk_line,
                message: format!(
                    "in `{UPDATE}{path}`, this `@@` line has no hunk lines after it: add the lines to change, or remove it."
                ),
            });
        }
        if hunks.is_empty() && move_to.is_none() {
            return Err(ParseError {
                line: no,
                message: format!(
                    "`{UPDATE}{path}` has no hunks: add `@@` and the lines to change (` ` context, `-` removed, `+` added), or use `{MOVE}PATH` to rename it."
                ),
            });
        }
        Ok(FileOp::Update {
            path,
            move_to,
            hunks,
        })
    }
}

/// A file operation's header, padded or not.
fn is_operation(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with(ADD) || line.starts_with(DELETE) || line.starts_with(UPDATE)
}

/// The text of an `@@` line after the `@@`: `None` when there is none (or
/// only unified-diff line numbers, `-12,7 +12,8 @@`).
fn header(rest: &str) -> Option<String> {
    let mut text = rest.trim();
    if let Some(after) = text.strip_prefix('-')
        && let Some((numbers, tail)) = after.split_once("@@")
        && numbers
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, ',' | '+' | ' '))
    {
        text = tail.trim();
    }
    (!text.is_empty()).then(|| text.to_owned())
}

fn file_path(no: usize, path: &str) -> Result<String, ParseError> {
    let path = path.trim();
    if path.is_empty() {
        return Err(ParseError {
            line: no,
            message: "the file operation names no path: write it after the colon.".into(),
        });
    }
    Ok(path.to_owned())
}

/// A line as quoted in a message: at most 80 characters.
fn shorten(line: &str) -> String {
    match line.char_indices().nth(80) {
        None => line.to_owned(),
        Some((at, _)) => format!("{}…", &line[..at]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> Vec<FileOp> {
        parse(text).unwrap().ops
    }

    fn err(text: &str) -> ParseError {
        parse(text).unwrap_err()
    }

    #[test]
    fn every_operation_parses() {
        let ops = ok(concat!(
            "*** Begin Patch\n",
            "*** Add File: docs/a.md\n",
            "+# A\n",
            "+\n",
            "*** Delete File: old.txt\n",
            "*** Update File: src/a.rs\n",
            "*** Move to: src/b.rs\n",
            "@@ fn main()\n",
            " let x = 1;\n",
            "-let y = 2;\n",
            "+let y = 3;\n",
            "@@\n",
            "@@ impl A\n",
            "-a\n",
            "+b\n",
            "*** End of File\n",
            "*** End Patch\n",
        ));
        assert_eq!(
            ops[0],
            FileOp::Add {
                path: "docs/a.md".into(),
                contents: "# A\n\n".into()
            }
        );
        assert_eq!(
            ops[1],
            FileOp::Delete {
                path: "old.txt".into()
            }
        );
        let FileOp::Update {
            path,
            move_to,
            hunks,
        } = &ops[2]
        else {
            panic!("{ops:?}")
        };
        assert_eq!(
            (path.as_str(), move_to.as_deref()),
            ("src/a.rs", Some("src/b.rs"))
        );
        assert_eq!(hunks.len(), 2);
        assert_eq!(hunks[0].headers, ["fn main()"]);
        assert_eq!(hunks[0].old_text(), "let x = 1;\nlet y = 2;\n");
        assert_eq!(hunks[0].new_text(), "let x = 1;\nlet y = 3;\n");
        assert!(!hunks[0].end_of_file);
        assert_eq!(hunks[1].headers, ["impl A"]);
        assert!(hunks[1].end_of_file);
    }

    #[test]
    fn leniencies_where_the_meaning_is_plain() {
        let ops = ok(
            "\n<<'EOF'\r\n*** Begin Patch\r\n*** Update File: a\r\n-x\r\n\r\n+y\r\n*** End Patch\r\nEOF\n\n",
        );
        let FileOp::Update { hunks, .. } = &ops[0] else {
            panic!()
        };
        assert_eq!(
            hunks[0].lines,
            [
                Line::Remove("x".into()),
                Line::Context(String::new()),
                Line::Add("y".into())
            ]
        );
        let ops =
            ok("*** Begin Patch\n*** Update File: a\n@@ -3,4 +3,5 @@ fn f()\n-x\n*** End Patch");
        let FileOp::Update { hunks, .. } = &ops[0] else {
            panic!()
        };
        assert_eq!(hunks[0].headers, ["fn f()"]);
        let ops = ok("*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** End Patch");
        assert!(matches!(&ops[0], FileOp::Update { hunks, .. } if hunks.is_empty()));
    }

    #[test]
    fn refusals_name_the_line_and_the_fix() {
        assert_eq!(err("*** Update File: a\n").line, 1);
        assert!(
            err("x\n")
                .message
                .contains("must start with the line `*** Begin Patch`")
        );
        let e = err("*** Begin Patch\n*** Update File: a\n-x\n");
        assert_eq!(e.line, 3);
        assert!(e.message.contains("must end with the line `*** End Patch`"));
        let e = err("*** Begin Patch\n*** Add File: a\nx\n*** End Patch");
        assert_eq!(e.line, 3);
        assert!(e.message.contains("must start with `+`"), "{e}");
        let e = err("*** Begin Patch\n*** Update File: a\n@@\n-x\n!y\n*** End Patch");
        assert_eq!(e.line, 5);
        let e = err("*** Begin Patch\n*** Update File: a\n*** End Patch");
        assert!(e.message.contains("has no hunks"), "{e}");
        let e = err("*** Begin Patch\n*** Update File: a\n@@ f\n*** End Patch");
        assert!(e.message.contains("no hunk lines"), "{e}");
        let e = err("*** Begin Patch\n*** Delete File:  \n*** End Patch");
        assert!(e.message.contains("names no path"), "{e}");
        let e = err("*** Begin Patch\nhello\n*** End Patch");
        assert!(e.message.contains("expected a file operation"), "{e}");
        assert_eq!(
            err("*** Begin Patch\n*** Update File: a\n*** End of File\n*** End Patch").line,
            3
        );
    }
}
