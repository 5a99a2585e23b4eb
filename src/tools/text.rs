//! A file's bytes as text for `edit`, and back, byte for byte; and the
//! byte-order-mark sniffing `read` streams with ([`Encoding::sniff`]).
//!
//! [`decode`] accepts UTF-8 (with or without a BOM) and UTF-16 and UTF-32 after a BOM,
//! strictly: one invalid sequence and the file is not text, so that an edit
//! can never turn bytes it did not understand into U+FFFD. Bytes that are
//! not UTF-8 and have no BOM are given to [`legacy`]: a file surely in a
//! legacy encoding (windows-1252, Shift_JIS, GBK, EUC-KR...) is decoded
//! from it and [`encode`]d back in it, exactly; an unsure guess is refused
//! ([`NotDecoded::Unsure`]), and a character the encoding cannot store is
//! refused ([`Unencodable`]), never replaced. A file whose every
//! line ends in CRLF is handed out with LF endings (as `read` shows it) and
//! [`encode`] puts the CRs back; the pair is exact, so untouched lines come
//! back as they were.

use std::borrow::Cow;

use encoding_rs::{Encoding as Charset, UTF_16BE, UTF_16LE};

use crate::error_code::ErrorCode;
use legacy::{Doubt, Verdict};

pub(crate) mod legacy;

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";
const UTF16LE_BOM: &[u8] = b"\xFF\xFE";
const UTF16BE_BOM: &[u8] = b"\xFE\xFF";
const UTF32LE_BOM: &[u8] = b"\xFF\xFE\x00\x00";
const UTF32BE_BOM: &[u8] = b"\x00\x00\xFE\xFF";

/// How the file's characters are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// UTF-8 without a BOM.
    Utf8,
    /// UTF-8 after the BOM `EF BB BF`.
    Utf8Bom,
    /// UTF-16 little-endian after the BOM `FF FE`.
    Utf16Le,
    /// UTF-16 big-endian after the BOM `FE FF`.
    Utf16Be,
    /// UTF-32 little-endian after the BOM `FF FE 00 00` (which starts
    /// like UTF-16's: it is looked for first).
    Utf32Le,
    /// UTF-32 big-endian after the BOM `00 00 FE FF`.
    Utf32Be,
    /// A legacy encoding without a BOM (windows-1252, Shift_JIS, GBK,
    /// EUC-KR...), detected surely (see [`legacy`]): every character is
    /// written back in it, or the write is refused.
    Legacy(&'static Charset),
}

impl Encoding {
    /// The encoding a file's first bytes announce with a byte-order mark;
    /// UTF-8 when there is none. The one place BOMs are recognized (`read`
    /// streams with it, `edit` decodes with it).
    pub(crate) fn sniff(head: &[u8]) -> Self {
        if head.starts_with(UTF8_BOM) {
            Encoding::Utf8Bom
        } else if head.starts_with(UTF32LE_BOM) {
            Encoding::Utf32Le
        } else if head.starts_with(UTF32BE_BOM) {
            Encoding::Utf32Be
        } else if head.starts_with(UTF16LE_BOM) {
            Encoding::Utf16Le
        } else if head.starts_with(UTF16BE_BOM) {
            Encoding::Utf16Be
        } else {
            Encoding::Utf8
        }
    }

    /// The byte-order mark the file starts with (empty for plain UTF-8).
    pub(crate) fn bom(self) -> &'static [u8] {
        match self {
            Encoding::Utf8 => b"",
            Encoding::Utf8Bom => UTF8_BOM,
            Encoding::Utf16Le => UTF16LE_BOM,
            Encoding::Utf16Be => UTF16BE_BOM,
            Encoding::Utf32Le => UTF32LE_BOM,
            Encoding::Utf32Be => UTF32BE_BOM,
            Encoding::Legacy(_) => b"",
        }
    }

    /// Whether `text` can be stored in this encoding: the first character
    /// it cannot store otherwise (only a legacy encoding lacks some).
    pub(crate) fn check_storable(self, text: &str) -> Result<(), Unencodable> {
        match self {
            Encoding::Legacy(charset) => match legacy::first_unencodable(text, charset) {
                Some(character) => Err(Unencodable { character, charset }),
                None => Ok(()),
            },
            _ => Ok(()),
        }
    }

    /// Whether the characters are stored as UTF-8 (with or without a BOM).
    pub(crate) fn is_utf8(self) -> bool {
        matches!(self, Encoding::Utf8 | Encoding::Utf8Bom)
    }
}

