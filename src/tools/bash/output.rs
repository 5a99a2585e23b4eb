//! The command's output in bounded memory: the first and the last bytes,
//! and counts of everything in between.

use std::collections::VecDeque;

use crate::limits::bash::MAX_OUTPUT_CHARS as MAX_CHARS;

/// Characters each of head and tail show when the output is cut.
const HALF_CHARS: usize = MAX_CHARS / 2;

/// Bytes kept at each end. A character is at most four bytes, and lossy
/// decoding turns every invalid byte sequence into one character, so this
/// many bytes always hold at least `HALF_CHARS` characters.
const KEEP_BYTES: usize = HALF_CHARS * 4;

/// Keeps the head and a tail ring of the output, and counts all of it.
#[derive(Debug, Default)]
pub(crate) struct Collector {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total_bytes: u64,
    total_newlines: u64,
}

/// What the result shows of the output.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Shown {
    /// Head and tail, decoded lossily; the whole output when nothing was cut.
    pub(crate) head: String,
    pub(crate) tail: String,
    /// What was left out of the middle; `None` when nothing was.
    pub(crate) omitted: Option<Omitted>,
}

/// The middle part left out of a result.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub(crate) struct Omitted {
    pub(crate) lines: u64,
    pub(crate) bytes: u64,
}

impl Collector {
    /// Takes the next chunk of output.
    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        self.total_bytes += bytes.len() as u64;
        self.total_newlines += memchr_count(bytes);
        if self.head.len() < KEEP_BYTES {
            let take = (KEEP_BYTES - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        if bytes.len() >= KEEP_BYTES {
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - KEEP_BYTES..]);
            return;
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(KEEP_BYTES);
        self.tail.drain(..overflow);
        self.tail.extend(bytes);
    }

    /// All bytes seen.
    pub(crate) fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    /// All lines seen (a last line without a newline counts).
    pub(crate) fn total_lines(&self) -> u64 {
        self.total_newlines + u64::from(!self.ends_with_newline() && self.total_bytes > 0)
    }

    fn ends_with_newline(&self) -> bool {
        match self.tail.back() {
            Some(b) => *b == b'\n',
            None => self.head.last() == Some(&b'\n'),
        }
    }

    /// What a result shows: everything if it fits in [`MAX_CHARS`], else a
    /// head and a tail of about half each, cut at line ends where a line end
    /// is near.
    pub(crate) fn shown(&self) -> Shown {
        let dropped = self.total_bytes - (self.head.len() + self.tail.len()) as u64;
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        if dropped == 0 {
            let mut all = self.head.clone();
            all.extend_from_slice(&tail);
            if lossy_chars(&all) <= MAX_CHARS {
                return Shown {
                    head: String::from_utf8_lossy(&all).into_owned(),
                    tail: String::new(),
                    omitted: None,
                };
            }
            // Enough characters for a head and a tail that do not overlap.
            return self.cut(&all, &all);
        }
        self.cut(&self.head, &tail)
    }

    fn cut(&self, head: &[u8], tail: &[u8]) -> Shown {
        let head_end = align_end(head, prefix_len(head, HALF_CHARS));
        let tail_start = align_start(tail, suffix_start(tail, HALF_CHARS));
        let head = &head[..head_end];
        let tail = &tail[tail_start..];
        let shown_bytes = (head.len() + tail.len()) as u64;
        let omitted_bytes = self.total_bytes.saturating_sub(shown_bytes);
        let shown_newlines = memchr_count(head) + memchr_count(tail);
        Shown {
            head: String::from_utf8_lossy(head).into_owned(),
            tail: String::from_utf8_lossy(tail).into_owned(),
            omitted: Some(Omitted {
                lines: self.total_newlines.saturating_sub(shown_newlines),
                bytes: omitted_bytes,
            }),
        }
    }
}

