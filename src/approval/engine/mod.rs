//! [`ApprovalEngine`]: modes, rules, protected paths and session grants
//! behind the kernel's [`Gate`].

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use futures::future::BoxFuture;
use tower::BoxError;

use super::approver::{ApprovalAnswer, ApprovalRequest, Approver};
use super::command::{CommandAnalysis, CommandPart};
use super::decision::{Decision, DecisionSource, Verdict};
use super::mode::Mode;
use super::paths::{GitPointer, PathResolver};
use super::permissions::{Access, Capability, Permissions};
use super::policy::{Policy, RootAccess};
use super::read_filter::{ReadFilter, WalkFilter};
use super::rule::{PathKeys, PathPattern, Rule, RuleKind};
use crate::{Gate, GateDecision, GateRequest, Tool};

/// Paths that ask even where a rule or the mode allows (not in bypass),
/// each matched at any depth: the name `.git` (a directory or a file) and
/// everything under it, `.env` files, `.ssh` folders. Besides these, a git
/// directory that a `.git` file points to (`gitdir: …`) is protected too:
/// see [`ApprovalEngine`], step 8.
pub const PROTECTED_PATHS: [&str; 4] = [".git", ".git/**", ".env*", "**/.ssh/**"];

/// The policy engine: an ordinary [`Gate`].
///
/// Evaluation of one call, first match wins:
/// 1. a write into a read-only root: deny;
/// 2. a deny rule: deny (in every mode);
/// 3. plan mode, for a write or a command: deny;
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
///    [`PROTECTED_PATHS`], or a directory that a `.git` file (`gitdir: X`)
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
/// use agentcore::approval::{ApprovalEngine, Policy};
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
    ask: Vec<Rule>,
    deny: Vec<Rule>,
    grants: RwLock<Vec<Rule>>,
    read_only_roots: Vec<PathBuf>,
    protected: Vec<(&'static str, PathPattern, PathPattern)>,
    approver: Option<Arc<dyn Approver>>,
}

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
                ask: Vec::new(),
                deny: Vec::new(),
                grants: RwLock::new(Vec::new()),
                read_only_roots: Vec::new(),
                protected,
                approver: None,
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
                ask: i.ask.clone(),
                deny: i.deny.clone(),
                grants: RwLock::new(read(&i.grants)),
                read_only_roots: i.read_only_roots.clone(),
                protected: i.protected.clone(),
                approver: i.approver.clone(),
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

    /// This engine with a policy's mode, rules and read-only roots (the
    /// roots themselves go to the Workspace: [`Policy::apply_roots`]).
    pub fn with_policy(mut self, policy: &Policy) -> Self {
        let inner = self.inner_mut();
        *inner.mode.get_mut().unwrap_or_else(|e| e.into_inner()) = policy.mode;
        inner.allow.extend(policy.allow.iter().cloned());
        inner.ask.extend(policy.ask.iter().cloned());
        inner.deny.extend(policy.deny.iter().cloned());
        let root = inner.resolver.root().to_path_buf();
        for (path, access) in policy.resolved_roots(&root) {
            if access == RootAccess::ReadOnly {
                inner.read_only_roots.push(path.clone());
                if let Ok(canonical) = std::fs::canonicalize(&path)
                    && canonical != path
                {
                    inner.read_only_roots.push(canonical);
                }
            }
        }
        self
    }

    /// This engine asking `approver` whenever the verdict is "ask".
    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.inner_mut().approver = Some(approver);
        self
    }

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
            .filter(|r| r.tool() == "read")
            .cloned()
            .collect();
        ReadFilter::new(self.inner.resolver.clone(), rules)
    }

    /// What glob, grep and ls leave out: paths whose reading would be
    /// denied or would ask, in the mode current at each call; see
    /// [`WalkFilter`].
    pub fn walk_filter(&self) -> WalkFilter {
        let read_rules = |rules: &[Rule]| -> Vec<Rule> {
            rules
                .iter()
                .filter(|r| r.tool() == "read")
                .cloned()
                .collect()
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
        Evaluation::new(self, tool, access).run()
    }

    /// What "allow for the session" remembers for this call: the tool and
    /// each command part (or the whole command, if it has a hazard), or
    /// each path; a call with neither, the tool.
    pub fn grants_for(&self, tool: &str, access: &Access) -> Vec<Rule> {
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
                    let (key, absolute) = self.inner.resolver.display_key(Path::new(p));
                    Rule::exact_path(tool, &key, absolute)
                })
                .collect();
        }
        vec![Rule::bare(tool)]
    }

    /// Decides one gate request, asking the approver if needed; the
    /// decision says what decided.
    pub fn decide_request(&self, request: GateRequest) -> BoxFuture<'static, Decision> {
        let engine = self.clone();
        Box::pin(async move {
            let tool = request.tool.tool().clone();
            let access = Permissions::of(tool.as_ref(), &request.args);
            let decision = engine.evaluate_access(tool.name(), &access);
            if decision.verdict != Verdict::Ask {
                return decision;
            }
            let Some(approver) = engine.inner.approver.clone() else {
                let opaque = access
                    .command
                    .as_deref()
                    .is_some_and(|c| !CommandAnalysis::parse(c).fully_understood());
                if opaque {
                    let reason = format!(
                        "approval required: {} No one can approve it in this session, so it was not run, and no policy rule can allow it as written.",
                        decision.reason,
                    );
                    return Decision::new(Verdict::Deny, decision.source, reason);
                }
                let reason = format!(
                    "approval required: {} No one can approve it in this session, so it was not run. Do what you can without it, or tell the user which rule would allow it in the policy file (for example allow = [\"{}\"]).",
                    decision.reason,
                    suggestion(tool.name(), &access, &engine),
                );
                return Decision::new(Verdict::Deny, decision.source, reason);
            };
            let session_grants = engine.grants_for(tool.name(), &access);
            let ask = ApprovalRequest {
                tool: tool.name().to_owned(),
                call_id: request.call_id,
                label: request.label,
                args: request.args,
                preview: request.preview,
                access,
                decision,
                session_grants: session_grants.clone(),
            };
            match approver.approve(ask).await {
                ApprovalAnswer::AllowOnce => Decision::new(
                    Verdict::Allow,
                    DecisionSource::Person,
                    "the user allowed this call",
                ),
                ApprovalAnswer::AllowSession => {
                    for grant in session_grants {
                        engine.grant_session(grant);
                    }
                    Decision::new(
                        Verdict::Allow,
                        DecisionSource::Person,
                        "the user allowed this for the session",
                    )
                }
                ApprovalAnswer::Deny(reason) => Decision::new(
                    Verdict::Deny,
                    DecisionSource::Person,
                    match reason {
                        Some(r) => format!("the user denied this call: {r}"),
                        None => "the user denied this call. Do not retry it; ask the user how to proceed or try another approach.".to_owned(),
                    },
                ),
            }
        })
    }
}

