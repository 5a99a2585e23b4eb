//! What a rewind would change, path by path, without changing anything:
//! the unified diff from what each path holds now to what a rewind puts
//! back.

use std::collections::HashMap;
use std::io::{self, Read};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use serde::Serialize;

use super::rewind::RewindTo;
use super::state::State;
use super::{CheckpointError, Checkpoints};
use crate::fs::beneath::{open_dir, open_root};

/// Files longer than this are not diffed (the diff says so).
pub const DIFF_MAX_BYTES: u64 = 1 << 20;

/// What a rewind to before a checkpoint would change (see
/// [`Checkpoints::diff`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RewindDiff {
    /// The first checkpoint a rewind would undo.
    pub to: u64,
    /// Each path the checkpoints from it on touched, in the order they
    /// first touched it.
    pub paths: Vec<PathDiff>,
}

/// One path of a [`RewindDiff`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PathDiff {
    /// The path.
    pub path: PathBuf,
    /// What a rewind puts back: what the path held before the first
    /// checkpoint undone.
    pub before: State,
    /// The unified diff from the path as it is now (`a/PATH`) to what a
    /// rewind puts back (`b/PATH`); empty when the two are equal or one of
    /// them is not text (then `note` says why).
    pub diff: String,
    /// What the diff cannot show: a folder, a link, a binary or long file,
    /// bytes not kept, a path a read-deny rule covers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl PathDiff {
    /// The path's part in words: the diff, or a line saying why there is
    /// none.
    pub fn describe(&self, root: &Path) -> String {
        match &self.note {
            Some(note) => format!("{}: {note}", shown(&self.path, root)),
            None => self.diff.clone(),
        }
    }
}

impl RewindDiff {
    /// The whole diff in words: a heading line, then each path's part.
    pub fn describe(&self, root: &Path) -> String {
        let mut out = format!(
            "A rewind to before checkpoint #{} would change {} path(s):\n",
            self.to,
            self.paths.len()
        );
        for path in &self.paths {
            let part = path.describe(root);
            out.push_str(&part);
            if !part.ends_with('\n') {
                out.push('\n');
            }
        }
        out
    }
}

fn shown(path: &Path, root: &Path) -> String {
    path.strip_prefix(root)
        .map_or_else(|_| path.display().to_string(), |r| r.display().to_string())
}

/// One side of a diff: text, or why there is none.
enum Side {
    Text(String),
    Other(String),
}

impl Side {
    fn of_bytes(bytes: Vec<u8>) -> Side {
        if bytes.contains(&0) {
            return Side::Other("a binary file".to_owned());
        }
        String::from_utf8(bytes).map_or_else(
            |_| Side::Other("a file that is not UTF-8 text".to_owned()),
            Side::Text,
        )
    }

    fn word(self) -> String {
        match self {
            Side::Text(t) if t.is_empty() => "empty or absent".to_owned(),
            Side::Text(_) => "a text file".to_owned(),
            Side::Other(why) => why,
        }
    }
}

impl Checkpoints {
    /// What a rewind to `to` would change: for each path the checkpoints
    /// from it on touched, the unified diff from what it holds now to what
    /// it held before them (read from the store). Nothing is written, to
    /// the roots or to the store; the paths are read beneath their roots
    /// without following links, and a path a read-deny rule covers is
    /// named but not shown.
    pub fn diff(&self, to: &RewindTo) -> Result<RewindDiff, CheckpointError> {
        self.refresh()?;
        let start = self.start_of(to)?;
        let mut order: Vec<PathBuf> = Vec::new();
        let mut before: HashMap<PathBuf, State> = HashMap::new();
        {
            let rec = self.lock();
            for cp in rec.kept.iter().filter(|cp| cp.id >= start) {
                for change in &cp.changes {
                    if !before.contains_key(&change.path) {
                        order.push(change.path.clone());
                        before.insert(change.path.clone(), change.before.clone());
                    }
                }
            }
        }
        let root = self.inner.workspace.root().to_path_buf();
        let mut paths = Vec::new();
        for path in order {
            let state = before.remove(&path).expect("each path is planned once");
            let shown_path = shown(&path, &root);
            if self.inner.workspace.is_read_denied(&path) {
                paths.push(PathDiff {
                    path,
                    before: state,
                    diff: String::new(),
                    note: Some("not shown: a read-deny rule covers it".to_owned()),
                });
                continue;
            }
            let old = self.kept_side(&state)?;
            let new = self.current_side(&path);
            let (diff, note) = match (new, old) {
                (Side::Text(now), Side::Text(back)) => {
                    let diff = crate::diff::unified_diff(&shown_path, &now, &back);
                    let note = diff
                        .is_empty()
                        .then(|| "unchanged: it holds now what a rewind puts back".to_owned());
                    (diff, note)
                }
                (now, back) => (
                    String::new(),
                    Some(format!(
                        "now {}; a rewind puts back {}",
                        now.word(),
                        back.word()
                    )),
                ),
            };
            paths.push(PathDiff {
                path,
                before: state,
                diff,
                note,
            });
        }
        Ok(RewindDiff { to: start, paths })
    }

