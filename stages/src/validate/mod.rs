//! Validate: the schema (every issue in one message, `docs/semantics.md` §4),
//! then the tool's own `validate` with its message and code.

mod future;
mod layer;
mod message;
mod schema;
mod service;

use serde_json::Value;

pub use future::ResponseFuture;
pub use layer::ValidateLayer;
pub use message::schema_issues;
pub use schema::{SchemaError, compile_schema, compile_schema_with};
pub use service::Validate;

use crate::call::CallContext;
use crate::registry::RegisteredTool;
use crate::tool::ValidationFailure;

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
pub(crate) async fn check(
    tool: &RegisteredTool,
    args: &Value,
    cx: &CallContext,
) -> Result<(), Invalid> {
    schema_check(tool, args)?;
    hook_verdict(tool.tool().validate(args, cx).await)
}

/// Checks `args` against the tool's schema.
pub(crate) fn schema_check(tool: &RegisteredTool, args: &Value) -> Result<(), Invalid> {
    match schema_issues(tool.name(), tool.validator(), args) {
        Some(message) => Err(Invalid {
            message,
            code: None,
        }),
        None => Ok(()),
    }
}

/// What the tool's own `validate` answered, as the stage ends a call with it.
pub(crate) fn hook_verdict(answer: Result<(), ValidationFailure>) -> Result<(), Invalid> {
    answer.map_err(|ValidationFailure { message, code }| Invalid {
        message: if message.is_empty() {
            ValidationFailure::DEFAULT_MESSAGE.to_owned()
        } else {
            message
        },
        code: Some(code),
    })
}
