//! Validate: the schema (every issue in one message, `semantics.md` §4),
//! then the tool's own `validate` with its message and code.

mod layer;
mod message;
mod service;

use serde_json::Value;

pub use layer::ValidateLayer;
pub use message::schema_issues;
pub use service::Validate;

use crate::call::CallContext;
use crate::registry::RegisteredTool;
use crate::tool::ValidationFailure;

/// Compiles a tool's schema as the validate stage uses it: draft 2020-12,
/// no network or file access for `$ref`.
pub fn compile_schema(schema: &Value) -> Result<jsonschema::Validator, String> {
    stage_options().build(schema).map_err(|e| e.to_string())
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
) -> Result<jsonschema::Validator, String> {
    stage_options()
        .with_retriever(retriever)
        .build(schema)
        .map_err(|e| e.to_string())
}

/// Why a call failed validation: the text and, for a tool's own refusal,
/// its code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Invalid {
    /// The message for the model.
    pub(crate) message: String,
    /// The tool's code, `None` for schema issues.
    pub(crate) code: Option<i64>,
}

/// Checks `args` against the tool's schema, then the tool's `validate`.
pub(crate) async fn check(tool: &RegisteredTool, args: &Value, cx: &CallContext) -> Result<(), Invalid> {
    if let Some(message) = schema_issues(tool.name(), tool.validator(), args) {
        return Err(Invalid {
            message,
            code: None,
        });
    }
    tool.tool()
        .validate(args, cx)
        .await
        .map_err(|ValidationFailure { message, code }| Invalid {
            message: if message.is_empty() {
                ValidationFailure::DEFAULT_MESSAGE.to_owned()
            } else {
                message
            },
            code: Some(code),
        })
}
