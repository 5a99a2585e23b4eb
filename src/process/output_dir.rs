//! The session's output folder: where bash keeps the full output of commands
//! whose result was cut, so that `read` can page through it.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};

use tempfile::TempDir;

/// The names of the session folders agentcore makes in the temporary
/// directory: saved output, and the command sandbox's.
pub const OUTPUT_PREFIX: &str = "agentcore-output-";
/// See [`OUTPUT_PREFIX`].
pub const SANDBOX_PREFIX: &str = "agentcore-sandbox-";
/// The file beside an output folder (`agentcore-jobs-` and the folder's
/// own suffix) listing the unconfined commands of its session, one `PID
/// START` a line.
pub const JOBS_PREFIX: &str = "agentcore-jobs-";

/// `prefix` followed by this process's pid and start time, `PID-START-`
/// (clock ticks after boot, so that a reused pid is not taken for the
/// owner): a later start tells from the name alone whether the folder's
/// agentcore is gone.
pub fn owned_prefix(prefix: &str) -> String {
    let pid = std::process::id() as i32;
    format!("{prefix}{pid}-{}-", start_time(pid).unwrap_or(0))
}

/// A temporary folder, one per session, holding the full output of commands.
///
/// Its total size is capped: when a new write would go over the cap, the
/// oldest files are removed first; a single output larger than the whole
/// cap keeps only its beginning. Its files' age is capped too: a file
/// finished longer than [`max_age`](Self::max_age) ago is removed when the
/// next file is created or a file is looked up. The folder and everything in it are removed when
/// the `OutputDir` is dropped (when the session ends).
///
/// ```
/// use agentcore::process::OutputDir;
///
/// let dir = OutputDir::new()?;
/// assert!(dir.path().is_dir());
/// let path = dir.path().to_owned();
/// drop(dir);
/// assert!(!path.exists());
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct OutputDir {
    dir: TempDir,
    capacity: u64,
    max_age: Duration,
    ledger: Arc<Mutex<Ledger>>,
}

/// The files in the folder, oldest first, with their sizes.
#[derive(Debug, Default)]
struct Ledger {
    files: VecDeque<Entry>,
    total: u64,
    next_id: u64,
}

#[derive(Debug)]
struct Entry {
    id: u64,
    path: PathBuf,
    size: u64,
    /// The stem the file was created with, unsanitized, to find it by
    /// ([`OutputDir::kept`]); `None` when too long to be worth keeping.
    stem: Option<String>,
    /// When its [`OutputFile`] was dropped (kept); `None` while written.
    finished: Option<Instant>,
}

/// The longest stem an entry remembers (call ids are far shorter).
const MAX_STEM_BYTES: usize = 256;

impl OutputDir {
    /// The default cap on the folder's total size: 512 MiB.
    pub const DEFAULT_CAPACITY: u64 = 512 * 1024 * 1024;

    /// The default cap on a finished file's age: 12 hours.
    pub const DEFAULT_MAX_AGE: Duration = Duration::from_secs(12 * 60 * 60);

    /// A new folder in the system's temporary directory, capped at
    /// [`OutputDir::DEFAULT_CAPACITY`].
    pub fn new() -> io::Result<Self> {
        Self::with_capacity(Self::DEFAULT_CAPACITY)
    }

    /// A new folder in the system's temporary directory whose files add up
    /// to at most `capacity` bytes.
    pub fn with_capacity(capacity: u64) -> io::Result<Self> {
        Self::in_dir(std::env::temp_dir(), capacity)
    }

