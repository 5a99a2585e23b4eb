//! The namespaces and the mounts of a confined command, planned before
//! the fork (M makes them, [`super::child`]): which flags to unshare, the
//! id maps, the folders to hide, pin, bind and keep read-only or writable,
//! and, for kernels without `mount_setattr`, every mount point to remount
//! read-only.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::StatVfsMountFlags;
use rustix::mount::MountFlags;
use rustix::thread::UnshareFlags;

use super::super::paths::{self, Cover};
use super::super::{Inner, SandboxError};
use super::{child, cstring, sys};
use crate::sandbox::git_guard;

/// The mount flags a read-only remount of `path` must keep (a user
/// namespace may not clear them), from `statvfs`'s `ST_*` bits, which are
/// not the `MS_*` bits.
pub(super) fn locked_flags(path: &Path) -> MountFlags {
    let Ok(stat) = rustix::fs::statvfs(path) else {
        return MountFlags::empty();
    };
    let flags = stat.f_flag;
    let mut locked = MountFlags::empty();
    for (st, ms) in [
        (StatVfsMountFlags::NOSUID, MountFlags::NOSUID),
        (StatVfsMountFlags::NODEV, MountFlags::NODEV),
        (StatVfsMountFlags::NOEXEC, MountFlags::NOEXEC),
        (StatVfsMountFlags::NOATIME, MountFlags::NOATIME),
        (StatVfsMountFlags::NODIRATIME, MountFlags::NODIRATIME),
        (StatVfsMountFlags::RELATIME, MountFlags::RELATIME),
    ] {
        if flags.contains(st) {
            locked |= ms;
        }
    }
    locked
}

/// Whether the kernel has `mount_setattr` (Linux 5.12), asked once.
fn mount_setattr_exists() -> bool {
    static EXISTS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *EXISTS.get_or_init(sys::mount_setattr_exists)
}

/// Asks the kernel once for what later plans need ([`mount_setattr_exists`]).
pub(super) fn warm_up() {
    let _ = mount_setattr_exists();
}

/// `/` and every mount point of this process's tree (from
/// `/proc/self/mountinfo`), each with the flags a read-only remount must
/// keep: for kernels without `mount_setattr`.
fn listed_mount_points() -> Result<Vec<(CString, MountFlags)>, SandboxError> {
    let text = std::fs::read("/proc/self/mountinfo")?;
    let mut points = vec![(c"/".to_owned(), locked_flags(Path::new("/")))];
    for line in text.split(|b| *b == b'\n') {
        // The fifth field is the mount point, with octal escapes.
        let Some(field) = line.split(|b| *b == b' ').nth(4) else {
            continue;
        };
        let mut path = Vec::with_capacity(field.len());
        let mut i = 0;
        while i < field.len() {
            if field[i] == b'\\'
                && let Some(octal) = field.get(i + 1..i + 4)
                && let Ok(octal) = std::str::from_utf8(octal)
                && let Ok(byte) = u8::from_str_radix(octal, 8)
            {
                path.push(byte);
                i += 4;
            } else {
                path.push(field[i]);
                i += 1;
            }
        }
        let path = PathBuf::from(std::ffi::OsStr::from_bytes(&path));
        if path != Path::new("/") {
            let flags = locked_flags(&path);
            points.push((cstring(&path)?, flags));
        }
    }
    Ok(points)
}

