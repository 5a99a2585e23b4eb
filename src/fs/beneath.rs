//! File-descriptor-relative primitives: every file the tools open, create,
//! rename or link-check is reached beneath an open handle of a workspace
//! root, one name at a time, and no symbolic link is ever followed on the
//! way.
//!
//! Checking a path string and then opening it is a race: a neighbour
//! process can exchange a directory on the path for a symbolic link
//! pointing out of the workspace between the two (`renameat2` with
//! `RENAME_EXCHANGE` does it atomically), and `O_NOFOLLOW` guards only the
//! last component. So the canonical path the workspace decided on is walked
//! again here, relative to the root's directory handle:
//! `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` where the kernel has it,
//! else `openat(O_NOFOLLOW | O_DIRECTORY)` one component at a time (kernels
//! before 5.6, or a seccomp filter answering `ENOSYS`/`EPERM`). A component
//! that became a symbolic link (or stopped being a directory) meanwhile is
//! refused with [`FileError::Changed`]; the operation is never done
//! elsewhere.
//!
//! Files are typed before they are opened and opened with `O_NONBLOCK`
//! (cleared afterwards), so a FIFO, socket or device is refused instead of
//! hanging the session.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};

use rustix::fs::{
    AtFlags, Dir, FileType, Mode, OFlags, ResolveFlags, Stat, mkdirat, openat, openat2, statat,
    unlinkat,
};
use rustix::io::Errno;

/// How many directory entries a hard-link scan looks at before it gives up
/// (and the file is refused, failing closed).
pub(crate) const MAX_LINK_SCAN_ENTRIES: usize = 200_000;

/// Why a file could not be reached or used. [`FileError::message`] gives
/// the sentence the model reads.
#[derive(Debug)]
pub(crate) enum FileError {
    /// Nothing is there (any more).
    NotFound,
    /// A directory on the path was moved or replaced by a symbolic link
    /// while it was being opened.
    Changed,
    /// A directory where a file was expected.
    IsDirectory,
    /// A FIFO, socket, device or other non-regular file; holds its kind.
    NotRegular(&'static str),
    /// The file has more hard links than the scan found inside the
    /// workspace: one of them may be outside.
    LinksUnproven {
        /// The file's link count.
        links: u64,
        /// Names found inside the workspace (0 when the scan gave up).
        found: usize,
    },
    /// Another name of the file is a path walks leave out (read-denied).
    LinkDenied,
    /// The process may not open the file for writing.
    NotWritable {
        /// The file's permission bits.
        mode: u32,
        /// The file's owner.
        uid: u32,
        /// What the kernel said.
        reason: io::Error,
    },
    /// What is at the path is not what the gate judged when it allowed the
    /// call (another file was put at its name, one was created where there
    /// was none, or its directory was replaced).
    NotJudged,
    /// Anything else.
    Io(io::Error),
}

impl FileError {
    /// The sentence for the model. `verb` is what the tool was doing
    /// ("read", "write", "edit").
    pub(crate) fn message(&self, shown: &str, verb: &str) -> String {
        match self {
            FileError::NotFound => format!("Cannot {verb} {shown}: it does not exist (any more)."),
            FileError::Changed => format!(
                "Cannot {verb} {shown}: a directory on its path changed while it was being opened (it was moved, or replaced by a symbolic link); nothing was done. Try again."
            ),
            FileError::IsDirectory => {
                format!("{shown} is a directory; give the path of a file to {verb}.")
            }
            FileError::NotRegular(kind) => {
                format!("{shown} is a {kind}, not a regular file; {verb} only regular files.")
            }
            FileError::LinksUnproven { links, found } => format!(
                "Cannot {verb} {shown}: it has {links} hard links and only {found} of them were found inside the workspace, so it may be the same file as one outside. Hard-linked files are read and written only when every name is inside the workspace; work on a copy instead."
            ),
            FileError::LinkDenied => format!(
                "Cannot {verb} {shown}: it is a hard link to a file that also has a name you may not read."
            ),
            FileError::NotWritable { mode, uid, reason } => format!(
                "{shown} is not writable by this process (mode {mode:04o}, owner uid {uid}: {reason}); nothing was changed. Leave it as it is, or ask the user to change its permissions."
            ),
            FileError::NotJudged => format!(
                "Cannot {verb} {shown}: it is no longer the file this call was approved for (it was replaced, created or moved after the decision); nothing was done. Look at it again, then make the call again."
            ),
            FileError::Io(e) => format!("Cannot {verb} {shown}: {e}"),
        }
    }
}

impl From<io::Error> for FileError {
    fn from(e: io::Error) -> Self {
        FileError::Io(e)
    }
}

/// The error for one step of a walk: `ELOOP` (a symbolic link met),
/// `ENOTDIR` (not a directory any more), `EXDEV` (openat2 saw the path
/// leave the root) and `EAGAIN` (openat2 saw a rename race) all mean the
/// path changed under us.
fn step_error(e: Errno) -> FileError {
    match e {
        Errno::LOOP | Errno::NOTDIR | Errno::XDEV | Errno::AGAIN => FileError::Changed,
        Errno::NOENT => FileError::NotFound,
        e => FileError::Io(io::Error::from(e)),
    }
}

/// How a directory path beneath a root is resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Resolver {
    /// One `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`.
    Openat2,
    /// `openat(O_NOFOLLOW | O_DIRECTORY)` per component.
    Walk,
}

