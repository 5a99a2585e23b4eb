//! Raw arguments parsed into a JSON object.

use serde_json::Value;

use super::ArgsError;
use super::limits::{MAX_ARGS_BYTES, check_depth, json_size};
use super::types::json_type_name;
use crate::call::RawArgs;

/// Parses raw arguments into a JSON object: JSON text is parsed (`""` and
/// whitespace mean `{}`), a value is taken as is. Enforces [`MAX_DEPTH`](super::MAX_DEPTH) and
/// [`MAX_ARGS_BYTES`].
pub fn parse_args(raw: &RawArgs) -> Result<Value, ArgsError> {
    match raw {
        RawArgs::Text(text) => parse_text(text),
        RawArgs::Value(value) => {
            check_value(value)?;
            object(value.clone())
        }
    }
}

/// [`parse_args`] for arguments the caller gives up: a value is moved, not
/// copied.
pub(crate) fn parse_args_owned(raw: RawArgs) -> Result<Value, ArgsError> {
    match raw {
        RawArgs::Text(text) => parse_text(&text),
        RawArgs::Value(value) => {
            check_value(&value)?;
            object(value)
        }
    }
}

fn parse_text(text: &str) -> Result<Value, ArgsError> {
    if text.len() > MAX_ARGS_BYTES {
        return Err(ArgsError::too_large(text.len()));
    }
    if text.trim().is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    object(serde_json::from_str::<Value>(text).map_err(|e| ArgsError::syntax(&e))?)
}

/// The limits a value given as JSON must keep, as its text would.
fn check_value(value: &Value) -> Result<(), ArgsError> {
    check_depth(value, 0)?;
    let size = json_size(value);
    if size > MAX_ARGS_BYTES {
        return Err(ArgsError::too_large(size));
    }
    Ok(())
}

fn object(value: Value) -> Result<Value, ArgsError> {
    match value {
        Value::Object(_) => Ok(value),
        other => Err(ArgsError::NotObject(json_type_name(&other))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn empty_text_is_an_empty_object() {
        assert_eq!(parse_args(&RawArgs::Text(String::new())), Ok(json!({})));
        assert_eq!(parse_args(&RawArgs::Text(" \n".into())), Ok(json!({})));
        assert_eq!(
            parse_args(&RawArgs::Text("[1]".into())),
            Err(ArgsError::NotObject("array"))
        );
    }
}