impl Gate for ApprovalEngine {
    fn decide(&self, request: GateRequest) -> BoxFuture<'static, Result<GateDecision, BoxError>> {
        let decision = self.decide_request(request);
        Box::pin(async move {
            let decision = decision.await;
            Ok(match decision.verdict {
                Verdict::Allow => GateDecision::Allow,
                Verdict::Ask | Verdict::Deny => GateDecision::Deny(Some(decision.reason)),
            })
        })
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
            .field("approver", &self.inner.approver.is_some())
            .finish()
    }
}

fn read<T: Clone>(lock: &RwLock<T>) -> T {
    lock.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// One call being judged.
struct Evaluation<'a> {
    engine: &'a ApprovalEngine,
    tool: &'a str,
    access: &'a Access,
    mode: Mode,
    paths: Vec<(String, PathKeys)>,
    analysis: Option<CommandAnalysis>,
}

impl<'a> Evaluation<'a> {
    fn new(engine: &'a ApprovalEngine, tool: &'a str, access: &'a Access) -> Self {
        let resolver = &engine.inner.resolver;
        let paths = access
            .paths
            .iter()
            .map(|p| (p.clone(), resolver.keys(Path::new(p), true)))
            .collect();
        Self {
            engine,
            tool,
            access,
            mode: engine.mode(),
            paths,
            analysis: access.command.as_deref().map(CommandAnalysis::parse),
        }
    }