/// 0: not known yet, 1: openat2 works, 2: it does not.
static OPENAT2: AtomicU8 = AtomicU8::new(0);

fn resolver() -> Resolver {
    match OPENAT2.load(Ordering::Relaxed) {
        2 => Resolver::Walk,
        _ => Resolver::Openat2,
    }
}

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::CLOEXEC)
    .union(OFlags::NOFOLLOW);

/// Opens a workspace root (a canonical directory path) as a handle.
pub(crate) fn open_root(path: &Path) -> io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    match rustix::fs::open(path, flags, Mode::empty()) {
        Ok(fd) => Ok(fd),
        // A root that may be searched but not listed still works as a
        // base for openat.
        Err(Errno::ACCESS) => Ok(rustix::fs::open(path, OFlags::PATH | flags, Mode::empty())?),
        Err(e) => Err(e.into()),
    }
}

/// The names of `rel`, which must be a relative path of plain names (the
/// canonical part below a root).
fn names(rel: &Path) -> Result<Vec<&OsStr>, FileError> {
    rel.components()
        .map(|c| match c {
            Component::Normal(n) => Ok(n),
            _ => Err(FileError::Io(io::Error::new(
                io::ErrorKind::InvalidInput,
                "internal error: a resolved path held a non-plain component",
            ))),
        })
        .collect()
}

/// Opens the directory `rel` beneath `root` without following any symbolic
/// link and without leaving `root`.
pub(crate) fn open_dir(root: BorrowedFd<'_>, rel: &Path) -> Result<OwnedFd, FileError> {
    let resolver = resolver();
    match open_dir_with(root, rel, resolver) {
        Err(FileError::Io(e))
            if resolver == Resolver::Openat2
                && matches!(e.raw_os_error(), Some(libc::ENOSYS) | Some(libc::EPERM)) =>
        {
            // No openat2 here (old kernel, or a seccomp filter): walk.
            OPENAT2.store(2, Ordering::Relaxed);
            open_dir_with(root, rel, Resolver::Walk)
        }
        other => {
            if other.is_ok() && resolver == Resolver::Openat2 {
                OPENAT2.store(1, Ordering::Relaxed);
            }
            other
        }
    }
}

