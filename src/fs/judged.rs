//! Where a call's paths lead, decided once: resolved before the gate,
//! judged there, and carried to the tool that acts on them.
//!
//! A path the model gives is resolved by [`final_target`]: every symbolic
//! link along it is followed to its final target, dangling links included
//! (`notes.txt -> .git/commondir` names `.git/commondir`, whether or not
//! that file exists yet), with `..` applied to a link's target as the
//! kernel does. The approval engine judges that target, records what was
//! there ([`JudgedPath`]: the target, the identity of the file and of its
//! directory) and hands the record to the tool with the gated arguments
//! ([`JudgedPaths`] in [`GatedArgs::extensions`](crate::GatedArgs::extensions)).
//! The tool resolves the path again when it runs and refuses if it now
//! leads elsewhere, opens the judged target beneath its root without
//! following any link, and refuses if what it opened is not the file that
//! was judged. So a link changed after the decision, by a neighbour or by
//! the model's own background job, can only make the call fail, never
//! make it act on a file no one judged.
//!
//! ```
//! use agentcore::fs::judged::final_target;
//!
//! let dir = tempfile::tempdir().unwrap();
//! let root = std::fs::canonicalize(dir.path()).unwrap();
//! std::os::unix::fs::symlink(".git/commondir", root.join("notes.txt")).unwrap();
//! // The link dangles: its target is what a write would create.
//! assert_eq!(final_target(&root.join("notes.txt")).unwrap(), root.join(".git/commondir"));
//! ```

use std::ffi::OsString;
use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use crate::limits::paths::MAX_SYMLINK_HOPS;

/// The device and inode of a file: what stays the same while its names
/// change, and differs when a name is pointed at another file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FileId {
    /// The device holding the file.
    pub dev: u64,
    /// Its inode number there.
    pub ino: u64,
}

impl FileId {
    /// The identity of the file `meta` describes.
    pub fn of(meta: &fs::Metadata) -> Self {
        Self {
            dev: meta.dev(),
            ino: meta.ino(),
        }
    }
}

/// One path of a call as the gate judged it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JudgedPath {
    /// The path as the tool's arguments give it.
    pub given: String,
    /// Where it led, absolute, every link followed; `None` when it could
    /// not be resolved (a loop, a file used as a directory): then the tool
    /// cannot act on it either.
    pub target: Option<PathBuf>,
    /// What was at the target: `None` when nothing was (a file about to be
    /// created).
    pub found: Option<FileId>,
    /// The directory holding the target, when it existed.
    pub parent: Option<FileId>,
}

impl JudgedPath {
    /// Resolves `given` (absolute, or relative to `root`) and records what
    /// is there, without following any link at the target itself.
    pub fn resolve(root: &Path, given: &str) -> Self {
        let start = root.join(given);
        let target = final_target(&start).ok();
        let (found, parent) = match &target {
            Some(target) => (identity(target), target.parent().and_then(identity)),
            None => (None, None),
        };
        Self {
            given: given.to_owned(),
            target,
            found,
            parent,
        }
    }
}

/// The identity of what is at `path` (symlink-free, so nothing to follow
/// at its end), if anything is.
fn identity(path: &Path) -> Option<FileId> {
    fs::symlink_metadata(path)
        .ok()
        .map(|meta| FileId::of(&meta))
}

/// Every path of one call as the gate judged it. Cheap to clone.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JudgedPaths {
    paths: Arc<Vec<JudgedPath>>,
}

impl JudgedPaths {
    /// The judgement of these paths.
    pub fn new(paths: Vec<JudgedPath>) -> Self {
        Self {
            paths: Arc::new(paths),
        }
    }

    /// The judgement of the path given as `given`, if it was judged.
    pub fn given(&self, given: &str) -> Option<&JudgedPath> {
        self.paths.iter().find(|p| p.given == given)
    }

    /// The judgements whose target is `target`.
    pub fn at(&self, target: &Path) -> impl Iterator<Item = &JudgedPath> {
        self.paths
            .iter()
            .filter(move |p| p.target.as_deref() == Some(target))
    }

    /// Every judged path.
    pub fn iter(&self) -> impl Iterator<Item = &JudgedPath> {
        self.paths.iter()
    }
}

