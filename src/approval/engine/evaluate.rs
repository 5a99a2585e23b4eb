//! The policy's verdict on one call: the steps of [`ApprovalEngine`]'s
//! evaluation, first match wins.

use std::path::{Path, PathBuf};

use super::ApprovalEngine;
use crate::access::{Access, Capability, Containment};
use crate::approval::decision::{Decision, DecisionSource, Verdict};
use crate::approval::mode::Mode;
use crate::approval::paths::GitPointer;
use crate::approval::rule::{PathKeys, Rule, RuleKind};
use crate::fs::judged::{JudgedPath, JudgedPaths};
use crate::shell::{CommandAnalysis, CommandPart, Hazard};

/// One call being judged.
pub(super) struct Evaluation<'a> {
    engine: &'a ApprovalEngine,
    tool: &'a str,
    access: &'a Access,
    mode: Mode,
    /// Each path as given, with its forms for deny and ask rules and
    /// protected paths (lexical and final target).
    paths: Vec<(String, PathKeys)>,
    /// The forms of each path's final target alone, for allow rules: an
    /// allow rule names the file the user lets the call change, not a link
    /// to it.
    targets: Vec<PathKeys>,
    /// Each path as resolved, for the tool to act on.
    judged: Vec<JudgedPath>,
    analysis: Option<CommandAnalysis>,
}

impl<'a> Evaluation<'a> {
    pub(super) fn new(engine: &'a ApprovalEngine, tool: &'a str, access: &'a Access) -> Self {
        let resolver = &engine.inner.resolver;
        let mut paths = Vec::with_capacity(access.paths.len());
        let mut targets = Vec::with_capacity(access.paths.len());
        let mut judged = Vec::with_capacity(access.paths.len());
        for given in &access.paths {
            let (keys, target, judgement) = resolver.judge(given);
            paths.push((given.clone(), keys));
            targets.push(target);
            judged.push(judgement);
        }
        Self {
            engine,
            tool,
            access,
            mode: engine.mode(),
            paths,
            targets,
            judged,
            analysis: access.command.as_deref().map(|command| {
                let mut analysis = CommandAnalysis::parse(command);
                if access.terminal {
                    analysis.hazards.push(Hazard::terminal_session());
                }
                analysis
            }),
        }
    }

    /// The call's paths as this evaluation resolved and judged them.
    pub(super) fn into_judged(self) -> JudgedPaths {
        JudgedPaths::new(self.judged)
    }

