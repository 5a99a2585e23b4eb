//! The checkpoint store on disk: kept versions by content address, the log
//! of checkpoints, and the recorder's index of what each path last held.
//!
//! ```text
//! STORE/               0700, outside every writable root
//!   lock               flock: one session records into a store at a time
//!   meta.json          the workspace root and writable roots it records
//!   log.jsonl          one record a line, appended and synced
//!   index.json         the index as of a log position (rebuilt on start)
//!   objects/ab/cdef…   a kept version's bytes, named by their BLAKE3
//! ```
//!
//! Every file appears whole or not at all: an object is written to a
//! temporary name and renamed to its hash once written; a log record is
//! one line written with one `write` and synced, and a torn last line (a
//! crash while writing it) is dropped when the log is read; the index is
//! renamed into place. A record names only objects already renamed into
//! place. Objects are not synced one by one (that made the first look at
//! a 10,000-file tree take 1.5 s): a killed process loses nothing the
//! kernel holds, and after a power loss an object whose bytes did not
//! reach the disk no longer hashes to its name, which every read checks
//! (the rewind then says the kept version is damaged, and the index reads
//! the file again).

use std::collections::{BTreeMap, HashSet};
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use super::state::{Known, State};

/// Objects over this size are streamed to disk while hashed, not held.
const IN_MEMORY: u64 = 1 << 20;

/// The kept versions, by content address.
#[derive(Debug)]
pub(crate) struct Objects {
    dir: PathBuf,
    /// Bytes of all objects (kept up to date as objects come and go).
    bytes: AtomicU64,
    /// Objects are not added past this many bytes (a file is then recorded
    /// by metadata only).
    limit: u64,
}

impl Objects {
    fn open(dir: PathBuf, limit: u64) -> io::Result<Self> {
        make_private_dir(&dir)?;
        let mut bytes = 0;
        for shard in fs::read_dir(&dir)? {
            let shard = shard?;
            if !shard.file_type()?.is_dir() {
                continue;
            }
            for object in fs::read_dir(shard.path())? {
                let object = object?;
                let name = object.file_name();
                if name.to_string_lossy().starts_with(".tmp") {
                    // A crash while writing it: never named by a record.
                    let _ = fs::remove_file(object.path());
                    continue;
                }
                bytes += object.metadata()?.len();
            }
        }
        Ok(Self {
            dir,
            bytes: AtomicU64::new(bytes),
            limit,
        })
    }

    /// Bytes of all kept versions.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    fn path_of(&self, hash: &str) -> Option<PathBuf> {
        if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        Some(self.dir.join(&hash[..2]).join(&hash[2..]))
    }

    /// Copies `size` bytes from `file` into the store; returns their hash,
    /// or `None` when the store is full. The copy is deduplicated: bytes
    /// already kept are not written again.
    pub(crate) fn put_file(&self, file: &mut File, size: u64) -> io::Result<Option<String>> {
        if size <= IN_MEMORY {
            let mut bytes = Vec::with_capacity(size as usize);
            file.take(IN_MEMORY + 1).read_to_end(&mut bytes)?;
            return self.put_bytes(&bytes);
        }
        if self.bytes() + size > self.limit {
            return Ok(None);
        }
        let temp = self.dir.join(format!(".tmp-{}", unique()));
        let mut out = private_file(&temp)?;
        let mut hasher = blake3::Hasher::new();
        let mut buf = vec![0; 64 * 1024];
        let result = (|| {
            loop {
                let n = file.read(&mut buf)?;
                if n == 0 {
                    break;
                }
                hasher.update(&buf[..n]);
                out.write_all(&buf[..n])?;
            }
            Ok(())
        })();
        if let Err(e) = result {
            let _ = fs::remove_file(&temp);
            return Err(e);
        }
        let hash = hasher.finalize().to_hex().to_string();
        self.settle(&temp, &hash)?;
        Ok(Some(hash))
    }

    /// Keeps `bytes`; returns their hash, or `None` when the store is full.
    pub(crate) fn put_bytes(&self, bytes: &[u8]) -> io::Result<Option<String>> {
        let hash = blake3::hash(bytes).to_hex().to_string();
        let path = self.path_of(&hash).expect("a BLAKE3 hex digest");
        if path.exists() {
            return Ok(Some(hash));
        }
        if self.bytes() + bytes.len() as u64 > self.limit {
            return Ok(None);
        }
        let temp = self.dir.join(format!(".tmp-{}", unique()));
        let mut out = private_file(&temp)?;
        if let Err(e) = out.write_all(bytes) {
            let _ = fs::remove_file(&temp);
            return Err(e);
        }
        self.settle(&temp, &hash)?;
        Ok(Some(hash))
    }

    /// Renames a written temporary object to its hash (or drops it when that
    /// object is already there).
    fn settle(&self, temp: &Path, hash: &str) -> io::Result<()> {
        let path = self.path_of(hash).expect("a BLAKE3 hex digest");
        if path.exists() {
            let _ = fs::remove_file(temp);
            return Ok(());
        }
        make_private_dir(path.parent().expect("a shard"))?;
        let size = fs::metadata(temp)?.len();
        fs::rename(temp, &path)?;
        self.bytes.fetch_add(size, Ordering::Relaxed);
        Ok(())
    }

    /// Opens a kept version for reading, checking that its bytes still
    /// hash to its name.
    pub(crate) fn read(&self, hash: &str) -> io::Result<File> {
        let path = self
            .path_of(hash)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "not an object name"))?;
        let mut file = File::open(&path)?;
        let mut hasher = blake3::Hasher::new();
        io::copy(&mut file, &mut hasher)?;
        if hasher.finalize().to_hex().as_str() != hash {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("the kept version {hash} is damaged"),
            ));
        }
        file = File::open(&path)?;
        Ok(file)
    }

    /// Whether the version `hash` is kept.
    pub(crate) fn has(&self, hash: &str) -> bool {
        self.path_of(hash).is_some_and(|p| p.exists())
    }

    /// Removes every object not in `keep`; returns the bytes freed.
    pub(crate) fn collect(&self, keep: &HashSet<&str>) -> io::Result<u64> {
        let mut freed = 0;
        for shard in fs::read_dir(&self.dir)? {
            let shard = shard?;
            if !shard.file_type()?.is_dir() {
                continue;
            }
            let prefix = shard.file_name().to_string_lossy().into_owned();
            for object in fs::read_dir(shard.path())? {
                let object = object?;
                let name = format!("{prefix}{}", object.file_name().to_string_lossy());
                if !keep.contains(name.as_str()) {
                    let size = object.metadata()?.len();
                    fs::remove_file(object.path())?;
                    freed += size;
                }
            }
        }
        self.bytes
            .fetch_sub(freed.min(self.bytes()), Ordering::Relaxed);
        Ok(freed)
    }
}

