//! The code that runs between fork and exec: the three processes of a
//! confined command, M (namespaces and mounts), G (PID 1 of the new PID
//! namespace, mounts `/proc` and reaps) and S (Landlock, seccomp, no
//! capabilities, then the exec std does).
//!
//! Everything here runs in a child forked from a multithreaded process, so
//! it makes raw, async-signal-safe syscalls only, on data prepared before
//! the fork ([`Plan`]): no allocation, no lock, no panic path.
// The whole module is `unsafe` by nature: each function wraps libc calls
// whose arguments are pointers into the plan (NUL-terminated `CString`s,
// stack buffers of the stated length) and fds the plan owns.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use seccompiler::BpfProgram;

/// Everything the child needs, computed before the fork.
#[derive(Debug)]
pub(super) struct Plan {
    /// `None`: no user namespace, so no namespaces at all.
    pub(super) namespaces: Option<Namespaces>,
    /// The Landlock ruleset (`O_CLOEXEC`), or `None` without Landlock.
    pub(super) ruleset: Option<OwnedFd>,
    /// Seccomp programs, applied in order.
    pub(super) filters: Vec<BpfProgram>,
    /// The command's working directory, entered again after `unshare`.
    pub(super) cwd: CString,
    /// The write end of the pipe that tells the parent which step failed
    /// (see [`Step`]).
    pub(super) failure: OwnedFd,
    /// The capabilities the command keeps (a bit per capability number):
    /// none, or for root the file-access ones (see [`ROOT_KEEPS`]).
    pub(super) keep_caps: u64,
    /// With Landlock and a mount namespace: the access rights (directory,
    /// file) S grants on its own `/dev/pts` and `/dev/ptmx`, which M
    /// mounted fresh and which the parent's rules cannot name.
    pub(super) pts_access: Option<(u64, u64)>,
}

/// What root keeps inside: `CAP_DAC_OVERRIDE` and `CAP_DAC_READ_SEARCH`,
/// so that files of other users stay as readable and writable as outside
/// (CI checkouts owned by another uid); Landlock and the read-only mounts
/// bind root all the same. `CAP_CHOWN` and `CAP_FOWNER` are dropped with
/// every other one: root inside can neither give a file away nor change
/// the mode, times or attributes of a file it does not own.
pub(super) const ROOT_KEEPS: u64 = (1 << 1) | (1 << 2);

/// The most folders [`Namespaces::writable`] and [`Namespaces::binds`]
/// may hold together (the child keeps their descriptors on its stack).
pub(super) const MAX_WRITABLE_MOUNTS: usize = 64;

/// `struct mount_attr` (linux/mount.h), `MOUNT_ATTR_SIZE_VER0`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NOSUID: u64 = 0x2;
const OPEN_TREE_CLONE: libc::c_uint = 1;
const AT_RECURSIVE: libc::c_uint = 0x8000;
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;
const MOVE_MOUNT_T_EMPTY_PATH: libc::c_uint = 0x40;

/// `mount_setattr(dirfd, path, flags, {set, clear})`.
fn mount_setattr(
    dirfd: libc::c_int,
    path: &std::ffi::CStr,
    flags: libc::c_uint,
    set: u64,
) -> io::Result<()> {
    let attr = MountAttr {
        attr_set: set,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: a NUL-terminated path and a local attribute of the size given.
    let result = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            dirfd,
            path.as_ptr(),
            flags,
            &raw const attr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    check(result as libc::c_int)
}

/// The namespaces and mounts of M.
#[derive(Debug)]
pub(super) struct Namespaces {
    /// `CLONE_NEW*` flags besides `CLONE_NEWUSER` (and `CLONE_NEWNET` in
    /// a shared network namespace).
    pub(super) flags: libc::c_int,
    /// The session's user and network namespaces, entered instead of
    /// making a user namespace (and then no maps are written).
    pub(super) shared: Option<std::sync::Arc<super::session_net::SessionNet>>,
    /// `uid_map` and `gid_map` text.
    pub(super) uid_map: Vec<u8>,
    pub(super) gid_map: Vec<u8>,
    /// Root: a helper left in the parent user namespace writes the
    /// identity maps of every id (M may not, once unshared).
    pub(super) root_helper: bool,
    /// The single-id maps M writes itself when the helper fails (a root
    /// without the whole id range, e.g. in a container).
    pub(super) fallback_uid_map: Vec<u8>,
    pub(super) fallback_gid_map: Vec<u8>,
    /// Folders bound onto themselves first, so that they cannot be renamed
    /// or removed (EBUSY): the ancestors, inside a writable root, of the
    /// hidden and protected paths, which would otherwise be moved out from
    /// under the next command's mounts.
    pub(super) pins: Vec<CString>,
    pub(super) hidden_dirs: Vec<CString>,
    pub(super) hidden_files: Vec<CString>,
    /// `(source, target)` plain binds (the session's shm dir on `/dev/shm`),
    /// read-write over the read-only tree.
    pub(super) binds: Vec<(CString, CString)>,
    /// The folders that stay writable (the writable roots, the temporary
    /// directory), bound read-write onto themselves over the read-only
    /// tree; one that is no longer a directory (or is now a symbolic link)
    /// stays read-only.
    pub(super) writable: Vec<CString>,
    /// Every mount point of the parent's tree (with its locked flags),
    /// remounted read-only one by one on a kernel without
    /// `mount_setattr` (before Linux 5.12).
    pub(super) mount_points: Vec<(CString, libc::c_ulong)>,
    /// Read-only binds with the mount flags locked on their mount.
    pub(super) read_only: Vec<(CString, libc::c_ulong)>,
}

impl Namespaces {
    fn has(&self, flag: libc::c_int) -> bool {
        self.flags & flag != 0
    }
}

/// A step of the setup, reported with an index (which hidden path, which
/// read-only bind) over the failure pipe when it fails, so the parent can
/// say more than the errno std passes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum Step {
    Namespaces = 1,
    Loopback,
    PrivateMounts,
    HiddenDir,
    HiddenFile,
    Bind,
    ReadOnly,
    Fork,
    Proc,
    Landlock,
    Seccomp,
    Chdir,
    Pin,
    ReadOnlyRoot,
    Writable,
}

