//! Finding what changed: the exact paths a file tool touched, or, for a
//! command, the paths the change feed names (a walk of the writable roots
//! when it cannot say), compared with the index by `lstat` key (only a
//! path whose key changed is read again), the way git's index avoids
//! rehashing.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::ffi::OsStr;
use std::io;
use std::ops::Bound;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use globset::GlobSet;

use rustix::fs::{AtFlags, FileType};

use super::feed::{Feed, Tracker};
use super::state::{Known, StatKey, State, capture, key_at};
use super::store::{Change, Objects};
use crate::fs::beneath::{open_dir, open_root};
use crate::fs::walk::{self, Filters, Flow, Kind, Rules};
use crate::fs::workspace::Workspace;

/// What the recorder knows of each path, in path order (what is below a
/// folder comes right after it).
pub(crate) type Index = BTreeMap<PathBuf, Known>;

/// What a look at the roots covers.
#[derive(Clone, Debug)]
pub(crate) enum Scope {
    /// These paths (absolute) and the folders between them and their root:
    /// a file tool's.
    Paths(Vec<PathBuf>),
    /// Everything under the roots that the ignore files and the policy do
    /// not exclude: a command's.
    All,
}

/// What the recorder looks with.
pub(crate) struct Looker<'a> {
    pub(crate) workspace: &'a Workspace,
    pub(crate) roots: &'a [PathBuf],
    pub(crate) objects: &'a Objects,
    pub(crate) exclude: &'a GlobSet,
    pub(crate) max_file: u64,
    /// The change feed a command's look asks first.
    pub(crate) tracker: &'a Mutex<Tracker>,
}

