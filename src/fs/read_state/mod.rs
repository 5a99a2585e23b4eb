//! [`FileReadState`]: the read-before-write ledger of one session.
//!
//! `read` records a [`ReadStamp`] for every file it shows; `write` and
//! `edit` ask [`FileReadState::freshness`] whether the model has seen the
//! file as it is now, and record a fresh stamp after their own write with
//! [`FileReadState::record_after_write`].
//!
//! ```
//! use agentcore::fs::read_state::{FileReadState, Freshness};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("a.txt");
//! std::fs::write(&path, "hello\n").unwrap();
//!
//! let state = FileReadState::new();
//! assert_eq!(state.freshness(&path).unwrap(), Freshness::NotRead);
//! state.record_after_write(&path, b"hello\n").unwrap();
//! assert_eq!(state.freshness(&path).unwrap(), Freshness::Unchanged);
//!
//! std::fs::write(&path, "changed\n").unwrap();
//! assert_eq!(state.freshness(&path).unwrap(), Freshness::Changed);
//! ```

use std::collections::HashMap;
use std::fs::{self, File, Metadata};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use crate::error_code::ErrorCode;

mod hash;

pub use hash::hash_bytes;
pub(crate) use hash::{StreamHasher, hash_file, hash_open_file};

/// How much older than the read time a file's mtime must be before equal
/// metadata alone proves the file unchanged (git's racy-clean rule). Two
/// seconds covers every common filesystem's timestamp granularity (FAT's is
/// the coarsest, at 2 s); within the window the file is rehashed instead.
pub(crate) const MTIME_GRANULARITY: Duration = Duration::from_secs(2);

/// What `read` saw of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadStamp {
    /// When the read started (taken before the file was opened).
    pub read_at: SystemTime,
    /// The file's modification time, where the platform reports one.
    pub mtime: Option<SystemTime>,
    /// The file's size in bytes.
    pub size: u64,
    /// The file's identity: device and inode (0, 0 where unknown).
    pub file_id: (u64, u64),
    /// XXH3-128 of the whole file's bytes.
    pub hash: u128,
    /// True when some line of this content has not been shown to the model
    /// in full (a range was left out, or a line was cut at 2,000
    /// characters), counting every read of the same content.
    pub partial: bool,
    /// For a text read: which lines were shown in full. `None` for stamps
    /// that are not about lines (an image, the tool's own write), where
    /// `partial` alone decides.
    pub shown: Option<ShownLines>,
}

impl ReadStamp {
    /// A stamp from the metadata of the file as read (best taken from the
    /// open handle, before reading), the hash of all its bytes, and when the
    /// read started.
    pub fn new(meta: &Metadata, hash: u128, partial: bool, read_at: SystemTime) -> Self {
        Self {
            read_at,
            mtime: meta.modified().ok(),
            size: meta.len(),
            file_id: file_id(meta),
            hash,
            partial,
            shown: None,
        }
    }

    /// A stamp for a text read that showed the lines in `shown` in full:
    /// partial unless they are every line of the file.
    pub fn of_lines(meta: &Metadata, hash: u128, shown: ShownLines, read_at: SystemTime) -> Self {
        let mut stamp = Self::new(meta, hash, !shown.is_complete(), read_at);
        stamp.shown = Some(shown);
        stamp
    }

    /// Whether this stamp and `other` were taken of the same bytes.
    fn same_content(&self, other: &ReadStamp) -> bool {
        self.hash == other.hash && self.size == other.size
    }

    /// True when `meta` alone proves the file unchanged: same identity,
    /// size and mtime, and that mtime older than the read by more than
    /// [`MTIME_GRANULARITY`] (so a write in the same tick as the read cannot
    /// hide behind an equal mtime).
    fn metadata_proves_unchanged(&self, meta: &Metadata) -> bool {
        let (Some(then), Ok(now)) = (self.mtime, meta.modified()) else {
            return false;
        };
        file_id(meta) == self.file_id
            && meta.len() == self.size
            && now == then
            && then
                .checked_add(MTIME_GRANULARITY)
                .is_some_and(|t| t < self.read_at)
    }
}