/// Newlines in `bytes`, eight bytes at a time: in each 64-bit word a
/// byte's high bit is set exactly when it is a newline, and those bits are
/// summed in the word's byte lanes for up to 255 words before the lanes
/// are added up. A plain count (`filter(..).count()`) widened every byte
/// to 64 bits and took 14 % of a 100 MB flood's profile.
fn memchr_count(bytes: &[u8]) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const NEWLINES: u64 = 0x0a0a_0a0a_0a0a_0a0a;
    const EVEN: u64 = 0x00ff_00ff_00ff_00ff;
    let mut total = 0u64;
    for block in bytes.chunks(8 * 255) {
        let mut words = block.chunks_exact(8);
        let mut lanes = 0u64;
        for word in &mut words {
            let mut array = [0u8; 8];
            array.copy_from_slice(word);
            // Zero where the byte was a newline.
            let x = u64::from_ne_bytes(array) ^ NEWLINES;
            // High bit set where the byte is zero; no carry crosses bytes.
            let zero = !(((x & LOW7) + LOW7) | x | LOW7);
            lanes += zero >> 7;
        }
        // Each lane holds at most 255: add them in pairs, then all four.
        let pairs = (lanes & EVEN) + ((lanes >> 8) & EVEN);
        total += pairs.wrapping_mul(0x0001_0001_0001_0001) >> 48;
        total += words.remainder().iter().filter(|b| **b == b'\n').count() as u64;
    }
    total
}

/// Characters `bytes` decode to, lossily.
fn lossy_chars(bytes: &[u8]) -> usize {
    bytes
        .utf8_chunks()
        .map(|c| c.valid().chars().count() + usize::from(!c.invalid().is_empty()))
        .sum()
}

/// The byte length of the longest prefix of `bytes` that decodes (lossily)
/// to at most `max` characters.
fn prefix_len(bytes: &[u8], max: usize) -> usize {
    let mut chars = 0;
    let mut len = 0;
    for chunk in bytes.utf8_chunks() {
        for (i, _) in chunk.valid().char_indices() {
            if chars == max {
                return len + i;
            }
            chars += 1;
        }
        len += chunk.valid().len();
        if !chunk.invalid().is_empty() {
            if chars == max {
                return len;
            }
            chars += 1;
            len += chunk.invalid().len();
        }
    }
    len
}

/// Where the shortest suffix of `bytes` that holds the last `max` lossily
/// decoded characters starts. The suffix may begin inside a character that
/// the ring cut; that shows as one replacement character.
fn suffix_start(bytes: &[u8], max: usize) -> usize {
    let total = lossy_chars(bytes);
    if total <= max {
        return 0;
    }
    prefix_len(bytes, total - max)
}

/// Moves a head's end back to just after a line end, if one lies in the
/// head's second half; otherwise the head ends mid-line.
fn align_end(bytes: &[u8], end: usize) -> usize {
    match bytes[..end].iter().rposition(|b| *b == b'\n') {
        Some(nl) if nl + 1 >= end / 2 => nl + 1,
        _ => end,
    }
}

