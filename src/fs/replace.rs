//! Writing a whole file so that a crash leaves the old or the new content,
//! never a mix, and so that the result the tool reports is what happened.
//!
//! Everything is done relative to the handle of the target's directory
//! (opened beneath the workspace root, see `beneath.rs`): the bytes go to
//! a temporary file created in that directory with the target's mode, are
//! flushed with fsync, and the temporary file is renamed over the target
//! (`renameat`); the directory is synced after.
//!
//! The rename is the point of no return. Right before it, [`commit`]
//! checks the call's cancellation (cancelled: the temporary file and any
//! directory it created are removed, nothing changed) and that the target
//! is still the file the tool based its new content on — same inode,
//! size, modification and change times, link count, and (when those could
//! hide a same-size write in the same clock tick) the same bytes. A file
//! that moved is not overwritten ([`CommitError::Moved`]). What remains is
//! the window between that recheck and the rename (microseconds): no
//! advisory lock binds other programs, so a neighbour's write landing in
//! it is lost. After the rename the old inode is looked at once more: if it
//! grew or was modified, the success carries a warning saying that a write
//! by another program is not in the new content. A new file is renamed in
//! with `RENAME_NOREPLACE`, so a file created meanwhile is never clobbered.
//!
//! An existing file must be writable by the process (it is opened for
//! writing first; refused otherwise). It is written in place instead of
//! replaced when it has several hard links (a rename would cut it off from
//! its other names; the workspace proved them all inside), or when the
//! process cannot give the new file the old one's owner (a rename would
//! change the owner). Set-user-ID and set-group-ID bits are not restored
//! on the new content.

use std::ffi::{OsStr, OsString};
use std::fs::{File, Metadata};
use std::io::{self, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, MetadataExt, PermissionsExt};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use rustix::fs::{
    AtFlags, Gid, Mode, OFlags, RenameFlags, Uid, fchown, openat, renameat, unlinkat,
};
use rustix::io::Errno;
use tokio_util::sync::CancellationToken;

use super::beneath::{self, Access, CreatedDirs, FileError};
use super::read_state::{MTIME_GRANULARITY, hash_open_file};

/// The file the tool based its new content on.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Base<'a> {
    /// A handle to it (opened beneath the root).
    pub(crate) file: &'a File,
    /// Its metadata when the tool looked at it.
    pub(crate) meta: &'a Metadata,
    /// XXH3-128 of the bytes the tool's decision was based on.
    pub(crate) hash: u128,
}

/// Why nothing was written.
#[derive(Debug)]
pub(crate) enum CommitError {
    /// The call was cancelled before the point of no return.
    Cancelled,
    /// The target changed (or appeared) since the tool looked at it.
    Moved,
    /// The file could not be opened or written (not writable, a FIFO, …).
    File(FileError),
}

impl From<io::Error> for CommitError {
    fn from(e: io::Error) -> Self {
        CommitError::File(FileError::Io(e))
    }
}

impl From<FileError> for CommitError {
    fn from(e: FileError) -> Self {
        CommitError::File(e)
    }
}

/// How the content was put in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum How {
    /// Temporary file renamed over the target (or a new file).
    Replaced,
    /// Overwritten in place because the file has several hard links.
    InPlaceForLinks,
    /// Overwritten in place because the new file could not be given the
    /// old one's owner.
    InPlaceForOwner {
        /// The owner kept.
        uid: u32,
        /// The group kept.
        gid: u32,
    },
}

/// Added to a success when another program wrote to the old file between
/// the last check and the rename.
pub(crate) const RACED_NOTE: &str = "Warning: another program wrote to the file while it was being replaced; that write is not in the new content. Read the file again to see what it holds now.";

/// What [`commit`] did.
#[derive(Debug)]
pub(crate) struct Written {
    /// The written file's metadata, taken from the handle the bytes went
    /// through (so a ledger stamp made from it describes this content).
    pub(crate) meta: Metadata,
    /// How it was written.
    pub(crate) how: How,
    /// True when the replaced file was written to by someone else after
    /// the last check (a writer that had it open): that write is not in
    /// the new content.
    pub(crate) raced: bool,
}

impl Written {
    /// A sentence to add to the success text, when the write was unusual.
    pub(crate) fn note(&self) -> Option<String> {
        let how = match self.how {
            How::InPlaceForOwner { uid, gid } => Some(format!(
                "(Written in place, not atomically, to keep its owner uid {uid} and group gid {gid}: this process cannot give a new file that owner.)"
            )),
            How::Replaced | How::InPlaceForLinks => None,
        };
        let raced = self.raced.then_some(RACED_NOTE.to_owned());
        match (how, raced) {
            (Some(a), Some(b)) => Some(format!("{a} {b}")),
            (a, b) => a.or(b),
        }
    }
}

