//! A sequence of edits to one text, as `multi_edit` applies it: each edit
//! found with the tiers of [`locate`](super::locate) in the result of the
//! ones before it, and all or nothing: the first edit that cannot be
//! applied stops the sequence, and the caller writes nothing.

use std::borrow::Cow;
use std::ops::Range;

use super::apply::{Applied, EditError, apply_tiered};
use super::tiers::Tier;
use crate::error_code::ErrorCode;
use crate::tools::text::{self, Format};

/// One edit of a sequence: `old` replaced by `new`, once, or everywhere
/// with `replace_all`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step<'a> {
    /// The text to replace (`old_string`).
    pub old: &'a str,
    /// What replaces it (`new_string`).
    pub new: &'a str,
    /// Replace every place (`replace_all`).
    pub replace_all: bool,
}

/// Why a sequence of edits cannot be applied. `Display` is the message
/// the model reads; [`EditsError::code`] is its [`ErrorCode`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EditsError {
    /// The file is not text (code 8): no edit was tried.
    #[error(transparent)]
    File(EditError),
    /// Edit `number` (1-based) of `total` cannot be applied to the text
    /// the edits before it left; its own code. When the message shows the
    /// closest lines of a text the edits before it changed, it says so.
    #[error("Edit {number} of {total}: {error}{}", after_earlier(*number, error))]
    Step {
        /// Which edit, counting from 1.
        number: usize,
        /// How many edits the call has.
        total: usize,
        /// Why it cannot be applied.
        error: EditError,
    },
}

/// The note on the line numbers of the near-miss help of edit `number`
/// (empty for the first edit, or without near-miss help).
fn after_earlier(number: usize, error: &EditError) -> String {
    match (number, error) {
        (2.., EditError::NotFoundNear { .. }) => format!(
            "\n(Line numbers are of the text as {} leave{} it.)",
            if number == 2 {
                "edit 1".to_owned()
            } else {
                format!("edits 1–{}", number - 1)
            },
            if number == 2 { "s" } else { "" }
        ),
        _ => String::new(),
    }
}

impl EditsError {
    /// The code of the refusal: the file's, or the failing edit's.
    pub fn code(&self) -> ErrorCode {
        match self {
            EditsError::File(e) | EditsError::Step { error: e, .. } => e.code(),
        }
    }
}

/// A sequence of edits applied to a text ([`apply_edits_tiered`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EditsApplied {
    /// The text after the last edit.
    pub text: String,
    /// The tier that found each edit's place(s), in the order of the edits.
    pub tiers: Vec<Tier>,
}

