//! The JSONL input of `agentcore run` (protocol 1): one object a line.

use agentcore::checkpoint::{RewindMode, RewindTo};
use std::collections::HashSet;

use serde_json::{Map, Value};

use agentcore::limits::input::MAX_VALUES;
use agentcore::message::jsonl::{Structure, structure};
use agentcore::message::{ToolCall, anthropic, openai};

/// The protocol version in the hello line.
pub const PROTOCOL: u32 = 1;

/// One meaningful input line.
#[derive(Clone, Debug, PartialEq)]
pub enum Input {
    /// `{"user": "…"}`: a new user prompt starts a run.
    User(String),
    /// A turn's calls, from `{"turn": […]}` or an assistant message.
    Turn(TurnInput),
    /// `{"checkpoints": {}}`: list the session's checkpoints.
    Checkpoints,
    /// `{"rewind": {"to": N} | {"call": "ID"} | {"turn": T}, "mode":
    /// "safe" | "skip" | "force"}`: rewind the session's files.
    Rewind(RewindTo, RewindMode),
}

/// A turn and its timing instructions.
#[derive(Clone, Debug, PartialEq)]
pub struct TurnInput {
    /// The calls, in source order.
    pub calls: Vec<ToolCall>,
    /// Deliver a steering message this many ms after the turn starts.
    pub steer_after_ms: Option<u64>,
    /// Abort the turn this many ms after it starts.
    pub abort_after_ms: Option<u64>,
}

/// Parses one physical line: `Ok(None)` for a blank line, `Err` with the
/// `input_error` message otherwise.
pub fn parse_line(line: &str) -> Result<Option<Input>, String> {
    if line.trim().is_empty() {
        return Ok(None);
    }
    if structure(line.as_bytes()) == Structure::TooManyValues {
        // Parsing costs hundreds of bytes a value: refused before it.
        return Err(format!(
            "the line holds more than {MAX_VALUES} JSON values; send fewer (a turn's calls \
             need a handful each)"
        ));
    }
    let value: Value =
        serde_json::from_str(line).map_err(|e| format!("the line is not valid JSON: {e}"))?;
    let Value::Object(object) = value else {
        return Err(shape_error());
    };
    check_one_shape(&object)?;
    if object.contains_key("checkpoints") {
        return Ok(Some(Input::Checkpoints));
    }
    if let Some(rewind) = object.get("rewind") {
        return parse_rewind(rewind, object.get("mode")).map(Some);
    }
    if let Some(user) = object.get("user") {
        return match user {
            Value::String(text) => Ok(Some(Input::User(text.clone()))),
            _ => Err("\"user\" must be a string".to_owned()),
        };
    }
    let calls = if let Some(turn) = object.get("turn") {
        parse_turn(turn)?
    } else if object.get("role").is_some() {
        let message = Value::Object(object.clone());
        let parsed = if object.contains_key("tool_calls") {
            openai::parse_tool_calls(&message)
        } else {
            anthropic::parse_tool_calls(&message)
        };
        parsed.map_err(|e| e.to_string())?
    } else {
        return Err(shape_error());
    };
    check_unique_ids(&calls)?;
    Ok(Some(Input::Turn(TurnInput {
        calls,
        steer_after_ms: millis(&object, "steer_after_ms")?,
        abort_after_ms: millis(&object, "abort_after_ms")?,
    })))
}

fn shape_error() -> String {
    "expected {\"user\": …}, {\"turn\": […]}, an assistant message ({\"role\": \"assistant\", …}), {\"checkpoints\": {}} or {\"rewind\": {\"to\": N}}"
        .to_owned()
}

