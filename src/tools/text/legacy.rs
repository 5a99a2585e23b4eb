//! Files in a legacy encoding (windows-1252, Shift_JIS, GBK, EUC-KR...):
//! which one, and whether it is known well enough to write in.
//!
//! Only bytes that are neither UTF-8 nor announced by a byte-order mark
//! come here. `chardetng` guesses the encoding from the whole file; the
//! guess is then judged, and it is *sure* only when all of these hold:
//!
//! 1. the detector rates it (`guess_assess`: chardetng 0.1.17 rates every
//!    guess it makes for bytes that are not UTF-8, so 3 and 4 carry the
//!    weight), and it is not a stateful encoding (ISO-2022-JP) nor one
//!    that is not written as itself;
//! 2. the file decodes in it without a malformed sequence and without a
//!    control character other than tab, line feed, vertical tab, form
//!    feed, carriage return and escape (C0 and C1 controls, NUL and DEL
//!    mean binary, whatever decodes them);
//! 3. re-encoding the decoded text gives back exactly the file's bytes
//!    (the round trip that makes untouched bytes stay as they were);
//! 4. the evidence decides: the file has at least [`MIN_EVIDENCE`]
//!    non-ASCII bytes; or the guess is one of [`RIVALS`] and no other of
//!    them also passes 2 and 3 (then there is nothing to choose between:
//!    a short file with a lone `é` before a line break is windows-1252,
//!    no CJK encoding accepts it). A short file guessed to be in another
//!    encoding (windows-1256, KOI8-U...) is unsure: few bytes do not tell
//!    those apart.
//!
//! 5. the guess does not hide UTF-8: at most half of the non-ASCII bytes
//!    form valid UTF-8 characters (otherwise the file is most likely UTF-8
//!    with a few stray bytes of another encoding, a mix no single encoding
//!    reads right; in real text of the legacy encodings a small share of
//!    byte pairs happen to be UTF-8).
//!
//! When 2 fails the file is not text. When 1, 3, 4 or 5 fails the guess is
//! *unsure*: `read` shows the file decoded with the guess and says it is
//! a guess, and the edit tools refuse it ([`Doubt`] says why).
//!
//! Everything here streams: [`Survey`] and [`Trial`] take chunks, so `read`
//! and `grep` judge a file of any size in bounded memory, and
//! [`detect`] is the same on a slice.

use chardetng::EncodingDetector;
use encoding_rs::{
    BIG5, CoderResult, Decoder, EUC_JP, EUC_KR, Encoder, EncoderResult, Encoding as Charset, GBK,
    ISO_2022_JP, SHIFT_JIS, WINDOWS_1252,
};

/// Non-ASCII bytes from which the detector's statistics are trusted even
/// when another encoding would decode the file too: 16 bytes are 8 CJK
/// characters or 16 accented letters.
pub(crate) const MIN_EVIDENCE: u64 = 16;

/// The encodings that compete with a guess on a file with little evidence:
/// one for each family of scripts a short file is mistaken between.
pub(crate) const RIVALS: [&Charset; 6] = [WINDOWS_1252, SHIFT_JIS, GBK, EUC_KR, BIG5, EUC_JP];

/// What a file that is not UTF-8 is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Decoded and written back exactly in this encoding, and it is the
    /// one the evidence points to.
    Sure(&'static Charset),
    /// Most likely this encoding, but not surely, for this reason.
    Unsure(&'static Charset, Doubt),
    /// Not text in the encoding that fits it best.
    NotText,
}

/// Why a guess is not sure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Doubt {
    /// Few non-ASCII bytes, and they decode exactly in this other
    /// encoding too (or, without one, the guess is not one of
    /// [`RIVALS`], and a few bytes do not tell it from its neighbours).
    Ambiguous {
        /// The file's non-ASCII bytes.
        non_ascii: u64,
        /// An other encoding the file is valid in.
        rival: Option<&'static Charset>,
    },
    /// Decoding and encoding again does not give back the same bytes.
    Inexact,
    /// A stateful encoding (ISO-2022-JP) or one not written as itself.
    Unsupported,
    /// The detector does not rate its own guess.
    Unrated,
    /// Most of the non-ASCII bytes are UTF-8 characters: a UTF-8 file
    /// with stray bytes, which the guess would show garbled.
    Mixed {
        /// Non-ASCII bytes that form valid UTF-8 characters.
        utf8: u64,
        /// The file's non-ASCII bytes.
        non_ascii: u64,
    },
}

