//! PreToolUse: the hooks in the gate, before the approval engine.

use std::sync::Arc;

use agentcore_stages::coerce::parse_and_coerce;
use agentcore_stages::validate::schema_issues;
use agentcore_stages::{BoxError, CallContext, RawArgs, RegisteredTool, ValidationFailure};
use futures::future::BoxFuture;
use serde_json::{Map, Value};

use super::config::HookEvent;
use super::input::{moved_since_shown, tool_input};
use super::reply::{self, Reply};
use super::run::HookRun;
use super::{HookRunner, report};
use crate::access::Permissions;
use crate::approval::{ApprovalEngine, Decision, DecisionSource, Mode, RuleKind, Verdict};
use crate::fs::judged::JudgedPaths;
use crate::{Content, Gate, GateDecision, GateRequest};

/// A [`Gate`] that runs the PreToolUse hooks first, then the approval
/// engine (or another gate) on what they leave.
///
/// - exit 2, `"permissionDecision": "deny"` (or the older
///   `"decision": "block"`), `"continue": false`, or a failure that blocks:
///   `Denied` with the hook's reason; nothing else is asked;
/// - `updatedInput`: the arguments are replaced, coerced, validated and
///   previewed again, and the engine judges the new ones; an invalid
///   rewrite is `Denied`;
/// - `"ask"`: the call asks, however the engine would have allowed it (a
///   deny when no one can be asked); the engine's deny still wins;
/// - `"allow"`: an ask of the mode or of an ask rule becomes an allow; a
///   deny rule, plan mode, a read-only root, a protected path, a command
///   a deny rule cannot be checked against and a command that asks to run
///   outside the sandbox still deny or ask.
///
/// Several hooks: a deny wins over an ask, an ask over an allow; two
/// different rewrites deny the call.
#[derive(Clone)]
pub struct PreToolUseGate {
    runner: HookRunner,
    next: Next,
}

#[derive(Clone)]
enum Next {
    Engine(ApprovalEngine),
    Gate(Arc<dyn Gate>),
    AllowAll,
}

impl std::fmt::Debug for PreToolUseGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let next = match &self.next {
            Next::Engine(_) => "approval engine",
            Next::Gate(_) => "gate",
            Next::AllowAll => "none",
        };
        f.debug_struct("PreToolUseGate")
            .field("runner", &self.runner)
            .field("next", &next)
            .finish()
    }
}

impl PreToolUseGate {
    /// The hooks of `runner`, then `engine`.
    pub fn new(runner: HookRunner, engine: ApprovalEngine) -> Self {
        Self {
            runner,
            next: Next::Engine(engine),
        }
    }

    /// The hooks of `runner`, then any gate (`None`: allow). A hook's
    /// `allow` needs the approval engine to mean anything: over another
    /// gate it leaves the decision to that gate; an `ask` (and a write to
    /// a hook's own file) is a deny, since no one is known who could be
    /// asked. Denials and rewrites work the same.
    pub fn over(runner: HookRunner, gate: Option<Arc<dyn Gate>>) -> Self {
        Self {
            runner,
            next: gate.map_or(Next::AllowAll, Next::Gate),
        }
    }
}

impl Gate for PreToolUseGate {
    fn decide(&self, request: GateRequest) -> BoxFuture<'static, Result<GateDecision, BoxError>> {
        let this = self.clone();
        Box::pin(async move { Ok(this.decide_request(request).await) })
    }
}

/// What a hook asked for the call's permission.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Permission {
    Allow(String),
    Ask(String),
}

/// What the PreToolUse hooks of one call said, together.
#[derive(Debug, Default)]
struct PreVerdict {
    denials: Vec<String>,
    permission: Option<Permission>,
    /// (command, arguments) of each rewrite.
    rewrites: Vec<(String, Value)>,
}

