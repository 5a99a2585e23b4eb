//! A cgroup per command, when this process may create one under its own:
//! cgroup v2 (a delegated subtree with the `memory` and `pids` controllers
//! enabled, or root), else cgroup v1's `memory` and `pids` hierarchies.
//! Found once per process ([`machine`]); each command's is made before its
//! fork, joined by M (it writes `0`, "this task", to v1's `tasks` or v2's
//! `cgroup.procs`; see [`join_file`]),
//! read for its events after the command ends, and removed with the
//! command's [`CommandCgroup`].

use std::fs;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// Which cgroup version a controller is used through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::sandbox) enum Version {
    V1,
    V2,
}

impl Version {
    pub(in crate::sandbox) fn name(self) -> &'static str {
        match self {
            Version::V1 => "cgroup v1",
            Version::V2 => "cgroup v2",
        }
    }
}

/// The folders under which this process may create a cgroup with the
/// controller, and through which version.
#[derive(Debug, Clone, Default)]
pub(in crate::sandbox) struct Cgroups {
    pub(in crate::sandbox) memory: Option<(PathBuf, Version)>,
    pub(in crate::sandbox) pids: Option<(PathBuf, Version)>,
}

/// What this machine offers, found once.
pub(in crate::sandbox) fn machine() -> &'static Cgroups {
    static CGROUPS: OnceLock<Cgroups> = OnceLock::new();
    CGROUPS.get_or_init(probe)
}

fn probe() -> Cgroups {
    let own = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let mounts = fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let mut found = Cgroups::default();
    if let Some(dir) = v2_dir(&own, &mounts) {
        let usable = |controller: &str| -> bool {
            let enabled = fs::read_to_string(dir.join("cgroup.subtree_control"))
                .is_ok_and(|s| s.split_whitespace().any(|c| c == controller));
            // Refused but for the root cgroup or an empty one (the "no
            // internal processes" rule); a delegated subtree has it on.
            if !enabled {
                let _ = fs::write(dir.join("cgroup.subtree_control"), format!("+{controller}"));
            }
            let file = if controller == "memory" {
                "memory.max"
            } else {
                "pids.max"
            };
            trial(&dir, file)
        };
        if usable("memory") {
            found.memory = Some((dir.clone(), Version::V2));
        }
        if usable("pids") {
            found.pids = Some((dir.clone(), Version::V2));
        }
    }
    for (controller, file) in [("memory", "memory.limit_in_bytes"), ("pids", "pids.max")] {
        let slot = if controller == "memory" {
            &mut found.memory
        } else {
            &mut found.pids
        };
        if slot.is_some() {
            continue;
        }
        if let Some(dir) = v1_dir(&own, &mounts, controller)
            && trial(&dir, file)
        {
            *slot = Some((dir, Version::V1));
        }
    }
    for (dir, _) in found.memory.iter().chain(found.pids.iter()) {
        sweep(dir);
    }
    found
}

/// Removes the command cgroups under `dir` left by an agentcore that died
/// (named `agentcore-PID-N`, with no process PID): a killed agentcore's
/// commands die with it, but their cgroups stay. One whose pid was reused
/// stays too; one still in use cannot be removed.
fn sweep(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix("agentcore-")) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<i32>().ok()) else {
            continue;
        };
        let gone = rustix::process::Pid::from_raw(pid).is_some_and(|pid| {
            rustix::process::test_kill_process(pid) == Err(rustix::io::Errno::SRCH)
        });
        if gone {
            let _ = fs::remove_dir(entry.path());
        }
    }
}

/// Whether a child cgroup can be made under `dir` and has `file`.
fn trial(dir: &Path, file: &str) -> bool {
    let probe = dir.join(format!("agentcore-probe-{}", std::process::id()));
    if fs::create_dir(&probe).is_err() {
        return false;
    }
    let has = probe.join(file).exists();
    let _ = fs::remove_dir(&probe);
    has
}

/// This process's cgroup v2 folder: `0::/path` under the cgroup2 mount.
fn v2_dir(own: &str, mounts: &str) -> Option<PathBuf> {
    let path = own.lines().find_map(|l| l.strip_prefix("0::"))?;
    let mount = mounts.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.len() > 2 && f[2] == "cgroup2").then(|| f[1].to_owned())
    })?;
    Some(Path::new(&mount).join(path.trim_start_matches('/')))
}

/// This process's cgroup v1 folder of `controller`.
fn v1_dir(own: &str, mounts: &str, controller: &str) -> Option<PathBuf> {
    let path = own.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, names, path) = (parts.next()?, parts.next()?, parts.next()?);
        names.split(',').any(|n| n == controller).then_some(path)
    })?;
    let mount = mounts.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.len() > 3 && f[2] == "cgroup" && f[3].split(',').any(|o| o == controller))
            .then(|| f[1].to_owned())
    })?;
    Some(Path::new(&mount).join(path.trim_start_matches('/')))
}

