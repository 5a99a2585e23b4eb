//! What a confined command may consume: the `[sandbox.limits]` table.
//!
//! ```toml
//! [sandbox.limits]
//! memory = "8G"          # every process of the command together
//! processes = 1024       # tasks (processes and threads) at once
//! cpu_seconds = 3600     # CPU time of any one process
//! tmp_size = "2G"        # $TMPDIR and /dev/shm of the session
//! file_size = "16G"      # the largest file a process may write
//! ```
//!
//! Sizes are bytes, or a number with `K`, `M`, `G` or `T` (powers of
//! 1024). Any limit is turned off with `"off"` (`0` is refused: it reads as
//! "nothing allowed").
//!
//! How each is enforced depends on the machine (see
//! [`Sandbox::limits_summary`](super::Sandbox::limits_summary)): a cgroup
//! per command (v2, or v1's `memory` and `pids` controllers) when this
//! process may create one, otherwise `RLIMIT_*` per process and a watchdog
//! in the command's PID namespace that counts its processes and their
//! memory and kills them all when over.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The `[sandbox.limits]` table: each field `None` when turned off
/// (`"off"`).
///
/// The defaults are backstops against a runaway command (a fork bomb, an
/// unbounded allocation, a spinner, a `yes > file`), set well above what a
/// parallel build, an `npm install` or a test run of a big project uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[non_exhaustive]
pub struct SandboxLimits {
    /// Bytes of memory the command's processes use together (default
    /// 8 GiB): a big link or a parallel `cargo build` stays well below; a
    /// leak is stopped before the host swaps. With a cgroup, swap counts
    /// too; without one, the resident memory the watchdog sums, with each
    /// process's address space bounded at twice the limit.
    #[serde(with = "size")]
    pub memory: Option<u64>,
    /// Tasks (processes and threads, as the kernel counts them) the
    /// command may have at once (default 1024): `make -j64`, cargo's
    /// rustc jobs with their threads or a test runner's workers need a few
    /// hundred; a fork bomb reaches 1024 in well under a second and is
    /// then killed whole.
    #[serde(with = "count")]
    pub processes: Option<u64>,
    /// CPU seconds any one process of the command may use (default 3600):
    /// no compiler or test takes an hour of CPU in one process, and a
    /// spinner left in a background job does not burn a core forever.
    #[serde(with = "count")]
    pub cpu_seconds: Option<u64>,
    /// Bytes the session's `$TMPDIR` and `/dev/shm` may each hold (default
    /// 2 GiB), a tmpfs in the session's shared mount namespace: its files
    /// are memory, so it is bounded below the memory limit; build tools
    /// keep their outputs in the workspace, not in `$TMPDIR`. The
    /// embedding program then sees the host folder
    /// ([`Sandbox::tmpdir`](super::Sandbox::tmpdir)) empty; with `"off"`
    /// it is the host folder itself.
    #[serde(with = "size")]
    pub tmp_size: Option<u64>,
    /// The largest file a process may write, in bytes (default 16 GiB,
    /// `RLIMIT_FSIZE`): bigger than any build artefact or database a
    /// project makes, smaller than the disk a `yes > file` would fill.
    #[serde(with = "size")]
    pub file_size: Option<u64>,
}

const GIB: u64 = 1 << 30;

impl Default for SandboxLimits {
    fn default() -> Self {
        SandboxLimits {
            memory: Some(8 * GIB),
            processes: Some(1024),
            cpu_seconds: Some(3600),
            tmp_size: Some(2 * GIB),
            file_size: Some(16 * GIB),
        }
    }
}

impl SandboxLimits {
    /// No limit at all.
    pub const fn off() -> Self {
        SandboxLimits {
            memory: None,
            processes: None,
            cpu_seconds: None,
            tmp_size: None,
            file_size: None,
        }
    }

    /// These limits with `memory` (bytes; `None`: off).
    pub const fn memory(mut self, bytes: Option<u64>) -> Self {
        self.memory = bytes;
        self
    }

    /// These limits with `processes` (`None`: off).
    pub const fn processes(mut self, tasks: Option<u64>) -> Self {
        self.processes = tasks;
        self
    }