impl Step {
    pub(super) fn from_u8(byte: u8) -> Option<Step> {
        use Step::*;
        [
            Namespaces,
            Loopback,
            PrivateMounts,
            HiddenDir,
            HiddenFile,
            Bind,
            ReadOnly,
            Fork,
            Proc,
            Landlock,
            Seccomp,
            Chdir,
            Pin,
            ReadOnlyRoot,
            Writable,
        ]
        .into_iter()
        .find(|step| *step as u8 == byte)
    }
}

/// Writes the failed step to the failure pipe and passes the error on.
struct Reporter(libc::c_int);

impl Reporter {
    fn fail(&self, step: Step, index: usize, error: io::Error) -> io::Error {
        let index = u16::try_from(index).unwrap_or(u16::MAX).to_le_bytes();
        let record = [step as u8, 0, index[0], index[1]];
        // SAFETY: a four-byte write from a local; a pipe write of that size
        // is atomic, and the pipe is empty (one record per command).
        unsafe { libc::write(self.0, record.as_ptr().cast(), record.len()) };
        error
    }
}

fn check(result: libc::c_int) -> io::Result<()> {
    if result < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// [`check`], with `ENOENT` taken for success.
fn skip_if_gone(result: libc::c_int) -> io::Result<()> {
    match check(result) {
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(()),
        other => other,
    }
}

fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Writes `data` to the file `path` (NUL-terminated) in one `write`.
fn write_file(path: &[u8], data: &[u8]) -> io::Result<()> {
    // SAFETY: `path` is NUL-terminated (every caller passes a literal with
    // `\0` or a buffer it terminated); `data` is a valid slice.
    unsafe {
        let fd = libc::open(path.as_ptr().cast(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let written = libc::write(fd, data.as_ptr().cast(), data.len());
        let error = io::Error::last_os_error();
        libc::close(fd);
        if written != data.len() as isize {
            return Err(error);
        }
    }
    Ok(())
}

/// Brings the loopback interface of a new network namespace up, by ioctl
/// (no `ip` binary, no netlink).
pub(super) fn loopback_up() -> io::Result<()> {
    // SAFETY: plain syscalls on a socket this function owns and a zeroed
    // `ifreq` on the stack.
    unsafe {
        let sock = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        check(sock)?;
        let mut ifr: libc::ifreq = std::mem::zeroed();
        ifr.ifr_name[0] = b'l' as libc::c_char;
        ifr.ifr_name[1] = b'o' as libc::c_char;
        let mut result = libc::ioctl(sock, libc::SIOCGIFFLAGS, &mut ifr);
        if result == 0 {
            ifr.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
            result = libc::ioctl(sock, libc::SIOCSIFFLAGS, &mut ifr);
        }
        let error = io::Error::last_os_error();
        libc::close(sock);
        if result < 0 {
            return Err(error);
        }
    }
    Ok(())
}

/// Writes `/proc/<pid>/<name>` into `buf`, NUL-terminated, and returns its
/// length without the NUL. procfs rejects leading zeros, so digits only.
fn proc_path(buf: &mut [u8; 48], pid: libc::pid_t, name: &[u8]) -> usize {
    let mut len = 0;
    for b in b"/proc/" {
        buf[len] = *b;
        len += 1;
    }
    let mut digits = [0u8; 10];
    let mut count = 0;
    let mut n = pid.unsigned_abs();
    loop {
        digits[count] = b'0' + (n % 10) as u8;
        n /= 10;
        count += 1;
        if n == 0 {
            break;
        }
    }
    while count > 0 {
        count -= 1;
        buf[len] = digits[count];
        len += 1;
    }
    buf[len] = b'/';
    len += 1;
    for b in name {
        buf[len] = *b;
        len += 1;
    }
    buf[len] = 0;
    len
}

/// `waitpid` until `pid` ends (reaping any other child when `reap_all`),
/// writes its raw wait status to `report` when given, then `_exit`s with
/// its code, a death by signal as `128 + signal`.
fn exit_with(pid: libc::pid_t, reap_all: bool, report: Option<libc::c_int>) -> ! {
    let status = wait_for(pid, reap_all);
    if let Some(fd) = report {
        // SAFETY: a 4-byte write from a local; a failed write leaves M
        // with G's own status.
        unsafe { libc::write(fd, (&raw const status).cast(), 4) };
    }
    // SAFETY: _exit never returns and is async-signal-safe.
    unsafe { libc::_exit(code_of(status)) }
}

/// M's end: waits for G, then ends as the command's shell ended, whose
/// raw status G sent through `relay`: with its exit code, or killed by the
/// same signal, so that the caller sees `Killed by signal 9` and not exit
/// code 137. Without a status from G (G itself was killed), as G ended.
///
/// While it waits, M checks five times a second that its parent (the
/// embedding process, `parent`) is alive: when that process dies, even by
/// SIGKILL, M is reparented and kills G, and with it the whole PID
/// namespace. (`PR_SET_PDEATHSIG` would fire when the *thread* that
/// spawned M ends, which a thread pool does at any time.)
fn end_like_the_shell(init: libc::pid_t, relay: libc::c_int, parent: libc::pid_t) -> ! {
    if parent > 0 {
        let mut fds = [libc::pollfd {
            fd: relay,
            events: libc::POLLIN,
            revents: 0,
        }];
        loop {
            // SAFETY: poll on a local pollfd; getppid and kill take plain
            // values.
            let ready = unsafe { libc::poll(fds.as_mut_ptr(), 1, 200) };
            if ready < 0 && errno() == libc::EINTR {
                continue;
            }
            if ready != 0 {
                break;
            }
            if unsafe { libc::getppid() } != parent {
                unsafe { libc::kill(init, libc::SIGKILL) };
                break;
            }
        }
    }
    let own = wait_for(init, false);
    let mut relayed: libc::c_int = 0;
    // SAFETY: a 4-byte read into a local; G's write end is closed (G is
    // dead), so it cannot block.
    let n = unsafe { libc::read(relay, (&raw mut relayed).cast(), 4) };
    let status = if n == 4 { relayed } else { own };
    if libc::WIFSIGNALED(status) {
        let sig = libc::WTERMSIG(status);
        // SAFETY: signal, sigprocmask and kill on this process with plain
        // values; the default action of a signal that killed a process
        // ends this one too.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, sig);
            libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::kill(libc::getpid(), sig);
        }
    }
    // SAFETY: _exit never returns and is async-signal-safe.
    unsafe { libc::_exit(code_of(status)) }
}

/// `waitpid` until `pid` ends (reaping any other child when `reap_all`);
/// its raw status, or that of an exit with code 125 when waiting fails.
fn wait_for(pid: libc::pid_t, reap_all: bool) -> libc::c_int {
    loop {
        let mut status = 0;
        // SAFETY: waitpid with a valid pointer to a local.
        let waited = unsafe { libc::waitpid(if reap_all { -1 } else { pid }, &mut status, 0) };
        if waited < 0 && errno() != libc::EINTR {
            return 125 << 8;
        }
        if waited == pid {
            return status;
        }
    }
}

/// The exit code standing for a raw wait status: its code, or `128 +
/// signal`.
fn code_of(status: libc::c_int) -> libc::c_int {
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    }
}

/// Closes every fd but those in `keep` (every fd when it is empty).
fn close_all_but(keep: &[libc::c_int]) {
    let mut kept = [0 as libc::c_uint; 3];
    let mut n = 0;
    for fd in keep.iter().filter(|fd| **fd >= 0).take(kept.len()) {
        kept[n] = *fd as libc::c_uint;
        n += 1;
    }
    let kept = &mut kept[..n];
    kept.sort_unstable();
    let mut from: libc::c_uint = 0;
    // SAFETY: close_range takes plain integers; no fd is used afterwards
    // but those kept.
    unsafe {
        for &fd in kept.iter() {
            if fd > from {
                libc::close_range(from, fd - 1, 0);
            }
            from = fd + 1;
        }
        libc::close_range(from, libc::c_uint::MAX, 0);
    }
}

/// Runs in the forked child: builds the sandbox around it, and returns
/// only in S, for std to exec the command; M and G never return.
pub(super) fn enter(plan: &Plan) -> io::Result<()> {
    // SAFETY: setsid has no arguments. It fails with EPERM when an earlier
    // `pre_exec` closure made this process a session leader already.
    unsafe { libc::setsid() };
    // SAFETY: getppid has no arguments. The embedding process, whose death
    // M watches for.
    let parent = unsafe { libc::getppid() };
    let report = Reporter(plan.failure.as_raw_fd());
    if let Some(ns) = &plan.namespaces {
        unshare_and_map(ns).map_err(|e| report.fail(Step::Namespaces, 0, e))?;
        if ns.has(libc::CLONE_NEWNET) && ns.shared.is_none() {
            loopback_up().map_err(|e| report.fail(Step::Loopback, 0, e))?;
        }
        if ns.has(libc::CLONE_NEWNS) {
            mount_all(ns).map_err(|(step, index, e)| report.fail(step, index, e))?;
        }
        if ns.has(libc::CLONE_NEWPID) {
            fork_init(ns.has(libc::CLONE_NEWNS), parent, &report)?;
            // Only S gets here.
            // SAFETY: as above; S is a new process, not a group leader.
            unsafe { libc::setsid() };
        }
    }
    restrict(plan, &report)
}

/// `unshare` and the id maps: M's own single-id maps, or for root the
/// identity of every id, written by a helper that stays outside.
fn unshare_and_map(ns: &Namespaces) -> io::Result<()> {
    if let Some(shared) = &ns.shared {
        // The user namespace first: `nobody` may not enter the network
        // namespace from outside it.
        // SAFETY: setns and unshare with fds the plan holds, and flags.
        unsafe {
            check(libc::setns(shared.user.as_raw_fd(), libc::CLONE_NEWUSER))?;
            check(libc::setns(shared.net.as_raw_fd(), libc::CLONE_NEWNET))?;
            return check(libc::unshare(ns.flags & !libc::CLONE_NEWNET));
        }
    }
    let flags = libc::CLONE_NEWUSER | ns.flags;
    if !ns.root_helper {
        // SAFETY: unshare takes flags only.
        check(unsafe { libc::unshare(flags) })?;
        return write_own_maps(&ns.uid_map, &ns.gid_map);
    }
    let mut go = [0; 2];
    let mut done = [0; 2];
    // SAFETY: pipe2 fills the two-element arrays.
    unsafe {
        check(libc::pipe2(go.as_mut_ptr(), libc::O_CLOEXEC))?;
        check(libc::pipe2(done.as_mut_ptr(), libc::O_CLOEXEC))?;
    }
    // SAFETY: getpid and fork have no arguments; the helper branch only
    // reads, writes and exits.
    let me = unsafe { libc::getpid() };
    let helper = unsafe { libc::fork() };
    check(helper)?;
    if helper == 0 {
        let mut byte = [0u8; 1];
        // SAFETY: one-byte reads and writes on the pipes made above.
        unsafe { libc::read(go[0], byte.as_mut_ptr().cast(), 1) };
        let mut path = [0u8; 48];
        let len = proc_path(&mut path, me, b"uid_map");
        let uid_ok = write_file(&path[..=len], &ns.uid_map).is_ok();
        let len = proc_path(&mut path, me, b"gid_map");
        let gid_ok = write_file(&path[..=len], &ns.gid_map).is_ok();
        let ok = [u8::from(uid_ok && gid_ok)];
        // SAFETY: as above, then exit without running any destructor.
        unsafe {
            libc::write(done[1], ok.as_ptr().cast(), 1);
            libc::_exit(0);
        }
    }
    // SAFETY: unshare takes flags; the reads and writes are one byte on the
    // pipes above; waitpid reaps the helper.
    let unshared = check(unsafe { libc::unshare(flags) });
    let mut ok = [0u8; 1];
    unsafe {
        libc::write(go[1], b"x".as_ptr().cast(), 1);
        libc::read(done[0], ok.as_mut_ptr().cast(), 1);
        let mut status = 0;
        libc::waitpid(helper, &mut status, 0);
        for fd in go.into_iter().chain(done) {
            libc::close(fd);
        }
    }
    unshared?;
    if ok[0] == 1 {
        Ok(())
    } else {
        write_own_maps(&ns.fallback_uid_map, &ns.fallback_gid_map)
    }
}

/// Writes this process's id maps after `unshare(CLONE_NEWUSER)`.
///
/// The files of a non-dumpable process (the bash tool makes agentcore so,
/// and a fork inherits it) belong to root, so an unprivileged process
/// cannot open its own maps. It is made dumpable for the three writes only
/// and non-dumpable again at once: a process that could read its memory in
/// that window runs outside the sandbox as the same user (one the user
/// approved), not inside it (the command does not exist yet).
pub(super) fn write_own_maps(uid_map: &[u8], gid_map: &[u8]) -> io::Result<()> {
    // SAFETY: prctl with integer arguments.
    let dumpable = unsafe { libc::prctl(libc::PR_GET_DUMPABLE) };
    if dumpable == 0 {
        // SAFETY: as above.
        unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 1) };
    }
    let written = (|| {
        // `setgroups` must be denied before an unprivileged `gid_map` write.
        write_file(b"/proc/self/setgroups\0", b"deny")?;
        write_file(b"/proc/self/uid_map\0", uid_map)?;
        write_file(b"/proc/self/gid_map\0", gid_map)
    })();
    if dumpable == 0 {
        // SAFETY: as above.
        unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0) };
    }
    written
}