    fn run(&self) -> Decision {
        let cap = self.access.capability;
        if let Some(d) = self.read_only_root() {
            return d;
        }
        if let Some(rule) = self.first_binding(&self.engine.inner.deny, RuleKind::Deny) {
            return Decision::new(
                Verdict::Deny,
                DecisionSource::Rule {
                    kind: RuleKind::Deny,
                    rule: rule.to_string(),
                },
                format!(
                    "denied by the policy rule deny {:?}: this call {}. The user does not allow it; do not retry it or work around it with another tool, and choose a different approach.",
                    rule.as_str(),
                    self.what(),
                ),
            );
        }
        if self.mode == Mode::Plan && cap != Capability::Read {
            return Decision::new(
                Verdict::Deny,
                DecisionSource::Mode(Mode::Plan),
                format!(
                    "denied: the session is in planning mode, so files are not changed and commands are not run (this call {}). Read and search as needed, then present your plan; the user will leave planning mode to carry it out.",
                    self.what(),
                ),
            );
        }
        if self.mode == Mode::Bypass {
            if let Some(d) = self.unknown_under_deny() {
                return d;
            }
            return Decision::new(
                Verdict::Allow,
                DecisionSource::Mode(Mode::Bypass),
                "allowed: bypass mode allows every call that no deny rule denies",
            );
        }
        if let Some(rule) = self.first_binding(&self.engine.inner.ask, RuleKind::Ask) {
            return Decision::new(
                Verdict::Ask,
                DecisionSource::Rule {
                    kind: RuleKind::Ask,
                    rule: rule.to_string(),
                },
                format!(
                    "the policy rule ask {:?} requires the user's approval for this call, which {}.",
                    rule.as_str(),
                    self.what(),
                ),
            );
        }
        let (allowed, hazard_note) = self.allowed();
        let decision = match allowed {
            Some(source) => Decision::new(
                Verdict::Allow,
                source.clone(),
                format!("allowed by the {source}"),
            ),
            None => self.by_mode(hazard_note),
        };
        if decision.verdict == Verdict::Allow
            && let Some(d) = self.unknown_under_deny()
        {
            return d;
        }
        if decision.verdict == Verdict::Allow
            && let Some((path, pointer)) = self.protected()
        {
            let why = match pointer {
                None => String::new(),
                Some(pointer) => {
                    let shown = |p: &Path| match p.strip_prefix(self.engine.inner.resolver.root()) {
                        Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
                        _ => p.display().to_string(),
                    };
                    format!(
                        "it is in {}, the git directory that {} points to; ",
                        shown(&pointer.target),
                        shown(&pointer.file),
                    )
                }
            };
            return Decision::new(
                Verdict::Ask,
                DecisionSource::ProtectedPath(path.clone()),
                format!(
                    "{path:?} is a protected path ({why}.git, .env files and .ssh folders always need the user's approval), and this call {}.",
                    self.what(),
                ),
            );
        }
        decision
    }

    /// A command with a part the analysis cannot see, where a deny rule
    /// on commands exists: whether the rule matches is unknown, and deny
    /// rules hold in every mode, so it asks (a deny when no one can be
    /// asked) rather than being allowed by bypass mode or an allow rule.
    fn unknown_under_deny(&self) -> Option<Decision> {
        let command = self.access.command.as_deref()?;
        let analysis = self.analysis.as_ref()?;
        if analysis.fully_understood() {
            return None;
        }
        let rule = self
            .engine
            .inner
            .deny
            .iter()
            .find(|r| r.binds(self.tool, self.access))?;
        Some(Decision::new(
            Verdict::Ask,
            DecisionSource::Rule {
                kind: RuleKind::Deny,
                rule: rule.to_string(),
            },
            format!(
                "the policy rule deny {:?} cannot be checked against `{command}`: the command {}. Deny rules hold in every mode, so this call needs the user's approval. Write the commands you mean as plain words (no eval, inline code, arithmetic, [[ ]] or command names built from variables) so the rule can be checked.",
                rule.as_str(),
                describe_opaque(analysis),
            ),
        ))
    }