impl PreToolUseGate {
    async fn decide_request(&self, mut request: GateRequest) -> GateDecision {
        let tool = request.tool.name().to_owned();
        let input = tool_input(&tool, &request.args, self.runner.root());
        let runs = self
            .runner
            .run(
                HookEvent::PreToolUse,
                &request.call_id,
                &tool,
                &input,
                Map::new(),
                &request.context,
            )
            .await;
        let verdict = combine(&runs, self.runner.config().fail_closed, &request.context);
        if !verdict.denials.is_empty() {
            return GateDecision::Deny(Some(verdict.denials.join("\n")));
        }
        let mut rewritten = false;
        let mut rewrites = verdict.rewrites;
        rewrites.dedup_by(|a, b| a.1 == b.1);
        match rewrites.as_slice() {
            [] => {}
            [(command, args)] => {
                if *args != input {
                    match recheck(&request.tool, args.clone(), &request.context).await {
                        Ok((args, preview)) => {
                            request.args = args;
                            request.preview = preview;
                            rewritten = true;
                        }
                        Err(err) => {
                            return GateDecision::Deny(Some(format!(
                                "the PreToolUse hook {command:?} rewrote the arguments into an invalid call: {err}"
                            )));
                        }
                    }
                }
            }
            [(first, _), (second, _), ..] => {
                return GateDecision::Deny(Some(format!(
                    "the PreToolUse hooks {first:?} and {second:?} rewrote the arguments differently, so the call was not run; the hooks' configuration needs fixing."
                )));
            }
        }
        let mut permission = verdict.permission;
        let access = Permissions::of(request.tool.tool().as_ref(), &request.args);
        let bypass = match &self.next {
            Next::Engine(engine) => engine.mode() == Mode::Bypass,
            _ => false,
        };
        if !bypass && let Some(path) = self.runner.inner.files.touched(&access, self.runner.root())
        {
            permission = Some(Permission::Ask(format!(
                "{} belongs to the configured hooks, which run outside any sandbox with the session's environment, so changing it needs the user's approval.",
                path.display()
            )));
        }
        let args = request.args.clone();
        let decision = self.next_decision(request, permission).await;
        match decision {
            GateDecision::Allow if rewritten => GateDecision::Rewrite(args),
            GateDecision::AllowWith(judged) if rewritten => GateDecision::RewriteWith(args, judged),
            GateDecision::AllowWith(judged) => {
                // The hooks judged where the paths led when they ran; the
                // engine resolved them again: both must have seen one file.
                let moved = judged
                    .get::<JudgedPaths>()
                    .map(|paths| moved_since_shown(&tool, &args, &input, paths))
                    .unwrap_or_default();
                match moved.first() {
                    None => GateDecision::AllowWith(judged),
                    Some(path) => GateDecision::Deny(Some(format!(
                        "path {path:?} led to another file when the PreToolUse hooks judged it than when the policy did (a symbolic link on it changed meanwhile), so the call was not run. Check where the path leads, then make the call again."
                    ))),
                }
            }
            other => other,
        }
    }

    /// The engine's (or the next gate's) decision, with the hooks'
    /// permission applied.
    async fn next_decision(
        &self,
        request: GateRequest,
        permission: Option<Permission>,
    ) -> GateDecision {
        match &self.next {
            Next::AllowAll => match permission {
                Some(Permission::Ask(reason)) => GateDecision::Deny(Some(unanswered(&reason))),
                _ => GateDecision::Allow,
            },
            Next::Gate(gate) => match permission {
                Some(Permission::Ask(reason)) => GateDecision::Deny(Some(unanswered(&reason))),
                _ => match gate.decide(request).await {
                    Ok(decision) => decision,
                    Err(err) => GateDecision::Deny(Some(err.to_string())),
                },
            },
            Next::Engine(engine) => {
                if let Some(Permission::Ask(reason)) = &permission
                    && !engine.has_approver()
                {
                    let decision = engine.evaluate(request.tool.tool().as_ref(), &request.args);
                    return GateDecision::Deny(Some(if decision.verdict == Verdict::Deny {
                        decision.reason
                    } else {
                        match engine.no_approver_reason() {
                            // Why no one can ask, as the engine's own denials say.
                            Some(why) => unanswered(&format!("{reason} {why}")),
                            None => unanswered(reason),
                        }
                    }));
                }
                let (decision, judged) = engine
                    .decide_judged(request, move |d| adjust(d, permission))
                    .await;
                crate::approval::gate_decision(decision, judged)
            }
        }
    }
}

/// A hook's ask with no one to ask.
fn unanswered(reason: &str) -> String {
    format!(
        "approval required: {reason} No one can approve it in this session, so it was not run. Do what you can without it, or tell the user that the hook asks for approval."
    )
}