    /// The side a rewind puts back, read from the store.
    fn kept_side(&self, state: &State) -> Result<Side, CheckpointError> {
        Ok(match state {
            State::Absent => Side::Text(String::new()),
            State::File {
                hash: Some(hash),
                size,
                ..
            } => {
                if *size > DIFF_MAX_BYTES {
                    return Ok(Side::Other(format!(
                        "a file of {} (too long to diff)",
                        super::bytes_in_words(*size)
                    )));
                }
                let mut bytes = Vec::new();
                self.inner
                    .store
                    .objects
                    .read(hash)?
                    .take(DIFF_MAX_BYTES + 1)
                    .read_to_end(&mut bytes)?;
                Side::of_bytes(bytes)
            }
            State::File { hash: None, .. } => {
                Side::Other("a file whose bytes were not kept (over the size limit)".to_owned())
            }
            State::Symlink { target } => Side::Other(format!("a link to {target}")),
            State::Dir { .. } => Side::Other("a folder".to_owned()),
        })
    }

    /// The side as it is now, read beneath its root without following a
    /// link; a folder on the way that is a link reads as absent, as a
    /// rewind would see it.
    fn current_side(&self, path: &Path) -> Side {
        let looker = self.looker();
        let Some((root, rel)) = looker.split(path) else {
            return Side::Other("outside the roots this session records".to_owned());
        };
        let (Some(parent), Some(name)) = (rel.parent(), rel.file_name()) else {
            return Side::Other("a root".to_owned());
        };
        let unreadable = |e: io::Error| Side::Other(format!("unreadable ({e})"));
        let root_fd = match open_root(root) {
            Ok(fd) => fd,
            Err(e) => return unreadable(e),
        };
        let dir = match open_dir(root_fd.as_fd(), parent) {
            Ok(dir) => dir,
            // Nothing is at the path through real folders (one on the way
            // is missing, a link or not a folder): a rewind sees it so.
            Err(_) => return Side::Text(String::new()),
        };
        let stat = match rustix::fs::statat(dir.as_fd(), name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => stat,
            Err(rustix::io::Errno::NOENT) => return Side::Text(String::new()),
            Err(e) => return unreadable(e.into()),
        };
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::RegularFile if stat.st_size as u64 > DIFF_MAX_BYTES => Side::Other(format!(
                "a file of {} (too long to diff)",
                super::bytes_in_words(stat.st_size as u64)
            )),
            FileType::RegularFile => {
                let opened = rustix::fs::openat(
                    dir.as_fd(),
                    name,
                    OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
                    Mode::empty(),
                );
                let mut bytes = Vec::new();
                match opened.map_err(io::Error::from).and_then(|fd| {
                    std::fs::File::from(fd)
                        .take(DIFF_MAX_BYTES + 1)
                        .read_to_end(&mut bytes)
                }) {
                    Ok(_) => Side::of_bytes(bytes),
                    Err(e) => unreadable(e),
                }
            }
            FileType::Directory => Side::Other("a folder".to_owned()),
            FileType::Symlink => match rustix::fs::readlinkat(dir.as_fd(), name, Vec::new()) {
                Ok(target) => Side::Other(format!("a link to {}", target.to_string_lossy())),
                Err(e) => unreadable(e.into()),
            },
            _ => Side::Other("not a regular file".to_owned()),
        }
    }
}
