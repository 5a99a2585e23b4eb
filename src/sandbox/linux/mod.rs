//! The Linux sandbox: a user namespace with mount, PID and network
//! namespaces, Landlock and seccomp, set up between fork and exec by the
//! plan built here.

mod child;
mod failure;
mod probe;
mod session_net;

use std::collections::BTreeMap;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use super::paths::{self, Cover};
use super::status::Feature;
use super::{Confinement, Inner, SandboxError};

pub(super) use failure::Failure;
pub(super) use probe::probe;
pub(super) use session_net::SessionNet;

/// The devices a command may write besides its roots.
const WRITABLE_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/pts",
    "/dev/ptmx",
];

/// The seccomp architecture of this build, when seccompiler knows it.
pub(super) fn seccomp_arch() -> Option<&'static str> {
    target_arch().map(|_| std::env::consts::ARCH)
}

fn target_arch() -> Option<TargetArch> {
    if cfg!(target_arch = "x86_64") {
        Some(TargetArch::x86_64)
    } else if cfg!(target_arch = "aarch64") {
        Some(TargetArch::aarch64)
    } else if cfg!(target_arch = "riscv64") {
        Some(TargetArch::riscv64)
    } else {
        None
    }
}

/// A filter for the probe to apply: the first of the real ones (seccompiler
/// refuses a filter whose two actions are the same, so no allow-all).
fn probe_filter() -> Option<BpfProgram> {
    filters(false, false).ok()?.into_iter().next()
}

/// The mount flags a read-only remount of `path` must keep (a user
/// namespace may not clear them), from `statvfs`'s `ST_*` bits, which are
/// not the `MS_*` bits.
fn locked_flags(path: &Path) -> libc::c_ulong {
    let Ok(stat) = rustix::fs::statvfs(path) else {
        return 0;
    };
    let flags = stat.f_flag;
    let mut locked = 0;
    for (st, ms) in [
        (rustix::fs::StatVfsMountFlags::NOSUID, libc::MS_NOSUID),
        (rustix::fs::StatVfsMountFlags::NODEV, libc::MS_NODEV),
        (rustix::fs::StatVfsMountFlags::NOEXEC, libc::MS_NOEXEC),
        (rustix::fs::StatVfsMountFlags::NOATIME, libc::MS_NOATIME),
        (
            rustix::fs::StatVfsMountFlags::NODIRATIME,
            libc::MS_NODIRATIME,
        ),
        (rustix::fs::StatVfsMountFlags::RELATIME, libc::MS_RELATIME),
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
    *EXISTS.get_or_init(|| {
        // Invalid arguments: EBADF or EINVAL when the call exists.
        // SAFETY: a syscall with a null path and no attribute; the kernel
        // rejects it before touching memory.
        #[allow(unsafe_code)]
        let result = unsafe {
            libc::syscall(
                libc::SYS_mount_setattr,
                -1,
                std::ptr::null::<libc::c_char>(),
                0,
                std::ptr::null::<u8>(),
                0,
            )
        };
        !(result < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS))
    })
}

/// `/` and every mount point of this process's tree (from
/// `/proc/self/mountinfo`), each with the flags a read-only remount must
/// keep: for kernels without `mount_setattr`.
fn listed_mount_points() -> Result<Vec<(CString, libc::c_ulong)>, SandboxError> {
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

fn cstring(path: &Path) -> Result<CString, SandboxError> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| SandboxError::NulInPath(path.into()))
}

/// The Landlock ruleset: read everywhere, write under the writable roots,
/// the temporary directory and the devices; with `deny_tcp`, TCP connect
/// and bind refused (the fallback without a network namespace); signals and
/// abstract UNIX sockets scoped to the sandbox.
fn ruleset(
    writable: &[PathBuf],
    deny_tcp: bool,
) -> Result<Option<std::os::fd::OwnedFd>, SandboxError> {
    let abi = ABI::V10;
    let landlock = |e: landlock::RulesetError| SandboxError::Landlock(e.to_string());
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))
        .map_err(landlock)?;
    if deny_tcp {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(ABI::V4))
            .map_err(landlock)?;
    }
    let created = ruleset
        .scope(Scope::from_all(abi))
        .map_err(landlock)?
        .create()
        .map_err(landlock)?
        .add_rules(landlock::path_beneath_rules(
            ["/"],
            AccessFs::from_read(abi),
        ))
        .map_err(landlock)?
        .add_rules(landlock::path_beneath_rules(
            WRITABLE_DEVICES,
            AccessFs::from_all(abi),
        ))
        .map_err(landlock)?
        .add_rules(landlock::path_beneath_rules(
            writable,
            AccessFs::from_all(abi),
        ))
        .map_err(landlock)?;
    Ok(created.into())
}

