//! Finding what changed: the exact paths a file tool touched, or a walk of
//! the writable roots compared with the index by `lstat` key (only a path
//! whose key changed is read again), the way git's index avoids rehashing.

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::io;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use globset::GlobSet;

use super::state::{Known, StatKey, State, capture, key_at};
use super::store::{Change, Objects};
use crate::fs::beneath::{open_dir, open_root};
use crate::fs::walk::{self, Filters, Flow, Kind};
use crate::fs::workspace::Workspace;

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
    pub(crate) fn changes(
        &self,
        index: &mut HashMap<PathBuf, Known>,
        scope: &Scope,
    ) -> (Vec<Change>, Vec<String>) {
        match scope {
            Scope::Paths(paths) => self.changes_of_paths(index, paths),
            Scope::All => self.changes_of_walk(index),
        }
    }

    fn changes_of_paths(
        &self,
        index: &mut HashMap<PathBuf, Known>,
        paths: &[PathBuf],
    ) -> (Vec<Change>, Vec<String>) {
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

    fn changes_of_walk(&self, index: &mut HashMap<PathBuf, Known>) -> (Vec<Change>, Vec<String>) {
        let seen: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
        let found: Mutex<Vec<(PathBuf, Known)>> = Mutex::new(Vec::new());
        let problems: Mutex<Vec<String>> = Mutex::new(Vec::new());
        let filters = Filters::default();
        let snapshot: &HashMap<PathBuf, Known> = index;
        for root in self.roots {
            let result = walk::walk(
                self.workspace,
                root,
                &filters,
                walk::default_threads(),
                || {
                    let mut visitor = Visitor {
                        looker: self,
                        index: snapshot,
                        seen: Vec::new(),
                        found: Vec::new(),
                        problems: Vec::new(),
                        into: (&seen, &found, &problems),
                    };
                    move |entry: walk::Entry<'_>| visitor.visit(entry)
                },
            );
            if let Err(e) = result {
                problems
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(format!("{}: {e}", root.display()));
            }
        }
        let seen: HashSet<PathBuf> = seen.into_inner().unwrap_or_default().into_iter().collect();
        let found = found.into_inner().unwrap_or_default();
        let mut problems = problems.into_inner().unwrap_or_default();
        let mut changes = Vec::new();
        for (path, now) in found {
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
        // Paths known but not met: gone, or no longer recorded.
        let unseen: Vec<PathBuf> = index
            .iter()
            .filter(|(path, known)| known.state != State::Absent && !seen.contains(*path))
            .map(|(path, _)| path.clone())
            .collect();
        for path in unseen {
            match self.key_of(&path) {
                Ok(None) => {
                    let before = index.remove(&path).map_or(State::Absent, |k| k.state);
                    changes.push(Change {
                        path,
                        before,
                        after: State::Absent,
                    });
                }
                // Still there, but the walk no longer records it (an ignore
                // file now covers it): forgotten, not called deleted.
                Ok(Some(_)) => {
                    index.remove(&path);
                }
                Err(e) => problems.push(format!("{}: {e}", path.display())),
            }
        }
        changes.sort_by(|a, b| a.path.cmp(&b.path));
        (changes, problems)
    }
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

type Sinks<'a> = (
    &'a Mutex<Vec<PathBuf>>,
    &'a Mutex<Vec<(PathBuf, Known)>>,
    &'a Mutex<Vec<String>>,
);

/// One walk thread's visitor: keys compared, changed paths captured.
struct Visitor<'a> {
    looker: &'a Looker<'a>,
    index: &'a HashMap<PathBuf, Known>,
    seen: Vec<PathBuf>,
    found: Vec<(PathBuf, Known)>,
    problems: Vec<String>,
    into: Sinks<'a>,
}

impl Visitor<'_> {
    fn visit(&mut self, entry: walk::Entry<'_>) -> Flow {
        if entry.kind() == Kind::Other {
            return Flow::Continue;
        }
        let path = entry.path();
        if self.looker.excluded(path) {
            return Flow::Continue;
        }
        self.seen.push(path.to_path_buf());
        let known = self.index.get(path);
        if let Some(known) = known
            && !known.racy
            && entry
                .stat()
                .is_ok_and(|stat| StatKey::of(&stat) == known.key)
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
        let (seen, found, problems) = self.into;
        seen.lock()
            .unwrap_or_else(|e| e.into_inner())
            .append(&mut self.seen);
        found
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .append(&mut self.found);
        problems
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .append(&mut self.problems);
    }
}