/// One changed path in a checkpoint.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// The path, absolute, under one of the recorded roots.
    pub path: PathBuf,
    /// What it held before the call.
    pub before: State,
    /// What it held after.
    pub after: State,
}

/// One line of the log.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub(crate) enum Record {
    /// A call that can write is about to run (a crash before its
    /// checkpoint leaves this: the next start attributes what changed to
    /// it).
    Begin {
        id: u64,
        call_id: String,
        tool: String,
        label: String,
        turn: u64,
    },
    /// A checkpoint: what a call (or a job, or a rewind) changed.
    Checkpoint(super::Checkpoint),
    /// A rewind is about to write these states (finished on the next
    /// start if it stopped halfway).
    RewindBegin { id: u64, plan: Vec<Change> },
    /// The checkpoints up to `through` were dropped to keep the store
    /// under its size.
    Dropped { through: u64 },
}

/// The log of records, appended one synced line at a time.
#[derive(Debug)]
pub(crate) struct Log {
    file: Mutex<File>,
}

impl Log {
    /// Opens the log at `path`, returning its records (a torn last line
    /// dropped and cut off the file).
    fn open(path: &Path) -> io::Result<(Self, Vec<Record>)> {
        let mut records = Vec::new();
        let mut good = 0u64;
        if let Ok(file) = File::open(path) {
            let mut reader = BufReader::new(file);
            let mut line = String::new();
            loop {
                line.clear();
                let n = reader.read_line(&mut line)?;
                if n == 0 || !line.ends_with('\n') {
                    break;
                }
                match serde_json::from_str::<Record>(&line) {
                    Ok(record) => records.push(record),
                    Err(_) => break,
                }
                good += n as u64;
            }
        }
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .mode(0o600)
            .open(path)?;
        file.set_len(good)?;
        let mut file = file;
        std::io::Seek::seek(&mut file, io::SeekFrom::End(0))?;
        Ok((
            Self {
                file: Mutex::new(file),
            },
            records,
        ))
    }

    /// Appends `record` and syncs it.
    pub(crate) fn append(&self, record: &Record) -> io::Result<()> {
        let mut line = serde_json::to_vec(record).map_err(io::Error::other)?;
        line.push(b'\n');
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        file.write_all(&line)?;
        file.sync_data()
    }
}

/// What `meta.json` says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Meta {
    /// The workspace root the store belongs to.
    pub(crate) root: PathBuf,
    /// The roots recorded (the workspace root first).
    pub(crate) roots: Vec<PathBuf>,
}

/// The index as saved: what each path last held, as of `records` records
/// of the log.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct SavedIndex {
    pub(crate) records: usize,
    pub(crate) paths: BTreeMap<PathBuf, Known>,
}

/// An open store.
#[derive(Debug)]
pub(crate) struct Store {
    pub(crate) dir: PathBuf,
    pub(crate) objects: Objects,
    pub(crate) log: Log,
    /// Held while the store is open: a second session on the same root
    /// does not record into it.
    _lock: File,
}
/// How long a store held by someone else is waited for before it is called
/// busy: a child this process is starting holds the lock's file until it
/// runs its program (a fork copies every descriptor), so a store just let
/// go can look held for a moment.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

