//! A change feed: inotify watches on every folder of the writable roots
//! that a walk lists, so that a command's look compares only the paths
//! named by events since the last look instead of walking the roots.
//!
//! Why draining is enough: the kernel queues an inotify event inside the
//! system call that makes the change (`write`, `rename`, `unlink`, …),
//! before that call returns to the process that made it. A command's
//! writes have therefore all been queued by the time the command has ended
//! and the recorder looks; reading the (non-blocking) descriptor until
//! `EAGAIN` at the look sees every one of them. A change made while the
//! look runs is either seen by it or queued for the next.
//!
//! A folder is watched before a walk lists it, so nothing made in it
//! between its watch and its listing is missed; a folder that appears
//! later is watched and walked whole when its event is handled (files may
//! have been made in it before its watch existed).
//!
//! The feed fails closed: a lost event (`IN_Q_OVERFLOW`), a watch that
//! cannot be added (`ENOSPC` past `fs.inotify.max_user_watches`,
//! `EACCES`), an event for a watch it does not know, a root moved or
//! deleted, a folder met at two paths, or a file system that may not
//! report every change: the look compares the roots whole, and the
//! recorder says so once in a checkpoint note.

use std::collections::{BTreeSet, HashMap};
use std::ffi::OsStr;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
use rustix::io::Errno;

/// What a folder's watch reports: every change of an entry's bytes,
/// metadata or name, and the folder's own removal.
const FOLDER_EVENTS: WatchFlags = WatchFlags::CREATE
    .union(WatchFlags::DELETE)
    .union(WatchFlags::MODIFY)
    .union(WatchFlags::ATTRIB)
    .union(WatchFlags::MOVED_FROM)
    .union(WatchFlags::MOVED_TO)
    .union(WatchFlags::CLOSE_WRITE)
    .union(WatchFlags::DELETE_SELF)
    .union(WatchFlags::MOVE_SELF)
    .union(WatchFlags::DONT_FOLLOW)
    .union(WatchFlags::ONLYDIR)
    .union(WatchFlags::EXCL_UNLINK);

/// What a `.git` folder's watch reports: names made or removed (only
/// `info` matters: it holds `info/exclude`, an ignore file).
const GIT_EVENTS: WatchFlags = WatchFlags::CREATE
    .union(WatchFlags::DELETE)
    .union(WatchFlags::MOVED_FROM)
    .union(WatchFlags::MOVED_TO)
    .union(WatchFlags::DELETE_SELF)
    .union(WatchFlags::MOVE_SELF)
    .union(WatchFlags::DONT_FOLLOW)
    .union(WatchFlags::ONLYDIR)
    .union(WatchFlags::EXCL_UNLINK);

/// The names whose change changes what a walk records below their folder.
const RULE_FILES: [&str; 4] = [".gitignore", ".ignore", ".rgignore", ".git"];

/// What one watch descriptor stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Watch {
    /// A folder of a root: its entries' events name paths to look at.
    Folder(PathBuf),
    /// The `.git` folder in a folder of a root.
    Git,
    /// `.git/info` in a folder of a root.
    GitInfo,
}

/// What changed since the last drain, as far as the feed knows.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Dirty {
    /// Only these paths (absolute) may have changed.
    Paths(BTreeSet<PathBuf>),
    /// An ignore file may have changed: what a walk records is not known
    /// without a walk.
    Rules,
    /// Events were lost or not understood (the reason): the feed is no
    /// longer to be trusted.
    Stopped(String),
}

/// One inotify instance and its watches.
#[derive(Debug)]
pub(crate) struct Feed {
    fd: OwnedFd,
    watches: HashMap<i32, Watch>,
    /// The folders watched now, by path.
    folders: HashMap<PathBuf, i32>,
    roots: Vec<PathBuf>,
    /// Why the feed stopped, if it did: a watch could not be added.
    stopped: Option<String>,
    /// Tests: the next drain reports a lost event.
    #[cfg(test)]
    overflow: bool,
}

impl Feed {
    /// A new feed for `roots`, with no watch yet.
    pub(crate) fn new(roots: &[PathBuf]) -> io::Result<Self> {
        let fd = inotify::init(CreateFlags::NONBLOCK | CreateFlags::CLOEXEC)?;
        Ok(Self {
            fd,
            watches: HashMap::new(),
            folders: HashMap::new(),
            roots: roots.to_vec(),
            stopped: None,
            #[cfg(test)]
            overflow: false,
        })
    }