/// How the file's lines end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LineEnding {
    /// `\n`, and never `\r\n`: the text is used as is, and a `\r\n` in
    /// the model's strings is read as `\n`.
    Lf,
    /// A mix, or no line break at all: the text and the model's strings
    /// are used as they are.
    Mixed,
    /// Every `\n` is preceded by `\r`: the text is handed out with `\n`.
    Crlf,
    /// No `\n` at all but a `\r` (old Mac line endings): the text is
    /// handed out with `\n` for each `\r`, and they are put back.
    Cr,
}

/// Everything needed to write edited text back in the file's own form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Format {
    pub(crate) encoding: Encoding,
    pub(crate) line_ending: LineEnding,
}

impl Format {
    /// Plain UTF-8 with LF endings.
    #[cfg(test)]
    pub(crate) const PLAIN: Format = Format {
        encoding: Encoding::Utf8,
        line_ending: LineEnding::Lf,
    };

    /// A string from the model (old_string, new_string) as it would appear
    /// in the decoded text, so that what is written ends its lines as the
    /// file does: CRLF becomes LF in a CRLF file and in an LF file (where
    /// it would make a mix); a CR or a CRLF becomes LF in a CR file. In a
    /// file of mixed endings (or of one line) it is used as given.
    pub(crate) fn normalize<'a>(&self, s: &'a str) -> Cow<'a, str> {
        match self.line_ending {
            LineEnding::Crlf | LineEnding::Lf if s.contains("\r\n") => {
                Cow::Owned(s.replace("\r\n", "\n"))
            }
            LineEnding::Cr if s.contains('\r') => {
                Cow::Owned(s.replace("\r\n", "\n").replace('\r', "\n"))
            }
            _ => Cow::Borrowed(s),
        }
    }
}

/// A file decoded: its text (LF endings for a CRLF file) and its form.
#[derive(Debug)]
pub(crate) struct Decoded<'a> {
    pub(crate) text: Cow<'a, str>,
    pub(crate) format: Format,
}

/// Why a file's bytes are not handed out as text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NotDecoded {
    /// Not text: invalid after a BOM, or in the encoding that fits best
    /// (code 8).
    NotText,
    /// Text in a legacy encoding, most likely this one, but not surely
    /// (code 13).
    Unsure(&'static Charset, Doubt),
}

impl NotDecoded {
    /// The code of the refusal: 8 or 13.
    pub(crate) fn code(self) -> ErrorCode {
        match self {
            NotDecoded::NotText => ErrorCode::NotText,
            NotDecoded::Unsure(..) => ErrorCode::EncodingUncertain,
        }
    }
}

/// The message of code 8, for every tool that changes files.
pub(crate) const NOT_TEXT: &str = "File is not valid text (UTF-8, UTF-16, or a legacy encoding such as windows-1252 or Shift_JIS); refusing to edit it so that nothing is corrupted.";

impl std::fmt::Display for NotDecoded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            NotDecoded::NotText => f.write_str(NOT_TEXT),
            NotDecoded::Unsure(guess, doubt) => write!(
                f,
                "File is not UTF-8 and its encoding is not known for sure: it reads as {name}, but {reason}. Refusing to change it so that nothing is written in the wrong encoding. If you know its encoding, convert it to UTF-8 with bash (iconv -f ENCODING -t utf-8 FILE > FILE.utf8 && mv FILE.utf8 FILE, ENCODING being {name} if the guess is right), then read it again.",
                name = legacy::name(guess),
                reason = doubt.reason(guess),
            ),
        }
    }
}

/// A character the file's encoding cannot store (code 12).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Unencodable {
    /// The character.
    pub(crate) character: char,
    /// The file's encoding.
    pub(crate) charset: &'static Charset,
}

impl Unencodable {
    /// The encoding's name as the tools show it (`windows-1252`).
    pub(crate) fn encoding(&self) -> String {
        legacy::name(self.charset)
    }
}

impl std::fmt::Display for Unencodable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        unencodable_message(f, self.character, &self.encoding())
    }
}

