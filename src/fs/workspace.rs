//! The [`Workspace`]: the roots every tool path is confined to.
//!
//! A path from a model is resolved against the primary root, then every
//! symbolic link along it is followed (through chains, and with `..` applied
//! to the link's *target*, as the kernel does), and the result is compared
//! component by component with the canonical roots. String-prefix checks
//! (`/ws` vs `/ws-evil`) and lexical `..` handling are the classic holes this
//! avoids.
//!
//! That decides *which* file a path names. The file is then reached by
//! walking that canonical path again beneath an open handle of its root,
//! with no symbolic link followed (see `beneath.rs`): a directory swapped
//! for a link by a neighbour between the check and the open makes the
//! operation fail ("changed while it was being opened"), never land
//! outside. The workspace holds the roots' handles, opened at construction.
//!
//! ```
//! use agentcore::fs::workspace::Workspace;
//!
//! let dir = std::env::temp_dir();
//! let ws = Workspace::new(&dir).unwrap();
//! let err = ws.resolve_new("../../../../etc/passwd").unwrap_err();
//! assert_eq!(err.to_string(), r#"path "../../../../etc/passwd" is outside the workspace"#);
//! ```

use std::ffi::OsString;
use std::fs::{self, File, Metadata};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::beneath::{self, Access, CreatedDirs, FileError};
use super::learned::Learned;
use crate::fs::judged::{FileId, JudgedPaths, ResolveError, final_target};
use crate::limits::paths::MAX_PATH_BYTES;

/// Why a canonical path that lies in no root is refused, where that can
/// only be a bug or a race (paths are resolved into a root first).
pub(crate) const OUTSIDE_ROOTS: &str = "the path is outside the workspace";

/// The longest name of one file or directory, in bytes (Linux's
/// `NAME_MAX`; the system refuses longer ones, and the refusal is reported
/// as [`PathError::TooLong`]).
const MAX_NAME_BYTES: usize = 255;

/// Why a path was refused. The `Display` text is what the model reads.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PathError {
    /// The path resolves outside every root.
    #[error("path \"{0}\" is outside the workspace")]
    Outside(String),
    /// The empty string was given.
    #[error(
        "path is empty; give a file or directory path, absolute or relative to the workspace root"
    )]
    Empty,
    /// The path contains a NUL byte, which no file name can hold.
    #[error("path contains a NUL byte; file names cannot contain NUL")]
    Nul,
    /// The path (or one of its names) is longer than the system allows.
    #[error(
        "path is too long ({0} bytes; the limit is {MAX_PATH_BYTES} bytes, and {MAX_NAME_BYTES} bytes for one name); give a shorter path"
    )]
    TooLong(usize),
    /// More than 40 symbolic links were met, or a cycle.
    #[error("path \"{0}\" has too many levels of symbolic links")]
    SymlinkLoop(String),
    /// The path is inside the workspace but nothing is there.
    #[error("path \"{0}\" does not exist")]
    NotFound(String),
    /// The path now leads to another file than the one the gate judged (a
    /// link on it changed after the decision).
    #[error(
        "path \"{0}\" now leads to a different file than the one this call was approved for (a symbolic link on it changed after the decision); nothing was done. Check where the path leads, then make the call again."
    )]
    Rejudged(String),
    /// The gate judged the call's paths and this one was not among them.
    #[error(
        "path \"{0}\" was not among the paths this call was approved for; nothing was done. Give every path the call works on in its arguments."
    )]
    NotJudged(String),
    /// Resolving failed for another reason (permissions, a file used as a
    /// directory, …).
    #[error("cannot resolve path \"{path}\": {source}")]
    Io {
        /// The path as given.
        path: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

/// The directories the tools may touch: a primary root (where relative paths
/// start and against which results are written) and any extra roots, such
/// as the bash tool's session output folder. Cheap to clone.
#[derive(Clone)]
pub struct Workspace {
    roots: Arc<Vec<PathBuf>>,
    /// An open directory handle per root, in the order of `roots`.
    handles: Arc<Vec<Arc<OwnedFd>>>,
    exclusions: Option<Exclusions>,
    /// The same decision for an entry a walk met, its kind known.
    entry_exclusions: Option<EntryExclusions>,
    read_denied: Option<Exclusions>,
    /// What walks learned, for the next ones (shared by the clones).
    learned: Arc<Learned>,
    /// The paths of the call being run as the gate judged them: set on a
    /// per-call copy ([`Workspace::judged`]).
    judged: Option<JudgedPaths>,
}

/// Decides which paths walks (glob, grep, ls) leave out of their results,
/// e.g. the files a read-deny rule of the approval engine covers. Given
/// absolute paths.
pub type Exclusions = Arc<dyn Fn(&Path) -> bool + Send + Sync>;

/// What a walk knows of an entry from its directory's listing (`d_type`,
/// or an `lstat` relative to the directory's handle where the file system
/// does not say): symbolic links are not followed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link.
    Symlink,
    /// A FIFO, socket or device.
    Other,
}

