//! The session's output folder: where bash keeps the full output of commands
//! whose result was cut, so that `read` can page through it.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use tempfile::TempDir;

/// A temporary folder, one per session, holding the full output of commands.
///
/// Its total size is capped: when a new write would go over the cap, the
/// oldest files are removed first; a single output larger than the whole
/// cap keeps only its beginning. The folder and everything in it are removed
/// when the `OutputDir` is dropped (when the session ends).
///
/// ```
/// use agentcore::tools::bash::OutputDir;
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
}

impl OutputDir {
    /// The default cap on the folder's total size: 512 MiB.
    pub const DEFAULT_CAPACITY: u64 = 512 * 1024 * 1024;

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
        let dir = tempfile::Builder::new()
            .prefix("agentcore-output-")
            .tempdir_in(parent)?;
        Ok(Self {
            dir,
            capacity,
            ledger: Arc::default(),
        })
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

    /// Creates a new file named after `stem` (sanitized, made unique).
    pub(crate) fn create(&self, stem: &str) -> io::Result<OutputFile> {
        let mut ledger = lock(&self.ledger);
        let id = ledger.next_id;
        ledger.next_id += 1;
        let path = self.path().join(format!("{id:06}-{}.log", sanitize(stem)));
        let file = File::options().write(true).create_new(true).open(&path)?;
        ledger.files.push_back(Entry {
            id,
            path: path.clone(),
            size: 0,
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

#[cfg(test)]
mod tests {
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