/// The message of code 12: the file is `encoding`, which cannot store
/// `character`.
pub(crate) fn unencodable_message(
    f: &mut impl std::fmt::Write,
    character: char,
    encoding: &str,
) -> std::fmt::Result {
    let shown = if character.is_control() || character.is_whitespace() {
        format!("{character:?}")
    } else {
        format!("'{character}'")
    };
    write!(
        f,
        "The file is {encoding}, which cannot store {shown} (U+{code:04X}); nothing was changed. Use only characters {encoding} has (write {shown} another way, e.g. as an escape sequence of the file's language), or convert the file to UTF-8 first with bash (iconv -f {encoding} -t utf-8 FILE > FILE.utf8 && mv FILE.utf8 FILE), read it again, then change it.",
        code = u32::from(character),
    )
}

/// Decodes a file's bytes, or `None` when they are not text (see
/// [`try_decode`] for why).
pub(crate) fn decode(bytes: &[u8]) -> Option<Decoded<'_>> {
    try_decode(bytes).ok()
}

/// Decodes a file's bytes: UTF-8, UTF-16 or UTF-32 after a BOM, or a
/// legacy encoding detected surely; otherwise why not.
pub(crate) fn try_decode(bytes: &[u8]) -> Result<Decoded<'_>, NotDecoded> {
    let encoding = Encoding::sniff(bytes);
    let rest = &bytes[encoding.bom().len()..];
    let not_text = NotDecoded::NotText;
    let (text, encoding): (Cow<'_, str>, Encoding) = match encoding {
        Encoding::Utf8 | Encoding::Utf8Bom => match std::str::from_utf8(rest) {
            Ok(text) => (Cow::Borrowed(text), encoding),
            Err(_) if encoding == Encoding::Utf8 => match legacy::detect(bytes) {
                (Verdict::Sure(charset), text) => (Cow::Owned(text), Encoding::Legacy(charset)),
                (Verdict::Unsure(charset, doubt), _) => {
                    return Err(NotDecoded::Unsure(charset, doubt));
                }
                (Verdict::NotText, _) => return Err(not_text),
            },
            Err(_) => return Err(not_text),
        },
        Encoding::Utf16Le => (decode_utf16(rest, true).ok_or(not_text)?, encoding),
        Encoding::Utf16Be => (decode_utf16(rest, false).ok_or(not_text)?, encoding),
        Encoding::Utf32Le => (
            Cow::Owned(decode_utf32(rest, false).ok_or(not_text)?),
            encoding,
        ),
        Encoding::Utf32Be => (
            Cow::Owned(decode_utf32(rest, true).ok_or(not_text)?),
            encoding,
        ),
        Encoding::Legacy(_) => return Err(not_text),
    };
    let line_ending = line_ending(&text);
    let text = match line_ending {
        LineEnding::Crlf => Cow::Owned(text.replace("\r\n", "\n")),
        LineEnding::Cr => Cow::Owned(text.replace('\r', "\n")),
        LineEnding::Lf | LineEnding::Mixed => text,
    };
    Ok(Decoded {
        text,
        format: Format {
            encoding,
            line_ending,
        },
    })
}

fn decode_utf16(bytes: &[u8], little_endian: bool) -> Option<Cow<'static, str>> {
    let encoding = if little_endian { UTF_16LE } else { UTF_16BE };
    // Strict: a lone surrogate or an odd trailing byte makes it not text.
    encoding
        .decode_without_bom_handling_and_without_replacement(bytes)
        .map(|text| Cow::Owned(text.into_owned()))
}

/// UTF-32 (after its BOM), strictly: a length that is not a multiple of
/// four, a surrogate or a unit past U+10FFFF makes it not text.
pub(crate) fn decode_utf32(bytes: &[u8], big_endian: bool) -> Option<String> {
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    let mut out = String::with_capacity(bytes.len() / 4);
    for unit in bytes.chunks_exact(4) {
        let unit: [u8; 4] = unit.try_into().ok()?;
        let n = if big_endian {
            u32::from_be_bytes(unit)
        } else {
            u32::from_le_bytes(unit)
        };
        out.push(char::from_u32(n)?);
    }
    Some(out)
}

