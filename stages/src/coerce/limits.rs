//! The limits on arguments: nesting depth and size.

use serde_json::Value;

use super::ArgsError;

/// Arguments nested deeper than this are refused.
pub const MAX_DEPTH: usize = 128;
/// Arguments larger than this (as JSON text) are refused.
pub const MAX_ARGS_BYTES: usize = 4 * 1024 * 1024;

pub(super) fn check_depth(value: &Value, depth: usize) -> Result<(), ArgsError> {
    if depth > MAX_DEPTH {
        return Err(ArgsError::too_deep());
    }
    match value {
        Value::Array(items) => items.iter().try_for_each(|v| check_depth(v, depth + 1)),
        Value::Object(map) => map.values().try_for_each(|v| check_depth(v, depth + 1)),
        _ => Ok(()),
    }
}

/// The length of `value` as compact JSON text, without building the text.
pub(super) fn json_size(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing a `Value` to a sink that never fails cannot fail.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// How many levels of values lie below `value`: 0 for a scalar or an empty
/// container, as [`check_depth`] counts.
pub(super) fn nesting(value: &Value) -> usize {
    match value {
        Value::Array(items) => items.iter().map(|v| 1 + nesting(v)).max().unwrap_or(0),
        Value::Object(map) => map.values().map(|v| 1 + nesting(v)).max().unwrap_or(0),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn json_size_matches_serialization() {
        let v = json!({"a": [1, "x\"y", {"b": null}], "c": 1.5});
        assert_eq!(
            json_size(&v),
            serde_json::to_string(&v).map(|s| s.len()).unwrap_or(0)
        );
    }
}