/// [`open_dir`] with a chosen resolver (tests exercise both).
pub(crate) fn open_dir_with(
    root: BorrowedFd<'_>,
    rel: &Path,
    resolver: Resolver,
) -> Result<OwnedFd, FileError> {
    let names = names(rel)?;
    if names.is_empty() {
        return openat(root, ".", DIR_FLAGS, Mode::empty()).map_err(step_error);
    }
    match resolver {
        Resolver::Openat2 => {
            let resolve =
                ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
            match openat2(root, rel, DIR_FLAGS, Mode::empty(), resolve) {
                Ok(fd) => Ok(fd),
                Err(e @ (Errno::NOSYS | Errno::PERM)) => Err(FileError::Io(e.into())),
                Err(e) => Err(step_error(e)),
            }
        }
        Resolver::Walk => {
            let mut current: Option<OwnedFd> = None;
            for name in names {
                let base = match &current {
                    Some(fd) => fd.as_fd(),
                    None => root,
                };
                let next = openat(base, name, DIR_FLAGS, Mode::empty()).map_err(step_error)?;
                current = Some(next);
            }
            current.ok_or(FileError::NotFound)
        }
    }
}

/// Directories created by [`create_dirs`], so that a write that is then
/// cancelled or fails can take them away again.
#[derive(Debug, Default)]
pub(crate) struct CreatedDirs(Vec<(OwnedFd, OsString)>);

impl CreatedDirs {
    /// True when nothing was created.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Removes the created directories, deepest first (each only if still
    /// empty).
    pub(crate) fn undo(mut self) {
        while let Some((parent, name)) = self.0.pop() {
            let _ = unlinkat(&parent, name.as_os_str(), AtFlags::REMOVEDIR);
        }
    }
}

/// Opens the directory `rel` beneath `root`, creating missing components
/// (mode 0777 less the umask) with `mkdirat`; never follows a link.
pub(crate) fn create_dirs(
    root: BorrowedFd<'_>,
    rel: &Path,
) -> Result<(OwnedFd, CreatedDirs), FileError> {
    let mut created = CreatedDirs::default();
    let mut current = openat(root, ".", DIR_FLAGS, Mode::empty()).map_err(step_error)?;
    for name in names(rel)? {
        let next = match openat(&current, name, DIR_FLAGS, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => {
                match mkdirat(&current, name, Mode::from_bits_truncate(0o777)) {
                    Ok(()) => {
                        let parent = current.try_clone()?;
                        created.0.push((parent, name.to_owned()));
                    }
                    Err(Errno::EXIST) => {}
                    Err(e) => {
                        created.undo();
                        return Err(FileError::Io(e.into()));
                    }
                }
                match openat(&current, name, DIR_FLAGS, Mode::empty()) {
                    Ok(fd) => fd,
                    Err(e) => {
                        created.undo();
                        return Err(step_error(e));
                    }
                }
            }
            Err(e) => {
                created.undo();
                return Err(step_error(e));
            }
        };
        current = next;
    }
    Ok((current, created))
}

/// `fstatat(dir, name, AT_SYMLINK_NOFOLLOW)`; `None` when nothing is there.
pub(crate) fn stat_at(dir: BorrowedFd<'_>, name: &OsStr) -> Result<Option<Stat>, FileError> {
    match statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => Ok(Some(st)),
        Err(Errno::NOENT) => Ok(None),
        Err(e) => Err(step_error(e)),
    }
}

/// What a FIFO is called in messages.
const FIFO: &str = "FIFO (named pipe)";
/// What a file of no known kind is called in messages.
const SPECIAL_FILE: &str = "special file";

/// What a non-regular file is, for messages; `None` for a regular file.
pub(crate) fn kind_name(mode: u32) -> Option<&'static str> {
    match mode & libc::S_IFMT {
        libc::S_IFREG => None,
        libc::S_IFDIR => Some("directory"),
        libc::S_IFLNK => Some("symbolic link"),
        libc::S_IFIFO => Some(FIFO),
        libc::S_IFSOCK => Some("socket"),
        libc::S_IFCHR => Some("character device"),
        libc::S_IFBLK => Some("block device"),
        _ => Some(SPECIAL_FILE),
    }
}