    /// A new folder inside `parent`, capped at `capacity` bytes.
    pub fn in_dir(parent: impl AsRef<Path>, capacity: u64) -> io::Result<Self> {
        // 0700 (tempfile's mode on Unix), and said so again in case a
        // umask or an ACL default widened it: other users see nothing.
        let dir = tempfile::Builder::new()
            .prefix(&owned_prefix(OUTPUT_PREFIX))
            .tempdir_in(parent)?;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700))?;
        Ok(Self {
            dir,
            capacity,
            max_age: Self::DEFAULT_MAX_AGE,
            ledger: Arc::default(),
        })
    }

    /// Removes files finished longer than `max_age` ago (instead of
    /// [`OutputDir::DEFAULT_MAX_AGE`]), when the next file is created or a
    /// file is looked up.
    ///
    /// ```
    /// use std::time::Duration;
    /// use agentcore::process::OutputDir;
    ///
    /// let dir = OutputDir::new()?.with_max_age(Duration::from_secs(3600));
    /// assert_eq!(dir.max_age(), Duration::from_secs(3600));
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn with_max_age(mut self, max_age: Duration) -> Self {
        self.max_age = max_age;
        self
    }

    /// The cap on a finished file's age.
    pub fn max_age(&self) -> Duration {
        self.max_age
    }

    /// The folder; a session adds it to the roots `read` may open.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The cap on the folder's total size, in bytes.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The bytes the folder's files hold now.
    pub fn used(&self) -> u64 {
        lock(&self.ledger).total
    }

    /// The file created with `stem` (see [`OutputDir::create`]) and
    /// finished, while the folder keeps it: `None` for a file never made,
    /// still being written, discarded (the output fit in its result), or
    /// removed by the folder's caps (the files past the age cap are
    /// removed first).
    pub(crate) fn kept(&self, stem: &str) -> Option<PathBuf> {
        let mut ledger = lock(&self.ledger);
        ledger.remove_older_than(self.max_age);
        ledger
            .files
            .iter()
            .rev()
            .find(|e| e.finished.is_some() && e.stem.as_deref() == Some(stem))
            .map(|e| e.path.clone())
    }

    /// Creates a new file named after `stem` (sanitized, made unique),
    /// removing first the files older than [`max_age`](Self::max_age).
    pub(crate) fn create(&self, stem: &str) -> io::Result<OutputFile> {
        let mut ledger = lock(&self.ledger);
        ledger.remove_older_than(self.max_age);
        let id = ledger.next_id;
        ledger.next_id += 1;
        let path = self.path().join(format!("{id:06}-{}.log", sanitize(stem)));
        let file = File::options()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)?;
        ledger.files.push_back(Entry {
            id,
            path: path.clone(),
            size: 0,
            stem: (stem.len() <= MAX_STEM_BYTES).then(|| stem.to_owned()),
            finished: None,
        });
        Ok(OutputFile {
            id,
            path,
            file: Some(file),
            written: 0,
            capacity: self.capacity,
            ledger: self.ledger.clone(),
        })
    }
}

impl OutputDir {
    /// Records an unconfined command (the shell's pid) of this session,
    /// so that a later start can find it if this process dies without
    /// ending it ([`sweep_stale_sessions`]). Best effort: a failed write
    /// only loses the report.
    pub fn register_unconfined(&self, pid: i32) {
        let Some(start) = start_time(pid) else {
            return;
        };
        let Some(path) = self.jobs_file() else {
            return;
        };
        let file = File::options()
            .append(true)
            .create(true)
            .mode(0o600)
            .open(path);
        if let Ok(mut file) = file {
            let _ = writeln!(file, "{pid} {start}");
        }
    }

    /// Where [`register_unconfined`](Self::register_unconfined) writes.
    fn jobs_file(&self) -> Option<PathBuf> {
        let name = self.path().file_name()?.to_str()?;
        let suffix = name.strip_prefix(OUTPUT_PREFIX)?;
        Some(self.path().with_file_name(format!("{JOBS_PREFIX}{suffix}")))
    }
}