/// Applies `steps` in order to `text`, each as
/// [`apply_edit_tiered`](super::apply_edit_tiered) applies one edit, to the
/// result of the ones before it. The first edit that cannot be applied is
/// the error (`Edit K of N: …` with that edit's code); then no text is
/// returned at all.
///
/// ```
/// use agentcore::error_code::ErrorCode;
/// use agentcore::tools::edit::{Step, apply_edits_tiered};
///
/// let steps = [
///     Step { old: "a", new: "b", replace_all: false },
///     Step { old: "b", new: "c", replace_all: true },
/// ];
/// assert_eq!(apply_edits_tiered("a b", &steps).unwrap().text, "c c");
/// let err = apply_edits_tiered("a", &steps[..1].repeat(2)).unwrap_err();
/// assert_eq!(err.code(), ErrorCode::TextNotFound);
/// assert!(err.to_string().starts_with("Edit 2 of 2: String to replace not found"));
/// ```
pub fn apply_edits_tiered(text: &str, steps: &[Step<'_>]) -> Result<EditsApplied, EditsError> {
    let applied = apply_sequence(text, steps, None)?;
    Ok(EditsApplied {
        text: applied.text,
        tiers: applied.tiers,
    })
}

/// [`apply_edits_tiered`] on a file's bytes, as [`edit_bytes_tiered`]
/// does for one edit: decoded, each edit's strings normalized to the
/// file's line endings, encoded back in the file's own form.
///
/// [`edit_bytes_tiered`]: super::edit_bytes_tiered
pub fn edit_bytes_sequence(bytes: &[u8], steps: &[Step<'_>]) -> Result<Vec<u8>, EditsError> {
    let edited = edit_sequence_decoded(bytes, steps)?;
    let bytes = text::encode(&edited.applied.text, edited.format)
        .map_err(|e| EditsError::File(e.into()))?;
    Ok(bytes.into_owned())
}

/// A sequence applied: the new text, where every edit's text now lies in
/// it, and the tier of each edit.
#[derive(Debug)]
pub(crate) struct SequenceApplied {
    /// The text after the last edit.
    pub(crate) text: String,
    /// The byte ranges of `text` the edits wrote, in order, merged where
    /// they touch.
    pub(crate) spans: Vec<Range<usize>>,
    /// Each edit's tier.
    pub(crate) tiers: Vec<Tier>,
}

/// A sequence applied to a file's bytes, before encoding.
pub(crate) struct SequenceDecoded<'a> {
    /// The old text, decoded and normalized.
    pub(crate) old_text: Cow<'a, str>,
    /// The edits applied to it.
    pub(crate) applied: SequenceApplied,
    /// The file's encoding and line endings.
    pub(crate) format: Format,
}

/// Decodes `bytes` and applies `steps` with their strings normalized to
/// the file's line endings.
pub(crate) fn edit_sequence_decoded<'a>(
    bytes: &'a [u8],
    steps: &[Step<'_>],
) -> Result<SequenceDecoded<'a>, EditsError> {
    let decoded = text::try_decode(bytes).map_err(|e| EditsError::File(e.into()))?;
    let format = decoded.format;
    // Code 12 before any edit is tried: the file's encoding must store
    // every new string (the rest of the text comes from the file).
    let total = steps.len();
    for (i, step) in steps.iter().enumerate() {
        format
            .encoding
            .check_storable(step.new)
            .map_err(|e| EditsError::Step {
                number: i + 1,
                total,
                error: e.into(),
            })?;
    }
    let applied = apply_sequence(&decoded.text, steps, Some(format))?;
    Ok(SequenceDecoded {
        old_text: decoded.text,
        applied,
        format,
    })
}

/// Applies `steps` in order; with a `format`, each step's strings are
/// normalized to it first (the messages keep them as given).
pub(crate) fn apply_sequence(
    text: &str,
    steps: &[Step<'_>],
    format: Option<Format>,
) -> Result<SequenceApplied, EditsError> {
    let total = steps.len();
    let mut current = Cow::Borrowed(text);
    let mut spans: Vec<Range<usize>> = Vec::new();
    let mut tiers = Vec::with_capacity(total);
    for (i, step) in steps.iter().enumerate() {
        let fail = |error| EditsError::Step {
            number: i + 1,
            total,
            error,
        };
        let (old, new) = match format {
            Some(f) => (f.normalize(step.old), f.normalize(step.new)),
            None => (Cow::Borrowed(step.old), Cow::Borrowed(step.new)),
        };
        let applied =
            apply_tiered(&current, &old, &new, step.replace_all, step.old).map_err(fail)?;
        spans = moved(&spans, &applied);
        tiers.push(applied.tier);
        current = Cow::Owned(applied.text);
    }
    Ok(SequenceApplied {
        text: current.into_owned(),
        spans,
        tiers,
    })
}

/// The spans written so far, moved into the text `applied` made, with the
/// spans it wrote added; sorted, and merged where they overlap or touch.
fn moved(spans: &[Range<usize>], applied: &Applied) -> Vec<Range<usize>> {
    let pairs: Vec<(&Range<usize>, &Range<usize>)> =
        applied.replaced.iter().zip(&applied.spans).collect();
    let mut out: Vec<Range<usize>> = spans
        .iter()
        .map(|s| position(s.start, &pairs, true)..position(s.end, &pairs, false))
        .chain(applied.spans.iter().cloned())
        .collect();
    out.sort_by_key(|r| (r.start, r.end));
    let mut merged: Vec<Range<usize>> = Vec::with_capacity(out.len());
    for r in out {
        match merged.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => merged.push(r),
        }
    }
    merged
}

