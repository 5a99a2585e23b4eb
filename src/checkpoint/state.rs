//! What one path holds, as a checkpoint records it, and the `lstat` key
//! that says whether it may have changed since.

use std::fs::File;
use std::io;
use std::os::fd::BorrowedFd;
use std::os::unix::ffi::OsStrExt;

use rustix::fs::{AtFlags, FileType, Mode, OFlags, Stat};
use serde::{Deserialize, Serialize};

use super::store::Objects;

/// What a path held.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum State {
    /// Nothing.
    Absent,
    /// A regular file.
    File {
        /// The BLAKE3 of its bytes, the name of their copy in the store;
        /// `None` when its bytes were not kept (over the size limit, or the
        /// store full): recorded by metadata only.
        hash: Option<String>,
        /// Its size in bytes.
        size: u64,
        /// Its permission bits (`0o7777` at most).
        mode: u32,
    },
    /// A symbolic link.
    Symlink {
        /// Where it points, as written.
        target: String,
    },
    /// A directory.
    Dir {
        /// Its permission bits.
        mode: u32,
    },
}

impl State {
    /// Whether a rewind can put this state back: everything but a file
    /// whose bytes were not kept.
    pub fn restorable(&self) -> bool {
        !matches!(self, State::File { hash: None, .. })
    }

    /// Whether `self` (a state seen now) is what `recorded` says, for the
    /// conflict check: the same kind, bytes and mode. A file recorded by
    /// metadata only matches a file of the same size and mode.
    pub(crate) fn matches(&self, recorded: &State) -> bool {
        match (self, recorded) {
            (
                State::File {
                    hash: Some(a),
                    size: sa,
                    mode: ma,
                },
                State::File {
                    hash: Some(b),
                    size: sb,
                    mode: mb,
                },
            ) => a == b && sa == sb && ma == mb,
            (
                State::File {
                    size: sa, mode: ma, ..
                },
                State::File {
                    size: sb, mode: mb, ..
                },
            ) => sa == sb && ma == mb,
            (a, b) => a == b,
        }
    }
}

/// The `lstat` fields that change when a path's content, mode or identity
/// does: equal keys mean unchanged, unless the key was taken while the
/// file could still change within one timestamp tick ([`Known::racy`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct StatKey {
    pub(crate) dev: u64,
    pub(crate) ino: u64,
    pub(crate) mode: u32,
    pub(crate) size: u64,
    pub(crate) mtime_ns: i128,
    pub(crate) ctime_ns: i128,
}

impl StatKey {
    pub(crate) fn of(stat: &Stat) -> Self {
        Self {
            dev: stat.st_dev,
            ino: stat.st_ino,
            mode: stat.st_mode,
            size: stat.st_size as u64,
            mtime_ns: i128::from(stat.st_mtime) * 1_000_000_000 + i128::from(stat.st_mtime_nsec),
            ctime_ns: i128::from(stat.st_ctime) * 1_000_000_000 + i128::from(stat.st_ctime_nsec),
        }
    }
}

/// What the recorder last knew of a path.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Known {
    pub(crate) state: State,
    pub(crate) key: StatKey,
    /// The file changed within a timestamp tick of being read: a later
    /// change may keep the same key, so the next look reads it again (git's
    /// "racily clean" entries).
    #[serde(default)]
    pub(crate) racy: bool,
}

/// A change made less than this before it was read may share its
/// timestamps with a later change (a coarse clock tick is 4 ms; 50 ms
/// leaves room for a slow filesystem).
const RACY_NS: i128 = 50_000_000;

/// Nanoseconds since the epoch, now.
pub(crate) fn now_ns() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128)
}

/// What `name` in `dir` holds now, its bytes copied into `objects` when it
/// is a regular file of at most `max_file` bytes (and the store has room).
/// `Ok(None)` for a kind not recorded (FIFO, socket, device) or a name or
/// link target that is not UTF-8.
/// A file that changes between the look and the read is read again, up
/// to [`CAPTURE_TRIES`] times; one that changes every time (a process
/// writing it without pause) is an error, not an endless loop.
pub(crate) fn capture(
    dir: BorrowedFd<'_>,
    name: &std::ffi::OsStr,
    objects: &Objects,
    max_file: u64,
) -> io::Result<Option<Known>> {
    capture_tries(dir, name, objects, max_file, CAPTURE_TRIES)
}

/// How many times [`capture`] reads a file that keeps changing.
pub(crate) const CAPTURE_TRIES: u32 = 8;