/// CRLF when there is at least one `\r\n` and no bare `\n` (then
/// replacing every `\r\n` by `\n` and back again is exact); LF when there
/// is a `\n` and no `\r\n`; CR when there is a `\r` and no `\n` at all
/// (each `\r` is a line end, and the swap is exact); a mix otherwise.
fn line_ending(text: &str) -> LineEnding {
    let bytes = text.as_bytes();
    let (mut crlf, mut lf) = (false, false);
    for i in memchr::memchr_iter(b'\n', bytes) {
        if i > 0 && bytes[i - 1] == b'\r' {
            crlf = true;
        } else {
            lf = true;
        }
        if crlf && lf {
            return LineEnding::Mixed;
        }
    }
    match (crlf, lf) {
        (true, _) => LineEnding::Crlf,
        (false, true) => LineEnding::Lf,
        (false, false) if memchr::memchr(b'\r', bytes).is_some() => LineEnding::Cr,
        (false, false) => LineEnding::Mixed,
    }
}

/// Encodes `text` (LF endings for a CRLF file) back in `format`: CRs put
/// back, BOM restored, UTF-16 or the legacy encoding re-encoded. Refused
/// when the encoding cannot store a character of `text` (never a `?`, a
/// U+FFFD or an HTML entity in its place).
pub(crate) fn encode<'a>(text: &'a str, format: Format) -> Result<Cow<'a, [u8]>, Unencodable> {
    let text: Cow<'a, str> = match format.line_ending {
        LineEnding::Crlf => Cow::Owned(text.replace('\n', "\r\n")),
        LineEnding::Cr => Cow::Owned(text.replace('\n', "\r")),
        LineEnding::Lf | LineEnding::Mixed => Cow::Borrowed(text),
    };
    Ok(match format.encoding {
        Encoding::Utf8 => match text {
            Cow::Borrowed(s) => Cow::Borrowed(s.as_bytes()),
            Cow::Owned(s) => Cow::Owned(s.into_bytes()),
        },
        Encoding::Utf8Bom => {
            let mut out = Vec::with_capacity(UTF8_BOM.len() + text.len());
            out.extend_from_slice(UTF8_BOM);
            out.extend_from_slice(text.as_bytes());
            Cow::Owned(out)
        }
        Encoding::Utf16Le | Encoding::Utf16Be => {
            let le = format.encoding == Encoding::Utf16Le;
            let mut out = Vec::with_capacity(2 + text.len() * 2);
            out.extend_from_slice(format.encoding.bom());
            for unit in text.encode_utf16() {
                out.extend_from_slice(&if le {
                    unit.to_le_bytes()
                } else {
                    unit.to_be_bytes()
                });
            }
            Cow::Owned(out)
        }
        Encoding::Utf32Le | Encoding::Utf32Be => {
            let be = format.encoding == Encoding::Utf32Be;
            let mut out = Vec::with_capacity(4 + text.len() * 4);
            out.extend_from_slice(format.encoding.bom());
            for c in text.chars() {
                let n = u32::from(c);
                out.extend_from_slice(&if be { n.to_be_bytes() } else { n.to_le_bytes() });
            }
            Cow::Owned(out)
        }
        Encoding::Legacy(charset) => Cow::Owned(
            legacy::encode(&text, charset)
                .map_err(|character| Unencodable { character, charset })?,
        ),
    })
}

/// Streaming UTF-8 validation: `carry` holds a sequence cut by the chunk
/// boundary (at most 3 bytes).
pub(crate) fn check_utf8(carry: &mut Vec<u8>, chunk: &[u8], last: bool, valid: &mut bool) {
    let mut rest = chunk;
    if !carry.is_empty() {
        // Complete the cut sequence with up to 3 bytes of this chunk.
        let had = carry.len();
        let take = rest.len().min(4 - had);
        carry.extend_from_slice(&rest[..take]);
        match std::str::from_utf8(carry) {
            Ok(_) => rest = &rest[take..],
            // The cut character is complete (it starts at 0, so the valid
            // prefix covers it and reaches into this chunk).
            Err(e) if e.valid_up_to() > 0 => rest = &rest[e.valid_up_to() - had..],
            // Still incomplete: this chunk was too short to finish it.
            Err(e) if e.error_len().is_none() && !last => return,
            Err(_) => {
                *valid = false;
                return;
            }
        }
        carry.clear();
    }
    match std::str::from_utf8(rest) {
        Ok(_) => {}
        Err(e) if e.error_len().is_none() && !last => {
            carry.extend_from_slice(&rest[e.valid_up_to()..]);
        }
        Err(_) => *valid = false,
    }
    if last && !carry.is_empty() {
        *valid = false;
    }
}