impl Looker<'_> {
    /// The root holding `path`, and `path` below it.
    pub(crate) fn split<'p>(&self, path: &'p Path) -> Option<(&Path, &'p Path)> {
        self.roots
            .iter()
            .filter_map(|root| Some((root.as_path(), path.strip_prefix(root).ok()?)))
            .max_by_key(|(root, _)| root.as_os_str().len())
    }

    /// Whether `path` is left out: outside the roots, denied to reads,
    /// excluded by the policy, or inside a VCS folder.
    pub(crate) fn excluded(&self, path: &Path) -> bool {
        let Some((_, rel)) = self.split(path) else {
            return true;
        };
        rel.as_os_str().is_empty()
            || self.workspace.is_read_denied(path)
            || self.workspace.is_excluded(path)
            || self.exclude.is_match(rel)
            || rel.components().any(|c| {
                matches!(
                    c.as_os_str().to_str(),
                    Some(".git" | ".hg" | ".svn" | ".jj")
                )
            })
    }

    /// What `path` holds now (its bytes kept); `None` when it is of a kind
    /// not recorded or cannot be looked at beneath its root without
    /// following a link.
    pub(crate) fn capture_path(&self, path: &Path) -> io::Result<Option<Known>> {
        let Some((root, rel)) = self.split(path) else {
            return Ok(None);
        };
        let (Some(parent), Some(name)) = (rel.parent(), rel.file_name()) else {
            return Ok(None);
        };
        let root_fd = open_root(root)?;
        match open_dir(root_fd.as_fd(), parent) {
            Ok(dir) => capture(dir.as_fd(), name, self.objects, self.max_file),
            Err(crate::fs::beneath::FileError::NotFound) => Ok(Some(absent())),
            Err(e) => Err(io::Error::other(
                e.message(&path.display().to_string(), "look at"),
            )),
        }
    }

    /// The `lstat` key of `path`; `None` when nothing is there.
    pub(crate) fn key_of(&self, path: &Path) -> io::Result<Option<StatKey>> {
        let Some((root, rel)) = self.split(path) else {
            return Ok(None);
        };
        let (Some(parent), Some(name)) = (rel.parent(), rel.file_name()) else {
            return Ok(None);
        };
        let root_fd = open_root(root)?;
        match open_dir(root_fd.as_fd(), parent) {
            Ok(dir) => key_at(dir.as_fd(), name),
            Err(_) => Ok(None),
        }
    }

    /// The changes within `scope` since `index` was last brought up to
    /// date; brings it up to date.
    pub(crate) fn changes(&self, index: &mut Index, scope: &Scope) -> (Vec<Change>, Vec<String>) {
        match scope {
            Scope::Paths(paths) => self.changes_of_paths(index, paths),
            Scope::All => self.changes_of_all(index),
        }
    }

    fn changes_of_paths(&self, index: &mut Index, paths: &[PathBuf]) -> (Vec<Change>, Vec<String>) {
        let mut todo: Vec<PathBuf> = Vec::new();
        for path in paths {
            let Some((root, _)) = self.split(path) else {
                continue;
            };
            // The folders a write may have made on the way, then the path.
            let mut chain: Vec<PathBuf> = path
                .ancestors()
                .take_while(|a| a.starts_with(root) && *a != root)
                .map(Path::to_path_buf)
                .collect();
            chain.reverse();
            for p in chain {
                if !todo.contains(&p) {
                    todo.push(p);
                }
            }
        }
        let mut changes = Vec::new();
        let mut problems = Vec::new();
        for path in todo {
            if self.excluded(&path) {
                continue;
            }
            let known = index.get(&path);
            if let Some(known) = known {
                match self.key_of(&path) {
                    Ok(Some(key)) if key == known.key && !known.racy => continue,
                    Ok(None) if known.state == State::Absent => continue,
                    _ => {}
                }
            }
            match self.capture_path(&path) {
                Ok(Some(now)) => {
                    let before = known.map_or(State::Absent, |k| k.state.clone());
                    if !now.state.matches(&before) || !same_kept(&now.state, &before) {
                        changes.push(Change {
                            path: path.clone(),
                            before,
                            after: now.state.clone(),
                        });
                    }
                    if now.racy {
                        // The next command's look reads it again.
                        self.tracker
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .racy
                            .insert(path.clone());
                    }
                    index.insert(path, now);
                }
                Ok(None) => {
                    index.remove(&path);
                }
                Err(e) => problems.push(format!("{}: {e}", path.display())),
            }
        }
        (changes, problems)
    }

    /// A command's look: the paths the change feed names, or, when the
    /// feed does not know (its first look, a lost event, an ignore file
    /// changed), the roots walked whole.
    fn changes_of_all(&self, index: &mut Index) -> (Vec<Change>, Vec<String>) {
        let mut tracker = self.tracker.lock().unwrap_or_else(|e| e.into_inner());
        let dirty = tracker.dirty(self.roots);
        // Taken out for the walk's threads to add watches to.
        let feed = Mutex::new(tracker.feed.take());
        let looked = match dirty {
            Some(dirty) => self.changes_of_dirty(index, dirty, &feed, &mut tracker),
            None => self.changes_of_walk(index, &feed, &mut tracker),
        };
        tracker.walked(feed.into_inner().unwrap_or_else(|e| e.into_inner()));
        looked
    }

    /// Walks `start` (a root, or a folder below one: all of it), adding a
    /// watch to `feed` for each folder before it is listed.
    fn walk_from(&self, start: &Path, index: &Index, feed: &Mutex<Option<Feed>>) -> Walked {
        let sinks = Sinks::default();
        let filters = Filters::default();
        if let Some(feed) = feed.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
            feed.watch(start);
        }
        let result = walk::walk(
            self.workspace,
            start,
            &filters,
            walk::default_threads(),
            || {
                let mut visitor = Visitor {
                    looker: self,
                    index,
                    feed,
                    seen: Vec::new(),
                    found: Vec::new(),
                    problems: Vec::new(),
                    linked: Vec::new(),
                    into: &sinks,
                };
                move |entry: walk::Entry<'_>| visitor.visit(entry)
            },
        );
        let take = |m: Mutex<Vec<PathBuf>>| m.into_inner().unwrap_or_else(|e| e.into_inner());
        let mut problems = sinks
            .problems
            .into_inner()
            .unwrap_or_else(|e| e.into_inner());
        if let Err(e) = result {
            problems.push(format!("{}: {e}", start.display()));
        }
        Walked {
            seen: take(sinks.seen).into_iter().collect(),
            found: sinks.found.into_inner().unwrap_or_else(|e| e.into_inner()),
            problems,
            linked: take(sinks.linked),
        }
    }

    /// The roots walked whole and compared with the index by key.
    fn changes_of_walk(
        &self,
        index: &mut Index,
        feed: &Mutex<Option<Feed>>,
        tracker: &mut Tracker,
    ) -> (Vec<Change>, Vec<String>) {
        let mut seen: HashSet<PathBuf> = HashSet::new();
        let mut found = Vec::new();
        let mut problems = Vec::new();
        let mut linked = BTreeSet::new();
        for root in self.roots {
            let walked = self.walk_from(root, index, feed);
            seen.extend(walked.seen);
            found.extend(walked.found);
            problems.extend(walked.problems);
            linked.extend(walked.linked);
        }
        tracker.linked = linked;
        tracker.racy.clear();
        let mut changes = Vec::new();
        for (path, now) in found {
            learn(index, path, now, &mut changes);
        }
        // Paths known but not met: gone, or no longer recorded.
        let unseen: Vec<PathBuf> = index
            .iter()
            .filter(|(path, known)| known.state != State::Absent && !seen.contains(*path))
            .map(|(path, _)| path.clone())
            .collect();
        self.unseen(index, unseen, &mut changes, &mut problems);
        // Whatever stays racy is looked at again next time.
        tracker.racy = index
            .iter()
            .filter(|(_, known)| known.racy)
            .map(|(path, _)| path.clone())
            .collect();
        changes.sort_by(|a, b| a.path.cmp(&b.path));
        (changes, problems)
    }

    /// Paths the index knows that a look did not meet: a path gone is
    /// deleted; one still there but no longer recorded (an ignore file now
    /// covers it, a FIFO in its place) is forgotten, not called deleted.
    fn unseen(
        &self,
        index: &mut Index,
        paths: Vec<PathBuf>,
        changes: &mut Vec<Change>,
        problems: &mut Vec<String>,
    ) {
        for path in paths {
            if index
                .get(&path)
                .is_none_or(|known| known.state == State::Absent)
            {
                index.remove(&path);
                continue;
            }
            match self.key_of(&path) {
                Ok(None) => {
                    let before = index.remove(&path).map_or(State::Absent, |k| k.state);
                    changes.push(Change {
                        path,
                        before,
                        after: State::Absent,
                    });
                }
                Ok(Some(_)) => {
                    index.remove(&path);
                }
                Err(e) => problems.push(format!("{}: {e}", path.display())),
            }
        }
    }

    /// The paths the change feed named (and the racy and linked ones)
    /// compared with the index: each by `lstat` key, as the walk does; a
    /// folder new at its path (made, moved in, or put in place of another)
    /// walked whole; what was below a folder now gone, deleted.
    fn changes_of_dirty(
        &self,
        index: &mut Index,
        dirty: BTreeSet<PathBuf>,
        feed: &Mutex<Option<Feed>>,
        tracker: &mut Tracker,
    ) -> (Vec<Change>, Vec<String>) {
        let mut rules = Rules::new(self.workspace);
        let mut changes = Vec::new();
        let mut problems = Vec::new();
        // Folders looked at whole in this look: their paths are done.
        let mut whole: Vec<PathBuf> = Vec::new();
        // Paths read in this look.
        let mut touched: Vec<PathBuf> = Vec::new();
        let mut handles = Handles::new();
        // Sorted: a folder comes before what is below it.
        for path in dirty {
            if whole.iter().any(|w| path.starts_with(w)) {
                continue;
            }
            let Some((_, rel)) = self.split(&path) else {
                continue;
            };
            if rel.as_os_str().is_empty() {
                continue;
            }
            let stat = match self.stat_of(&mut handles, &path) {
                Ok(stat) => stat,
                Err(e) => {
                    problems.push(format!("{}: {e}", path.display()));
                    continue;
                }
            };
            let kind = stat.as_ref().map(|s| FileType::from_raw_mode(s.st_mode));
            let is_dir = kind == Some(FileType::Directory);
            let known = index.get(&path).cloned();
            let was_dir = known
                .as_ref()
                .is_some_and(|k| matches!(k.state, State::Dir { .. }));
            let recorded = stat.is_some()
                && !matches!(
                    kind,
                    Some(
                        FileType::Fifo
                            | FileType::Socket
                            | FileType::CharacterDevice
                            | FileType::BlockDevice
                            | FileType::Unknown
                    )
                )
                && !self.excluded(&path)
                && rules.walked(&path, is_dir);
            if !recorded {
                // Gone, or not recorded: it and what was below it.
                let mut gone = vec![path.clone()];
                if was_dir {
                    gone.extend(below(index, &path));
                    whole.push(path.clone());
                }
                self.unseen(index, gone, &mut changes, &mut problems);
                tracker.linked.remove(&path);
                continue;
            }
            let Some(stat) = stat else { continue };
            let key = StatKey::of(&stat);
            // The folder the index knows, still watched: events name what
            // changes in it. Anything else is looked at whole.
            let same_dir = was_dir
                && known
                    .as_ref()
                    .is_some_and(|k| k.key.dev == key.dev && k.key.ino == key.ino)
                && feed
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .as_ref()
                    .is_some_and(|f| f.watched(&path));
            if is_dir && !same_dir {
                // New at this path: walked whole (watched before listed),
                // what the index had below it and was not met is gone.
                let walked = self.walk_from(&path, index, feed);
                let mut before = below(index, &path);
                before.retain(|p| !walked.seen.contains(p));
                self.capture_into(&mut handles, index, &path, &mut changes, &mut problems);
                touched.push(path.clone());
                for (p, now) in walked.found {
                    touched.push(p.clone());
                    learn(index, p, now, &mut changes);
                }
                self.unseen(index, before, &mut changes, &mut problems);
                problems.extend(walked.problems);
                tracker.linked.extend(walked.linked);
                whole.push(path.clone());
                continue;
            }
            if was_dir && !is_dir {
                // A folder replaced by a file or link: what was below it
                // is gone.
                let gone = below(index, &path);
                self.unseen(index, gone, &mut changes, &mut problems);
                whole.push(path.clone());
            }
            if kind == Some(FileType::RegularFile) && stat.st_nlink > 1 {
                if tracker.linked.insert(path.clone()) {
                    // Its other links (known by the same inode) are looked
                    // at every time from now on too.
                    let others: Vec<PathBuf> = index
                        .iter()
                        .filter(|(p, k)| {
                            k.key.dev == key.dev && k.key.ino == key.ino && **p != path
                        })
                        .map(|(p, _)| p.clone())
                        .collect();
                    tracker.linked.extend(others);
                }
            } else {
                tracker.linked.remove(&path);
            }
            if let Some(known) = &known
                && !known.racy
                && known.key == key
            {
                continue;
            }
            self.capture_into(&mut handles, index, &path, &mut changes, &mut problems);
            touched.push(path);
        }
        // What was read within a timestamp tick of its change is looked at
        // again next time, whatever the feed says then.
        tracker.racy.extend(
            touched
                .into_iter()
                .filter(|p| index.get(p).is_some_and(|k| k.racy)),
        );
        changes.sort_by(|a, b| a.path.cmp(&b.path));
        (changes, problems)
    }

    /// Captures `path` and learns it (a change when it differs).
    fn capture_into(
        &self,
        handles: &mut Handles,
        index: &mut Index,
        path: &Path,
        changes: &mut Vec<Change>,
        problems: &mut Vec<String>,
    ) {
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            return;
        };
        let captured = match self.folder(handles, parent) {
            Ok(Some(dir)) => capture(dir.as_fd(), name, self.objects, self.max_file),
            Ok(None) => Ok(Some(absent())),
            Err(e) => Err(e),
        };
        match captured {
            Ok(Some(now)) if now.state == State::Absent => {
                // Gone meanwhile.
                self.unseen(index, vec![path.to_path_buf()], changes, problems);
            }
            Ok(Some(now)) => learn(index, path.to_path_buf(), now, changes),
            Ok(None) => {
                index.remove(path);
            }
            Err(e) => problems.push(format!("{}: {e}", path.display())),
        }
    }

    /// The handle of the folder `dir`, opened beneath its root once per
    /// look; `None` when it is not a folder there any more.
    fn folder<'h>(&self, handles: &'h mut Handles, dir: &Path) -> io::Result<Option<&'h OwnedFd>> {
        if !handles.contains_key(dir) {
            let fd = match self.split(dir) {
                None => None,
                Some((root, rel)) => {
                    let root_fd = open_root(root)?;
                    if rel.as_os_str().is_empty() {
                        Some(root_fd)
                    } else {
                        open_dir(root_fd.as_fd(), rel).ok()
                    }
                }
            };
            handles.insert(dir.to_path_buf(), fd);
        }
        Ok(handles.get(dir).and_then(Option::as_ref))
    }

    /// The `lstat` of `path` beneath its root; `None` when nothing is there
    /// (or its folder is not one any more).
    fn stat_of(&self, handles: &mut Handles, path: &Path) -> io::Result<Option<rustix::fs::Stat>> {
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            return Ok(None);
        };
        let Some(dir) = self.folder(handles, parent)? else {
            return Ok(None);
        };
        match rustix::fs::statat(dir.as_fd(), name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => Ok(Some(stat)),
            Err(rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }
}

