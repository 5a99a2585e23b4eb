//! The edit algebra: exact string replacement on decoded text
//! ([`apply_edit`]) and on a file's bytes ([`edit_bytes`]: decode,
//! normalize line endings, replace, encode back). Pure functions, which the
//! property tests (`tests/edits/edit_laws.rs`) and the `edit_apply` fuzz target
//! call directly.

use std::borrow::Cow;
use std::ops::Range;

use super::near::closest;
use super::snippet::RESULT_CONTEXT;
use super::tiers::{IndentationUnclear, Place, Tier, first_tier, places};
use crate::error_code::ErrorCode;
use crate::tools::text::{self, Format};

/// Why an edit cannot be applied to a text. `Display` is the message the
/// model reads; [`EditError::code`] is its [`ErrorCode`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EditError {
    /// `old_string` does not occur (code 4); holds `old_string` as given.
    #[error("String to replace not found in file.\nString: {0}")]
    NotFound(String),
    /// `old_string` does not occur, but a region of the file is close to
    /// it (code 4): the message adds where it is and how it differs.
    #[error("String to replace not found in file.\nString: {string}\n{closest}")]
    NotFoundNear {
        /// `old_string` as given.
        string: String,
        /// `The closest text is at lines A–B:` and a diff of at most 20
        /// lines.
        closest: String,
    },
    /// `old_string` occurs this many times and `replace_all` is false
    /// (code 5).
    #[error(
        "Found {0} matches of the string to replace, but replace_all is false. To replace all occurrences, set replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the instance."
    )]
    Ambiguous(usize),
    /// No exact match, and the first tolerant tier that found any place
    /// found this many (code 5): the message says the matches are
    /// tolerant ones, so the fix is to quote the file exactly.
    #[error(
        "Found {0} matches of the string to replace ({note}; there is no exact match), but replace_all is false. To replace all of them, set replace_all to true. To replace only one, copy the text exactly as the file has it from the read output, with enough surrounding lines to identify the place.",
        note = tolerant_note(*.1)
    )]
    AmbiguousTolerant(usize, Tier),
    /// `old_string` equals `new_string` (code 6).
    #[error("No changes to make: old_string and new_string are exactly the same.")]
    NoChange,
    /// Empty `old_string` on a non-empty file (code 7).
    #[error("Cannot create new file - file already exists.")]
    FileExists,
    /// The bytes are not valid text: not UTF-8, UTF-16 or UTF-32 after a
    /// byte-order mark, nor a legacy encoding (code 8).
    #[error("{}", text::NOT_TEXT)]
    NotText,
    /// The file is in a legacy encoding that cannot store a character of
    /// the new text (code 12).
    #[error("{}", unencodable_text(*.character, .encoding))]
    Unencodable {
        /// The character.
        character: char,
        /// The file's encoding, as the tools name it (`windows-1252`).
        encoding: String,
    },
    /// The file is not UTF-8 and its legacy encoding is only a guess
    /// (code 13); holds the message.
    #[error("{0}")]
    EncodingUncertain(String),
    /// A non-empty `old_string` of whitespace only (code 9): it would
    /// match blank space anywhere.
    #[error(
        "old_string must contain non-whitespace text. Quote a line next to the place you want to change, with its text, so that the place is unambiguous."
    )]
    Blank,
    /// `old_string` was found only after normalising indentation, its
    /// lines are indented relative to each other otherwise than the
    /// file's, and a line of `new_string` stands for no line of the file
    /// (code 4): re-indenting it would be a guess.
    #[error(
        "String to replace found only after normalising indentation, and its lines are indented relative to each other differently from the file's, so new_string cannot be re-indented without guessing. Copy old_string from the read output with the file's own indentation, and indent new_string the same way."
    )]
    IndentationUnclear,
}

impl From<IndentationUnclear> for EditError {
    fn from(_: IndentationUnclear) -> Self {
        EditError::IndentationUnclear
    }
}

/// How a tolerant tier matched, for the code 5 message.
fn tolerant_note(tier: Tier) -> &'static str {
    match tier {
        Tier::Exact => "matched exactly",
        Tier::TrailingWhitespace => "matched ignoring trailing whitespace",
        Tier::Indentation => "matched after normalising indentation",
        Tier::InnerWhitespace => {
            "matched with runs of spaces and tabs inside lines compared as one space"
        }
        Tier::LookAlikes => "matched after folding look-alike characters",
        Tier::Escaped => "matched after reading backslash escapes in old_string",
    }
}

