//! The hunks of an `*** Update File` applied to a file's text: each hunk's
//! lines (context and removed) found as whole lines of the file, after the
//! hunks before it, with the tiers `edit` uses ([`locate`]): exactly, then
//! ignoring trailing whitespace, then normalising indentation (added lines
//! re-indented), then with runs of spaces and tabs inside lines compared as
//! one space, then folding look-alike characters, then reading backslash
//! escapes written literally (added lines read the same way). The first tier that
//! finds a place decides; several places is a refusal, never a guess.
//! Context lines are written back as the file has them, byte for byte;
//! only removed lines go and added lines come.

use std::fmt;
use std::ops::Range;

use super::parse::{Hunk, Line};
use crate::error_code::ErrorCode;
use crate::tools::edit::{Match, Place, Tier, closest, locate};

/// Why a hunk cannot be applied. `Display` is the message (after
/// `Update File P, hunk K: `); [`HunkError::code`] the code.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HunkError {
    /// An `@@` text that matches no line after the hunks before (code 4).
    HeaderNotFound(String),
    /// The hunk's lines are nowhere after the hunks before (code 4).
    NotFound {
        /// The lines looked for (context and removed).
        context: String,
        /// The hunk must end the file (`*** End of File`).
        end_of_file: bool,
        /// The closest region of the file and how it differs, if any is
        /// close.
        closest: Option<String>,
    },
    /// The hunk's lines match several places (code 5).
    Ambiguous {
        /// How many.
        places: usize,
        /// The tier that found them.
        tier: Tier,
    },
    /// The hunk's lines match only after normalising indentation, are
    /// indented relative to each other otherwise than the file's, and an
    /// added line stands for no line of the file (code 4).
    IndentationUnclear,
}

impl HunkError {
    /// [`ErrorCode::TextNotFound`] (4) when the hunk's place is not
    /// found, [`ErrorCode::AmbiguousMatch`] (5) when it is not unique (as
    /// for `edit`).
    pub fn code(&self) -> ErrorCode {
        match self {
            HunkError::HeaderNotFound(_)
            | HunkError::NotFound { .. }
            | HunkError::IndentationUnclear => ErrorCode::TextNotFound,
            HunkError::Ambiguous { .. } => ErrorCode::AmbiguousMatch,
        }
    }
}

impl fmt::Display for HunkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HunkError::HeaderNotFound(header) => write!(
                f,
                "the @@ line `{header}` matches no line of the file after the hunks before it. After @@, write the text of a line of the file above the change (such as the line that starts its function), or nothing."
            ),
            HunkError::NotFound {
                context,
                end_of_file,
                closest,
            } => {
                write!(
                    f,
                    "context not found in the file. The hunk's context and removed lines must be lines of the file, in order, after the hunks before it{}; copy them from the read output.\nContext:\n{}",
                    if *end_of_file {
                        ", at the end of the file (the hunk ends with *** End of File)"
                    } else {
                        ""
                    },
                    context.strip_suffix('\n').unwrap_or(context)
                )?;
                if let Some(closest) = closest {
                    write!(f, "\n{closest}")?;
                }
                Ok(())
            }
            HunkError::IndentationUnclear => write!(
                f,
                "the hunk's lines match the file only after normalising indentation, and they are indented relative to each other differently from the file's, so the added lines cannot be re-indented without guessing. Copy the context and removed lines from the read output with the file's own indentation, and indent the added lines the same way."
            ),
            HunkError::Ambiguous { places, tier } => {
                let how = match tier.note() {
                    Some(note) => format!(" {note}"),
                    None => String::new(),
                };
                write!(
                    f,
                    "the hunk's lines match {places} places{how}. Add context lines, or an @@ line with the text of the line that starts the enclosing function or block, so that they match one place."
                )
            }
        }
    }
}

/// The hunks of one file applied ([`apply_hunks`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Patched {
    /// The new text.
    pub text: String,
    /// The tier that found each hunk, in order (`Exact` for a hunk that
    /// only adds lines).
    pub tiers: Vec<Tier>,
}