/// Which lines of a text file the model was shown in full: sorted,
/// disjoint, non-adjacent 1-based inclusive ranges, and the file's line
/// count. Reads of the same content add up with [`ShownLines::merge`].
///
/// ```
/// use agentcore::fs::read_state::ShownLines;
///
/// let mut shown = ShownLines::new(10);
/// shown.add(1, 4);
/// shown.add(8, 10);
/// assert_eq!(shown.describe(), "1–4, 8–10");
/// assert!(!shown.is_complete());
/// shown.add(5, 7);
/// assert!(shown.is_complete());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShownLines {
    ranges: Vec<(u64, u64)>,
    total: u64,
}

impl ShownLines {
    /// Nothing shown yet of a file of `total` lines.
    pub fn new(total: u64) -> Self {
        Self {
            ranges: Vec::new(),
            total,
        }
    }

    /// Marks lines `first..=last` as shown (clamped to the file; an empty
    /// or inverted range adds nothing).
    pub fn add(&mut self, first: u64, last: u64) {
        let first = first.max(1);
        let last = last.min(self.total);
        if first > last {
            return;
        }
        let (mut lo, mut hi) = (first, last);
        let mut kept = Vec::with_capacity(self.ranges.len() + 1);
        for &(a, b) in &self.ranges {
            // Overlapping or adjacent ranges join the new one.
            if b.saturating_add(1) < lo || hi.saturating_add(1) < a {
                kept.push((a, b));
            } else {
                lo = lo.min(a);
                hi = hi.max(b);
            }
        }
        kept.push((lo, hi));
        kept.sort_unstable();
        self.ranges = kept;
    }

    /// Adds what `other` showed; `false` (and nothing added) when it is
    /// about a file with another line count.
    pub fn merge(&mut self, other: &ShownLines) -> bool {
        if other.total != self.total {
            return false;
        }
        for &(a, b) in &other.ranges {
            self.add(a, b);
        }
        true
    }

    /// True when every line was shown (an empty file always is).
    pub fn is_complete(&self) -> bool {
        self.total == 0 || self.ranges == [(1, self.total)]
    }

    /// The shown ranges, sorted.
    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.ranges
    }

    /// The file's line count.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The shown ranges as `A–B, C–D` (en dashes; a single line is
    /// `A–A`), empty when nothing was shown in full.
    pub fn describe(&self) -> String {
        self.ranges
            .iter()
            .map(|(a, b)| format!("{a}\u{2013}{b}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Whether the model has seen a file as it is now, for write and edit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Freshness {
    /// No stamp: the file was never read (or was forgotten).
    NotRead,
    /// The file changed since the stamp (or was deleted).
    Changed,
    /// Unchanged since a partial read: enough for edit, not for write.
    Partial,
    /// Unchanged since a full read or the tool's own write.
    Unchanged,
}

/// Why `write` or `edit` refuses to change a file: the model has not seen
/// it as it is now. `Display` is the message the model reads;
/// [`StaleRead::code`] is its [`ErrorCode`].
///
/// ```
/// use agentcore::error_code::ErrorCode;
/// use agentcore::fs::read_state::StaleRead;
///
/// assert_eq!(StaleRead::NotRead.code(), ErrorCode::NotRead);
/// assert_eq!(
///     StaleRead::NotRead.to_string(),
///     "File has not been read yet. Read it first before writing to it."
/// );
/// assert_eq!(StaleRead::ModifiedSinceRead.code(), ErrorCode::ModifiedSinceRead);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StaleRead {
    /// The file is not in the ledger (code 2).
    #[error("File has not been read yet. Read it first before writing to it.")]
    NotRead,
    /// `write` over a file read only in part (code 2): the model would
    /// overwrite lines it never saw. Holds the lines shown in full, when
    /// the stamp is about lines.
    #[error(
        "File has only been read in part ({}). Read all of it before overwriting it, or change it with edit.",
        describe_part(.0.as_ref())
    )]
    ReadInPart(Option<ShownLines>),
    /// The file changed since it was read (code 3).
    #[error(
        "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it."
    )]
    ModifiedSinceRead,
    /// The file changed while the call waited at the gate: found by the
    /// last check, under the path lock, right before the write. Reported as
    /// the call's failure, after validation; [`StaleRead::code`] gives it
    /// code 3 like the change that validation finds.
    #[error("File has been unexpectedly modified. Read it again before attempting to write it.")]
    ModifiedBeforeWrite,
}