/// [`Exclusions`] for an entry a walk met, given its kind, so that the
/// decision needs no `lstat` of the path. Given absolute paths.
pub type EntryExclusions = Arc<dyn Fn(&Path, EntryKind) -> bool + Send + Sync>;

impl std::fmt::Debug for Workspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workspace")
            .field("roots", &self.roots)
            .field("exclusions", &self.exclusions.is_some())
            .field("read_denied", &self.read_denied.is_some())
            .field("judged", &self.judged.is_some())
            .finish()
    }
}

impl Workspace {
    /// A workspace rooted at `root`, canonicalized now. A root given through
    /// a symlink accepts paths written through either form.
    pub fn new(root: impl AsRef<Path>) -> io::Result<Self> {
        let root = canonical_dir(root.as_ref())?;
        let handle = beneath::open_root(&root)?;
        Ok(Self {
            roots: Arc::new(vec![root]),
            handles: Arc::new(vec![Arc::new(handle)]),
            exclusions: None,
            entry_exclusions: None,
            read_denied: None,
            learned: Arc::default(),
            judged: None,
        })
    }

    /// This workspace with one more root (canonicalized now).
    pub fn with_root(mut self, root: impl AsRef<Path>) -> io::Result<Self> {
        self.add_root(root)?;
        Ok(self)
    }

    /// Adds a root (canonicalized now). Meant for session start; roots are
    /// never widened per call.
    pub fn add_root(&mut self, root: impl AsRef<Path>) -> io::Result<()> {
        let root = canonical_dir(root.as_ref())?;
        if !self.roots.contains(&root) {
            let handle = beneath::open_root(&root)?;
            Arc::make_mut(&mut self.roots).push(root);
            Arc::make_mut(&mut self.handles).push(Arc::new(handle));
        }
        Ok(())
    }

    /// This workspace with paths that walks leave out (glob, grep and ls
    /// skip them and do not descend into excluded directories).
    pub fn with_exclusions(mut self, exclusions: Exclusions) -> Self {
        self.exclusions = Some(exclusions);
        self
    }

    /// This workspace with the exclusions' decision for an entry a walk
    /// met, its kind known (the same decision as [`Workspace::with_exclusions`]'s,
    /// without looking the path up again). Walks use it when given.
    pub fn with_entry_exclusions(mut self, exclusions: EntryExclusions) -> Self {
        self.entry_exclusions = Some(exclusions);
        self
    }

    /// What walks learned for the next ones.
    pub(crate) fn learned(&self) -> &Learned {
        &self.learned
    }

    /// Whether walks leave `path` out.
    pub(crate) fn is_excluded(&self, path: &Path) -> bool {
        self.exclusions
            .as_ref()
            .is_some_and(|excluded| excluded(path))
    }

    /// Whether walks leave out the entry `path`, of `kind`.
    pub(crate) fn is_excluded_entry(&self, path: &Path, kind: EntryKind) -> bool {
        match &self.entry_exclusions {
            Some(excluded) => excluded(path, kind),
            None => self.is_excluded(path),
        }
    }

