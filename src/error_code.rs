//! The numeric codes of the built-in tools' refusals: what a tool's own
//! `validate` reports as a call's `error_code` (in [`crate::ToolResult`],
//! the `tool_exec_end` event of `agentcore run`, and the MCP server's
//! results), beside the message the model reads.
//!
//! This module imports nothing from the rest of the crate, so that every
//! layer (the read-before-write ledger as much as the tools) can name the
//! codes. The table is also in the repository's `docs/tools.md`.

/// Why a built-in tool refused a call before the gate: the number a call's
/// `error_code` carries. The message beside it says what to do; the code
/// lets a harness or a test tell the refusals apart without reading text.
///
/// | code | variant | what went wrong | returned by |
/// |---|---|---|---|
/// | 1 | [`BadPath`](Self::BadPath) | the path cannot be used: outside the workspace, empty, with a NUL byte, too long, not found where a file must exist, a directory or special file, a hard link with names outside, unreadable, covered by a read-deny rule, named twice in one patch (also when the check itself could not run) | write, edit, multi_edit, apply_patch, edit_lines |
/// | 2 | [`NotRead`](Self::NotRead) | the file was not read first (for `write`: not read in full) | write, edit, multi_edit, apply_patch, edit_lines |
/// | 3 | [`ModifiedSinceRead`](Self::ModifiedSinceRead) | the file changed since it was read | write, edit, multi_edit, apply_patch, edit_lines |
/// | 4 | [`TextNotFound`](Self::TextNotFound) | the text to replace (an `old_string`, a hunk's context or `@@` line) is not in the file, or is found only with indentation that cannot be carried over | edit, multi_edit, apply_patch |
/// | 5 | [`AmbiguousMatch`](Self::AmbiguousMatch) | the text to replace is found at several places and the call asks for one | edit, multi_edit, apply_patch |
/// | 6 | [`NoChange`](Self::NoChange) | `old_string` and `new_string` are the same | edit, multi_edit, edit_lines |
/// | 7 | [`FileExists`](Self::FileExists) | a file to create exists already (an empty `old_string` on a non-empty file, `*** Add File` or `*** Move to` onto an existing file) | edit, multi_edit, apply_patch |
/// | 8 | [`NotText`](Self::NotText) | the file is not valid text: not UTF-8, nor UTF-16 or UTF-32 after a byte-order mark, nor a legacy encoding (it has bytes or control characters no text encoding explains) | edit, multi_edit, apply_patch, edit_lines |
/// | 9 | [`BlankOldString`](Self::BlankOldString) | a non-empty `old_string` of whitespace only | edit, multi_edit |
/// | 10 | [`InvalidPatch`](Self::InvalidPatch) | the patch cannot be parsed | apply_patch |
/// | 11 | [`NoSuchCheckpoint`](Self::NoSuchCheckpoint) | the rewind does not name exactly one of `to`, `call` or `turn`, or no kept checkpoint matches it | rewind |
/// | 12 | [`Unencodable`](Self::Unencodable) | the file is in a legacy encoding (windows-1252, Shift_JIS, GBK, EUC-KR...) that cannot store a character of the new text | edit, multi_edit, apply_patch, write, edit_lines |
/// | 13 | [`EncodingUncertain`](Self::EncodingUncertain) | the file is not UTF-8 and its legacy encoding is only a guess (too few non-ASCII bytes to tell it from another, or bytes that would not be written back the same) | edit, multi_edit, apply_patch, edit_lines, write (of non-ASCII content) |
/// | 14 | [`StaleAnchor`](Self::StaleAnchor) | a line anchor (`LINE:HASH`) does not stand for a line of the file as it is now: past its end, the line's hash changed, or the hash repeats within 16 lines of a line not read since the file changed; the message shows the current lines with their anchors | edit_lines |
///
/// Failures that are not a tool's own refusal (schema issues, denials,
/// errors while running) have no code. A typed tool whose arguments pass
/// the schema but do not deserialize reports the pipeline's own
/// [`DESERIALIZE_FAILURE_CODE`](agentcore_stages::DESERIALIZE_FAILURE_CODE)
/// (-32602), which is not one of these.
///
/// ```
/// use agentcore::error_code::ErrorCode;
///
/// assert_eq!(i64::from(ErrorCode::ModifiedSinceRead), 3);
/// assert_eq!(ErrorCode::from_i64(10), Some(ErrorCode::InvalidPatch));
/// assert_eq!(ErrorCode::from_i64(0), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[repr(i64)]
pub enum ErrorCode {
    /// 1: the path cannot be used (outside the workspace, missing where a
    /// file must exist, a directory or special file, unreadable, covered by
    /// a read-deny rule, named twice in one patch), or the check itself
    /// could not run.
    BadPath = 1,
    /// 2: the file has not been read yet, or (for `write`, which replaces
    /// all of it) only in part.
    NotRead = 2,
    /// 3: the file changed since it was read (also when found right before
    /// the write, after the gate).
    ModifiedSinceRead = 3,
    /// 4: the text to replace is not in the file: an `old_string`, a
    /// hunk's context and removed lines, or its `@@` line; or it is found
    /// only after normalising indentation that cannot be carried over to
    /// the new text.
    TextNotFound = 4,
    /// 5: the text to replace is found at several places, and the call
    /// asks for one (`replace_all` false, or a patch hunk).
    AmbiguousMatch = 5,
    /// 6: `old_string` and `new_string` are the same; nothing would change.
    NoChange = 6,
    /// 7: the file to create exists already.
    FileExists = 7,
    /// 8: the file is not valid text (UTF-8, UTF-16 or UTF-32 after a
    /// byte-order mark, or a legacy encoding); changing it could corrupt it.
    NotText = 8,
    /// 9: a non-empty `old_string` of whitespace only, which would match
    /// blank space anywhere.
    BlankOldString = 9,
    /// 10: the patch cannot be parsed.
    InvalidPatch = 10,
    /// 11: the rewind does not say where to (exactly one of `to`, `call`
    /// or `turn`), or no kept checkpoint matches it (none that late, or
    /// dropped to keep the store under its size).
    NoSuchCheckpoint = 11,
    /// 12: the file is in a legacy encoding that cannot store a
    /// character of the new text; nothing is written (never a `?`, a
    /// U+FFFD or an HTML entity in its place).
    Unencodable = 12,
    /// 13: the file is not UTF-8 and its legacy encoding is a guess, not
    /// known surely; changing it could write in the wrong encoding.
    EncodingUncertain = 13,
    /// 14: a line anchor of `edit_lines` (`LINE:HASH`, as `read` shows
    /// it) does not stand for a line of the file as it is now: the line is
    /// past the end, its hash changed, or its hash repeats within 16 lines
    /// and the model has not read the line since the file changed. The
    /// message shows the current lines around it with their anchors.
    StaleAnchor = 14,
}

