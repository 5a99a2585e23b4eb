//! M's mounts, in its private copy of the mount tree.

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsFd, OwnedFd};

use rustix::fs::{CWD, Mode, OFlags};
use rustix::io::Errno;
use rustix::mount::{MountFlags, MountPropagationFlags, MoveMountFlags, OpenTreeFlags};

use super::super::sys;
use super::{MAX_WRITABLE_MOUNTS, Namespaces, Step};

/// `mount_setattr`'s `AT_RECURSIVE` and `AT_EMPTY_PATH`.
const AT_RECURSIVE: u32 = 0x8000;
const AT_EMPTY_PATH: u32 = 0x1000;
const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NOSUID: u64 = 0x2;

/// The flags of the tmpfs over a hidden folder (and of an empty
/// `/dev/pts`).
const TMPFS_FLAGS: MountFlags = MountFlags::NOSUID
    .union(MountFlags::NODEV)
    .union(MountFlags::NOEXEC);

/// The mounts, in a private copy of the mount tree: hidden directories
/// under an empty tmpfs, hidden files under `/dev/null`, the plain binds,
/// then the read-only binds (their remount keeps the locked flags, or a
/// user namespace gets EPERM).
pub(super) fn mount_all(ns: &Namespaces) -> Result<(), (Step, usize, io::Error)> {
    let fail = |step: Step, index: usize| move |e: Errno| (step, index, io::Error::from(e));
    rustix::mount::mount_change(
        c"/",
        MountPropagationFlags::REC | MountPropagationFlags::PRIVATE,
    )
    .map_err(fail(Step::PrivateMounts, 0))?;
    read_only_tree(ns)?;
    // Terminals of its own: a fresh devpts instance, so that the user's
    // terminals (/dev/pts/N) can be neither written (escape sequences,
    // fake prompts) nor read; an empty /dev/pts if the kernel refuses one.
    let devpts = rustix::mount::mount(
        c"devpts",
        c"/dev/pts",
        c"devpts",
        MountFlags::NOSUID | MountFlags::NOEXEC,
        c"newinstance,ptmxmode=0666,mode=0620",
    );
    if devpts.is_ok() {
        rustix::mount::mount_bind(c"/dev/pts/ptmx", c"/dev/ptmx")
            .map_err(fail(Step::PrivateMounts, 1))?;
    } else {
        rustix::mount::mount(
            c"tmpfs",
            c"/dev/pts",
            c"tmpfs",
            TMPFS_FLAGS,
            c"mode=0755,size=16k",
        )
        .map_err(fail(Step::PrivateMounts, 1))?;
    }
    for (index, dir) in ns.pins.iter().enumerate() {
        rustix::mount::mount_bind(dir.as_c_str(), dir.as_c_str())
            .map_err(fail(Step::Pin, index))?;
    }
    for (index, dir) in ns.hidden_dirs.iter().enumerate() {
        // A path gone since the plan (another session's folder removed
        // meanwhile) has nothing left to hide.
        skip_if_gone(rustix::mount::mount(
            c"tmpfs",
            dir.as_c_str(),
            c"tmpfs",
            TMPFS_FLAGS,
            c"mode=0755,size=16k",
        ))
        .map_err(fail(Step::HiddenDir, index))?;
    }
    for (index, file) in ns.hidden_files.iter().enumerate() {
        skip_if_gone(rustix::mount::mount_bind(c"/dev/null", file.as_c_str()))
            .map_err(fail(Step::HiddenFile, index))?;
    }
    for (index, (path, locked)) in ns.read_only.iter().enumerate() {
        rustix::mount::mount_bind_recursive(path.as_c_str(), path.as_c_str())
            .map_err(fail(Step::ReadOnly, index))?;
        sys::remount_read_only(path, *locked).map_err(|e| (Step::ReadOnly, index, e))?;
    }
    Ok(())
}

/// `ENOENT` taken for success.
fn skip_if_gone(result: rustix::io::Result<()>) -> rustix::io::Result<()> {
    match result {
        Err(Errno::NOENT) => Ok(()),
        other => other,
    }
}

