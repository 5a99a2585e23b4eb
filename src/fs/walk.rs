//! The directory walk shared by glob, grep and ls: ripgrep's rules with the
//! machine-dependent parts off, so results depend only on the workspace.
//!
//! The walk goes through directory *handles*, never through path strings:
//! the start directory is opened from a handle of its root one name at a
//! time with `O_NOFOLLOW | O_DIRECTORY`, each subdirectory is opened
//! relative to its parent's handle the same way, entries are read from the
//! handle, and files are opened relative to it with `O_NOFOLLOW |
//! O_NONBLOCK`. A directory swapped for a symlink pointing out while the
//! walk runs therefore fails to open (`ELOOP`/`ENOTDIR`) and is skipped;
//! nothing outside the roots is ever listed or read. Paths built during
//! the walk are labels for results and for rule matching only.
//!
//! Ignore rules are ripgrep's (the `ignore` crate's matchers, fed from
//! files read through the handles): `.gitignore` (in and out of git
//! repositories), `.git/info/exclude`, `.ignore` and `.rgignore`, deeper
//! files first, with the ignore files of the directories between the root
//! and the start of the walk; never the user's global gitignore, nor files
//! above the workspace root. Hidden files are included; VCS directories and
//! the paths the workspace excludes are skipped.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::ffi::{CStr, OsStr};
use std::fs::{self, File};
use std::io::{self, Read};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::SystemTime;

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::overrides::Override;
use ignore::types::Types;
use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};

use super::learned::{Listing, Listings, Stamp};
use super::workspace::{EntryKind, OUTSIDE_ROOTS, Workspace};

/// Version-control directories never walked into.
const VCS_DIRS: [&str; 4] = [".git", ".hg", ".svn", ".jj"];

/// Directory handles kept open for pending directories at most; beyond
/// this a pending directory is reopened from the start handle, name by
/// name, when its turn comes (bounded descriptors on huge trees).
const MAX_HELD_HANDLES: usize = 256;

/// Threads of a parallel walk at most (ripgrep's choice).
const MAX_THREADS: usize = 12;

/// What a cancelled search (glob, grep) says.
pub(crate) const SEARCH_CANCELLED: &str = "Search cancelled.";

/// What a visitor tells the walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Go on.
    Continue,
    /// Stop the whole walk.
    Quit,
}

/// The kind of an entry, from `lstat` (symlinks are not followed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A regular file.
    File,
    /// A directory (the walk descends into it after the visitor).
    Dir,
    /// A symbolic link.
    Symlink,
    /// A FIFO, socket or device.
    Other,
}

/// One entry met by the walk.
pub(crate) struct Entry<'a> {
    path: PathBuf,
    depth: usize,
    kind: Kind,
    parent: BorrowedFd<'a>,
    name: &'a CStr,
    /// In a walk in path order: the walk and this thread's slot in it.
    ordered: Option<(&'a Mutex<Queue>, usize)>,
}

/// What a walk in path order has finished: every entry whose path is at
/// most the one being visited and below every path still pending
/// elsewhere (see [`Entry::settled`]).
#[derive(Debug)]
pub(crate) struct Settled {
    /// The smallest path another thread may still visit, or a directory
    /// still to be read; `None` when nothing is pending elsewhere.
    below: Option<PathBuf>,
    /// The entry being visited (its visitor has recorded it).
    through: PathBuf,
}

impl Settled {
    /// Whether the walk has visited `path` and everything before it in
    /// path order, once the current visit returns.
    pub(crate) fn covers(&self, path: &Path) -> bool {
        path <= self.through.as_path() && self.below.as_deref().is_none_or(|b| path < b)
    }
}