/// Folder handles of one look, by path.
type Handles = HashMap<PathBuf, Option<OwnedFd>>;

/// The index's paths below `dir` (not `dir` itself): contiguous in its
/// order, since paths compare component by component.
fn below(index: &Index, dir: &Path) -> Vec<PathBuf> {
    index
        .range::<Path, _>((Bound::Excluded(dir), Bound::Unbounded))
        .take_while(|(p, _)| p.starts_with(dir))
        .map(|(p, _)| p.clone())
        .collect()
}

/// Learns what `path` holds now: a change when it differs from what the
/// index had.
fn learn(index: &mut Index, path: PathBuf, now: Known, changes: &mut Vec<Change>) {
    let before = index.get(&path).map_or(State::Absent, |k| k.state.clone());
    if !now.state.matches(&before) || !same_kept(&now.state, &before) {
        changes.push(Change {
            path: path.clone(),
            before,
            after: now.state.clone(),
        });
    }
    index.insert(path, now);
}

/// What one walk met.
struct Walked {
    seen: HashSet<PathBuf>,
    found: Vec<(PathBuf, Known)>,
    problems: Vec<String>,
    linked: Vec<PathBuf>,
}

/// Whether two states that match also keep the same bytes: a file first
/// recorded by metadata only and now kept is worth recording.
fn same_kept(now: &State, before: &State) -> bool {
    match (now, before) {
        (State::File { hash: a, .. }, State::File { hash: b, .. }) => a.is_some() == b.is_some(),
        _ => true,
    }
}