/// The name of an encoding as the tools show it: `windows-1252`,
/// `shift_jis`, `gbk`, `euc-kr`.
pub(crate) fn name(charset: &'static Charset) -> String {
    charset.name().to_ascii_lowercase()
}

impl Doubt {
    /// Why the guess `guess` is unsure, as a clause of a sentence.
    pub(crate) fn reason(self, guess: &'static Charset) -> String {
        match self {
            Doubt::Ambiguous { non_ascii, rival } => format!(
                "it has only {non_ascii} non-ASCII byte{} (fewer than {MIN_EVIDENCE}), {}",
                if non_ascii == 1 { "" } else { "s" },
                match rival {
                    Some(rival) => format!("and they are valid {} too", name(rival)),
                    None => "too few to tell it from other encodings".to_owned(),
                }
            ),
            Doubt::Inexact => format!(
                "some of its bytes would not be written back the same in {}",
                name(guess)
            ),
            Doubt::Unsupported => format!("{} is not an encoding the tools write", name(guess)),
            Doubt::Unrated => "the detector rates no encoding above the others".to_owned(),
            Doubt::Mixed { utf8, non_ascii } => format!(
                "{utf8} of its {non_ascii} non-ASCII bytes are UTF-8 characters: it looks like UTF-8 with stray bytes of another encoding, which no single encoding reads right"
            ),
        }
    }
}

/// The first pass over a file: the detector, the count of non-ASCII
/// bytes, and a [`Trial`] of each of [`RIVALS`].
pub(crate) struct Survey {
    detector: EncodingDetector,
    non_ascii: u64,
    rivals: Vec<Trial>,
    utf8: Utf8Count,
}

/// What a [`Survey`] found.
pub(crate) struct Surveyed {
    /// The detector's guess, and whether it rates it.
    pub(crate) guess: &'static Charset,
    rated: bool,
    non_ascii: u64,
    /// Non-ASCII bytes that form valid UTF-8 characters.
    utf8: u64,
    /// The rivals that decode the file exactly.
    exact: Vec<&'static Charset>,
}

impl Survey {
    pub(crate) fn new() -> Self {
        Self {
            detector: EncodingDetector::new(),
            non_ascii: 0,
            rivals: RIVALS.iter().map(|c| Trial::new(c)).collect(),
            utf8: Utf8Count::default(),
        }
    }

    /// The next chunk of the file.
    pub(crate) fn feed(&mut self, chunk: &[u8]) {
        self.detector.feed(chunk, false);
        // The rivals count only for a file with little evidence: once it
        // has enough, they are not tried on the rest.
        if self.non_ascii < MIN_EVIDENCE {
            for rival in &mut self.rivals {
                rival.check(chunk, false);
            }
        }
        self.non_ascii += chunk.iter().filter(|b| !b.is_ascii()).count() as u64;
        self.utf8.feed(chunk);
    }

    /// The end of the file.
    pub(crate) fn finish(mut self) -> Surveyed {
        self.detector.feed(&[], true);
        for rival in &mut self.rivals {
            rival.check(&[], true);
        }
        let (guess, rated) = self.detector.guess_assess(None, false);
        Surveyed {
            guess,
            rated,
            non_ascii: self.non_ascii,
            utf8: self.utf8.valid,
            exact: self
                .rivals
                .iter()
                .filter(|t| t.is_exact())
                .map(|t| t.charset)
                .collect(),
        }
    }
}