impl StaleRead {
    /// The code: [`ErrorCode::NotRead`] (2) for a file not read (in
    /// full), [`ErrorCode::ModifiedSinceRead`] (3) for a file changed since.
    pub fn code(&self) -> ErrorCode {
        match self {
            StaleRead::NotRead | StaleRead::ReadInPart(_) => ErrorCode::NotRead,
            StaleRead::ModifiedSinceRead | StaleRead::ModifiedBeforeWrite => {
                ErrorCode::ModifiedSinceRead
            }
        }
    }
}

/// The lines of a partial read: every range shown in full (e.g.
/// `1–2000, 2101–2300`) and the file's line count.
fn describe_part(shown: Option<&ShownLines>) -> String {
    match shown {
        Some(shown) if shown.ranges().is_empty() => {
            format!("none of lines 1\u{2013}{}", shown.total())
        }
        Some(shown) => format!("lines {} of {}", shown.describe(), shown.total()),
        // Not a text read (no stamp of this kind comes out partial today).
        None => "not every line".to_owned(),
    }
}

/// The refusal at validation: its code and message.
impl From<StaleRead> for agentcore_stages::ValidationFailure {
    fn from(refusal: StaleRead) -> Self {
        Self::new(refusal.code().into(), refusal.to_string())
    }
}

/// The read-before-write ledger, keyed by canonical path. One per session,
/// shared by `read`, `write` and `edit`: clones share the same ledger.
#[derive(Clone, Debug, Default)]
pub struct FileReadState {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    stamps: Mutex<HashMap<PathBuf, ReadStamp>>,
    locks: Mutex<HashMap<PathBuf, Arc<tokio::sync::Mutex<()>>>>,
    /// The bytes a change's validate step read, for its preview and
    /// change to use instead of reading the file again (one slot).
    snapshot: Mutex<Option<Snapshot>>,
}

/// A file's bytes as a change's validate step read them, with the
/// metadata of the handle they came through and their hash. Used only
/// while the file's metadata is still exactly that (same inode, size,
/// modification and change times, link count).
pub(crate) struct Snapshot {
    path: PathBuf,
    key: MetaKey,
    /// The bytes.
    pub(crate) bytes: Arc<Vec<u8>>,
    /// XXH3-128 of the bytes.
    pub(crate) hash: u128,
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot")
            .field("path", &self.path)
            .field("key", &self.key)
            .field("bytes", &self.bytes.len())
            .finish()
    }
}

/// What must not have changed for a [`Snapshot`] to stand for the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct MetaKey {
    id: (u64, u64),
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
    nlink: u64,
}

impl MetaKey {
    #[cfg(unix)]
    fn of(meta: &Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        Self {
            id: (meta.dev(), meta.ino()),
            len: meta.len(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
            nlink: meta.nlink(),
        }
    }

    #[cfg(not(unix))]
    fn of(meta: &Metadata) -> Self {
        Self {
            id: (0, 0),
            len: meta.len(),
            mtime: (0, 0),
            ctime: (0, 0),
            nlink: 1,
        }
    }
}

impl FileReadState {
    /// An empty ledger.
    pub fn new() -> Self {
        Self::default()
    }

    fn stamps(&self) -> MutexGuard<'_, HashMap<PathBuf, ReadStamp>> {
        // Every update is one insert or remove; a panic elsewhere cannot
        // leave the map half-written, so a poisoned lock is still usable.
        self.inner.stamps.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records `stamp` for `path` (canonical), replacing any earlier one,
    /// except that reads of the same content (same hash and size) add up:
    /// a partial stamp after a full one stays full, and partial stamps
    /// whose shown lines together cover the file become full.
    pub fn record(&self, path: impl Into<PathBuf>, mut stamp: ReadStamp) {
        let path = path.into();
        let mut stamps = self.stamps();
        if stamp.partial
            && let Some(old) = stamps.get(&path)
            && old.same_content(&stamp)
        {
            if !old.partial {
                // Everything of this content was seen before.
                stamp.partial = false;
                if let Some(shown) = stamp.shown.as_mut() {
                    let total = shown.total();
                    shown.add(1, total);
                }
            } else if let (Some(new), Some(before)) = (stamp.shown.as_mut(), old.shown.as_ref())
                && new.merge(before)
            {
                stamp.partial = !new.is_complete();
            }
        }
        stamps.insert(path, stamp);
    }

