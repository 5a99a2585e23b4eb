//! Line anchors: `LINE:HASH`, the number of a line and a short hash of its
//! content, as `read` shows them beside each line when the session offers
//! `edit_lines` (`    12:a3f\t    return x`), and as `edit_lines` takes
//! them back.
//!
//! **The hash.** The first 12 bits of XXH3-64 (the ledger's hash family,
//! already a dependency) of the line's content as `read` shows it: its
//! bytes as UTF-8, without the line ending (`\n`, and one `\r` before it or
//! at the very end of the file), trailing whitespace included, so that any
//! change to a line changes what it is checked against. Written as three
//! lowercase hex digits.
//!
//! **Why 12 bits.** Every line a read shows carries one, so the width is
//! paid for in tokens on every line; three hex digits add about one token.
//! A collision cannot land an edit at the wrong place unnoticed, because
//! an anchor is accepted only when
//!
//! 1. line `LINE` exists and still hashes to `HASH`, and
//! 2. either the model was shown that very line by a read of the file as
//!    it is now (the ledger says so: then the line number is exact and the
//!    hash only confirms it), or `HASH` is unique among the lines within
//!    [`WINDOW`] lines of it.
//!
//! Rule 2 is what makes collisions *detected*: when the file moved under
//! the model's anchors (after its own edit, say) by `d` lines with `0 <
//! |d| ≤ WINDOW`, the line it meant is now within the window, so a line at
//! `LINE` with the same hash (by chance, or because it is the same text,
//! like `}` or an empty line) is not unique there and the anchor is refused
//! as ambiguous. A line that moved farther is caught by rule 1 unless the
//! line now at `LINE` hashes the same by chance (1 in 4,096) *and* nothing
//! within the window does; a range (`start` and `end`) must match at both
//! ends. Distinct lines colliding inside a window refuse an anchor they
//! did not need to refuse about 2·16/4,096 ≈ 0.8 % of the time, and only
//! when the model's read is not of the file as it is now: the refusal shows
//! the current lines, and a read makes them exact again.

use std::fmt;

use xxhash_rust::xxh3::Xxh3;

/// Lines on each side of an anchor among which its hash must be unique
/// when the model's read is not of the file as it is now.
pub const WINDOW: usize = 16;

/// Hex digits of a line hash.
pub const HASH_DIGITS: usize = 3;

/// The anchor hash of a line's content (without its line ending): the top
/// [`HASH_DIGITS`] × 4 bits of XXH3-64.
///
/// ```
/// use agentcore::tools::edit_lines::anchor::{LineHash, line_hash};
///
/// let h = line_hash(b"    return x");
/// assert_eq!(h.to_string().len(), 3);
/// assert_eq!(h, line_hash(b"    return x"));
/// assert_ne!(line_hash(b"    return x"), line_hash(b"    return x "));
/// assert_eq!(h.to_string().parse::<LineHash>().unwrap(), h);
/// ```
pub fn line_hash(content: &[u8]) -> LineHash {
    LineHash::of_digest(xxhash_rust::xxh3::xxh3_64(content))
}

/// A line's anchor hash: 12 bits, shown as three lowercase hex digits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LineHash(u16);

impl LineHash {
    fn of_digest(digest: u64) -> Self {
        // Only 12 bits survive the shift: the cast never truncates.
        Self((digest >> (64 - 4 * HASH_DIGITS)) as u16)
    }
}

impl fmt::Display for LineHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:03x}", self.0)
    }
}

/// Three hex digits (either case).
impl std::str::FromStr for LineHash {
    type Err = ();

    fn from_str(s: &str) -> Result<Self, ()> {
        if s.len() != HASH_DIGITS || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(());
        }
        u16::from_str_radix(s, 16).map(Self).map_err(|_| ())
    }
}

/// The hash of a line fed in parts, as `read` streams it: a `\r` that ends
/// the bytes so far is held back, so the one before the line's end (or the
/// end of the file) is left out as `read` leaves it out.
#[derive(Clone)]
pub(crate) struct LineHasher {
    hasher: Xxh3,
    pending_cr: bool,
}

impl LineHasher {
    pub(crate) fn new() -> Self {
        Self {
            hasher: Xxh3::new(),
            pending_cr: false,
        }
    }

    /// Feeds the next bytes of the line (never a `\n`).
    pub(crate) fn update(&mut self, part: &[u8]) {
        if part.is_empty() {
            return;
        }
        if std::mem::take(&mut self.pending_cr) {
            self.hasher.update(b"\r");
        }
        match part.strip_suffix(b"\r") {
            Some(body) => {
                self.hasher.update(body);
                self.pending_cr = true;
            }
            None => self.hasher.update(part),
        }
    }

    /// The hash of the line, a `\r` at its end left out; ready for the
    /// next line.
    pub(crate) fn finish(&mut self) -> LineHash {
        let hash = LineHash::of_digest(self.hasher.digest());
        self.hasher.reset();
        self.pending_cr = false;
        hash
    }
}

/// An anchor as the model gives it: `LINE:HASH` (`12:a3f`), or `0:` for
/// the top of the file (with `insert_after` only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Anchor {
    /// The 1-based line number; 0 for the top of the file.
    pub line: usize,
    /// The hash; `None` only for line 0.
    pub hash: Option<LineHash>,
}

impl fmt::Display for Anchor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.hash {
            Some(hash) => write!(f, "{}:{hash}", self.line),
            None => write!(f, "{}:", self.line),
        }
    }
}