impl ErrorCode {
    /// Every code, in order of its number.
    pub const ALL: [ErrorCode; 14] = [
        ErrorCode::BadPath,
        ErrorCode::NotRead,
        ErrorCode::ModifiedSinceRead,
        ErrorCode::TextNotFound,
        ErrorCode::AmbiguousMatch,
        ErrorCode::NoChange,
        ErrorCode::FileExists,
        ErrorCode::NotText,
        ErrorCode::BlankOldString,
        ErrorCode::InvalidPatch,
        ErrorCode::NoSuchCheckpoint,
        ErrorCode::Unencodable,
        ErrorCode::EncodingUncertain,
        ErrorCode::StaleAnchor,
    ];

    /// The number a call's `error_code` carries.
    pub const fn as_i64(self) -> i64 {
        self as i64
    }

    /// The code with this number, if it is one of the built-in tools'.
    pub fn from_i64(code: i64) -> Option<ErrorCode> {
        Self::ALL.into_iter().find(|c| c.as_i64() == code)
    }
}

impl From<ErrorCode> for i64 {
    fn from(code: ErrorCode) -> Self {
        code.as_i64()
    }
}

#[cfg(test)]
mod tests {
    use super::ErrorCode;

    #[test]
    fn the_numbers_are_one_to_fourteen_in_order() {
        let numbers: Vec<i64> = ErrorCode::ALL.into_iter().map(i64::from).collect();
        assert_eq!(numbers, (1..=14).collect::<Vec<_>>());
        for code in ErrorCode::ALL {
            assert_eq!(ErrorCode::from_i64(code.as_i64()), Some(code));
        }
    }
}