/// Takes the store's lock on `lock`, waiting up to [`LOCK_WAIT`] for a
/// holder to let go.
fn lock_exclusive(lock: &fs::File, dir: &Path) -> Result<(), StoreError> {
    let deadline = std::time::Instant::now() + LOCK_WAIT;
    loop {
        match rustix::fs::flock(lock, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Ok(()),
            Err(rustix::io::Errno::WOULDBLOCK) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            Err(rustix::io::Errno::WOULDBLOCK) => return Err(StoreError::Busy(dir.to_path_buf())),
            Err(e) => {
                return Err(StoreError::Io {
                    path: dir.to_path_buf(),
                    source: e.into(),
                });
            }
        }
    }
}

/// Why a store cannot be opened.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Another process records into it.
    #[error("the checkpoint store {0} is in use by another agentcore session")]
    Busy(PathBuf),
    /// The file system said no.
    #[error("cannot open the checkpoint store {path}: {source}")]
    Io {
        /// The store's folder.
        path: PathBuf,
        /// What failed.
        source: io::Error,
    },
    /// No state directory: neither `XDG_STATE_HOME` nor `HOME` is set.
    #[error("no state directory for checkpoints: set XDG_STATE_HOME or HOME")]
    NoStateDir,
    /// The store would be inside a root commands may write.
    #[error(
        "the checkpoint store {store} would be inside {root}, which commands may write; set [checkpoints] store to a folder outside it"
    )]
    InsideRoot {
        /// The store's folder.
        store: PathBuf,
        /// The writable root holding it.
        root: PathBuf,
    },
}

impl Store {
    /// Opens (creating) the store at `dir` for `meta`, returning it with
    /// its log's records and its saved index.
    pub(crate) fn open(
        dir: &Path,
        meta: &Meta,
        limit: u64,
    ) -> Result<(Self, Vec<Record>, SavedIndex), StoreError> {
        let io = |source| StoreError::Io {
            path: dir.to_path_buf(),
            source,
        };
        make_private_dir(dir).map_err(io)?;
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(dir.join("lock"))
            .map_err(io)?;
        lock_exclusive(&lock, dir)?;
        let meta_path = dir.join("meta.json");
        let bytes = serde_json::to_vec_pretty(meta).map_err(|e| io(io::Error::other(e)))?;
        write_atomically(&meta_path, &bytes).map_err(io)?;
        let objects = Objects::open(dir.join("objects"), limit).map_err(io)?;
        let (log, records) = Log::open(&dir.join("log.jsonl")).map_err(io)?;
        let saved = fs::read(dir.join("index.json"))
            .ok()
            .and_then(|bytes| serde_json::from_slice::<SavedIndex>(&bytes).ok())
            .filter(|saved| saved.records <= records.len())
            .unwrap_or_default();
        Ok((
            Self {
                dir: dir.to_path_buf(),
                objects,
                log,
                _lock: lock,
            },
            records,
            saved,
        ))
    }

    /// Saves the index as of `records` log records.
    pub(crate) fn save_index(&self, index: &SavedIndex) -> io::Result<()> {
        let bytes = serde_json::to_vec(index).map_err(io::Error::other)?;
        write_atomically(&self.dir.join("index.json"), &bytes)
    }
}

/// Writes `bytes` to `path` through a synced temporary file and a rename.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let temp = path.with_extension(format!("tmp-{}", unique()));
    let mut out = private_file(&temp)?;
    if let Err(e) = out.write_all(bytes).and_then(|()| out.sync_data()) {
        let _ = fs::remove_file(&temp);
        return Err(e);
    }
    fs::rename(&temp, path)
}

/// A new file only its owner may read.
fn private_file(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
}

/// Makes `dir` (and its missing parents) with mode 0700, and makes sure an
/// existing `dir` is 0700 and a directory (not a link).
pub(crate) fn make_private_dir(dir: &Path) -> io::Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let meta = fs::symlink_metadata(dir)?;
    if !meta.is_dir() {
        return Err(io::Error::other(format!(
            "{} is not a folder",
            dir.display()
        )));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// A name part no other writer in this process or another uses at once.
fn unique() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed),
        super::state::now_ns()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lock_file(dir: &Path) -> File {
        OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join("lock"))
            .unwrap()
    }

    #[test]
    fn a_lock_let_go_within_a_moment_is_taken_and_one_kept_is_busy() {
        let dir = tempfile::tempdir().unwrap();
        let holder = lock_file(dir.path());
        lock_exclusive(&holder, dir.path()).unwrap();
        // Held for a moment, as by a child between its fork and its exec.
        let letting_go = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(100));
            drop(holder);
        });
        let second = lock_file(dir.path());
        lock_exclusive(&second, dir.path()).unwrap();
        letting_go.join().unwrap();
        // Kept: busy once the wait is over.
        let third = lock_file(dir.path());
        let started = std::time::Instant::now();
        let err = lock_exclusive(&third, dir.path()).unwrap_err();
        assert!(matches!(err, StoreError::Busy(_)), "{err}");
        assert!(started.elapsed() >= LOCK_WAIT);
    }
}