    /// Why the feed stopped (a watch that could not be added), if it did.
    pub(crate) fn stopped(&self) -> Option<&str> {
        self.stopped.as_deref()
    }

    /// Whether the folder at `dir` has a watch (added at this path, or
    /// moved here and walked): only then do events name what changes in it.
    pub(crate) fn watched(&self, dir: &Path) -> bool {
        self.folders.contains_key(dir)
    }

    /// How many watches are held.
    #[cfg(test)]
    pub(crate) fn watches(&self) -> usize {
        self.watches.len()
    }

    /// Tests: makes the next drain report a lost event, as the kernel's
    /// `IN_Q_OVERFLOW` does.
    #[cfg(test)]
    pub(crate) fn force_overflow(&mut self) {
        self.overflow = true;
    }

    /// Watches the folder `dir` (before it is listed), and its `.git` and
    /// `.git/info` when there. A folder gone or swapped for something else
    /// meanwhile needs no watch: its parent's watch reports that.
    pub(crate) fn watch(&mut self, dir: &Path) {
        if self.stopped.is_some() {
            return;
        }
        match inotify::add_watch(&self.fd, dir, FOLDER_EVENTS) {
            Ok(wd) => {
                let watch = Watch::Folder(dir.to_path_buf());
                if let Some(Watch::Folder(old)) = self.watches.get(&wd)
                    && old != dir
                    && same_folder(old, dir)
                {
                    // One folder at two paths (a bind mount): an event
                    // would name only one of them.
                    self.stopped = Some(format!(
                        "{} and {} are one folder",
                        old.display(),
                        dir.display()
                    ));
                    return;
                }
                // A folder moved and walked at its new path keeps its
                // watch descriptor: the path is updated.
                if let Some(Watch::Folder(old)) = self.watches.insert(wd, watch)
                    && self.folders.get(&old) == Some(&wd)
                {
                    self.folders.remove(&old);
                }
                self.folders.insert(dir.to_path_buf(), wd);
            }
            Err(Errno::NOENT | Errno::NOTDIR | Errno::LOOP) => return,
            Err(e) => {
                self.stopped = Some(watch_error(dir, e));
                return;
            }
        }
        for (sub, mask, watch) in [
            (".git", GIT_EVENTS, Watch::Git),
            (".git/info", FOLDER_EVENTS, Watch::GitInfo),
        ] {
            match inotify::add_watch(&self.fd, dir.join(sub), mask) {
                Ok(wd) => {
                    self.watches.insert(wd, watch);
                }
                Err(Errno::NOENT | Errno::NOTDIR | Errno::LOOP) => {}
                Err(e) => {
                    self.stopped = Some(watch_error(&dir.join(sub), e));
                    return;
                }
            }
        }
    }

    /// Reads every event queued (until `EAGAIN`) and says what they name.
    pub(crate) fn drain(&mut self) -> Dirty {
        #[cfg(test)]
        if std::mem::take(&mut self.overflow) {
            return Dirty::Stopped("its event queue overflowed".to_owned());
        }
        let mut paths = BTreeSet::new();
        let mut rules = false;
        let mut buf = [MaybeUninit::<u8>::uninit(); 16 << 10];
        let mut reader = inotify::Reader::new(&self.fd, &mut buf);
        loop {
            let event = match reader.next() {
                Ok(event) => event,
                Err(Errno::AGAIN) => break,
                Err(Errno::INTR) => continue,
                Err(e) => return Dirty::Stopped(format!("its events could not be read: {e}")),
            };
            let flags = event.events();
            if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
                return Dirty::Stopped("its event queue overflowed".to_owned());
            }
            if flags.contains(ReadFlags::UNMOUNT) {
                return Dirty::Stopped("a watched file system was unmounted".to_owned());
            }
            let Some(watch) = self.watches.get(&event.wd()) else {
                return Dirty::Stopped(format!("an event for an unknown watch {}", event.wd()));
            };
            let name = event.file_name().map(|n| OsStr::from_bytes(n.to_bytes()));
            let itself = flags.intersects(ReadFlags::DELETE_SELF | ReadFlags::MOVE_SELF);
            match watch {
                Watch::Folder(dir) => {
                    if itself && self.roots.contains(dir) {
                        return Dirty::Stopped(format!("the root {} was moved", dir.display()));
                    }
                    if name.is_some_and(|n| RULE_FILES.iter().any(|r| OsStr::new(r) == n)) {
                        rules = true;
                    }
                    paths.insert(name.map_or_else(|| dir.clone(), |n| dir.join(n)));
                }
                Watch::Git => {
                    if itself || name == Some(OsStr::new("info")) {
                        rules = true;
                    }
                }
                Watch::GitInfo => {
                    if itself || name == Some(OsStr::new("exclude")) {
                        rules = true;
                    }
                }
            }
            if flags.contains(ReadFlags::IGNORED) {
                // The watch is gone (its folder removed): no event follows.
                if let Some(Watch::Folder(dir)) = self.watches.remove(&event.wd())
                    && self.folders.get(&dir) == Some(&event.wd())
                {
                    self.folders.remove(&dir);
                }
            }
        }
        if rules {
            Dirty::Rules
        } else {
            Dirty::Paths(paths)
        }
    }
}