impl Drop for OutputDir {
    fn drop(&mut self) {
        if let Some(path) = self.jobs_file() {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The start time of process `pid` (clock ticks after boot), from
/// `/proc/PID/stat`; `None` when it is gone or unreadable.
pub(crate) fn start_time(pid: i32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command name (which may hold `)`): state is field 3, the
    // start time field 22.
    let rest = &text[text.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// `(pid, start)` when `PID START` (or `PID-START-…`) names a process
/// alive now (same pid, same start time: not a reuse of the pid).
fn alive(line: &str) -> Option<(i32, u64)> {
    let mut words = line.split([' ', '-']).filter(|w| !w.is_empty());
    let pid: i32 = words.next()?.parse().ok()?;
    let start: u64 = words.next()?.parse().ok()?;
    (pid > 0 && start_time(pid) == Some(start)).then_some((pid, start))
}

/// Whether `PID-START-…` parses (a folder named by an agentcore that names
/// its owner).
fn names_an_owner(rest: &str) -> bool {
    let mut words = rest.split('-');
    words.next().is_some_and(|w| w.parse::<i32>().is_ok())
        && words.next().is_some_and(|w| w.parse::<u64>().is_ok())
}

/// A process an agentcore that died left running: an unconfined command
/// of its session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Orphan {
    /// Its pid.
    pub pid: i32,
    /// Its start time, clock ticks after boot (checked again before a
    /// kill, so a reused pid is never killed).
    pub start: u64,
}

impl Orphan {
    /// Kills the orphan's process group (a command runs in a session of its
    /// own) and the process itself with `SIGKILL`, if it is still the same
    /// process.
    pub fn kill(&self) -> bool {
        if start_time(self.pid) != Some(self.start) {
            return false;
        }
        let Some(pid) = rustix::process::Pid::from_raw(self.pid.max(0)) else {
            return false;
        };
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        rustix::process::kill_process(pid, rustix::process::Signal::KILL).is_ok()
    }
}

/// What [`sweep_stale_sessions`] found.
#[derive(Debug, Default)]
pub struct StaleSessions {
    /// Session folders of agentcore processes that are gone, removed.
    pub removed: Vec<PathBuf>,
    /// Unconfined commands of those sessions still running.
    pub orphans: Vec<Orphan>,
}

impl StaleSessions {
    /// One line for a log, or `None` when nothing was found, e.g.
    /// `removed 2 folders of agentcore sessions that died; their unconfined
    /// commands still run: pids 4242 4250 (end them with kill -KILL -- -4242
    /// -4250)`.
    pub fn summary(&self) -> Option<String> {
        if self.removed.is_empty() && self.orphans.is_empty() {
            return None;
        }
        let mut line = format!(
            "removed {} folder(s) of agentcore sessions that died",
            self.removed.len()
        );
        if !self.orphans.is_empty() {
            let pids: Vec<String> = self.orphans.iter().map(|o| o.pid.to_string()).collect();
            let groups: Vec<String> = self.orphans.iter().map(|o| format!("-{}", o.pid)).collect();
            line.push_str(&format!(
                "; their unconfined commands still run: pids {} (end them with kill -KILL -- {})",
                pids.join(" "),
                groups.join(" ")
            ));
        }
        Some(line)
    }

    /// Kills every orphan ([`Orphan::kill`]); how many were killed.
    pub fn kill_orphans(&self) -> usize {
        self.orphans.iter().filter(|o| o.kill()).count()
    }
}

/// Removes from `dir` (the temporary directory sessions are made in) the
/// session folders ([`OUTPUT_PREFIX`], [`SANDBOX_PREFIX`]) and job lists
/// ([`JOBS_PREFIX`]) of this user whose owner (named in the name, see
/// [`owned_prefix`]) is no longer alive, and lists the unconfined commands
/// of those sessions that still run. A name without an owner is left
/// alone.
pub fn sweep_stale_sessions(dir: &Path) -> StaleSessions {
    use std::os::unix::fs::MetadataExt;
    let mut found = StaleSessions::default();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    let me = rustix::process::geteuid().as_raw();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let Some(rest) = [OUTPUT_PREFIX, SANDBOX_PREFIX, JOBS_PREFIX]
            .iter()
            .find_map(|p| name.strip_prefix(p))
        else {
            continue;
        };
        if !names_an_owner(rest) || alive(rest).is_some() {
            continue;
        }
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.uid() != me {
            continue;
        }
        if name.starts_with(JOBS_PREFIX) && meta.is_file() {
            if let Ok(jobs) = std::fs::read_to_string(&path) {
                for line in jobs.lines() {
                    if let Some((pid, start)) = alive(line) {
                        found.orphans.push(Orphan { pid, start });
                    }
                }
            }
            let _ = std::fs::remove_file(&path);
        } else if meta.is_dir() && std::fs::remove_dir_all(&path).is_ok() {
            found.removed.push(path);
        }
    }
    found
}

impl Ledger {
    /// Removes the files finished longer than `max_age` ago (a file still
    /// written is never removed for its age).
    fn remove_older_than(&mut self, max_age: Duration) {
        let mut freed = 0;
        self.files.retain(|e| {
            let old = e.finished.is_some_and(|at| at.elapsed() >= max_age);
            if old {
                // A file already gone is as good as removed.
                let _ = std::fs::remove_file(&e.path);
                freed += e.size;
            }
            !old
        });
        self.total = self.total.saturating_sub(freed);
    }
}

fn lock(ledger: &Mutex<Ledger>) -> MutexGuard<'_, Ledger> {
    // Every update of the ledger is completed before the lock is released,
    // so a panic elsewhere cannot leave it half-written.
    ledger.lock().unwrap_or_else(|p| p.into_inner())
}

/// Keeps a file name to a safe alphabet and a short length.
fn sanitize(stem: &str) -> String {
    let clean: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(48)
        .collect();
    if clean.is_empty() {
        "output".to_owned()
    } else {
        clean
    }
}

/// One file in an [`OutputDir`], written as output arrives.
#[derive(Debug)]
pub(crate) struct OutputFile {
    id: u64,
    path: PathBuf,
    /// `None` once the file is full or a write failed.
    file: Option<File>,
    written: u64,
    capacity: u64,
    ledger: Arc<Mutex<Ledger>>,
}

impl OutputFile {
    /// Where the file is.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The bytes written so far.
    pub(crate) fn written(&self) -> u64 {
        self.written
    }

    /// Whether the file stopped taking output before the end (the folder's
    /// cap, or a write error).
    pub(crate) fn is_cut(&self) -> bool {
        self.file.is_none()
    }

    /// Appends `bytes`, making room by removing older files; keeps what fits
    /// and stops taking output once the cap is reached.
    pub(crate) fn write(&mut self, bytes: &[u8]) {
        if self.file.is_none() || bytes.is_empty() {
            return;
        }
        let fits = self.reserve(bytes.len() as u64);
        let fits = usize::try_from(fits).unwrap_or(usize::MAX).min(bytes.len());
        let result = match self.file.as_mut() {
            Some(file) => file.write_all(&bytes[..fits]),
            None => return,
        };
        match result {
            Ok(()) => self.written += fits as u64,
            Err(_) => {
                // Give back what was reserved but not written.
                self.release(fits as u64);
                self.file = None;
                return;
            }
        }
        if fits < bytes.len() {
            self.file = None;
        }
    }

    /// Reserves up to `wanted` bytes of the folder's budget, removing the
    /// oldest other files while that makes room; returns what was granted.
    fn reserve(&self, wanted: u64) -> u64 {
        let mut ledger = lock(&self.ledger);
        while ledger.total.saturating_add(wanted) > self.capacity {
            let oldest_other = ledger.files.front().is_some_and(|e| e.id != self.id);
            if !oldest_other {
                break;
            }
            if let Some(old) = ledger.files.pop_front() {
                // A file already gone is as good as removed.
                let _ = std::fs::remove_file(&old.path);
                ledger.total = ledger.total.saturating_sub(old.size);
            }
        }
        let granted = wanted.min(self.capacity.saturating_sub(ledger.total));
        ledger.total += granted;
        if let Some(entry) = ledger.files.iter_mut().find(|e| e.id == self.id) {
            entry.size += granted;
        }
        granted
    }

    fn release(&self, bytes: u64) {
        let mut ledger = lock(&self.ledger);
        ledger.total = ledger.total.saturating_sub(bytes);
        if let Some(entry) = ledger.files.iter_mut().find(|e| e.id == self.id) {
            entry.size = entry.size.saturating_sub(bytes);
        }
    }

    /// Flushes and keeps the file for `read`.
    pub(crate) fn keep(mut self) {
        if let Some(file) = self.file.as_mut() {
            let _ = file.flush();
        }
    }

    /// Removes the file: the whole output fit in the result.
    pub(crate) fn discard(self) {
        let mut ledger = lock(&self.ledger);
        if let Some(pos) = ledger.files.iter().position(|e| e.id == self.id) {
            if let Some(entry) = ledger.files.remove(pos) {
                ledger.total = ledger.total.saturating_sub(entry.size);
            }
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

impl Drop for OutputFile {
    /// The file is finished: from now on its age counts, and
    /// [`OutputDir::kept`] finds it.
    fn drop(&mut self) {
        let mut ledger = lock(&self.ledger);
        if let Some(entry) = ledger.files.iter_mut().find(|e| e.id == self.id) {
            entry.finished = Some(Instant::now());
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn stale_sessions_are_told_by_pid_and_start_time_and_others_are_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let me = std::process::id() as i32;
        let start = start_time(me).unwrap();
        let dir = |name: &str| {
            let path = tmp.path().join(name);
            std::fs::create_dir(&path).unwrap();
            path
        };
        // Ours, alive: kept. Our pid with another start time (a reused
        // pid), and a pid that cannot be alive: removed. No owner: kept.
        let live = dir(&format!("{OUTPUT_PREFIX}{me}-{start}-aaaa"));
        let reused = dir(&format!("{SANDBOX_PREFIX}{me}-{}-bbbb", start + 1));
        let dead = dir(&format!("{OUTPUT_PREFIX}{}-1-cccc", i32::MAX));
        let unowned = dir(&format!("{OUTPUT_PREFIX}XyZ123"));
        let other = dir("something-else");
        // The dead session's job list names this process (alive) and a
        // dead one: only this process is an orphan.
        std::fs::write(
            tmp.path().join(format!("{JOBS_PREFIX}{}-1-cccc", i32::MAX)),
            format!("{me} {start}\n{} 1\n", i32::MAX),
        )
        .unwrap();
        let found = sweep_stale_sessions(tmp.path());
        let mut removed = found.removed.clone();
        removed.sort();
        let mut expected = vec![reused.clone(), dead.clone()];
        expected.sort();
        assert_eq!(removed, expected);
        assert_eq!(found.orphans, vec![Orphan { pid: me, start }]);
        assert!(live.exists() && unowned.exists() && other.exists());
        assert!(!reused.exists() && !dead.exists());
        assert!(found.summary().unwrap().contains(&format!("pids {me} ")));
        // A pid whose start time differs is never killed.
        assert!(
            !Orphan {
                pid: me,
                start: start + 1
            }
            .kill()
        );
    }

    #[test]
    fn output_folders_are_0700_and_files_0600_and_name_their_owner() {
        let dir = OutputDir::new().unwrap();
        let mode = std::fs::metadata(dir.path()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        let file = dir.create("x").unwrap();
        let mode = std::fs::metadata(file.path()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let name = dir
            .path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(name.starts_with(&owned_prefix(OUTPUT_PREFIX)), "{name}");
        dir.register_unconfined(std::process::id() as i32);
        let jobs = dir.jobs_file().unwrap();
        assert!(jobs.exists());
        drop(file);
        drop(dir);
        assert!(!jobs.exists());
    }
    use super::*;

    #[test]
    fn removed_on_drop() {
        let dir = OutputDir::new().unwrap();
        let path = dir.path().to_owned();
        let mut f = dir.create("x").unwrap();
        f.write(b"hello");
        f.keep();
        assert!(path.is_dir());
        drop(dir);
        assert!(!path.exists());
    }

    #[test]
    fn oldest_files_go_first() {
        let dir = OutputDir::with_capacity(10).unwrap();
        let mut a = dir.create("a").unwrap();
        a.write(b"123456");
        let a_path = a.path().to_owned();
        a.keep();
        let mut b = dir.create("b").unwrap();
        b.write(b"1234");
        let b_path = b.path().to_owned();
        b.keep();
        assert_eq!(dir.used(), 10);
        let mut c = dir.create("c").unwrap();
        c.write(b"12");
        assert!(!a_path.exists(), "the oldest file is removed");
        assert!(b_path.exists());
        assert_eq!(dir.used(), 6);
        c.keep();
    }

    #[test]
    fn one_file_over_the_cap_keeps_its_beginning() {
        let dir = OutputDir::with_capacity(8).unwrap();
        let mut f = dir.create("big").unwrap();
        f.write(b"12345");
        f.write(b"67890");
        assert!(f.is_cut());
        assert_eq!(f.written(), 8);
        let path = f.path().to_owned();
        f.keep();
        assert_eq!(std::fs::read(&path).unwrap(), b"12345678");
        assert_eq!(dir.used(), 8);
    }

    #[test]
    fn finished_files_older_than_the_age_cap_go_when_the_next_is_created() {
        let dir = OutputDir::with_capacity(100)
            .unwrap()
            .with_max_age(Duration::from_millis(50));
        let mut old = dir.create("bash-old").unwrap();
        old.write(b"12345");
        let old_path = old.path().to_owned();
        old.keep();
        // Still written: never removed for its age.
        let mut open = dir.create("job-open").unwrap();
        open.write(b"abc");
        std::thread::sleep(Duration::from_millis(80));
        let young = dir.create("bash-young").unwrap();
        assert!(!old_path.exists(), "the old file is removed");
        assert_eq!(dir.kept("bash-old"), None);
        assert!(open.path().exists());
        assert_eq!(dir.used(), 3);
        open.keep();
        young.keep();
        assert!(dir.kept("job-open").is_some());
        // A lookup removes what has aged meanwhile.
        std::thread::sleep(Duration::from_millis(80));
        assert_eq!(dir.kept("job-open"), None);
        assert_eq!(dir.used(), 0);
    }

    #[test]
    fn kept_files_are_found_by_their_stem_once_finished_and_while_kept() {
        let dir = OutputDir::with_capacity(10).unwrap();
        let mut a = dir.create("bash-call/1").unwrap();
        a.write(b"123456");
        let a_path = a.path().to_owned();
        assert_eq!(dir.kept("bash-call/1"), None, "still written");
        a.keep();
        assert_eq!(dir.kept("bash-call/1"), Some(a_path));
        assert_eq!(dir.kept("bash-call_1"), None, "the stem, not its file name");
        let b = dir.create("bash-fits").unwrap();
        b.discard();
        assert_eq!(dir.kept("bash-fits"), None);
        // The cap removes `a`: no longer found.
        let mut c = dir.create("bash-c").unwrap();
        c.write(b"12345678");
        c.keep();
        assert_eq!(dir.kept("bash-call/1"), None);
        assert!(dir.kept("bash-c").is_some());
    }

    #[test]
    fn discard_frees_the_space() {
        let dir = OutputDir::with_capacity(100).unwrap();
        let mut f = dir.create("../../etc/passwd").unwrap();
        assert!(f.path().starts_with(dir.path()));
        f.write(b"abc");
        let path = f.path().to_owned();
        f.discard();
        assert!(!path.exists());
        assert_eq!(dir.used(), 0);
    }
}