    /// This workspace with the paths a read-deny rule covers: `edit` and
    /// `write` refuse them before looking at the file, so that their answer
    /// does not tell what is there. Narrower than the walk exclusions, which
    /// also leave out what reading would ask about (protected paths).
    pub fn with_read_denied(mut self, denied: Exclusions) -> Self {
        self.read_denied = Some(denied);
        self
    }

    /// Whether a read-deny rule covers `path`.
    pub fn is_read_denied(&self, path: &Path) -> bool {
        self.read_denied.as_ref().is_some_and(|denied| denied(path))
    }

    /// This workspace for one call whose paths the gate judged (`judged`
    /// from the call's [`GatedArgs::extensions`](crate::GatedArgs::extensions);
    /// `None` when no gate judged them, and then the copy is as this one).
    ///
    /// On the copy, resolving a path the gate did not judge is refused,
    /// and so is one that now leads elsewhere than the judged target;
    /// opening the judged target refuses a file that is not the one judged
    /// (another file put at its name, or one created where there was none),
    /// and a directory holding it that is not the one judged.
    pub fn judged(&self, judged: Option<&JudgedPaths>) -> Self {
        let mut copy = self.clone();
        copy.judged = judged.cloned();
        copy
    }

    /// The primary root, canonical.
    pub fn root(&self) -> &Path {
        &self.roots[0]
    }

    /// All roots, canonical, the primary first.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Whether a canonical (symlink-free) path lies in one of the roots,
    /// compared component by component.
    pub(crate) fn contains(&self, canonical: &Path) -> bool {
        self.roots.iter().any(|r| canonical.starts_with(r))
    }

