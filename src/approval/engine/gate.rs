//! The engine as the kernel's [`Gate`]: the policy's verdict, then the
//! approver for "ask" (or a deny that says which rule would allow the call).

use std::path::Path;
use std::time::Duration;

use futures::future::BoxFuture;
use tower::BoxError;

use super::ApprovalEngine;
use crate::access::{Access, Permissions};
use crate::approval::approver::{ApprovalAnswer, ApprovalRequest};
use crate::approval::decision::{Decision, DecisionSource, Verdict};
use crate::fs::judged::JudgedPaths;
use crate::shell::CommandAnalysis;
use crate::{Extensions, Gate, GateDecision, GateRequest};

impl ApprovalEngine {
    /// Decides one gate request, asking the approver if needed; the
    /// decision says what decided.
    pub fn decide_request(&self, request: GateRequest) -> BoxFuture<'static, Decision> {
        self.decide_request_with(request, |decision| decision)
    }

    /// [`Self::decide_request`] with the policy's verdict passed through
    /// `adjust` before anyone is asked (a PreToolUse hook's allow or ask:
    /// see [`crate::hooks`]).
    pub fn decide_request_with(
        &self,
        request: GateRequest,
        adjust: impl FnOnce(Decision) -> Decision + Send + 'static,
    ) -> BoxFuture<'static, Decision> {
        let judging = self.decide_judged(request, adjust);
        Box::pin(async move { judging.await.0 })
    }

    /// [`Self::decide_request_with`], with the call's paths as they were
    /// resolved once and judged: what the tool must act on if the call
    /// runs (the kernel hands them to it in
    /// [`GatedArgs::extensions`](crate::GatedArgs::extensions)).
    pub fn decide_judged(
        &self,
        request: GateRequest,
        adjust: impl FnOnce(Decision) -> Decision + Send + 'static,
    ) -> BoxFuture<'static, (Decision, JudgedPaths)> {
        let engine = self.clone();
        Box::pin(async move {
            let tool = request.tool.tool().clone();
            let access = Permissions::of(tool.as_ref(), &request.args);
            let (decision, judged) = engine.evaluate_judged(tool.name(), &access);
            let decision = adjust(decision);
            if decision.verdict != Verdict::Ask {
                return (decision, judged);
            }
            let Some(approver) = engine.approver() else {
                return (
                    no_one_to_ask(&engine, tool.name(), &access, decision),
                    judged,
                );
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
            let asking = approver.approve(ask);
            let answer = match engine.ask_timeout() {
                None => asking.await,
                // Dropping the future withdraws the question.
                Some(limit) => match tokio::time::timeout(limit, asking).await {
                    Ok(answer) => answer,
                    Err(_) => ApprovalAnswer::Unanswered(unanswered_in_time(limit)),
                },
            };
            (answer_decision(&engine, answer, session_grants), judged)
        })
    }
}

/// The decision for a person's answer; "allow for the session" records
/// its grants first.
fn answer_decision(
    engine: &ApprovalEngine,
    answer: ApprovalAnswer,
    session_grants: Vec<crate::approval::rule::Rule>,
) -> Decision {
    match answer {
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
        ApprovalAnswer::Unanswered(reason) => {
            Decision::new(Verdict::Deny, DecisionSource::Person, reason)
        }
    }
}

/// The reason for a question no one answered within `limit`.
fn unanswered_in_time(limit: Duration) -> String {
    format!(
        "approval timed out: no answer came within {}, so the call was not run. \
         Ask the user whether it may run before trying it again, or do what you can without it.",
        seconds(limit)
    )
}

/// `limit` for a person: `120 s`, `1.5 s`.
fn seconds(limit: Duration) -> String {
    if limit.subsec_millis() == 0 {
        format!("{} s", limit.as_secs())
    } else {
        format!("{:.1} s", limit.as_secs_f64())
    }
}

/// "Ask" with no approver: a deny that starts `approval required: `, says
/// why no one can be asked when the engine knows, and names the rule that
/// would allow the call.
fn no_one_to_ask(
    engine: &ApprovalEngine,
    tool: &str,
    access: &Access,
    decision: Decision,
) -> Decision {
    let opaque = access
        .command
        .as_deref()
        .is_some_and(|c| !CommandAnalysis::parse(c).fully_understood());
    let fix = if opaque {
        ", and no policy rule can allow it as written.".to_owned()
    } else {
        format!(
            ". Do what you can without it, or tell the user which rule would allow it in the policy file (for example allow = [\"{}\"]).",
            suggestion(tool, access, engine),
        )
    };
    let why = engine
        .no_approver_reason()
        .map(|sentence| format!("{sentence} "))
        .unwrap_or_default();
    let reason = format!(
        "approval required: {} {why}No one can approve it in this session, so it was not run{fix}",
        decision.reason,
    );
    Decision::new(Verdict::Deny, decision.source, reason)
}

impl Gate for ApprovalEngine {
    fn decide(&self, request: GateRequest) -> BoxFuture<'static, Result<GateDecision, BoxError>> {
        let decision = self.decide_judged(request, |decision| decision);
        Box::pin(async move {
            let (decision, judged) = decision.await;
            Ok(gate_decision(decision, judged))
        })
    }
}

/// The kernel's answer for a decision: an allow carries the judged paths to
/// the tool.
pub(crate) fn gate_decision(decision: Decision, judged: JudgedPaths) -> GateDecision {
    match decision.verdict {
        Verdict::Allow => {
            let mut extensions = Extensions::new();
            extensions.insert(judged);
            GateDecision::AllowWith(extensions)
        }
        Verdict::Ask | Verdict::Deny => GateDecision::Deny(Some(decision.reason)),
    }
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
