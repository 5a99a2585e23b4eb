//! Files that are not UTF-8, searched decoded: the reader that notices
//! them ([`Utf8Watch`]), and the searcher that decodes one from its
//! legacy encoding ([`decoding_searcher`]).
//!
//! Every file is searched as bytes first, as ripgrep does; the watch
//! checks the bytes as they pass (no second read). Only a file that turns
//! out not to be UTF-8, has no byte-order mark and is not binary is read
//! again to judge its encoding ([`crate::tools::text::legacy::judge`]);
//! when that is sure, the file is searched once more, decoded to UTF-8,
//! so a pattern with non-ASCII characters finds it and its lines are
//! shown in UTF-8. A file whose encoding is only a guess is searched as
//! bytes, as before.

use std::io::{self, Read};

use encoding_rs::Encoding as Charset;
use grep_searcher::{Searcher, SearcherBuilder};

use crate::tools::text::{Encoding, check_utf8};

/// A reader that checks whether the bytes read through it are UTF-8.
pub(crate) struct Utf8Watch<R> {
    pub(crate) inner: R,
    carry: Vec<u8>,
    valid: bool,
    /// Whether the first bytes were read (and a BOM looked for).
    started: bool,
    /// Whether the file starts with a byte-order mark: then the searcher
    /// decodes it itself (UTF-16), or it is UTF-8 by its own say.
    bom: bool,
}

impl<R> Utf8Watch<R> {
    pub(crate) fn new(inner: R) -> Self {
        Self {
            inner,
            carry: Vec::new(),
            valid: true,
            started: false,
            bom: false,
        }
    }

    /// Whether the bytes read were not UTF-8 and had no BOM.
    pub(crate) fn not_utf8(&self) -> bool {
        !self.bom && !self.valid
    }
}

impl<R: Read> Read for Utf8Watch<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let got = &buf[..n];
        if !self.started {
            self.started = true;
            self.bom = Encoding::sniff(got) != Encoding::Utf8;
        }
        if self.valid && !self.bom {
            check_utf8(&mut self.carry, got, n == 0, &mut self.valid);
        }
        Ok(n)
    }
}

/// A searcher as `builder` makes them, decoding from `charset` to UTF-8
/// (`None` if the searcher does not know the encoding by its name).
pub(crate) fn decoding_searcher(
    builder: &SearcherBuilder,
    charset: &'static Charset,
) -> Option<Searcher> {
    let encoding = grep_searcher::Encoding::new(charset.name()).ok()?;
    let mut builder = builder.clone();
    builder.encoding(Some(encoding));
    Some(builder.build())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watched(bytes: &[u8], chunk: usize) -> bool {
        let mut watch = Utf8Watch::new(bytes);
        let mut buf = vec![0u8; chunk];
        while watch.read(&mut buf).unwrap() > 0 {}
        watch.not_utf8()
    }

    #[test]
    fn the_watch_tells_utf8_from_other_bytes() {
        for chunk in [1, 2, 3, 64] {
            assert!(!watched("héllo 日本\n".as_bytes(), chunk));
            assert!(watched(b"caf\xE9\n", chunk));
            // A sequence cut at the end of the file.
            assert!(watched(b"ab\xE6\x97", chunk));
        }
        // A BOM says what the file is: not this watch's business.
        assert!(!watched(b"\xFF\xFEa\0\xE9\0", 64));
        assert!(!watched(b"\xEF\xBB\xBFcaf\xE9", 64));
    }

    #[test]
    fn every_rival_has_a_decoding_searcher() {
        for charset in crate::tools::text::legacy::RIVALS {
            assert!(
                decoding_searcher(&SearcherBuilder::new(), charset).is_some(),
                "{}",
                charset.name()
            );
        }
    }
}
