//! Setting up an [`ApprovalEngine`]: mode, rules, policy, approver.

use std::path::Path;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use super::{ApprovalEngine, Inner, read};
use crate::access::PROTECTED_PATHS;
use crate::approval::approver::Approver;
use crate::approval::mode::Mode;
use crate::approval::paths::PathResolver;
use crate::approval::rule::{PathPattern, Rule, RuleKind};

impl ApprovalEngine {
    /// An engine for the workspace at `root`: default mode, no rules, no
    /// approver.
    pub fn new(root: impl AsRef<Path>) -> Self {
        let protected = PROTECTED_PATHS
            .iter()
            .filter_map(|line| {
                // Matched inside the root and anywhere on disk.
                let relative = PathPattern::build(&format!("**/{line}")).ok()?;
                let absolute = PathPattern::build(&format!("//**/{line}")).ok()?;
                Some((*line, relative, absolute))
            })
            .collect();
        Self {
            inner: Arc::new(Inner {
                resolver: Arc::new(PathResolver::new(root.as_ref())),
                mode: RwLock::new(Mode::Default),
                allow: Vec::new(),
                allow_unsandboxed: Vec::new(),
                ask: Vec::new(),
                deny: Vec::new(),
                grants: RwLock::new(Vec::new()),
                read_only_roots: Vec::new(),
                protected,
                approver: RwLock::new(None),
                no_approver: RwLock::new(None),
                ask_timeout: None,
                auto_allow: true,
            }),
        }
    }

    fn inner_mut(&mut self) -> &mut Inner {
        // Builders run before the engine is shared; make_mut-like without
        // requiring Clone on Inner: a shared engine is rebuilt.
        if Arc::get_mut(&mut self.inner).is_none() {
            let i = &self.inner;
            self.inner = Arc::new(Inner {
                resolver: i.resolver.clone(),
                mode: RwLock::new(read(&i.mode)),
                allow: i.allow.clone(),
                allow_unsandboxed: i.allow_unsandboxed.clone(),
                ask: i.ask.clone(),
                deny: i.deny.clone(),
                grants: RwLock::new(read(&i.grants)),
                read_only_roots: i.read_only_roots.clone(),
                protected: i.protected.clone(),
                approver: RwLock::new(read(&i.approver)),
                no_approver: RwLock::new(read(&i.no_approver)),
                ask_timeout: i.ask_timeout,
                auto_allow: i.auto_allow,
            });
        }
        Arc::get_mut(&mut self.inner).expect("just made unique")
    }

    /// This engine in `mode`.
    pub fn with_mode(mut self, mode: Mode) -> Self {
        *self
            .inner_mut()
            .mode
            .get_mut()
            .unwrap_or_else(|e| e.into_inner()) = mode;
        self
    }

    /// Whether a command that runs fully confined by the sandbox
    /// ([`Containment::Sandboxed`](crate::access::Containment)) is
    /// allowed without asking in the `default` and `accept-edits` modes,
    /// unless a deny or ask rule matches it (default `true`; the policy's
    /// `[sandbox] auto_allow`).
    pub fn with_auto_allow(mut self, auto_allow: bool) -> Self {
        self.inner_mut().auto_allow = auto_allow;
        self
    }

    /// This engine with one more rule.
    pub fn with_rule(mut self, kind: RuleKind, rule: Rule) -> Self {
        let inner = self.inner_mut();
        match kind {
            RuleKind::Allow => inner.allow.push(rule),
            RuleKind::Ask => inner.ask.push(rule),
            RuleKind::Deny => inner.deny.push(rule),
        }
        self
    }

    /// This engine letting the command `rule` names run outside the
    /// sandbox (`dangerously_disable_sandbox`) without asking: the
    /// policy's `allow_unsandboxed`. No allow rule does that.
    pub fn with_unsandboxed_rule(mut self, rule: Rule) -> Self {
        self.inner_mut().allow_unsandboxed.push(rule);
        self
    }

    /// This engine with `path` (and, when it differs, its canonical form)
    /// as a read-only root: a write there is denied. The roots themselves
    /// go to the Workspace; this is what the engine denies.
    pub fn with_read_only_root(mut self, path: impl AsRef<Path>) -> Self {
        let path = path.as_ref().to_path_buf();
        let inner = self.inner_mut();
        if let Ok(canonical) = std::fs::canonicalize(&path)
            && canonical != path
        {
            inner.read_only_roots.push(path);
            inner.read_only_roots.push(canonical);
        } else {
            inner.read_only_roots.push(path);
        }
        self
    }

    /// The workspace root this engine judges paths against.
    pub fn root(&self) -> &Path {
        self.inner.resolver.root()
    }

    /// This engine asking `approver` whenever the verdict is "ask" (see
    /// also [`ApprovalEngine::set_approver`], which binds one later).
    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> Self {
        *self
            .inner_mut()
            .approver
            .get_mut()
            .unwrap_or_else(|e| e.into_inner()) = Some(approver);
        self
    }

    /// This engine giving an approver at most `timeout` to answer: a
    /// question unanswered by then is dropped (a dropped
    /// [`Approver::approve`] future withdraws it) and the call is denied
    /// with a reason saying no answer came in time. `None` (the default
    /// of [`ApprovalEngine::new`]) waits as long as the approver takes;
    /// a [`Session`](crate::session::Session) sets
    /// [`SessionConfig::ask_timeout`](crate::session::SessionConfig::ask_timeout).
    pub fn with_ask_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.inner_mut().ask_timeout = timeout;
        self
    }
}