impl Entry<'_> {
    /// The path for results and rules (the walk's own label; never opened).
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The path, owned.
    pub(crate) fn into_path(self) -> PathBuf {
        self.path
    }

    /// 0 for the start of the walk, 1 for its entries, and so on.
    pub(crate) fn depth(&self) -> usize {
        self.depth
    }

    /// The entry's kind.
    pub(crate) fn kind(&self) -> Kind {
        self.kind
    }

    /// Opens a regular file for reading relative to its directory's handle,
    /// without following a symlink and without blocking on a FIFO swapped
    /// in. `Ok(None)` when the name no longer holds a regular file.
    pub(crate) fn open_file(&self) -> io::Result<Option<(File, rustix::fs::Stat)>> {
        let fd = rustix::fs::openat(
            self.parent,
            self.name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
            Mode::empty(),
        )
        .map_err(io::Error::from)?;
        let stat = rustix::fs::fstat(&fd).map_err(io::Error::from)?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
            return Ok(None);
        }
        Ok(Some((File::from(fd), stat)))
    }

    /// The handle of the directory holding the entry, and its name there:
    /// what a caller opens the entry through without following a link.
    pub(crate) fn at(&self) -> (BorrowedFd<'_>, &OsStr) {
        (self.parent, OsStr::from_bytes(self.name.to_bytes()))
    }

    /// In a walk in path order ([`walk_in_order`]): what the walk has
    /// finished, counting this entry as visited. `None` in other walks.
    pub(crate) fn settled(&self) -> Option<Settled> {
        let (queue, me) = self.ordered?;
        let queue = queue.lock().unwrap_or_else(|p| p.into_inner());
        let heap = queue.heap.peek().map(|Reverse(job)| &job.0.path);
        let slots = queue
            .slots
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != me)
            .filter_map(|(_, s)| s.as_ref());
        let below = heap.into_iter().chain(slots).min().cloned();
        Some(Settled {
            below,
            through: self.path.clone(),
        })
    }

    /// The entry's metadata (`lstat` relative to its directory's handle).
    pub(crate) fn stat(&self) -> io::Result<rustix::fs::Stat> {
        rustix::fs::statat(self.parent, self.name, AtFlags::SYMLINK_NOFOLLOW).map_err(Into::into)
    }

    /// For a symlink: whether its final target exists inside the roots,
    /// and if so whether it is a directory (see [`symlink_inside`]).
    pub(crate) fn symlink_inside(&self, workspace: &Workspace) -> Option<bool> {
        let target = rustix::fs::readlinkat(self.parent, self.name, Vec::new()).ok()?;
        let target = Path::new(OsStr::from_bytes(target.as_bytes()));
        let base = self.path.parent()?;
        symlink_inside(workspace, &base.join(target))
    }
}

/// Filters of one walk besides the ignore files.
#[derive(Default)]
pub(crate) struct Filters {
    /// Globs given by the caller (ripgrep's `-g`), highest precedence.
    pub(crate) overrides: Option<Override>,
    /// File types (ripgrep's `-t`).
    pub(crate) types: Option<Types>,
}

/// The ignore files of one directory, linked to its parent's.
struct IgnoreDir {
    parent: Option<Arc<IgnoreDir>>,
    custom: Gitignore,
    ignore: Gitignore,
    git: Gitignore,
    exclude: Gitignore,
    has_git: bool,
}

impl IgnoreDir {
    /// Reads the ignore files of the directory `dir` (labelled `path`).
    fn read(
        dir: BorrowedFd<'_>,
        path: &Path,
        parent: Option<Arc<IgnoreDir>>,
        names: &Names,
    ) -> Arc<Self> {
        let load = |name: &str| -> Gitignore {
            let mut builder = GitignoreBuilder::new(path);
            if names.unknown || names.has(name) {
                add_lines(&mut builder, path, name, read_small(dir, &[name]));
            }
            builder.build().unwrap_or_else(|_| Gitignore::empty())
        };
        let custom = load(".rgignore");
        let ignore = load(".ignore");
        let git = load(".gitignore");
        let has_git = if names.unknown {
            rustix::fs::statat(dir, ".git", AtFlags::SYMLINK_NOFOLLOW).is_ok()
        } else {
            names.has(".git")
        };
        let exclude = if has_git {
            let mut builder = GitignoreBuilder::new(path);
            add_lines(
                &mut builder,
                path,
                ".git/info/exclude",
                read_small(dir, &[".git", "info", "exclude"]),
            );
            builder.build().unwrap_or_else(|_| Gitignore::empty())
        } else {
            Gitignore::empty()
        };
        if parent.is_some()
            && custom.is_empty()
            && ignore.is_empty()
            && git.is_empty()
            && exclude.is_empty()
            && !has_git
        {
            // Nothing new here: share the parent's chain.
            return parent.unwrap_or_else(|| Arc::new(Self::empty()));
        }
        Arc::new(Self {
            parent,
            custom,
            ignore,
            git,
            exclude,
            has_git,
        })
    }