/// The engine's verdict after a hook's allow or ask.
fn adjust(decision: Decision, permission: Option<Permission>) -> Decision {
    match permission {
        None => decision,
        Some(Permission::Ask(reason)) => {
            if decision.verdict == Verdict::Deny {
                decision
            } else {
                Decision {
                    verdict: Verdict::Ask,
                    reason,
                    ..decision
                }
            }
        }
        Some(Permission::Allow(reason)) => {
            // Deny wins: a deny rule that cannot be checked, or a
            // protected path, keep asking; and a command that asks to run
            // outside the sandbox keeps asking the person, since a hook
            // cannot know what the command will run (only the policy's
            // allow_unsandboxed or the person allows that).
            let held = matches!(
                decision.source,
                DecisionSource::ProtectedPath(_)
                    | DecisionSource::OutsideSandbox
                    | DecisionSource::Rule {
                        kind: RuleKind::Deny,
                        ..
                    }
            );
            if decision.verdict == Verdict::Ask && !held {
                Decision {
                    verdict: Verdict::Allow,
                    reason,
                    ..decision
                }
            } else {
                decision
            }
        }
    }
}

/// Reads every hook's reply, reports each, and puts them together.
fn combine(runs: &[(HookRun, Reply)], fail_closed: bool, cx: &CallContext) -> PreVerdict {
    let event = HookEvent::PreToolUse;
    let mut verdict = PreVerdict::default();
    let mut asks = Vec::new();
    let mut allows = Vec::new();
    for (run, reply) in runs {
        let command = &run.hook.command;
        let denied = |why: &str| format!("PreToolUse hook {command:?} denied this call: {why}");
        let effect = match reply {
            Reply::Quiet => "none",
            Reply::Block(stderr) => {
                verdict.denials.push(denied(if stderr.is_empty() {
                    "it exited with code 2 and gave no reason"
                } else {
                    stderr
                }));
                "deny"
            }
            Reply::Cancelled => {
                verdict
                    .denials
                    .push(agentcore_stages::texts::CANCELLED.to_owned());
                "cancelled"
            }
            Reply::Failed(how) => match reply.blocking_failure(run, fail_closed) {
                Some(_) => {
                    verdict
                        .denials
                        .push(reply::failure_text(event, command, how));
                    "block"
                }
                None => "failed",
            },
            Reply::Json(output) => {
                let specific = output.hook_specific_output.clone().unwrap_or_default();
                let decision = specific.permission_decision.clone().or_else(|| {
                    match output.decision.as_deref() {
                        Some("approve") => Some("allow".to_owned()),
                        Some("block") => Some("deny".to_owned()),
                        _ => None,
                    }
                });
                let reason = specific
                    .permission_decision_reason
                    .clone()
                    .or_else(|| output.reason.clone())
                    .filter(|r| !r.trim().is_empty());
                let mut effect = "none";
                if output.proceed == Some(false) {
                    let why = output
                        .stop_reason
                        .clone()
                        .or_else(|| reason.clone())
                        .unwrap_or_else(|| "no reason given".to_owned());
                    verdict.denials.push(format!(
                        "PreToolUse hook {command:?} stopped the call: {why}"
                    ));
                    effect = "deny";
                }
                match decision.as_deref() {
                    None => {}
                    Some("deny") => {
                        verdict
                            .denials
                            .push(denied(reason.as_deref().unwrap_or("no reason given")));
                        effect = "deny";
                    }
                    Some("ask") => {
                        asks.push(match &reason {
                            Some(r) => format!(
                                "the PreToolUse hook {command:?} asks for the user's approval of this call: {r}."
                            ),
                            None => format!(
                                "the PreToolUse hook {command:?} asks for the user's approval of this call."
                            ),
                        });
                        if effect == "none" {
                            effect = "ask";
                        }
                    }
                    Some("allow") => {
                        allows.push(format!("allowed by the PreToolUse hook {command:?}"));
                        if effect == "none" {
                            effect = "allow";
                        }
                    }
                    Some(other) => {
                        let how = format!(
                            "exit 0, but its permissionDecision {other:?} is not allow, deny or ask"
                        );
                        let failed = Reply::Failed(how.clone());
                        if failed.blocking_failure(run, fail_closed).is_some() {
                            verdict
                                .denials
                                .push(reply::failure_text(event, command, &how));
                            effect = "block";
                        } else {
                            effect = "failed";
                        }
                    }
                }
                match specific.updated_input {
                    Some(args @ Value::Object(_)) => {
                        verdict.rewrites.push((command.clone(), args));
                        if effect == "none" || effect == "allow" || effect == "ask" {
                            effect = "rewrite";
                        }
                    }
                    Some(_) => {
                        let how = "exit 0, but its updatedInput is not a JSON object";
                        verdict
                            .denials
                            .push(reply::failure_text(event, command, how));
                        effect = "block";
                    }
                    None => {}
                }
                effect
            }
        };
        report(cx, event, run, reply, effect);
    }
    verdict.permission = match (asks.is_empty(), allows.is_empty()) {
        (false, _) => Some(Permission::Ask(asks.join(" "))),
        (true, false) => Some(Permission::Allow(allows.join("; "))),
        (true, true) => None,
    };
    verdict
}