/// Refuses anything but a regular file, by its `st_mode`.
pub(crate) fn require_regular(mode: u32) -> Result<(), FileError> {
    match mode & libc::S_IFMT {
        libc::S_IFREG => Ok(()),
        libc::S_IFDIR => Err(FileError::IsDirectory),
        // The canonical path named no link: one appeared meanwhile.
        libc::S_IFLNK => Err(FileError::Changed),
        _ => Err(FileError::NotRegular(
            kind_name(mode).unwrap_or(SPECIAL_FILE),
        )),
    }
}

/// How a file is opened by [`open_file_at`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    /// `O_RDONLY`.
    Read,
    /// `O_WRONLY`, without truncating.
    Write,
}

/// Opens the regular file `name` in `dir`: typed first (a FIFO, socket or
/// device is refused before any open), then opened with `O_NOFOLLOW` and
/// `O_NONBLOCK` (so a file swapped for a FIFO meanwhile cannot block), typed
/// again through the handle, and `O_NONBLOCK` cleared.
pub(crate) fn open_file_at(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    access: Access,
) -> Result<File, FileError> {
    let st = stat_at(dir, name)?.ok_or(FileError::NotFound)?;
    require_regular(st.st_mode)?;
    let mode = match access {
        Access::Read => OFlags::RDONLY,
        Access::Write => OFlags::WRONLY,
    };
    let flags = mode | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK | OFlags::NOCTTY;
    let fd = match openat(dir, name, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::LOOP) => return Err(FileError::Changed),
        Err(Errno::NOENT) => return Err(FileError::NotFound),
        // A FIFO with no reader, opened for writing without blocking.
        Err(Errno::NXIO) => return Err(FileError::NotRegular(FIFO)),
        Err(e @ (Errno::ACCESS | Errno::PERM | Errno::ROFS | Errno::TXTBSY))
            if access == Access::Write =>
        {
            return Err(FileError::NotWritable {
                mode: st.st_mode & 0o7777,
                uid: st.st_uid,
                reason: e.into(),
            });
        }
        Err(e) => return Err(FileError::Io(e.into())),
    };
    let file = File::from(fd);
    let st = rustix::fs::fstat(&file).map_err(io::Error::from)?;
    require_regular(st.st_mode)?;
    let flags = rustix::fs::fcntl_getfl(&file).map_err(io::Error::from)?;
    rustix::fs::fcntl_setfl(&file, flags & !OFlags::NONBLOCK).map_err(io::Error::from)?;
    Ok(file)
}

/// Opens the subdirectory `name` of `dir`, never following a link.
pub(crate) fn open_subdir_at(dir: BorrowedFd<'_>, name: &OsStr) -> Result<OwnedFd, FileError> {
    openat(dir, name, DIR_FLAGS, Mode::empty()).map_err(step_error)
}

/// The names of a directory handle's entries (without `.` and `..`), with
/// whether each is a directory (by `d_type`, or `fstatat` where the
/// filesystem does not say).
pub(crate) fn list_dir(dir: &OwnedFd) -> io::Result<Vec<(OsString, bool)>> {
    // Opened anew (not a clone of `dir`, which would share its offset).
    let handle = Dir::new(openat(dir, ".", DIR_FLAGS, Mode::empty())?)?;
    let mut out = Vec::new();
    for entry in handle {
        let entry = entry?;
        let name = OsStr::from_bytes(entry.file_name().to_bytes());
        if name == "." || name == ".." {
            continue;
        }
        let is_dir = match entry.file_type() {
            FileType::Unknown => statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
                .is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFDIR),
            t => t == FileType::Directory,
        };
        out.push((name.to_owned(), is_dir));
    }
    Ok(out)
}

