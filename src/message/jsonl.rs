//! Reading input one line at a time with a cap on a line's length, for
//! `agentcore run` and `agentcore mcp`.
//!
//! `read_until` cannot be bounded: it returns only at a newline or at the
//! end of input, so a peer that never sends a newline makes it buffer
//! everything. [`LineReader`] copies from the reader's buffer with the cap
//! checked before every append; a line over the cap is read on and dropped
//! up to its newline (its bytes can be shown to an observer as they pass,
//! never kept), and reported as [`Line::TooLong`].

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

use crate::limits::input::{MAX_DEPTH, MAX_VALUES};

/// The capacity kept between lines after a long one.
const KEEP_CAPACITY: usize = 64 * 1024;

/// One line of input.
#[derive(Debug, PartialEq, Eq)]
pub enum Line<'a> {
    /// A whole line without its `\n` (a last line may have none).
    Text(&'a [u8]),
    /// A line longer than the cap: `len` bytes (newline excluded) were read
    /// and dropped.
    TooLong {
        /// The line's length in bytes.
        len: u64,
    },
    /// The end of the input.
    End,
}

/// Lines of at most `max` bytes from an [`AsyncBufRead`].
///
/// Cancel-safe: [`next`](Self::next) keeps its progress in the reader, so
/// a call dropped at an await point loses nothing and the next call goes
/// on with the same line.
#[derive(Debug)]
pub struct LineReader<R> {
    inner: R,
    max: usize,
    /// The line being read.
    buf: Vec<u8>,
    /// `buf` holds the line returned last time: clear it first.
    returned: bool,
    /// Reading past the cap: the bytes of this line dropped so far.
    dropping: Option<u64>,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    /// Lines of at most `max` bytes from `inner`.
    pub fn new(inner: R, max: usize) -> Self {
        Self {
            inner,
            max,
            buf: Vec::new(),
            returned: false,
            dropping: None,
        }
    }

    /// The next line. The bytes of a line over the cap go to `observe` in
    /// order, in pieces, as they are dropped (newline excluded); other
    /// lines are not shown to it.
    pub async fn next(
        &mut self,
        observe: &mut (dyn FnMut(&[u8]) + Send),
    ) -> std::io::Result<Line<'_>> {
        if self.returned {
            self.returned = false;
            self.buf.clear();
            if self.buf.capacity() > KEEP_CAPACITY {
                self.buf.shrink_to(KEEP_CAPACITY);
            }
        }
        loop {
            let available = self.inner.fill_buf().await?;
            if available.is_empty() {
                if let Some(len) = self.dropping.take() {
                    return Ok(Line::TooLong { len });
                }
                if self.buf.is_empty() {
                    return Ok(Line::End);
                }
                self.returned = true;
                return Ok(Line::Text(&self.buf));
            }
            let newline = memchr::memchr(b'\n', available);
            let content = &available[..newline.unwrap_or(available.len())];
            let consumed = newline.map_or(available.len(), |at| at + 1);
            // No await from here to `consume`: the copy and the consume
            // happen together or not at all.
            if let Some(len) = self.dropping.as_mut() {
                observe(content);
                *len += content.len() as u64;
            } else if self.buf.len().saturating_add(content.len()) > self.max {
                observe(&self.buf);
                observe(content);
                self.dropping = Some((self.buf.len() + content.len()) as u64);
                self.buf.clear();
            } else {
                self.buf.extend_from_slice(content);
            }
            self.inner.consume(consumed);
            if newline.is_some() {
                if let Some(len) = self.dropping.take() {
                    return Ok(Line::TooLong { len });
                }
                self.returned = true;
                return Ok(Line::Text(&self.buf));
            }
        }
    }
}

/// What a look at a line's structure found.
#[derive(Debug, PartialEq, Eq)]
pub enum Structure {
    /// Within both limits (or not JSON at all: the parser says so).
    Fine,
    /// Nested deeper than [`MAX_DEPTH`].
    TooDeep,
    /// More than [`MAX_VALUES`] values.
    TooManyValues,
}