    fn by_mode(&self, hazard_note: Option<String>) -> Decision {
        let source = DecisionSource::Mode(self.mode);
        let allow = match self.access.capability {
            Capability::Read => true,
            Capability::Write => self.mode == Mode::AcceptEdits,
            Capability::Exec => false,
        };
        if allow {
            return Decision::new(
                Verdict::Allow,
                source,
                format!("allowed: {} mode allows this", self.mode),
            );
        }
        let kind = match (self.access.capability, self.access.described) {
            (_, false) => format!(
                "tool {:?} declares no permissions, so it is treated as running commands, which need",
                self.tool
            ),
            (Capability::Write, _) => "this call changes files, which needs".to_owned(),
            _ => "this call runs a command, which needs".to_owned(),
        };
        let mut reason = format!(
            "{kind} the user's approval in {} mode (it {}).",
            self.mode,
            self.what()
        );
        if let Some(note) = hazard_note {
            reason.push(' ');
            reason.push_str(&note);
        }
        Decision::new(Verdict::Ask, source, reason)
    }

    /// A plain description of the call for reasons.
    fn what(&self) -> String {
        if let Some(command) = &self.access.command {
            return format!("runs `{command}`");
        }
        if !self.access.paths.is_empty() {
            let verb = match self.access.capability {
                Capability::Read => "reads",
                Capability::Write => "writes",
                Capability::Exec => "uses",
            };
            return format!("{verb} {}", self.access.paths.join(", "));
        }
        format!("calls {}", self.tool)
    }

    fn read_only_root(&self) -> Option<Decision> {
        if self.access.capability != Capability::Write {
            return None;
        }
        let resolver = &self.engine.inner.resolver;
        for (given, keys) in &self.paths {
            let lexical = resolver.lexical(Path::new(given));
            for root in &self.engine.inner.read_only_roots {
                let inside = lexical.starts_with(root)
                    || keys
                        .absolute
                        .iter()
                        .any(|a| Path::new("/").join(a).starts_with(root));
                if inside {
                    return Some(Decision::new(
                        Verdict::Deny,
                        DecisionSource::ReadOnlyRoot(root.clone()),
                        format!(
                            "denied: {given} is in the read-only workspace root {}, where files cannot be changed. Make the change inside the workspace instead.",
                            root.display()
                        ),
                    ));
                }
            }
        }
        None
    }

