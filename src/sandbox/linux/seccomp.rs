//! The seccomp filters of a confined command, built before the fork and
//! applied in S: several rule sets, each compiled by seccompiler, laid
//! end to end as one BPF program (one attach per command, one run per
//! system call).

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

/// [`filters`], compiled: the programs of [`separate`] as one when they
/// can be ([`merged`]).
fn compile(deny_udp: bool, deny_unix: bool) -> Result<Vec<BpfProgram>, SandboxError> {
    let programs = separate(deny_udp, deny_unix)?;
    Ok(match merged(&programs) {
        Some(one) => vec![one],
        None => programs,
    })
}

/// The programs of [`filters`], each of its own, in the order they would
/// be installed.
fn separate(deny_udp: bool, deny_unix: bool) -> Result<Vec<BpfProgram>, SandboxError> {
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

/// The longest program the kernel takes (`BPF_MAXINSNS`).
const MAX_INSTRUCTIONS: usize = 4096;

/// The programs `programs` (in the order they would be installed) as one:
/// one attach per command instead of one per program (each attach
/// translates and compiles its program, a cost paid before every exec),
/// and one run per system call instead of several.
///
/// The programs are laid end to end, the last installed first, and every
/// `allow` of each but the last becomes a jump to the start of the next,
/// so the first refusal met decides. That is the kernel's rule for
/// separate filters here: it runs them all and keeps the refusal of the
/// highest precedence, among refusals of one kind the most recently
/// installed filter's; these programs refuse with an errno only, but for
/// a kill on a foreign architecture, which each makes at its start (after
/// the same x32 check), so the first program run meets it exactly when
/// any would. `None`, and the programs stay separate, when any program
/// returns something else (another action, a value computed at run time,
/// or a kill outside the start every program shares), or the whole would
/// be longer than the kernel allows.
/// `a_merged_program_decides_as_the_separate_filters` checks the rule
/// against the kernel's on every call the programs name.
fn merged(programs: &[BpfProgram]) -> Option<BpfProgram> {
    use seccompiler::sock_filter;
    const RET_K: u16 = (libc::BPF_RET | libc::BPF_K) as u16;
    const JA: u16 = (libc::BPF_JMP | libc::BPF_JA) as u16;
    if programs.len() < 2 {
        return None;
    }
    let total: usize = programs.iter().map(Vec::len).sum();
    if total > MAX_INSTRUCTIONS {
        return None;
    }
    // The instructions every program starts with: a kill there is met by
    // the first program run exactly when by any.
    let shared = (0..programs.iter().map(Vec::len).min().unwrap_or(0))
        .take_while(|&at| programs.iter().all(|p| p[at] == programs[0][at]))
        .count();
    let mut out: Vec<sock_filter> = Vec::with_capacity(total);
    let count = programs.len();
    for (i, program) in programs.iter().rev().enumerate() {
        let next = out.len() + program.len();
        let last = i + 1 == count;
        for (at, insn) in program.iter().enumerate() {
            let class = u32::from(insn.code) & 0x07;
            if class == libc::BPF_RET && insn.code != RET_K {
                return None;
            }
            if insn.code != RET_K {
                out.push(insn.clone());
                continue;
            }
            match insn.k & libc::SECCOMP_RET_ACTION_FULL {
                libc::SECCOMP_RET_ALLOW if !last => {
                    let here = out.len();
                    out.push(sock_filter {
                        code: JA,
                        jt: 0,
                        jf: 0,
                        k: u32::try_from(next - here - 1).ok()?,
                    });
                }
                libc::SECCOMP_RET_ALLOW | libc::SECCOMP_RET_ERRNO => out.push(insn.clone()),
                libc::SECCOMP_RET_KILL_PROCESS | libc::SECCOMP_RET_KILL_THREAD if at < shared => {
                    out.push(insn.clone());
                }
                _ => return None,
            }
        }
    }
    Some(out)
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
        let programs = separate(true, true).unwrap();
        assert!(programs.len() >= 4, "families, io_uring, keyrings, set-id");
        for program in programs.iter().chain(&filters(true, true).unwrap()) {
            assert_eq!(program[0].k, 0, "loads the number");
            assert_eq!(program[1].k, 0x4000_0000);
            assert_eq!(program[2].k, libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32);
        }
    }

    /// A classic BPF interpreter for what seccompiler and [`merged`]
    /// emit; an instruction it does not know fails the test.
    fn run(program: &[seccompiler::sock_filter], data: &[u8; 64]) -> u32 {
        let mut acc: u32 = 0;
        let mut pc = 0usize;
        loop {
            let insn = &program[pc];
            let code = u32::from(insn.code);
            let jump = |taken: bool| 1 + usize::from(if taken { insn.jt } else { insn.jf });
            pc += match code {
                c if c == libc::BPF_LD | libc::BPF_W | libc::BPF_ABS => {
                    let at = insn.k as usize;
                    acc = u32::from_ne_bytes(data[at..at + 4].try_into().unwrap());
                    1
                }
                c if c == libc::BPF_ALU | libc::BPF_AND | libc::BPF_K => {
                    acc &= insn.k;
                    1
                }
                c if c == libc::BPF_JMP | libc::BPF_JA => 1 + insn.k as usize,
                c if c == libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K => jump(acc == insn.k),
                c if c == libc::BPF_JMP | libc::BPF_JGT | libc::BPF_K => jump(acc > insn.k),
                c if c == libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K => jump(acc >= insn.k),
                c if c == libc::BPF_RET | libc::BPF_K => return insn.k,
                other => panic!("instruction {other:#x} at {pc}"),
            };
        }
    }

    /// What the kernel gives for separate filters installed in order: it
    /// runs them from the last installed, and keeps a result only for a
    /// strictly higher precedence (a lower action as a signed number).
    fn kernel(programs: &[BpfProgram], data: &[u8; 64]) -> u32 {
        let action = |ret: u32| (ret & libc::SECCOMP_RET_ACTION_FULL) as i32;
        let mut ret = libc::SECCOMP_RET_ALLOW;
        for program in programs.iter().rev() {
            let now = run(program, data);
            if action(now) < action(ret) {
                ret = now;
            }
        }
        ret
    }

    fn seccomp_data(nr: u32, arch: u32, args: [u64; 6]) -> [u8; 64] {
        let mut data = [0u8; 64];
        data[0..4].copy_from_slice(&nr.to_ne_bytes());
        data[4..8].copy_from_slice(&arch.to_ne_bytes());
        for (i, arg) in args.iter().enumerate() {
            data[16 + 8 * i..24 + 8 * i].copy_from_slice(&arg.to_ne_bytes());
        }
        data
    }

    /// Argument values the rules look at, and their neighbours.
    fn telling_values() -> Vec<u64> {
        let mut values: Vec<u64> = vec![0, 1, u64::from(u32::MAX), u64::MAX];
        for family in [
            libc::AF_UNIX,
            libc::AF_INET,
            libc::AF_INET6,
            libc::AF_NETLINK,
            libc::AF_PACKET,
        ] {
            values.push(family as u64);
        }
        for kind in [libc::SOCK_STREAM, libc::SOCK_DGRAM, libc::SOCK_RAW] {
            values.push(kind as u64);
            values.push((kind | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK) as u64);
        }
        for flags in [
            0,
            libc::O_CREAT,
            libc::O_TMPFILE,
            libc::O_CREAT | libc::O_RDWR,
        ] {
            for mode in [0o644, libc::S_ISUID | 0o755, libc::S_ISGID | 0o755, 0o7777] {
                values.push(flags as u64);
                values.push(u64::from(mode));
                values.push((flags as u64) | (u64::from(mode) << 32));
            }
        }
        values.sort_unstable();
        values.dedup();
        values
    }

    /// The merged program decides every call as the kernel does for the
    /// separate filters: every system call number (and the x32 ones) on
    /// this architecture and a foreign one, each with the argument values
    /// the rules look at in the first four arguments.
    #[test]
    fn a_merged_program_decides_as_the_separate_filters() {
        let Some(arch) = target_arch() else {
            return;
        };
        let native = arch_audit_value(arch);
        let values = telling_values();
        for (deny_udp, deny_unix) in [(false, false), (true, false), (false, true), (true, true)] {
            let programs = separate(deny_udp, deny_unix).unwrap();
            let one = merged(&programs).expect("the filters merge");
            assert_eq!(filters(deny_udp, deny_unix).unwrap(), vec![one.clone()]);
            let mut refused = 0;
            for nr in (0..=470).chain([0x4000_0000, 0x4000_0029, u32::MAX]) {
                // Every pair of values for the calls the rules name; a
                // few for the others.
                let named = named_calls().contains(&i64::from(nr));
                let firsts = if named { &values[..] } else { &values[..3] };
                for arch in [native, 0x4000_0003] {
                    for (i, a) in firsts.iter().enumerate() {
                        // Every value in the first two arguments, and in
                        // the third and fourth a value a step along.
                        let b = values[(i * 7 + nr as usize) % values.len()];
                        for second in if named { &values[..] } else { &values[..2] } {
                            let data = seccomp_data(nr, arch, [*a, *second, b, b, 0, 0]);
                            let want = kernel(&programs, &data);
                            assert_eq!(
                                run(&one, &data),
                                want,
                                "nr {nr} arch {arch:#x} {a} {second} {b}"
                            );
                            refused += usize::from(want != libc::SECCOMP_RET_ALLOW);
                        }
                    }
                }
            }
            assert!(refused > 0, "some calls are refused");
        }
    }

    /// The system calls the rules name.
    fn named_calls() -> Vec<i64> {
        let mut calls = vec![
            libc::SYS_socket,
            libc::SYS_socketpair,
            libc::SYS_io_uring_setup,
            libc::SYS_keyctl,
            libc::SYS_add_key,
            libc::SYS_request_key,
            libc::SYS_fchmod,
            libc::SYS_fchmodat,
            libc::SYS_fchmodat2,
            libc::SYS_openat,
            libc::SYS_openat2,
            libc::SYS_mknodat,
        ];
        #[cfg(target_arch = "x86_64")]
        calls.extend([
            libc::SYS_chmod,
            libc::SYS_open,
            libc::SYS_creat,
            libc::SYS_mknod,
        ]);
        calls
    }

    /// A kill anywhere but in the start every program shares, or an
    /// action other than allow, errno and kill, keeps the programs
    /// separate: the first refusal met would not be the kernel's choice.
    #[test]
    fn programs_that_refuse_otherwise_stay_separate() {
        let programs = separate(false, false).unwrap();
        assert!(merged(&programs).is_some());
        for action in [
            libc::SECCOMP_RET_KILL_PROCESS,
            libc::SECCOMP_RET_TRAP,
            libc::SECCOMP_RET_LOG,
        ] {
            let mut changed = programs.clone();
            let last = changed[1].len() - 1;
            changed[1][last].k = action;
            assert!(merged(&changed).is_none(), "{action:#x}");
        }
    }

    fn arch_audit_value(arch: TargetArch) -> u32 {
        match arch {
            TargetArch::x86_64 => 0xc000_003e,
            TargetArch::aarch64 => 0xc000_00b7,
            TargetArch::riscv64 => 0xc000_00f3,
        }
    }

    proptest::proptest! {
        /// The same, for any call.
        #[test]
        fn any_call_is_decided_by_the_merged_program_as_by_the_separate_ones(
            nr in proptest::prop_oneof![0u32..500, proptest::prelude::any::<u32>()],
            native in proptest::prelude::any::<bool>(),
            args in proptest::prelude::any::<[u64; 6]>(),
            deny_udp in proptest::prelude::any::<bool>(),
            deny_unix in proptest::prelude::any::<bool>(),
        ) {
            if let Some(arch) = target_arch() {
                let arch = if native { arch_audit_value(arch) } else { 0x4000_0003 };
                let programs = separate(deny_udp, deny_unix).unwrap();
                let one = merged(&programs).unwrap();
                let data = seccomp_data(nr, arch, args);
                proptest::prop_assert_eq!(run(&one, &data), kernel(&programs, &data));
            }
        }
    }
}
