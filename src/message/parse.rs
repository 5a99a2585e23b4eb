//! Reading provider messages: the field accessors shared by the provider
//! files, each naming the offending place in its [`MessageError`].

use serde_json::{Map, Value};

use super::MessageError;

/// Longest text from a message echoed back in an error.
pub(super) const ECHO_LIMIT: usize = 64;

pub(super) fn shorten(text: &str) -> String {
    match text.char_indices().nth(ECHO_LIMIT) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// What a JSON value is, for messages: `"a string"`, `"null"`, …
pub(crate) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

pub(super) fn wrong_type(path: &str, expected: &'static str, found: &Value) -> MessageError {
    MessageError::WrongType {
        path: path.to_owned(),
        expected,
        found: kind(found),
    }
}

pub(super) fn duplicate(path: &str, call_id: &str) -> MessageError {
    MessageError::DuplicateId {
        path: format!("{path}.id"),
        call_id: shorten(call_id),
    }
}

pub(super) fn object<'a>(
    value: &'a Value,
    path: &str,
) -> Result<&'a Map<String, Value>, MessageError> {
    value
        .as_object()
        .ok_or_else(|| wrong_type(path, "an object", value))
}

pub(super) fn required<'a>(
    obj: &'a Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<&'a Value, MessageError> {
    obj.get(key).ok_or_else(|| MessageError::Missing {
        path: path.to_owned(),
    })
}

/// `obj[key]` as a string; `parent` is the path of `obj`.
pub(super) fn string<'a>(
    obj: &'a Map<String, Value>,
    key: &str,
    parent: &str,
) -> Result<&'a str, MessageError> {
    let path = join(parent, key);
    match required(obj, key, &path)? {
        Value::String(s) => Ok(s),
        other => Err(wrong_type(&path, "a string", other)),
    }
}

pub(super) fn non_empty<'a>(
    obj: &'a Map<String, Value>,
    key: &str,
    parent: &str,
) -> Result<&'a str, MessageError> {
    let s = string(obj, key, parent)?;
    if s.is_empty() {
        return Err(MessageError::Empty {
            path: join(parent, key),
        });
    }
    Ok(s)
}

/// The path of `key` inside the object at `parent` (`""` for the message).
pub(super) fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_owned()
    } else {
        format!("{parent}.{key}")
    }
}

/// Checks that the message at `parent` (`""` for the value given) is an
/// assistant message.
pub(super) fn check_role(message: &Map<String, Value>, parent: &str) -> Result<(), MessageError> {
    match string(message, "role", parent)? {
        "assistant" => Ok(()),
        other => Err(MessageError::WrongRole {
            found: shorten(other),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shorten_cuts_on_a_char_boundary() {
        let text = "é".repeat(100);
        let short = shorten(&text);
        assert!(short.ends_with('…'));
        assert_eq!(short.chars().count(), ECHO_LIMIT + 1);
        assert_eq!(shorten("abc"), "abc");
    }
}
