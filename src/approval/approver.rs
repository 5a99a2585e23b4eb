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

/// A question a mounted MCP server asks the person (MCP elicitation, form
/// mode), as [`Approver::elicit`] gets it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ElicitationRequest {
    /// The server's name as configured.
    pub server: String,
    /// The question, as the server wrote it: control characters other
    /// than newlines and tabs escaped, at most [`MAX_ELICITATION_CHARS`]
    /// characters (cut with `…`).
    pub message: String,
    /// The form: a JSON Schema object of primitive properties.
    pub schema: Value,
}

/// The longest question text an approver is given.
pub const MAX_ELICITATION_CHARS: usize = 4_000;

/// The largest form (its schema as JSON) put to a person; a larger one is
/// declined without asking.
pub const MAX_ELICITATION_SCHEMA_BYTES: usize = 64 * 1024;

impl ElicitationRequest {
    /// The question of `server`, its `message` escaped and bounded.
    pub fn new(server: impl Into<String>, message: &str, schema: Value) -> Self {
        let mut shown: String = message
            .chars()
            .take(MAX_ELICITATION_CHARS)
            .flat_map(|c| {
                if c.is_control() && c != '\n' && c != '\t' {
                    c.escape_default().collect::<Vec<_>>()
                } else {
                    vec![c]
                }
            })
            .collect();
        if message.chars().count() > MAX_ELICITATION_CHARS {
            shown.push('…');
        }
        Self {
            server: server.into(),
            message: shown,
            schema,
        }
    }

    /// The question as a person is shown it: labelled with the server.
    pub fn labelled(&self) -> String {
        format!("MCP server {:?} asks: {}", self.server, self.message)
    }
}

/// A person's answer to an [`ElicitationRequest`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ElicitationAnswer {
    /// The form, filled in (an object).
    Accept(Value),
    /// The person would not answer; the server goes on without.
    Decline,
    /// The person dismissed the question.
    Cancel,
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

    /// Puts a mounted MCP server's question to the person. By default
    /// nobody answers forms: [`ElicitationAnswer::Decline`], and the server
    /// is told so. The future is dropped after the engine's ask timeout
    /// (the server is then told the person cancelled).
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'static, ElicitationAnswer> {
        let _ = request;
        Box::pin(async { ElicitationAnswer::Decline })
    }
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
