//! The Linux sandbox: a user namespace with mount, PID and network
//! namespaces, Landlock and seccomp, set up between fork and exec by the
//! plan built here.
//!
//! - [`landlock_rules`], [`seccomp`] and [`mounts`]: the parts of the plan,
//!   built in the parent ([`confine`]);
//! - [`child`]: the code that runs between fork and exec and applies it;
//! - [`sys`]: the system calls rustix does not wrap, on libc;
//! - [`probe`]: what this machine can enforce; [`session_net`]: the
//!   loopback a session's commands share; [`failure`]: which step of the
//!   setup failed.
//!
//! System calls go through rustix; libc is used for the few calls rustix
//! has no wrapper for ([`sys`]) and for constants (syscall numbers, socket
//! families, BPF opcodes) the seccomp filters name.

mod child;
mod failure;
mod fd_pass;
mod landlock_rules;
mod mounts;
mod net_listen;
mod probe;
mod seccomp;
mod session_net;
mod sys;

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::thread::UnshareFlags;

use super::status::Feature;
use super::{Confinement, Inner, SandboxError};

pub(super) use failure::Failure;
pub(super) use net_listen::listeners;
pub(super) use probe::probe;
pub(super) use session_net::SessionNet;

fn cstring(path: &Path) -> Result<CString, SandboxError> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| SandboxError::NulInPath(path.into()))
}

/// Builds the plan for one command and installs it as the command's
/// `pre_exec`.
///
/// The plan is built here, in the parent, in this order: the folders
/// writable inside; the Landlock ruleset ([`landlock_rules::ruleset`]);
/// the seccomp filters ([`seccomp::filters`]); the namespaces and mounts
/// ([`mounts::namespaces`]); the failure pipe. The child applies it in the
/// order [`child::enter`] gives: namespaces, mounts, the PID namespace's
/// init, then Landlock, seccomp and the capabilities.
pub(super) fn confine(
    inner: &Inner,
    cmd: &mut tokio::process::Command,
) -> Result<Confinement, SandboxError> {
    let status = &inner.status;
    let user = status.has(Feature::UserNamespace);
    let mount_ns = user && status.has(Feature::MountNamespace);
    let pids = user && status.has(Feature::PidNamespace);
    let new_net = user && !inner.network && status.has(Feature::NetworkNamespace);
    let with_landlock = status.has(Feature::Landlock);
    let with_seccomp = status.has(Feature::Seccomp);
    // Without a network namespace, Landlock (TCP) and seccomp (UDP) refuse
    // the network, loopback included.
    let fallback_net = !inner.network && !new_net;

    let (writable, bind_shm) = writable_folders(inner, mount_ns);
    let ruleset = if with_landlock {
        landlock_rules::ruleset(&writable, fallback_net)?
    } else {
        None
    };
    // Landlock ABI 9 tells the sandbox's own UNIX sockets from the host's;
    // below it, seccomp refuses UNIX sockets altogether.
    let landlock_governs_unix = with_landlock && status.landlock_abi().is_some_and(|abi| abi >= 9);
    let filters = if with_seccomp {
        seccomp::filters(fallback_net, !landlock_governs_unix)?
    } else {
        Vec::new()
    };

    let namespaces = if user {
        let mut flags = UnshareFlags::empty();
        if mount_ns {
            flags |= UnshareFlags::NEWNS;
        }
        if pids {
            flags |= UnshareFlags::NEWPID;
        }
        if new_net {
            flags |= UnshareFlags::NEWNET;
        }
        Some(mounts::namespaces(inner, flags, &writable, bind_shm)?)
    } else {
        None
    };

    let cwd = match cmd.as_std().get_current_dir() {
        Some(dir) => dir.to_path_buf(),
        None => std::env::current_dir().map_err(SandboxError::Io)?,
    };
    let (failure_read, failure_write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
        .map_err(|e| SandboxError::Io(e.into()))?;
    rustix::fs::fcntl_setfl(&failure_read, rustix::fs::OFlags::NONBLOCK)
        .map_err(|e| SandboxError::Io(e.into()))?;
    let failure = failure_for(failure_read, namespaces.as_ref(), &cwd);
    let plan = child::Plan {
        namespaces,
        failure: failure_write,
        ruleset,
        filters,
        cwd: cstring(&cwd)?,
        keep_caps: if user && rustix::process::geteuid().is_root() {
            child::ROOT_KEEPS
        } else {
            0
        },
        pts_access: (mount_ns && with_landlock)
            .then(|| landlock_rules::pts_access(status.landlock_abi())),
    };
    install(cmd, plan);
    Ok(Confinement {
        full: status.is_complete(),
        tree_dies_with_child: pids,
        enforced: status.enforced(),
        failure: Some(std::sync::Arc::new(failure)),
    })
}

/// The folders writable inside: the writable roots, the temporary
/// directory and, with a mount namespace, the session's shm folder when it
/// is bound on `/dev/shm` (the second value).
fn writable_folders(inner: &Inner, mounts: bool) -> (Vec<PathBuf>, bool) {
    let mut writable = inner.writable.clone();
    writable.push(inner.tmp.clone());
    let bind_shm = mounts && inner.shm.is_dir() && Path::new("/dev/shm").is_dir();
    if bind_shm {
        // A bind's mount root takes Landlock's walk to its own rules: the
        // bound directory needs one of its own.
        writable.push(inner.shm.clone());
    }
    (writable, bind_shm)
}

/// The read end of the failure pipe, with the paths the child's records
/// index.
fn failure_for(
    read: std::os::fd::OwnedFd,
    namespaces: Option<&child::Namespaces>,
    cwd: &Path,
) -> failure::Failure {
    let to_paths = |list: &[CString]| -> Vec<PathBuf> {
        list.iter()
            .map(|c| PathBuf::from(std::ffi::OsStr::from_bytes(c.as_bytes())))
            .collect()
    };
    match namespaces {
        Some(ns) => failure::Failure {
            read,
            hidden_dirs: to_paths(&ns.hidden_dirs),
            hidden_files: to_paths(&ns.hidden_files),
            binds: ns
                .binds
                .iter()
                .map(|(_, target)| PathBuf::from(std::ffi::OsStr::from_bytes(target.as_bytes())))
                .collect(),
            read_only: ns
                .read_only
                .iter()
                .map(|(path, _)| PathBuf::from(std::ffi::OsStr::from_bytes(path.as_bytes())))
                .collect(),
            pins: to_paths(&ns.pins),
            writable: to_paths(&ns.writable),
            cwd: cwd.to_path_buf(),
        },
        None => failure::Failure {
            read,
            hidden_dirs: Vec::new(),
            hidden_files: Vec::new(),
            binds: Vec::new(),
            read_only: Vec::new(),
            pins: Vec::new(),
            writable: Vec::new(),
            cwd: cwd.to_path_buf(),
        },
    }
}

/// Makes `plan` the command's `pre_exec`: std runs it in the forked child,
/// after its own setup (stdio, working directory) and before the exec.
#[allow(unsafe_code)]
fn install(cmd: &mut tokio::process::Command, plan: child::Plan) {
    let enter = move || {
        // SAFETY: std calls this closure only in the child it forked for
        // this command, between fork and exec, which is what `enter`
        // requires; the plan was built for this command and moved here.
        unsafe { child::enter(&plan) }
    };
    // SAFETY: `pre_exec` asks that the closure be async-signal-safe; it
    // only calls `child::enter`, which keeps to async-signal-safe calls on
    // the plan moved into it (see its `# Safety`).
    unsafe { cmd.pre_exec(enter) };
}