/// Why a watch on `path` could not be added, in words.
fn watch_error(path: &Path, e: Errno) -> String {
    match e {
        Errno::NOSPC => format!(
            "the inotify watch limit (fs.inotify.max_user_watches) was reached at {}",
            path.display()
        ),
        Errno::MFILE => {
            "the inotify instance limit (fs.inotify.max_user_instances) was reached".to_owned()
        }
        e => format!("{} could not be watched: {e}", path.display()),
    }
}

/// Whether `a` and `b` are one folder now.
fn same_folder(a: &Path, b: &Path) -> bool {
    match (rustix::fs::lstat(a), rustix::fs::lstat(b)) {
        (Ok(a), Ok(b)) => a.st_dev == b.st_dev && a.st_ino == b.st_ino,
        _ => false,
    }
}

/// The file systems known to report every change made through them to
/// inotify (network and FUSE file systems do not report changes made
/// elsewhere).
const LOCAL_FILE_SYSTEMS: [(i64, &str); 7] = [
    (0xEF53, "ext4"),
    (0x5846_5342, "xfs"),
    (0x9123_683E, "btrfs"),
    (0x0102_1994, "tmpfs"),
    (0xF2F5_2010, "f2fs"),
    (0x2FC1_2FC1, "zfs"),
    (0x794C_7630, "overlayfs"),
];

/// Why a feed cannot serve `roots`, if it cannot: a root inside another
/// (walked twice, with two ignore chains), or on a file system not known
/// to report every change.
pub(crate) fn unusable(roots: &[PathBuf]) -> Option<String> {
    for (i, a) in roots.iter().enumerate() {
        for (j, b) in roots.iter().enumerate() {
            if i != j && a.starts_with(b) {
                return Some(format!(
                    "the root {} is inside the root {}",
                    a.display(),
                    b.display()
                ));
            }
        }
        match rustix::fs::statfs(a) {
            Ok(fs) => {
                // `f_type`'s width differs between targets.
                #[allow(clippy::unnecessary_cast)]
                let kind = fs.f_type as i64;
                if !LOCAL_FILE_SYSTEMS.iter().any(|(k, _)| *k == kind) {
                    return Some(format!(
                        "the file system of {} (type {kind:#x}) may not report every change",
                        a.display()
                    ));
                }
            }
            Err(e) => return Some(format!("the file system of {}: {e}", a.display())),
        }
    }
    None
}

/// The recorder's change feed over the looks: the feed itself, what the
/// next look must look at again, and what to say about a fallback.
#[derive(Debug)]
pub(crate) struct Tracker {
    /// The feed; `None` before the first whole look, or once given up.
    pub(crate) feed: Option<Feed>,
    /// Whether the feed's watches cover the roots (a whole look added
    /// them): only then do its events say everything that changed.
    pub(crate) primed: bool,
    /// Why no feed is used any more, if so.
    pub(crate) given_up: Option<String>,
    /// Paths captured within a timestamp tick of their change
    /// ([`super::state::Known::racy`]): looked at again by the next look
    /// whatever the feed says.
    pub(crate) racy: BTreeSet<PathBuf>,
    /// Files with more than one link: a write through another link makes
    /// no event in their folder, so every look looks at them.
    pub(crate) linked: BTreeSet<PathBuf>,
    /// What to say once, in the next checkpoint, about a fallback.
    pub(crate) note: Option<String>,
}