impl Surveyed {
    /// The verdict, given the whole file's [`Trial`] of [`Surveyed::guess`].
    pub(crate) fn verdict(&self, trial: &Trial) -> Verdict {
        let guess = self.guess;
        debug_assert_eq!(trial.charset, guess);
        if !trial.is_text() {
            return Verdict::NotText;
        }
        let doubt = if guess == ISO_2022_JP || guess.output_encoding() != guess {
            Some(Doubt::Unsupported)
        } else if !trial.is_exact() {
            Some(Doubt::Inexact)
        } else if !self.rated {
            Some(Doubt::Unrated)
        } else if self.utf8.saturating_mul(2) > self.non_ascii {
            Some(Doubt::Mixed {
                utf8: self.utf8,
                non_ascii: self.non_ascii,
            })
        } else if self.non_ascii >= MIN_EVIDENCE {
            None
        } else if !RIVALS.contains(&guess) {
            Some(Doubt::Ambiguous {
                non_ascii: self.non_ascii,
                rival: None,
            })
        } else {
            self.exact
                .iter()
                .find(|c| **c != guess)
                .map(|rival| Doubt::Ambiguous {
                    non_ascii: self.non_ascii,
                    rival: Some(rival),
                })
        };
        match doubt {
            None => Verdict::Sure(guess),
            Some(doubt) => Verdict::Unsure(guess, doubt),
        }
    }
}

/// One encoding tried on a file chunk by chunk: the text it decodes to,
/// whether that is text (no malformed sequence, no binary control), and
/// whether encoding it again gives back the same bytes.
pub(crate) struct Trial {
    charset: &'static Charset,
    decoder: Decoder,
    encoder: Encoder,
    /// The last chunk decoded.
    out: String,
    /// `out` encoded again.
    encoded: Vec<u8>,
    /// Bytes fed that the encoded text has not matched yet (a sequence
    /// the decoder holds across a chunk boundary).
    pending: Vec<u8>,
    text: bool,
    exact: bool,
}

impl Trial {
    pub(crate) fn new(charset: &'static Charset) -> Self {
        Self {
            charset,
            decoder: charset.new_decoder_without_bom_handling(),
            encoder: charset.output_encoding().new_encoder(),
            out: String::new(),
            encoded: Vec::new(),
            pending: Vec::new(),
            text: true,
            exact: true,
        }
    }

    /// Whether the bytes so far are text in this encoding.
    pub(crate) fn is_text(&self) -> bool {
        self.text
    }

    /// Whether they are text and come back exactly when encoded again.
    pub(crate) fn is_exact(&self) -> bool {
        self.text && self.exact
    }

    /// Judges the next chunk without keeping its text (once it failed,
    /// does nothing).
    fn check(&mut self, chunk: &[u8], last: bool) {
        if self.is_exact() {
            self.feed(chunk, last);
        }
    }

    /// Decodes the next chunk (malformed sequences as U+FFFD) and judges
    /// it; the text of this chunk.
    pub(crate) fn feed(&mut self, chunk: &[u8], last: bool) -> &str {
        self.out.clear();
        let mut rest = chunk;
        loop {
            let need = self
                .decoder
                .max_utf8_buffer_length(rest.len())
                .unwrap_or(rest.len().saturating_mul(3).saturating_add(16));
            self.out.reserve(need);
            let (result, read, replaced) = self.decoder.decode_to_string(rest, &mut self.out, last);
            if replaced {
                self.text = false;
            }
            rest = &rest[read..];
            if result == CoderResult::InputEmpty {
                break;
            }
        }
        if self.text && self.out.chars().any(is_binary_control) {
            self.text = false;
        }
        if self.is_exact() {
            self.round_trip(chunk, last);
        } else {
            self.pending = Vec::new();
        }
        &self.out
    }

