//! A [`Decision`]: the verdict, where it came from, and the reason the
//! model reads.

use std::fmt;
use std::path::PathBuf;

use super::mode::Mode;
use super::rule::{Rule, RuleKind};

/// Allow, ask or deny.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// Run the call.
    Allow,
    /// Ask a person; without one, deny with `approval required: …`.
    Ask,
    /// Refuse the call.
    Deny,
}

/// What decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecisionSource {
    /// A rule of the policy.
    Rule {
        /// The list it is in.
        kind: RuleKind,
        /// The rule as written.
        rule: String,
    },
    /// The session's mode (no rule decided).
    Mode(Mode),
    /// A protected path (`.git` and what is under it, `.env*`,
    /// `**/.ssh/**`, or a git directory that a `.git` file points to).
    ProtectedPath(String),
    /// A rule of the policy's `allow_unsandboxed`, as written: the command
    /// may run outside the sandbox.
    UnsandboxedRule(String),
    /// A write into a root the policy added read-only.
    ReadOnlyRoot(PathBuf),
    /// A grant made earlier in this session ("allow for the session").
    SessionGrant(String),
    /// The person asked.
    Person,
    /// The command runs fully confined by the sandbox (`auto_allow`).
    Sandbox,
    /// The command asks to run outside the sandbox
    /// (`dangerously_disable_sandbox`).
    OutsideSandbox,
}

impl DecisionSource {
    /// The rule `rule` of list `kind`, as written.
    pub(crate) fn rule(kind: RuleKind, rule: &Rule) -> Self {
        DecisionSource::Rule {
            kind,
            rule: rule.to_string(),
        }
    }
}

impl fmt::Display for DecisionSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecisionSource::Rule { kind, rule } => write!(f, "{kind} rule {rule:?}"),
            DecisionSource::Mode(mode) => write!(f, "{mode} mode"),
            DecisionSource::ProtectedPath(p) => write!(f, "protected path {p:?}"),
            DecisionSource::UnsandboxedRule(rule) => write!(f, "allow_unsandboxed rule {rule:?}"),
            DecisionSource::ReadOnlyRoot(r) => write!(f, "read-only root {}", r.display()),
            DecisionSource::SessionGrant(rule) => write!(f, "session grant {rule:?}"),
            DecisionSource::Person => f.write_str("the user"),
            DecisionSource::Sandbox => f.write_str("sandbox"),
            DecisionSource::OutsideSandbox => f.write_str("request to run outside the sandbox"),
        }
    }
}

/// The engine's answer for one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// Allow, ask or deny.
    pub verdict: Verdict,
    /// What decided.
    pub source: DecisionSource,
    /// Why, in a sentence the model (or a person) can act on.
    pub reason: String,
}

impl Decision {
    pub(crate) fn new(verdict: Verdict, source: DecisionSource, reason: impl Into<String>) -> Self {
        Self {
            verdict,
            source,
            reason: reason.into(),
        }
    }
}