impl Tracker {
    /// A tracker for `roots`; its feed starts at the first whole look.
    pub(crate) fn new(roots: &[PathBuf]) -> Self {
        let given_up = unusable(roots);
        Self {
            feed: None,
            primed: false,
            note: given_up.as_ref().map(|reason| {
                format!("the change feed is off ({reason}): the roots are compared whole")
            }),
            given_up,
            racy: BTreeSet::new(),
            linked: BTreeSet::new(),
        }
    }

    /// Says once that the feed stopped and why.
    fn stop(&mut self, reason: &str) {
        if self.note.is_none() {
            self.note = Some(format!(
                "the change feed stopped ({reason}): the roots were compared whole"
            ));
        }
    }

    /// What the next whole look of `roots` must look at: `Some(paths)`
    /// when the feed knows, `None` when the roots must be walked whole
    /// (the feed, fresh when the old one stopped, is then in
    /// [`Tracker::feed`] for the walk to add its watches to).
    pub(crate) fn dirty(&mut self, roots: &[PathBuf]) -> Option<BTreeSet<PathBuf>> {
        if self.given_up.is_some() {
            return None;
        }
        if let (true, Some(feed)) = (self.primed, self.feed.as_mut()) {
            match feed.drain() {
                Dirty::Paths(mut paths) => {
                    paths.append(&mut self.racy);
                    paths.extend(self.linked.iter().cloned());
                    return Some(paths);
                }
                // The watches hold; only this look is whole.
                Dirty::Rules => return None,
                Dirty::Stopped(reason) => self.stop(&reason),
            }
        }
        // A fresh feed: its watches are added by the walk.
        self.primed = false;
        self.feed = None;
        match Feed::new(roots) {
            Ok(feed) => self.feed = Some(feed),
            Err(e) => self.give_up(&format!("inotify could not start: {e}")),
        }
        None
    }

    /// After a whole look that added the watches of `feed`: primed, or
    /// given up when a watch could not be added.
    pub(crate) fn walked(&mut self, feed: Option<Feed>) {
        match feed {
            Some(feed) => match feed.stopped() {
                Some(reason) => {
                    let reason = reason.to_owned();
                    self.give_up(&reason);
                }
                None => {
                    self.feed = Some(feed);
                    self.primed = true;
                }
            },
            None => {
                self.feed = None;
                self.primed = false;
            }
        }
    }

    /// No feed from now on: every look walks the roots.
    pub(crate) fn give_up(&mut self, reason: &str) {
        self.stop(reason);
        self.given_up = Some(reason.to_owned());
        self.feed = None;
        self.primed = false;
    }
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::os::unix::fs::PermissionsExt;
    use std::path::{Path, PathBuf};

    use super::super::{CheckpointConfig, Checkpoints, State};
    use super::inotify;
    use crate::fs::workspace::Workspace;

    struct Setup {
        _dirs: (tempfile::TempDir, tempfile::TempDir),
        root: PathBuf,
        cp: Checkpoints,
    }