impl EditError {
    /// The code of the refusal (4 to 9, 12 or 13).
    pub fn code(&self) -> ErrorCode {
        match self {
            EditError::NotFound(_)
            | EditError::NotFoundNear { .. }
            | EditError::IndentationUnclear => ErrorCode::TextNotFound,
            EditError::Ambiguous(_) | EditError::AmbiguousTolerant(..) => ErrorCode::AmbiguousMatch,
            EditError::NoChange => ErrorCode::NoChange,
            EditError::FileExists => ErrorCode::FileExists,
            EditError::NotText => ErrorCode::NotText,
            EditError::Blank => ErrorCode::BlankOldString,
            EditError::Unencodable { .. } => ErrorCode::Unencodable,
            EditError::EncodingUncertain(_) => ErrorCode::EncodingUncertain,
        }
    }
}

/// The message of [`EditError::Unencodable`].
fn unencodable_text(character: char, encoding: &str) -> String {
    let mut out = String::new();
    // Writing into a String cannot fail.
    let _ = text::unencodable_message(&mut out, character, encoding);
    out
}

impl From<text::NotDecoded> for EditError {
    fn from(why: text::NotDecoded) -> Self {
        match why {
            text::NotDecoded::NotText => EditError::NotText,
            unsure => EditError::EncodingUncertain(unsure.to_string()),
        }
    }
}

impl From<text::Unencodable> for EditError {
    fn from(e: text::Unencodable) -> Self {
        EditError::Unencodable {
            character: e.character,
            encoding: e.encoding(),
        }
    }
}

/// An applied edit: the new text and where the replacements landed in it.
#[derive(Debug)]
pub(super) struct Applied {
    /// The new text.
    pub(super) text: String,
    /// Byte ranges of the inserted `new_string`s in `text`, in order;
    /// past [`MERGE_AFTER`] of them, ones a few lines apart are merged
    /// (with the unchanged text between them), which changes nothing the
    /// result snippet shows (see [`Spans`]).
    pub(super) spans: Vec<Range<usize>>,
    /// The byte ranges of the old text they took the place of, in the
    /// same order (merged as they are).
    pub(super) replaced: Vec<Range<usize>>,
    /// How `old_string` was found.
    pub(super) tier: Tier,
    /// How many places were replaced.
    pub(super) count: usize,
}

/// Spans kept apart before near ones are merged.
const MERGE_AFTER: usize = 256;

/// The spans of an edit as it is built, and the old ranges they replace.
/// Once there are [`MERGE_AFTER`] of them, a span that starts at most
/// `2 * RESULT_CONTEXT` lines after the last one ends is merged into it:
/// the result snippet shows the lines between two such spans as context
/// anyway, so merging them changes no line it shows, and a million places
/// cost a few ranges, not a million.
#[derive(Default)]
pub(super) struct Spans {
    pub(super) spans: Vec<Range<usize>>,
    pub(super) replaced: Vec<Range<usize>>,
}

impl Spans {
    /// Adds `span` of `text` (built so far), which replaced `old`.
    pub(super) fn push(&mut self, text: &str, span: Range<usize>, old: Range<usize>) {
        if self.spans.len() >= MERGE_AFTER
            && let (Some(last), Some(last_old)) = (self.spans.last_mut(), self.replaced.last_mut())
        {
            let from = last.end.saturating_sub(1).max(last.start).min(span.start);
            let gap = memchr::memchr_iter(b'\n', &text.as_bytes()[from..span.start])
                .take(2 * RESULT_CONTEXT + 1)
                .count();
            if gap <= 2 * RESULT_CONTEXT {
                last.end = span.end;
                last_old.end = old.end;
                return;
            }
        }
        self.spans.push(span);
        self.replaced.push(old);
    }
}

/// A tolerant edit of a text ([`apply_edit_tiered`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TieredEdit {
    /// The new text.
    pub text: String,
    /// The tier that found the place(s).
    pub tier: Tier,
    /// How many places were replaced.
    pub replaced: usize,
}

