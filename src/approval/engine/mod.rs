//! [`ApprovalEngine`]: modes, rules, protected paths and session grants
//! behind the kernel's [`Gate`].
//!
//! - `builder.rs`: the engine set up from a mode, rules, a policy and an
//!   approver;
//! - `evaluate.rs`: the policy's verdict on one call, steps 1 to 9 below;
//! - `gate.rs`: the engine as a [`Gate`], asking the approver when the
//!   verdict is "ask".

mod builder;
mod evaluate;
mod gate;

pub(crate) use gate::gate_decision;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use super::approver::Approver;
use super::decision::Decision;
use super::mode::Mode;
use super::paths::PathResolver;
use super::read_filter::{ReadFilter, WalkFilter};
use super::rule::{PathPattern, Rule};
use crate::Tool;
use crate::access::{Access, Containment, Permissions};
use crate::fs::judged::JudgedPaths;
use crate::shell::CommandAnalysis;

/// The policy engine: an ordinary [`Gate`](crate::Gate).
///
/// Evaluation of one call, first match wins:
/// 1. a write into a read-only root: deny;
/// 2. a deny rule: deny (in every mode);
/// 3. plan mode, for a write or a command: deny; then a command that asks
///    to run outside the sandbox (`dangerously_disable_sandbox`): ask, in
///    every mode, unless a rule of the policy's `allow_unsandboxed` or a
///    session grant given for an unconfined run covers it (allow rules do
///    not: step 6 then counts only those);
/// 4. bypass mode: allow, then 9;
/// 5. an ask rule: ask;
/// 6. an allow rule or a session grant (for a command: every part,
///    including the commands it wraps, and no redirection or other
///    hazard; a command with a construct that can run code the analysis
///    cannot see is covered only by a bare `bash` rule or a grant of that
///    exact command): allow, then 8;
/// 7. the mode: reads allow; writes allow in accept-edits, else ask;
///    commands ask;
/// 8. an allow that touches a protected path asks instead: one of
///    [`PROTECTED_PATHS`](crate::access::PROTECTED_PATHS), or a directory that a `.git` file (`gitdir: X`)
///    or a git directory's `commondir` file names, and what is under it,
///    where that file lies in the path's ancestors or the root's (git
///    reads its configuration from there, and its configuration can name
///    commands that git runs).
/// 9. an allowed command with such a construct, while a deny rule binds
///    the tool, asks instead: whether the deny rule matches is unknown,
///    and deny rules hold in every mode (see [`CommandAnalysis`]).
///
/// "Ask" goes to the [`Approver`]; with none it is a deny whose reason
/// starts `approval required: `.
///
/// ```
/// use std::sync::Arc;
/// use agentcore::approval::ApprovalEngine;
/// use agentcore::config::Policy;
///
/// let policy = Policy::from_toml(r#"allow = ["bash(cargo test *)"]"#).unwrap();
/// let engine = ApprovalEngine::new(std::env::temp_dir()).with_policy(&policy);
/// let read_filter = engine.read_filter(); // give to glob, grep, ls
/// let gate: Arc<dyn agentcore::Gate> = Arc::new(engine);
/// # let _ = (gate, read_filter);
/// ```
#[derive(Clone)]
pub struct ApprovalEngine {
    inner: Arc<Inner>,
}

struct Inner {
    resolver: Arc<PathResolver>,
    mode: RwLock<Mode>,
    allow: Vec<Rule>,
    /// The policy's `allow_unsandboxed`: commands that may run outside the
    /// sandbox without asking.
    allow_unsandboxed: Vec<Rule>,
    ask: Vec<Rule>,
    deny: Vec<Rule>,
    grants: RwLock<Vec<Rule>>,
    read_only_roots: Vec<PathBuf>,
    protected: Vec<(&'static str, PathPattern, PathPattern)>,
    /// Who answers "ask"; bound late by [`ApprovalEngine::set_approver`]
    /// (the MCP server binds its client's elicitation after `initialize`).
    approver: RwLock<Option<Arc<dyn Approver>>>,
    /// A sentence saying why no one can be asked, added to the
    /// `approval required: ` denials while there is no approver.
    no_approver: RwLock<Option<String>>,
    /// How long an approver may take before "ask" is a deny; `None`: as
    /// long as it takes.
    ask_timeout: Option<Duration>,
    /// Whether a fully confined command needs no approval in the `default`
    /// and `accept-edits` modes.
    auto_allow: bool,
}

impl ApprovalEngine {
    /// The current mode.
    pub fn mode(&self) -> Mode {
        read(&self.inner.mode)
    }