/// One command's cgroups (one folder for v2, one per controller for v1),
/// removed when dropped.
#[derive(Debug)]
pub(in crate::sandbox) struct CommandCgroup {
    /// `agentcore-PID-N`, the folder's name in every hierarchy.
    name: String,
    memory: Option<(PathBuf, Version)>,
    pids: Option<(PathBuf, Version)>,
}

impl CommandCgroup {
    /// Makes the command's cgroups with `memory` bytes and `tasks`
    /// processes at most (each `None`: that controller is not used), and
    /// opens the files M writes itself into ([`join_file`]). `tasks` already
    /// counts M and G.
    pub(in crate::sandbox) fn create(
        machine: &Cgroups,
        memory: Option<u64>,
        tasks: Option<u64>,
    ) -> io::Result<(CommandCgroup, Vec<OwnedFd>)> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "agentcore-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let mut made = CommandCgroup {
            name: name.clone(),
            memory: None,
            pids: None,
        };
        let mut join: Vec<(PathBuf, Version)> = Vec::new();
        if let (Some(bytes), Some((parent, version))) = (memory, &machine.memory) {
            let dir = parent.join(&name);
            make(&dir)?;
            made.memory = Some((dir.clone(), *version));
            match version {
                Version::V2 => {
                    fs::write(dir.join("memory.max"), bytes.to_string())?;
                    if dir.join("memory.swap.max").exists() {
                        fs::write(dir.join("memory.swap.max"), "0")?;
                    }
                    // The kernel's OOM kill takes the whole command, as
                    // the watchdog does.
                    if dir.join("memory.oom.group").exists() {
                        let _ = fs::write(dir.join("memory.oom.group"), "1");
                    }
                }
                Version::V1 => {
                    fs::write(dir.join("memory.limit_in_bytes"), bytes.to_string())?;
                    // Memory and swap together: no swap beyond the limit.
                    if dir.join("memory.memsw.limit_in_bytes").exists() {
                        fs::write(dir.join("memory.memsw.limit_in_bytes"), bytes.to_string())?;
                    }
                }
            }
            join.push((dir, *version));
        }
        if let (Some(n), Some((parent, version))) = (tasks, &machine.pids) {
            let dir = parent.join(&name);
            if !join.iter().any(|(joined, _)| *joined == dir) {
                make(&dir)?;
                join.push((dir.clone(), *version));
            }
            made.pids = Some((dir.clone(), *version));
            fs::write(dir.join("pids.max"), n.to_string())?;
        }
        let mut fds = Vec::new();
        for (dir, version) in &join {
            let file = fs::OpenOptions::new()
                .write(true)
                .open(dir.join(join_file(*version)))?;
            fds.push(OwnedFd::from(file));
        }
        Ok((made, fds))
    }

    /// The folder's name, `agentcore-PID-N`, the same in every hierarchy.
    pub(in crate::sandbox) fn name(&self) -> &str {
        &self.name
    }

    /// The command's folders, one per hierarchy (one for v2).
    pub(in crate::sandbox) fn dirs(&self) -> Vec<&Path> {
        let mut dirs: Vec<&Path> = Vec::new();
        for (dir, _) in self.memory.iter().chain(self.pids.iter()) {
            if !dirs.contains(&dir.as_path()) {
                dirs.push(dir);
            }
        }
        dirs
    }

    /// The `pids` folder, when the command's tasks are bounded by one.
    pub(in crate::sandbox) fn pids_dir(&self) -> Option<&Path> {
        self.pids.as_ref().map(|(dir, _)| dir.as_path())
    }

    /// Whether the command's memory is bounded by its cgroup.
    pub(in crate::sandbox) fn has_memory(&self) -> bool {
        self.memory.is_some()
    }

    /// Whether the command's tasks are bounded by its cgroup.
    pub(in crate::sandbox) fn has_pids(&self) -> bool {
        self.pids.is_some()
    }

    /// `pids.events` opened for G's watchdog, which kills the command once
    /// the kernel has refused it a fork (`max` above 0).
    pub(in crate::sandbox) fn pids_events(&self) -> Option<OwnedFd> {
        let (dir, _) = self.pids.as_ref()?;
        fs::File::open(dir.join("pids.events"))
            .ok()
            .map(OwnedFd::from)
    }

    /// Whether the kernel killed a process of the command for memory
    /// (`oom_kill` of v2's `memory.events`, v1's `memory.oom_control`).
    pub(in crate::sandbox) fn memory_hit(&self) -> bool {
        let Some((dir, version)) = &self.memory else {
            return false;
        };
        let file = match version {
            Version::V2 => "memory.events",
            Version::V1 => "memory.oom_control",
        };
        counter(&dir.join(file), "oom_kill") > 0
    }

    /// Whether the kernel refused the command a fork at its process limit
    /// (`max` of `pids.events`).
    pub(in crate::sandbox) fn pids_hit(&self) -> bool {
        self.pids
            .as_ref()
            .is_some_and(|(dir, _)| counter(&dir.join("pids.events"), "max") > 0)
    }
}