/// [`apply_edit`] with the tolerant tiers of [`locate`](super::locate): the exact match
/// when there is one, else the first tier that finds any place. It applies
/// only if that tier found exactly one place, or with `replace_all` every
/// place it found (overlapping places count, and the later of two that
/// overlap is left); several without `replace_all` is
/// [`EditError::Ambiguous`] (or [`EditError::AmbiguousTolerant`] for a
/// tolerant tier), never a guess. Everything outside the places
/// is kept byte for byte. A non-empty `old` of whitespace only is
/// [`EditError::Blank`]; an `old` found nowhere is
/// [`EditError::NotFoundNear`] when some region is close to it.
///
/// ```
/// use agentcore::tools::edit::{Tier, apply_edit_tiered};
///
/// let edit = apply_edit_tiered("let s = \u{201C}hi\u{201D};\n", "\"hi\"", "\"bye\"", false).unwrap();
/// assert_eq!(edit.text, "let s = \"bye\";\n");
/// assert_eq!(edit.tier, Tier::LookAlikes);
/// ```
pub fn apply_edit_tiered(
    text: &str,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<TieredEdit, EditError> {
    let applied = apply_tiered(text, old, new, replace_all, old)?;
    Ok(TieredEdit {
        replaced: applied.count,
        text: applied.text,
        tier: applied.tier,
    })
}

/// [`edit_bytes`] with the tiers of [`apply_edit_tiered`]: what the `edit`
/// tool writes.
pub fn edit_bytes_tiered(
    bytes: &[u8],
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<(Vec<u8>, Tier), EditError> {
    let edited = edit_decoded(bytes, old, new, replace_all, true)?;
    Ok((
        text::encode(&edited.applied.text, edited.format)?.into_owned(),
        edited.applied.tier,
    ))
}

/// Replaces `old` by `new` in `text`: the one occurrence, or all of them
/// with `replace_all`. An empty `old` fills an empty text with `new`.
///
/// The result equals `text.replacen(old, new, 1)` for a unique match and
/// `text.replace(old, new)` with `replace_all` (matches do not overlap).
pub fn apply_edit(
    text: &str,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<String, EditError> {
    apply(text, old, new, replace_all, old).map(|a| a.text)
}

/// [`apply_edit`] on a file's bytes: decoded (UTF-8, UTF-8 with BOM,
/// UTF-16 with BOM), with CRLF line endings matched as LF (in `old` and
/// `new` too), and encoded back in the file's own form, so untouched bytes
/// stay as they were.
pub fn edit_bytes(
    bytes: &[u8],
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<Vec<u8>, EditError> {
    let edited = edit_decoded(bytes, old, new, replace_all, false)?;
    Ok(text::encode(&edited.applied.text, edited.format)?.into_owned())
}

/// An edit of a file's bytes, before encoding.
pub(super) struct Edited<'a> {
    /// The old text, decoded and normalized (borrowed from the bytes when
    /// they are plain UTF-8).
    pub(super) old_text: Cow<'a, str>,
    /// The edit applied to it.
    pub(super) applied: Applied,
    /// The file's encoding and line endings.
    pub(super) format: Format,
}

/// An edit located in a file's decoded text but not applied: where each
/// replacement goes and what it puts there ([`Located::places`], found
/// again as they are asked for, never all held), so the new text can be
/// spliced into the old bytes or diffed around the places without being
/// built whole.
pub(super) struct Located<'a> {
    /// The old text, decoded and normalized (borrowed from the bytes when
    /// they are plain UTF-8 with LF line endings).
    pub(super) old_text: Cow<'a, str>,
    /// How `old_string` was found.
    pub(super) tier: Tier,
    /// `old_string` and `new_string`, normalized to the file.
    old: String,
    new: String,
}

impl Located<'_> {
    /// Each replaced byte range of `old_text` and its replacement, in
    /// order, not overlapping.
    pub(super) fn places(&self) -> impl Iterator<Item = (Range<usize>, Cow<'_, str>)> + '_ {
        // Every replacement was made once by `find_tiered`, which refuses
        // the edit when one cannot be: none fails here.
        replacements(&self.old_text, &self.old, &self.new, self.tier).map_while(Result::ok)
    }
}

/// Where the replacements land in the new text, given each replaced
/// range and the length of its replacement, in order.
pub(super) fn spans_of<S: AsRef<str>>(places: &[(Range<usize>, S)]) -> Vec<Range<usize>> {
    let mut shift = 0isize;
    places
        .iter()
        .map(|(range, new)| {
            let new = new.as_ref();
            let start = range.start.saturating_add_signed(shift);
            shift += new.len() as isize - range.len() as isize;
            start..start + new.len()
        })
        .collect()
}

/// The places of `tier` that an edit replaces (the later of two that
/// overlap is left) and what each becomes.
fn replacements<'t>(
    text: &'t str,
    old: &'t str,
    new: &'t str,
    tier: Tier,
) -> impl Iterator<Item = Result<(Range<usize>, Cow<'t, str>), EditError>> + 't {
    let mut from = 0;
    places(text, old, tier).filter_map(move |place: Place| {
        if place.range.start < from {
            // Overlaps the place before: that one was replaced.
            return None;
        }
        from = place.range.end;
        Some(
            place
                .replacement(new)
                .map(|r| (place.range, r))
                .map_err(EditError::from),
        )
    })
}

/// [`edit_decoded`] for a non-empty `old`, with the tiers, stopping short
/// of building the new text: the same checks and refusals, the same
/// places and replacements.
pub(super) fn locate_decoded<'a>(
    bytes: &'a [u8],
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<Located<'a>, EditError> {
    if old == new {
        return Err(EditError::NoChange);
    }
    let decoded = text::try_decode(bytes)?;
    let format = decoded.format;
    let (old_n, new_n) = (format.normalize(old), format.normalize(new));
    let tier = find_tiered(&decoded.text, &old_n, &new_n, replace_all, old)?;
    Ok(Located {
        old_text: decoded.text,
        tier,
        old: old_n.into_owned(),
        new: new_n.into_owned(),
    })
}

pub(super) fn edit_decoded<'a>(
    bytes: &'a [u8],
    old: &str,
    new: &str,
    replace_all: bool,
    tiered: bool,
) -> Result<Edited<'a>, EditError> {
    if old == new {
        return Err(EditError::NoChange);
    }
    let decoded = text::try_decode(bytes)?;
    let format = decoded.format;
    let (old_n, new_n) = (format.normalize(old), format.normalize(new));
    let applied = if tiered {
        apply_tiered(&decoded.text, &old_n, &new_n, replace_all, old)?
    } else {
        apply(&decoded.text, &old_n, &new_n, replace_all, old)?
    };
    Ok(Edited {
        old_text: decoded.text,
        applied,
        format,
    })
}