/// Coerce, validate and preview rewritten arguments, as the gate stage
/// will (it does again, and emits the new preview).
async fn recheck(
    tool: &RegisteredTool,
    args: Value,
    cx: &CallContext,
) -> Result<(Value, Option<String>), String> {
    let (args, _) = parse_and_coerce(tool, &RawArgs::Value(args))?;
    if let Some(issues) = schema_issues(tool.name(), tool.validator(), &args) {
        return Err(issues);
    }
    tool.tool()
        .validate(&args, cx)
        .await
        .map_err(|ValidationFailure { message, .. }| {
            if message.is_empty() {
                ValidationFailure::DEFAULT_MESSAGE.to_owned()
            } else {
                message
            }
        })?;
    let preview = tool.tool().preview(&args, cx).await.map_err(|err| {
        let text: Vec<&str> = err.content.iter().filter_map(Content::as_text).collect();
        format!("preview tool \"{}\": {}", tool.name(), text.join("\n"))
    })?;
    Ok((args, preview))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decision(verdict: Verdict, source: DecisionSource) -> Decision {
        Decision {
            verdict,
            source,
            reason: "engine".into(),
        }
    }

    #[test]
    fn allow_skips_the_ask_of_the_mode_but_not_a_protected_path_or_a_deny() {
        let allow = || Some(Permission::Allow("hook".into()));
        let mode = decision(
            Verdict::Ask,
            DecisionSource::Mode(crate::approval::Mode::Default),
        );
        assert_eq!(adjust(mode, allow()).verdict, Verdict::Allow);
        let protected = decision(Verdict::Ask, DecisionSource::ProtectedPath(".git".into()));
        assert_eq!(adjust(protected, allow()).verdict, Verdict::Ask);
        let opaque = decision(
            Verdict::Ask,
            DecisionSource::Rule {
                kind: RuleKind::Deny,
                rule: "bash(rm *)".into(),
            },
        );
        assert_eq!(adjust(opaque, allow()).verdict, Verdict::Ask);
        let denied = decision(
            Verdict::Deny,
            DecisionSource::Rule {
                kind: RuleKind::Deny,
                rule: "bash(rm *)".into(),
            },
        );
        assert_eq!(adjust(denied, allow()).verdict, Verdict::Deny);
        let outside = decision(Verdict::Ask, DecisionSource::OutsideSandbox);
        assert_eq!(adjust(outside, allow()).verdict, Verdict::Ask);
    }

    #[test]
    fn ask_turns_an_allow_into_an_ask_but_never_a_deny_into_one() {
        let ask = || Some(Permission::Ask("hook asks".into()));
        let allowed = decision(
            Verdict::Allow,
            DecisionSource::Mode(crate::approval::Mode::Bypass),
        );
        let asked = adjust(allowed, ask());
        assert_eq!(asked.verdict, Verdict::Ask);
        assert_eq!(asked.reason, "hook asks");
        let denied = decision(
            Verdict::Deny,
            DecisionSource::Mode(crate::approval::Mode::Plan),
        );
        assert_eq!(adjust(denied, ask()).verdict, Verdict::Deny);
    }
}
