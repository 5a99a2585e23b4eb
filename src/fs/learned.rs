//! What walks learned, kept between calls so that a search repeated over
//! an unchanged tree does not read it again: each directory's listing,
//! keyed by the directory's identity and stamp, and per search (pattern
//! and flags) whether each file matched, keyed by the file's identity and
//! stamp, with what the search kept of a file that matched (its lines,
//! opaque here). Shared by the clones of a
//! [`Workspace`](super::workspace::Workspace).
//!
//! Never stale: an entry is served only when the directory or file, looked
//! at again through its handle, has the same device, inode, size, and
//! modification and change times to the nanosecond as when it was read.
//! Any write to a file moves its change time (even one that restores the
//! modification time), and adding, removing or renaming an entry moves
//! its directory's. A time is only as fine as the file system's clock,
//! so what changed within the last [`SETTLE`] is never kept: a change in
//! the same tick as the reading would keep the same stamp. The walk still
//! opens every directory through its parent's handle, and every rule
//! (ignore files, exclusions) is applied again on every walk: only the
//! names and their kinds, and the search's verdict on a file's content
//! (with what it found there), are remembered.

use std::any::Any;
use std::collections::{HashMap, VecDeque};
use std::ffi::CString;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustix::fs::FileType;

/// How old a change must be before what was read is kept: longer than
/// any file system's timestamp tick (FAT's is 2 s).
pub(crate) const SETTLE: Duration = Duration::from_secs(3);

/// Names kept in listings at most (about 50 MB); past it the listings
/// start again.
const MAX_NAMES: usize = 1_000_000;

/// Searches whose verdicts are kept (the most recent ones).
const MAX_SEARCHES: usize = 8;

/// Verdicts kept over all searches at most (about 50 MB); past it the
/// oldest searches' are dropped.
const MAX_VERDICTS: usize = 500_000;

/// A file's or directory's identity and stamp: device, inode, size, and
/// modification and change times in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub(crate) id: (u64, u64),
    size: i64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    /// No stamp (a directory that could not be looked at): never matches
    /// a settled one, and is never kept.
    pub(crate) const NONE: Stamp = Stamp {
        id: (u64::MAX, u64::MAX),
        size: -1,
        mtime: (i64::MAX, 0),
        ctime: (i64::MAX, 0),
    };

    /// The stamp in `stat`.
    // The stat fields' widths differ between targets.
    #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
    pub(crate) fn of(stat: &rustix::fs::Stat) -> Self {
        Self {
            id: (stat.st_dev as u64, stat.st_ino as u64),
            size: stat.st_size as i64,
            mtime: (stat.st_mtime as i64, stat.st_mtime_nsec as i64),
            ctime: (stat.st_ctime as i64, stat.st_ctime_nsec as i64),
        }
    }

    /// Whether both times lie more than [`SETTLE`] before `now`: a later
    /// change cannot leave the same stamp.
    pub(crate) fn settled(&self, now: SystemTime) -> bool {
        let Some(limit) = now
            .checked_sub(SETTLE)
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        else {
            return false;
        };
        let limit = (
            i64::try_from(limit.as_secs()).unwrap_or(i64::MAX),
            i64::from(limit.subsec_nanos()),
        );
        self.mtime < limit && self.ctime < limit
    }
}

/// One directory's entries as read, by name, `.` and `..` left out.
pub(crate) struct Listing {
    pub(crate) stamp: Stamp,
    pub(crate) entries: Vec<(CString, FileType)>,
}

/// A search's verdict on one file as it was at `stamp`.
#[derive(Clone)]
pub(crate) struct Verdict {
    pub(crate) stamp: Stamp,
    pub(crate) matched: bool,
    /// What the search found in the file, kept so that the same search
    /// need not read it again; the search that kept it knows its type.
    pub(crate) found: Option<Arc<dyn Any + Send + Sync>>,
}

