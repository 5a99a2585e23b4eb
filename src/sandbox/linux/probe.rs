//! The capability probe: Landlock's ABI version by syscall, and the
//! namespaces and seccomp by a trial in a forked child (a multithreaded
//! process cannot create a user namespace, and a filter cannot be undone).
#![allow(unsafe_code)] // the fork of the trial child; each block says why it is sound.

use std::ffi::{CStr, CString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

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

/// Probes the machine: what a sandbox built now would find. The trial in
/// a forked child is skipped when one made in the same circumstances
/// found everything ([`remembered`]).
pub(in crate::sandbox) fn probe() -> SandboxStatus {
    probe_with(false)
}

/// [`probe`] with the trial made whatever was remembered (for `agentcore
/// sandbox check`); what it finds is remembered or forgotten.
pub(in crate::sandbox) fn probe_afresh() -> SandboxStatus {
    probe_with(true)
}

fn probe_with(afresh: bool) -> SandboxStatus {
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
    let now = circumstances();
    let at = remembered_at();
    match outcome(afresh, now.as_deref(), at.as_deref(), trial) {
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

/// The file that says a trial found every step of [`STEPS`] working, and
/// in which circumstances (a hash of them a line, see [`circumstances`]):
/// `$XDG_STATE_HOME/agentcore/sandbox-probe`, else
/// `~/.local/state/agentcore/sandbox-probe`.
///
/// Only a trial that found everything is remembered, so the file can only
/// claim that a feature works, whoever wrote it (a command whose workspace
/// holds the state folder can). If that is wrong (the machine changed in a
/// way the circumstances do not show), commands fail to start with the
/// step that failed, which forgets these circumstances: confinement is
/// never weaker for it, and the next session probes again. What is not a
/// regular file there (a FIFO, a link) is passed over, and only its first
/// [`KEPT_BYTES`] are read; nothing is read, written or removed through a
/// symbolic link in place of its folder.
fn remembered_at() -> Option<PathBuf> {
    let state = match std::env::var_os("XDG_STATE_HOME").filter(|v| !v.is_empty()) {
        Some(state) => PathBuf::from(state),
        None => {
            PathBuf::from(std::env::var_os("HOME").filter(|v| !v.is_empty())?).join(".local/state")
        }
    };
    state
        .is_absolute()
        .then(|| state.join("agentcore/sandbox-probe"))
}

/// The trial's errnos: made by `trial`, unless `afresh` is false and the
/// file at `at` says that one made in circumstances `now` found everything.
/// A trial that finds everything is remembered there; any other outcome
/// forgets these circumstances.
fn outcome(
    afresh: bool,
    now: Option<&str>,
    at: Option<&Path>,
    trial: impl FnOnce() -> io::Result<[i32; 5]>,
) -> io::Result<[i32; 5]> {
    if let (false, Some(now), Some(at)) = (afresh, now, at)
        && remembered(at, now)
    {
        return Ok([0; 5]);
    }
    let outcome = trial();
    if let (Some(at), Some(now)) = (at, now) {
        match &outcome {
            Ok(errors) if *errors == [0; 5] => remember(at, now),
            _ => forget_at(at, now),
        }
    }
    outcome
}

/// How many sets of circumstances the file keeps (the last ones whose
/// trial found everything): two builds used in turn, or a user's shell and
/// a container, do not make each other probe again.
const KEPT: usize = 8;

/// A line of the kept file: the BLAKE3 hash of circumstances, in hex.
fn digest(now: &str) -> String {
    blake3::hash(now.as_bytes()).to_hex().to_string()
}

/// How much of the kept file is read: [`KEPT`] lines of 64 hex digits.
const KEPT_BYTES: u64 = KEPT as u64 * 65;

/// The lines of the file at `at`: none when it cannot be read, is not a
/// regular file (opened without following a link or waiting for a writer),
/// is not text or its folder is a symbolic link; at most its first
/// [`KEPT_BYTES`].
fn kept_lines(at: &Path) -> Vec<String> {
    use std::io::Read;
    let (Some(dir), Some(name)) = (state_dir(at, false), at.file_name()) else {
        return Vec::new();
    };
    let Ok(file) = rustix::fs::openat(
        &dir,
        name,
        rustix::fs::OFlags::RDONLY
            | rustix::fs::OFlags::NOFOLLOW
            | rustix::fs::OFlags::NONBLOCK
            | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    ) else {
        return Vec::new();
    };
    let file = std::fs::File::from(file);
    if !file.metadata().is_ok_and(|meta| meta.is_file()) {
        return Vec::new();
    }
    let mut text = String::new();
    if file.take(KEPT_BYTES).read_to_string(&mut text).is_err() {
        return Vec::new();
    }
    text.lines().map(str::to_owned).collect()
}

/// Whether the file at `at` says a trial made in circumstances `now`
/// found everything.
fn remembered(at: &Path, now: &str) -> bool {
    let line = digest(now);
    kept_lines(at).contains(&line)
}

/// Remembers at `at` that a trial made in circumstances `now` found
/// everything, first of at most [`KEPT`] lines (best effort).
fn remember(at: &Path, now: &str) {
    let line = digest(now);
    let mut lines = vec![line.clone()];
    lines.extend(
        kept_lines(at)
            .into_iter()
            .filter(|kept| *kept != line && kept.len() == line.len())
            .take(KEPT - 1),
    );
    write_lines(at, &lines);
}

/// Writes `lines` to the file at `at` whole (a new file renamed into
/// place, in a 0700 folder made if missing); whether it was written.
fn write_lines(at: &Path, lines: &[String]) -> bool {
    use std::io::Write;
    use std::os::fd::AsRawFd;
    let (Some(dir), Some(name)) = (state_dir(at, true), at.file_name()) else {
        return false;
    };
    // Through the folder's handle: the folder opened is the one written.
    let dir = PathBuf::from(format!("/proc/self/fd/{}", dir.as_raw_fd()));
    let Ok(mut file) = tempfile::Builder::new()
        .prefix(".sandbox-probe-")
        .tempfile_in(&dir)
    else {
        return false;
    };
    file.write_all((lines.join("\n") + "\n").as_bytes()).is_ok()
        && file.persist(dir.join(name)).is_ok()
}

/// The folder of the kept file at `at`, opened without following a
/// symbolic link in its place (made 0700 first if missing and `make`):
/// `None` when it is a link or cannot be opened, and then nothing is read,
/// written or removed there.
fn state_dir(at: &Path, make: bool) -> Option<std::fs::File> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let dir = at.parent()?;
    if make {
        let _ = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir);
    }
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(dir)
        .ok()
}

/// Forgets that a trial made in these circumstances found everything (a
/// step it vouched for failed: the machine is not what it found), so that
/// the next probe makes the trial.
pub(super) fn forget() {
    if let (Some(at), Some(now)) = (remembered_at(), circumstances()) {
        forget_at(&at, &now);
    }
}

/// Removes circumstances `now` from the file at `at` (the file too, when
/// nothing else is kept there).
fn forget_at(at: &Path, now: &str) {
    let line = digest(now);
    let lines = kept_lines(at);
    if !lines.contains(&line) {
        return;
    }
    let rest: Vec<String> = lines.into_iter().filter(|kept| *kept != line).collect();
    // What is left cannot be written: forget it all.
    if (rest.is_empty() || !write_lines(at, &rest))
        && let (Some(dir), Some(name)) = (state_dir(at, false), at.file_name())
    {
        let _ = rustix::fs::unlinkat(&dir, name, rustix::fs::AtFlags::empty());
    }
}

/// What the trial's outcome depends on, as text; `None` when it cannot be
/// told (then the trial is always made):
/// - this build (its version and its program file's identity);
/// - the boot (`/proc/sys/kernel/random/boot_id`: a new kernel, a reboot);
/// - who runs it (effective ids, capabilities, no-new-privileges);
/// - where it runs: the namespaces it is in (a container, a sandbox);
/// - what confines it: its LSM label (AppArmor confines user namespaces by
///   profile), and no seccomp filter at all (a filter could refuse any
///   step, so a process under one always makes the trial);
/// - the kernel's switches for user namespaces and their counts.
fn circumstances() -> Option<String> {
    use std::fmt::Write;
    use std::os::unix::fs::MetadataExt;
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let mut now = String::from("agentcore sandbox probe 1\n");
    let _ = writeln!(now, "version {}", env!("CARGO_PKG_VERSION"));
    let exe = std::fs::metadata("/proc/self/exe").ok()?;
    let _ = writeln!(
        now,
        "program {} {} {} {}.{}",
        exe.dev(),
        exe.ino(),
        exe.size(),
        exe.mtime(),
        exe.mtime_nsec()
    );
    let _ = writeln!(
        now,
        "boot {}",
        read("/proc/sys/kernel/random/boot_id")?.trim()
    );
    let _ = writeln!(
        now,
        "ids {} {}",
        rustix::process::geteuid().as_raw(),
        rustix::process::getegid().as_raw()
    );
    for ns in ["user", "mnt", "net", "pid", "cgroup", "ipc", "uts"] {
        let link = std::fs::read_link(format!("/proc/self/ns/{ns}")).ok()?;
        let _ = writeln!(now, "ns {}", link.display());
    }
    let status = read("/proc/self/status")?;
    let mut seccomp = None;
    for line in status.lines() {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match name {
            "Seccomp" => seccomp = Some(value == "0"),
            "NoNewPrivs" | "CapPrm" | "CapEff" | "CapBnd" => {
                let _ = writeln!(now, "{name} {value}");
            }
            _ => {}
        }
    }
    if seccomp != Some(true) {
        return None;
    }
    let label = read("/proc/self/attr/current").unwrap_or_default();
    let _ = writeln!(now, "label {}", label.trim_end_matches(['\n', '\0']));
    for switch in [
        "/proc/sys/user/max_user_namespaces",
        "/proc/sys/user/max_mnt_namespaces",
        "/proc/sys/user/max_net_namespaces",
        "/proc/sys/user/max_pid_namespaces",
        "/proc/sys/kernel/unprivileged_userns_clone",
        "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
        "/proc/sys/kernel/apparmor_restrict_unprivileged_unconfined",
    ] {
        let value = read(switch);
        let _ = writeln!(now, "{switch} {}", value.as_deref().map_or("-", str::trim));
    }
    Some(now)
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    const FOUND_ALL: [i32; 5] = [0; 5];
    const NO_NET: [i32; 5] = [0, 0, libc::EPERM, 0, 0];

    /// `outcome` with a trial that counts its runs and finds `found`.
    fn run(
        afresh: bool,
        now: Option<&str>,
        at: &Path,
        found: io::Result<[i32; 5]>,
        runs: &Cell<u32>,
    ) -> io::Result<[i32; 5]> {
        outcome(afresh, now, Some(at), || {
            runs.set(runs.get() + 1);
            found
        })
    }

    #[test]
    fn a_trial_that_found_everything_is_not_made_again_in_the_same_circumstances() {
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().join("state/agentcore/sandbox-probe");
        let runs = Cell::new(0);
        assert_eq!(
            run(false, Some("here"), &at, Ok(FOUND_ALL), &runs).unwrap(),
            FOUND_ALL
        );
        assert_eq!(runs.get(), 1);
        assert_eq!(kept_lines(&at), [digest("here")]);
        // Kept: the next probe in the same circumstances makes no trial,
        // even one that would now find something missing.
        assert_eq!(
            run(false, Some("here"), &at, Ok(NO_NET), &runs).unwrap(),
            FOUND_ALL
        );
        assert_eq!(runs.get(), 1);
    }

    #[test]
    fn other_circumstances_or_afresh_make_the_trial_and_what_is_missing_is_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().join("sandbox-probe");
        let runs = Cell::new(0);
        run(false, Some("here"), &at, Ok(FOUND_ALL), &runs).unwrap();
        // Another boot, container or build: the trial is made, what it
        // finds missing is reported, and nothing is kept for it.
        assert_eq!(
            run(false, Some("there"), &at, Ok(NO_NET), &runs).unwrap(),
            NO_NET
        );
        assert_eq!(runs.get(), 2);
        assert_eq!(kept_lines(&at), [digest("here")]);
        // `sandbox check` makes the trial whatever is kept; what it finds
        // missing forgets what was kept for these circumstances.
        assert_eq!(
            run(true, Some("here"), &at, Ok(NO_NET), &runs).unwrap(),
            NO_NET
        );
        assert_eq!(runs.get(), 3);
        assert!(!at.exists());
        run(false, Some("here"), &at, Ok(NO_NET), &runs).unwrap();
        assert_eq!(runs.get(), 4);
        // A failed fork is not kept either, and a later trial is made.
        run(false, Some("there"), &at, Ok(FOUND_ALL), &runs).unwrap();
        let failed = run(
            false,
            Some("here"),
            &at,
            Err(io::Error::other("no fork")),
            &runs,
        );
        assert!(failed.is_err());
        assert_eq!(runs.get(), 6);
        assert_eq!(kept_lines(&at), [digest("there")]);
        // Forgetting one set of circumstances leaves the others.
        run(false, Some("here"), &at, Ok(FOUND_ALL), &runs).unwrap();
        forget_at(&at, "here");
        assert_eq!(kept_lines(&at), [digest("there")]);
        forget_at(&at, "there");
        assert!(!at.exists());
    }

    #[test]
    fn without_circumstances_the_trial_is_always_made() {
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().join("sandbox-probe");
        std::fs::write(&at, digest("here") + "\n").unwrap();
        let runs = Cell::new(0);
        assert_eq!(
            run(false, None, &at, Ok(FOUND_ALL), &runs).unwrap(),
            FOUND_ALL
        );
        assert_eq!(run(false, None, &at, Ok(NO_NET), &runs).unwrap(), NO_NET);
        assert_eq!(runs.get(), 2);
        assert_eq!(
            kept_lines(&at),
            [digest("here")],
            "nothing to match, nothing kept"
        );
    }

    #[test]
    fn a_kept_line_must_be_the_hash_of_the_circumstances_whole() {
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().join("sandbox-probe");
        let runs = Cell::new(0);
        let here = digest("here");
        for kept in [
            "here\n".to_owned(),
            format!("{}\n", &here[..32]),
            format!("{here}x\n"),
            digest("here\n") + "\n",
            digest("her") + "\n",
            String::new(),
        ] {
            std::fs::write(&at, kept).unwrap();
            run(false, Some("here"), &at, Ok(NO_NET), &runs).unwrap();
        }
        assert_eq!(runs.get(), 6);
    }

    #[test]
    fn the_last_circumstances_that_found_everything_are_kept_side_by_side() {
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().join("sandbox-probe");
        let runs = Cell::new(0);
        // Two builds used in turn: each is kept, neither probes again.
        run(false, Some("build a"), &at, Ok(FOUND_ALL), &runs).unwrap();
        run(false, Some("build b"), &at, Ok(FOUND_ALL), &runs).unwrap();
        run(false, Some("build a"), &at, Ok(NO_NET), &runs).unwrap();
        run(false, Some("build b"), &at, Ok(NO_NET), &runs).unwrap();
        assert_eq!(runs.get(), 2);
        // At most KEPT, the latest first.
        for n in 0..2 * KEPT {
            run(false, Some(&format!("c{n}")), &at, Ok(FOUND_ALL), &runs).unwrap();
        }
        let lines = kept_lines(&at);
        assert_eq!(lines.len(), KEPT);
        assert_eq!(lines[0], digest(&format!("c{}", 2 * KEPT - 1)));
        assert!(!lines.contains(&digest("build a")));
    }

    #[test]
    fn the_circumstances_name_the_boot_the_ids_and_the_namespaces_and_are_stable() {
        let Some(now) = circumstances() else {
            // Under a seccomp filter (some CI containers): always probed.
            let status = std::fs::read_to_string("/proc/self/status").unwrap();
            assert!(
                status
                    .lines()
                    .any(|l| l.starts_with("Seccomp:") && !l.ends_with("\t0")),
                "no circumstances without a seccomp filter:\n{status}"
            );
            return;
        };
        let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
        assert!(now.contains(&format!("boot {}\n", boot.trim())), "{now}");
        assert!(now.contains(&format!("ids {} ", rustix::process::geteuid().as_raw())));
        for ns in ["user", "mnt", "net", "pid"] {
            let link = std::fs::read_link(format!("/proc/self/ns/{ns}")).unwrap();
            assert!(now.contains(&format!("ns {}\n", link.display())), "{now}");
        }
        assert!(now.contains("CapEff "), "{now}");
        assert_eq!(circumstances().as_deref(), Some(now.as_str()));
    }

    #[test]
    fn what_is_not_a_small_regular_file_at_the_path_is_passed_over() {
        let dir = tempfile::tempdir().unwrap();
        let runs = Cell::new(0);
        // A FIFO: read without waiting for a writer, and the trial is made.
        let fifo = dir.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
            0,
        )
        .unwrap();
        run(false, Some("here"), &fifo, Ok(NO_NET), &runs).unwrap();
        assert_eq!(runs.get(), 1);
        // A link to a file that would match is not followed.
        let target = dir.path().join("target");
        std::fs::write(&target, digest("here") + "\n").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        run(false, Some("here"), &link, Ok(NO_NET), &runs).unwrap();
        assert_eq!(runs.get(), 2);
        // Only the first KEPT lines' worth is read.
        let huge = dir.path().join("huge");
        let filler = format!("{}\n", "f".repeat(64)).repeat(KEPT);
        std::fs::write(&huge, filler.clone() + &digest("here") + "\n").unwrap();
        run(false, Some("here"), &huge, Ok(NO_NET), &runs).unwrap();
        assert_eq!(runs.get(), 3);
        std::fs::write(&huge, digest("here") + "\n" + &filler).unwrap();
        run(false, Some("here"), &huge, Ok(NO_NET), &runs).unwrap();
        assert_eq!(runs.get(), 3);
    }

    /// A symbolic link in place of the state folder is not followed:
    /// nothing is read or written where it points, and nothing removed
    /// there.
    #[test]
    fn a_link_in_place_of_the_state_folder_is_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, dir.path().join("agentcore")).unwrap();
        let at = dir.path().join("agentcore/sandbox-probe");
        let runs = Cell::new(0);
        run(false, Some("here"), &at, Ok(FOUND_ALL), &runs).unwrap();
        run(false, Some("here"), &at, Ok(FOUND_ALL), &runs).unwrap();
        assert_eq!(runs.get(), 2, "nothing was kept, so the trial is made");
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
        // A kept file planted there is not read, and not removed through
        // the link when the trial finds less.
        std::fs::write(elsewhere.join("sandbox-probe"), digest("here") + "\n").unwrap();
        run(false, Some("here"), &at, Ok(FOUND_ALL), &runs).unwrap();
        assert_eq!(runs.get(), 3, "the planted claim was not trusted");
        run(true, Some("here"), &at, Ok(NO_NET), &runs).unwrap();
        assert_eq!(
            std::fs::read_to_string(elsewhere.join("sandbox-probe")).unwrap(),
            digest("here") + "\n"
        );
        // A real folder is written and, when nothing is left, emptied.
        let real = dir.path().join("real/sandbox-probe");
        run(false, Some("here"), &real, Ok(FOUND_ALL), &runs).unwrap();
        assert_eq!(kept_lines(&real), [digest("here")]);
        run(true, Some("here"), &real, Ok(NO_NET), &runs).unwrap();
        assert!(!real.exists());
    }
}