/// Makes every mount of the tree read-only, but the writable folders and
/// the binds: each is cloned first (`open_tree`, recursive, as it is: read-
/// write), then every mount is made read-only (`mount_setattr`, recursive:
/// `chmod`, `chown`, `utimes`, `setxattr` outside the writable roots get
/// `EROFS`, which Landlock does not govern), then each clone, made
/// `nosuid`, is moved over its place. A writable folder is opened without
/// following a symbolic link: one swapped for a link stays read-only.
/// Without `open_tree` (before Linux 5.2) the binds are plain and nothing
/// is made read-only; without `mount_setattr` (before 5.12) each mount
/// point the parent listed is remounted read-only.
fn read_only_tree(ns: &Namespaces) -> Result<(), (Step, usize, io::Error)> {
    // Descriptors on the stack, closed when dropped (on every way out).
    let mut trees: [Option<OwnedFd>; MAX_WRITABLE_MOUNTS] = [const { None }; MAX_WRITABLE_MOUNTS];
    let mut places: [Option<OwnedFd>; MAX_WRITABLE_MOUNTS] = [const { None }; MAX_WRITABLE_MOUNTS];
    let count = (ns.writable.len() + ns.binds.len()).min(MAX_WRITABLE_MOUNTS);
    let dir_flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let open_dir = |path: &CStr| rustix::fs::open(path, dir_flags, Mode::empty());
    for i in 0..count {
        let (source, target, step, index) = match ns.writable.get(i) {
            Some(dir) => (dir, dir, Step::Writable, i),
            None => {
                let index = i - ns.writable.len();
                let (source, target) = &ns.binds[index];
                (source, target, Step::Bind, index)
            }
        };
        let place = match open_dir(target.as_c_str()) {
            Ok(place) => place,
            // Gone, or no longer a directory: it stays read-only.
            Err(_) if step == Step::Writable => continue,
            Err(e) => return Err((step, index, e.into())),
        };
        let tree = if std::ptr::eq(source, target) {
            open_tree(place.as_fd())
        } else {
            match open_dir(source.as_c_str()) {
                Ok(from) => open_tree(from.as_fd()),
                Err(e) => return Err((step, index, e.into())),
            }
        };
        match tree {
            Ok(tree) => {
                trees[i] = Some(tree);
                places[i] = Some(place);
            }
            Err(Errno::NOSYS) => {
                drop((place, trees, places));
                return plain_binds(ns);
            }
            Err(e) => return Err((step, index, e.into())),
        }
    }
    let read_only = match sys::mount_setattr(CWD, c"/", AT_RECURSIVE, MOUNT_ATTR_RDONLY) {
        Err(e) if e.raw_os_error() == Some(Errno::NOSYS.raw_os_error()) => {
            remount_each_read_only(ns)
        }
        other => other,
    };
    if let Err(error) = read_only {
        return Err((Step::ReadOnlyRoot, 0, error));
    }
    for i in 0..count {
        let (Some(tree), Some(place)) = (&trees[i], &places[i]) else {
            continue;
        };
        let step = if i < ns.writable.len() {
            (Step::Writable, i)
        } else {
            (Step::Bind, i - ns.writable.len())
        };
        let moved = sys::mount_setattr(
            tree.as_fd(),
            c"",
            AT_RECURSIVE | AT_EMPTY_PATH,
            MOUNT_ATTR_NOSUID,
        )
        .and_then(|()| {
            rustix::mount::move_mount(
                tree.as_fd(),
                c"",
                place.as_fd(),
                c"",
                MoveMountFlags::MOVE_MOUNT_F_EMPTY_PATH | MoveMountFlags::MOVE_MOUNT_T_EMPTY_PATH,
            )
            .map_err(io::Error::from)
        });
        if let Err(error) = moved {
            return Err((step.0, step.1, error));
        }
    }
    Ok(())
}

/// A recursive clone of the mount tree at `from`, detached.
fn open_tree(from: std::os::fd::BorrowedFd<'_>) -> rustix::io::Result<OwnedFd> {
    rustix::mount::open_tree(
        from,
        c"",
        OpenTreeFlags::OPEN_TREE_CLONE
            | OpenTreeFlags::AT_RECURSIVE
            | OpenTreeFlags::AT_EMPTY_PATH
            | OpenTreeFlags::OPEN_TREE_CLOEXEC,
    )
}

/// Without `mount_setattr`: `/` and each mount point the parent listed
/// remounted read-only with its locked flags; `/` must give way, a mount
/// point that is gone or refuses is left as it is.
fn remount_each_read_only(ns: &Namespaces) -> io::Result<()> {
    for (index, (path, locked)) in ns.mount_points.iter().enumerate() {
        let result = sys::remount_read_only(path, *locked);
        if index == 0 {
            result?;
        }
    }
    Ok(())
}

/// Before Linux 5.2: the binds of the plan as plain binds, nothing
/// read-only.
fn plain_binds(ns: &Namespaces) -> Result<(), (Step, usize, io::Error)> {
    for (index, (source, target)) in ns.binds.iter().enumerate() {
        rustix::mount::mount_bind(source.as_c_str(), target.as_c_str())
            .map_err(|e| (Step::Bind, index, e.into()))?;
    }
    Ok(())
}