/// The mounts, in a private copy of the mount tree: hidden directories
/// under an empty tmpfs, hidden files under `/dev/null`, the plain binds,
/// then the read-only binds (their remount keeps the locked flags, or a
/// user namespace gets EPERM).
fn mount_all(ns: &Namespaces) -> Result<(), (Step, usize, io::Error)> {
    let null = std::ptr::null::<libc::c_char>();
    // SAFETY: every path is a NUL-terminated CString of the plan or a C
    // literal; null pointers where mount(2) accepts them.
    unsafe {
        check(libc::mount(
            null,
            c"/".as_ptr(),
            null,
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ))
        .map_err(|e| (Step::PrivateMounts, 0, e))?;
    }
    read_only_tree(ns)?;
    // SAFETY: as above.
    unsafe {
        // Terminals of its own: a fresh devpts instance, so that the
        // user's terminals (/dev/pts/N) can be neither written (escape
        // sequences, fake prompts) nor read; an empty /dev/pts if the
        // kernel refuses one.
        let devpts = libc::mount(
            c"devpts".as_ptr(),
            c"/dev/pts".as_ptr(),
            c"devpts".as_ptr(),
            libc::MS_NOSUID | libc::MS_NOEXEC,
            c"newinstance,ptmxmode=0666,mode=0620".as_ptr().cast(),
        );
        if devpts == 0 {
            check(libc::mount(
                c"/dev/pts/ptmx".as_ptr(),
                c"/dev/ptmx".as_ptr(),
                null,
                libc::MS_BIND,
                std::ptr::null(),
            ))
            .map_err(|e| (Step::PrivateMounts, 1, e))?;
        } else {
            check(libc::mount(
                c"tmpfs".as_ptr(),
                c"/dev/pts".as_ptr(),
                c"tmpfs".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                c"mode=0755,size=16k".as_ptr().cast(),
            ))
            .map_err(|e| (Step::PrivateMounts, 1, e))?;
        }
        for (index, dir) in ns.pins.iter().enumerate() {
            check(libc::mount(
                dir.as_ptr(),
                dir.as_ptr(),
                null,
                libc::MS_BIND,
                std::ptr::null(),
            ))
            .map_err(|e| (Step::Pin, index, e))?;
        }
        for (index, dir) in ns.hidden_dirs.iter().enumerate() {
            // A path gone since the plan (another session's folder removed
            // meanwhile) has nothing left to hide.
            skip_if_gone(libc::mount(
                c"tmpfs".as_ptr(),
                dir.as_ptr(),
                c"tmpfs".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                c"mode=0755,size=16k".as_ptr().cast(),
            ))
            .map_err(|e| (Step::HiddenDir, index, e))?;
        }
        for (index, file) in ns.hidden_files.iter().enumerate() {
            skip_if_gone(libc::mount(
                c"/dev/null".as_ptr(),
                file.as_ptr(),
                null,
                libc::MS_BIND,
                std::ptr::null(),
            ))
            .map_err(|e| (Step::HiddenFile, index, e))?;
        }
        for (index, (path, locked)) in ns.read_only.iter().enumerate() {
            check(libc::mount(
                path.as_ptr(),
                path.as_ptr(),
                null,
                libc::MS_BIND | libc::MS_REC,
                std::ptr::null(),
            ))
            .map_err(|e| (Step::ReadOnly, index, e))?;
            check(libc::mount(
                null,
                path.as_ptr(),
                null,
                libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | locked,
                std::ptr::null(),
            ))
            .map_err(|e| (Step::ReadOnly, index, e))?;
        }
    }
    Ok(())
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
    let mut trees = [-1 as libc::c_int; MAX_WRITABLE_MOUNTS];
    let mut places = [-1 as libc::c_int; MAX_WRITABLE_MOUNTS];
    let count = (ns.writable.len() + ns.binds.len()).min(MAX_WRITABLE_MOUNTS);
    let close_all = |trees: &[libc::c_int], places: &[libc::c_int]| {
        for fd in trees.iter().chain(places) {
            if *fd >= 0 {
                // SAFETY: a descriptor this function opened.
                unsafe { libc::close(*fd) };
            }
        }
    };
    let dir_flags = libc::O_PATH | libc::O_NOFOLLOW | libc::O_DIRECTORY | libc::O_CLOEXEC;
    for i in 0..count {
        let (source, target, step, index) = match ns.writable.get(i) {
            Some(dir) => (dir, dir, Step::Writable, i),
            None => {
                let index = i - ns.writable.len();
                let (source, target) = &ns.binds[index];
                (source, target, Step::Bind, index)
            }
        };
        // SAFETY: NUL-terminated paths of the plan; descriptors this
        // function owns, closed on every path out.
        unsafe {
            let place = libc::open(target.as_ptr(), dir_flags);
            if place < 0 {
                if step == Step::Writable {
                    // Gone, or no longer a directory: it stays read-only.
                    continue;
                }
                let error = io::Error::last_os_error();
                close_all(&trees, &places);
                return Err((step, index, error));
            }
            let from = if std::ptr::eq(source, target) {
                place
            } else {
                libc::open(source.as_ptr(), dir_flags)
            };
            if from < 0 {
                let error = io::Error::last_os_error();
                libc::close(place);
                close_all(&trees, &places);
                return Err((step, index, error));
            }
            let tree = libc::syscall(
                libc::SYS_open_tree,
                from,
                c"".as_ptr(),
                OPEN_TREE_CLONE
                    | AT_RECURSIVE
                    | libc::AT_EMPTY_PATH as libc::c_uint
                    | libc::O_CLOEXEC as libc::c_uint,
            ) as libc::c_int;
            let error = io::Error::last_os_error();
            if from != place {
                libc::close(from);
            }
            if tree < 0 {
                libc::close(place);
                close_all(&trees, &places);
                if error.raw_os_error() == Some(libc::ENOSYS) {
                    return plain_binds(ns);
                }
                return Err((step, index, error));
            }
            trees[i] = tree;
            places[i] = place;
        }
    }
    let read_only = match mount_setattr(libc::AT_FDCWD, c"/", AT_RECURSIVE, MOUNT_ATTR_RDONLY) {
        Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => remount_each_read_only(ns),
        other => other,
    };
    if let Err(error) = read_only {
        close_all(&trees, &places);
        return Err((Step::ReadOnlyRoot, 0, error));
    }
    for i in 0..count {
        if trees[i] < 0 {
            continue;
        }
        let step = if i < ns.writable.len() {
            (Step::Writable, i)
        } else {
            (Step::Bind, i - ns.writable.len())
        };
        let moved = mount_setattr(
            trees[i],
            c"",
            AT_RECURSIVE | libc::AT_EMPTY_PATH as libc::c_uint,
            MOUNT_ATTR_NOSUID,
        )
        .and_then(|()| {
            // SAFETY: two descriptors this function owns, empty paths.
            check(unsafe {
                libc::syscall(
                    libc::SYS_move_mount,
                    trees[i],
                    c"".as_ptr(),
                    places[i],
                    c"".as_ptr(),
                    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH,
                ) as libc::c_int
            })
        });
        if let Err(error) = moved {
            close_all(&trees, &places);
            return Err((step.0, step.1, error));
        }
    }
    close_all(&trees, &places);
    Ok(())
}