/// The bytes as text for a diff: decoded when they are text, lossy
/// otherwise (a preview of overwriting a binary file).
pub(crate) fn for_display(bytes: &[u8]) -> Cow<'_, str> {
    match decode(bytes) {
        Some(decoded) => decoded.text,
        None => String::from_utf8_lossy(bytes),
    }
}

/// `n` with a comma between groups of three digits: `30,000`.
pub(crate) fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(30_000), "30,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    fn round_trip(bytes: &[u8]) -> Format {
        let decoded = decode(bytes).expect("text");
        assert_eq!(
            encode(&decoded.text, decoded.format).unwrap().as_ref(),
            bytes
        );
        decoded.format
    }

    #[test]
    fn plain_utf8_is_borrowed_and_exact() {
        let d = decode(b"a\nb").unwrap();
        assert!(matches!(d.text, Cow::Borrowed("a\nb")));
        assert_eq!(round_trip(b"a\nb"), Format::PLAIN);
        assert_eq!(round_trip(b"").line_ending, LineEnding::Mixed);
    }

    #[test]
    fn crlf_is_normalized_and_restored() {
        let d = decode(b"a\r\nb\r\r\nc").unwrap();
        assert_eq!(d.text, "a\nb\r\nc");
        assert_eq!(d.format.line_ending, LineEnding::Crlf);
        round_trip(b"a\r\nb\r\r\nc");
        // A mix is left alone.
        let d = decode(b"a\r\nb\nc").unwrap();
        assert_eq!(d.text, "a\r\nb\nc");
        assert_eq!(round_trip(b"a\r\nb\nc").line_ending, LineEnding::Mixed);
        // Old Mac endings: each CR is a line end, handed out as LF.
        let d = decode(b"a\rb\r").unwrap();
        assert_eq!(d.text, "a\nb\n");
        assert_eq!(round_trip(b"a\rb\r").line_ending, LineEnding::Cr);
    }

    #[test]
    fn boms_and_utf16_round_trip() {
        assert_eq!(round_trip(b"\xEF\xBB\xBFhi\n").encoding, Encoding::Utf8Bom);
        let le: Vec<u8> = [
            0xFF, 0xFE, b'h', 0, b'\r', 0, b'\n', 0, 0x3D, 0xD8, 0x00, 0xDE,
        ]
        .to_vec();
        let f = round_trip(&le);
        assert_eq!(f.encoding, Encoding::Utf16Le);
        assert_eq!(f.line_ending, LineEnding::Crlf);
        assert_eq!(decode(&le).unwrap().text, "h\n😀");
        let be = [0xFE, 0xFF, 0, b'h', 0, b'i'];
        assert_eq!(round_trip(&be).encoding, Encoding::Utf16Be);
        // UTF-32: its little-endian BOM starts as UTF-16's does.
        let le32 = [
            0xFF, 0xFE, 0, 0, b'h', 0, 0, 0, b'\n', 0, 0, 0, 0x00, 0xF6, 0x01, 0x00,
        ];
        let f = round_trip(&le32);
        assert_eq!(f.encoding, Encoding::Utf32Le);
        assert_eq!(decode(&le32).unwrap().text, "h\n😀");
        let be32 = [0, 0, 0xFE, 0xFF, 0, 0, 0, b'h', 0, 0, 0, b'i'];
        assert_eq!(round_trip(&be32).encoding, Encoding::Utf32Be);
        assert_eq!(decode(&be32).unwrap().text, "hi");
        // A surrogate, a unit past U+10FFFF, a cut unit: not text.
        assert!(decode(&[0, 0, 0xFE, 0xFF, 0, 0, 0xD8, 0]).is_none());
        assert!(decode(&[0, 0, 0xFE, 0xFF, 0, 0x11, 0, 0]).is_none());
        assert!(decode(&[0, 0, 0xFE, 0xFF, 0, 0, 0]).is_none());
    }

    #[test]
    fn legacy_text_round_trips_and_refuses_what_it_cannot_store() {
        // Not UTF-8 and no BOM: a lone ÿ that no CJK encoding accepts.
        let d = try_decode(b"ab\xFFcd\r\nx\r\n").unwrap();
        assert_eq!(d.text, "abÿcd\nx\n");
        assert_eq!(
            d.format.encoding,
            Encoding::Legacy(encoding_rs::WINDOWS_1252)
        );
        assert_eq!(d.format.line_ending, LineEnding::Crlf);
        round_trip(b"ab\xFFcd\r\nx\r\n");
        let e = encode("ab€ 日", d.format).unwrap_err();
        assert_eq!(e.character, '日');
        assert!(e.to_string().starts_with(
            "The file is windows-1252, which cannot store '日' (U+65E5); nothing was changed."
        ));
        assert_eq!(
            d.format.encoding.check_storable("€"),
            Ok(()),
            "€ is 0x80 in windows-1252"
        );
        assert!(d.format.encoding.check_storable("Ω").is_err());
        // After a UTF-8 BOM, invalid bytes are not text: the BOM says UTF-8.
        assert_eq!(
            try_decode(b"\xEF\xBB\xBFab\xFFcd").unwrap_err(),
            NotDecoded::NotText
        );
        // An unsure guess says why, with code 13.
        let why = try_decode(b"x = \"\xB0\xA1\";\n").unwrap_err();
        assert_eq!(why.code(), ErrorCode::EncodingUncertain);
        assert!(
            why.to_string()
                .contains("but it has only 2 non-ASCII bytes"),
            "{why}"
        );
    }

    #[test]
    fn boms_are_sniffed_once() {
        assert_eq!(Encoding::sniff(b"plain"), Encoding::Utf8);
        assert_eq!(Encoding::sniff(b"\xEF\xBB\xBFx"), Encoding::Utf8Bom);
        assert_eq!(Encoding::sniff(b"\xFF\xFEx\0"), Encoding::Utf16Le);
        assert_eq!(Encoding::sniff(b"\xFE\xFF\0x"), Encoding::Utf16Be);
        assert_eq!(Encoding::sniff(b"\xEF\xBB"), Encoding::Utf8);
        assert_eq!(Encoding::sniff(b"\xFF\xFE\0\0x\0\0\0"), Encoding::Utf32Le);
        assert_eq!(Encoding::sniff(b"\0\0\xFE\xFFx"), Encoding::Utf32Be);
        for encoding in [
            Encoding::Utf8,
            Encoding::Utf8Bom,
            Encoding::Utf16Le,
            Encoding::Utf16Be,
            Encoding::Utf32Le,
            Encoding::Utf32Be,
        ] {
            assert_eq!(Encoding::sniff(encoding.bom()), encoding);
        }
    }

    #[test]
    fn invalid_text_is_refused() {
        // Binary: a control character beside bytes that are not UTF-8.
        assert_eq!(
            try_decode(b"ab\xFF\x01cd").unwrap_err(),
            NotDecoded::NotText
        );
        assert!(decode(b"\xEF\xBB\xBF\xC3").is_none());
        // Odd length and a lone surrogate in UTF-16.
        assert!(decode(&[0xFF, 0xFE, b'a']).is_none());
        assert!(decode(&[0xFF, 0xFE, 0x00, 0xD8, b'a', 0]).is_none());
    }

    #[test]
    fn utf8_validation_across_chunk_boundaries() {
        let text = "añb€c😀d".as_bytes();
        for cut in 0..text.len() {
            let mut carry = Vec::new();
            let mut valid = true;
            check_utf8(&mut carry, &text[..cut], false, &mut valid);
            check_utf8(&mut carry, &text[cut..], false, &mut valid);
            check_utf8(&mut carry, &[], true, &mut valid);
            assert!(valid, "cut at {cut}");
        }
        for cut in 0..4 {
            let bad = b"ab\xFFcd";
            let mut carry = Vec::new();
            let mut valid = true;
            check_utf8(&mut carry, &bad[..cut], false, &mut valid);
            check_utf8(&mut carry, &bad[cut..], false, &mut valid);
            check_utf8(&mut carry, &[], true, &mut valid);
            assert!(!valid, "cut at {cut}");
        }
        let mut carry = Vec::new();
        let mut valid = true;
        check_utf8(&mut carry, b"a\xE2\x82", false, &mut valid);
        check_utf8(&mut carry, &[], true, &mut valid);
        assert!(!valid, "truncated sequence at the end");
    }

    #[test]
    fn byte_by_byte_validation() {
        let text = "x€😀ñ".as_bytes();
        let mut carry = Vec::new();
        let mut valid = true;
        for b in text {
            check_utf8(&mut carry, std::slice::from_ref(b), false, &mut valid);
        }
        check_utf8(&mut carry, &[], true, &mut valid);
        assert!(valid);
    }
}
