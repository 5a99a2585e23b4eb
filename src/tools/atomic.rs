//! Writing a whole file so that a crash leaves the old or the new content,
//! never a mix.
//!
//! The bytes go to a temporary file in the target's directory (created
//! with the target's mode), are flushed with fsync, and the temporary file
//! is renamed over the target; the directory is synced after. Mode and,
//! where the process may, owner are carried over. A file with several hard
//! links is written in place instead: a rename would cut it off from its
//! other names. The last component is never followed if it is (or became)
//! a symbolic link: the rename replaces the link itself, the in-place write
//! opens with `O_NOFOLLOW`.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Writes `bytes` to `path` (canonical), creating missing parent
/// directories.
pub(crate) fn write_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no parent"))?;
    let existing = match fs::symlink_metadata(path) {
        Ok(meta) => Some(meta),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    match existing {
        Some(meta) if meta.file_type().is_symlink() => Err(io::Error::other(
            "the file was replaced by a symbolic link after it was checked",
        )),
        Some(meta) if !meta.is_file() => Err(io::Error::other("not a regular file")),
        Some(meta) if links(&meta) > 1 => write_in_place(path, bytes),
        Some(meta) => replace(path, dir, bytes, Some(&meta)),
        None => {
            fs::create_dir_all(dir)?;
            replace(path, dir, bytes, None)
        }
    }
}

/// Overwrites the file's own inode, so that all its hard links see the new
/// content. Not atomic: the price of keeping the links.
fn write_in_place(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW);
    }
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.set_len(bytes.len() as u64)?;
    file.sync_all()
}

/// Temporary file, fsync, rename.
fn replace(path: &Path, dir: &Path, bytes: &[u8], old: Option<&fs::Metadata>) -> io::Result<()> {
    let (mut file, temp) = create_temp(path, dir, old)?;
    let guard = RemoveOnDrop(Some(temp));
    if let Some(meta) = old {
        keep_owner_and_mode(&file, meta)?;
    }
    file.write_all(bytes)?;
    file.sync_all()?;
    drop(file);
    let temp = guard.disarm();
    if let Err(e) = fs::rename(&temp, path) {
        let _ = fs::remove_file(&temp);
        return Err(e);
    }
    // Make the rename itself durable; not every filesystem allows it.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// A new file beside `path`, named after it, created exclusively with the
/// old file's permission bits (or the usual 0666 less umask for a new one).
fn create_temp(path: &Path, dir: &Path, old: Option<&fs::Metadata>) -> io::Result<(File, PathBuf)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Keep the temporary name within the 255-byte limit of one name.
    let stem: String = name.chars().take(100).collect();
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let temp = dir.join(format!(".{stem}.{}.{n}.agentcore.tmp", std::process::id()));
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
            let mode = old.map_or(0o666, |m| m.permissions().mode() & 0o777);
            options.mode(mode).custom_flags(libc::O_NOFOLLOW);
        }
        match options.open(&temp) {
            Ok(file) => return Ok((file, temp)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

#[cfg(unix)]
fn keep_owner_and_mode(file: &File, meta: &fs::Metadata) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let now = file.metadata()?;
    if now.uid() != meta.uid() || now.gid() != meta.gid() {
        // Only root may give a file away; others keep their own ownership
        // (and a group change may be refused): best effort, as tools.md says.
        let _ = std::os::unix::fs::fchown(file, Some(meta.uid()), Some(meta.gid()));
    }
    // After chown, which clears set-id bits; and without the umask.
    file.set_permissions(meta.permissions())
}

#[cfg(not(unix))]
fn keep_owner_and_mode(file: &File, meta: &fs::Metadata) -> io::Result<()> {
    file.set_permissions(meta.permissions())
}

#[cfg(unix)]
fn links(meta: &fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    meta.nlink()
}

#[cfg(not(unix))]
fn links(_meta: &fs::Metadata) -> u64 {
    1
}

/// Removes the temporary file if the write fails half-way.
struct RemoveOnDrop(Option<PathBuf>);

impl RemoveOnDrop {
    fn disarm(mut self) -> PathBuf {
        self.0.take().unwrap_or_default()
    }
}

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        if let Some(path) = self.0.take() {
            let _ = fs::remove_file(path);
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn replaces_keeps_mode_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.sh");
        fs::write(&path, "old").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o751)).unwrap();
        write_file(&path, b"new").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o751);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn hard_links_are_written_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        fs::write(&a, "old content").unwrap();
        fs::hard_link(&a, &b).unwrap();
        write_file(&a, b"new").unwrap();
        assert_eq!(fs::read(&b).unwrap(), b"new");
    }

    #[test]
    fn creates_parents_and_refuses_a_swapped_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x/y/z.txt");
        write_file(&path, b"hi").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"hi");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert!(write_file(&link, b"evil").is_err());
        assert_eq!(fs::read(&path).unwrap(), b"hi");
    }
}