/// Without `mount_setattr`: `/` and each mount point the parent listed
/// remounted read-only with its locked flags; `/` must give way, a mount
/// point that is gone or refuses is left as it is.
fn remount_each_read_only(ns: &Namespaces) -> io::Result<()> {
    let null = std::ptr::null::<libc::c_char>();
    let flags = libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY;
    for (index, (path, locked)) in ns.mount_points.iter().enumerate() {
        // SAFETY: a NUL-terminated path of the plan, null pointers where
        // mount(2) accepts them.
        let result = check(unsafe {
            libc::mount(null, path.as_ptr(), null, flags | locked, std::ptr::null())
        });
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
        // SAFETY: NUL-terminated paths of the plan.
        check(unsafe {
            libc::mount(
                source.as_ptr(),
                target.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND,
                std::ptr::null(),
            )
        })
        .map_err(|e| (Step::Bind, index, e))?;
    }
    Ok(())
}

/// M forks G, PID 1 of the new PID namespace, and waits for it; G mounts
/// `/proc` (with a mount namespace) and forks S, then reaps until S ends.
/// Returns in S only. G dies with M (`PR_SET_PDEATHSIG`), and the kernel
/// kills everything in the namespace when G dies.
fn fork_init(mount_proc: bool, parent: libc::pid_t, report: &Reporter) -> io::Result<()> {
    let mut alive = [0; 2];
    let mut relay = [0; 2];
    // SAFETY: pipe2 fills the arrays; fork has no arguments.
    check(unsafe { libc::pipe2(alive.as_mut_ptr(), libc::O_CLOEXEC) })
        .map_err(|e| report.fail(Step::Fork, 0, e))?;
    check(unsafe { libc::pipe2(relay.as_mut_ptr(), libc::O_CLOEXEC) })
        .map_err(|e| report.fail(Step::Fork, 0, e))?;
    let init = unsafe { libc::fork() };
    check(init).map_err(|e| report.fail(Step::Fork, 0, e))?;
    if init > 0 {
        // M keeps only the liveness pipe's write end and the read end of
        // the shell's status: std's error pipe and the stdio copies must
        // close, or `spawn()` and the output reader wait for the whole
        // command.
        close_all_but(&[alive[1], relay[0]]);
        // M outlives a TERM, so that the command gets its grace before the
        // KILL that ends M (and so G and everything inside) arrives. G
        // and S were forked with the dispositions M had before.
        // SAFETY: signal with constants.
        unsafe {
            for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGQUIT] {
                libc::signal(sig, libc::SIG_IGN);
            }
        }
        end_like_the_shell(init, relay[0], parent);
    }
    // G. `getppid()` is 0 in a PID namespace's init, so M's death before
    // PDEATHSIG was armed shows as a hung-up liveness pipe instead.
    // SAFETY: prctl, close and poll with a local pollfd.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        libc::close(alive[1]);
        let mut poll = libc::pollfd {
            fd: alive[0],
            events: libc::POLLIN,
            revents: 0,
        };
        if libc::poll(&mut poll, 1, 0) != 0 {
            libc::_exit(124);
        }
        libc::close(alive[0]);
    }
    if mount_proc {
        // SAFETY: C literals and null pointers as mount(2) accepts.
        check(unsafe {
            libc::mount(
                c"proc".as_ptr(),
                c"/proc".as_ptr(),
                c"proc".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                std::ptr::null(),
            )
        })
        .map_err(|e| report.fail(Step::Proc, 0, e))?;
    }
    // SAFETY: fork has no arguments.
    let shell = unsafe { libc::fork() };
    check(shell).map_err(|e| report.fail(Step::Fork, 0, e))?;
    if shell > 0 {
        // G is PID 1 of the namespace: a signal from outside reaches it
        // only when it has a handler, and the handlers it inherited (the
        // embedding program's) are not its own. TERM, INT and HUP (the
        // caller's TERM reaches G with M's group) go on to every process
        // inside at once, as a signal to a process group does outside: a
        // command's processes then cannot see one another die first.
        // SAFETY: signal with constants and a handler that only calls
        // kill(2), which is async-signal-safe.
        unsafe {
            let forward = forward_to_everyone as extern "C" fn(libc::c_int);
            for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
                libc::signal(sig, forward as libc::sighandler_t);
            }
            libc::signal(libc::SIGQUIT, libc::SIG_DFL);
        }
        close_all_but(&[relay[1]]);
        exit_with(shell, true, Some(relay[1]));
    }
    // S: neither end of the relay is its own.
    // SAFETY: close on fds this process holds.
    unsafe {
        libc::close(relay[0]);
        libc::close(relay[1]);
    }
    Ok(())
}