/// Why [`final_target`] could not resolve a path.
#[derive(Debug)]
pub enum ResolveError {
    /// More than [`MAX_SYMLINK_HOPS`] links, or a cycle.
    Loop,
    /// The file system refused a look (permissions, a file used as a
    /// directory, a name too long).
    Io(io::Error),
}

/// `start` (absolute) with every symbolic link followed to its final
/// target, dangling links included: walked one component at a time from
/// `/`, each link's target walked in turn (so `..` after a link applies to
/// the target), and components that do not exist appended as they are (a
/// missing directory holds no links).
pub fn final_target(start: &Path) -> Result<PathBuf, ResolveError> {
    // Components still to walk, in reverse (next one at the end).
    let mut pending: Vec<OsString> = Vec::new();
    let mut current = PathBuf::from("/");
    push_components(&mut pending, start, &mut current);
    let mut hops = 0usize;
    while let Some(name) = pending.pop() {
        if name == ".." {
            current.pop();
            continue;
        }
        let candidate = current.join(&name);
        match fs::symlink_metadata(&candidate) {
            Ok(meta) if meta.file_type().is_symlink() => {
                hops += 1;
                if hops > MAX_SYMLINK_HOPS {
                    return Err(ResolveError::Loop);
                }
                let target = fs::read_link(&candidate).map_err(ResolveError::Io)?;
                push_components(&mut pending, &target, &mut current);
            }
            Ok(_) => current = candidate,
            Err(e) if e.kind() == io::ErrorKind::NotFound => current = candidate,
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Err(ResolveError::Loop),
            Err(e) => return Err(ResolveError::Io(e)),
        }
    }
    Ok(current)
}

/// Queues `path`'s components for [`final_target`]; an absolute path
/// restarts from `/`.
fn push_components(pending: &mut Vec<OsString>, path: &Path, current: &mut PathBuf) {
    let mut names = Vec::new();
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => {
                *current = PathBuf::from("/");
                names.clear();
            }
            Component::CurDir => {}
            Component::ParentDir => names.push(OsString::from("..")),
            Component::Normal(n) => names.push(n.to_owned()),
        }
    }
    pending.extend(names.into_iter().rev());
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn root() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        (dir, root)
    }

    #[test]
    fn dangling_links_lead_to_their_target() {
        let (_dir, root) = root();
        symlink(".envrc", root.join("todo.md")).unwrap();
        symlink("todo.md", root.join("chain")).unwrap();
        assert_eq!(
            final_target(&root.join("chain")).unwrap(),
            root.join(".envrc")
        );
        let judged = JudgedPath::resolve(&root, "chain");
        assert_eq!(judged.target, Some(root.join(".envrc")));
        assert_eq!(judged.found, None);
        assert!(judged.parent.is_some());
    }

    #[test]
    fn dot_dot_after_a_link_applies_to_its_target() {
        let (_dir, root) = root();
        fs::create_dir_all(root.join("a/b")).unwrap();
        symlink("a/b", root.join("l")).unwrap();
        assert_eq!(
            final_target(&root.join("l/../x")).unwrap(),
            root.join("a/x")
        );
    }

    #[test]
    fn cycles_are_refused() {
        let (_dir, root) = root();
        symlink("y", root.join("x")).unwrap();
        symlink("x", root.join("y")).unwrap();
        assert!(matches!(
            final_target(&root.join("x")),
            Err(ResolveError::Loop)
        ));
        assert_eq!(JudgedPath::resolve(&root, "x").target, None);
    }

    #[test]
    fn an_existing_file_is_recorded_by_identity() {
        let (_dir, root) = root();
        fs::write(root.join("a.txt"), "x").unwrap();
        let judged = JudgedPath::resolve(&root, "a.txt");
        let meta = fs::metadata(root.join("a.txt")).unwrap();
        assert_eq!(judged.found, Some(FileId::of(&meta)));
        let paths = JudgedPaths::new(vec![judged]);
        assert!(paths.given("a.txt").is_some());
        assert_eq!(paths.at(&root.join("a.txt")).count(), 1);
    }
}