    fn empty() -> Self {
        Self {
            parent: None,
            custom: Gitignore::empty(),
            ignore: Gitignore::empty(),
            git: Gitignore::empty(),
            exclude: Gitignore::empty(),
            has_git: false,
        }
    }

    /// ripgrep's precedence: `.rgignore`, then `.ignore`, then `.gitignore`
    /// and `info/exclude` (not past the top of a git repository), the
    /// deepest directory deciding first within each kind.
    fn matched(&self, path: &Path, is_dir: bool) -> Match<()> {
        let (mut custom, mut ignore, mut git, mut exclude) =
            (Match::None, Match::None, Match::None, Match::None);
        let mut saw_git = false;
        let mut node = Some(self);
        while let Some(ig) = node {
            if custom.is_none() {
                custom = ig.custom.matched(path, is_dir).map(|_| ());
            }
            if ignore.is_none() {
                ignore = ig.ignore.matched(path, is_dir).map(|_| ());
            }
            if !saw_git && git.is_none() {
                git = ig.git.matched(path, is_dir).map(|_| ());
            }
            if !saw_git && exclude.is_none() {
                exclude = ig.exclude.matched(path, is_dir).map(|_| ());
            }
            saw_git = saw_git || ig.has_git;
            node = ig.parent.as_deref();
        }
        custom.or(ignore).or(git).or(exclude)
    }
}

/// Adds the lines of an ignore file as `GitignoreBuilder::add` would:
/// a leading BOM dropped, lines that are not UTF-8 or not valid skipped.
fn add_lines(builder: &mut GitignoreBuilder, dir: &Path, name: &str, bytes: Option<Vec<u8>>) {
    let Some(bytes) = bytes else { return };
    let from = dir.join(name);
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Ok(line) = std::str::from_utf8(line) else {
            continue;
        };
        let line = if i == 0 {
            line.trim_start_matches('\u{feff}')
        } else {
            line
        };
        let _ = builder.add_line(Some(from.clone()), line);
    }
}

/// Ignore files larger than this are not read (no real one comes close).
const MAX_IGNORE_FILE: u64 = 16 << 20;

/// Reads a small regular file found by following `names` from `dir`
/// (directories and the file opened with no symlink following).
fn read_small(dir: BorrowedFd<'_>, names: &[&str]) -> Option<Vec<u8>> {
    let (last, dirs) = names.split_last()?;
    let mut held: Option<OwnedFd> = None;
    for name in dirs {
        let base = held.as_ref().map_or(dir, |fd| fd.as_fd());
        held = Some(open_dir_at(base, *name).ok()?);
    }
    let base = held.as_ref().map_or(dir, |fd| fd.as_fd());
    let fd = rustix::fs::openat(
        base,
        *last,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
        Mode::empty(),
    )
    .ok()?;
    let stat = rustix::fs::fstat(&fd).ok()?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return None;
    }
    let mut bytes = Vec::new();
    File::from(fd)
        .take(MAX_IGNORE_FILE)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(bytes)
}

/// Opens the directory `name` in `dir` without following a symlink.
fn open_dir_at<P: rustix::path::Arg>(dir: BorrowedFd<'_>, name: P) -> io::Result<OwnedFd> {
    rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(Into::into)
}

/// The names present in a directory, to skip opening ignore files that
/// are not there.
struct Names {
    ignore_files: [bool; 4],
    unknown: bool,
}

const IGNORE_NAMES: [&str; 4] = [".rgignore", ".ignore", ".gitignore", ".git"];

impl Names {
    fn none() -> Self {
        Self {
            ignore_files: [false; 4],
            unknown: false,
        }
    }

    fn unknown() -> Self {
        Self {
            ignore_files: [false; 4],
            unknown: true,
        }
    }

    fn note(&mut self, name: &[u8]) {
        if let Some(i) = IGNORE_NAMES.iter().position(|n| n.as_bytes() == name) {
            self.ignore_files[i] = true;
        }
    }

    fn has(&self, name: &str) -> bool {
        IGNORE_NAMES
            .iter()
            .position(|n| *n == name)
            .is_some_and(|i| self.ignore_files[i])
    }
}