    /// These limits with `cpu_seconds` (`None`: off).
    pub const fn cpu_seconds(mut self, seconds: Option<u64>) -> Self {
        self.cpu_seconds = seconds;
        self
    }

    /// These limits with `tmp_size` (bytes; `None`: off).
    pub const fn tmp_size(mut self, bytes: Option<u64>) -> Self {
        self.tmp_size = bytes;
        self
    }

    /// These limits with `file_size` (bytes; `None`: off).
    pub const fn file_size(mut self, bytes: Option<u64>) -> Self {
        self.file_size = bytes;
        self
    }
}

/// The limit a command reached, from the kernel's own account (a cgroup's
/// events, a death by `SIGXCPU` or `SIGXFSZ`) or the watchdog's report,
/// never guessed from an exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LimitHit {
    /// The memory limit, in bytes.
    Memory(u64),
    /// The process limit.
    Processes(u64),
    /// The CPU limit, in seconds.
    Cpu(u64),
    /// The file size limit, in bytes.
    FileSize(u64),
}

impl fmt::Display for LimitHit {
    /// `memory limit 4G reached`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LimitHit::Memory(bytes) => write!(f, "memory limit {} reached", format_size(*bytes)),
            LimitHit::Processes(n) => write!(f, "process limit {n} reached"),
            LimitHit::Cpu(s) => write!(f, "CPU limit {s} s reached"),
            LimitHit::FileSize(bytes) => {
                write!(f, "file size limit {} reached", format_size(*bytes))
            }
        }
    }
}

impl LimitHit {
    /// The last line of the output of a command that hit a limit:
    /// `(sandboxed: killed — memory limit 4G reached)`.
    pub fn line(&self) -> String {
        format!("(sandboxed: killed — {self})")
    }
}

/// `4G`, `512M`, `1536K` or plain bytes: the largest unit that divides
/// `bytes` exactly.
pub fn format_size(bytes: u64) -> String {
    for (unit, shift) in [("T", 40), ("G", 30), ("M", 20), ("K", 10)] {
        if bytes != 0 && bytes.trailing_zeros() >= shift {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    bytes.to_string()
}

/// Parses `4G`, `512M`, `1024K`, `2T` (powers of 1024, the unit in either
/// case, an optional `B` or `iB` after it) or plain bytes.
///
/// # Errors
///
/// A sentence for the policy's reader naming the value and the forms
/// accepted.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let bad = || {
        format!(
            "invalid size \"{text}\": use bytes or a number with K, M, G or T (e.g. \"4G\", \"512M\"), or \"off\""
        )
    };
    let trimmed = text.trim();
    let lower = trimmed.to_ascii_lowercase();
    let lower = lower
        .strip_suffix("ib")
        .or_else(|| lower.strip_suffix('b'))
        .unwrap_or(&lower);
    let (digits, shift) = match lower.chars().last() {
        Some('k') => (&lower[..lower.len() - 1], 10),
        Some('m') => (&lower[..lower.len() - 1], 20),
        Some('g') => (&lower[..lower.len() - 1], 30),
        Some('t') => (&lower[..lower.len() - 1], 40),
        _ => (lower, 0),
    };
    let digits = digits.trim_end();
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let n: u64 = digits.parse().map_err(|_| bad())?;
    let bytes = n
        .checked_mul(1u64 << shift)
        .ok_or_else(|| format!("the size \"{text}\" is too large"))?;
    if bytes == 0 {
        return Err(format!(
            "the size \"{text}\" is zero; to turn the limit off write \"off\""
        ));
    }
    Ok(bytes)
}

/// A size field: `"4G"`, a number of bytes, or `"off"`.
mod size {
    use super::*;

    pub(super) fn serialize<S: Serializer>(value: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(bytes) => s.serialize_str(&format_size(*bytes)),
            None => s.serialize_str("off"),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        match Raw::deserialize(d)? {
            Raw::Text(text) if text.trim().eq_ignore_ascii_case("off") => Ok(None),
            Raw::Text(text) => parse_size(&text)
                .map(Some)
                .map_err(serde::de::Error::custom),
            Raw::Number(0) => Err(serde::de::Error::custom(
                "a size of 0 allows nothing; to turn the limit off write \"off\"",
            )),
            Raw::Number(n) => Ok(Some(n)),
        }
    }
}