/// G's handler: the signal to every process of the namespace but G.
extern "C" fn forward_to_everyone(sig: libc::c_int) {
    // SAFETY: kill(2) is async-signal-safe; -1 in a PID namespace's init
    // means every other process of the namespace.
    unsafe { libc::kill(-1, sig) };
}

/// S's last steps: Landlock, seccomp, capabilities dropped, the working
/// directory again (std entered it before the namespaces moved).
fn restrict(plan: &Plan, report: &Reporter) -> io::Result<()> {
    if let (Some(ruleset), Some((dir, file))) = (&plan.ruleset, plan.pts_access) {
        for (path, access, flags) in [
            (c"/dev/pts", dir, libc::O_DIRECTORY),
            (c"/dev/ptmx", file, 0),
        ] {
            add_path_rule(ruleset.as_raw_fd(), path, access, flags)
                .map_err(|e| report.fail(Step::Landlock, 1, e))?;
        }
    }
    if let Some(ruleset) = &plan.ruleset {
        // SAFETY: prctl and the Landlock syscall with an fd the plan owns.
        unsafe {
            check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
                .map_err(|e| report.fail(Step::Landlock, 0, e))?;
            check(
                libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd(), 0u32)
                    as libc::c_int,
            )
            .map_err(|e| report.fail(Step::Landlock, 0, e))?;
        }
    }
    for filter in &plan.filters {
        // `apply_filter` sets NO_NEW_PRIVS and builds its `sock_fprog` on
        // the stack: no allocation.
        seccompiler::apply_filter(filter).map_err(|_| {
            report.fail(Step::Seccomp, 0, io::Error::from_raw_os_error(libc::EINVAL))
        })?;
    }
    drop_capabilities(plan.keep_caps);
    // SAFETY: a NUL-terminated CString of the plan.
    check(unsafe { libc::chdir(plan.cwd.as_ptr()) }).map_err(|e| report.fail(Step::Chdir, 0, e))?;
    close_inherited_on_exec();
    Ok(())
}