    /// The first rule in `rules` that binds this call: deny and ask rules
    /// match if any path or any command part matches.
    fn first_binding<'r>(&self, rules: &'r [Rule], kind: RuleKind) -> Option<&'r Rule> {
        debug_assert!(kind != RuleKind::Allow);
        rules.iter().find(|rule| {
            if !rule.binds(self.tool, self.access) {
                return false;
            }
            if rule.is_bare() {
                return true;
            }
            if self
                .paths
                .iter()
                .any(|(_, keys)| rule.matches_path(keys) == Some(true))
            {
                return true;
            }
            self.parts()
                .iter()
                .any(|part| rule.matches_part(part, true) == Some(true))
        })
    }

    fn parts(&self) -> &[CommandPart] {
        self.analysis.as_ref().map_or(&[], |a| &a.parts)
    }

    /// Whether allow rules and session grants cover the call: its source,
    /// or a note on why a command was not covered.
    fn allowed(&self) -> (Option<DecisionSource>, Option<String>) {
        let rules = &self.engine.inner.allow;
        let grants = self.engine.session_grants();
        let rule_source = |r: &Rule| DecisionSource::Rule {
            kind: RuleKind::Allow,
            rule: r.to_string(),
        };
        let grant_source = |r: &Rule| DecisionSource::SessionGrant(r.to_string());
        let candidates = || {
            rules
                .iter()
                .map(move |r| (r, rule_source(r)))
                .chain(grants.iter().map(move |g| (g, grant_source(g))))
                .filter(|(r, _)| r.binds(self.tool, self.access))
        };
        // A bare rule covers every call of its tool.
        if let Some((_, source)) = candidates().find(|(r, _)| r.is_bare()) {
            return (Some(source), None);
        }
        if let Some(command) = &self.access.command {
            if let Some((_, source)) = candidates().find(|(r, _)| r.matches_whole_command(command))
            {
                return (Some(source), None);
            }
            if let Some(analysis) = &self.analysis
                && !analysis.fully_understood()
            {
                return (
                    None,
                    Some(format!(
                        "No allow rule can cover it: the command {}. Run the allowed commands on their own, as plain words.",
                        describe_opaque(analysis)
                    )),
                );
            }
            let parts = self.parts();
            if parts.is_empty() {
                return (None, None);
            }
            let mut first_source = None;
            let mut uncovered = Vec::new();
            for part in parts {
                match candidates().find(|(r, _)| r.matches_part(part, false) == Some(true)) {
                    Some((_, source)) => {
                        first_source.get_or_insert(source);
                    }
                    None => uncovered.push(part.text()),
                }
            }
            let hazards: Vec<String> = self
                .analysis
                .iter()
                .flat_map(|a| a.hazards.iter().map(|h| h.describe()))
                .collect();
            if uncovered.is_empty() && hazards.is_empty() {
                return (first_source, None);
            }
            if first_source.is_none() {
                return (None, None);
            }
            let mut note = String::from("Allow rules cover only some of it:");
            if !uncovered.is_empty() {
                note.push_str(&format!(
                    " no rule allows {}",
                    uncovered
                        .iter()
                        .map(|u| format!("`{u}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            if !hazards.is_empty() {
                if !uncovered.is_empty() {
                    note.push(';');
                }
                note.push_str(&format!(" the command {}", hazards.join(", ")));
            }
            note.push_str(
                ". Run the allowed commands on their own, without redirections or substitutions.",
            );
            return (None, Some(note));
        }
        if self.paths.is_empty() {
            return (None, None);
        }
        let mut first_source = None;
        for (_, keys) in &self.paths {
            match candidates().find(|(r, _)| r.matches_path(keys) == Some(true)) {
                Some((_, source)) => {
                    first_source.get_or_insert(source);
                }
                None => return (None, None),
            }
        }
        (first_source, None)
    }

    /// The first protected path the call names, with the `.git` file that
    /// makes it protected when it is not one of [`PROTECTED_PATHS`].
    fn protected(&self) -> Option<(String, Option<GitPointer>)> {
        for (given, keys) in &self.paths {
            if let Some(found) = self.engine.protection(keys) {
                return Some((given.clone(), found));
            }
        }
        // Redirection targets of a command.
        for hazard in self.analysis.iter().flat_map(|a| &a.hazards) {
            if let super::command::Hazard::Redirection(target) = hazard {
                let keys = self.engine.inner.resolver.keys(Path::new(target), true);
                if let Some(found) = self.engine.protection(&keys) {
                    return Some((target.clone(), found));
                }
            }
        }
        None
    }
}

impl ApprovalEngine {
    /// Whether the path with these keys is protected: `Some(None)` for one
    /// of [`PROTECTED_PATHS`], `Some(Some(pointer))` for a git directory a
    /// `.git` or `commondir` file points to, `None` if not protected.
    fn protection(&self, keys: &PathKeys) -> Option<Option<GitPointer>> {
        let inner = &self.inner;
        if inner
            .protected
            .iter()
            .any(|(_, relative, absolute)| relative.matches(keys) || absolute.matches(keys))
        {
            return Some(None);
        }
        let forms: Vec<PathBuf> = keys
            .absolute
            .iter()
            .map(|a| Path::new("/").join(a))
            .collect();
        inner
            .resolver
            .git_pointers(&forms)
            .into_iter()
            .find(|pointer| forms.iter().any(|form| pointer.covers(form)))
            .map(Some)
    }
}

/// The constructs of a command that hide what it runs, as one clause.
fn describe_opaque(analysis: &CommandAnalysis) -> String {
    let mut seen: Vec<String> = Vec::new();
    for h in analysis.opaque_hazards() {
        let d = h.describe();
        if !seen.contains(&d) {
            seen.push(d);
        }
    }
    seen.join("; it also ")
}

/// A rule that would allow the call, for "approval required" reasons.
fn suggestion(tool: &str, access: &Access, engine: &ApprovalEngine) -> String {
    if let Some(command) = &access.command {
        let analysis = CommandAnalysis::parse(command);
        let words: Vec<&str> = analysis
            .parts
            .first()
            .map(|p| p.words.iter().take(2).map(String::as_str).collect())
            .unwrap_or_default();
        if words.is_empty() {
            return tool.to_owned();
        }
        return format!("{tool}({} *)", words.join(" "));
    }
    if let Some(path) = access.paths.first() {
        let (key, absolute) = engine.inner.resolver.display_key(Path::new(path));
        return if absolute {
            format!("{tool}(//{key})")
        } else {
            format!("{tool}({key})")
        };
    }
    tool.to_owned()
}