/// Writes `bytes` as the file `name` in `dir`. `base` is the existing file
/// the content was made from (`None` for a new file); `created` are the
/// directories made for a new file, removed again if nothing is written.
/// See the module documentation for the guarantees.
pub(crate) fn commit(
    dir: &OwnedFd,
    name: &OsStr,
    base: Option<Base<'_>>,
    bytes: &[u8],
    token: &CancellationToken,
    created: CreatedDirs,
) -> Result<Written, CommitError> {
    let result = commit_inner(dir, name, base, bytes, token);
    if result.is_err() {
        created.undo();
    }
    result
}

fn commit_inner(
    dir: &OwnedFd,
    name: &OsStr,
    base: Option<Base<'_>>,
    bytes: &[u8],
    token: &CancellationToken,
) -> Result<Written, CommitError> {
    if token.is_cancelled() {
        return Err(CommitError::Cancelled);
    }
    let Some(base) = base else {
        return replace(dir, name, None, bytes, token);
    };
    // Writable by this process? Opening for writing (without truncating)
    // is the kernel's own answer, for root and others alike.
    let writable = beneath::open_file_at(dir.as_fd(), name, Access::Write)?;
    let now = writable.metadata()?;
    if (now.dev(), now.ino()) != (base.meta.dev(), base.meta.ino()) {
        return Err(CommitError::Moved);
    }
    if base.meta.nlink() > 1 {
        return in_place(
            dir,
            name,
            base,
            &writable,
            bytes,
            token,
            How::InPlaceForLinks,
        );
    }
    match replace(dir, name, Some(base), bytes, token) {
        Err(CommitError::File(FileError::NotWritable { .. })) => {
            let how = How::InPlaceForOwner {
                uid: base.meta.uid(),
                gid: base.meta.gid(),
            };
            in_place(dir, name, base, &writable, bytes, token, how)
        }
        other => other,
    }
}

/// The last look before the point of no return: cancelled, or the target
/// is no longer the base (or, for a new file, something appeared).
fn recheck(
    dir: &OwnedFd,
    name: &OsStr,
    base: Option<Base<'_>>,
    token: &CancellationToken,
) -> Result<(), CommitError> {
    if token.is_cancelled() {
        return Err(CommitError::Cancelled);
    }
    // Equal times can hide a same-size write in the same clock tick: while
    // the base's change time is that recent, compare its bytes. Done first,
    // so that the metadata comparison below is the last step before the
    // rename and the window left is as short as it can be.
    if let Some(base) = base
        && is_recent(base.meta.ctime(), base.meta.ctime_nsec())
        && hash_open_file(base.file)?.0 != base.hash
    {
        return Err(CommitError::Moved);
    }
    if token.is_cancelled() {
        return Err(CommitError::Cancelled);
    }
    let now = beneath::stat_at(dir.as_fd(), name)?;
    match (base, now) {
        (None, None) => Ok(()),
        (None, Some(_)) | (Some(_), None) => Err(CommitError::Moved),
        (Some(base), Some(st)) => {
            let m = base.meta;
            // The stat fields' widths differ between architectures.
            #[allow(clippy::unnecessary_cast)]
            let same = (st.st_dev as u64, st.st_ino as u64) == (m.dev(), m.ino())
                && st.st_size as u64 == m.len()
                && (st.st_mtime as i64, st.st_mtime_nsec as i64) == (m.mtime(), m.mtime_nsec())
                && (st.st_ctime as i64, st.st_ctime_nsec as i64) == (m.ctime(), m.ctime_nsec())
                && st.st_nlink as u64 == m.nlink();
            if same {
                Ok(())
            } else {
                Err(CommitError::Moved)
            }
        }
    }
}

fn is_recent(secs: i64, nsecs: i64) -> bool {
    let Ok(secs) = u64::try_from(secs) else {
        return true;
    };
    let then = SystemTime::UNIX_EPOCH + Duration::new(secs, nsecs.clamp(0, 999_999_999) as u32);
    then.checked_add(MTIME_GRANULARITY)
        .is_none_or(|limit| limit >= SystemTime::now())
}

/// Overwrites the file's own inode through `writable`, so that all its
/// names see the new content. Not atomic: the price of keeping the links
/// (or the owner).
fn in_place(
    dir: &OwnedFd,
    name: &OsStr,
    base: Base<'_>,
    writable: &File,
    bytes: &[u8],
    token: &CancellationToken,
    how: How,
) -> Result<Written, CommitError> {
    recheck(dir, name, Some(base), token)?;
    // The point of no return: from here the call completes.
    writable.write_all_at(bytes, 0)?;
    writable.set_len(bytes.len() as u64)?;
    drop_set_id_bits(writable, base.meta.permissions().mode())?;
    writable.sync_all()?;
    Ok(Written {
        meta: writable.metadata()?,
        how,
        raced: false,
    })
}

