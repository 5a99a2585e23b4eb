//! JSON for line-oriented output: exactly serde_json's compact JSON, with
//! U+2028 (LINE SEPARATOR) and U+2029 (PARAGRAPH SEPARATOR) written as the
//! escapes `\u2028` and `\u2029`.
//!
//! Both characters are valid unescaped in a JSON string, but JavaScript's
//! line splitters (and others following Unicode line breaking) end a line
//! at them, so a JSON Lines reader would see a message cut in two. The
//! escaped form parses back to the same string.

use std::io;

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter};

/// serde_json's compact formatter, escaping U+2028 and U+2029 in strings.
#[derive(Clone, Copy, Debug, Default)]
pub struct LineSafeFormatter;

impl Formatter for LineSafeFormatter {
    fn write_string_fragment<W>(&mut self, writer: &mut W, fragment: &str) -> io::Result<()>
    where
        W: ?Sized + io::Write,
    {
        let mut rest = fragment;
        while let Some(at) = rest.find(['\u{2028}', '\u{2029}']) {
            writer.write_all(&rest.as_bytes()[..at])?;
            // Both are three bytes long in UTF-8.
            let escape: &[u8] = if rest[at..].starts_with('\u{2028}') {
                b"\\u2028"
            } else {
                b"\\u2029"
            };
            writer.write_all(escape)?;
            rest = &rest[at + 3..];
        }
        CompactFormatter.write_string_fragment(writer, rest)
    }
}

/// Writes `value` as one line's JSON (no newline) to `writer`.
pub fn to_line_writer<W, T>(writer: W, value: &T) -> serde_json::Result<()>
where
    W: io::Write,
    T: ?Sized + Serialize,
{
    let mut serializer = serde_json::Serializer::with_formatter(writer, LineSafeFormatter);
    value.serialize(&mut serializer)
}

/// `value` as one line's JSON (no newline).
pub fn to_line_vec<T>(value: &T) -> serde_json::Result<Vec<u8>>
where
    T: ?Sized + Serialize,
{
    let mut out = Vec::with_capacity(128);
    to_line_writer(&mut out, value)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn line_and_paragraph_separators_are_escaped_and_parse_back() {
        let text = "a\u{2028}b\u{2029}c \u{2028}\u{2028} é\n\"\u{0}";
        let value = json!({"text": text, "k\u{2029}": [text]});
        let line = to_line_vec(&value).unwrap();
        let line = String::from_utf8(line).unwrap();
        assert!(
            !line.contains('\u{2028}') && !line.contains('\u{2029}'),
            "{line}"
        );
        assert!(
            line.contains(r#"a\u2028b\u2029c \u2028\u2028 é\n\"\u0000"#),
            "{line}"
        );
        let back: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(back, value);
    }

    #[test]
    fn everything_else_is_serde_jsons_compact_output() {
        let value =
            json!({"a": [1, 2.5, null, true], "b": "plain \u{7f} \u{2027}\u{202a}", "c": {}});
        assert_eq!(
            String::from_utf8(to_line_vec(&value).unwrap()).unwrap(),
            serde_json::to_string(&value).unwrap()
        );
    }
}