    /// Resolves `path` to the canonical path of something that exists inside
    /// the workspace.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, PathError> {
        let resolved = self.resolve_new(path)?;
        match fs::symlink_metadata(&resolved) {
            Ok(_) => Ok(resolved),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                Err(PathError::NotFound(path.to_owned()))
            }
            Err(e) => Err(io_error(path, e)),
        }
    }

    /// Resolves `path`, which need not exist yet (a file about to be
    /// created), to a canonical path inside the workspace: symlinks along
    /// the existing part are followed, so a symlinked parent directory
    /// pointing out is refused, and so is a dangling symlink whose target
    /// would lie outside.
    pub fn resolve_new(&self, path: &str) -> Result<PathBuf, PathError> {
        check_syntax(path)?;
        let given = Path::new(path);
        let start = if given.is_absolute() {
            given.to_path_buf()
        } else {
            self.root().join(given)
        };
        let resolved = resolve_links(&start, path)?;
        if !self.contains(&resolved) {
            return Err(PathError::Outside(path.to_owned()));
        }
        if let Some(judged) = &self.judged {
            let Some(judgement) = judged.given(path) else {
                return Err(PathError::NotJudged(path.to_owned()));
            };
            if judgement.target.as_deref() != Some(resolved.as_path()) {
                return Err(PathError::Rejudged(path.to_owned()));
            }
        }
        Ok(resolved)
    }

    /// Refuses what was opened at `canonical` when it is not what the gate
    /// judged there: `found` is the file opened (`None` when there is none
    /// and one is about to be created), `dir` the directory holding it.
    fn check_judged(
        &self,
        canonical: &Path,
        found: Option<FileId>,
        dir: Option<BorrowedFd<'_>>,
    ) -> Result<(), FileError> {
        let Some(judged) = &self.judged else {
            return Ok(());
        };
        for judgement in judged.at(canonical) {
            if judgement.found != found {
                return Err(FileError::NotJudged);
            }
            if let (Some(expected), Some(dir)) = (judgement.parent, dir)
                && fd_id(dir)? != expected
            {
                return Err(FileError::NotJudged);
            }
        }
        Ok(())
    }

    /// `path` as results show it: relative to the primary root (`.` for the
    /// root itself), or absolute when it lies in another root or outside.
    pub fn display(&self, path: &Path) -> String {
        match path.strip_prefix(self.root()) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
            Ok(rel) => rel.to_string_lossy().into_owned(),
            Err(_) => path.to_string_lossy().into_owned(),
        }
    }

    /// A path argument as a UI line shows it ("Reading src/lib.rs"):
    /// relative when it lies under the primary root, as given otherwise.
    /// Purely lexical: nothing is resolved or touched.
    pub(crate) fn shown_arg(&self, path: &str) -> String {
        match Path::new(path).strip_prefix(self.root()) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel.to_string_lossy().into_owned(),
            _ => path.to_owned(),
        }
    }

    /// The root holding `canonical` (the deepest one when roots nest):
    /// its path and handle, and the path below it; `None` outside every
    /// root.
    pub(crate) fn locate<'a>(
        &'a self,
        canonical: &'a Path,
    ) -> Option<(&'a Path, BorrowedFd<'a>, &'a Path)> {
        self.roots
            .iter()
            .zip(self.handles.iter())
            .filter_map(|(root, handle)| {
                canonical
                    .strip_prefix(root)
                    .ok()
                    .map(|rel| (root.as_path(), handle.as_fd(), rel))
            })
            .max_by_key(|(root, _, _)| root.as_os_str().len())
    }

    fn locate_or_refuse<'a>(
        &'a self,
        canonical: &'a Path,
    ) -> Result<(&'a Path, BorrowedFd<'a>, &'a Path), FileError> {
        // Only canonical paths inside a root get here; fail closed anyway.
        self.locate(canonical).ok_or_else(|| {
            FileError::Io(io::Error::new(
                io::ErrorKind::PermissionDenied,
                OUTSIDE_ROOTS,
            ))
        })
    }

    /// Opens the directory `canonical` beneath its root, following no
    /// symbolic link.
    pub(crate) fn open_dir(&self, canonical: &Path) -> Result<OwnedFd, FileError> {
        let (_, root, rel) = self.locate_or_refuse(canonical)?;
        beneath::open_dir(root, rel)
    }

    /// Opens the parent directory of `canonical` beneath its root and gives
    /// the last name. A root itself has no parent inside the workspace:
    /// [`FileError::IsDirectory`].
    pub(crate) fn open_parent(&self, canonical: &Path) -> Result<(OwnedFd, OsString), FileError> {
        let (_, root, rel) = self.locate_or_refuse(canonical)?;
        let (Some(parent), Some(name)) = (rel.parent(), rel.file_name()) else {
            return Err(FileError::IsDirectory);
        };
        Ok((beneath::open_dir(root, parent)?, name.to_owned()))
    }

    /// [`Workspace::open_parent`], creating missing directories on the way
    /// (with `mkdirat`, beneath the root); the created ones are returned so
    /// a write that does not happen can remove them again.
    pub(crate) fn create_parent(
        &self,
        canonical: &Path,
    ) -> Result<(OwnedFd, OsString, CreatedDirs), FileError> {
        let (_, root, rel) = self.locate_or_refuse(canonical)?;
        let (Some(parent), Some(name)) = (rel.parent(), rel.file_name()) else {
            return Err(FileError::IsDirectory);
        };
        let (dir, created) = beneath::create_dirs(root, parent)?;
        if let Err(e) = self.check_judged(canonical, None, Some(dir.as_fd())) {
            created.undo();
            return Err(e);
        }
        Ok((dir, name.to_owned(), created))
    }

    /// Opens the regular file `canonical` for reading: beneath its root,
    /// typed before opening (FIFOs, sockets and devices are refused), and
    /// link-checked ([`Workspace::check_links`]). Returns the handle and its
    /// metadata.
    pub(crate) fn open_file(&self, canonical: &Path) -> Result<OpenFile, FileError> {
        let (dir, name) = self.open_parent(canonical)?;
        let file = beneath::open_file_at(dir.as_fd(), &name, Access::Read)?;
        let meta = file.metadata()?;
        self.check_judged(canonical, Some(FileId::of(&meta)), Some(dir.as_fd()))?;
        self.check_links(canonical, &meta)?;
        Ok(OpenFile {
            dir,
            name,
            file,
            meta,
        })
    }

    /// Opens what `canonical` names for the read tool: a directory (to
    /// list) or a regular file (as [`Workspace::open_file`]); anything else
    /// is refused before it is opened.
    pub(crate) fn open_for_read(&self, canonical: &Path) -> Result<Opened, FileError> {
        let (dir, name) = match self.open_parent(canonical) {
            Err(FileError::IsDirectory) => return self.open_dir(canonical).map(Opened::Dir),
            other => other?,
        };
        let st = beneath::stat_at(dir.as_fd(), &name)?.ok_or(FileError::NotFound)?;
        if st.st_mode & libc::S_IFMT == libc::S_IFDIR {
            let opened = beneath::open_subdir_at(dir.as_fd(), &name)?;
            self.check_judged(canonical, Some(fd_id(opened.as_fd())?), Some(dir.as_fd()))?;
            return Ok(Opened::Dir(opened));
        }
        let file = beneath::open_file_at(dir.as_fd(), &name, Access::Read)?;
        let meta = file.metadata()?;
        self.check_judged(canonical, Some(FileId::of(&meta)), Some(dir.as_fd()))?;
        self.check_links(canonical, &meta)?;
        Ok(Opened::File(file, meta))
    }

    /// The hard-link rule: a file with one name passes; a file with more is
    /// read or written only when a bounded scan of its root finds all of
    /// its names there and none of them is a path walks leave out
    /// (read-denied). Otherwise one of its names may be outside the
    /// workspace (reading would leak that file, writing in place would
    /// change it) or be a denied path, and it is refused.
    pub(crate) fn check_links(&self, canonical: &Path, meta: &Metadata) -> Result<(), FileError> {
        let links = meta.nlink();
        if links <= 1 {
            return Ok(());
        }
        let (root_path, root, _) = self.locate_or_refuse(canonical)?;
        let scan = beneath::find_links(root, meta.dev(), meta.ino(), links)?;
        if !scan.complete || (scan.names.len() as u64) < links {
            return Err(FileError::LinksUnproven {
                links,
                found: if scan.complete { scan.names.len() } else { 0 },
            });
        }
        if scan
            .names
            .iter()
            .any(|name| self.is_excluded(&root_path.join(name)))
        {
            return Err(FileError::LinkDenied);
        }
        Ok(())
    }
}

