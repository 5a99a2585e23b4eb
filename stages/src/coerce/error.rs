//! Why arguments could not be parsed.

use super::limits::{MAX_ARGS_BYTES, MAX_DEPTH};

/// Why arguments could not be parsed or coerced. The text of each variant
/// is what the model reads after `NAME received malformed JSON arguments: `
/// (or `NAME ` for [`ArgsError::NotObject`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ArgsError {
    /// The text is not JSON.
    #[error("{message}")]
    JsonSyntax {
        /// serde_json's message, with the line and column.
        message: String,
        /// The line of the error, from 1.
        line: usize,
        /// The column of the error, from 1.
        column: usize,
    },
    /// Nested deeper than [`MAX_DEPTH`] levels (as sent, or once coerced).
    #[error("arguments are nested deeper than {limit} levels")]
    TooDeep {
        /// The limit, [`MAX_DEPTH`].
        limit: usize,
    },
    /// Larger than [`MAX_ARGS_BYTES`] as JSON text (as sent, or once
    /// coerced).
    #[error("arguments are {size} bytes, more than the limit of {limit} bytes")]
    TooLarge {
        /// The size, in bytes of JSON text.
        size: usize,
        /// The limit, [`MAX_ARGS_BYTES`].
        limit: usize,
    },
    /// JSON, but not an object; carries the JSON type name.
    #[error("expects a JSON object but received {0}")]
    NotObject(&'static str),
}

impl ArgsError {
    pub(super) fn syntax(error: &serde_json::Error) -> Self {
        ArgsError::JsonSyntax {
            message: error.to_string(),
            line: error.line(),
            column: error.column(),
        }
    }

    pub(super) fn too_deep() -> Self {
        ArgsError::TooDeep { limit: MAX_DEPTH }
    }

    pub(super) fn too_large(size: usize) -> Self {
        ArgsError::TooLarge {
            size,
            limit: MAX_ARGS_BYTES,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call::RawArgs;
    use crate::coerce::parse_args;

    #[test]
    fn texts_are_the_ones_models_read() {
        assert_eq!(
            ArgsError::too_deep().to_string(),
            "arguments are nested deeper than 128 levels"
        );
        assert_eq!(
            ArgsError::too_large(5_000_000).to_string(),
            "arguments are 5000000 bytes, more than the limit of 4194304 bytes"
        );
        assert_eq!(
            ArgsError::NotObject("array").to_string(),
            "expects a JSON object but received array"
        );
        let syntax = serde_json::from_str::<serde_json::Value>("{\"a\":")
            .err()
            .map(|e| e.to_string());
        let err = parse_args(&RawArgs::Text("{\"a\":".into())).err();
        assert_eq!(err.as_ref().map(ToString::to_string), syntax);
        assert!(matches!(
            err,
            Some(ArgsError::JsonSyntax {
                line: 1,
                column: 5,
                ..
            })
        ));
    }
}
