//! Decoding a text file chunk by chunk for `read`: UTF-8 checked as it
//! streams, UTF-16, UTF-32 and legacy encodings turned into UTF-8.

use encoding_rs::{Decoder, UTF_16BE, UTF_16LE};

use super::lines::LineCollector;
use crate::tools::text::legacy::Trial;
use crate::tools::text::{Encoding, check_utf8};

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
    /// A legacy encoding, judged as it decodes (see
    /// [`crate::tools::text::legacy`]): valid when it is text.
    Legacy(Box<Trial>),
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
            Encoding::Legacy(charset) => return TextDecoder::Legacy(Box::new(Trial::new(charset))),
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
            TextDecoder::Legacy(trial) => lines.feed(trial.feed(chunk, last).as_bytes()),
        }
    }

    /// The trial of a legacy encoding, to judge once the file is read.
    pub(super) fn trial(&self) -> Option<&Trial> {
        match self {
            TextDecoder::Legacy(trial) => Some(trial),
            _ => None,
        }
    }

    pub(super) fn is_valid(&self) -> bool {
        match self {
            TextDecoder::Utf8 { valid, .. }
            | TextDecoder::Utf16 { valid, .. }
            | TextDecoder::Utf32 { valid, .. } => *valid,
            TextDecoder::Legacy(trial) => trial.is_text(),
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
