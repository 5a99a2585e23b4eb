//! The edit algebra: exact string replacement on decoded text
//! ([`apply_edit`]) and on a file's bytes ([`edit_bytes`]: decode,
//! normalize line endings, replace, encode back). Pure functions, which the
//! property tests (`tests/edit_laws.rs`) and the `edit_apply` fuzz target
//! call directly.

use std::borrow::Cow;
use std::ops::Range;

use crate::tools::text::{self, Format};

/// Why an edit cannot be applied to a text. `Display` is the message the
/// model reads; [`EditError::code`] is tools.md's code.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EditError {
    /// `old_string` does not occur (code 4); holds `old_string` as given.
    #[error("String to replace not found in file.\nString: {0}")]
    NotFound(String),
    /// `old_string` occurs this many times and `replace_all` is false
    /// (code 5).
    #[error(
        "Found {0} matches of the string to replace, but replace_all is false. To replace all occurrences, set replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the instance."
    )]
    Ambiguous(usize),
    /// `old_string` equals `new_string` (code 6).
    #[error("No changes to make: old_string and new_string are exactly the same.")]
    NoChange,
    /// Empty `old_string` on a non-empty file (code 7).
    #[error("Cannot create new file - file already exists.")]
    FileExists,
    /// The bytes are not valid UTF-8 or UTF-16 text (code 8).
    #[error(
        "File is not valid UTF-8 or UTF-16 text; refusing to edit it so that nothing is corrupted."
    )]
    NotText,
}

impl EditError {
    /// The numeric code of tools.md's table.
    pub fn code(&self) -> i64 {
        match self {
            EditError::NotFound(_) => 4,
            EditError::Ambiguous(_) => 5,
            EditError::NoChange => 6,
            EditError::FileExists => 7,
            EditError::NotText => 8,
        }
    }
}

/// An applied edit: the new text and where the replacements landed in it.
#[derive(Debug)]
pub(super) struct Applied {
    /// The new text.
    pub(super) text: String,
    /// Byte ranges of the inserted `new_string`s in `text`, in order.
    pub(super) spans: Vec<Range<usize>>,
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
    let edited = edit_decoded(bytes, old, new, replace_all)?;
    Ok(text::encode(&edited.applied.text, edited.format).into_owned())
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

pub(super) fn edit_decoded<'a>(
    bytes: &'a [u8],
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<Edited<'a>, EditError> {
    if old == new {
        return Err(EditError::NoChange);
    }
    let decoded = text::decode(bytes).ok_or(EditError::NotText)?;
    let format = decoded.format;
    let (old_n, new_n) = (format.normalize(old), format.normalize(new));
    let applied = apply(&decoded.text, &old_n, &new_n, replace_all, old)?;
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
            })
        } else {
            Err(EditError::FileExists)
        };
    }
    let starts: Vec<usize> = text.match_indices(old).map(|(i, _)| i).collect();
    match starts.len() {
        0 => return Err(EditError::NotFound(old_as_given.to_owned())),
        1 => {}
        n if !replace_all => return Err(EditError::Ambiguous(n)),
        _ => {}
    }
    let len = text.len() - starts.len() * old.len() + starts.len() * new.len();
    let mut out = String::with_capacity(len);
    let mut spans = Vec::with_capacity(starts.len());
    let mut from = 0;
    for start in starts {
        out.push_str(&text[from..start]);
        spans.push(out.len()..out.len() + new.len());
        out.push_str(new);
        from = start + old.len();
    }
    out.push_str(&text[from..]);
    Ok(Applied { text: out, spans })
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
    fn crlf_bytes_are_edited_as_lf_and_written_back() {
        let out = edit_bytes(b"a\r\nb\r\nc\r\n", "a\nb", "A\nB\nb2", false).unwrap();
        assert_eq!(out, b"A\r\nB\r\nb2\r\nc\r\n");
        let out = edit_bytes(b"a\r\nb\r\n", "a\r\nb", "x", false).unwrap();
        assert_eq!(out, b"x\r\n");
        assert_eq!(
            edit_bytes(b"\xFF\xFF", "a", "b", false),
            Err(EditError::NotText)
        );
    }
}