    /// Encodes the last decoded text and matches it against the bytes.
    fn round_trip(&mut self, chunk: &[u8], last: bool) {
        self.pending.extend_from_slice(chunk);
        self.encoded.clear();
        let mut src = self.out.as_str();
        loop {
            let need = self
                .encoder
                .max_buffer_length_from_utf8_without_replacement(src.len())
                .unwrap_or(src.len().saturating_mul(4).saturating_add(16));
            self.encoded.reserve(need);
            let (result, read) = self.encoder.encode_from_utf8_to_vec_without_replacement(
                src,
                &mut self.encoded,
                last,
            );
            src = &src[read..];
            match result {
                EncoderResult::InputEmpty => break,
                EncoderResult::OutputFull => {}
                EncoderResult::Unmappable(_) => {
                    self.exact = false;
                    break;
                }
            }
        }
        if self.exact && self.pending.starts_with(&self.encoded) {
            self.pending.drain(..self.encoded.len());
        } else {
            self.exact = false;
        }
        if !self.exact || (last && !self.pending.is_empty()) {
            self.exact = false;
            self.pending = Vec::new();
        }
    }
}

/// Counts the bytes of valid multi-byte UTF-8 characters in a stream fed
/// in chunks (a character cut by a chunk boundary counts).
#[derive(Default)]
struct Utf8Count {
    /// Bytes in complete valid characters.
    valid: u64,
    /// The bytes of the character being read, and how many it needs.
    have: u8,
    need: u8,
    /// The range the next continuation byte must be in (the second byte
    /// of some leads is narrower: no overlong forms, no surrogates).
    next: (u8, u8),
}

impl Utf8Count {
    fn feed(&mut self, chunk: &[u8]) {
        for &b in chunk {
            if self.need > 0 && (self.next.0..=self.next.1).contains(&b) {
                self.have += 1;
                self.next = (0x80, 0xBF);
                if self.have == self.need {
                    self.valid += u64::from(self.need);
                    self.need = 0;
                }
                continue;
            }
            (self.need, self.next) = match b {
                0xC2..=0xDF => (2, (0x80, 0xBF)),
                0xE0 => (3, (0xA0, 0xBF)),
                0xED => (3, (0x80, 0x9F)),
                0xE1..=0xEF => (3, (0x80, 0xBF)),
                0xF0 => (4, (0x90, 0xBF)),
                0xF1..=0xF3 => (4, (0x80, 0xBF)),
                0xF4 => (4, (0x80, 0x8F)),
                _ => (0, (0, 0)),
            };
            self.have = 1;
        }
    }
}

/// A control character that does not occur in text: C0 controls but
/// tab, line feed, vertical tab, form feed, carriage return and escape;
/// DEL; the C1 controls.
fn is_binary_control(c: char) -> bool {
    match c {
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | '\u{1B}' => false,
        _ => c < ' ' || ('\u{7F}'..='\u{9F}').contains(&c),
    }
}

/// [`Survey`] and [`Trial`] over a whole slice: the verdict, and the text
/// decoded with the guess (for [`Verdict::NotText`] too, lossily).
///
/// Fed in chunks of [`CHUNK_BYTES`], so that the survey's six trials hold
/// a chunk's text each, never the whole file's.
pub(crate) fn detect(bytes: &[u8]) -> (Verdict, String) {
    let mut survey = Survey::new();
    for chunk in bytes.chunks(CHUNK_BYTES) {
        survey.feed(chunk);
    }
    let surveyed = survey.finish();
    let mut trial = Trial::new(surveyed.guess);
    let mut text = String::with_capacity(bytes.len());
    for chunk in bytes.chunks(CHUNK_BYTES) {
        text.push_str(trial.feed(chunk, false));
    }
    text.push_str(trial.feed(&[], true));
    (surveyed.verdict(&trial), text)
}

/// The chunks files are surveyed and decoded in.
const CHUNK_BYTES: usize = 64 << 10;