    /// Switches the mode for every later call (shared by clones).
    pub fn set_mode(&self, mode: Mode) {
        *self.inner.mode.write().unwrap_or_else(|e| e.into_inner()) = mode;
    }

    /// Allows what `rule` matches for the rest of the session (shared by
    /// clones). Deny rules, plan mode and protected paths still apply.
    pub fn grant_session(&self, rule: Rule) {
        let mut grants = self.inner.grants.write().unwrap_or_else(|e| e.into_inner());
        if !grants.iter().any(|g| g.as_str() == rule.as_str()) {
            grants.push(rule);
        }
    }

    /// Whether a person can be asked ([`ApprovalEngine::with_approver`],
    /// [`ApprovalEngine::set_approver`]); without one, "ask" is a deny.
    pub fn has_approver(&self) -> bool {
        self.approver().is_some()
    }

    /// Binds (or, with `None`, unbinds) the approver for every later "ask",
    /// shared by clones: the gate built from this engine asks it from now
    /// on. The MCP server binds its client's elicitation this way once the
    /// client has said, in `initialize`, that it can ask the user.
    pub fn set_approver(&self, approver: Option<Arc<dyn Approver>>) {
        *self
            .inner
            .approver
            .write()
            .unwrap_or_else(|e| e.into_inner()) = approver;
    }

    /// Sets the sentence that says why no one can be asked (for example
    /// "The MCP client cannot ask the user: …"), shared by clones. While
    /// there is no approver, every `approval required: ` denial carries it
    /// after the engine's reason; `None` removes it.
    pub fn set_no_approver_reason(&self, sentence: Option<String>) {
        *self
            .inner
            .no_approver
            .write()
            .unwrap_or_else(|e| e.into_inner()) = sentence;
    }

    /// The sentence set by [`Self::set_no_approver_reason`], if any.
    pub fn no_approver_reason(&self) -> Option<String> {
        read(&self.inner.no_approver)
    }

    /// How long an approver may take before "ask" is a deny
    /// ([`Self::with_ask_timeout`]); `None`: no limit.
    pub fn ask_timeout(&self) -> Option<Duration> {
        self.inner.ask_timeout
    }

    /// Puts a mounted MCP server's question to the bound approver:
    /// [`ElicitationAnswer::Decline`](super::ElicitationAnswer::Decline) when there is none, and
    /// [`ElicitationAnswer::Cancel`](super::ElicitationAnswer::Cancel) when it takes longer than the ask
    /// timeout.
    pub async fn elicit(
        &self,
        request: super::approver::ElicitationRequest,
    ) -> super::approver::ElicitationAnswer {
        use super::approver::ElicitationAnswer;
        let Some(approver) = self.approver() else {
            return ElicitationAnswer::Decline;
        };
        let asked = approver.elicit(request);
        match self.inner.ask_timeout {
            Some(limit) => tokio::time::timeout(limit, asked)
                .await
                .unwrap_or(ElicitationAnswer::Cancel),
            None => asked.await,
        }
    }

    pub(crate) fn approver(&self) -> Option<Arc<dyn Approver>> {
        read(&self.inner.approver)
    }

    /// The session grants so far.
    pub fn session_grants(&self) -> Vec<Rule> {
        read(&self.inner.grants)
    }

