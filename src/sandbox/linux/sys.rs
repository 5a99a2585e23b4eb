//! The system calls of the sandbox that rustix does not wrap, on libc: each
//! a small function around one `unsafe` call, safe to call wherever its
//! doc does not say otherwise.
//!
//! - `fork` and `_exit`: rustix has them only in its `runtime` module,
//!   which is for libc implementations (a raw `fork` would skip glibc's
//!   bookkeeping of the child);
//! - `signal` and `sigprocmask`: likewise, only in `runtime` (a raw
//!   `rt_sigaction` needs the restorer libc provides);
//! - `kill` with any signal number (rustix takes only the signals it
//!   names, or an `unsafe` conversion);
//! - `close_range` and `fcntl` on descriptors no one owns: closing every
//!   descriptor of a process, or marking them close-on-exec;
//! - `mount` with null source, type and data for a read-only remount
//!   (rustix's `mount_remount` passes a data string, and the read-only
//!   remounts are kept exactly as they were);
//! - `mount_setattr`, `landlock_create_ruleset`, `landlock_add_rule` and
//!   `landlock_restrict_self` (no wrapper in rustix);
//! - the `SIOCGIFFLAGS`/`SIOCSIFFLAGS` ioctls that bring an interface up.
//!
//! All of them are async-signal-safe: the code between fork and exec uses
//! them.
#![allow(unsafe_code)]

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};

use rustix::mount::MountFlags;
use rustix::process::Pid;

/// `Ok` for a non-negative result of a libc call, else `errno`.
fn check(result: libc::c_long) -> io::Result<libc::c_long> {
    if result < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(result)
    }
}

/// `fork()`: `Some(child)` in the parent, `None` in the child.
///
/// # Safety
///
/// This process may have other threads (the embedding program's, tokio's):
/// until it execs or ends, the child may make only async-signal-safe calls
/// (no allocation, no lock, no formatting, no panic), since the locks the
/// other threads held stay held in it. It must leave by
/// [`exit_now`] or an exec, never by returning into code that expects the
/// parent's threads or runs destructors of values the parent owns as well.
pub(super) unsafe fn fork() -> io::Result<Option<Pid>> {
    // SAFETY: fork takes no argument; what the child may do afterwards is
    // this function's caller's obligation.
    let pid = unsafe { libc::fork() };
    check(libc::c_long::from(pid)).map(|_| Pid::from_raw(pid))
}

/// `_exit(code)`: ends this process at once, without atexit handlers,
/// destructors or flushing std's buffers.
pub(super) fn exit_now(code: i32) -> ! {
    // SAFETY: _exit takes a plain integer, never returns and is
    // async-signal-safe; leaking every value of the process is sound.
    unsafe { libc::_exit(code) }
}

/// `kill(pid, sig)` with raw numbers (`-1`: every process this one may
/// signal); errors are ignored.
pub(super) fn kill_raw(pid: libc::pid_t, sig: libc::c_int) {
    // SAFETY: kill takes plain integers and touches no memory of this
    // process; it is async-signal-safe (a signal handler calls it).
    unsafe { libc::kill(pid, sig) };
}

/// `signal(sig, SIG_IGN)`.
pub(super) fn ignore_signal(sig: libc::c_int) {
    // SAFETY: SIG_IGN is no handler: no code of ours runs on the signal.
    unsafe { libc::signal(sig, libc::SIG_IGN) };
}

/// `signal(sig, SIG_DFL)`.
pub(super) fn default_signal(sig: libc::c_int) {
    // SAFETY: SIG_DFL is no handler: no code of ours runs on the signal.
    unsafe { libc::signal(sig, libc::SIG_DFL) };
}

/// `signal(sig, handler)`.
///
/// # Safety
///
/// `handler` runs in the middle of whatever this process is doing: it may
/// make only async-signal-safe calls.
pub(super) unsafe fn set_signal_handler(sig: libc::c_int, handler: extern "C" fn(libc::c_int)) {
    // SAFETY: a valid function pointer of the C signature signal(2)
    // expects; what it does is the caller's obligation.
    unsafe { libc::signal(sig, handler as libc::sighandler_t) };
}

/// Unblocks `sig` in this thread's signal mask.
pub(super) fn unblock_signal(sig: libc::c_int) {
    let mut set = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigemptyset initialises the set it is given a pointer to.
    unsafe { libc::sigemptyset(set.as_mut_ptr()) };
    // SAFETY: the set was initialised just above.
    unsafe { libc::sigaddset(set.as_mut_ptr(), sig) };
    // SAFETY: an initialised set to read, and no old set to write.
    unsafe { libc::sigprocmask(libc::SIG_UNBLOCK, set.as_ptr(), std::ptr::null_mut()) };
}