/// The seccomp programs: socket families other than UNIX, INET, INET6 and
/// NETLINK refused (EAFNOSUPPORT); `io_uring_setup` refused (ENOSYS, so
/// programs fall back to epoll), since io_uring can open sockets without
/// `socket()`; with `deny_udp`, UDP sockets refused (ENETUNREACH), the
/// fallback without a network namespace.
///
/// With `deny_unix` (Landlock below ABI 9, which cannot tell the sandbox's
/// own UNIX sockets from the host's), `socket(AF_UNIX, …)` is refused
/// (EPERM), and `socketpair(AF_UNIX, SOCK_DGRAM)` too (a datagram socket
/// can send to any path): a command can neither connect to a host
/// service's socket nor bind one, whenever that socket was made, and
/// `socketpair` streams (pipes between a command's own processes) still
/// work. With ABI 9 Landlock refuses connects to sockets outside the
/// writable roots itself ([`ruleset`]: `ResolveUnix` is a write right).
pub(super) fn filters(deny_udp: bool, deny_unix: bool) -> Result<Vec<BpfProgram>, SandboxError> {
    let Some(arch) = target_arch() else {
        return Ok(Vec::new());
    };
    let seccomp = |e: &dyn std::fmt::Display| SandboxError::Seccomp(e.to_string());
    let arg = |index: u8, op: SeccompCmpOp, value: i32| {
        SeccompCondition::new(index, SeccompCmpArgLen::Dword, op, value as u64)
            .map_err(|e| seccomp(&e))
    };
    let program = |rules: BTreeMap<i64, Vec<SeccompRule>>, errno: i32| {
        let filter = SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(errno as u32),
            arch,
        )
        .map_err(|e| seccomp(&e))?;
        BpfProgram::try_from(filter).map_err(|e| seccomp(&e))
    };
    let odd_family = SeccompRule::new(vec![
        arg(0, SeccompCmpOp::Ne, libc::AF_UNIX)?,
        arg(0, SeccompCmpOp::Ne, libc::AF_INET)?,
        arg(0, SeccompCmpOp::Ne, libc::AF_INET6)?,
        arg(0, SeccompCmpOp::Ne, libc::AF_NETLINK)?,
    ])
    .map_err(|e| seccomp(&e))?;
    let mut programs = vec![
        program(
            BTreeMap::from([(libc::SYS_socket, vec![odd_family])]),
            libc::EAFNOSUPPORT,
        )?,
        program(
            BTreeMap::from([(libc::SYS_io_uring_setup, vec![])]),
            libc::ENOSYS,
        )?,
    ];
    // The kernel keyrings: the session keyring is inherited, and may hold
    // the user's Kerberos tickets or other keys.
    programs.push(program(
        BTreeMap::from([
            (libc::SYS_keyctl, vec![]),
            (libc::SYS_add_key, vec![]),
            (libc::SYS_request_key, vec![]),
        ]),
        libc::ENOSYS,
    )?);
    // Set-user-id and set-group-id bits: root inside keeps the right to
    // chmod, and a set-id executable left in the workspace would lend its
    // owner's authority to whoever runs it later.
    let set_id = |mode_arg: u8| -> Result<Vec<SeccompRule>, SandboxError> {
        [libc::S_ISUID, libc::S_ISGID]
            .into_iter()
            .map(|bit| {
                SeccompRule::new(vec![arg(
                    mode_arg,
                    SeccompCmpOp::MaskedEq(u64::from(bit)),
                    bit as i32,
                )?])
                .map_err(|e| seccomp(&e))
            })
            .collect()
    };
    // The same bits asked for when a file is made: `open` with `O_CREAT`
    // or `O_TMPFILE` and a set-id mode (the kernel keeps `S_ISUID` on a
    // new file), and `mknod` of a regular file.
    let creating = |flags_arg: u8, mode_arg: u8| -> Result<Vec<SeccompRule>, SandboxError> {
        let mut rules = Vec::new();
        for create in [libc::O_CREAT, libc::O_TMPFILE] {
            for bit in [libc::S_ISUID, libc::S_ISGID] {
                rules.push(
                    SeccompRule::new(vec![
                        arg(flags_arg, SeccompCmpOp::MaskedEq(create as u64), create)?,
                        arg(mode_arg, SeccompCmpOp::MaskedEq(u64::from(bit)), bit as i32)?,
                    ])
                    .map_err(|e| seccomp(&e))?,
                );
            }
        }
        Ok(rules)
    };
    let mut chmods = BTreeMap::from([
        (libc::SYS_fchmod, set_id(1)?),
        (libc::SYS_fchmodat, set_id(2)?),
        (libc::SYS_fchmodat2, set_id(2)?),
        (libc::SYS_openat, creating(2, 3)?),
        (libc::SYS_mknodat, set_id(2)?),
    ]);
    #[cfg(target_arch = "x86_64")]
    {
        chmods.insert(libc::SYS_chmod, set_id(1)?);
        chmods.insert(libc::SYS_open, creating(1, 2)?);
        chmods.insert(libc::SYS_creat, set_id(1)?);
        chmods.insert(libc::SYS_mknod, set_id(1)?);
    }
    programs.push(program(chmods, libc::EPERM)?);
    // `openat2` takes its mode in a structure a filter cannot read:
    // refused as missing, so that programs fall back to `openat`.
    programs.push(program(
        BTreeMap::from([(libc::SYS_openat2, vec![])]),
        libc::ENOSYS,
    )?);
    if deny_unix {
        let dgram = SeccompRule::new(vec![
            arg(0, SeccompCmpOp::Eq, libc::AF_UNIX)?,
            arg(1, SeccompCmpOp::MaskedEq(0xf), libc::SOCK_DGRAM)?,
        ])
        .map_err(|e| seccomp(&e))?;
        let unix = SeccompRule::new(vec![arg(0, SeccompCmpOp::Eq, libc::AF_UNIX)?])
            .map_err(|e| seccomp(&e))?;
        programs.push(program(
            BTreeMap::from([
                (libc::SYS_socket, vec![unix]),
                (libc::SYS_socketpair, vec![dgram]),
            ]),
            libc::EPERM,
        )?);
    }
    if deny_udp {
        let udp = |family| -> Result<SeccompRule, SandboxError> {
            SeccompRule::new(vec![
                arg(0, SeccompCmpOp::Eq, family)?,
                // The type without SOCK_NONBLOCK and SOCK_CLOEXEC.
                arg(1, SeccompCmpOp::MaskedEq(0xf), libc::SOCK_DGRAM)?,
            ])
            .map_err(|e| seccomp(&e))
        };
        programs.push(program(
            BTreeMap::from([(
                libc::SYS_socket,
                vec![udp(libc::AF_INET)?, udp(libc::AF_INET6)?],
            )]),
            libc::ENETUNREACH,
        )?);
    }
    #[cfg(target_arch = "x86_64")]
    for program in &mut programs {
        refuse_x32(program);
    }
    Ok(programs)
}