/// The namespaces of a command and its mounts: `flags` are the namespaces
/// besides the user namespace (mount, PID, network); `writable` the
/// folders writable inside (the roots, the temporary directory and, with
/// `bind_shm`, the shm folder bound on `/dev/shm`). With a mount
/// namespace: the hidden folders and files (the policy's, and the other
/// sessions' own folders), the shm bind, the protected paths kept
/// read-only, the folders pinned under them, and the writable folders
/// bound read-write over a read-only tree (unless `/` itself is writable).
pub(super) fn namespaces(
    inner: &Inner,
    flags: UnshareFlags,
    writable: &[PathBuf],
    bind_shm: bool,
) -> Result<child::Namespaces, SandboxError> {
    let mounts = flags.contains(UnshareFlags::NEWNS);
    let shm = &inner.shm;
    let (uid, gid) = (rustix::process::geteuid(), rustix::process::getegid());
    let root = uid.is_root();
    let (uid, gid) = (uid.as_raw(), gid.as_raw());
    let mut hidden_dirs = Vec::new();
    let mut hidden_files = Vec::new();
    let mut binds = Vec::new();
    let mut read_only = Vec::new();
    let mut pins = Vec::new();
    if mounts {
        let own = super::super::fs_canonical(inner._tmpdir.path());
        let temp = super::super::fs_canonical(&std::env::temp_dir());
        let mut scan: Vec<&Path> = vec![&temp];
        // Usually the same folder: listed once.
        if let Some(parent) = own.parent()
            && parent != temp
        {
            scan.push(parent);
        }
        let mut all_hidden = inner.hidden.all().to_vec();
        all_hidden.extend(paths::other_sessions(&scan, &own));
        let covers = paths::existing(&all_hidden);
        // What lies in a hidden folder is hidden with it (and its mount
        // point is gone under the empty tmpfs).
        let dirs: Vec<PathBuf> = covers
            .iter()
            .filter_map(|c| match c {
                Cover::Dir(dir) => Some(dir.clone()),
                Cover::File(_) => None,
            })
            .collect();
        for cover in covers {
            let (Cover::Dir(path) | Cover::File(path)) = &cover;
            if dirs.iter().any(|d| d != path && path.starts_with(d)) {
                continue;
            }
            match cover {
                Cover::Dir(dir) => hidden_dirs.push(cstring(&dir)?),
                Cover::File(file) => hidden_files.push(cstring(&file)?),
            }
        }
        if bind_shm {
            binds.push((cstring(shm)?, c"/dev/shm".to_owned()));
        }
        let mut protected = inner.protected.clone();
        protected.extend(inner.nested.found());
        for root in &inner.protected_roots {
            protected.extend(paths::default_protected(root));
        }
        // A repository's `.git` folder: only what makes git run code is
        // read-only (git_guard.rs), so that commands can commit.
        let mut guarded = Vec::new();
        for cover in paths::existing(&protected) {
            match cover {
                Cover::Dir(dir) if dir.file_name() == Some(std::ffi::OsStr::new(".git")) => {
                    guarded.extend(git_guard::repository_guards(&dir));
                }
                Cover::Dir(path) | Cover::File(path) => guarded.push(path),
            }
        }
        for cover in paths::existing(&guarded) {
            let (Cover::Dir(path) | Cover::File(path)) = cover;
            read_only.push((cstring(&path)?, locked_flags(&path)));
        }
        let covered: Vec<&CString> = hidden_dirs
            .iter()
            .chain(&hidden_files)
            .chain(read_only.iter().map(|(path, _)| path))
            .collect();
        for dir in pins_for(&covered, writable) {
            pins.push(cstring(&dir)?);
        }
    }
    // Everything read-only but the roots and the temporary directory
    // (the shm folder is bound on /dev/shm instead); nothing when `/`
    // itself is a writable root.
    let mut writable_mounts = Vec::new();
    let mut mount_points = Vec::new();
    if mounts && !writable.iter().any(|w| w.as_path() == Path::new("/")) {
        for dir in inner.writable.iter().chain([&inner.tmp]) {
            writable_mounts.push(cstring(dir)?);
        }
        if writable_mounts.len() + binds.len() > child::MAX_WRITABLE_MOUNTS {
            return Err(SandboxError::Io(std::io::Error::other(format!(
                "more than {} writable roots; give fewer, or a folder that holds them",
                child::MAX_WRITABLE_MOUNTS - 2
            ))));
        }
        if !mount_setattr_exists() {
            mount_points = listed_mount_points()?;
        }
    }
    Ok(child::Namespaces {
        flags,
        shared: if flags.contains(UnshareFlags::NEWNET) {
            inner.session_net.clone()
        } else {
            None
        },
        uid_map: paths::id_map(uid, root).into_bytes(),
        gid_map: paths::id_map(gid, root).into_bytes(),
        root_helper: root,
        fallback_uid_map: paths::id_map(uid, false).into_bytes(),
        fallback_gid_map: paths::id_map(gid, false).into_bytes(),
        pins,
        hidden_dirs,
        hidden_files,
        binds,
        read_only,
        writable: writable_mounts,
        mount_points,
    })
}

/// The folders to pin for `covered` (hidden or protected paths): every
/// ancestor strictly inside a writable root, shallowest first, once.
fn pins_for(covered: &[&CString], writable: &[PathBuf]) -> Vec<PathBuf> {
    let mut pins: Vec<PathBuf> = Vec::new();
    for path in covered {
        let path = Path::new(std::ffi::OsStr::from_bytes(path.as_bytes()));
        let Some(root) = writable.iter().find(|root| path.starts_with(root)) else {
            continue;
        };
        let mut ancestors: Vec<&Path> = path
            .ancestors()
            .skip(1)
            .take_while(|a| *a != root.as_path() && a.starts_with(root))
            .collect();
        ancestors.reverse();
        for ancestor in ancestors {
            if !pins.iter().any(|p| p == ancestor) {
                pins.push(ancestor.to_path_buf());
            }
        }
    }
    pins.sort_by_key(|p| p.components().count());
    pins
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ancestors_of_covered_paths_inside_a_writable_root_are_pinned() {
        let c = |p: &str| CString::new(p).unwrap();
        let covered = [
            c("/w/config/secrets"),
            c("/w/a/b/.git"),
            c("/w/.git"),
            c("/h/.ssh"),
        ];
        let covered: Vec<&CString> = covered.iter().collect();
        let pins = pins_for(&covered, &["/w".into(), "/t".into()]);
        let expected: Vec<PathBuf> = ["/w/config", "/w/a", "/w/a/b"]
            .iter()
            .map(PathBuf::from)
            .collect();
        assert_eq!(pins, expected);
    }
}
