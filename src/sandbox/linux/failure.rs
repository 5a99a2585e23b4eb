//! Which step of the setup failed, read back after a failed `spawn`: std
//! passes on only the errno, which alone ("Operation not permitted") does
//! not say that the sandbox, let alone which mount, refused.

use std::io;
use std::os::fd::OwnedFd;
use std::path::PathBuf;

use super::child::Step;

/// The read end of the failure pipe of one command, with the paths its
/// records index.
#[derive(Debug)]
pub(in crate::sandbox) struct Failure {
    pub(super) read: OwnedFd,
    pub(super) hidden_dirs: Vec<PathBuf>,
    pub(super) hidden_files: Vec<PathBuf>,
    pub(super) binds: Vec<PathBuf>,
    pub(super) read_only: Vec<PathBuf>,
    pub(super) pins: Vec<PathBuf>,
    pub(super) writable: Vec<PathBuf>,
    pub(super) cwd: PathBuf,
}

impl Failure {
    /// `error` with the failed step in front, when the child reported one.
    /// A step the probe vouched for ([`Step::was_probed`]) forgets the
    /// kept probe, so that the next session makes its trial again.
    pub(in crate::sandbox) fn explain(&self, error: io::Error) -> io::Error {
        self.explain_then(error, super::probe::forget)
    }

    /// [`Failure::explain`], calling `forget_probe` when the failed step
    /// is one the probe vouched for.
    fn explain_then(&self, error: io::Error, forget_probe: impl FnOnce()) -> io::Error {
        let mut record = [0u8; 4];
        // The read end is non-blocking: an empty pipe means no report.
        let read = rustix::io::read(&self.read, &mut record);
        match read {
            Ok(4) => match self.describe(record) {
                Some(what) if Step::from_u8(record[0]).is_some_and(Step::was_probed) => {
                    // What the probe vouched for failed: the next probe
                    // makes its trial again.
                    forget_probe();
                    io::Error::new(
                        error.kind(),
                        format!("the sandbox could not {what}: {error}"),
                    )
                }
                Some(what) => io::Error::new(
                    error.kind(),
                    format!("the sandbox could not {what}: {error}"),
                ),
                None => error,
            },
            _ => error,
        }
    }

    /// What a record says, e.g. `hide /home/me/.ssh (a tmpfs over it)`.
    fn describe(&self, record: [u8; 4]) -> Option<String> {
        let index = usize::from(u16::from_le_bytes([record[2], record[3]]));
        let path = |paths: &[PathBuf]| {
            paths
                .get(index)
                .map_or_else(|| "a path".to_owned(), |p| p.display().to_string())
        };
        Some(match Step::from_u8(record[0])? {
            Step::Namespaces => "create its namespaces (user, mount, PID, network)".to_owned(),
            Step::Loopback => "bring up the loopback of its network namespace".to_owned(),
            Step::PrivateMounts if index == 1 => {
                "give the command terminals of its own (/dev/pts)".to_owned()
            }
            Step::PrivateMounts => "make its mount tree private".to_owned(),
            Step::HiddenDir => format!("hide {} (a tmpfs over it)", path(&self.hidden_dirs)),
            Step::HiddenFile => format!("hide {} (/dev/null over it)", path(&self.hidden_files)),
            Step::Bind => format!("mount its own directory on {}", path(&self.binds)),
            Step::ReadOnly => format!("make {} read-only", path(&self.read_only)),
            Step::ReadOnlyRoot => {
                "make every mount read-only outside the writable roots".to_owned()
            }
            Step::Writable => format!(
                "mount the writable root {} read-write",
                path(&self.writable)
            ),
            Step::Pin => format!("pin {} in place (a bind onto itself)", path(&self.pins)),
            Step::Fork => "fork the init of its PID namespace".to_owned(),
            Step::Proc => "mount /proc in its PID namespace".to_owned(),
            Step::Landlock if index == 1 => {
                "let it use its own terminals (Landlock rules on /dev/pts)".to_owned()
            }
            Step::Landlock => "apply its Landlock rules".to_owned(),
            Step::Seccomp => "apply its seccomp filter".to_owned(),
            Step::Chdir => format!("enter the working directory {}", self.cwd.display()),
            Step::Cgroup => "put it in its cgroup (for its memory and process limits)".to_owned(),
            Step::Rlimit => "set its resource limits (setrlimit)".to_owned(),
            Step::Terminal => "give it a terminal of its own (/dev/ptmx)".to_owned(),
        })
    }