/// The file M writes `0` to, to join a cgroup of `version` ("this
/// process" in `cgroup.procs`, "this thread" in v1's `tasks`).
///
/// On cgroup v1 it is `tasks`: M is a fresh fork with one thread, so
/// moving that thread moves all of it, and the kernel moves the calling
/// thread alone (`0`) without its cgroup thread-group lock, whose writer waits
/// for a grace period of RCU first (5–19 ms on an idle machine, paid by a
/// command that came after a pause; docs/performance.md, "Fifth pass").
/// cgroup v2 moves whole processes, through `cgroup.procs`.
fn join_file(version: Version) -> &'static str {
    match version {
        Version::V1 => "tasks",
        Version::V2 => "cgroup.procs",
    }
}

/// Makes `dir`, or takes it over when it exists (a number reused after
/// this process's pid was).
fn make(dir: &Path) -> io::Result<()> {
    match fs::create_dir(dir) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        other => other,
    }
}

/// The value of the `name N` line of a flat-keyed cgroup file, 0 without.
fn counter(file: &Path, name: &str) -> u64 {
    fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            let (key, value) = l.split_once(' ')?;
            (key == name).then(|| value.trim().parse().ok())?
        })
        .unwrap_or(0)
}

impl Drop for CommandCgroup {
    /// Has the folders removed, off the caller's path: a removal can take
    /// milliseconds (a v1 memory cgroup going offline), and a folder can be
    /// busy a little longer (a process still being reaped, the spawner
    /// still moving out: see [`super::spawner`]).
    fn drop(&mut self) {
        let dirs: Vec<PathBuf> = self.dirs().into_iter().map(Path::to_path_buf).collect();
        remove_later(dirs);
    }
}

/// How often, and how long apart, a busy folder is tried again.
const REMOVE_TRIES: u32 = 400;
const REMOVE_PAUSE: std::time::Duration = std::time::Duration::from_millis(5);

/// Hands `dirs` to the remover thread (started on first use), which
/// removes each, trying a busy one again every 5 ms for 2 s; without the
/// thread, removes them here.
fn remove_later(dirs: Vec<PathBuf>) {
    use std::sync::Mutex;
    use std::sync::mpsc::{Sender, channel};
    static REMOVER: OnceLock<Option<Mutex<Sender<Vec<PathBuf>>>>> = OnceLock::new();
    let remover = REMOVER.get_or_init(|| {
        let (send, receive) = channel::<Vec<PathBuf>>();
        std::thread::Builder::new()
            .name("agentcore-cgroup-rm".to_owned())
            .spawn(move || {
                while let Ok(dirs) = receive.recv() {
                    remove_now(&dirs);
                }
            })
            .ok()
            .map(|_| Mutex::new(send))
    });
    let dirs = match remover {
        Some(send) => match send.lock().unwrap_or_else(|e| e.into_inner()).send(dirs) {
            Ok(()) => return,
            Err(returned) => returned.0,
        },
        None => dirs,
    };
    remove_now(&dirs);
}

fn remove_now(dirs: &[PathBuf]) {
    for dir in dirs {
        for _ in 0..REMOVE_TRIES {
            match fs::remove_dir(dir) {
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => std::thread::sleep(REMOVE_PAUSE),
                _ => break,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_folders_are_found_on_a_hybrid_machine() {
        let own = "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/abc\n0::/\n";
        let mounts = "cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0\n\
                      cgroup /sys/fs/cgroup/pids cgroup rw,relatime,pids 0 0\n\
                      cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0\n";
        assert_eq!(
            v1_dir(own, mounts, "memory"),
            Some(PathBuf::from("/sys/fs/cgroup/memory/process_api/abc"))
        );
        assert_eq!(
            v1_dir(own, mounts, "pids"),
            Some(PathBuf::from("/sys/fs/cgroup/pids"))
        );
        assert_eq!(
            v2_dir(own, mounts),
            Some(PathBuf::from("/sys/fs/cgroup/unified"))
        );
    }
}