/// A regular file opened by [`Workspace::open_file`], with the handle of
/// its directory and its name there (for the write that may follow).
#[derive(Debug)]
pub(crate) struct OpenFile {
    /// The directory holding the file, opened beneath the root.
    pub(crate) dir: OwnedFd,
    /// The file's name in `dir`.
    pub(crate) name: OsString,
    /// The file, opened for reading.
    pub(crate) file: File,
    /// Its metadata, through the handle.
    pub(crate) meta: Metadata,
}

/// What [`Workspace::open_for_read`] opened.
#[derive(Debug)]
pub(crate) enum Opened {
    /// A directory handle.
    Dir(OwnedFd),
    /// A regular file and its metadata.
    File(File, Metadata),
}

/// The identity of an open file or directory.
fn fd_id(fd: BorrowedFd<'_>) -> Result<FileId, FileError> {
    let meta = rustix::fs::fstat(fd).map_err(|e| FileError::Io(e.into()))?;
    // The stat fields' widths differ between architectures.
    #[allow(clippy::unnecessary_cast)]
    Ok(FileId {
        dev: meta.st_dev as u64,
        ino: meta.st_ino as u64,
    })
}

fn canonical_dir(root: &Path) -> io::Result<PathBuf> {
    let canonical = fs::canonicalize(root)?;
    if !canonical.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("workspace root {} is not a directory", root.display()),
        ));
    }
    Ok(canonical)
}

fn check_syntax(path: &str) -> Result<(), PathError> {
    if path.is_empty() {
        return Err(PathError::Empty);
    }
    if path.contains('\0') {
        return Err(PathError::Nul);
    }
    if path.len() > MAX_PATH_BYTES {
        return Err(PathError::TooLong(path.len()));
    }
    Ok(())
}

fn io_error(path: &str, e: io::Error) -> PathError {
    #[cfg(unix)]
    if e.raw_os_error() == Some(libc::ENAMETOOLONG) {
        return PathError::TooLong(path.len());
    }
    #[cfg(unix)]
    if e.raw_os_error() == Some(libc::ELOOP) {
        return PathError::SymlinkLoop(path.to_owned());
    }
    PathError::Io {
        path: path.to_owned(),
        source: e,
    }
}