    pub(super) fn run(&self) -> Decision {
        let cap = self.access.capability;
        if let Some(d) = self.read_only_root() {
            return d;
        }
        if let Some(rule) = self.first_binding(&self.engine.inner.deny, RuleKind::Deny) {
            return Decision::new(
                Verdict::Deny,
                DecisionSource::rule(RuleKind::Deny, rule),
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
        if let Some(d) = self.outside_sandbox() {
            return d;
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
                DecisionSource::rule(RuleKind::Ask, rule),
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
                    "{path:?} is a protected path ({why}.git, .env files, .ssh folders and Claude Code's settings and hooks always need the user's approval), and this call {}.",
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
            DecisionSource::rule(RuleKind::Deny, rule),
            format!(
                "the policy rule deny {:?} cannot be checked against `{command}`: the command {}. Deny rules hold in every mode, so this call needs the user's approval. Write the commands you mean as plain words (no eval, inline code, arithmetic, [[ ]] or command names built from variables) so the rule can be checked.",
                rule.as_str(),
                describe_opaque(analysis),
            ),
        ))
    }

    /// Whether the call asks to run its command outside the sandbox
    /// (`dangerously_disable_sandbox` under an active sandbox).
    fn unconfined(&self) -> bool {
        matches!(self.access.containment, Containment::SandboxDisabled { .. })
    }

    /// A command that asks to run outside the sandbox: an ask in every
    /// mode, bypass included (plan mode has denied it already), unless a
    /// rule of the policy's `allow_unsandboxed` or a session grant given
    /// for an unconfined run covers it. An `allow` rule never does: it
    /// names a command the user trusts inside the sandbox, and a command
    /// it allows can run code the model wrote (`cargo test --config
    /// target.X.runner=…`, a `build.rs`).
    fn outside_sandbox(&self) -> Option<Decision> {
        let Containment::SandboxDisabled { reason } = &self.access.containment else {
            return None;
        };
        if let (Some(_), _) = self.allowed() {
            return None;
        }
        let why = match reason.as_deref().map(str::trim) {
            Some(reason) if !reason.is_empty() => format!(" The reason given: {reason:?}."),
            _ => " No reason was given.".to_owned(),
        };
        Some(Decision::new(
            Verdict::Ask,
            DecisionSource::OutsideSandbox,
            format!(
                "this call asks to run outside the sandbox (dangerously_disable_sandbox), with the user's full authority: it {}.{why} Running outside the sandbox always needs the user's approval unless the policy's allow_unsandboxed list names the command (allow rules do not); without it, run the command inside the sandbox.",
                self.what(),
            ),
        ))
    }

    fn by_mode(&self, hazard_note: Option<String>) -> Decision {
        if self.access.capability == Capability::Exec
            && self.access.containment == Containment::Sandboxed
            && self.engine.inner.auto_allow
            && matches!(self.mode, Mode::Default | Mode::AcceptEdits)
        {
            return Decision::new(
                Verdict::Allow,
                DecisionSource::Sandbox,
                format!(
                    "allowed: the command runs confined by the sandbox, which {} mode lets run without asking",
                    self.mode
                ),
            );
        }
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

    /// `given` as reasons show it: with where it leads when that is not the
    /// path as written (`notes.txt (a link to .git/commondir)`).
    fn shown_with_target(&self, given: &str, judged: &JudgedPath) -> String {
        let resolver = &self.engine.inner.resolver;
        let Some(target) = &judged.target else {
            return given.to_owned();
        };
        let (key, absolute) = resolver.display_key(target);
        if resolver.display_key(Path::new(given)) == (key.clone(), absolute) {
            return given.to_owned();
        }
        let shown = if absolute { format!("/{key}") } else { key };
        format!("{given} (a link to {shown})")
    }

    fn parts(&self) -> &[CommandPart] {
        self.analysis.as_ref().map_or(&[], |a| &a.parts)
    }

    /// Whether allow rules and session grants cover the call: its source,
    /// or a note on why a command was not covered.
    fn allowed(&self) -> (Option<DecisionSource>, Option<String>) {
        // Outside the sandbox only `allow_unsandboxed` and the grants given
        // for unconfined runs count; inside it, those and `allow` and every
        // grant.
        let unconfined = self.unconfined();
        let rules: &[Rule] = if unconfined {
            &[]
        } else {
            &self.engine.inner.allow
        };
        let unsandboxed = &self.engine.inner.allow_unsandboxed;
        let grants: Vec<Rule> = self
            .engine
            .session_grants()
            .into_iter()
            .filter(|g| !unconfined || g.is_outside_sandbox())
            .collect();
        let rule_source = |r: &Rule| DecisionSource::rule(RuleKind::Allow, r);
        let unsandboxed_source = |r: &Rule| DecisionSource::UnsandboxedRule(r.to_string());
        let grant_source = |r: &Rule| DecisionSource::SessionGrant(r.to_string());
        let candidates = || {
            rules
                .iter()
                .map(move |r| (r, rule_source(r)))
                .chain(unsandboxed.iter().map(move |r| (r, unsandboxed_source(r))))
                .chain(grants.iter().map(move |g| (g, grant_source(g))))
                .filter(|(r, _)| r.binds(self.tool, self.access))
        };
        // A bare rule covers every call of its tool.
        if let Some((_, source)) = candidates().find(|(r, _)| r.is_bare()) {
            return (Some(source), None);
        }
        if let Some(command) = &self.access.command {
            // A rule naming the whole command vouches for it as written,
            // not for what is typed into its terminal.
            if !self.access.terminal
                && let Some((_, source)) =
                    candidates().find(|(r, _)| r.matches_whole_command(command))
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
        for keys in &self.targets {
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
    /// makes it protected when it is not one of [`PROTECTED_PATHS`](crate::access::PROTECTED_PATHS).
    fn protected(&self) -> Option<(String, Option<GitPointer>)> {
        for ((given, keys), judged) in self.paths.iter().zip(&self.judged) {
            if let Some(found) = self.engine.protection(keys) {
                return Some((self.shown_with_target(given, judged), found));
            }
        }
        // Redirection targets of a command.
        for hazard in self.analysis.iter().flat_map(|a| &a.hazards) {
            if let Hazard::Redirection(target) = hazard {
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
    /// of [`PROTECTED_PATHS`](crate::access::PROTECTED_PATHS), `Some(Some(pointer))` for a git directory a
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
