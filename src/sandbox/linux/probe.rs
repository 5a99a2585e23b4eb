//! The capability probe: Landlock's ABI version by syscall, and the
//! namespaces and seccomp by a trial in a forked child (a multithreaded
//! process cannot create a user namespace, and a filter cannot be undone).
#![allow(unsafe_code)] // fork and raw syscalls; each block says why it is sound.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;

use super::child::loopback_up;
use super::seccomp_arch;
use crate::sandbox::status::{Feature, SandboxStatus};

/// Landlock's ABI version, or why it is missing.
pub(super) fn landlock_abi() -> Result<u32, String> {
    // SAFETY: landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)
    // reads no memory.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32,
        )
    };
    if abi >= 1 {
        return Ok(abi as u32);
    }
    let error = io::Error::last_os_error();
    Err(match error.raw_os_error() {
        Some(libc::ENOSYS) => "kernel without CONFIG_SECURITY_LANDLOCK".to_owned(),
        Some(libc::EOPNOTSUPP) => {
            "built into the kernel but not enabled: add landlock to the lsm= boot parameter"
                .to_owned()
        }
        _ => format!("landlock_create_ruleset: {error}"),
    })
}

/// The trial's steps, in the order the child takes them; each slot of the
/// report is 0 (it worked) or the errno that stopped it.
const STEPS: [(Feature, &str); 5] = [
    (
        Feature::UserNamespace,
        "unshare(CLONE_NEWUSER) and its id maps",
    ),
    (
        Feature::MountNamespace,
        "a tmpfs and a read-only bind in a new mount namespace",
    ),
    (
        Feature::NetworkNamespace,
        "a network namespace with its loopback up",
    ),
    (
        Feature::PidNamespace,
        "/proc mounted by PID 1 of a new PID namespace",
    ),
    (Feature::Seccomp, "a seccomp filter"),
];

/// Probes the machine: what a sandbox built now would find.
pub(in crate::sandbox) fn probe() -> SandboxStatus {
    let mut status = SandboxStatus::all_present(0, seccomp_arch().unwrap_or("?"));
    match landlock_abi() {
        Ok(abi) => status = SandboxStatus::all_present(abi, seccomp_arch().unwrap_or("?")),
        Err(reason) => status.set_missing(Feature::Landlock, reason),
    }
    if seccomp_arch().is_none() {
        status.set_missing(
            Feature::Seccomp,
            format!("no filter for {}", std::env::consts::ARCH),
        );
    }
    match trial() {
        Ok(errors) => {
            for ((feature, step), error) in STEPS.iter().zip(errors) {
                if error != 0 {
                    let error = io::Error::from_raw_os_error(error);
                    status.set_missing(*feature, format!("{step}: {error}"));
                }
            }
        }
        Err(error) => {
            for (feature, _) in STEPS {
                status.set_missing(feature, format!("the trial fork failed: {error}"));
            }
        }
    }
    status
}

/// Forks a child that tries each step of [`STEPS`] and reports their
/// errnos over a pipe.
fn trial() -> io::Result<[i32; 5]> {
    let scratch = tempfile::Builder::new()
        .prefix("agentcore-sandbox-probe-")
        .tempdir()?;
    let tmpfs_dir = scratch.path().join("tmpfs");
    let ro_dir = scratch.path().join("ro");
    std::fs::create_dir(&tmpfs_dir)?;
    std::fs::create_dir(&ro_dir)?;
    let cstr = |p: &std::path::Path| {
        CString::new(p.as_os_str().as_bytes())
            .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
    };
    let tmpfs_dir = cstr(&tmpfs_dir)?;
    let ro_locked = super::locked_flags(&ro_dir);
    let ro_dir = cstr(&ro_dir)?;
    // SAFETY: geteuid/getegid have no arguments.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let uid_map = crate::sandbox::paths::id_map(uid, false).into_bytes();
    let gid_map = crate::sandbox::paths::id_map(gid, false).into_bytes();
    let filter = super::probe_filter();
    let mut report = [0; 2];
    // SAFETY: pipe2 fills the array.
    if unsafe { libc::pipe2(report.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the child runs `trial_child`, raw syscalls on data prepared
    // above, and leaves by `_exit`.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        let error = io::Error::last_os_error();
        // SAFETY: closing our own fds.
        unsafe {
            libc::close(report[0]);
            libc::close(report[1]);
        }
        return Err(error);
    }
    if pid == 0 {
        let errors = trial_child(
            &uid_map,
            &gid_map,
            &tmpfs_dir,
            &ro_dir,
            ro_locked,
            filter.as_ref(),
        );
        // SAFETY: a write of a local array, then _exit.
        unsafe {
            libc::write(
                report[1],
                errors.as_ptr().cast(),
                std::mem::size_of_val(&errors),
            );
            libc::_exit(0);
        }
    }
    let mut errors = [0i32; 5];
    // SAFETY: close our copy of the write end, read into a local array of
    // the size given, reap the child.
    let read = unsafe {
        libc::close(report[1]);
        let read = libc::read(
            report[0],
            errors.as_mut_ptr().cast(),
            std::mem::size_of_val(&errors),
        );
        libc::close(report[0]);
        let mut status = 0;
        while libc::waitpid(pid, &mut status, 0) < 0
            && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
        {}
        read
    };
    if read != std::mem::size_of_val(&errors) as isize {
        return Err(io::Error::other("the trial child reported nothing"));
    }
    Ok(errors)
}

fn last_errno() -> i32 {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EINVAL)
}