/// `start` resolved by [`final_target`]: every link followed, dangling
/// ones included; errors as the model reads them.
fn resolve_links(start: &Path, given: &str) -> Result<PathBuf, PathError> {
    final_target(start).map_err(|e| match e {
        ResolveError::Loop => PathError::SymlinkLoop(given.to_owned()),
        ResolveError::Io(e) => io_error(given, e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_args_are_relative_under_the_root_and_as_given_elsewhere() {
        let ws = Workspace::new(std::env::temp_dir()).unwrap();
        let inside = ws.root().join("src/lib.rs");
        assert_eq!(ws.shown_arg(inside.to_str().unwrap()), "src/lib.rs");
        assert_eq!(ws.shown_arg("notes.md"), "notes.md");
    }

    fn ws() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().expect("tempdir");
        let ws = Workspace::new(dir.path()).expect("workspace");
        (dir, ws)
    }

    #[test]
    fn relative_and_absolute_paths_resolve_to_the_same_file() {
        let (dir, ws) = ws();
        fs::write(dir.path().join("a.txt"), "x").unwrap();
        let rel = ws.resolve("a.txt").unwrap();
        let abs = ws
            .resolve(dir.path().join("a.txt").to_str().unwrap())
            .unwrap();
        assert_eq!(rel, abs);
        assert_eq!(ws.display(&rel), "a.txt");
        assert_eq!(ws.display(ws.root()), ".");
    }

    #[test]
    fn missing_file_is_not_found_but_resolves_as_new() {
        let (_dir, ws) = ws();
        assert!(matches!(
            ws.resolve("nope.txt"),
            Err(PathError::NotFound(_))
        ));
        let p = ws.resolve_new("new/dir/../file.txt").unwrap();
        assert_eq!(p, ws.root().join("new/file.txt"));
    }

    #[test]
    fn dot_dot_inside_the_root_is_fine() {
        let (dir, ws) = ws();
        fs::create_dir(dir.path().join("sub")).unwrap();
        fs::write(dir.path().join("a.txt"), "x").unwrap();
        assert_eq!(ws.resolve("sub/../a.txt").unwrap(), ws.root().join("a.txt"));
    }

    #[test]
    fn syntax_errors_have_clear_messages() {
        let (_dir, ws) = ws();
        assert!(matches!(ws.resolve(""), Err(PathError::Empty)));
        assert!(matches!(ws.resolve("a\0b"), Err(PathError::Nul)));
        let long = "a/".repeat(3000);
        assert!(matches!(ws.resolve(&long), Err(PathError::TooLong(6000))));
        assert_eq!(
            PathError::TooLong(6000).to_string(),
            "path is too long (6000 bytes; the limit is 4096 bytes, and 255 bytes for one name); give a shorter path"
        );
        let long_name = "n".repeat(300);
        assert!(matches!(
            ws.resolve(&long_name),
            Err(PathError::TooLong(300))
        ));
    }

    #[cfg(unix)]
    #[test]
    fn symlink_cycle_is_refused() {
        let (dir, ws) = ws();
        std::os::unix::fs::symlink("b", dir.path().join("a")).unwrap();
        std::os::unix::fs::symlink("a", dir.path().join("b")).unwrap();
        assert!(matches!(ws.resolve("a"), Err(PathError::SymlinkLoop(_))));
    }

    #[test]
    fn extra_roots_are_accepted_and_shown_absolute() {
        let (_dir, ws) = ws();
        let other = tempfile::tempdir().unwrap();
        fs::write(other.path().join("out.log"), "x").unwrap();
        let path = other.path().join("out.log");
        let path = path.to_str().unwrap();
        assert!(matches!(ws.resolve(path), Err(PathError::Outside(_))));
        let ws = ws.with_root(other.path()).unwrap();
        let resolved = ws.resolve(path).unwrap();
        assert!(Path::new(&ws.display(&resolved)).is_absolute());
    }
}