/// An open directory handle, counted while held for pending work.
struct Handle {
    fd: OwnedFd,
    counter: Arc<AtomicUsize>,
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.counter.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A directory waiting to be read.
struct Job {
    /// Names from the start directory to this one.
    names: Arc<Vec<Vec<u8>>>,
    path: PathBuf,
    depth: usize,
    /// The parent's handle while few are held; else reopened from the start.
    parent: Option<Arc<Handle>>,
    ignores: Arc<IgnoreDir>,
}

/// The order in which a walk takes its pending directories.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Order {
    /// Deepest first, entries as the directory gives them (fastest).
    DepthFirst,
    /// Level by level, entries by name (one thread).
    BreadthFirst,
    /// Smallest path first, entries by name, each thread's place known
    /// (see [`Entry::settled`]).
    Path,
}

/// A pending directory ordered by its path (for [`Order::Path`]).
struct ByPath(Job);

impl PartialEq for ByPath {
    fn eq(&self, other: &Self) -> bool {
        self.0.path == other.0.path
    }
}

impl Eq for ByPath {}

impl PartialOrd for ByPath {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ByPath {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.path.cmp(&other.0.path)
    }
}

/// One walk: its start handle, rules and shared queue.
struct Walk<'w> {
    workspace: &'w Workspace,
    filters: &'w Filters,
    start: OwnedFd,
    held: Arc<AtomicUsize>,
    quit: AtomicBool,
    queue: Mutex<Queue>,
    ready: Condvar,
    order: Order,
    /// Whether the start was let through by the exclusions, so that each
    /// entry is judged alone (its parents were, as the walk descended).
    judge_entries: bool,
    /// The listings earlier walks read (see [`super::learned`]).
    known: Arc<Listings>,
    /// The listings this walk read that can be kept.
    read: Mutex<Vec<Arc<Listing>>>,
    now: SystemTime,
}

pub(crate) struct Queue {
    jobs: VecDeque<Job>,
    /// [`Order::Path`]'s pending directories, smallest path first.
    heap: BinaryHeap<Reverse<ByPath>>,
    /// [`Order::Path`]: per thread, the directory it is reading or the
    /// last subdirectory it passed there, never past the entry it is
    /// visiting; `None` when idle.
    slots: Vec<Option<PathBuf>>,
    active: usize,
}

impl Queue {
    fn push(&mut self, order: Order, job: Job) {
        match order {
            Order::Path => self.heap.push(Reverse(ByPath(job))),
            _ => self.jobs.push_back(job),
        }
    }

    fn pop(&mut self, order: Order) -> Option<Job> {
        match order {
            Order::DepthFirst => self.jobs.pop_back(),
            Order::BreadthFirst => self.jobs.pop_front(),
            Order::Path => self.heap.pop().map(|Reverse(ByPath(job))| job),
        }
    }
}