fn capture_tries(
    dir: BorrowedFd<'_>,
    name: &std::ffi::OsStr,
    objects: &Objects,
    max_file: u64,
    tries: u32,
) -> io::Result<Option<Known>> {
    let again = || {
        if tries <= 1 {
            Err(io::Error::other(format!(
                "it changed each of the {CAPTURE_TRIES} times it was read (something keeps writing it)"
            )))
        } else {
            capture_tries(dir, name, objects, max_file, tries - 1)
        }
    };
    let stat = match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => stat,
        Err(rustix::io::Errno::NOENT) => {
            return Ok(Some(Known {
                state: State::Absent,
                key: StatKey::absent(),
                racy: false,
            }));
        }
        Err(e) => return Err(e.into()),
    };
    let started = now_ns();
    let key = StatKey::of(&stat);
    let perm = stat.st_mode & 0o7777;
    let state = match FileType::from_raw_mode(stat.st_mode) {
        FileType::Directory => State::Dir { mode: perm },
        FileType::Symlink => {
            let target = rustix::fs::readlinkat(dir, name, Vec::new())?;
            match target.into_string() {
                Ok(target) => State::Symlink { target },
                Err(_) => return Ok(None),
            }
        }
        FileType::RegularFile => {
            let fd = rustix::fs::openat(
                dir,
                name,
                OFlags::RDONLY
                    | OFlags::NOFOLLOW
                    | OFlags::NONBLOCK
                    | OFlags::CLOEXEC
                    | OFlags::NOCTTY,
                Mode::empty(),
            )?;
            let mut file = File::from(fd);
            let opened = rustix::fs::fstat(&file)?;
            if StatKey::of(&opened) != key {
                // Changed between the look and the open: looked at again.
                return again();
            }
            let hash = if key.size <= max_file {
                objects.put_file(&mut file, key.size)?
            } else {
                None
            };
            let after = rustix::fs::fstat(&file)?;
            if StatKey::of(&after) != key {
                return again();
            }
            State::File {
                hash,
                size: key.size,
                mode: perm,
            }
        }
        _ => return Ok(None),
    };
    let racy = started - key.mtime_ns.max(key.ctime_ns) < RACY_NS;
    Ok(Some(Known { state, key, racy }))
}

impl StatKey {
    /// The key of a path that holds nothing.
    pub(crate) fn absent() -> Self {
        Self {
            dev: 0,
            ino: 0,
            mode: 0,
            size: 0,
            mtime_ns: 0,
            ctime_ns: 0,
        }
    }
}

/// The `lstat` key of `name` in `dir` now; `None` when nothing is there.
pub(crate) fn key_at(dir: BorrowedFd<'_>, name: &std::ffi::OsStr) -> io::Result<Option<StatKey>> {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => Ok(Some(StatKey::of(&stat))),
        Err(rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Writes `bytes` to a new temporary file in `dir` with `mode` and renames
/// it over `name`: the path holds either its old content or the new one,
/// never a part. The rename replaces a symlink at `name` itself, never its
/// target. The temporary name is [`temp_name`] of rewind `id`, so a rewind
/// a crash cut off can remove what it left.
pub(crate) fn replace_file(
    dir: BorrowedFd<'_>,
    name: &std::ffi::OsStr,
    source: &mut File,
    mode: u32,
    id: u64,
) -> io::Result<()> {
    let temp = temp_name(name, id);
    let fd = rustix::fs::openat(
        dir,
        temp.as_os_str(),
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )?;
    let mut out = File::from(fd);
    let result = (|| {
        io::copy(source, &mut out)?;
        rustix::fs::fchmod(&out, Mode::from_raw_mode(mode & 0o7777))?;
        out.sync_all()?;
        rustix::fs::renameat(dir, temp.as_os_str(), dir, name)?;
        Ok(())
    })();
    if result.is_err() {
        let _ = rustix::fs::unlinkat(dir, temp.as_os_str(), AtFlags::empty());
    }
    result
}

/// A symlink `name -> target` in `dir`, replacing what is there (the
/// temporary name as in [`replace_file`]).
pub(crate) fn replace_symlink(
    dir: BorrowedFd<'_>,
    name: &std::ffi::OsStr,
    target: &str,
    id: u64,
) -> io::Result<()> {
    let temp = temp_name(name, id);
    rustix::fs::symlinkat(target, dir, temp.as_os_str())?;
    if let Err(e) = rustix::fs::renameat(dir, temp.as_os_str(), dir, name) {
        let _ = rustix::fs::unlinkat(dir, temp.as_os_str(), AtFlags::empty());
        return Err(e.into());
    }
    Ok(())
}

/// The temporary name beside `name` that rewind `id` writes before its
/// rename. It is created exclusively and without following links, so a
/// name planted there makes that path fail, never a write elsewhere.
pub(crate) fn temp_name(name: &std::ffi::OsStr, id: u64) -> std::ffi::OsString {
    let mut temp = std::ffi::OsString::from(".");
    let stem = name.as_bytes();
    temp.push(std::ffi::OsStr::from_bytes(&stem[..stem.len().min(64)]));
    temp.push(format!(".agentcore-rewind-{id}"));
    temp
}