/// Temporary file, fsync, recheck, rename.
fn replace(
    dir: &OwnedFd,
    name: &OsStr,
    base: Option<Base<'_>>,
    bytes: &[u8],
    token: &CancellationToken,
) -> Result<Written, CommitError> {
    let mode = base.map_or(0o666, |b| b.meta.permissions().mode() & 0o777);
    let (mut file, temp) = create_temp(dir, name, mode)?;
    let guard = RemoveOnDrop {
        dir,
        name: Some(temp),
    };
    if let Some(base) = base {
        keep_owner_and_mode(&file, base.meta)?;
    }
    file.write_all(bytes)?;
    file.sync_all()?;
    let meta = file.metadata()?;
    drop(file);
    recheck(dir, name, base, token)?;
    let temp = guard.disarm();
    // The point of no return.
    let renamed = match base {
        Some(_) => renameat(dir, temp.as_os_str(), dir, name),
        // A file created since the recheck is not clobbered.
        None => match rustix::fs::renameat_with(
            dir,
            temp.as_os_str(),
            dir,
            name,
            RenameFlags::NOREPLACE,
        ) {
            Err(Errno::INVAL) => renameat(dir, temp.as_os_str(), dir, name),
            other => other,
        },
    };
    if let Err(e) = renamed {
        let _ = unlinkat(dir, temp.as_os_str(), AtFlags::empty());
        return Err(match e {
            Errno::EXIST => CommitError::Moved,
            e => CommitError::from(io::Error::from(e)),
        });
    }
    // Make the rename itself durable; not every filesystem allows it.
    let _ = rustix::fs::fsync(dir);
    // A writer that had the old file open may have written to it after the
    // recheck: too late to refuse, but not too late to say so. (Its change
    // time moves with the unlink itself; size and mtime only with writes.)
    let raced = base.is_some_and(|b| {
        b.file.metadata().is_ok_and(|old| {
            old.len() != b.meta.len()
                || (old.mtime(), old.mtime_nsec()) != (b.meta.mtime(), b.meta.mtime_nsec())
        })
    });
    Ok(Written {
        meta,
        how: How::Replaced,
        raced,
    })
}

/// A new file in `dir`, named after `name`, created exclusively (never
/// through a link) with `mode` (less the umask).
fn create_temp(dir: &OwnedFd, name: &OsStr, mode: u32) -> io::Result<(File, OsString)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    // Keep the temporary name within the 255-byte limit of one name.
    let stem: String = String::from_utf8_lossy(name.as_bytes())
        .chars()
        .take(100)
        .collect();
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let temp = OsString::from(format!(".{stem}.{}.{n}.agentcore.tmp", std::process::id()));
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        match openat(dir, temp.as_os_str(), flags, Mode::from_bits_truncate(mode)) {
            Ok(fd) => return Ok((File::from(fd), temp)),
            Err(Errno::EXIST) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// Gives the temporary file the old file's owner and group, or fails with
/// [`FileError::NotWritable`]-style refusal so the caller writes in place
/// instead (a rename must never change a file's owner); then its mode,
/// without set-user-ID and set-group-ID bits.
fn keep_owner_and_mode(file: &File, meta: &Metadata) -> Result<(), CommitError> {
    let now = file.metadata()?;
    if (now.uid() != meta.uid() || now.gid() != meta.gid())
        && let Err(e) = fchown(
            file,
            Some(Uid::from_raw(meta.uid())),
            Some(Gid::from_raw(meta.gid())),
        )
    {
        return Err(CommitError::File(FileError::NotWritable {
            mode: meta.permissions().mode() & 0o7777,
            uid: meta.uid(),
            reason: e.into(),
        }));
    }
    // After chown (which clears set-id bits), and without the umask.
    let mode = meta.permissions().mode() & 0o1777;
    file.set_permissions(std::fs::Permissions::from_mode(mode))?;
    Ok(())
}

/// A content change does not keep set-user-ID or set-group-ID bits (the
/// kernel clears them for other users; root is treated the same).
fn drop_set_id_bits(file: &File, mode: u32) -> io::Result<()> {
    if mode & 0o6000 != 0 {
        file.set_permissions(std::fs::Permissions::from_mode(mode & 0o1777))?;
    }
    Ok(())
}

/// Removes the temporary file if the write stops before the rename.
struct RemoveOnDrop<'a> {
    dir: &'a OwnedFd,
    name: Option<OsString>,
}