/// `struct landlock_path_beneath_attr` (linux/landlock.h), packed.
#[repr(C, packed)]
struct PathBeneath {
    allowed_access: u64,
    parent_fd: i32,
}

/// Adds to `ruleset` a Landlock rule granting `access` beneath `path`,
/// opened here (`O_PATH`).
fn add_path_rule(
    ruleset: libc::c_int,
    path: &std::ffi::CStr,
    access: u64,
    flags: libc::c_int,
) -> io::Result<()> {
    // SAFETY: open with a C literal; the attribute is a local the kernel
    // reads; the fd is closed before returning.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC | flags);
        check(fd)?;
        let attr = PathBeneath {
            allowed_access: access,
            parent_fd: fd,
        };
        let added = libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset,
            1 as libc::c_int, // LANDLOCK_RULE_PATH_BENEATH
            &raw const attr,
            0u32,
        ) as libc::c_int;
        libc::close(fd);
        check(added)
    }
}

/// Marks every descriptor above stderr close-on-exec: one the embedding
/// program inherited from its own parent (not close-on-exec) would carry
/// its authority past Landlock, which judges only files opened inside.
fn close_inherited_on_exec() {
    // SAFETY: close_range and fcntl take plain integers; they change only
    // the descriptors' flags.
    unsafe {
        if libc::syscall(
            libc::SYS_close_range,
            3 as libc::c_uint,
            libc::c_uint::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        ) == 0
        {
            return;
        }
        // Before Linux 5.11: each descriptor below the limit.
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        let top = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
            limit.rlim_cur.min(1 << 20) as libc::c_int
        } else {
            4096
        };
        for fd in 3..top {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    }
}

