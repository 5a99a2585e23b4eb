//! S's last steps before the exec: Landlock, seccomp, the capabilities.

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};

use rustix::fs::{Mode, OFlags};
use rustix::process::Resource;
use rustix::thread::{CapabilitySet, CapabilitySets};

use super::super::sys;
use super::{Plan, Reporter, Step};

/// S's last steps, in this order: the Landlock rules for S's own
/// terminals added to the ruleset, `NO_NEW_PRIVS` and the ruleset
/// enforced; the seccomp filters; the capabilities dropped; the working
/// directory entered again (std entered it before the namespaces moved);
/// every inherited descriptor marked close-on-exec.
pub(super) fn restrict(plan: &Plan, report: &Reporter<'_>) -> io::Result<()> {
    for (index, (resource, limit)) in plan.limits.rlimits.iter().enumerate() {
        let limit = rustix::process::Rlimit {
            current: Some(*limit),
            maximum: Some(*limit),
        };
        rustix::process::setrlimit(*resource, limit)
            .map_err(|e| report.fail(Step::Rlimit, index, e.into()))?;
    }
    if let (Some(ruleset), Some((dir, file))) = (&plan.ruleset, plan.pts_access) {
        for (path, access, flags) in [
            (c"/dev/pts", dir, OFlags::DIRECTORY),
            (c"/dev/ptmx", file, OFlags::empty()),
        ] {
            add_path_rule(ruleset.as_fd(), path, access, flags)
                .map_err(|e| report.fail(Step::Landlock, 1, e))?;
        }
    }
    if let Some(ruleset) = &plan.ruleset {
        rustix::thread::set_no_new_privs(true)
            .map_err(|e| report.fail(Step::Landlock, 0, e.into()))?;
        sys::landlock_restrict_self(ruleset.as_fd())
            .map_err(|e| report.fail(Step::Landlock, 0, e))?;
    }
    for filter in &plan.filters {
        // `apply_filter` sets NO_NEW_PRIVS and builds its `sock_fprog` on
        // the stack: no allocation.
        seccompiler::apply_filter(filter)
            .map_err(|_| report.fail(Step::Seccomp, 0, rustix::io::Errno::INVAL.into()))?;
    }
    drop_capabilities(plan.keep_caps);
    rustix::process::chdir(plan.cwd.as_c_str())
        .map_err(|e| report.fail(Step::Chdir, 0, e.into()))?;
    close_inherited_on_exec();
    Ok(())
}

/// Adds to `ruleset` a Landlock rule granting `access` beneath `path`,
/// opened here (`O_PATH`).
fn add_path_rule(
    ruleset: BorrowedFd<'_>,
    path: &CStr,
    access: u64,
    flags: OFlags,
) -> io::Result<()> {
    let fd = rustix::fs::open(path, OFlags::PATH | OFlags::CLOEXEC | flags, Mode::empty())?;
    sys::landlock_add_path_rule(ruleset, fd.as_fd(), access)
}

/// Marks every descriptor above stderr close-on-exec: one the embedding
/// program inherited from its own parent (not close-on-exec) would carry
/// its authority past Landlock, which judges only files opened inside.
fn close_inherited_on_exec() {
    if sys::cloexec_from(3) {
        return;
    }
    // Before Linux 5.11: each descriptor below the limit.
    let top = rustix::process::getrlimit(Resource::Nofile)
        .current
        .map_or(1 << 20, |limit| limit.min(1 << 20)) as i32;
    for fd in 3..top {
        sys::set_cloexec(fd);
    }
}

/// Clears the bounding and ambient sets, then every capability, but those
/// in `keep`: root inside a user namespace would keep them all across exec
/// (it gets its bounding set). EPERM/EINVAL (no such capability, no
/// `CAP_SETPCAP`) leave nothing to drop.
fn drop_capabilities(keep: u64) {
    for cap in 0..64u32 {
        if keep & (1 << cap) == 0 {
            let _ = rustix::thread::remove_capability_from_bounding_set(
                CapabilitySet::from_bits_retain(1 << cap),
            );
        }
    }
    let _ = rustix::thread::clear_ambient_capability_set();
    let keep = CapabilitySet::from_bits_retain(keep);
    let _ = rustix::thread::set_capabilities(
        None,
        CapabilitySets {
            effective: keep,
            permitted: keep,
            inheritable: keep,
        },
    );
}
