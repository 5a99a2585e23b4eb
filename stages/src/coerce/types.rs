//! The set of JSON types a location allows, and the one reading of a string.

use serde_json::Value;

/// The JSON type name of `v` (`object`, `array`, `string`, `number`,
/// `integer` for whole numbers, `boolean`, `null`).
pub(crate) fn json_type_name(v: &Value) -> &'static str {
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

/// A set of JSON types; `number` is `INTEGER | FRACTION`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Types(u8);

impl Types {
    pub(super) const NONE: Types = Types(0);
    pub(super) const ALL: Types = Types(0x7f);
    pub(super) const NULL: Types = Types(1);
    pub(super) const BOOLEAN: Types = Types(2);
    pub(super) const OBJECT: Types = Types(4);
    pub(super) const ARRAY: Types = Types(8);
    pub(super) const STRING: Types = Types(16);
    pub(super) const INTEGER: Types = Types(32);
    /// Numbers that are not exact integers (`1.5`, `1.0`, `1e3`).
    pub(super) const FRACTION: Types = Types(64);

    pub(super) fn named(name: &str) -> Option<Types> {
        Some(match name {
            "null" => Self::NULL,
            "boolean" => Self::BOOLEAN,
            "object" => Self::OBJECT,
            "array" => Self::ARRAY,
            "string" => Self::STRING,
            "integer" => Self::INTEGER,
            "number" => Types(Self::INTEGER.0 | Self::FRACTION.0),
            _ => return None,
        })
    }

    /// The types a `type` keyword allows; a malformed keyword constrains
    /// nothing (such a schema does not compile anyway).
    pub(super) fn of_keyword(keyword: &Value) -> Types {
        match keyword {
            Value::String(name) => Self::named(name).unwrap_or(Self::ALL),
            Value::Array(names) => names
                .iter()
                .try_fold(Self::NONE, |acc, name| {
                    name.as_str()
                        .and_then(Self::named)
                        .map(|t| Types(acc.0 | t.0))
                })
                .unwrap_or(Self::ALL),
            _ => Self::ALL,
        }
    }

    pub(super) fn of_value(value: &Value) -> Types {
        match value {
            Value::Null => Self::NULL,
            Value::Bool(_) => Self::BOOLEAN,
            Value::Number(n) if n.is_i64() || n.is_u64() => Self::INTEGER,
            Value::Number(_) => Self::FRACTION,
            Value::String(_) => Self::STRING,
            Value::Array(_) => Self::ARRAY,
            Value::Object(_) => Self::OBJECT,
        }
    }

    /// The types both allow.
    pub(super) fn intersect(self, other: Types) -> Types {
        Types(self.0 & other.0)
    }

    pub(super) fn contains(self, other: Types) -> bool {
        other.0 != 0 && self.0 & other.0 == other.0
    }
}

/// The one reading of `text` allowed by `allowed`, if there is one.
pub(super) fn reading(text: &str, allowed: Types) -> Option<Value> {
    let value: Value = serde_json::from_str(text.trim()).ok()?;
    match value {
        Value::String(_) | Value::Null => None,
        value if allowed.contains(Types::of_value(&value)) => Some(value),
        _ => None,
    }
}
