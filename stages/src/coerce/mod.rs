//! Argument parsing and coercion: pure functions, no I/O.
//!
//! See `docs/semantics.md` §3. Only strings that have exactly one reading under
//! the schema are replaced; everything else is left for validation to report.
//! The Coerce stage ([`Coerce`]) applies them to each call.
//!
//! The same folder shape as the other stages: the stage in `layer` and
//! `service`; argument parsing in `parse`, its limits in `limits`, the set
//! of JSON types in `types` and the walk of a schema in `walk`.

mod error;
mod future;
mod layer;
mod limits;
mod parse;
mod service;
mod types;
mod walk;

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use error::ArgsError;
pub use future::ResponseFuture;
pub use layer::CoerceLayer;
pub use limits::{MAX_ARGS_BYTES, MAX_DEPTH};
pub use parse::parse_args;
pub use service::Coerce;
pub(crate) use types::json_type_name;
pub use walk::coerce;

use crate::call::RawArgs;
use crate::registry::RegisteredTool;
use crate::texts;

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

/// Parses and coerces a call's raw arguments for `tool`, as the Coerce
/// stage does; the error is the model-readable message of `docs/semantics.md` §2.
pub fn parse_and_coerce(
    tool: &RegisteredTool,
    raw: &RawArgs,
) -> Result<(Value, Vec<Coercion>), String> {
    coerce_parsed(tool, parse_args(raw))
}

/// [`parse_and_coerce`] for arguments the caller gives up (the Coerce
/// stage): a value is moved, not copied.
pub(crate) fn parse_and_coerce_owned(
    tool: &RegisteredTool,
    raw: RawArgs,
) -> Result<(Value, Vec<Coercion>), String> {
    coerce_parsed(tool, parse::parse_args_owned(raw))
}

fn coerce_parsed(
    tool: &RegisteredTool,
    parsed: Result<Value, ArgsError>,
) -> Result<(Value, Vec<Coercion>), String> {
    let name = tool.name();
    let describe = |e: ArgsError| match e {
        ArgsError::NotObject(_) => texts::arguments_refused(name, e),
        _ => texts::arguments_refused(name, format_args!("received malformed JSON arguments: {e}")),
    };
    let mut args = parsed.map_err(describe)?;
    let coercions = coerce(tool.tool().schema(), &mut args).map_err(describe)?;
    Ok((args, coercions))
}

/// A parse + coerce made before the pipeline ran (the scheduler makes one to
/// classify the call), kept on the call for the Coerce stage. It is built
/// only from the call's own raw arguments, is dropped whenever they are
/// replaced, and is used only when the stage resolved the very same
/// registered tool (the same `Arc`), so it is never stale.
#[derive(Debug)]
pub(crate) struct Precoerced {
    /// The tool whose schema the arguments were coerced to.
    pub(crate) tool: Arc<RegisteredTool>,
    /// What [`parse_and_coerce`] returned.
    pub(crate) result: Result<(Value, Vec<Coercion>), String>,
}

impl Precoerced {
    /// Parses and coerces `raw` for `tool`.
    pub(crate) fn new(tool: &Arc<RegisteredTool>, raw: &RawArgs) -> Self {
        Self {
            tool: tool.clone(),
            result: parse_and_coerce(tool, raw),
        }
    }

    /// Whether it was made for `tool` (the same registration).
    pub(crate) fn is_for(&self, tool: &Arc<RegisteredTool>) -> bool {
        Arc::ptr_eq(&self.tool, tool)
    }
}
