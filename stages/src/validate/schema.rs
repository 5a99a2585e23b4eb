//! Compiling a tool's schema, and the typed error when it does not compile.

use serde_json::Value;

/// Why a tool's schema does not compile. Its text is the schema compiler's
/// message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// A `$ref` cannot be resolved (the stage fetches nothing from the
    /// network or the file system).
    #[error("{message}")]
    Reference {
        /// The compiler's message.
        message: String,
    },
    /// The schema is not a valid draft 2020-12 schema.
    #[error("{message}")]
    Invalid {
        /// Where in the schema, as a JSON pointer (`""` for the whole).
        location: String,
        /// The compiler's message.
        message: String,
    },
}

impl SchemaError {
    fn new(error: &jsonschema::ValidationError<'_>) -> Self {
        let message = error.to_string();
        match error.kind() {
            jsonschema::error::ValidationErrorKind::Referencing(_) => {
                SchemaError::Reference { message }
            }
            _ => SchemaError::Invalid {
                location: error.instance_path().as_str().to_owned(),
                message,
            },
        }
    }
}

/// Compiles a tool's schema as the validate stage uses it: draft 2020-12,
/// no network or file access for `$ref`.
pub fn compile_schema(schema: &Value) -> Result<jsonschema::Validator, SchemaError> {
    stage_options()
        .build(schema)
        .map_err(|e| SchemaError::new(&e))
}

/// The one set of compile options both [`compile_schema`] and
/// [`compile_schema_with`] start from.
fn stage_options<'a>() -> jsonschema::ValidationOptions<'a> {
    jsonschema::draft202012::options()
}

/// Compiles `schema` exactly as [`compile_schema`] does, except that external
/// `$ref`s are fetched by `retriever` (the conformance suite serves its
/// `remotes/` documents from disk this way).
pub fn compile_schema_with(
    schema: &Value,
    retriever: impl jsonschema::Retrieve + 'static,
) -> Result<jsonschema::Validator, SchemaError> {
    stage_options()
        .with_retriever(retriever)
        .build(schema)
        .map_err(|e| SchemaError::new(&e))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn errors_are_typed_and_read_as_the_compiler_wrote_them() {
        let schema = json!({"type": "object", "properties": {"n": {"type": "integr"}}});
        let err = compile_schema(&schema).expect_err("an unknown type");
        let text = jsonschema::draft202012::options()
            .build(&schema)
            .err()
            .map(|e| e.to_string());
        assert_eq!(Some(err.to_string()), text);
        assert!(
            matches!(err, SchemaError::Invalid { ref location, .. } if location.starts_with("/properties/n")),
            "{err:?}"
        );
        let err = compile_schema(&json!({"$ref": "https://example.com/s.json"}))
            .expect_err("external references are not fetched");
        assert!(matches!(err, SchemaError::Reference { .. }), "{err:?}");
    }
}
