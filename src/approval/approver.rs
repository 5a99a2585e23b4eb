//! Asking a person: the [`Approver`] hook.

use std::fmt;
use std::future::Future;

use futures::future::BoxFuture;
use serde_json::Value;

use super::decision::Decision;
use super::rule::Rule;
use crate::access::Access;

/// What an [`Approver`] is asked about one call.
#[derive(Clone, Debug)]
pub struct ApprovalRequest {
    /// The tool's name.
    pub tool: String,
    /// The call's id.
    pub call_id: String,
    /// The tool's label, if any ("Run Command").
    pub label: Option<String>,
    /// The coerced, validated arguments.
    pub args: Value,
    /// The tool's preview (e.g. the unified diff of an edit), if any.
    pub preview: Option<String>,
    /// What the call touches.
    pub access: Access,
    /// Why the engine asks (verdict [`Verdict::Ask`](super::Verdict::Ask)).
    pub decision: Decision,
    /// What [`ApprovalAnswer::AllowSession`] will remember: the tool and the
    /// normalized specifier (each command part, or each path).
    pub session_grants: Vec<Rule>,
}

/// A person's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApprovalAnswer {
    /// Run this call only.
    AllowOnce,
    /// Run it, and allow the same tool and specifier for the rest of the
    /// session (see [`ApprovalRequest::session_grants`]).
    AllowSession,
    /// Refuse, with a reason for the model.
    Deny(Option<String>),
    /// No answer could be had: the question could not be put to the
    /// person, or their answer could not be read. The call is denied with
    /// this reason, as it is, for the model (it should say what happened
    /// and what to do; it is not the person's refusal).
    Unanswered(String),
}

/// Answers the engine's "ask": a harness with a person implements it.
/// Without an approver (the CLI; the MCP server when its client cannot ask
/// the user) "ask" is a deny whose reason starts `approval required: `.
/// The MCP server answers through the client's elicitation when the client
/// declares it.
pub trait Approver: Send + Sync + 'static {
    /// Asks about one call. The future may take as long as the person does,
    /// up to the engine's ask timeout
    /// ([`ApprovalEngine::with_ask_timeout`](super::ApprovalEngine::with_ask_timeout));
    /// it is dropped if the call is cancelled or the timeout passes, and
    /// dropping it should withdraw the question.
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'static, ApprovalAnswer>;
}

/// An approver from an async closure.
///
/// ```
/// use agentcore::approval::{approver_fn, ApprovalAnswer};
/// let approver = approver_fn(|req| async move {
///     if req.tool == "edit" { ApprovalAnswer::AllowOnce } else { ApprovalAnswer::Deny(None) }
/// });
/// # let _ = approver;
/// ```
pub fn approver_fn<F, Fut>(f: F) -> FnApprover<F>
where
    F: Fn(ApprovalRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ApprovalAnswer> + Send + 'static,
{
    FnApprover { f }
}

/// An approver made by [`approver_fn`].
#[derive(Clone)]
pub struct FnApprover<F> {
    f: F,
}

impl<F> fmt::Debug for FnApprover<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnApprover").finish_non_exhaustive()
    }
}

impl<F, Fut> Approver for FnApprover<F>
where
    F: Fn(ApprovalRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ApprovalAnswer> + Send + 'static,
{
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'static, ApprovalAnswer> {
        Box::pin((self.f)(request))
    }
}
