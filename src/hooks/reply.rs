//! What a hook said: exit 0 with or without JSON on stdout, exit 2 (block,
//! stderr the reason), or a failure (any other exit, a signal, a timeout,
//! JSON that does not parse).

use serde::Deserialize;
use serde_json::{Value, json};

use super::config::{HookEvent, OnFailure};
use super::run::{Ending, HookRun};

/// The JSON a hook may print on stdout at exit 0 (Claude Code's fields;
/// others are ignored).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HookOutput {
    /// `false` stops the call (agentcore cannot stop the agent: it blocks).
    #[serde(default, rename = "continue")]
    pub(crate) proceed: Option<bool>,
    /// Why, with `continue: false`.
    #[serde(default)]
    pub(crate) stop_reason: Option<String>,
    /// A message for the user (shown in the hook's event).
    #[serde(default)]
    pub(crate) system_message: Option<String>,
    /// `"block"` (PostToolUse; and PreToolUse's older form, with
    /// `"approve"`).
    #[serde(default)]
    pub(crate) decision: Option<String>,
    /// Why, with `decision`.
    #[serde(default)]
    pub(crate) reason: Option<String>,
    /// The event's own fields.
    #[serde(default)]
    pub(crate) hook_specific_output: Option<SpecificOutput>,
}

/// `hookSpecificOutput`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SpecificOutput {
    /// PreToolUse: `allow`, `deny` or `ask`.
    #[serde(default)]
    pub(crate) permission_decision: Option<String>,
    /// Why.
    #[serde(default)]
    pub(crate) permission_decision_reason: Option<String>,
    /// PreToolUse: the arguments to run with instead.
    #[serde(default)]
    pub(crate) updated_input: Option<Value>,
    /// Text added to what the model reads.
    #[serde(default)]
    pub(crate) additional_context: Option<String>,
}

/// What one hook said.
#[derive(Clone, Debug)]
pub(crate) enum Reply {
    /// Exit 0 with no JSON on stdout.
    Quiet,
    /// Exit 0 with JSON on stdout.
    Json(Box<HookOutput>),
    /// Exit 2: blocks; stderr is the reason.
    Block(String),
    /// Any other ending, or JSON that does not parse: how it failed.
    Failed(String),
    /// The call was cancelled while it ran.
    Cancelled,
}

impl Reply {
    /// Reads a finished hook.
    pub(crate) fn of(run: &HookRun) -> Self {
        match &run.ending {
            Ending::Exited(0) => {
                let out = run.stdout.trim();
                if !out.starts_with('{') {
                    return Reply::Quiet;
                }
                match serde_json::from_str::<HookOutput>(out) {
                    Ok(output) => Reply::Json(Box::new(output)),
                    Err(err) => {
                        Reply::Failed(format!("exit 0, but its JSON output is invalid: {err}"))
                    }
                }
            }
            Ending::Exited(2) => Reply::Block(run.stderr.trim().to_owned()),
            Ending::Cancelled => Reply::Cancelled,
            Ending::Refused(why) => Reply::Block(why.clone()),
            other => Reply::Failed(other.describe()),
        }
    }

    /// How the hook failed, if it did and the failure blocks: the hook's
    /// `"onFailure": "block"` or `fail_closed`.
    pub(crate) fn blocking_failure<'a>(
        &'a self,
        run: &HookRun,
        fail_closed: bool,
    ) -> Option<&'a str> {
        match self {
            Reply::Failed(how) if fail_closed || run.hook.on_failure == OnFailure::Block => {
                Some(how)
            }
            _ => None,
        }
    }
}

/// `EVENT hook "CMD" failed (HOW); blocking as configured.`
pub(crate) fn failure_text(event: HookEvent, command: &str, how: &str) -> String {
    format!("{event} hook {command:?} failed ({how}); blocking as configured.")
}

/// The payload of the hook's `ToolExecUpdate{kind: hook}`.
pub(crate) fn update(event: HookEvent, run: &HookRun, reply: &Reply, effect: &str) -> Value {
    let mut payload = json!({
        "hook_event_name": event.as_str(),
        "hook": run.hook.command,
        "exit": run.ending.code(),
        "duration_ms": u64::try_from(run.duration.as_millis()).unwrap_or(u64::MAX),
        "effect": effect,
    });
    if let Reply::Failed(how) = reply {
        payload["error"] = Value::String(how.clone());
    }
    if let Reply::Json(output) = reply
        && let Some(message) = &output.system_message
    {
        payload["system_message"] = Value::String(message.clone());
    }
    payload
}