/// `{"rewind": {"to": N} | {"call": "ID"} | {"turn": T}, "mode": …}`.
fn parse_rewind(target: &Value, mode: Option<&Value>) -> Result<Input, String> {
    let usage = "\"rewind\" must be {\"to\": N}, {\"call\": \"ID\"} or {\"turn\": T}";
    let Value::Object(target) = target else {
        return Err(usage.to_owned());
    };
    let to = match (target.get("to"), target.get("call"), target.get("turn")) {
        (Some(n), None, None) => RewindTo::Checkpoint(n.as_u64().ok_or(usage)?),
        (None, Some(call), None) => RewindTo::Call(call.as_str().ok_or(usage)?.to_owned()),
        (None, None, Some(t)) => RewindTo::Turn(t.as_u64().ok_or(usage)?),
        _ => return Err(usage.to_owned()),
    };
    let mode = match mode.map(|m| m.as_str()) {
        None | Some(Some("safe")) => RewindMode::Safe,
        Some(Some("skip")) => RewindMode::Skip,
        Some(Some("force")) => RewindMode::Force,
        Some(_) => return Err("\"mode\" must be \"safe\", \"skip\" or \"force\"".to_owned()),
    };
    Ok(Input::Rewind(to, mode))
}

/// A line is one thing: a user prompt, a turn, or an assistant message.
/// Holding two of them would leave one unanswered, so it is refused.
fn check_one_shape(object: &Map<String, Value>) -> Result<(), String> {
    let present: Vec<&str> = ["user", "turn", "role", "checkpoints", "rewind"]
        .into_iter()
        .filter(|key| object.contains_key(*key))
        .collect();
    match present.as_slice() {
        ["user", "turn", ..] => Err(
            "the line holds both \"user\" and \"turn\": a user prompt starts a new run and a \
             turn runs tool calls, so send them as separate lines, \
             {\"user\": …} first and then {\"turn\": […]}"
                .to_owned(),
        ),
        [first, second, ..] => Err(format!(
            "the line holds both {first:?} and {second:?}: send each as its own line \
             ({{\"user\": …}} for a prompt, {{\"turn\": […]}} or an assistant message \
             with \"role\" for tool calls)"
        )),
        _ => Ok(()),
    }
}

fn parse_turn(turn: &Value) -> Result<Vec<ToolCall>, String> {
    let Value::Array(items) = turn else {
        return Err("\"turn\" must be an array of calls".to_owned());
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let Value::Object(call) = item else {
                return Err(format!(
                    "turn[{i}] must be an object with id, name and args"
                ));
            };
            let text = |key: &str| match call.get(key) {
                Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
                Some(Value::String(_)) => Err(format!("turn[{i}].{key} must not be empty")),
                Some(_) => Err(format!("turn[{i}].{key} must be a string")),
                None => Err(format!("turn[{i}].{key} is missing")),
            };
            let args = match call.get("args") {
                None => Value::String(String::new()),
                Some(args @ (Value::Object(_) | Value::String(_))) => args.clone(),
                Some(_) => {
                    return Err(format!("turn[{i}].args must be an object or JSON text"));
                }
            };
            let args = match args {
                Value::String(text) => agentcore_stages::RawArgs::Text(text),
                other => agentcore_stages::RawArgs::Value(other),
            };
            Ok(ToolCall::new(text("id")?, text("name")?, args))
        })
        .collect()
}

fn check_unique_ids(calls: &[ToolCall]) -> Result<(), String> {
    let mut seen = HashSet::new();
    for call in calls {
        if !seen.insert(call.call_id.as_str()) {
            return Err(format!(
                "call id {:?} is repeated within the turn",
                call.call_id
            ));
        }
    }
    Ok(())
}