/// Closes every descriptor of this process but those in `keep` (at most
/// three; every descriptor when it is empty). Async-signal-safe.
///
/// # Safety
///
/// The descriptors closed belong to whoever opened them (std's error pipe,
/// the plan, the embedding program): nothing may use one of them, or drop
/// an `OwnedFd` holding one, after this call. Call it only in a forked
/// process that never returns into code that holds them.
pub(super) unsafe fn close_all_but(keep: &[RawFd]) {
    let mut kept = [0 as libc::c_uint; 3];
    let mut n = 0;
    for fd in keep.iter().filter(|fd| **fd >= 0).take(kept.len()) {
        kept[n] = *fd as libc::c_uint;
        n += 1;
    }
    let kept = &mut kept[..n];
    kept.sort_unstable();
    let mut from: libc::c_uint = 0;
    for &fd in kept.iter() {
        if fd > from {
            // SAFETY: plain integers; that nothing uses the descriptors
            // closed is this function's caller's obligation.
            unsafe { libc::close_range(from, fd - 1, 0) };
        }
        from = fd + 1;
    }
    // SAFETY: as above.
    unsafe { libc::close_range(from, libc::c_uint::MAX, 0) };
}

/// Marks every descriptor from `first` on close-on-exec with one
/// `close_range(CLOSE_RANGE_CLOEXEC)` (Linux 5.11); false when the kernel
/// refuses it.
pub(super) fn cloexec_from(first: libc::c_uint) -> bool {
    // SAFETY: plain integers; only the descriptors' flags change, which
    // no owner relies on staying clear until an exec.
    let result = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            first,
            libc::c_uint::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    result == 0
}

/// Sets `FD_CLOEXEC` on `fd` if it is open (one `fcntl` to read the flags,
/// one to write them).
pub(super) fn set_cloexec(fd: RawFd) {
    // SAFETY: F_GETFD takes no pointer; a number that is no descriptor
    // gets EBADF.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
    if flags >= 0 {
        // SAFETY: F_SETFD takes an integer and changes only the flag.
        unsafe { libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC) };
    }
}

/// `mount(NULL, path, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | locked,
/// NULL)`: makes the bind mount at `path` read-only, keeping the `locked`
/// flags (a user namespace may not clear them).
pub(super) fn remount_read_only(path: &CStr, locked: MountFlags) -> io::Result<()> {
    let flags =
        libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | libc::c_ulong::from(locked.bits());
    // SAFETY: a NUL-terminated path, and null pointers where mount(2)
    // takes them.
    let result = unsafe {
        libc::mount(
            std::ptr::null(),
            path.as_ptr(),
            std::ptr::null(),
            flags,
            std::ptr::null(),
        )
    };
    check(libc::c_long::from(result)).map(drop)
}

/// `struct mount_attr` (linux/mount.h), `MOUNT_ATTR_SIZE_VER0`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// `mount_setattr(dirfd, path, flags, {set, clear: 0})` (Linux 5.12).
pub(super) fn mount_setattr(
    dirfd: BorrowedFd<'_>,
    path: &CStr,
    flags: libc::c_uint,
    set: u64,
) -> io::Result<()> {
    let attr = MountAttr {
        attr_set: set,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: a NUL-terminated path and a local attribute of the size
    // given, which the kernel only reads.
    let result = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            dirfd.as_raw_fd(),
            path.as_ptr(),
            flags,
            &raw const attr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    check(result).map(drop)
}

/// Whether the kernel has `mount_setattr`: a call with invalid arguments
/// gets EBADF or EINVAL when it exists, ENOSYS when it does not.
pub(super) fn mount_setattr_exists() -> bool {
    // SAFETY: a null path and no attribute; the kernel rejects the call
    // before it touches memory.
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
    !(result < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS))
}

/// Landlock's ABI version:
/// `landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)`.
pub(super) fn landlock_abi() -> io::Result<u32> {
    // SAFETY: a null attribute of size 0, which the kernel does not read
    // with this flag.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32,
        )
    };
    if abi >= 1 {
        Ok(abi as u32)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// `struct landlock_path_beneath_attr` (linux/landlock.h), packed.
#[repr(C, packed)]
struct PathBeneath {
    allowed_access: u64,
    parent_fd: i32,
}

/// `landlock_add_rule(ruleset, LANDLOCK_RULE_PATH_BENEATH, {access,
/// parent})`.
pub(super) fn landlock_add_path_rule(
    ruleset: BorrowedFd<'_>,
    parent: BorrowedFd<'_>,
    access: u64,
) -> io::Result<()> {
    let attr = PathBeneath {
        allowed_access: access,
        parent_fd: parent.as_raw_fd(),
    };
    // SAFETY: two open descriptors and a local attribute laid out as
    // linux/landlock.h, which the kernel only reads.
    let added = unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset.as_raw_fd(),
            1 as libc::c_int, // LANDLOCK_RULE_PATH_BENEATH
            &raw const attr,
            0u32,
        )
    };
    check(added).map(drop)
}

