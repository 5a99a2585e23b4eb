//! The shape of the built-in tools' derived argument schemas.
//!
//! Each built-in tool's `Args` type derives its JSON Schema (doc comments
//! become the descriptions the model reads). What the model sees is pinned
//! byte for byte (`tests/tools/tool_definitions_are_pinned.rs`); schemars
//! derives a few keywords more than those definitions ever said, and
//! [`builtin_args`], put on each `Args` type with
//! `#[schemars(transform = builtin_args)]`, takes them away:
//!
//! - An optional field is simply left out when not given: its schema is
//!   `T`'s, not "`T` or `null`" (serde would read `null` as absent; the
//!   schema refuses it, as it always has).
//! - Integer `format`s (`uint64`, `uint`) name the Rust type, not anything
//!   the model should send; the `minimum` that comes with an unsigned type
//!   stays.
//!
//! The `Args` type's own doc comment is for Rust readers and never becomes
//! the root `description`: [`schema_for`](agentcore_stages::schema_for)
//! leaves it out of every typed tool's schema, built-in or not, since the
//! tool's description is what the model reads about the tool as a whole.

use schemars::Schema;
use serde_json::Value;

/// The transform described in the [module docs](self), for the root
/// schema of a built-in tool's `Args` type.
pub(crate) fn builtin_args(schema: &mut Schema) {
    let Some(Value::Object(properties)) = schema.get_mut("properties") else {
        return;
    };
    for property in properties.values_mut() {
        let Value::Object(property) = property else {
            continue;
        };
        if let Some(Value::Array(types)) = property.get("type") {
            let types: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
            if let [only] = types[..] {
                let only = only.clone();
                property.insert("type".to_owned(), only);
            }
        }
        if property.get("type").is_some_and(|t| t == "integer") {
            property.remove("format");
        }
    }
}

#[cfg(test)]
mod tests {
    use schemars::JsonSchema;
    use serde_json::json;

    use super::*;

    /// Not shown to the model.
    #[derive(JsonSchema)]
    #[schemars(transform = builtin_args)]
    #[allow(dead_code)]
    struct Args {
        /// A name.
        name: String,
        /// A count.
        #[schemars(range(min = 1))]
        count: Option<u64>,
        /// A flag.
        flag: Option<bool>,
        /// Some names.
        names: Option<Vec<String>>,
    }

    #[test]
    fn optional_fields_are_plain_and_formats_gone() {
        let schema = agentcore_stages::schema_for::<Args>(true);
        let properties = &schema["properties"];
        assert_eq!(
            properties["count"],
            json!({"type": "integer", "minimum": 1, "description": "A count."})
        );
        assert_eq!(
            properties["flag"],
            json!({"type": "boolean", "description": "A flag."})
        );
        assert_eq!(
            properties["names"],
            json!({"type": "array", "items": {"type": "string"}, "description": "Some names."})
        );
        assert_eq!(schema["required"], json!(["name"]));
        assert!(schema.get("description").is_none());
    }
}
