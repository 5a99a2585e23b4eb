//! The seccomp filters of a confined command, built before the fork and
//! applied in S, each a BPF program of its own, in order.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use super::super::SandboxError;

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
pub(super) fn probe_filter() -> Option<BpfProgram> {
    filters(false, false).ok()?.into_iter().next()
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
/// writable roots itself ([`super::landlock_rules::ruleset`]: `ResolveUnix` is
/// a write right).
pub(super) fn filters(deny_udp: bool, deny_unix: bool) -> Result<Vec<BpfProgram>, SandboxError> {
    // The programs depend on the two flags only: compiled once per process
    // for each pair, then copied (a few hundred instructions).
    static BUILT: [[std::sync::OnceLock<Vec<BpfProgram>>; 2]; 2] = [
        [std::sync::OnceLock::new(), std::sync::OnceLock::new()],
        [std::sync::OnceLock::new(), std::sync::OnceLock::new()],
    ];
    let slot = &BUILT[usize::from(deny_udp)][usize::from(deny_unix)];
    if let Some(built) = slot.get() {
        return Ok(built.clone());
    }
    let built = compile(deny_udp, deny_unix)?;
    Ok(slot.get_or_init(|| built).clone())
}

/// [`filters`], compiled.
fn compile(deny_udp: bool, deny_unix: bool) -> Result<Vec<BpfProgram>, SandboxError> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