/// Applies `hunks` in order to `text` (decoded, LF line endings). The
/// error is the index of the first hunk that cannot be applied and why;
/// then nothing is returned.
///
/// ```
/// use agentcore::tools::apply_patch::{FileOp, apply_hunks, parse};
///
/// let patch = parse("*** Begin Patch\n*** Update File: a\n@@ fn b\n-    x\n+    y\n*** End Patch").unwrap();
/// let FileOp::Update { hunks, .. } = &patch.ops[0] else { unreachable!() };
/// let text = "fn a\n    x\nfn b\n    x\n";
/// assert_eq!(apply_hunks(text, hunks).unwrap().text, "fn a\n    x\nfn b\n    y\n");
/// ```
pub fn apply_hunks(text: &str, hunks: &[Hunk]) -> Result<Patched, (usize, HunkError)> {
    // Matched as whole lines: a last line without a newline gets one while
    // the hunks are placed, taken off again if no hunk touched the end.
    let added_newline = !text.is_empty() && !text.ends_with('\n');
    let work: std::borrow::Cow<'_, str> = if added_newline {
        format!("{text}\n").into()
    } else {
        text.into()
    };
    let mut cursor = 0;
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    let mut tiers = Vec::with_capacity(hunks.len());
    for (i, hunk) in hunks.iter().enumerate() {
        for header in &hunk.headers {
            cursor = find_header(&work, cursor, header)
                .ok_or_else(|| (i, HunkError::HeaderNotFound(header.clone())))?;
        }
        let old = hunk.old_text();
        if old.is_empty() {
            // Only added lines: after the @@ line, or at the end.
            let at = if hunk.end_of_file || hunk.headers.is_empty() {
                work.len()
            } else {
                cursor
            };
            edits.push((at..at, hunk.new_text()));
            tiers.push(Tier::Exact);
            cursor = at;
            continue;
        }
        let region = &work[cursor..];
        let Some(found) = find_lines(region, &old, hunk.end_of_file) else {
            return Err((
                i,
                HunkError::NotFound {
                    closest: closest(&work, &old),
                    context: old,
                    end_of_file: hunk.end_of_file,
                },
            ));
        };
        if found.places.len() > 1 {
            return Err((
                i,
                HunkError::Ambiguous {
                    places: found.places.len(),
                    tier: found.tier,
                },
            ));
        }
        let place = &found.places[0];
        let range = cursor + place.range.start..cursor + place.range.end;
        let replacement =
            replacement(&work[range.clone()], place, found.tier, hunk).map_err(|e| (i, e))?;
        cursor = range.end;
        edits.push((range, replacement));
        tiers.push(found.tier);
    }
    let mut out = String::with_capacity(work.len());
    let mut from = 0;
    let mut touches_end = false;
    for (range, replacement) in &edits {
        out.push_str(&work[from..range.start]);
        out.push_str(replacement);
        from = range.end;
        touches_end |= range.end == work.len();
    }
    out.push_str(&work[from..]);
    if added_newline && !touches_end {
        out.pop();
    }
    Ok(Patched { text: out, tiers })
}

/// The end of the first line at or after `cursor` that is the `@@` text:
/// equal to it with edge whitespace ignored, or else containing it.
fn find_header(text: &str, cursor: usize, header: &str) -> Option<usize> {
    let header = header.trim();
    let lines = || {
        let mut start = cursor;
        text[cursor..].split_inclusive('\n').map(move |line| {
            start += line.len();
            (line, start)
        })
    };
    lines()
        .find(|(line, _)| line.trim() == header)
        .or_else(|| lines().find(|(line, _)| line.contains(header)))
        .map(|(_, end)| end)
}

/// The places of `needle` (whole lines, ending in `\n`) in `region` (which
/// starts at a line start), by the first tier that finds any place that
/// starts at a line start (and, with `end_of_file`, ends the region).
fn find_lines(region: &str, needle: &str, end_of_file: bool) -> Option<Match> {
    let bytes = region.as_bytes();
    let whole_lines = |p: &Place| {
        let starts_line = p.range.start == 0 || bytes.get(p.range.start - 1) == Some(&b'\n');
        let ends_line = p.range.end == region.len() || bytes.get(p.range.end - 1) == Some(&b'\n');
        starts_line && ends_line && (!end_of_file || p.range.end == region.len())
    };
    Tier::ALL.iter().find_map(|&tier| {
        let places: Vec<Place> = if tier == Tier::Exact {
            exact_lines(region, needle)
        } else {
            locate(region, needle, &[tier])?.places
        };
        let places: Vec<Place> = places.into_iter().filter(|p| whole_lines(p)).collect();
        (!places.is_empty()).then_some(Match { tier, places })
    })
}

/// Every place where `needle` starts at a line start of `region`,
/// overlapping ones too (a substring search that, after each hit, goes on
/// from the next line start).
fn exact_lines(region: &str, needle: &str) -> Vec<Place> {
    let finder = memchr::memmem::Finder::new(needle.as_bytes());
    let bytes = region.as_bytes();
    let mut places = Vec::new();
    let mut from = 0;
    while from <= bytes.len() {
        let Some(i) = finder.find(&bytes[from..]).map(|i| from + i) else {
            break;
        };
        if i == 0 || bytes[i - 1] == b'\n' {
            places.push(Place::exact(i..i + needle.len()));
        }
        from = match memchr::memchr(b'\n', &bytes[i..]) {
            Some(nl) => i + nl + 1,
            None => break,
        };
    }
    places
}