fn millis(object: &Map<String, Value>, key: &str) -> Result<Option<u64>, String> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| format!("\"{key}\" must be a non-negative integer (milliseconds)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentcore_stages::RawArgs;
    use serde_json::json;

    fn turn(line: &str) -> TurnInput {
        match parse_line(line) {
            Ok(Some(Input::Turn(t))) => t,
            other => panic!("expected a turn, got {other:?}"),
        }
    }

    #[test]
    fn every_input_shape_of_the_protocol() {
        assert_eq!(parse_line("   "), Ok(None));
        assert_eq!(
            parse_line(r#"{"user": "fix the failing test"}"#),
            Ok(Some(Input::User("fix the failing test".into())))
        );
        let t = turn(r#"{"turn": [{"id": "c1", "name": "read", "args": {"file_path": "a.txt"}}]}"#);
        assert_eq!(
            t.calls[0].args,
            RawArgs::Value(json!({"file_path": "a.txt"}))
        );
        let t = turn(
            r#"{"turn": [{"id": "c2", "name": "grep", "args": "{\"pattern\":\"fn\"}"}], "steer_after_ms": 50}"#,
        );
        assert_eq!(t.calls[0].args, RawArgs::Text(r#"{"pattern":"fn"}"#.into()));
        assert_eq!(t.steer_after_ms, Some(50));
        let t = turn(r#"{"turn": [], "abort_after_ms": 200}"#);
        assert!(t.calls.is_empty());
        assert_eq!(t.abort_after_ms, Some(200));
        let t = turn(
            r#"{"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "ls", "input": {"path": "."}}]}"#,
        );
        assert_eq!(t.calls[0].name, "ls");
        let t = turn(
            r#"{"role": "assistant", "tool_calls": [{"id": "k1", "type": "function", "function": {"name": "read", "arguments": "{\"file_path\":\"a.txt\"}"}}]}"#,
        );
        assert_eq!(
            t.calls[0].args,
            RawArgs::Text(r#"{"file_path":"a.txt"}"#.into())
        );
        let t = turn(r#"{"role": "assistant", "content": "no tools this time"}"#);
        assert!(t.calls.is_empty());
    }

    #[test]
    fn bad_lines_get_clear_messages() {
        assert!(
            parse_line("{nope")
                .unwrap_err()
                .starts_with("the line is not valid JSON")
        );
        assert!(
            parse_line("[1]")
                .unwrap_err()
                .starts_with("expected {\"user\"")
        );
        assert!(parse_line(r#"{"other": 1}"#).is_err());
        assert_eq!(
            parse_line(r#"{"turn": [{"id": "a", "name": "ls"}, {"id": "a", "name": "ls"}]}"#),
            Err("call id \"a\" is repeated within the turn".into())
        );
        assert_eq!(
            parse_line(r#"{"turn": [{"name": "ls"}]}"#),
            Err("turn[0].id is missing".into())
        );
        assert_eq!(
            parse_line(r#"{"turn": [], "steer_after_ms": -1}"#),
            Err("\"steer_after_ms\" must be a non-negative integer (milliseconds)".into())
        );
        assert_eq!(
            parse_line(r#"{"turn": [{"id": "a", "name": "ls", "args": 3}]}"#),
            Err("turn[0].args must be an object or JSON text".into())
        );
    }

    #[test]
    fn a_line_of_too_many_values_is_refused_before_it_is_parsed() {
        let zeros = vec!["0"; MAX_VALUES + 1].join(",");
        let line =
            format!(r#"{{"turn": [{{"id": "c1", "name": "ls", "args": {{"x": [{zeros}]}}}}]}}"#);
        let message = parse_line(&line).unwrap_err();
        assert!(
            message.contains("more than 100000 JSON values"),
            "{message}"
        );
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(parse_line(&deep).unwrap_err().contains("recursion limit"));
    }

    #[test]
    fn a_line_holding_two_shapes_is_refused_not_half_run() {
        let both =
            parse_line(r#"{"user": "hi", "turn": [{"id": "c1", "name": "ls"}]}"#).unwrap_err();
        assert!(both.contains("both \"user\" and \"turn\""), "{both}");
        assert!(both.contains("separate lines"), "{both}");
        for line in [
            r#"{"turn": [], "user": "hi"}"#,
            r#"{"user": "hi", "role": "assistant", "content": []}"#,
            r#"{"turn": [], "role": "assistant", "content": []}"#,
            r#"{"user": 3, "turn": "x"}"#,
        ] {
            let message = parse_line(line).unwrap_err();
            assert!(
                message.starts_with("the line holds both"),
                "{line}: {message}"
            );
        }
    }
}