    /// The stamp for `path` (canonical), if any.
    pub fn get(&self, path: &Path) -> Option<ReadStamp> {
        self.stamps().get(path).cloned()
    }

    /// Forgets `path`: the model must read it again before writing it.
    pub fn forget(&self, path: &Path) {
        self.stamps().remove(path);
    }

    /// Forgets every file, e.g. after the harness compacted the context.
    pub fn clear(&self) {
        self.stamps().clear();
    }

    /// How many files have a stamp.
    pub fn len(&self) -> usize {
        self.stamps().len()
    }

    /// True when no file has a stamp.
    pub fn is_empty(&self) -> bool {
        self.stamps().is_empty()
    }

    /// Whether the file at `path` (canonical) is as the model last saw it.
    ///
    /// Judged as docs/tools.md says: no stamp is [`Freshness::NotRead`]; a
    /// missing file is [`Freshness::Changed`]; equal identity, size and
    /// mtime with the mtime safely older than the read is unchanged without
    /// reading; otherwise the whole file is hashed and equal bytes (a
    /// touched file, a coarse-mtime filesystem) count as unchanged. An
    /// unchanged file with a partial stamp is [`Freshness::Partial`].
    ///
    /// Blocking (it may hash the file): call it from blocking code.
    pub fn freshness(&self, path: &Path) -> io::Result<Freshness> {
        let Some(stamp) = self.get(path) else {
            return Ok(Freshness::NotRead);
        };
        let meta = match fs::symlink_metadata(path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Freshness::Changed),
            Err(e) => return Err(e),
        };
        if !meta.is_file() {
            return Ok(Freshness::Changed);
        }
        let unchanged = stamp.metadata_proves_unchanged(&meta)
            || (meta.len() == stamp.size && hash_file(path)?.0 == stamp.hash);
        Ok(match (unchanged, stamp.partial) {
            (false, _) => Freshness::Changed,
            (true, true) => Freshness::Partial,
            (true, false) => Freshness::Unchanged,
        })
    }

    /// [`FileReadState::freshness`] of `path` judged through `file`, a
    /// handle to it already opened safely (beneath the workspace root, no
    /// link followed), with `meta` its metadata: nothing is looked up by
    /// path again. Blocking (it may hash the file).
    pub(crate) fn freshness_of(
        &self,
        path: &Path,
        file: &File,
        meta: &Metadata,
    ) -> io::Result<Freshness> {
        let Some(stamp) = self.get(path) else {
            return Ok(Freshness::NotRead);
        };
        let unchanged = stamp.metadata_proves_unchanged(meta)
            || (meta.len() == stamp.size && hash_open_file(file)?.0 == stamp.hash);
        Ok(match (unchanged, stamp.partial) {
            (false, _) => Freshness::Changed,
            (true, true) => Freshness::Partial,
            (true, false) => Freshness::Unchanged,
        })
    }

    /// Whether the file at `path` with metadata `meta` is unchanged since
    /// it was stamped, [`FileReadState::freshness_of`] with the hash of
    /// bytes already read through that handle instead of reading them
    /// again.
    pub(crate) fn freshness_by_hash(&self, path: &Path, meta: &Metadata, hash: u128) -> Freshness {
        let Some(stamp) = self.get(path) else {
            return Freshness::NotRead;
        };
        let unchanged = stamp.metadata_proves_unchanged(meta)
            || (meta.len() == stamp.size && hash == stamp.hash);
        match (unchanged, stamp.partial) {
            (false, _) => Freshness::Changed,
            (true, true) => Freshness::Partial,
            (true, false) => Freshness::Unchanged,
        }
    }