/// The state of a path that holds nothing.
pub(crate) fn absent() -> Known {
    Known {
        state: State::Absent,
        key: StatKey::absent(),
        racy: false,
    }
}

/// Where a walk's threads put what they met.
#[derive(Default)]
struct Sinks {
    seen: Mutex<Vec<PathBuf>>,
    found: Mutex<Vec<(PathBuf, Known)>>,
    problems: Mutex<Vec<String>>,
    linked: Mutex<Vec<PathBuf>>,
}

/// One walk thread's visitor: keys compared, changed paths captured,
/// folders watched before they are listed.
struct Visitor<'a> {
    looker: &'a Looker<'a>,
    index: &'a Index,
    feed: &'a Mutex<Option<Feed>>,
    seen: Vec<PathBuf>,
    found: Vec<(PathBuf, Known)>,
    problems: Vec<String>,
    linked: Vec<PathBuf>,
    into: &'a Sinks,
}

impl Visitor<'_> {
    fn visit(&mut self, entry: walk::Entry<'_>) -> Flow {
        let path = entry.path();
        if entry.kind() == Kind::Dir
            && let Some(feed) = self.feed.lock().unwrap_or_else(|e| e.into_inner()).as_mut()
        {
            // The walk lists a folder after its visit: watched first.
            feed.watch(path);
        }
        if entry.kind() == Kind::Other {
            return Flow::Continue;
        }
        if self.looker.excluded(path) {
            return Flow::Continue;
        }
        self.seen.push(path.to_path_buf());
        let stat = entry.stat().ok();
        if entry.kind() == Kind::File && stat.as_ref().is_some_and(|s| s.st_nlink > 1) {
            self.linked.push(path.to_path_buf());
        }
        let known = self.index.get(path);
        if let Some(known) = known
            && !known.racy
            && stat
                .as_ref()
                .is_some_and(|stat| StatKey::of(stat) == known.key)
        {
            return Flow::Continue;
        }
        let (dir, name): (_, &OsStr) = entry.at();
        match capture(dir, name, self.looker.objects, self.looker.max_file) {
            Ok(Some(now)) => self.found.push((path.to_path_buf(), now)),
            Ok(None) => {}
            Err(e) => self.problems.push(format!("{}: {e}", path.display())),
        }
        Flow::Continue
    }
}

impl Drop for Visitor<'_> {
    fn drop(&mut self) {
        let sinks = self.into;
        let lock = |m: &'_ Mutex<Vec<PathBuf>>, v: &mut Vec<PathBuf>| {
            m.lock().unwrap_or_else(|e| e.into_inner()).append(v);
        };
        lock(&sinks.seen, &mut self.seen);
        lock(&sinks.linked, &mut self.linked);
        sinks
            .found
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .append(&mut self.found);
        sinks
            .problems
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .append(&mut self.problems);
    }
}