/// Counts the nesting and the values of a JSON text without parsing it
/// (string contents skipped), stopping at the first limit passed. Not a
/// validator: the parser judges the syntax after it.
pub fn structure(line: &[u8]) -> Structure {
    let (mut depth, mut values) = (0usize, 1usize);
    let mut rest = line;
    while let Some((&byte, tail)) = rest.split_first() {
        rest = tail;
        match byte {
            b'"' => loop {
                let Some(at) = memchr::memchr2(b'"', b'\\', rest) else {
                    return Structure::Fine;
                };
                let hit = rest[at];
                rest = &rest[at + 1..];
                if hit == b'"' {
                    break;
                }
                // A backslash: the byte after it is escaped.
                rest = rest.get(1..).unwrap_or_default();
            },
            b'[' | b'{' => {
                depth += 1;
                values += 1;
                if depth > MAX_DEPTH {
                    return Structure::TooDeep;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b',' => values += 1,
            _ => {}
        }
        if values > MAX_VALUES {
            return Structure::TooManyValues;
        }
    }
    Structure::Fine
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line of `input` read through a reader buffering `chunk` bytes
    /// at a time, as owned values, with what the observer saw.
    async fn read_all(
        input: &[u8],
        max: usize,
        chunk: usize,
    ) -> (Vec<Result<Vec<u8>, u64>>, Vec<u8>) {
        let reader = tokio::io::BufReader::with_capacity(chunk, input);
        let mut lines = LineReader::new(reader, max);
        let mut out = Vec::new();
        let mut seen = Vec::new();
        loop {
            match lines
                .next(&mut |bytes| seen.extend_from_slice(bytes))
                .await
                .unwrap()
            {
                Line::Text(text) => out.push(Ok(text.to_vec())),
                Line::TooLong { len } => out.push(Err(len)),
                Line::End => return (out, seen),
            }
        }
    }

    #[tokio::test]
    async fn lines_up_to_the_cap_are_whole_and_longer_ones_are_dropped_to_their_newline() {
        for chunk in [1, 3, 8, 1024] {
            let input = b"short\n0123456789\n0123456789ab\n\nlast";
            let (lines, seen) = read_all(input, 10, chunk).await;
            assert_eq!(
                lines,
                [
                    Ok(b"short".to_vec()),
                    Ok(b"0123456789".to_vec()),
                    Err(12),
                    Ok(Vec::new()),
                    Ok(b"last".to_vec()),
                ],
                "chunk {chunk}"
            );
            assert_eq!(seen, b"0123456789ab", "chunk {chunk}");
        }
    }

    #[tokio::test]
    async fn an_endless_line_is_reported_at_the_end_of_input_without_being_kept() {
        let input = vec![b'x'; 100_000];
        let (lines, seen) = read_all(&input, 1000, 4096).await;
        assert_eq!(lines, [Err(100_000)]);
        assert_eq!(seen.len(), 100_000);
    }

    #[tokio::test]
    async fn a_cancelled_read_resumes_the_same_line() {
        let (mut client, server) = tokio::io::duplex(64);
        let mut lines = LineReader::new(tokio::io::BufReader::new(server), 100);
        use tokio::io::AsyncWriteExt;
        client.write_all(b"{\"half\":").await.unwrap();
        let pending = tokio::time::timeout(
            std::time::Duration::from_millis(20),
            lines.next(&mut |_| {}),
        )
        .await;
        assert!(pending.is_err(), "no line yet");
        client.write_all(b" 1}\nnext\n").await.unwrap();
        assert_eq!(
            lines.next(&mut |_| {}).await.unwrap(),
            Line::Text(b"{\"half\": 1}")
        );
        assert_eq!(lines.next(&mut |_| {}).await.unwrap(), Line::Text(b"next"));
    }

    #[test]
    fn structure_counts_nesting_and_values_outside_strings() {
        assert_eq!(
            structure(br#"{"a":[1,2,{"b":"[[[,,,\"[{"}]}"#),
            Structure::Fine
        );
        let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert_eq!(structure(nested(MAX_DEPTH).as_bytes()), Structure::Fine);
        assert_eq!(
            structure(nested(MAX_DEPTH + 1).as_bytes()),
            Structure::TooDeep
        );
        // Brackets in strings, escaped quotes included, are not structure.
        let in_string = format!(r#"{{"s":"\"{}"}}"#, "[".repeat(1000));
        assert_eq!(structure(in_string.as_bytes()), Structure::Fine);
        let many = |n: usize| format!("[{}]", vec!["0"; n].join(","));
        assert_eq!(structure(many(MAX_VALUES - 1).as_bytes()), Structure::Fine);
        assert_eq!(
            structure(many(MAX_VALUES + 1).as_bytes()),
            Structure::TooManyValues
        );
        // A large string is one value.
        let big = format!(r#"{{"content":"{}"}}"#, "x,".repeat(1 << 20));
        assert_eq!(structure(big.as_bytes()), Structure::Fine);
    }
}