    fn setup(make: impl FnOnce(&Path)) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let store = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        make(&root);
        let config = CheckpointConfig {
            store: Some(store.path().to_path_buf()),
            ..CheckpointConfig::default()
        };
        let cp = Checkpoints::open(&config, &Workspace::new(&root).unwrap(), vec![root.clone()])
            .unwrap();
        Setup {
            _dirs: (dir, store),
            root,
            cp,
        }
    }

    impl Setup {
        /// Runs `command` as a recorded command; its changes in words.
        fn command(&self, command: impl FnOnce(&Path)) -> Vec<String> {
            let r = self.cp.begin("c", "bash", "cmd", None).unwrap();
            command(&self.root);
            match self.cp.end(r).unwrap() {
                Some(cp) => {
                    let mut lines = cp.describe(&self.root);
                    lines.extend(cp.notes.iter().map(|n| format!("note: {n}")));
                    lines
                }
                None => Vec::new(),
            }
        }

        fn tracker(&self) -> std::sync::MutexGuard<'_, super::Tracker> {
            self.cp.inner.feed.lock().unwrap()
        }

        /// Whether the feed is in use, primed by a whole look.
        fn fed(&self) -> bool {
            let t = self.tracker();
            t.primed && t.given_up.is_none() && t.feed.as_ref().is_some_and(|f| f.watches() > 0)
        }
    }

    fn tree(root: &Path) {
        for d in ["a", "b", "a/deep"] {
            fs::create_dir_all(root.join(d)).unwrap();
        }
        fs::write(root.join("a/one.txt"), "one\n").unwrap();
        fs::write(root.join("a/deep/two.txt"), "two\n").unwrap();
        fs::write(root.join("b/three.txt"), "three\n").unwrap();
        fs::write(root.join("top.txt"), "top\n").unwrap();
    }

    #[test]
    fn a_file_in_a_new_nested_folder_is_seen() {
        let s = setup(tree);
        assert!(s.fed(), "the first look primes the feed");
        let lines = s.command(|root| {
            fs::create_dir_all(root.join("new/x/y")).unwrap();
            fs::write(root.join("new/x/y/f.txt"), "f\n").unwrap();
        });
        assert_eq!(
            lines,
            [
                "created folder new",
                "created folder new/x",
                "created folder new/x/y",
                "created new/x/y/f.txt"
            ]
        );
        assert!(s.fed());
        // The new folders are watched: a later write in them is seen.
        let lines = s.command(|root| fs::write(root.join("new/x/y/g.txt"), "g\n").unwrap());
        assert_eq!(lines, ["created new/x/y/g.txt"]);
    }

    #[test]
    fn a_rename_across_folders_a_chmod_and_a_folder_deleted_are_seen() {
        let s = setup(tree);
        let lines = s.command(|root| {
            fs::rename(root.join("a/one.txt"), root.join("b/one.txt")).unwrap();
        });
        assert_eq!(lines, ["renamed a/one.txt -> b/one.txt"]);
        let lines = s.command(|root| {
            fs::set_permissions(root.join("b/three.txt"), fs::Permissions::from_mode(0o755))
                .unwrap();
        });
        assert_eq!(lines, ["mode of b/three.txt 644 -> 755"]);
        let lines = s.command(|root| fs::remove_dir_all(root.join("a")).unwrap());
        assert_eq!(
            lines,
            [
                "deleted folder a",
                "deleted folder a/deep",
                "deleted a/deep/two.txt"
            ]
        );
        assert!(s.fed());
    }

    #[test]
    fn a_folder_moved_is_deleted_at_its_old_path_and_watched_at_its_new() {
        let s = setup(tree);
        let lines = s.command(|root| fs::rename(root.join("a"), root.join("b/moved")).unwrap());
        assert_eq!(
            lines,
            [
                "deleted folder a",
                "deleted folder a/deep",
                "renamed a/deep/two.txt -> b/moved/deep/two.txt",
                "renamed a/one.txt -> b/moved/one.txt",
                "created folder b/moved",
                "created folder b/moved/deep",
            ]
        );
        let lines = s.command(|root| fs::write(root.join("b/moved/deep/two.txt"), "2\n").unwrap());
        assert_eq!(lines, ["modified b/moved/deep/two.txt"]);
    }

    #[test]
    fn a_write_through_another_link_is_seen() {
        let s = setup(|root| {
            tree(root);
            fs::hard_link(root.join("a/one.txt"), root.join("b/link.txt")).unwrap();
        });
        let lines = s.command(|root| fs::write(root.join("b/link.txt"), "changed\n").unwrap());
        assert_eq!(lines, ["modified a/one.txt", "modified b/link.txt"]);
    }

    #[test]
    fn an_ignore_file_changed_makes_the_look_whole() {
        let s = setup(tree);
        let lines = s.command(|root| {
            fs::write(root.join(".gitignore"), "b/\n").unwrap();
        });
        // b is no longer recorded: forgotten, not deleted.
        assert_eq!(lines, ["created .gitignore"]);
        assert!(s.fed(), "the watches hold");
        let lines = s.command(|root| {
            fs::write(root.join("b/three.txt"), "ignored\n").unwrap();
            fs::write(root.join("a/one.txt"), "seen\n").unwrap();
        });
        assert_eq!(lines, ["modified a/one.txt"]);
    }

    #[test]
    fn a_folder_whose_watch_went_away_is_walked_whole() {
        let s = setup(tree);
        let lines = s.command(|root| {
            {
                let mut t = s.tracker();
                let feed = t.feed.as_mut().unwrap();
                let wd = feed.folders[&root.join("a/deep")];
                // The watch goes away (as on an unmount): its IN_IGNORED
                // names the folder, which is no longer watched.
                inotify::remove_watch(&feed.fd, wd).unwrap();
            }
            // No event says this: only a walk of the folder sees it.
            fs::write(root.join("a/deep/new.txt"), "n\n").unwrap();
        });
        assert_eq!(lines, ["created a/deep/new.txt"]);
        // Watched again at its path.
        assert!(
            s.tracker()
                .feed
                .as_ref()
                .unwrap()
                .watched(&s.root.join("a/deep"))
        );
        let lines = s.command(|root| fs::write(root.join("a/deep/new.txt"), "m\n").unwrap());
        assert_eq!(lines, ["modified a/deep/new.txt"]);
    }

    #[test]
    fn a_lost_event_falls_back_to_the_whole_walk_and_says_so_once() {
        let s = setup(tree);
        s.tracker().feed.as_mut().unwrap().force_overflow();
        let lines = s.command(|root| {
            fs::write(root.join("a/deep/two.txt"), "2\n").unwrap();
            fs::remove_file(root.join("top.txt")).unwrap();
        });
        assert_eq!(
            lines,
            [
                "modified a/deep/two.txt",
                "deleted top.txt",
                "note: the change feed stopped (its event queue overflowed): \
                 the roots were compared whole"
            ]
        );
        // A fresh feed took over.
        assert!(s.fed());
        let lines = s.command(|root| fs::write(root.join("b/new.txt"), "n\n").unwrap());
        assert_eq!(lines, ["created b/new.txt"]);
    }

    #[test]
    fn a_feed_given_up_records_everything_by_walking() {
        let s = setup(tree);
        s.tracker()
            .give_up("the inotify watch limit (fs.inotify.max_user_watches) was reached");
        let lines = s.command(|root| {
            fs::create_dir(root.join("c")).unwrap();
            fs::write(root.join("c/f"), "f\n").unwrap();
            fs::remove_dir_all(root.join("a/deep")).unwrap();
        });
        assert_eq!(
            lines,
            [
                "deleted folder a/deep",
                "deleted a/deep/two.txt",
                "created folder c",
                "created c/f",
                "note: the change feed stopped (the inotify watch limit \
                 (fs.inotify.max_user_watches) was reached): the roots were compared whole"
            ]
        );
        assert!(!s.fed());
        let lines = s.command(|root| fs::write(root.join("c/f"), "g\n").unwrap());
        assert_eq!(lines, ["modified c/f"], "said once");
    }

    #[test]
    fn a_file_rewritten_at_once_stays_dirty() {
        let s = setup(tree);
        let lines = s.command(|root| fs::write(root.join("top.txt"), "AAA\n").unwrap());
        assert_eq!(lines, ["modified top.txt"]);
        assert!(s.tracker().racy.contains(&s.root.join("top.txt")));
        // Rewritten within the tick, unseen by any event the next look
        // reads (the event was drained): still read again.
        let lines = s.command(|root| fs::write(root.join("top.txt"), "BBB\n").unwrap());
        assert_eq!(lines, ["modified top.txt"]);
    }

    #[test]
    fn the_feed_and_the_walk_agree() {
        let s = setup(tree);
        let ops: [&dyn Fn(&Path); 6] = [
            &|r| fs::write(r.join("a/one.txt"), "x\n").unwrap(),
            &|r| std::os::unix::fs::symlink("a/one.txt", r.join("b/ln")).unwrap(),
            &|r| fs::rename(r.join("b"), r.join("c")).unwrap(),
            &|r| {
                fs::remove_dir_all(r.join("a/deep")).unwrap();
                fs::write(r.join("a/deep"), "now a file\n").unwrap();
            },
            &|r| {
                fs::remove_file(r.join("a/deep")).unwrap();
                fs::create_dir(r.join("a/deep")).unwrap();
                fs::write(r.join("a/deep/z"), "z\n").unwrap();
            },
            &|r| fs::set_permissions(r.join("a"), fs::Permissions::from_mode(0o700)).unwrap(),
        ];
        for op in ops {
            s.command(op);
            assert!(s.fed());
            // What each path holds, and a file's or link's key (whether
            // it is racy depends on the clock; a folder whose entries
            // changed keeps its old mtime in the index, which only costs a
            // walk a look at its mode).
            let held = |s: &Setup| -> Vec<_> {
                s.cp.lock()
                    .index
                    .iter()
                    .map(|(p, k)| {
                        let key = (!matches!(k.state, State::Dir { .. })).then_some(k.key);
                        (p.clone(), k.state.clone(), key)
                    })
                    .collect()
            };
            let fed = held(&s);
            // A whole walk now finds nothing the feed missed.
            s.tracker().primed = false;
            let r = s.cp.begin("w", "bash", "walk", None).unwrap();
            assert_eq!(held(&s), fed);
            s.cp.end(r).unwrap();
        }
    }
}