/// What the matched lines become: the file's own line for each context
/// line, nothing for a removed one, the added text (re-indented, or with
/// its escapes read, by the place) for an added one, ending as the file's
/// line before it ends (`\r\n` in a file of mixed endings), or the first
/// one when none is before it.
fn replacement(matched: &str, place: &Place, tier: Tier, hunk: &Hunk) -> Result<String, HunkError> {
    let file_lines: Vec<&str> = matched.split_inclusive('\n').collect();
    // Each hunk line as the place writes it, without its newline: context
    // and added lines re-indented together after `Tier::Indentation`, each
    // line alone otherwise (after `Tier::Escaped` a line may then hold
    // newlines, and stands for as many lines of the file).
    let written: Vec<String> = if tier == Tier::Indentation {
        let given = hunk.new_text();
        let new_text = place
            .replacement(&given)
            .map_err(|_| HunkError::IndentationUnclear)?;
        let mut new_lines = new_text.split_inclusive('\n');
        hunk.lines
            .iter()
            .map(|line| match line {
                Line::Remove(text) => text.clone(),
                _ => {
                    let l = new_lines.next().unwrap_or_default();
                    l.strip_suffix('\n').unwrap_or(l).to_owned()
                }
            })
            .collect()
    } else {
        hunk.lines
            .iter()
            .map(|line| place.replacement(line.text()).map(|t| t.into_owned()))
            .collect::<Result<_, _>>()
            .map_err(|_| HunkError::IndentationUnclear)?
    };
    let spans = |text: &str| 1 + text.matches('\n').count();
    let quoted: usize = hunk
        .lines
        .iter()
        .zip(&written)
        .filter(|(l, _)| !matches!(l, Line::Add(_)))
        .map(|(_, text)| spans(text))
        .sum();
    if file_lines.len() != quoted {
        // Not line for line (cannot happen for whole-line places): the
        // hunk's new text as the place writes it.
        return Ok(hunk
            .lines
            .iter()
            .zip(&written)
            .filter(|(l, _)| !matches!(l, Line::Remove(_)))
            .map(|(_, text)| format!("{text}\n"))
            .collect());
    }
    let ending_of = |line: &str| if line.ends_with("\r\n") { "\r\n" } else { "\n" };
    let mut ending = file_lines.first().map_or("\n", |l| ending_of(l));
    let mut out = String::with_capacity(matched.len());
    let mut file = file_lines.into_iter();
    for (line, text) in hunk.lines.iter().zip(&written) {
        match line {
            Line::Context(_) => {
                for kept in file.by_ref().take(spans(text)) {
                    ending = ending_of(kept);
                    out.push_str(kept);
                }
            }
            Line::Remove(_) => {
                for gone in file.by_ref().take(spans(text)) {
                    ending = ending_of(gone);
                }
            }
            Line::Add(_) => {
                for (k, part) in text.split('\n').enumerate() {
                    if k > 0 {
                        out.push_str(ending);
                    }
                    out.push_str(part);
                }
                out.push_str(ending);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::apply_patch::parse::{FileOp, parse};

    fn hunks(body: &str) -> Vec<Hunk> {
        let patch = parse(&format!(
            "*** Begin Patch\n*** Update File: f\n{body}*** End Patch\n"
        ))
        .unwrap();
        match patch.ops.into_iter().next() {
            Some(FileOp::Update { hunks, .. }) => hunks,
            other => panic!("{other:?}"),
        }
    }

    fn apply(text: &str, body: &str) -> Result<Patched, (usize, HunkError)> {
        apply_hunks(text, &hunks(body))
    }

    #[test]
    fn hunks_apply_in_order_and_keep_context_lines_as_the_file_has_them() {
        let text = "a  \nb\nc\nd\ne\n";
        let out = apply(text, "@@\n a\n-b\n+B\n c\n@@\n d\n+d2\n").unwrap();
        // `a` matched ignoring its trailing spaces, and kept with them.
        assert_eq!(out.text, "a  \nB\nc\nd\nd2\ne\n");
        assert_eq!(out.tiers, [Tier::TrailingWhitespace, Tier::Exact]);
    }

    #[test]
    fn matches_are_whole_lines_and_unique() {
        // `x` is inside `xx`: not a line of its own there.
        let out = apply("xx\nx\n", "-x\n+y\n").unwrap();
        assert_eq!(out.text, "xx\ny\n");
        let err = apply("x\nx\n", "-x\n+y\n").unwrap_err();
        assert_eq!(err.0, 0);
        assert_eq!(err.1.code(), ErrorCode::AmbiguousMatch);
        // A last line without a newline is a line too (found by the fuzzer).
        let err = apply("x\nx", "-x\n+y\n").unwrap_err();
        assert_eq!(err.1.code(), ErrorCode::AmbiguousMatch);
        // An @@ line narrows the search.
        let out = apply("f\nx\ng\nx\n", "@@ g\n-x\n+y\n").unwrap();
        assert_eq!(out.text, "f\nx\ng\ny\n");
    }

    #[test]
    fn overlapping_exact_places_are_both_counted() {
        // `a\na\n` is at lines 1 and 2 of `a\na\na\n`.
        let err = apply("a\na\na\n", "-a\n-a\n+b\n").unwrap_err();
        assert_eq!(
            err.1,
            HunkError::Ambiguous {
                places: 2,
                tier: Tier::Exact
            }
        );
        let out = apply("a\na\nb\n", "-a\n b\n").unwrap();
        assert_eq!(out.text, "a\nb\n");
    }

    #[test]
    fn later_hunks_look_after_the_earlier_ones() {
        let err = apply("a\nb\n", "@@\n-b\n+B\n@@\n-a\n+A\n").unwrap_err();
        assert_eq!(err.0, 1);
        assert!(matches!(err.1, HunkError::NotFound { .. }));
    }

    #[test]
    fn indentation_is_normalised_and_added_lines_reindented() {
        let text = "fn f() {\n\tif ok {\n\t\trun();\n\t}\n}\n";
        let out = apply(
            text,
            "@@\n     if ok {\n         run();\n+        done();\n     }\n",
        )
        .unwrap();
        assert_eq!(
            out.text,
            "fn f() {\n\tif ok {\n\t\trun();\n\t\tdone();\n\t}\n}\n"
        );
        assert_eq!(out.tiers, [Tier::Indentation]);
    }

    #[test]
    fn inner_runs_and_escaped_quotes_are_matched_and_context_kept() {
        // Tiers do not combine: each finds the hunk's lines alone.
        let text = "x  =  1;\nsay(\"hi\");\n";
        let out = apply(
            text,
            "@@\n x  =  1;\n-say(\\\"hi\\\");\n+say(\\\"bye\\\");\n",
        )
        .unwrap();
        // Context kept as the file has it; the added line read as the
        // removed one was.
        assert_eq!(out.text, "x  =  1;\nsay(\"bye\");\n");
        assert_eq!(out.tiers, [Tier::Escaped]);
        let out = apply(text, "@@\n-x = 1;\n+x = 2;\n").unwrap();
        assert_eq!(out.text, "x = 2;\nsay(\"hi\");\n");
        assert_eq!(out.tiers, [Tier::InnerWhitespace]);
        // Lines whose `\n` might be the code's own are not read.
        let err = apply("puts(\"a\\n\");\n", "@@\n-puts(\\\"a\\n\\\");\n+x\n").unwrap_err();
        assert!(matches!(err.1, HunkError::NotFound { .. }), "{:?}", err.1);
    }

    #[test]
    fn end_of_file_and_a_last_line_without_newline() {
        let out = apply("a\nb", "@@\n-b\n+c\n*** End of File\n").unwrap();
        assert_eq!(out.text, "a\nc\n");
        let out = apply("a\nb", "@@\n-a\n+A\n").unwrap();
        assert_eq!(out.text, "A\nb");
        let err = apply("a\nb\n", "@@\n-a\n+A\n*** End of File\n").unwrap_err();
        assert!(
            err.1.to_string().contains("at the end of the file"),
            "{}",
            err.1
        );
        let out = apply("a\n", "@@\n+z\n").unwrap();
        assert_eq!(out.text, "a\nz\n");
    }

    #[test]
    fn a_near_miss_shows_the_closest_lines() {
        let text = "fn main() {\n    let total = compute(1, 2);\n    println!(\"{total}\");\n}\n";
        let err = apply(
            text,
            "@@\n-    let total = compute(1, 3);\n+    let total = 0;\n",
        )
        .unwrap_err();
        let message = err.1.to_string();
        assert!(
            message.starts_with("context not found in the file."),
            "{message}"
        );
        assert!(
            message.contains("The closest text is at lines 2–2:"),
            "{message}"
        );
    }

    #[test]
    fn a_header_that_matches_nothing_is_named() {
        let err = apply("a\n", "@@ fn nowhere\n-a\n+b\n").unwrap_err();
        assert_eq!(err.1, HunkError::HeaderNotFound("fn nowhere".into()));
        assert_eq!(err.1.code(), ErrorCode::TextNotFound);
    }
}