impl RemoveOnDrop<'_> {
    fn disarm(mut self) -> OsString {
        self.name.take().unwrap_or_default()
    }
}

impl Drop for RemoveOnDrop<'_> {
    fn drop(&mut self) {
        if let Some(name) = self.name.take() {
            let _ = unlinkat(self.dir, name.as_os_str(), AtFlags::empty());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::path::Path;

    fn open(dir: &Path) -> OwnedFd {
        beneath::open_root(dir).unwrap()
    }

    fn base_of(dir: &OwnedFd, name: &str) -> (File, Metadata, u128) {
        let file = beneath::open_file_at(dir.as_fd(), OsStr::new(name), Access::Read).unwrap();
        let meta = file.metadata().unwrap();
        let hash = hash_open_file(&file).unwrap().0;
        (file, meta, hash)
    }

    fn write(dir: &OwnedFd, name: &str, bytes: &[u8]) -> Result<Written, CommitError> {
        let token = CancellationToken::new();
        let existing = beneath::stat_at(dir.as_fd(), OsStr::new(name)).unwrap();
        let parts = existing.map(|_| base_of(dir, name));
        let base = parts.as_ref().map(|(file, meta, hash)| Base {
            file,
            meta,
            hash: *hash,
        });
        commit(
            dir,
            OsStr::new(name),
            base,
            bytes,
            &token,
            CreatedDirs::default(),
        )
    }

    /// A directory holding `name` with content "old" and `mode`.
    fn file_with_mode(name: &str, mode: u32) -> (tempfile::TempDir, std::path::PathBuf, OwnedFd) {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(name);
        fs::write(&path, "old").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
        let dir = open(tmp.path());
        (tmp, path, dir)
    }

    #[test]
    fn replaces_keeps_mode_and_leaves_no_temp_file() {
        let (tmp, path, dir) = file_with_mode("f.sh", 0o751);
        let w = write(&dir, "f.sh", b"new").unwrap();
        assert_eq!(w.how, How::Replaced);
        assert_eq!(fs::read(&path).unwrap(), b"new");
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o751);
        assert_eq!(fs::read_dir(tmp.path()).unwrap().count(), 1);
    }

    #[test]
    fn hard_links_are_written_in_place() {
        let tmp = tempfile::tempdir().unwrap();
        let a = tmp.path().join("a");
        let b = tmp.path().join("b");
        fs::write(&a, "old content").unwrap();
        fs::hard_link(&a, &b).unwrap();
        let dir = open(tmp.path());
        let w = write(&dir, "a", b"new").unwrap();
        assert_eq!(w.how, How::InPlaceForLinks);
        assert_eq!(fs::read(&b).unwrap(), b"new");
    }

    #[test]
    fn a_new_file_is_not_clobbered_and_a_moved_file_is_not_overwritten() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = open(tmp.path());
        fs::write(tmp.path().join("f"), "v1").unwrap();
        let (file, meta, hash) = base_of(&dir, "f");
        // A neighbour appends after the tool looked.
        fs::write(tmp.path().join("f"), "v1 and more").unwrap();
        let base = Base {
            file: &file,
            meta: &meta,
            hash,
        };
        let token = CancellationToken::new();
        let got = commit(
            &dir,
            OsStr::new("f"),
            Some(base),
            b"x",
            &token,
            CreatedDirs::default(),
        );
        assert!(matches!(got, Err(CommitError::Moved)), "{got:?}");
        assert_eq!(fs::read(tmp.path().join("f")).unwrap(), b"v1 and more");
        // Appeared meanwhile: the new-file write does not replace it.
        let got = commit(
            &dir,
            OsStr::new("f"),
            None,
            b"x",
            &token,
            CreatedDirs::default(),
        );
        assert!(matches!(got, Err(CommitError::Moved)), "{got:?}");
        assert_eq!(fs::read_dir(tmp.path()).unwrap().count(), 1);
    }

    #[test]
    fn cancelled_before_the_rename_changes_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let root = open(tmp.path());
        let (dir, created) = beneath::create_dirs(root.as_fd(), Path::new("x/y")).unwrap();
        let token = CancellationToken::new();
        token.cancel();
        let got = commit(&dir, OsStr::new("f"), None, b"x", &token, created);
        assert!(matches!(got, Err(CommitError::Cancelled)));
        assert_eq!(fs::read_dir(tmp.path()).unwrap().count(), 0);
    }

    #[test]
    fn set_id_bits_are_not_restored() {
        let (_tmp, path, dir) = file_with_mode("tool", 0o6755);
        write(&dir, "tool", b"new").unwrap();
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o755);
    }
}