/// A count field: a positive number, or `"off"`.
mod count {
    use super::*;

    pub(super) fn serialize<S: Serializer>(value: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(n) => s.serialize_u64(*n),
            None => s.serialize_str("off"),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        match Raw::deserialize(d)? {
            Raw::Text(text) if text.trim().eq_ignore_ascii_case("off") => Ok(None),
            Raw::Text(text) => Err(serde::de::Error::custom(format!(
                "invalid value \"{text}\": use a positive whole number, or \"off\""
            ))),
            Raw::Number(0) => Err(serde::de::Error::custom(
                "0 allows nothing; to turn the limit off write \"off\"",
            )),
            Raw::Number(n) => Ok(Some(n)),
        }
    }
}

#[derive(Deserialize)]
#[serde(untagged, expecting = "a number, a size such as \"4G\", or \"off\"")]
enum Raw {
    Number(u64),
    Text(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_in_binary_units_and_refuse_nonsense() {
        assert_eq!(parse_size("4G"), Ok(4 << 30));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("1024K"), Ok(1 << 20));
        assert_eq!(parse_size("1024k"), Ok(1 << 20));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size("2GB"), Ok(2 << 30));
        assert_eq!(parse_size("1T"), Ok(1 << 40));
        assert_eq!(parse_size("12345"), Ok(12345));
        for bad in ["", "G", "4X", "-1G", "1.5G", "4 G G", "off"] {
            let err = parse_size(bad).unwrap_err();
            assert!(err.contains("invalid size"), "{bad}: {err}");
        }
        assert!(parse_size("0").unwrap_err().contains("\"off\""));
        assert!(
            parse_size("99999999999T")
                .unwrap_err()
                .contains("too large")
        );
    }

    #[test]
    fn sizes_print_in_the_largest_exact_unit() {
        assert_eq!(format_size(4 << 30), "4G");
        assert_eq!(format_size(512 << 20), "512M");
        assert_eq!(format_size(1536 << 10), "1536K");
        assert_eq!(format_size(1000), "1000");
        assert_eq!(format_size(1 << 40), "1T");
    }

    #[test]
    fn the_table_parses_with_defaults_off_and_clear_errors() {
        let l: SandboxLimits = toml::from_str("").unwrap();
        assert_eq!(l, SandboxLimits::default());
        let l: SandboxLimits = toml::from_str(
            r#"
            memory = "4G"
            processes = 512
            cpu_seconds = "off"
            tmp_size = 1048576
            file_size = "off"
            "#,
        )
        .unwrap();
        assert_eq!(l.memory, Some(4 << 30));
        assert_eq!(l.processes, Some(512));
        assert_eq!(l.cpu_seconds, None);
        assert_eq!(l.tmp_size, Some(1 << 20));
        assert_eq!(l.file_size, None);
        let err = toml::from_str::<SandboxLimits>("memory = \"4X\"").unwrap_err();
        assert!(err.to_string().contains("invalid size \"4X\""), "{err}");
        let err = toml::from_str::<SandboxLimits>("processes = 0").unwrap_err();
        assert!(err.to_string().contains("\"off\""), "{err}");
        let err = toml::from_str::<SandboxLimits>("processes = \"many\"").unwrap_err();
        assert!(err.to_string().contains("positive whole number"), "{err}");
        let err = toml::from_str::<SandboxLimits>("memroy = \"4G\"").unwrap_err();
        assert!(err.to_string().contains("unknown field `memroy`"), "{err}");
        let round = toml::to_string(&l).unwrap();
        assert_eq!(toml::from_str::<SandboxLimits>(&round).unwrap(), l);
    }

    #[test]
    fn the_last_line_names_the_limit() {
        assert_eq!(
            LimitHit::Memory(4 << 30).line(),
            "(sandboxed: killed — memory limit 4G reached)"
        );
        assert_eq!(
            LimitHit::Processes(512).to_string(),
            "process limit 512 reached"
        );
        assert_eq!(LimitHit::Cpu(600).to_string(), "CPU limit 600 s reached");
        assert_eq!(
            LimitHit::FileSize(1 << 30).to_string(),
            "file size limit 1G reached"
        );
    }
}