/// Moves a tail's start forward to just after a line end, if one lies in
/// the tail's first half; otherwise the tail starts mid-line.
fn align_start(bytes: &[u8], start: usize) -> usize {
    if start == 0 {
        return 0;
    }
    // The byte before `start` being a newline means we already begin a line.
    if bytes[start - 1] == b'\n' {
        return start;
    }
    let half = start + (bytes.len() - start) / 2;
    match bytes[start..half].iter().position(|b| *b == b'\n') {
        Some(nl) => start + nl + 1,
        None => start,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(chunks: &[&[u8]]) -> Collector {
        let mut c = Collector::default();
        for chunk in chunks {
            c.push(chunk);
        }
        c
    }

    #[test]
    fn small_output_is_shown_whole() {
        let c = collect(&[b"a\n", b"b\n"]);
        let shown = c.shown();
        assert_eq!(shown.head, "a\nb\n");
        assert_eq!(shown.omitted, None);
        assert_eq!(c.total_lines(), 2);
    }

    #[test]
    fn invalid_utf8_is_lossy() {
        let c = collect(&[b"ok \xff\xfe end"]);
        assert_eq!(c.shown().head, "ok \u{fffd}\u{fffd} end");
    }

    #[test]
    fn big_output_keeps_head_and_tail_with_exact_counts() {
        let mut c = Collector::default();
        let mut all = Vec::new();
        for i in 0..100_000 {
            let line = format!("line {i}\n");
            all.extend_from_slice(line.as_bytes());
            c.push(line.as_bytes());
        }
        let shown = c.shown();
        let omitted = shown.omitted.unwrap();
        assert!(shown.head.starts_with("line 0\n"));
        assert!(shown.tail.ends_with("line 99999\n"));
        assert!(shown.head.ends_with('\n'));
        assert!(shown.tail.starts_with("line "));
        assert!(shown.head.chars().count() + shown.tail.chars().count() <= MAX_CHARS);
        let shown_lines = shown.head.lines().count() + shown.tail.lines().count();
        assert_eq!(omitted.lines as usize + shown_lines, 100_000);
        assert_eq!(
            omitted.bytes as usize + shown.head.len() + shown.tail.len(),
            all.len()
        );
        // The omitted middle is exactly the part between head and tail.
        let mid = &all[shown.head.len()..all.len() - shown.tail.len()];
        assert_eq!(memchr_count(mid), omitted.lines);
    }

    #[test]
    fn just_over_the_cap_without_drops_cuts_without_overlap() {
        let text = "x".repeat(MAX_CHARS + 10);
        let c = collect(&[text.as_bytes()]);
        let shown = c.shown();
        assert_eq!(shown.head.len(), HALF_CHARS);
        assert_eq!(shown.tail.len(), HALF_CHARS);
        assert_eq!(shown.omitted.unwrap().bytes, 10);
        assert_eq!(shown.omitted.unwrap().lines, 0);
    }

    #[test]
    fn multibyte_characters_are_counted_as_characters() {
        let text = "é".repeat(MAX_CHARS);
        let c = collect(&[text.as_bytes()]);
        let shown = c.shown();
        assert_eq!(shown.omitted, None);
        assert_eq!(shown.head.chars().count(), MAX_CHARS);
    }

    #[test]
    fn huge_single_chunk_keeps_its_end() {
        let mut big = vec![b'a'; 1_000_000];
        big.extend_from_slice(b"THE END");
        let c = collect(&[b"START", &big]);
        let shown = c.shown();
        assert!(shown.head.starts_with("START"));
        assert!(shown.tail.ends_with("THE END"));
        assert_eq!(c.total_bytes(), 1_000_012);
        assert!(c.tail.len() <= KEEP_BYTES && c.head.len() <= KEEP_BYTES);
    }

    #[test]
    fn newlines_are_counted_in_every_length_and_position() {
        for len in [0, 1, 7, 8, 9, 2039, 2040, 2041, 4080, 20_000, 100_003] {
            let bytes: Vec<u8> = (0..len)
                .map(|i: usize| {
                    if i.is_multiple_of(3) || i.is_multiple_of(7) {
                        b'\n'
                    } else {
                        b'y'
                    }
                })
                .collect();
            let plain = bytes.iter().filter(|b| **b == b'\n').count() as u64;
            assert_eq!(memchr_count(&bytes), plain, "length {len}");
        }
        assert_eq!(memchr_count(&vec![b'\n'; 100_000]), 100_000);
    }

    proptest::proptest! {
        #[test]
        fn the_newline_count_is_the_plain_one(
            bytes in proptest::collection::vec(
                proptest::prop_oneof![proptest::strategy::Just(b'\n'), proptest::num::u8::ANY],
                0..5000,
            ),
            skip in 0usize..8,
        ) {
            let bytes = &bytes[skip.min(bytes.len())..];
            let plain = bytes.iter().filter(|b| **b == b'\n').count() as u64;
            proptest::prop_assert_eq!(memchr_count(bytes), plain);
        }
    }

    #[test]
    fn prefix_and_suffix_count_lossy_characters() {
        assert_eq!(prefix_len(b"ab\xffcd", 3), 3);
        assert_eq!(prefix_len("éa".as_bytes(), 1), 2);
        assert_eq!(suffix_start(b"ab\xffcd", 2), 3);
        assert_eq!(lossy_chars(b"a\xff\xfeb"), 4);
    }
}
