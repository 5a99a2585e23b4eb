//! Decoding a text file chunk by chunk for `read`: UTF-8 checked as it
//! streams, UTF-16 and UTF-32 turned into UTF-8.

use encoding_rs::{Decoder, UTF_16BE, UTF_16LE};

use super::lines::LineCollector;
use crate::tools::text::Encoding;

/// Turns raw chunks into UTF-8-ish bytes for the line collector and tells
/// whether the whole file was valid text.
pub(super) enum TextDecoder {
    Utf8 {
        /// An incomplete UTF-8 sequence at the end of the last chunk.
        carry: Vec<u8>,
        valid: bool,
    },
    Utf16 {
        decoder: Box<Decoder>,
        out: String,
        valid: bool,
    },
    Utf32 {
        /// An incomplete unit at the end of the last chunk.
        carry: Vec<u8>,
        big_endian: bool,
        out: String,
        valid: bool,
    },
}

impl TextDecoder {
    /// A decoder for text stored in `encoding`, fed the bytes after the
    /// BOM.
    pub(super) fn new(encoding: Encoding) -> Self {
        let utf16 = match encoding {
            Encoding::Utf8 | Encoding::Utf8Bom => {
                return TextDecoder::Utf8 {
                    carry: Vec::new(),
                    valid: true,
                };
            }
            Encoding::Utf16Le => UTF_16LE,
            Encoding::Utf16Be => UTF_16BE,
            Encoding::Utf32Le | Encoding::Utf32Be => {
                return TextDecoder::Utf32 {
                    carry: Vec::new(),
                    big_endian: encoding == Encoding::Utf32Be,
                    out: String::new(),
                    valid: true,
                };
            }
        };
        TextDecoder::Utf16 {
            decoder: Box::new(utf16.new_decoder_without_bom_handling()),
            out: String::new(),
            valid: true,
        }
    }

    pub(super) fn feed(&mut self, chunk: &[u8], last: bool, lines: &mut LineCollector) {
        match self {
            TextDecoder::Utf8 { carry, valid } => {
                if *valid {
                    check_utf8(carry, chunk, last, valid);
                }
                lines.feed(chunk);
            }
            TextDecoder::Utf16 {
                decoder,
                out,
                valid,
            } => {
                out.clear();
                let need = decoder
                    .max_utf8_buffer_length(chunk.len())
                    .unwrap_or(chunk.len() * 3 + 16);
                out.reserve(need);
                let (_, _, replaced) = decoder.decode_to_string(chunk, out, last);
                if replaced {
                    *valid = false;
                }
                lines.feed(out.as_bytes());
            }
            TextDecoder::Utf32 {
                carry,
                big_endian,
                out,
                valid,
            } => {
                out.clear();
                let mut rest = chunk;
                if !carry.is_empty() {
                    let take = rest.len().min(4 - carry.len());
                    carry.extend_from_slice(&rest[..take]);
                    rest = &rest[take..];
                    if carry.len() == 4 {
                        push_utf32(carry, *big_endian, out, valid);
                        carry.clear();
                    }
                }
                let whole = rest.len() - rest.len() % 4;
                for unit in rest[..whole].chunks_exact(4) {
                    push_utf32(unit, *big_endian, out, valid);
                }
                carry.extend_from_slice(&rest[whole..]);
                if last && !carry.is_empty() {
                    *valid = false;
                }
                lines.feed(out.as_bytes());
            }
        }
    }

    pub(super) fn is_valid(&self) -> bool {
        match self {
            TextDecoder::Utf8 { valid, .. }
            | TextDecoder::Utf16 { valid, .. }
            | TextDecoder::Utf32 { valid, .. } => *valid,
        }
    }
}

/// One UTF-32 unit decoded into `out`; U+FFFD (and not valid) for a
/// surrogate or a unit past U+10FFFF.
fn push_utf32(unit: &[u8], big_endian: bool, out: &mut String, valid: &mut bool) {
    let bytes = [unit[0], unit[1], unit[2], unit[3]];
    let n = if big_endian {
        u32::from_be_bytes(bytes)
    } else {
        u32::from_le_bytes(bytes)
    };
    match char::from_u32(n) {
        Some(c) => out.push(c),
        None => {
            *valid = false;
            out.push(char::REPLACEMENT_CHARACTER);
        }
    }
}

/// Streaming UTF-8 validation: `carry` holds a sequence cut by the chunk
/// boundary (at most 3 bytes).
fn check_utf8(carry: &mut Vec<u8>, chunk: &[u8], last: bool, valid: &mut bool) {
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

#[cfg(test)]
mod tests {
    use super::*;

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