/// What a hard-link scan found.
#[derive(Debug)]
pub(crate) struct LinkScan {
    /// The names of the file below the scanned root (relative to it).
    pub(crate) names: Vec<PathBuf>,
    /// False when the scan stopped at [`MAX_LINK_SCAN_ENTRIES`].
    pub(crate) complete: bool,
}

/// Looks for every name of the file `(dev, ino)` beneath `root`, depth
/// first through directory handles (no link followed, no other
/// filesystem entered: a hard link cannot cross one), stopping once
/// `links` names are found or after [`MAX_LINK_SCAN_ENTRIES`] entries.
pub(crate) fn find_links(
    root: BorrowedFd<'_>,
    dev: u64,
    ino: u64,
    links: u64,
) -> io::Result<LinkScan> {
    let mut names = Vec::new();
    let mut seen = 0usize;
    let start = openat(root, ".", DIR_FLAGS, Mode::empty())?;
    let mut stack: Vec<(OwnedFd, PathBuf)> = vec![(start, PathBuf::new())];
    while let Some((fd, rel)) = stack.pop() {
        let handle = match openat(&fd, ".", DIR_FLAGS, Mode::empty()).and_then(Dir::new) {
            Ok(h) => h,
            // A directory we may not list: its names cannot be proven.
            Err(_) => continue,
        };
        for entry in handle {
            let Ok(entry) = entry else { continue };
            let name = OsStr::from_bytes(entry.file_name().to_bytes());
            if name == "." || name == ".." {
                continue;
            }
            seen += 1;
            if seen > MAX_LINK_SCAN_ENTRIES {
                return Ok(LinkScan {
                    names,
                    complete: false,
                });
            }
            match entry.file_type() {
                FileType::Directory => {}
                FileType::RegularFile | FileType::Unknown => {}
                _ => continue,
            }
            let Ok(st) = statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW) else {
                continue;
            };
            match st.st_mode & libc::S_IFMT {
                libc::S_IFDIR if st.st_dev == dev => {
                    if let Ok(sub) = openat(&fd, name, DIR_FLAGS, Mode::empty()) {
                        stack.push((sub, rel.join(name)));
                    }
                }
                libc::S_IFREG if st.st_dev == dev && st.st_ino == ino => {
                    names.push(rel.join(name));
                    if names.len() as u64 >= links {
                        return Ok(LinkScan {
                            names,
                            complete: true,
                        });
                    }
                }
                _ => {}
            }
        }
    }
    Ok(LinkScan {
        names,
        complete: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::io::Read;
    use std::os::unix::fs::symlink;
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;

    #[test]
    fn both_resolvers_open_nested_dirs_and_refuse_links() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("a/b")).unwrap();
        symlink("/", dir.path().join("a/out")).unwrap();
        symlink("b", dir.path().join("a/in")).unwrap();
        let root = open_root(dir.path()).unwrap();
        for resolver in [Resolver::Openat2, Resolver::Walk] {
            assert!(open_dir_with(root.as_fd(), Path::new("a/b"), resolver).is_ok());
            assert!(open_dir_with(root.as_fd(), Path::new(""), resolver).is_ok());
            for link in ["a/out", "a/in", "a/out/etc"] {
                let got = open_dir_with(root.as_fd(), Path::new(link), resolver);
                assert!(
                    matches!(got, Err(FileError::Changed)),
                    "{resolver:?} {link}"
                );
            }
            let got = open_dir_with(root.as_fd(), Path::new("a/none"), resolver);
            assert!(matches!(got, Err(FileError::NotFound)), "{resolver:?}");
            let got = open_dir_with(root.as_fd(), Path::new("../x"), resolver);
            assert!(matches!(got, Err(FileError::Io(_))), "{resolver:?}");
        }
    }

    /// The walk fallback under a neighbour exchanging `d` and `dl -> out`:
    /// never a byte from outside.
    #[test]
    fn walk_fallback_never_leaves_the_root_while_a_neighbour_swaps() {
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("t.txt"), "OUTSIDE").unwrap();
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("d")).unwrap();
        fs::write(dir.path().join("d/t.txt"), "inside").unwrap();
        symlink(outside.path(), dir.path().join("dl")).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let swapper = {
            let stop = stop.clone();
            let (d, dl) = (dir.path().join("d"), dir.path().join("dl"));
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let _ = rustix::fs::renameat_with(
                        rustix::fs::CWD,
                        &d,
                        rustix::fs::CWD,
                        &dl,
                        rustix::fs::RenameFlags::EXCHANGE,
                    );
                    std::thread::yield_now();
                }
            })
        };
        let root = open_root(dir.path()).unwrap();
        let (mut ok, mut outside_bytes) = (0, 0);
        for i in 0..20_000 {
            if ok >= 1000 {
                break;
            }
            let resolver = if i % 2 == 0 {
                Resolver::Walk
            } else {
                Resolver::Openat2
            };
            let Ok(d) = open_dir_with(root.as_fd(), Path::new("d"), resolver) else {
                continue;
            };
            let Ok(mut f) = open_file_at(d.as_fd(), OsStr::new("t.txt"), Access::Read) else {
                continue;
            };
            let mut s = String::new();
            f.read_to_string(&mut s).unwrap();
            if s.contains("OUTSIDE") {
                outside_bytes += s.len();
            }
            ok += 1;
        }
        stop.store(true, Ordering::Relaxed);
        swapper.join().unwrap();
        assert_eq!(outside_bytes, 0);
        assert!(ok > 0, "no open succeeded at all");
    }

    #[test]
    fn fifos_and_sockets_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            dir.path().join("p"),
            Mode::from_bits_truncate(0o644),
        )
        .unwrap();
        let _sock = std::os::unix::net::UnixListener::bind(dir.path().join("s")).unwrap();
        let root = open_root(dir.path()).unwrap();
        for access in [Access::Read, Access::Write] {
            let e = open_file_at(root.as_fd(), OsStr::new("p"), access).unwrap_err();
            assert_eq!(
                e.message("p", "read"),
                "p is a FIFO (named pipe), not a regular file; read only regular files."
            );
            let e = open_file_at(root.as_fd(), OsStr::new("s"), access).unwrap_err();
            assert!(matches!(e, FileError::NotRegular("socket")), "{e:?}");
        }
        let e = open_file_at(root.as_fd(), OsStr::new("p/x"), Access::Read).unwrap_err();
        assert!(matches!(e, FileError::Changed | FileError::Io(_)), "{e:?}");
    }

    #[test]
    fn created_dirs_are_undone_deepest_first() {
        let dir = tempfile::tempdir().unwrap();
        let root = open_root(dir.path()).unwrap();
        let (_fd, created) = create_dirs(root.as_fd(), Path::new("x/y/z")).unwrap();
        assert!(dir.path().join("x/y/z").is_dir());
        assert!(!created.is_empty());
        created.undo();
        assert!(!dir.path().join("x").exists());
    }

    #[test]
    fn link_scan_finds_names_and_stops_when_all_are_found() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("a/b")).unwrap();
        fs::write(dir.path().join("f"), "x").unwrap();
        fs::hard_link(dir.path().join("f"), dir.path().join("a/b/g")).unwrap();
        let st = statat(rustix::fs::CWD, dir.path().join("f"), AtFlags::empty()).unwrap();
        let root = open_root(dir.path()).unwrap();
        let scan = find_links(root.as_fd(), st.st_dev, st.st_ino, 2).unwrap();
        assert!(scan.complete);
        let mut names = scan.names;
        names.sort();
        assert_eq!(names, vec![PathBuf::from("a/b/g"), PathBuf::from("f")]);
    }
}