    /// Forgets every session grant.
    pub fn clear_session_grants(&self) {
        self.inner
            .grants
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// The read-deny rules as a filter for the search tools.
    pub fn read_filter(&self) -> ReadFilter {
        let rules = self
            .inner
            .deny
            .iter()
            .filter(|r| r.is_read_rule())
            .cloned()
            .collect();
        ReadFilter::new(self.inner.resolver.clone(), rules)
    }

    /// What glob, grep and ls leave out: paths whose reading would be
    /// denied or would ask, in the mode current at each call; see
    /// [`WalkFilter`].
    pub fn walk_filter(&self) -> WalkFilter {
        let read_rules = |rules: &[Rule]| -> Vec<Rule> {
            rules.iter().filter(|r| r.is_read_rule()).cloned().collect()
        };
        WalkFilter::new(
            self.clone(),
            self.inner.resolver.clone(),
            read_rules(&self.inner.deny),
            read_rules(&self.inner.ask),
            self.inner
                .protected
                .iter()
                .map(|(_, relative, absolute)| (relative.clone(), absolute.clone()))
                .collect(),
        )
    }

    /// Whether a read-deny rule covers `path`; see [`ReadFilter::is_denied`].
    pub fn is_read_denied(&self, path: &Path) -> bool {
        self.read_filter().is_denied(path)
    }

    /// The policy's verdict on a call of `tool` with these arguments,
    /// before any person is asked.
    pub fn evaluate(&self, tool: &dyn Tool, args: &serde_json::Value) -> Decision {
        self.evaluate_access(tool.name(), &Permissions::of(tool, args))
    }

    /// The policy's verdict on a call of the tool named `tool` that touches
    /// `access`.
    pub fn evaluate_access(&self, tool: &str, access: &Access) -> Decision {
        evaluate::Evaluation::new(self, tool, access).run()
    }

    /// [`Self::evaluate_access`], with the call's paths as they were
    /// resolved and judged: what the tool must act on if the call runs.
    pub fn evaluate_judged(&self, tool: &str, access: &Access) -> (Decision, JudgedPaths) {
        let evaluation = evaluate::Evaluation::new(self, tool, access);
        let decision = evaluation.run();
        (decision, evaluation.into_judged())
    }

    /// What "allow for the session" remembers for this call: the tool and
    /// each command part (or the whole command, if it has a hazard), or
    /// each path; a call with neither, the tool. For a call that asks to
    /// run outside the sandbox the grants cover the unconfined run (and the
    /// confined one) and say so (`bash(make deploy) (outside the
    /// sandbox)`); a grant given for a confined call never covers running
    /// outside the sandbox.
    pub fn grants_for(&self, tool: &str, access: &Access) -> Vec<Rule> {
        let grants = self.grants_within(tool, access);
        if matches!(access.containment, Containment::SandboxDisabled { .. }) {
            return grants.into_iter().map(Rule::outside_sandbox).collect();
        }
        grants
    }

    fn grants_within(&self, tool: &str, access: &Access) -> Vec<Rule> {
        if let Some(command) = &access.command {
            let analysis = CommandAnalysis::parse(command);
            if !analysis.hazards.is_empty() || analysis.parts.is_empty() {
                return vec![Rule::exact_command(tool, command)];
            }
            return analysis
                .parts
                .iter()
                .map(|p| Rule::exact_part(tool, p))
                .collect();
        }
        if !access.paths.is_empty() {
            return access
                .paths
                .iter()
                .map(|p| {
                    // The file the person allowed, not a link to it.
                    let (key, absolute) = self.inner.resolver.target_display_key(Path::new(p));
                    Rule::exact_path(tool, &key, absolute)
                })
                .collect();
        }
        vec![Rule::bare(tool)]
    }
}

impl fmt::Debug for ApprovalEngine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = |rules: &[Rule]| rules.iter().map(|r| r.to_string()).collect::<Vec<_>>();
        f.debug_struct("ApprovalEngine")
            .field("root", &self.inner.resolver.root())
            .field("mode", &self.mode())
            .field("allow", &names(&self.inner.allow))
            .field("ask", &names(&self.inner.ask))
            .field("deny", &names(&self.inner.deny))
            .field("grants", &names(&self.session_grants()))
            .field("approver", &self.has_approver())
            .finish()
    }
}

fn read<T: Clone>(lock: &RwLock<T>) -> T {
    lock.read().unwrap_or_else(|e| e.into_inner()).clone()
}
