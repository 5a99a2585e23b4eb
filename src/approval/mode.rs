//! The session's [`Mode`]: what is allowed when no rule decides.

use std::fmt;
use std::str::FromStr;

/// What the engine does with a call no rule decides.
///
/// | mode | read | write | exec |
/// |---|---|---|---|
/// | `default` | allow | ask | ask |
/// | `accept-edits` | allow | allow | ask |
/// | `plan` | allow | deny | deny |
/// | `bypass` | allow | allow | allow |
///
/// `plan` denies writes and commands whatever the allow rules say; `bypass`
/// allows everything except what a deny rule denies (ask rules and
/// protected paths do not ask there).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Reads allowed; writes and commands ask.
    #[default]
    Default,
    /// Reads and writes allowed; commands ask.
    AcceptEdits,
    /// Reads allowed; writes and commands denied: the model is planning.
    Plan,
    /// Everything allowed except explicit deny rules.
    Bypass,
}

impl Mode {
    /// Every mode, in the order the CLI lists them.
    pub const ALL: [Mode; 4] = [Mode::Default, Mode::AcceptEdits, Mode::Plan, Mode::Bypass];

    /// The name used by `--mode` and policy files: `default`,
    /// `accept-edits`, `plan`, `bypass`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Mode::Default => "default",
            Mode::AcceptEdits => "accept-edits",
            Mode::Plan => "plan",
            Mode::Bypass => "bypass",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An unknown mode name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown mode {0:?}; use one of default, accept-edits, plan, bypass")]
pub struct ModeError(pub String);

impl FromStr for Mode {
    type Err = ModeError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Mode::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| ModeError(s.to_owned()))
    }
}

impl serde::Serialize for Mode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for Mode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}