/// Where offset `p` of the old text lies in the new one: moved by the
/// replacements before it; inside a replaced range, at the start (`start`)
/// or end of the text that replaced it.
fn position(p: usize, pairs: &[(&Range<usize>, &Range<usize>)], start: bool) -> usize {
    let before = pairs.partition_point(|(old, _)| old.start <= p);
    let Some((old, new)) = before.checked_sub(1).and_then(|i| pairs.get(i)) else {
        return p;
    };
    if p < old.end {
        if start { new.start } else { new.end }
    } else {
        p - old.end + new.end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step<'a>(old: &'a str, new: &'a str) -> Step<'a> {
        Step {
            old,
            new,
            replace_all: false,
        }
    }

    #[test]
    fn each_edit_sees_the_result_of_the_ones_before() {
        let steps = [step("one", "two"), step("two", "three")];
        let out = apply_sequence("one\n", &steps, None).unwrap();
        assert_eq!(out.text, "three\n");
        assert_eq!(out.spans, vec![Range { start: 0, end: 5 }]);
    }

    #[test]
    fn spans_follow_later_edits() {
        let text = "a\nb\nc\nd\n";
        let steps = [step("d\n", "D\nD2\n"), step("a\n", "")];
        let out = apply_sequence(text, &steps, None).unwrap();
        assert_eq!(out.text, "b\nc\nD\nD2\n");
        assert_eq!(&out.text[out.spans[1].clone()], "D\nD2\n");
        assert_eq!(out.spans[0], 0..0);
    }

    #[test]
    fn the_failing_edit_is_named_with_its_code() {
        let steps = [step("x", "y"), step("x", "z")];
        let err = apply_sequence("x", &steps, None).unwrap_err();
        assert_eq!(err.code(), ErrorCode::TextNotFound);
        assert!(err.to_string().starts_with("Edit 2 of 2: "), "{err}");
        let err = apply_sequence("x", &[step("x", "y"), step("  ", "q")], None).unwrap_err();
        assert_eq!(
            (err.code(), err.to_string().starts_with("Edit 2 of 2: ")),
            (ErrorCode::BlankOldString, true)
        );
        let err = apply_sequence("x", &[step("x", "x")], None).unwrap_err();
        assert_eq!(err.code(), ErrorCode::NoChange);
    }

    #[test]
    fn near_miss_help_after_earlier_edits_says_whose_lines_it_numbers() {
        let text = "fn main() {\n    let total = compute(1, 2);\n}\n";
        let near = |steps: &[Step<'_>]| apply_sequence(text, steps, None).unwrap_err().to_string();
        let miss = step("    let total = compute(1, 3);\n", "x\n");
        let first = near(&[miss]);
        assert!(first.contains("The closest text is at lines"), "{first}");
        assert!(!first.contains("Line numbers are of"), "{first}");
        let third = near(&[step("fn main", "fn start"), step("{\n", "{ \n"), miss]);
        assert!(
            third.ends_with("\n(Line numbers are of the text as edits 1–2 leave it.)"),
            "{third}"
        );
    }

    #[test]
    fn an_empty_old_string_fills_only_an_empty_text() {
        let out = apply_sequence("", &[step("", "a\n"), step("a", "b")], None).unwrap();
        assert_eq!(out.text, "b\n");
        let err = apply_sequence("", &[step("", "a"), step("", "b")], None).unwrap_err();
        assert_eq!(err.code(), ErrorCode::FileExists);
    }

    #[test]
    fn crlf_files_take_lf_edits() {
        let out = edit_bytes_sequence(b"a\r\nb\r\n", &[step("a\nb", "x\ny"), step("y", "z")]);
        assert_eq!(out.unwrap(), b"x\r\nz\r\n");
        assert_eq!(
            edit_bytes_sequence(b"\xFF\x01\xFF", &[step("a", "b")]).unwrap_err(),
            EditsError::File(EditError::NotText)
        );
    }
}