/// Reads `LINE:HASH` (spaces around it ignored, so a prefix copied from
/// `read` with its padding works); the message says what an anchor is.
///
/// ```
/// use agentcore::tools::edit_lines::anchor::Anchor;
///
/// let a: Anchor = "  12:A3f".parse().unwrap();
/// assert_eq!((a.line, a.hash.unwrap().to_string()), (12, "a3f".to_owned()));
/// assert_eq!("0:".parse::<Anchor>().unwrap().hash, None);
/// assert!("12".parse::<Anchor>().is_err());
/// assert!("12:zz9".parse::<Anchor>().is_err());
/// assert!("0:abc".parse::<Anchor>().is_err());
/// ```
impl std::str::FromStr for Anchor {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bad = |why: &str| {
            let mut shown: String = s.chars().take(40).collect();
            if shown.len() < s.len() {
                shown.push('…');
            }
            format!(
                "anchor {shown:?} {why}; an anchor is LINE:HASH exactly as read shows it before a line's tab, e.g. \"12:a3f\" (or \"0:\" with insert_after for the top of the file)"
            )
        };
        let trimmed = s.trim();
        let Some((line, hash)) = trimmed.split_once(':') else {
            return Err(bad("has no ':'"));
        };
        if line.is_empty() || !line.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad("does not start with a line number"));
        }
        let line: usize = line
            .parse()
            .map_err(|_| bad("has a line number too large for any file"))?;
        if line == 0 {
            return if hash.is_empty() {
                Ok(Self { line, hash: None })
            } else {
                Err(bad(
                    "names line 0, which has no hash: write \"0:\" for the top of the file",
                ))
            };
        }
        let hash = hash
            .parse::<LineHash>()
            .map_err(|()| bad("does not end in a hash of 3 hex digits"))?;
        Ok(Self {
            line,
            hash: Some(hash),
        })
    }
}

/// Whether `line` starts as a line of read's anchored output: optional
/// spaces, digits, `:`, three hex digits, then a tab or `|`.
pub(crate) fn looks_anchored(line: &str) -> bool {
    let rest = line.trim_start_matches(' ');
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return false;
    }
    let rest = &rest.as_bytes()[digits..];
    rest.len() > HASH_DIGITS + 1
        && rest[0] == b':'
        && rest[1..=HASH_DIGITS].iter().all(u8::is_ascii_hexdigit)
        && matches!(rest[HASH_DIGITS + 1], b'\t' | b'|')
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn the_hash_is_pinned() {
        // A change of hash function would make every anchor a model holds
        // stale: pinned on purpose.
        assert_eq!(line_hash(b"").to_string().len(), 3);
        let pinned = LineHash::of_digest(xxhash_rust::xxh3::xxh3_64(b"fn main() {"));
        assert_eq!(line_hash(b"fn main() {"), pinned);
        assert_eq!(LineHash::of_digest(u64::MAX).to_string(), "fff");
        assert_eq!(
            LineHash::of_digest(0x00A0_0000_0000_0000).to_string(),
            "00a"
        );
    }

    #[test]
    fn a_streamed_line_leaves_out_one_final_cr() {
        let mut h = LineHasher::new();
        h.update(b"ab\r");
        h.update(b"c\r");
        assert_eq!(h.finish(), line_hash(b"ab\rc"));
        h.update(b"x\r\r");
        assert_eq!(h.finish(), line_hash(b"x\r"));
        assert_eq!(h.finish(), line_hash(b""));
    }

    #[test]
    fn anchors_refuse_garbage_saying_what_an_anchor_is() {
        for bad in [
            "",
            ":",
            "abc",
            "12",
            "12:",
            "12:ab",
            "12:abcd",
            "-1:abc",
            "x2:abc",
            "99999999999999999999999:abc",
            "0:abc",
            "12:a3f|    return x",
            "12:ab\u{e9}",
        ] {
            let err = bad.parse::<Anchor>().unwrap_err();
            assert!(err.contains("LINE:HASH"), "{bad}: {err}");
        }
        let long = "9".repeat(500);
        assert!(long.parse::<Anchor>().unwrap_err().len() < 300);
    }

    #[test]
    fn read_output_is_recognised() {
        assert!(looks_anchored("    12:a3f\t    return x"));
        assert!(looks_anchored("12:a3f|x"));
        assert!(!looks_anchored("12:a3fx"));
        assert!(!looks_anchored("key: value"));
        assert!(!looks_anchored("12:30\tdone"));
        assert!(!looks_anchored("    return x"));
    }

    proptest! {
        #[test]
        fn streaming_equals_one_shot(line in proptest::collection::vec(
            proptest::sample::select(b"ab\r ".to_vec()), 0..30), cuts in proptest::collection::vec(0usize..30, 0..4)) {
            let mut h = LineHasher::new();
            let mut at = 0;
            let mut cuts = cuts;
            cuts.sort_unstable();
            for cut in cuts {
                let cut = cut.min(line.len());
                h.update(&line[at..cut.max(at)]);
                at = cut.max(at);
            }
            h.update(&line[at..]);
            let expected = line.strip_suffix(b"\r").unwrap_or(&line);
            prop_assert_eq!(h.finish(), line_hash(expected));
        }

        #[test]
        fn every_anchor_reads_back(line in 1usize..1_000_000, bits in 0u16..4096) {
            let a = Anchor { line, hash: Some(LineHash(bits)) };
            prop_assert_eq!(a.to_string().parse::<Anchor>(), Ok(a));
        }
    }
}
