//! Raw arguments parsed into a JSON object.

use serde_json::Value;

use super::ArgsError;
use super::limits::{MAX_ARGS_BYTES, check_depth};
use super::types::json_type_name;
use crate::call::RawArgs;

/// Parses raw arguments into a JSON object: JSON text is parsed (`""` and
/// whitespace mean `{}`), a value is taken as is. Enforces [`MAX_DEPTH`](super::MAX_DEPTH) and
/// [`MAX_ARGS_BYTES`].
pub fn parse_args(raw: &RawArgs) -> Result<Value, ArgsError> {
    let value = match raw {
        RawArgs::Text(text) => {
            if text.len() > MAX_ARGS_BYTES {
                return Err(ArgsError::too_large(text.len()));
            }
            if text.trim().is_empty() {
                return Ok(Value::Object(Default::default()));
            }
            serde_json::from_str::<Value>(text).map_err(|e| ArgsError::syntax(&e))?
        }
        RawArgs::Value(value) => {
            check_depth(value, 0)?;
            let size = serde_json::to_vec(value).map(|v| v.len()).unwrap_or(0);
            if size > MAX_ARGS_BYTES {
                return Err(ArgsError::too_large(size));
            }
            value.clone()
        }
    };
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
