//! Why a provider message could not be read, or a call not written.

/// Why a provider message could not be read, or a call not written.
///
/// `path` names the offending place inside the message, e.g.
/// `content[1].id` or `tool_calls[0].function.arguments`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MessageError {
    /// A required field is absent.
    #[error("{path} is missing")]
    Missing {
        /// Where the field should be.
        path: String,
    },
    /// A field has the wrong JSON type.
    #[error("{path} must be {expected}, found {found}")]
    WrongType {
        /// The field.
        path: String,
        /// What it must be, e.g. `"a string"`.
        expected: &'static str,
        /// What it is, e.g. `"a number"`.
        found: &'static str,
    },
    /// A call id or tool name is the empty string.
    #[error("{path} must not be empty")]
    Empty {
        /// The field.
        path: String,
    },
    /// The message is not an assistant message.
    #[error("role is {found:?}; tool calls are read from an \"assistant\" message")]
    WrongRole {
        /// The role found (shortened if long).
        found: String,
    },
    /// A `type` field names a kind this parser does not take, e.g. an
    /// OpenAI tool call other than `function`.
    #[error("{path} is {found:?}; expected {expected}")]
    UnexpectedType {
        /// The `type` field.
        path: String,
        /// What it must be.
        expected: &'static str,
        /// The type found (shortened if long).
        found: String,
    },
    /// Two calls of one message share an id, so their results could not be
    /// told apart.
    #[error("{path} repeats the id {call_id:?} of an earlier call in this message")]
    DuplicateId {
        /// The later call's id field.
        path: String,
        /// The repeated id (shortened if long).
        call_id: String,
    },
    /// A Chat Completions `chat.completion` object with an empty `choices`
    /// list: there is no assistant message to read calls from.
    #[error(
        "choices is empty: this completion holds no assistant message; pass a completion with one choice, or the message itself"
    )]
    NoChoices,
    /// A `chat.completion` object with several choices (a request with
    /// `n` > 1): which one the conversation keeps is the harness's choice.
    #[error(
        "the completion has {count} choices; pass the message of the one you keep, `choices[i].message`"
    )]
    SeveralChoices {
        /// How many choices the completion holds.
        count: usize,
    },
    /// The value is of the other OpenAI API's shape: a Responses API
    /// response given to the Chat Completions parser, or the reverse.
    #[error("this is {found}; read its calls with {use_instead}")]
    OtherApi {
        /// What the value looks like, e.g. `a Responses API response (it has "output")`.
        found: &'static str,
        /// The function that reads it.
        use_instead: &'static str,
    },
    /// A call's arguments are JSON text that does not parse, so they cannot
    /// be written as an Anthropic `input` object.
    #[error("the arguments of call {call_id:?} are not valid JSON: {reason}")]
    ArgsNotJson {
        /// The call's id (shortened if long).
        call_id: String,
        /// The JSON parser's message.
        reason: String,
    },
}