/// [`Survey`] and [`Trial`] over a reader from its start, in 64 KiB
/// chunks (memory bounded, whatever its size); `cancelled` is asked
/// before every chunk, and stops it with an error.
pub(crate) fn judge<R: std::io::Read + std::io::Seek>(
    reader: &mut R,
    cancelled: &dyn Fn() -> bool,
) -> std::io::Result<Verdict> {
    let mut survey = Survey::new();
    each_chunk(reader, cancelled, &mut |chunk| survey.feed(chunk))?;
    let surveyed = survey.finish();
    let mut trial = Trial::new(surveyed.guess);
    each_chunk(reader, cancelled, &mut |chunk| {
        trial.feed(chunk, false);
    })?;
    trial.feed(&[], true);
    Ok(surveyed.verdict(&trial))
}

/// Every chunk of `reader` from its start (an error once `cancelled`).
pub(crate) fn each_chunk<R: std::io::Read + std::io::Seek>(
    reader: &mut R,
    cancelled: &dyn Fn() -> bool,
    each: &mut dyn FnMut(&[u8]),
) -> std::io::Result<()> {
    use std::io::ErrorKind;
    reader.seek(std::io::SeekFrom::Start(0))?;
    let mut buf = vec![0u8; CHUNK_BYTES];
    loop {
        if cancelled() {
            return Err(std::io::Error::other("cancelled"));
        }
        match reader.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => each(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// The first character of `text` that `charset` cannot store, if any.
pub(crate) fn first_unencodable(text: &str, charset: &'static Charset) -> Option<char> {
    // ASCII is stored as itself in every encoding that comes here.
    if text.is_ascii() {
        return None;
    }
    let mut encoder = charset.new_encoder();
    let mut buf = vec![0u8; 1024];
    let mut src = text;
    loop {
        let (result, read, _) = encoder.encode_from_utf8_without_replacement(src, &mut buf, true);
        src = &src[read..];
        match result {
            EncoderResult::InputEmpty => return None,
            EncoderResult::OutputFull => {}
            EncoderResult::Unmappable(c) => return Some(c),
        }
    }
}

/// `text` in `charset`, or the first character it cannot store.
pub(crate) fn encode(text: &str, charset: &'static Charset) -> Result<Vec<u8>, char> {
    let mut encoder = charset.new_encoder();
    let mut out = Vec::with_capacity(
        encoder
            .max_buffer_length_from_utf8_without_replacement(text.len())
            .unwrap_or(text.len()),
    );
    let mut src = text;
    loop {
        let (result, read) =
            encoder.encode_from_utf8_to_vec_without_replacement(src, &mut out, true);
        src = &src[read..];
        match result {
            EncoderResult::InputEmpty => return Ok(out),
            EncoderResult::OutputFull => out.reserve(
                encoder
                    .max_buffer_length_from_utf8_without_replacement(src.len())
                    .unwrap_or(src.len())
                    .max(16),
            ),
            EncoderResult::Unmappable(c) => return Err(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use encoding_rs::WINDOWS_1251;

    use super::*;

    fn encoded(text: &str, charset: &'static Charset) -> Vec<u8> {
        encode(text, charset).expect("encodable")
    }

    const GERMAN: &str =
        "// Größe des Puffers, in Bytes: für Überläufe prüfen.\nlet größe = 4096; // äöüß ÄÖÜ\n";
    const JAPANESE: &str = "// 日本語のコメントです。設定ファイルを読み込みます。\nlet x = 1;\n";
    const CHINESE: &str = "// 这是一个简体中文的注释，用于读取配置文件。\nlet x = 1;\n";
    const KOREAN: &str = "// 이것은 한국어 주석입니다. 설정 파일을 읽습니다.\nlet x = 1;\n";

    #[test]
    fn real_text_in_each_encoding_is_detected_surely() {
        for (text, charset) in [
            (GERMAN, WINDOWS_1252),
            (JAPANESE, SHIFT_JIS),
            (CHINESE, GBK),
            (KOREAN, EUC_KR),
        ] {
            let bytes = encoded(text, charset);
            let (verdict, decoded) = detect(&bytes);
            assert_eq!(verdict, Verdict::Sure(charset), "{}", charset.name());
            assert_eq!(decoded, text);
        }
    }

    #[test]
    fn names_are_encoding_rs_names_in_lowercase() {
        assert_eq!(name(WINDOWS_1252), "windows-1252");
        assert_eq!(name(SHIFT_JIS), "shift_jis");
        assert_eq!(name(GBK), "gbk");
        assert_eq!(name(EUC_KR), "euc-kr");
        // "Latin-1" is windows-1252 to encoding_rs, as to browsers.
        assert_eq!(Charset::for_label(b"latin1"), Some(WINDOWS_1252));
        assert_eq!(Charset::for_label(b"iso-8859-1"), Some(WINDOWS_1252));
    }

    #[test]
    fn every_byte_of_windows_1252_round_trips() {
        // The five bytes windows-1252 leaves undefined (81 8D 8F 90 9D)
        // decode to C1 controls, which make a file binary; every other
        // byte is a character and comes back as itself.
        let mut trial = Trial::new(WINDOWS_1252);
        let all: Vec<u8> = (0..=255u8).collect();
        trial.feed(&all, true);
        assert!(!trial.is_text(), "controls are not text");
        for b in 0..=255u8 {
            let mut t = Trial::new(WINDOWS_1252);
            let text = t.feed(&[b], true).to_owned();
            let back = encode(&text, WINDOWS_1252).expect("every decoded byte encodes");
            assert_eq!(back, [b], "byte {b:#04x}");
            let control = b < 0x20 && !b"\t\n\x0B\x0C\r\x1B".contains(&b)
                || b == 0x7F
                || [0x81, 0x8D, 0x8F, 0x90, 0x9D].contains(&b);
            assert_eq!(t.is_exact(), !control, "byte {b:#04x}");
        }
    }

    #[test]
    fn a_short_file_valid_in_several_encodings_is_unsure() {
        // B0 A1 is 가 in EUC-KR, 啊 in GBK, ｰ｡ in Shift_JIS, °¡ in windows-1252.
        let bytes = b"x = \"\xB0\xA1\";\n";
        for charset in [EUC_KR, GBK, SHIFT_JIS, WINDOWS_1252] {
            let mut trial = Trial::new(charset);
            trial.feed(bytes, true);
            assert!(trial.is_exact(), "{}", charset.name());
        }
        match detect(bytes).0 {
            Verdict::Unsure(_, Doubt::Ambiguous { non_ascii, .. }) => assert_eq!(non_ascii, 2),
            other => panic!("{other:?}"),
        }
        // Korean with a few syllables only: the guess may be right, but
        // GBK and windows-1252 read the same bytes too.
        let short = encoded("// 안녕\n", EUC_KR);
        assert!(matches!(
            detect(&short).0,
            Verdict::Unsure(_, Doubt::Ambiguous { non_ascii: 4, .. })
        ));
    }

    #[test]
    fn a_lone_accent_that_no_cjk_encoding_accepts_is_sure() {
        // E9 before a line feed is no lead byte's partner in any CJK
        // encoding: windows-1252 is the only rival that decodes it.
        assert_eq!(detect(b"caf\xE9\n").0, Verdict::Sure(WINDOWS_1252));
    }

    #[test]
    fn binary_and_controls_are_not_text() {
        assert_eq!(detect(b"\x01\x02\xFF\xFE\x03").0, Verdict::NotText);
        assert_eq!(detect(b"abc\xE9\0def").0, Verdict::NotText);
        // A C1 control (an undefined windows-1252 byte) is binary too.
        assert_eq!(detect(b"caf\xE9 \x81\x01\n").0, Verdict::NotText);
    }

    #[test]
    fn a_short_file_guessed_outside_the_rivals_is_unsure() {
        // 81 8D 90 are letters in windows-1256 only: few bytes cannot tell
        // it from the other single-byte encodings.
        match detect(b"caf\xE9 \x81\x8D\x90\n").0 {
            Verdict::Unsure(guess, Doubt::Ambiguous { rival: None, .. }) => {
                assert!(!RIVALS.contains(&guess));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_guess_that_does_not_round_trip_is_unsure() {
        // ED 40 is an NEC-selected IBM extension in Shift_JIS: it decodes
        // to 纊, which the encoder writes as FA 5C.
        let mut bytes = encoded(JAPANESE, SHIFT_JIS);
        bytes.extend_from_slice(b"\xED\x40\n");
        let (verdict, text) = detect(&bytes);
        assert_eq!(verdict, Verdict::Unsure(SHIFT_JIS, Doubt::Inexact));
        assert!(text.ends_with("纊\n"));
    }

    #[test]
    fn unencodable_characters_are_found_never_replaced() {
        assert_eq!(first_unencodable("a € b", WINDOWS_1252), None);
        assert_eq!(first_unencodable("a 日 b", WINDOWS_1252), Some('日'));
        assert_eq!(first_unencodable("ascii only", SHIFT_JIS), None);
        assert_eq!(first_unencodable("한", SHIFT_JIS), Some('한'));
        assert_eq!(encode("x😀", EUC_KR), Err('😀'));
        assert_eq!(encode("€", WINDOWS_1252), Ok(vec![0x80]));
        // A long text past the first buffer.
        let long = format!("{}Ω", "é".repeat(5000));
        assert_eq!(first_unencodable(&long, WINDOWS_1252), Some('Ω'));
        assert_eq!(encode(&long, WINDOWS_1251), Err('é'));
    }

    #[test]
    fn chunk_boundaries_do_not_change_the_judgement() {
        for (text, charset) in [(JAPANESE, SHIFT_JIS), (CHINESE, GBK), (KOREAN, EUC_KR)] {
            let bytes = encoded(text, charset);
            for cut in 0..bytes.len() {
                let mut trial = Trial::new(charset);
                let mut out = trial.feed(&bytes[..cut], false).to_owned();
                out.push_str(trial.feed(&bytes[cut..], false));
                out.push_str(trial.feed(&[], true));
                assert!(trial.is_exact(), "{} cut at {cut}", charset.name());
                assert_eq!(out, text);
            }
        }
        // A lead byte at the very end is malformed.
        let mut trial = Trial::new(SHIFT_JIS);
        trial.feed(b"ab\x82", false);
        trial.feed(&[], true);
        assert!(!trial.is_text());
    }

    #[test]
    fn a_reader_is_judged_as_a_slice_is() {
        let mut bytes = encoded(JAPANESE, SHIFT_JIS).repeat(1200);
        assert!(bytes.len() > CHUNK_BYTES, "more than one chunk");
        let judged = judge(&mut std::io::Cursor::new(&bytes), &|| false).unwrap();
        assert_eq!(judged, Verdict::Sure(SHIFT_JIS));
        assert_eq!(judged, detect(&bytes).0);
        bytes.push(0);
        assert_eq!(
            judge(&mut std::io::Cursor::new(&bytes), &|| false).unwrap(),
            Verdict::NotText
        );
        assert!(judge(&mut std::io::Cursor::new(&bytes), &|| true).is_err());
    }

    #[test]
    fn utf8_with_stray_bytes_is_unsure() {
        // UTF-8 text with one stray windows-1252 byte: read as
        // windows-1252 it would show "Ã¼" for every "ü".
        let mut bytes = GERMAN.as_bytes().to_vec();
        bytes.extend_from_slice(b"// caf\xE9\n");
        match detect(&bytes).0 {
            Verdict::Unsure(_, Doubt::Mixed { utf8, non_ascii }) => {
                assert_eq!(non_ascii, utf8 + 1);
            }
            other => panic!("{other:?}"),
        }
        // Real windows-1252 with a few pairs that happen to be UTF-8
        // ("ß“" is DF 93) is still sure.
        let text = format!("{GERMAN}// „Fuß“ und „Maß“\n");
        assert_eq!(
            detect(&encoded(&text, WINDOWS_1252)).0,
            Verdict::Sure(WINDOWS_1252)
        );
        // Chinese UTF-8 with one stray GBK character.
        let mut bytes = CHINESE.as_bytes().to_vec();
        bytes.extend_from_slice(&encoded("// 中\n", GBK));
        assert!(matches!(
            detect(&bytes).0,
            Verdict::Unsure(_, Doubt::Mixed { .. }) | Verdict::NotText
        ));
    }

    #[test]
    fn utf8_characters_are_counted_across_chunks() {
        let text = "aé€😀\u{FFFF}b".as_bytes();
        for cut in 0..text.len() {
            let mut count = Utf8Count::default();
            count.feed(&text[..cut]);
            count.feed(&text[cut..]);
            assert_eq!(count.valid, 2 + 3 + 4 + 3, "cut at {cut}");
        }
        let mut count = Utf8Count::default();
        // Overlong, surrogate, cut, lone continuation: none counts.
        count.feed(b"\xC0\xAF \xE0\x80\x80 \xED\xA0\x80 \xE2\x82 \x80 \xF4\x90\x80\x80");
        assert_eq!(count.valid, 0);
    }

    #[test]
    fn stateful_and_non_writable_guesses_are_unsupported() {
        let surveyed = Surveyed {
            guess: ISO_2022_JP,
            rated: true,
            non_ascii: 100,
            utf8: 0,
            exact: Vec::new(),
        };
        let mut trial = Trial::new(ISO_2022_JP);
        trial.feed(b"plain", true);
        assert_eq!(
            surveyed.verdict(&trial),
            Verdict::Unsure(ISO_2022_JP, Doubt::Unsupported)
        );
    }

    /// Every character a two-byte (or one-byte) sequence of `charset`
    /// decodes to and encodes back from: what a file in it can hold.
    fn storable(charset: &'static Charset) -> Vec<char> {
        let mut chars = Vec::new();
        let mut try_bytes = |bytes: &[u8]| {
            let Some(text) = charset.decode_without_bom_handling_and_without_replacement(bytes)
            else {
                return;
            };
            let mut one = text.chars();
            if let (Some(c), None) = (one.next(), one.next())
                && !c.is_ascii()
                && !is_binary_control(c)
                && charset.encode(&text).0.as_ref() == bytes
            {
                chars.push(c);
            }
        };
        for lead in 0x80..=0xFFu8 {
            try_bytes(&[lead]);
            for trail in 0x40..=0xFEu8 {
                try_bytes(&[lead, trail]);
            }
        }
        chars.sort_unstable();
        chars.dedup();
        chars
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// Text of characters an encoding can store is encoded and
        /// decoded back to itself, and the bytes come back exactly, in
        /// whatever chunks they are fed.
        #[test]
        fn storable_text_round_trips(
            which in 0..4usize,
            picks in proptest::collection::vec((0..100_000usize, proptest::bool::ANY), 0..200),
            cut in 0..1000usize,
        ) {
            use std::sync::LazyLock;
            static POOLS: LazyLock<Vec<(&'static Charset, Vec<char>)>> = LazyLock::new(|| {
                [WINDOWS_1252, SHIFT_JIS, GBK, EUC_KR]
                    .into_iter()
                    .map(|c| (c, storable(c)))
                    .collect()
            });
            let (charset, pool) = &POOLS[which];
            let text: String = picks
                .iter()
                .map(|&(i, ascii)| {
                    if ascii {
                        char::from(b" \nabcxyz=;{}"[i % 12])
                    } else {
                        pool[i % pool.len()]
                    }
                })
                .collect();
            let bytes = encode(&text, charset).expect("storable");
            let cut = cut.min(bytes.len());
            let mut trial = Trial::new(charset);
            let mut back = trial.feed(&bytes[..cut], false).to_owned();
            back.push_str(trial.feed(&bytes[cut..], true));
            proptest::prop_assert_eq!(&back, &text);
            proptest::prop_assert!(trial.is_exact());
            proptest::prop_assert_eq!(first_unencodable(&text, charset), None);
        }
    }
}