pub(super) fn apply(
    text: &str,
    old: &str,
    new: &str,
    replace_all: bool,
    old_as_given: &str,
) -> Result<Applied, EditError> {
    if old == new {
        return Err(EditError::NoChange);
    }
    if old.is_empty() {
        return if text.is_empty() {
            Ok(Applied {
                text: new.to_owned(),
                spans: std::iter::once(0..new.len()).collect(),
                replaced: std::iter::once(0..0).collect(),
                tier: Tier::Exact,
                count: 1,
            })
        } else {
            Err(EditError::FileExists)
        };
    }
    // Overlapping occurrences count: `end\nend` is twice in
    // `end\nend\nend`.
    let count = places(text, old, Tier::Exact).count();
    match count {
        0 => return Err(EditError::NotFound(old_as_given.to_owned())),
        1 => {}
        n if !replace_all => return Err(EditError::Ambiguous(n)),
        _ => {}
    }
    splice(text, old, new, Tier::Exact)
}

/// Builds the text with every place of `tier` replaced (the later of two
/// that overlap left), as the places are found: once to size the new text
/// exactly, once to write it; nothing per place is kept but the merged
/// [`Spans`].
fn splice(text: &str, old: &str, new: &str, tier: Tier) -> Result<Applied, EditError> {
    let mut len = text.len();
    for place in replacements(text, old, new, tier) {
        let (range, replacement) = place?;
        len = len - range.len() + replacement.len();
    }
    let mut out = String::with_capacity(len);
    let mut spans = Spans::default();
    let mut count = 0;
    let mut from = 0;
    for place in replacements(text, old, new, tier) {
        let (range, replacement) = place?;
        out.push_str(&text[from..range.start]);
        let start = out.len();
        out.push_str(&replacement);
        spans.push(&out, start..out.len(), range.clone());
        from = range.end;
        count += 1;
    }
    out.push_str(&text[from..]);
    Ok(Applied {
        text: out,
        spans: spans.spans,
        replaced: spans.replaced,
        tier,
        count,
    })
}

