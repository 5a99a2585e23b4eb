//! The capability probe: Landlock's ABI version by syscall, and the
//! namespaces and seccomp by a trial in a forked child (a multithreaded
//! process cannot create a user namespace, and a filter cannot be undone).
#![allow(unsafe_code)] // the fork of the trial child; each block says why it is sound.

use std::ffi::{CStr, CString};
use std::io;
use std::os::unix::ffi::OsStrExt;

use rustix::io::Errno;
use rustix::mount::{MountFlags, MountPropagationFlags};
use rustix::pipe::{PipeFlags, pipe_with};
use rustix::process::WaitOptions;
use rustix::thread::UnshareFlags;

use super::child::loopback_up;
use super::seccomp::seccomp_arch;
use super::sys;
use crate::sandbox::status::{Feature, SandboxStatus};

/// Landlock's ABI version, or why it is missing.
pub(super) fn landlock_abi() -> Result<u32, String> {
    let error = match sys::landlock_abi() {
        Ok(abi) => return Ok(abi),
        Err(error) => error,
    };
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
    // Named after this process (`agentcore-sandbox-PID-START-probe-`), so
    // that a later start removes it if this process ends mid-probe.
    let prefix = format!(
        "{}probe-",
        crate::process::owned_prefix(crate::process::SANDBOX_PREFIX)
    );
    let scratch = tempfile::Builder::new().prefix(&prefix).tempdir()?;
    let tmpfs_dir = scratch.path().join("tmpfs");
    let ro_dir = scratch.path().join("ro");
    std::fs::create_dir(&tmpfs_dir)?;
    std::fs::create_dir(&ro_dir)?;
    let cstr = |p: &std::path::Path| {
        CString::new(p.as_os_str().as_bytes())
            .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
    };
    let tmpfs_dir = cstr(&tmpfs_dir)?;
    let ro_locked = super::mounts::locked_flags(&ro_dir);
    let ro_dir = cstr(&ro_dir)?;
    let (uid, gid) = (rustix::process::geteuid(), rustix::process::getegid());
    let uid_map = crate::sandbox::paths::id_map(uid.as_raw(), false).into_bytes();
    let gid_map = crate::sandbox::paths::id_map(gid.as_raw(), false).into_bytes();
    let filter = super::seccomp::probe_filter();
    let (report_read, report_write) = pipe_with(PipeFlags::CLOEXEC)?;
    // SAFETY: the child runs `trial_child`, async-signal-safe calls on the
    // data prepared above, writes its report and leaves by `_exit`.
    let pid = unsafe { sys::fork() }?;
    let Some(pid) = pid else {
        // SAFETY: this is the child just forked.
        let errors = unsafe {
            trial_child(
                &uid_map,
                &gid_map,
                &tmpfs_dir,
                &ro_dir,
                ro_locked,
                filter.as_ref(),
            )
        };
        let mut bytes = [0u8; 20];
        for (chunk, error) in bytes.chunks_exact_mut(4).zip(errors) {
            chunk.copy_from_slice(&error.to_ne_bytes());
        }
        let _ = rustix::io::write(&report_write, &bytes);
        sys::exit_now(0);
    };
    drop(report_write);
    let mut bytes = [0u8; 20];
    let read = rustix::io::read(&report_read, &mut bytes);
    drop(report_read);
    reap(pid);
    if read != Ok(bytes.len()) {
        return Err(io::Error::other("the trial child reported nothing"));
    }
    let mut errors = [0i32; 5];
    for (error, chunk) in errors.iter_mut().zip(bytes.chunks_exact(4)) {
        *error = i32::from_ne_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
    }
    Ok(errors)
}

/// `waitpid(pid)` again while interrupted; the raw status, 0 when waiting
/// fails.
fn reap(pid: rustix::process::Pid) -> i32 {
    loop {
        match rustix::process::waitpid(Some(pid), WaitOptions::empty()) {
            Err(Errno::INTR) => {}
            Ok(Some((_, status))) => return status.as_raw(),
            _ => return 0,
        }
    }
}

/// The trial, in the forked child.
///
/// # Safety
///
/// Only in the child [`trial`] forked (single-threaded, ending by
/// `_exit`): it unshares namespaces, mounts in them, forks again and
/// applies a seccomp filter, making async-signal-safe calls only.
unsafe fn trial_child(
    uid_map: &[u8],
    gid_map: &[u8],
    tmpfs_dir: &CStr,
    ro_dir: &CStr,
    ro_locked: MountFlags,
    filter: Option<&seccompiler::BpfProgram>,
) -> [i32; 5] {
    let errno = |e: Errno| e.raw_os_error();
    let mut errors = [0; 5];
    // SAFETY: namespace flags only, no `CLONE_FILES`.
    let user = match unsafe { rustix::thread::unshare_unsafe(UnshareFlags::NEWUSER) } {
        Err(e) => Err(errno(e)),
        Ok(()) => super::child::write_own_maps(uid_map, gid_map)
            .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO)),
    };
    if let Err(error) = user {
        errors[..4].fill(error);
    } else {
        let mounts = (|| {
            // SAFETY: as above.
            unsafe { rustix::thread::unshare_unsafe(UnshareFlags::NEWNS) }?;
            rustix::mount::mount_change(
                c"/",
                MountPropagationFlags::REC | MountPropagationFlags::PRIVATE,
            )?;
            rustix::mount::mount(
                c"tmpfs",
                tmpfs_dir,
                c"tmpfs",
                MountFlags::NOSUID | MountFlags::NODEV,
                c"size=16k",
            )?;
            rustix::mount::mount_bind(ro_dir, ro_dir)?;
            sys::remount_read_only(ro_dir, ro_locked)
                .map_err(|e| Errno::from_io_error(&e).unwrap_or(Errno::IO))
        })()
        .map_or_else(errno, |()| 0);
        errors[1] = mounts;
        // SAFETY: as above.
        errors[2] = match unsafe { rustix::thread::unshare_unsafe(UnshareFlags::NEWNET) } {
            Err(e) => errno(e),
            Ok(()) => loopback_up()
                .err()
                .and_then(|e| e.raw_os_error())
                .map_or(0, |e| e.max(1)),
        };
        errors[3] = if mounts != 0 {
            mounts
        } else {
            // SAFETY: as above.
            match unsafe { rustix::thread::unshare_unsafe(UnshareFlags::NEWPID) } {
                Err(e) => errno(e),
                // SAFETY: this process is single-threaded; the child (PID 1
                // of the new namespace) only mounts and exits.
                Ok(()) => match unsafe { sys::fork() } {
                    Err(e) => e.raw_os_error().unwrap_or(libc::EINVAL),
                    Ok(None) => {
                        let mounted = rustix::mount::mount(
                            c"proc",
                            c"/proc",
                            c"proc",
                            MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC,
                            None::<&CStr>,
                        );
                        sys::exit_now(match mounted {
                            Err(e) => errno(e).clamp(1, 255),
                            Ok(()) => 0,
                        });
                    }
                    Ok(Some(init)) => {
                        let status = reap(init);
                        if libc::WIFEXITED(status) {
                            libc::WEXITSTATUS(status)
                        } else {
                            libc::EINTR
                        }
                    }
                },
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
    errors
}