/// Walks `start` (a canonical path inside the workspace, as
/// [`Workspace::resolve`] returns it) on `threads` threads, depth first.
///
/// `make_visitor` is called once per thread; each visitor sees entries of
/// every kind (directories before their contents), never the start
/// directory itself; a start that is a file is visited alone, at depth 0.
pub(crate) fn walk<M, V>(
    workspace: &Workspace,
    start: &Path,
    filters: &Filters,
    threads: usize,
    make_visitor: M,
) -> io::Result<()>
where
    M: Fn() -> V + Sync,
    V: FnMut(Entry<'_>) -> Flow,
{
    walk_threads(
        workspace,
        start,
        filters,
        threads,
        Order::DepthFirst,
        make_visitor,
    )
}

/// As [`walk`], in path order: the threads take the pending directory of
/// the smallest path first and visit each directory's entries by name,
/// and a visitor can ask what the walk has finished ([`Entry::settled`]),
/// to stop it once the first results in path order are known.
pub(crate) fn walk_in_order<M, V>(
    workspace: &Workspace,
    start: &Path,
    filters: &Filters,
    threads: usize,
    make_visitor: M,
) -> io::Result<()>
where
    M: Fn() -> V + Sync,
    V: FnMut(Entry<'_>) -> Flow,
{
    walk_threads(
        workspace,
        start,
        filters,
        threads,
        Order::Path,
        make_visitor,
    )
}

fn walk_threads<M, V>(
    workspace: &Workspace,
    start: &Path,
    filters: &Filters,
    threads: usize,
    order: Order,
    make_visitor: M,
) -> io::Result<()>
where
    M: Fn() -> V + Sync,
    V: FnMut(Entry<'_>) -> Flow,
{
    let threads = threads.max(1);
    let Some(walk) = Walk::begin(workspace, start, filters, order, threads, &mut || {
        make_visitor()
    })?
    else {
        return Ok(());
    };
    std::thread::scope(|scope| {
        for me in 0..threads {
            let walk = &walk;
            let make_visitor = &make_visitor;
            scope.spawn(move || {
                let mut visitor = make_visitor();
                walk.work(me, &mut visitor);
            });
        }
    });
    walk.finish();
    Ok(())
}

/// Walks `start` on the calling thread, breadth first: every entry of a
/// level before any entry of the next, the pending directories of a level
/// in the order they were met and each directory's entries by name (so
/// the directories of a level come in the order `ls` prints them).
/// Otherwise as [`walk`].
pub(crate) fn walk_breadth_first<V>(
    workspace: &Workspace,
    start: &Path,
    filters: &Filters,
    mut visitor: V,
) -> io::Result<()>
where
    V: FnMut(Entry<'_>) -> Flow,
{
    let mut once = Some(&mut visitor);
    let Some(walk) = Walk::begin(
        workspace,
        start,
        filters,
        Order::BreadthFirst,
        1,
        &mut || once.take().expect("a file start is visited once"),
    )?
    else {
        return Ok(());
    };
    walk.work(0, &mut visitor);
    walk.finish();
    Ok(())
}

impl<'w> Walk<'w> {
    /// Opens the start; a file start is visited at once (`None` returned).
    fn begin<V: FnMut(Entry<'_>) -> Flow>(
        workspace: &'w Workspace,
        start: &Path,
        filters: &'w Filters,
        order: Order,
        threads: usize,
        first_visitor: &mut dyn FnMut() -> V,
    ) -> io::Result<Option<Self>> {
        let (dir_fd, ignores, kind) = open_start(workspace, start)?;
        if let Some((name, kind)) = kind {
            // A single file (or symlink, or other): visited alone.
            if let Ok(name) = std::ffi::CString::new(name) {
                let mut visitor = first_visitor();
                visitor(Entry {
                    path: start.to_path_buf(),
                    depth: 0,
                    kind,
                    parent: dir_fd.as_fd(),
                    name: &name,
                    ordered: None,
                });
            }
            return Ok(None);
        }
        let mut queue = Queue {
            jobs: VecDeque::new(),
            heap: BinaryHeap::new(),
            slots: vec![None; if order == Order::Path { threads } else { 0 }],
            active: 0,
        };
        queue.push(
            order,
            Job {
                names: Arc::new(Vec::new()),
                path: start.to_path_buf(),
                depth: 0,
                parent: None,
                ignores,
            },
        );
        Ok(Some(Walk {
            workspace,
            filters,
            start: dir_fd,
            held: Arc::new(AtomicUsize::new(0)),
            quit: AtomicBool::new(false),
            queue: Mutex::new(queue),
            ready: Condvar::new(),
            order,
            judge_entries: !workspace.is_excluded(start),
            known: workspace.learned().dirs(),
            read: Mutex::new(Vec::new()),
            now: SystemTime::now(),
        }))
    }
}

/// Threads for a parallel walk: the machine's, at most 12.
pub(crate) fn default_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(2, usize::from)
        .clamp(2, MAX_THREADS)
}

type Start = (OwnedFd, Arc<IgnoreDir>, Option<(Vec<u8>, Kind)>);

/// Opens the handle of the directory to walk (or, for a file, of its
/// directory), from the root containing `start`, one name at a time with
/// no symlink followed, reading the ignore files along the way.
fn open_start(workspace: &Workspace, start: &Path) -> io::Result<Start> {
    let root = workspace
        .roots()
        .iter()
        .filter(|r| start.starts_with(r))
        .max_by_key(|r| r.as_os_str().len())
        .ok_or_else(|| io::Error::other(OUTSIDE_ROOTS))?;
    let rel = start
        .strip_prefix(root)
        .map_err(|_| io::Error::other(OUTSIDE_ROOTS))?;
    let mut fd = File::open(root).map(OwnedFd::from)?;
    let mut path = root.clone();
    let mut ignores = IgnoreDir::read(fd.as_fd(), &path, None, &Names::unknown());
    let names: Vec<&OsStr> = rel.iter().collect();
    for (i, name) in names.iter().enumerate() {
        let last = i + 1 == names.len();
        if last {
            let stat = rustix::fs::statat(&fd, *name, AtFlags::SYMLINK_NOFOLLOW)?;
            let kind = kind_of(FileType::from_raw_mode(stat.st_mode));
            if kind != Kind::Dir {
                return Ok((fd, ignores, Some((name.as_bytes().to_vec(), kind))));
            }
        }
        fd = open_dir_at(fd.as_fd(), *name)?;
        path.push(name);
        ignores = IgnoreDir::read(fd.as_fd(), &path, Some(ignores), &Names::unknown());
    }
    Ok((fd, ignores, None))
}

fn kind_of(t: FileType) -> Kind {
    match t {
        FileType::RegularFile => Kind::File,
        FileType::Directory => Kind::Dir,
        FileType::Symlink => Kind::Symlink,
        _ => Kind::Other,
    }
}

fn entry_kind(kind: Kind) -> EntryKind {
    match kind {
        Kind::File => EntryKind::File,
        Kind::Dir => EntryKind::Dir,
        Kind::Symlink => EntryKind::Symlink,
        Kind::Other => EntryKind::Other,
    }
}

fn is_vcs_dir(name: &[u8]) -> bool {
    VCS_DIRS.iter().any(|v| v.as_bytes() == name)
}

impl Walk<'_> {
    /// A worker (`me` of the walk's threads): takes directories until none
    /// is left or the walk quits.
    fn work<V: FnMut(Entry<'_>) -> Flow>(&self, me: usize, visitor: &mut V) {
        loop {
            let job = {
                let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
                loop {
                    if self.quit.load(Ordering::Relaxed) {
                        self.ready.notify_all();
                        return;
                    }
                    if let Some(job) = queue.pop(self.order) {
                        queue.active += 1;
                        if let Some(slot) = queue.slots.get_mut(me) {
                            *slot = Some(job.path.clone());
                        }
                        break job;
                    }
                    if queue.active == 0 {
                        self.ready.notify_all();
                        return;
                    }
                    queue = self.ready.wait(queue).unwrap_or_else(|p| p.into_inner());
                }
            };
            let children = self.read_dir(me, job, visitor);
            let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
            queue.active -= 1;
            if let Some(slot) = queue.slots.get_mut(me) {
                *slot = None;
            }
            let woke = !children.is_empty() || queue.active == 0;
            for child in children {
                queue.push(self.order, child);
            }
            drop(queue);
            if woke {
                self.ready.notify_all();
            }
        }
    }

    /// Opens a pending directory through handles only.
    fn open(&self, job: &Job) -> io::Result<OwnedFd> {
        let Some((name, dirs)) = job.names.split_last() else {
            return rustix::io::dup(&self.start).map_err(Into::into);
        };
        if let Some(parent) = &job.parent {
            return open_dir_at(parent.fd.as_fd(), name.as_slice());
        }
        let mut fd: Option<OwnedFd> = None;
        for n in dirs.iter().chain(std::iter::once(name)) {
            let base = fd.as_ref().map_or(self.start.as_fd(), |f| f.as_fd());
            fd = Some(open_dir_at(base, n.as_slice())?);
        }
        fd.ok_or_else(|| io::Error::other("empty path"))
    }

    /// Reads one directory: visits its entries and returns its
    /// subdirectories to walk.
    fn read_dir<V: FnMut(Entry<'_>) -> Flow>(
        &self,
        me: usize,
        job: Job,
        visitor: &mut V,
    ) -> Vec<Job> {
        let Ok(fd) = self.open(&job) else {
            // Gone, unreadable, or swapped for a symlink: skipped.
            return Vec::new();
        };
        let Some((listing, names)) = self.list(&fd) else {
            return Vec::new();
        };
        let ignores = if job.depth == 0 {
            // The start's ignore files were read when it was opened.
            job.ignores.clone()
        } else {
            IgnoreDir::read(fd.as_fd(), &job.path, Some(job.ignores.clone()), &names)
        };
        let handle = Arc::new(Handle {
            fd,
            counter: self.held.clone(),
        });
        self.held.fetch_add(1, Ordering::Relaxed);
        let mut children = Vec::new();
        for (name, file_type) in &listing.entries {
            let file_type = *file_type;
            if self.quit.load(Ordering::Relaxed) {
                break;
            }
            let bytes = name.to_bytes();
            if is_vcs_dir(bytes) {
                continue;
            }
            let kind = kind_of(file_type);
            // One allocation (a join grows the parent's copy).
            let mut path = PathBuf::with_capacity(job.path.as_os_str().len() + 1 + bytes.len());
            path.push(&job.path);
            path.push(OsStr::from_bytes(bytes));
            let is_dir = kind == Kind::Dir;
            let excluded = || {
                if self.judge_entries {
                    self.workspace.is_excluded_entry(&path, entry_kind(kind))
                } else {
                    self.workspace.is_excluded(&path)
                }
            };
            if self.ignored(&ignores, &path, is_dir) || excluded() {
                continue;
            }
            let child = is_dir.then(|| {
                let mut names = (*job.names).clone();
                names.push(bytes.to_vec());
                Job {
                    names: Arc::new(names),
                    path: path.clone(),
                    depth: job.depth + 1,
                    parent: (self.held.load(Ordering::Relaxed) < MAX_HELD_HANDLES)
                        .then(|| handle.clone()),
                    ignores: ignores.clone(),
                }
            });
            if self.order == Order::Path {
                // In path order a subdirectory is pending before the
                // thread moves past it, and the thread's place moves to
                // it. Past a file the place is left behind (a smaller
                // path): what others count as finished is then less, never
                // more, and no lock is taken at every file.
                if let Some(child) = child {
                    let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
                    queue.push(self.order, child);
                    if let Some(slot) = queue.slots.get_mut(me) {
                        *slot = Some(path.clone());
                    }
                    drop(queue);
                    self.ready.notify_one();
                }
            } else {
                children.extend(child);
            }
            let flow = visitor(Entry {
                path,
                depth: job.depth + 1,
                kind,
                parent: handle.fd.as_fd(),
                name: name.as_c_str(),
                ordered: (self.order == Order::Path).then_some((&self.queue, me)),
            });
            if flow == Flow::Quit {
                self.quit.store(true, Ordering::Relaxed);
                break;
            }
        }
        children
    }

    /// The entries of the directory open as `fd`, by name, and which
    /// ignore files are among them: as an earlier walk read them when the
    /// directory has the same identity and stamp, else read now (and kept
    /// when its stamp is settled, see [`super::learned`]).
    fn list(&self, fd: &OwnedFd) -> Option<(Arc<Listing>, Names)> {
        let stamp = rustix::fs::fstat(fd).ok().map(|s| Stamp::of(&s));
        if let Some(stamp) = stamp
            && let Some(known) = self.known.get(&stamp.id)
            && known.stamp == stamp
        {
            let mut names = Names::none();
            for (name, _) in &known.entries {
                names.note(name.to_bytes());
            }
            return Some((known.clone(), names));
        }
        let read_fd = rustix::io::dup(fd).ok()?;
        let mut dir = Dir::new(read_fd).ok()?;
        // Read every name first: the ignore files of this directory apply
        // to its own entries.
        let mut entries: Vec<(std::ffi::CString, FileType)> = Vec::new();
        let mut names = Names::none();
        let mut unknown = false;
        while let Some(Ok(entry)) = dir.read() {
            let name = entry.file_name();
            let bytes = name.to_bytes();
            if bytes == b"." || bytes == b".." {
                continue;
            }
            names.note(bytes);
            let mut kind = entry.file_type();
            if kind == FileType::Unknown {
                unknown = true;
                kind = rustix::fs::statat(fd, name, AtFlags::SYMLINK_NOFOLLOW)
                    .map_or(FileType::Unknown, |s| FileType::from_raw_mode(s.st_mode));
            }
            entries.push((name.to_owned(), kind));
        }
        drop(dir);
        names.unknown = unknown;
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        // A stamp taken after the read would miss a change made during it:
        // the one taken before is kept, and matches only if nothing moved.
        let listing = Arc::new(Listing {
            stamp: stamp.unwrap_or(Stamp::NONE),
            entries,
        });
        if !unknown && stamp.is_some_and(|s| s.settled(self.now)) {
            self.read
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(listing.clone());
        }
        Some((listing, names))
    }

    /// Hands what the walk read to the next walks.
    fn finish(self) {
        // A walk that stopped early read whole listings all the same.
        let read = self.read.into_inner().unwrap_or_else(|p| p.into_inner());
        self.workspace.learned().learn_dirs(read);
    }

    /// Whether the ignore rules (overrides, ignore files, types) leave the
    /// entry out, as ripgrep decides.
    fn ignored(&self, ignores: &IgnoreDir, path: &Path, is_dir: bool) -> bool {
        if let Some(overrides) = &self.filters.overrides {
            match overrides.matched(path, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        if ignores.matched(path, is_dir).is_ignore() {
            return true;
        }
        if let Some(types) = &self.filters.types {
            return types.matched(path, is_dir).is_ignore();
        }
        false
    }
}

/// For a symlink met in a walk: whether its final target exists and lies
/// inside the roots, and if so whether it is a directory. Symlinks pointing
/// out (or nowhere) are skipped by every walk. Only the link's own name is
/// ever shown; its target is never read by a walk.
pub(crate) fn symlink_inside(workspace: &Workspace, link: &Path) -> Option<bool> {
    let target = fs::canonicalize(link).ok()?;
    if !workspace.contains(&target) {
        return None;
    }
    Some(fs::metadata(&target).ok()?.is_dir())
}

/// The modification time in a `stat`.
pub(crate) fn mtime_of(stat: &rustix::fs::Stat) -> std::time::SystemTime {
    let secs = u64::try_from(stat.st_mtime).unwrap_or(0);
    let nanos = u32::try_from(stat.st_mtime_nsec).unwrap_or(0);
    std::time::UNIX_EPOCH + std::time::Duration::new(secs, nanos.min(999_999_999))
}

/// The error for a walk whose start could not be opened beneath its root
/// (typically a directory replaced by a symlink while the call ran).
pub(crate) fn walk_error(
    workspace: &Workspace,
    start: &Path,
    e: &io::Error,
) -> agentcore_stages::ToolError {
    agentcore_stages::ToolError::new(format!(
        "cannot open \"{}\" inside the workspace ({e}); it may have been moved or replaced by a symbolic link while the call ran. Check the path and try again.",
        workspace.display(start)
    ))
}

/// Whether a walk of the roots would visit a path, decided one path at a
/// time: the rules a walk applies (VCS folders, the ignore files of every
/// folder from the root down, the paths the workspace excludes), for a
/// look at the few paths a change feed names instead of a walk. The ignore
/// files of each folder are read once per `Rules`.
pub(crate) struct Rules<'w> {
    workspace: &'w Workspace,
    /// Folder → its ignore chain; `None` when a walk never lists it.
    folders: std::collections::HashMap<PathBuf, Option<Arc<IgnoreDir>>>,
}

impl<'w> Rules<'w> {
    /// Rules that read the ignore files of `workspace`'s roots.
    pub(crate) fn new(workspace: &'w Workspace) -> Self {
        Self {
            workspace,
            folders: std::collections::HashMap::new(),
        }
    }

    /// Whether a walk of the root holding `path` (strictly below it)
    /// visits `path`, a directory when `is_dir`: its folder is listed by
    /// the walk and no rule leaves the entry out.
    pub(crate) fn walked(&mut self, path: &Path, is_dir: bool) -> bool {
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            return false;
        };
        if is_vcs_dir(name.as_bytes()) {
            return false;
        }
        let Some(ignores) = self.folder(parent) else {
            return false;
        };
        !ignores.matched(path, is_dir).is_ignore() && !self.workspace.is_excluded(path)
    }

    /// The ignore chain that decides the entries of `dir`, when a walk
    /// lists `dir`.
    fn folder(&mut self, dir: &Path) -> Option<Arc<IgnoreDir>> {
        if let Some(known) = self.folders.get(dir) {
            return known.clone();
        }
        let found = self.read_folder(dir);
        self.folders.insert(dir.to_path_buf(), found.clone());
        found
    }

    fn read_folder(&mut self, dir: &Path) -> Option<Arc<IgnoreDir>> {
        let root = self
            .workspace
            .roots()
            .iter()
            .filter(|r| dir.starts_with(r))
            .max_by_key(|r| r.as_os_str().len())?
            .clone();
        let root_fd = File::open(&root).map(OwnedFd::from).ok()?;
        if dir == root {
            return Some(IgnoreDir::read(
                root_fd.as_fd(),
                &root,
                None,
                &Names::unknown(),
            ));
        }
        if !self.walked(dir, true) {
            return None;
        }
        let parent = self.folder(dir.parent()?)?;
        let rel = dir.strip_prefix(&root).ok()?;
        let fd = super::beneath::open_dir(root_fd.as_fd(), rel).ok()?;
        Some(IgnoreDir::read(
            fd.as_fd(),
            dir,
            Some(parent),
            &Names::unknown(),
        ))
    }
}