    /// Keeps the bytes a change's validate step read from `path` (through
    /// a handle with metadata `meta`), in place of any kept before.
    pub(crate) fn keep_snapshot(&self, path: &Path, meta: &Metadata, bytes: Vec<u8>, hash: u128) {
        let snapshot = Snapshot {
            path: path.to_path_buf(),
            key: MetaKey::of(meta),
            bytes: Arc::new(bytes),
            hash,
        };
        *self
            .inner
            .snapshot
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(snapshot);
    }

    /// The bytes kept for `path`, if the file's metadata is still `meta`'s
    /// (a handle opened since); the slot keeps them unless `take`.
    pub(crate) fn snapshot(
        &self,
        path: &Path,
        meta: &Metadata,
        take: bool,
    ) -> Option<(Arc<Vec<u8>>, u128)> {
        let mut slot = self
            .inner
            .snapshot
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let kept = slot.as_ref()?;
        if kept.path != path || kept.key != MetaKey::of(meta) {
            if take {
                *slot = None;
            }
            return None;
        }
        let found = (kept.bytes.clone(), kept.hash);
        if take {
            *slot = None;
        }
        Some(found)
    }

    /// Drops the kept bytes, if any.
    pub(crate) fn drop_snapshot(&self) {
        *self
            .inner
            .snapshot
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// Records a full stamp after the tool itself wrote `bytes` to `path`
    /// (canonical), so edit after edit needs no new read. Blocking (a stat).
    pub fn record_after_write(&self, path: &Path, bytes: &[u8]) -> io::Result<ReadStamp> {
        let read_at = SystemTime::now();
        let meta = fs::metadata(path)?;
        let stamp = ReadStamp::new(&meta, hash_bytes(bytes), false, read_at);
        self.record(path, stamp.clone());
        Ok(stamp)
    }

    /// A lock for `path` (canonical), for write and edit to hold from their
    /// last freshness check to the end of their write, so two calls cannot
    /// interleave on one file.
    pub fn path_lock(&self, path: &Path) -> Arc<tokio::sync::Mutex<()>> {
        let mut locks = self.inner.locks.lock().unwrap_or_else(|p| p.into_inner());
        locks.entry(path.to_path_buf()).or_default().clone()
    }
}

#[cfg(unix)]
fn file_id(meta: &Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn file_id(_meta: &Metadata) -> (u64, u64) {
    (0, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp_now(path: &Path, partial: bool, read_at: SystemTime) -> ReadStamp {
        let meta = fs::metadata(path).unwrap();
        ReadStamp::new(&meta, hash_file(path).unwrap().0, partial, read_at)
    }

    fn file(contents: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.txt");
        fs::write(&path, contents).unwrap();
        (dir, path)
    }

    #[test]
    fn stream_hash_equals_one_shot_hash() {
        let mut h = StreamHasher::new();
        h.update(b"hello ");
        h.update(b"world");
        assert_eq!(h.finish(), (hash_bytes(b"hello world"), 11));
        assert_eq!(
            hash::hash_reader(&b"hello world"[..]).unwrap(),
            (hash_bytes(b"hello world"), 11)
        );
    }

    #[test]
    fn not_read_then_partial_then_full() {
        let (_d, path) = file("a\nb\n");
        let state = FileReadState::new();
        assert_eq!(state.freshness(&path).unwrap(), Freshness::NotRead);
        state.record(&path, stamp_now(&path, true, SystemTime::now()));
        assert_eq!(state.freshness(&path).unwrap(), Freshness::Partial);
        state.record(&path, stamp_now(&path, false, SystemTime::now()));
        assert_eq!(state.freshness(&path).unwrap(), Freshness::Unchanged);
        // docs/tools.md: reads of the same content add up, so a partial read
        // after a full one of the same bytes leaves the stamp full.
        state.record(&path, stamp_now(&path, true, SystemTime::now()));
        assert_eq!(state.freshness(&path).unwrap(), Freshness::Unchanged);
        // A partial stamp of other bytes replaces it.
        fs::write(&path, "a\nc\n").unwrap();
        state.record(&path, stamp_now(&path, true, SystemTime::now()));
        assert_eq!(state.freshness(&path).unwrap(), Freshness::Partial);
    }

    #[test]
    fn same_size_rewrite_within_the_racy_window_is_caught_by_the_hash() {
        let (_d, path) = file("aaaa");
        let state = FileReadState::new();
        state.record(&path, stamp_now(&path, false, SystemTime::now()));
        // Same size, probably the same mtime tick: only the hash can tell.
        fs::write(&path, "bbbb").unwrap();
        assert_eq!(state.freshness(&path).unwrap(), Freshness::Changed);
    }

    #[test]
    fn touched_file_with_same_bytes_is_unchanged() {
        let (_d, path) = file("same");
        let state = FileReadState::new();
        state.record(&path, stamp_now(&path, false, SystemTime::now()));
        let f = File::options().write(true).open(&path).unwrap();
        f.set_modified(SystemTime::now() + Duration::from_secs(5))
            .unwrap();
        assert_eq!(state.freshness(&path).unwrap(), Freshness::Unchanged);
    }

    #[test]
    fn old_mtime_with_equal_metadata_skips_hashing() {
        let (_d, path) = file("abc");
        let f = File::options().write(true).open(&path).unwrap();
        f.set_modified(SystemTime::now() - Duration::from_secs(60))
            .unwrap();
        let mut stamp = stamp_now(&path, false, SystemTime::now());
        // A wrong hash proves the metadata path decided, not the hash.
        stamp.hash ^= 1;
        assert!(stamp.metadata_proves_unchanged(&fs::metadata(&path).unwrap()));
        let state = FileReadState::new();
        state.record(&path, stamp);
        assert_eq!(state.freshness(&path).unwrap(), Freshness::Unchanged);
    }

    #[test]
    fn recent_mtime_is_racy_and_rehashed() {
        let (_d, path) = file("abc");
        let mut stamp = stamp_now(&path, false, SystemTime::now());
        assert!(!stamp.metadata_proves_unchanged(&fs::metadata(&path).unwrap()));
        stamp.hash ^= 1;
        let state = FileReadState::new();
        state.record(&path, stamp);
        assert_eq!(state.freshness(&path).unwrap(), Freshness::Changed);
    }

    #[test]
    fn deleted_file_is_changed_and_forget_and_clear_work() {
        let (_d, path) = file("x");
        let state = FileReadState::new();
        let shared = state.clone();
        shared.record(&path, stamp_now(&path, false, SystemTime::now()));
        assert_eq!(state.len(), 1);
        fs::remove_file(&path).unwrap();
        assert_eq!(state.freshness(&path).unwrap(), Freshness::Changed);
        state.forget(&path);
        assert_eq!(state.freshness(&path).unwrap(), Freshness::NotRead);
        shared.record(&path, stamp_now_missing());
        state.clear();
        assert!(shared.is_empty());
    }

    fn stamp_now_missing() -> ReadStamp {
        ReadStamp {
            read_at: SystemTime::now(),
            mtime: None,
            size: 0,
            file_id: (0, 0),
            hash: hash_bytes(b""),
            partial: false,
            shown: None,
        }
    }

    #[test]
    fn record_after_write_gives_a_full_stamp() {
        let (_d, path) = file("old");
        let state = FileReadState::new();
        fs::write(&path, "new contents").unwrap();
        let stamp = state.record_after_write(&path, b"new contents").unwrap();
        assert!(!stamp.partial);
        assert_eq!(stamp.size, 12);
        assert_eq!(state.freshness(&path).unwrap(), Freshness::Unchanged);
    }

    fn lines(total: u64, ranges: &[(u64, u64)]) -> ShownLines {
        let mut shown = ShownLines::new(total);
        for &(a, b) in ranges {
            shown.add(a, b);
        }
        shown
    }

    fn text_stamp(path: &Path, shown: ShownLines) -> ReadStamp {
        let meta = fs::metadata(path).unwrap();
        ReadStamp::of_lines(&meta, hash_file(path).unwrap().0, shown, SystemTime::now())
    }

    #[test]
    fn shown_lines_join_overlapping_and_adjacent_ranges() {
        let shown = lines(100, &[(10, 20), (30, 40), (21, 25), (35, 60), (1, 1)]);
        assert_eq!(shown.ranges(), &[(1, 1), (10, 25), (30, 60)]);
        assert_eq!(shown.describe(), "1\u{2013}1, 10\u{2013}25, 30\u{2013}60");
        // Clamped to the file; empty and inverted ranges add nothing.
        let shown = lines(5, &[(4, 9), (3, 2), (0, 0)]);
        assert_eq!(shown.ranges(), &[(4, 5)]);
        assert!(lines(0, &[]).is_complete());
        assert!(lines(3, &[(1, 2), (3, 3)]).is_complete());
        assert!(!lines(3, &[(1, 1), (3, 3)]).is_complete());
        assert_eq!(lines(3, &[]).describe(), "");
    }

    #[test]
    fn reads_of_the_same_content_add_up_to_a_full_stamp() {
        let (_d, path) = file("1\n2\n3\n4\n");
        let state = FileReadState::new();
        state.record(&path, text_stamp(&path, lines(4, &[(1, 2)])));
        assert_eq!(state.freshness(&path).unwrap(), Freshness::Partial);
        state.record(&path, text_stamp(&path, lines(4, &[(4, 4)])));
        assert_eq!(state.freshness(&path).unwrap(), Freshness::Partial);
        assert_eq!(
            state.get(&path).unwrap().shown.unwrap().ranges(),
            &[(1, 2), (4, 4)]
        );
        state.record(&path, text_stamp(&path, lines(4, &[(3, 3)])));
        assert_eq!(state.freshness(&path).unwrap(), Freshness::Unchanged);
        // A partial read after a full one leaves it full.
        state.record(&path, text_stamp(&path, lines(4, &[(2, 2)])));
        assert_eq!(state.freshness(&path).unwrap(), Freshness::Unchanged);
    }

    #[test]
    fn reads_of_different_content_do_not_add_up() {
        let (_d, path) = file("1\n2\n");
        let state = FileReadState::new();
        state.record(&path, text_stamp(&path, lines(2, &[(1, 1)])));
        fs::write(&path, "one\n2\n").unwrap();
        state.record(&path, text_stamp(&path, lines(2, &[(2, 2)])));
        assert_eq!(state.freshness(&path).unwrap(), Freshness::Partial);
        assert_eq!(state.get(&path).unwrap().shown.unwrap().ranges(), &[(2, 2)]);
        // Nor does a full stamp of older content make a new partial one full.
        state.record(&path, text_stamp(&path, lines(2, &[(1, 2)])));
        fs::write(&path, "uno\n2\n").unwrap();
        state.record(&path, text_stamp(&path, lines(2, &[(2, 2)])));
        assert_eq!(state.freshness(&path).unwrap(), Freshness::Partial);
    }

    #[tokio::test]
    async fn path_lock_is_shared_per_path() {
        let state = FileReadState::new();
        let a = state.path_lock(Path::new("/x"));
        let b = state.clone().path_lock(Path::new("/x"));
        assert!(Arc::ptr_eq(&a, &b));
        let _g = a.lock().await;
        assert!(b.try_lock().is_err());
    }

    #[test]
    fn refusals_carry_their_code_and_text() {
        let read_in_part = |shown| StaleRead::ReadInPart(shown).to_string();
        assert_eq!(
            read_in_part(Some(lines(3000, &[(1, 2000), (2101, 2300)]))),
            "File has only been read in part (lines 1\u{2013}2000, 2101\u{2013}2300 of 3000). Read all of it before overwriting it, or change it with edit."
        );
        assert!(read_in_part(Some(lines(9, &[]))).contains("(none of lines 1\u{2013}9)"));
        assert!(read_in_part(None).contains("(not every line)"));
        assert_eq!(StaleRead::ReadInPart(None).code(), ErrorCode::NotRead);
        assert_eq!(
            StaleRead::ModifiedBeforeWrite.code(),
            ErrorCode::ModifiedSinceRead
        );
        let failure = agentcore_stages::ValidationFailure::from(StaleRead::ModifiedSinceRead);
        assert_eq!(failure.code, 3);
        assert!(
            failure
                .message
                .starts_with("File has been modified since read")
        );
    }
}