impl Verdict {
    /// A verdict alone, with nothing of the content kept.
    pub(crate) fn of(stamp: Stamp, matched: bool) -> Self {
        Self {
            stamp,
            matched,
            found: None,
        }
    }
}

/// A search's verdict on each file, by identity.
pub(crate) type Verdicts = HashMap<(u64, u64), Verdict>;

/// The listings known: directory identity → listing.
pub(crate) type Listings = HashMap<(u64, u64), Arc<Listing>>;

/// What walks learned (see the module's documentation).
#[derive(Default)]
pub(crate) struct Learned {
    dirs: Mutex<Arc<Listings>>,
    searches: Mutex<VecDeque<(String, Arc<Verdicts>)>>,
}

impl std::fmt::Debug for Learned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Learned").finish_non_exhaustive()
    }
}

impl Learned {
    /// The listings known now (a snapshot, read without locking).
    pub(crate) fn dirs(&self) -> Arc<Listings> {
        self.dirs.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Adds the listings a walk read.
    pub(crate) fn learn_dirs(&self, read: Vec<Arc<Listing>>) {
        if read.is_empty() {
            return;
        }
        let mut dirs = self.dirs.lock().unwrap_or_else(|p| p.into_inner());
        let map = Arc::make_mut(&mut dirs);
        let names = |map: &Listings| map.values().map(|l| l.entries.len()).sum::<usize>();
        let adding: usize = read.iter().map(|l| l.entries.len()).sum();
        if adding > MAX_NAMES {
            return;
        }
        if names(map) + adding > MAX_NAMES {
            map.clear();
        }
        for listing in read {
            map.insert(listing.stamp.id, listing);
        }
    }

    /// The verdicts known for the search `key`.
    pub(crate) fn verdicts(&self, key: &str) -> Option<Arc<Verdicts>> {
        let searches = self.searches.lock().unwrap_or_else(|p| p.into_inner());
        searches
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    }

    /// Adds the verdicts of one search `key`.
    pub(crate) fn learn_verdicts(&self, key: &str, found: Vec<Verdict>) {
        if found.is_empty() {
            return;
        }
        let mut searches = self.searches.lock().unwrap_or_else(|p| p.into_inner());
        let mut verdicts = match searches.iter().position(|(k, _)| k == key) {
            Some(i) => searches.remove(i).map(|(_, v)| v).unwrap_or_default(),
            None => Arc::default(),
        };
        if found.len() > MAX_VERDICTS {
            return;
        }
        let map = Arc::make_mut(&mut verdicts);
        if map.len() + found.len() > MAX_VERDICTS {
            map.clear();
        }
        for verdict in found {
            map.insert(verdict.stamp.id, verdict);
        }
        searches.push_back((key.to_owned(), verdicts));
        // The oldest searches go first, past the count or the total.
        let total =
            |s: &VecDeque<(String, Arc<Verdicts>)>| s.iter().map(|(_, v)| v.len()).sum::<usize>();
        while searches.len() > MAX_SEARCHES
            || (searches.len() > 1 && total(&searches) > MAX_VERDICTS)
        {
            searches.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fresh_stamp_is_not_settled_and_an_old_one_is() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, "x").unwrap();
        let stat = rustix::fs::stat(&path).unwrap();
        let stamp = Stamp::of(&stat);
        assert!(!stamp.settled(SystemTime::now()));
        assert!(stamp.settled(SystemTime::now() + SETTLE + Duration::from_millis(10)));
    }

    #[test]
    fn verdicts_are_kept_for_the_last_searches() {
        let learned = Learned::default();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, "x").unwrap();
        let stamp = Stamp::of(&rustix::fs::stat(&path).unwrap());
        for i in 0..=MAX_SEARCHES {
            learned.learn_verdicts(&format!("p{i}"), vec![Verdict::of(stamp, i % 2 == 0)]);
        }
        assert!(learned.verdicts("p0").is_none());
        let kept = &learned.verdicts("p2").unwrap()[&stamp.id];
        assert_eq!((kept.stamp, kept.matched), (stamp, true));
    }
}