/// The trial, in the forked child.
fn trial_child(
    uid_map: &[u8],
    gid_map: &[u8],
    tmpfs_dir: &CString,
    ro_dir: &CString,
    ro_locked: libc::c_ulong,
    filter: Option<&seccompiler::BpfProgram>,
) -> [i32; 5] {
    let mut errors = [0; 5];
    let null = std::ptr::null::<libc::c_char>();
    // SAFETY: raw syscalls with NUL-terminated paths from the caller and C
    // literals; the forked G only mounts and exits.
    unsafe {
        let user = if libc::unshare(libc::CLONE_NEWUSER) < 0 {
            Err(last_errno())
        } else {
            super::child::write_own_maps(uid_map, gid_map)
                .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))
        };
        if let Err(error) = user {
            errors[..4].fill(error);
        } else {
            let mounts = (|| {
                if libc::unshare(libc::CLONE_NEWNS) < 0
                    || libc::mount(
                        null,
                        c"/".as_ptr(),
                        null,
                        libc::MS_REC | libc::MS_PRIVATE,
                        std::ptr::null(),
                    ) < 0
                    || libc::mount(
                        c"tmpfs".as_ptr(),
                        tmpfs_dir.as_ptr(),
                        c"tmpfs".as_ptr(),
                        libc::MS_NOSUID | libc::MS_NODEV,
                        c"size=16k".as_ptr().cast(),
                    ) < 0
                    || libc::mount(
                        ro_dir.as_ptr(),
                        ro_dir.as_ptr(),
                        null,
                        libc::MS_BIND,
                        std::ptr::null(),
                    ) < 0
                    || libc::mount(
                        null,
                        ro_dir.as_ptr(),
                        null,
                        libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | ro_locked,
                        std::ptr::null(),
                    ) < 0
                {
                    return last_errno();
                }
                0
            })();
            errors[1] = mounts;
            errors[2] = if libc::unshare(libc::CLONE_NEWNET) < 0 {
                last_errno()
            } else {
                loopback_up()
                    .err()
                    .and_then(|e| e.raw_os_error())
                    .map_or(0, |e| e.max(1))
            };
            errors[3] = if mounts != 0 {
                mounts
            } else if libc::unshare(libc::CLONE_NEWPID) < 0 {
                last_errno()
            } else {
                let init = libc::fork();
                if init < 0 {
                    last_errno()
                } else if init == 0 {
                    let r = libc::mount(
                        c"proc".as_ptr(),
                        c"/proc".as_ptr(),
                        c"proc".as_ptr(),
                        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                        std::ptr::null(),
                    );
                    libc::_exit(if r < 0 { last_errno().clamp(1, 255) } else { 0 });
                } else {
                    let mut status = 0;
                    while libc::waitpid(init, &mut status, 0) < 0 && last_errno() == libc::EINTR {}
                    if libc::WIFEXITED(status) {
                        libc::WEXITSTATUS(status)
                    } else {
                        libc::EINTR
                    }
                }
            };
        }
        errors[4] = match filter {
            None => libc::ENOSYS,
            Some(program) => match seccompiler::apply_filter(program) {
                Ok(()) => 0,
                Err(_) => libc::EINVAL,
            },
        };
    }
    errors
}