    /// Which limit G's watchdog reported for the command (its second
    /// byte, see [`super::child::LIMIT_RECORD`]): read once the command
    /// has ended, when the pipe holds at most that one record.
    pub(in crate::sandbox) fn limit_reported(&self) -> Option<u8> {
        let mut record = [0u8; 4];
        match rustix::io::read(&self.read, &mut record) {
            Ok(4) if record[0] == super::child::LIMIT_RECORD => Some(record[1]),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_names_the_step_and_its_path() {
        let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::NONBLOCK).unwrap();
        let failure = Failure {
            read,
            hidden_dirs: vec!["/h/.ssh".into(), "/h/.aws".into()],
            hidden_files: vec![],
            binds: vec![],
            read_only: vec!["/w/.git".into()],
            pins: vec![],
            writable: vec![],
            cwd: "/w".into(),
        };
        let error = || io::Error::from_raw_os_error(libc::EPERM);
        assert_eq!(
            failure.explain(error()).to_string(),
            error().to_string(),
            "no record: the error unchanged"
        );
        rustix::io::write(&write, &[Step::HiddenDir as u8, 0, 1, 0]).unwrap();
        assert_eq!(
            failure.explain(error()).to_string(),
            "the sandbox could not hide /h/.aws (a tmpfs over it): \
             Operation not permitted (os error 1)"
        );
        assert_eq!(
            failure.describe([Step::ReadOnly as u8, 0, 0, 0]).unwrap(),
            "make /w/.git read-only"
        );
        assert_eq!(failure.describe([0, 0, 0, 0]), None);
    }

    /// A failed step the probe vouched for forgets the kept probe; any
    /// other step, or no record, leaves it.
    #[test]
    fn a_step_the_probe_vouched_for_forgets_the_kept_probe() {
        let failure = bare;
        let error = || io::Error::from_raw_os_error(libc::EPERM);
        let mut probed = Vec::new();
        for byte in 0..=u8::MAX {
            let Some(step) = Step::from_u8(byte) else {
                continue;
            };
            let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::NONBLOCK).unwrap();
            rustix::io::write(&write, &[byte, 0, 0, 0]).unwrap();
            let mut forgot = false;
            let message = failure(read)
                .explain_then(error(), || forgot = true)
                .to_string();
            assert!(message.starts_with("the sandbox could not "), "{message}");
            if forgot {
                probed.push(step);
            }
        }
        assert_eq!(
            probed,
            [
                Step::Namespaces,
                Step::Loopback,
                Step::Fork,
                Step::Proc,
                Step::Seccomp
            ]
        );
        let (read, _write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::NONBLOCK).unwrap();
        let mut forgot = false;
        let _ = failure(read).explain_then(error(), || forgot = true);
        assert!(!forgot, "no record: nothing forgotten");
    }

    /// A failure pipe's read end with no paths to name.
    fn bare(read: OwnedFd) -> Failure {
        Failure {
            read,
            hidden_dirs: vec![],
            hidden_files: vec![],
            binds: vec![],
            read_only: vec![],
            pins: vec![],
            writable: vec![],
            cwd: "/w".into(),
        }
    }

    #[test]
    fn the_watchdogs_record_names_the_limit_and_no_step() {
        use crate::sandbox::linux::child::{LIMIT_RECORD, PROCESSES};
        let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::NONBLOCK).unwrap();
        let failure = bare(read);
        assert_eq!(failure.limit_reported(), None, "an empty pipe");
        assert_eq!(failure.describe([LIMIT_RECORD, PROCESSES, 0, 0]), None);
        rustix::io::write(&write, &[LIMIT_RECORD, PROCESSES, 0, 0]).unwrap();
        assert_eq!(failure.limit_reported(), Some(PROCESSES));
    }
}
