//! The content hash of the ledger: XXH3-128 of a file's bytes, of a whole
//! buffer, a file streamed through a bounded buffer, or chunks as a tool
//! reads them.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use xxhash_rust::xxh3::Xxh3;

/// XXH3-128 of `bytes`: the hash a [`ReadStamp`](super::ReadStamp) holds.
pub fn hash_bytes(bytes: &[u8]) -> u128 {
    xxhash_rust::xxh3::xxh3_128(bytes)
}

/// Streams the file at `path` through XXH3-128; returns the hash and the
/// number of bytes read. Memory is bounded by a 64 KiB buffer. Only a
/// regular file is hashed: the last component is not followed and the
/// open does not block, so a FIFO or device is an error, never a hang.
pub(crate) fn hash_file(path: &Path) -> io::Result<(u128, u64)> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = File::options()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    hash_reader(file)
}

/// Streams an open file through XXH3-128 from its first byte, whatever its
/// offset (positional reads; the offset is left as it was).
pub(crate) fn hash_open_file(file: &File) -> io::Result<(u128, u64)> {
    use std::os::unix::fs::FileExt;
    let mut hasher = StreamHasher::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut at = 0u64;
    loop {
        match file.read_at(&mut buf, at) {
            Ok(0) => break,
            Ok(n) => {
                hasher.update(&buf[..n]);
                at += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(hasher.finish())
}

/// Streams `reader` through XXH3-128; returns the hash and the byte count.
pub(super) fn hash_reader(mut reader: impl Read) -> io::Result<(u128, u64)> {
    let mut hasher = StreamHasher::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => hasher.update(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(hasher.finish())
}

/// An incremental version of [`hash_bytes`], for tools that read a file in
/// chunks anyway (read hashes while it streams lines).
#[derive(Clone)]
pub(crate) struct StreamHasher {
    state: Box<Xxh3>,
    len: u64,
}

impl StreamHasher {
    /// A hasher that has seen nothing.
    pub(crate) fn new() -> Self {
        Self {
            state: Box::new(Xxh3::new()),
            len: 0,
        }
    }

    /// Feeds `bytes`.
    pub(crate) fn update(&mut self, bytes: &[u8]) {
        self.state.update(bytes);
        self.len += bytes.len() as u64;
    }

    /// The hash of everything fed, equal to [`hash_bytes`] of it, and its
    /// length.
    pub(crate) fn finish(&self) -> (u128, u64) {
        (self.state.digest128(), self.len)
    }
}

impl Default for StreamHasher {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for StreamHasher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamHasher")
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}