/// How a non-empty `old` lands by the tiers (the tier that finds it), or
/// why it cannot (codes 4, 5, 6 and 9), without building the new text or
/// holding its places: they are counted (overlapping ones too) and, after
/// [`Tier::Indentation`], re-indented once to be sure each can be.
pub(super) fn find_tiered(
    text: &str,
    old: &str,
    new: &str,
    replace_all: bool,
    old_as_given: &str,
) -> Result<Tier, EditError> {
    if old == new {
        return Err(EditError::NoChange);
    }
    if old.trim().is_empty() {
        return Err(EditError::Blank);
    }
    let Some(tier) = first_tier(text, old, &Tier::ALL) else {
        return Err(match closest(text, old) {
            Some(closest) => EditError::NotFoundNear {
                string: old_as_given.to_owned(),
                closest,
            },
            None => EditError::NotFound(old_as_given.to_owned()),
        });
    };
    if !replace_all {
        let n = places(text, old, tier).count();
        if n > 1 {
            return Err(match tier {
                Tier::Exact => EditError::Ambiguous(n),
                tier => EditError::AmbiguousTolerant(n, tier),
            });
        }
    }
    if tier == Tier::Indentation {
        for place in replacements(text, old, new, tier) {
            place?;
        }
    }
    Ok(tier)
}

/// [`apply`] with the tiers: see [`apply_edit_tiered`].
pub(super) fn apply_tiered(
    text: &str,
    old: &str,
    new: &str,
    replace_all: bool,
    old_as_given: &str,
) -> Result<Applied, EditError> {
    if old.is_empty() {
        return apply(text, old, new, replace_all, old_as_given);
    }
    let tier = find_tiered(text, old, new, replace_all, old_as_given)?;
    splice(text, old, new, tier)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_and_all_replacements() {
        assert_eq!(apply_edit("abcabc", "bc", "X", true).unwrap(), "aXaX");
        assert_eq!(apply_edit("abc", "b", "", false).unwrap(), "ac");
        assert_eq!(apply_edit("aaa", "aa", "b", true).unwrap(), "ba");
        assert_eq!(
            apply_edit("abc", "z", "y", false),
            Err(EditError::NotFound("z".into()))
        );
        assert_eq!(apply_edit("x", "x", "x", false), Err(EditError::NoChange));
        assert_eq!(apply_edit("", "", "new", false).unwrap(), "new");
        assert_eq!(
            apply_edit("x", "", "new", false),
            Err(EditError::FileExists)
        );
    }

    #[test]
    fn merged_spans_show_the_same_snippet_as_every_span() {
        use super::super::snippet::snippet;
        // Places on every line, every few lines and in clusters, past the
        // number after which near spans are merged.
        let texts = [
            "id(x, x);\n".repeat(2_000),
            "x\n\n\n\n\n\n\n\n".repeat(600),
            "x\n\n\n\n\n\n\n\n\n\n\n".repeat(600),
            (0..3_000)
                .map(|i| if i % 13 < 3 { "a x b\n" } else { "none\n" })
                .collect(),
        ];
        for (t, text) in texts.iter().enumerate() {
            for new in ["", "value", "v\nw\n"] {
                let applied = apply(text, "x", new, true, "x").unwrap();
                if t == 0 {
                    assert!(applied.spans.len() < 300, "merged: {}", applied.spans.len());
                }
                let mut every = Vec::new();
                let mut shift = 0isize;
                for (i, _) in text.match_indices('x') {
                    let start = i.saturating_add_signed(shift);
                    every.push(start..start + new.len());
                    shift += new.len() as isize - 1;
                }
                assert_eq!(applied.count, every.len());
                assert_eq!(
                    snippet(&applied.text, &applied.spans),
                    snippet(&applied.text, &every),
                    "{new:?}"
                );
            }
        }
    }

    #[test]
    fn crlf_bytes_are_edited_as_lf_and_written_back() {
        let out = edit_bytes(b"a\r\nb\r\nc\r\n", "a\nb", "A\nB\nb2", false).unwrap();
        assert_eq!(out, b"A\r\nB\r\nb2\r\nc\r\n");
        let out = edit_bytes(b"a\r\nb\r\n", "a\r\nb", "x", false).unwrap();
        assert_eq!(out, b"x\r\n");
        assert_eq!(
            edit_bytes(b"\xFF\x01\xFF", "a", "b", false),
            Err(EditError::NotText)
        );
    }
}
