//! What a hook said: exit 0 with or without JSON on stdout, exit 2 (block,
//! stderr the reason), or a failure (any other exit, a signal, a timeout,
//! JSON that does not parse).

use serde::{Deserialize, Serialize};
use serde_json::Value;

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
    let report = HookReport {
        hook_event_name: event.as_str().to_owned(),
        hook: run.hook.command.clone(),
        exit: run.ending.code(),
        duration_ms: u64::try_from(run.duration.as_millis()).unwrap_or(u64::MAX),
        effect: effect.to_owned(),
        error: match reply {
            Reply::Failed(how) => Some(how.clone()),
            _ => None,
        },
        system_message: match reply {
            Reply::Json(output) => output.system_message.clone(),
            _ => None,
        },
    };
    serde_json::to_value(report).unwrap_or(Value::Null)
}

/// What one hook did, as the payload of its
/// `ToolExecUpdate { kind: hook }` event: read it back with
/// `serde_json::from_value::<HookReport>(payload)`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct HookReport {
    /// `PreToolUse`, `PostToolUse` or `PostToolUseFailure`.
    pub hook_event_name: String,
    /// The hook's command, as configured.
    pub hook: String,
    /// Its exit status; `None` when it did not exit on its own (a timeout,
    /// a signal, a failure to start).
    pub exit: Option<i32>,
    /// How long it ran.
    pub duration_ms: u64,
    /// What it did to the call: `none`, `allow`, `ask`, `deny`, `rewrite`,
    /// `block`, `context` or `failed`.
    pub effect: String,
    /// How it failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The `systemMessage` of its JSON reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_message: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The payload keeps the wire format the untyped map had: the five
    /// fields always (a hook that did not exit has `"exit": null`), the
    /// error and the system message only when there are any.
    #[test]
    fn the_report_is_the_same_json_as_before() {
        let report = HookReport {
            hook_event_name: "PreToolUse".into(),
            hook: "./guard.sh".into(),
            exit: None,
            duration_ms: 12,
            effect: "failed".into(),
            error: Some("timed out after 5 s".into()),
            system_message: None,
        };
        let value = serde_json::to_value(&report).unwrap();
        assert_eq!(
            value,
            serde_json::json!({
                "hook_event_name": "PreToolUse",
                "hook": "./guard.sh",
                "exit": null,
                "duration_ms": 12,
                "effect": "failed",
                "error": "timed out after 5 s",
            })
        );
        assert_eq!(serde_json::from_value::<HookReport>(value).unwrap(), report);
    }
}