/// Puts in front of `program` a refusal (ENOSYS) of every system call
/// number with the x32 bit (`0x40000000`): seccompiler matches exact
/// numbers of the x86_64 table, which the same calls made through the x32
/// ABI (a kernel built with it) would not match.
#[cfg(target_arch = "x86_64")]
fn refuse_x32(program: &mut BpfProgram) {
    use seccompiler::sock_filter;
    const X32_SYSCALL_BIT: u32 = 0x4000_0000;
    // struct seccomp_data: the number is the first u32.
    let prefix = [
        sock_filter {
            code: (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16,
            jt: 0,
            jf: 0,
            k: 0,
        },
        sock_filter {
            code: (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16,
            jt: 0,
            jf: 1,
            k: X32_SYSCALL_BIT,
        },
        sock_filter {
            code: (libc::BPF_RET | libc::BPF_K) as u16,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32,
        },
    ];
    program.splice(0..0, prefix);
}

/// Builds the plan for one command and installs it as the command's
/// `pre_exec`.
pub(super) fn confine(
    inner: &Inner,
    cmd: &mut tokio::process::Command,
) -> Result<Confinement, SandboxError> {
    let status = &inner.status;
    let user = status.has(Feature::UserNamespace);
    let mounts = user && status.has(Feature::MountNamespace);
    let pids = user && status.has(Feature::PidNamespace);
    let new_net = user && !inner.network && status.has(Feature::NetworkNamespace);
    let landlock = status.has(Feature::Landlock);
    let seccomp = status.has(Feature::Seccomp);
    // Without a network namespace, Landlock (TCP) and seccomp (UDP) refuse
    // the network, loopback included.
    let fallback_net = !inner.network && !new_net;

    let mut writable = inner.writable.clone();
    writable.push(inner.tmp.clone());
    let shm = inner.shm.clone();
    let bind_shm = mounts && shm.is_dir() && Path::new("/dev/shm").is_dir();
    if bind_shm {
        // A bind's mount root takes Landlock's walk to its own rules: the
        // bound directory needs one of its own.
        writable.push(shm.clone());
    }
    let ruleset = if landlock {
        ruleset(&writable, fallback_net)?
    } else {
        None
    };
    // Landlock ABI 9 tells the sandbox's own UNIX sockets from the host's;
    // below it, seccomp refuses UNIX sockets altogether.
    let landlock_governs_unix = landlock && status.landlock_abi().is_some_and(|abi| abi >= 9);
    let filters = if seccomp {
        filters(fallback_net, !landlock_governs_unix)?
    } else {
        Vec::new()
    };

    let namespaces = if user {
        let mut flags = 0;
        if mounts {
            flags |= libc::CLONE_NEWNS;
        }
        if pids {
            flags |= libc::CLONE_NEWPID;
        }
        if new_net {
            flags |= libc::CLONE_NEWNET;
        }
        let (uid, gid) = (nix::unistd::geteuid(), nix::unistd::getegid());
        let root = uid.is_root();
        let (uid, gid) = (uid.as_raw(), gid.as_raw());
        let mut hidden_dirs = Vec::new();
        let mut hidden_files = Vec::new();
        let mut binds = Vec::new();
        let mut read_only = Vec::new();
        let mut pins = Vec::new();
        if mounts {
            let own = super::fs_canonical(inner._tmpdir.path());
            let temp = super::fs_canonical(&std::env::temp_dir());
            let mut scan: Vec<&Path> = vec![&temp];
            if let Some(parent) = own.parent() {
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
                binds.push((cstring(&shm)?, c"/dev/shm".to_owned()));
            }
            let mut protected = inner.protected.clone();
            for root in &inner.protected_roots {
                protected.extend(paths::default_protected(root));
            }
            for cover in paths::existing(&protected) {
                let (Cover::Dir(path) | Cover::File(path)) = cover;
                read_only.push((cstring(&path)?, locked_flags(&path)));
            }
            let covered: Vec<&CString> = hidden_dirs
                .iter()
                .chain(&hidden_files)
                .chain(read_only.iter().map(|(path, _)| path))
                .collect();
            for dir in pins_for(&covered, &writable) {
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
        Some(child::Namespaces {
            flags,
            shared: if new_net {
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
    } else {
        None
    };
    let cwd = match cmd.as_std().get_current_dir() {
        Some(dir) => dir.to_path_buf(),
        None => std::env::current_dir().map_err(SandboxError::Io)?,
    };
    let (failure_read, failure_write) =
        nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(|e| SandboxError::Io(e.into()))?;
    nix::fcntl::fcntl(
        &failure_read,
        nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK),
    )
    .map_err(|e| SandboxError::Io(e.into()))?;
    let to_paths = |list: &[CString]| -> Vec<PathBuf> {
        list.iter()
            .map(|c| PathBuf::from(std::ffi::OsStr::from_bytes(c.as_bytes())))
            .collect()
    };
    let failure = match &namespaces {
        Some(ns) => failure::Failure {
            read: failure_read,
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
            cwd: cwd.clone(),
        },
        None => failure::Failure {
            read: failure_read,
            hidden_dirs: Vec::new(),
            hidden_files: Vec::new(),
            binds: Vec::new(),
            read_only: Vec::new(),
            pins: Vec::new(),
            writable: Vec::new(),
            cwd: cwd.clone(),
        },
    };
    let plan = child::Plan {
        namespaces,
        failure: failure_write,
        ruleset,
        filters,
        cwd: cstring(&cwd)?,
        keep_caps: if user && nix::unistd::geteuid().is_root() {
            child::ROOT_KEEPS
        } else {
            0
        },
        pts_access: (mounts && landlock).then(|| {
            let abi = ABI::from(status.landlock_abi().map_or(0, |abi| abi as i32));
            (
                AccessFs::from_all(abi).bits(),
                AccessFs::from_file(abi).bits(),
            )
        }),
    };
    // SAFETY: the closure runs in the forked child and only calls
    // `child::enter`, which makes raw async-signal-safe syscalls on the
    // plan moved into it (see src/sandbox/linux/child.rs).
    #[allow(unsafe_code)]
    unsafe {
        cmd.pre_exec(move || child::enter(&plan));
    }
    Ok(Confinement {
        full: status.is_complete(),
        tree_dies_with_child: pids,
        enforced: status.enforced(),
        failure: Some(std::sync::Arc::new(failure)),
    })
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

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn every_filter_first_refuses_x32_system_call_numbers() {
        let programs = filters(true, true).unwrap();
        assert!(programs.len() >= 4, "families, io_uring, keyrings, set-id");
        for program in &programs {
            assert_eq!(program[0].k, 0, "loads the number");
            assert_eq!(program[1].k, 0x4000_0000);
            assert_eq!(program[2].k, libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32);
        }
    }
}