/// `landlock_restrict_self(ruleset, 0)`: this thread is bound by the
/// ruleset from now on, and so is every process it starts.
pub(super) fn landlock_restrict_self(ruleset: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: an open descriptor and no flags; no memory is passed.
    let result =
        unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd(), 0u32) };
    check(result).map(drop)
}

/// `struct ifreq` (linux/if.h) with its union read as `ifr_flags`.
#[repr(C)]
struct IfFlags {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    rest: [u8; std::mem::size_of::<libc::ifreq>() - libc::IFNAMSIZ - 2],
}

const _: () = assert!(std::mem::size_of::<IfFlags>() == std::mem::size_of::<libc::ifreq>());

/// Sets `IFF_UP` on the interface `name` (at most 15 bytes) through the
/// socket `sock`: `SIOCGIFFLAGS`, then `SIOCSIFFLAGS`.
pub(super) fn set_interface_up(sock: BorrowedFd<'_>, name: &[u8]) -> io::Result<()> {
    let mut request = IfFlags {
        name: [0; libc::IFNAMSIZ],
        flags: 0,
        rest: [0; std::mem::size_of::<libc::ifreq>() - libc::IFNAMSIZ - 2],
    };
    let len = name.len().min(libc::IFNAMSIZ - 1);
    request.name[..len].copy_from_slice(&name[..len]);
    // SAFETY: an open socket and a local of the size of `struct ifreq`,
    // which the kernel reads and fills.
    let got = unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFFLAGS, &raw mut request) };
    check(libc::c_long::from(got))?;
    request.flags |= libc::IFF_UP as libc::c_short;
    // SAFETY: as above; the kernel only reads it.
    let set = unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCSIFFLAGS, &raw const request) };
    check(libc::c_long::from(set)).map(drop)
}

/// Blocks `sig` in this thread's signal mask (for [`wait_for_signal`]).
pub(super) fn block_signal(sig: libc::c_int) {
    let mut set = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigemptyset initialises the set it is given a pointer to.
    unsafe { libc::sigemptyset(set.as_mut_ptr()) };
    // SAFETY: the set was initialised just above.
    unsafe { libc::sigaddset(set.as_mut_ptr(), sig) };
    // SAFETY: an initialised set to read, and no old set to write.
    unsafe { libc::sigprocmask(libc::SIG_BLOCK, set.as_ptr(), std::ptr::null_mut()) };
}

/// `sigtimedwait` for the blocked `sig`, at most `millis`: returns when it
/// arrives (it is then consumed), when the time is up, or when a handled
/// signal interrupts the wait. Async-signal-safe (a plain syscall).
pub(super) fn wait_for_signal(sig: libc::c_int, millis: u32) {
    let mut set = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigemptyset initialises the set it is given a pointer to.
    unsafe { libc::sigemptyset(set.as_mut_ptr()) };
    // SAFETY: the set was initialised just above.
    unsafe { libc::sigaddset(set.as_mut_ptr(), sig) };
    let timeout = libc::timespec {
        tv_sec: libc::time_t::from(millis / 1000),
        tv_nsec: libc::c_long::from(millis % 1000) * 1_000_000,
    };
    // SAFETY: an initialised set and a timeout to read; no info to write.
    unsafe { libc::sigtimedwait(set.as_ptr(), std::ptr::null_mut(), &raw const timeout) };
}

/// `sysconf(_SC_PAGESIZE)`, 4096 when it fails. Not for a forked child
/// (glibc's sysconf may read files); call it before the fork.
pub(super) fn page_size() -> u64 {
    // SAFETY: sysconf takes a plain integer and touches no memory of ours.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(size).ok().filter(|s| *s > 0).unwrap_or(4096)
}

/// `sysconf(_SC_CLK_TCK)`, the unit of `/proc/PID/stat`'s CPU times (100
/// when it fails). Before the fork, as [`page_size`].
pub(super) fn clock_ticks() -> u64 {
    // SAFETY: as above.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(ticks).ok().filter(|t| *t > 0).unwrap_or(100)
}

/// `clock_gettime(CLOCK_MONOTONIC)` in milliseconds. Async-signal-safe.
pub(super) fn monotonic_ms() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a local timespec for the kernel (or the vDSO) to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &raw mut now) };
    let secs = u64::try_from(now.tv_sec).unwrap_or(0);
    let millis = u64::try_from(now.tv_nsec).unwrap_or(0) / 1_000_000;
    secs.saturating_mul(1000).saturating_add(millis)
}