/// Clears the bounding and ambient sets, then every capability, but those
/// in `keep`: root inside a user namespace would keep them all across exec
/// (it gets its bounding set).
fn drop_capabilities(keep: u64) {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: libc::c_int,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    /// `_LINUX_CAPABILITY_VERSION_3`: two `Data` words.
    const VERSION_3: u32 = 0x2008_0522;
    let mut header = Header {
        version: VERSION_3,
        pid: 0,
    };
    let word = |shift: u32| {
        let bits = (keep >> shift) as u32;
        Data {
            effective: bits,
            permitted: bits,
            inheritable: bits,
        }
    };
    let data = [word(0), word(32)];
    // SAFETY: prctl with integers; capset with pointers to the locals above
    // laid out as linux/capability.h. EPERM/EINVAL (no such capability, no
    // CAP_SETPCAP) leave nothing to drop.
    unsafe {
        for cap in 0..64u32 {
            if keep & (1 << cap) == 0 {
                libc::prctl(libc::PR_CAPBSET_DROP, libc::c_ulong::from(cap), 0, 0, 0);
            }
        }
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
        libc::syscall(libc::SYS_capset, &mut header, data.as_ptr());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_paths_have_no_leading_zeros() {
        let mut buf = [0u8; 48];
        let len = proc_path(&mut buf, 12345, b"uid_map");
        assert_eq!(&buf[..=len], b"/proc/12345/uid_map\0");
        let len = proc_path(&mut buf, 7, b"gid_map");
        assert_eq!(&buf[..=len], b"/proc/7/gid_map\0");
    }
}
