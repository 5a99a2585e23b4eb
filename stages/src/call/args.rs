//! A call's arguments: as the model sent them ([`RawArgs`]) and as the gate
//! let them through ([`GatedArgs`]).

use http::Extensions;
use serde_json::Value;

/// Arguments as the model sent them: a JSON value or JSON text.
#[derive(Clone, Debug, PartialEq)]
pub enum RawArgs {
    /// Already-parsed JSON.
    Value(Value),
    /// JSON text, as OpenAI-style APIs send arguments; `""` means `{}`.
    Text(String),
}

impl RawArgs {
    /// The arguments as the Start event shows them: the value, or the text as
    /// a JSON string.
    pub fn to_value(&self) -> Value {
        match self {
            RawArgs::Value(v) => v.clone(),
            RawArgs::Text(t) => Value::String(t.clone()),
        }
    }
}

impl From<Value> for RawArgs {
    fn from(v: Value) -> Self {
        RawArgs::Value(v)
    }
}

impl From<String> for RawArgs {
    fn from(t: String) -> Self {
        RawArgs::Text(t)
    }
}

impl From<&str> for RawArgs {
    fn from(t: &str) -> Self {
        RawArgs::Text(t.to_owned())
    }
}

/// Arguments that passed every stage up to and including the gate. Only the
/// Gate stage constructs them (and, with the `test-util` feature, tests), so
/// a tool's `execute` cannot be reached by a call that skipped a stage.
///
/// They carry what the gate established about the call
/// ([`GatedArgs::extensions`], from [`GateDecision::AllowWith`]): an
/// approval engine puts there which files the call's paths were judged to
/// be, so the tool acts on exactly those.
///
/// [`GateDecision::AllowWith`]: crate::gate::GateDecision::AllowWith
#[derive(Clone, Debug)]
pub struct GatedArgs {
    value: Value,
    extensions: Extensions,
}

impl PartialEq for GatedArgs {
    /// Equal arguments (what the gate recorded is not compared).
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

impl GatedArgs {
    pub(crate) fn new(value: Value, extensions: Extensions) -> Self {
        Self { value, extensions }
    }

    /// Gated arguments for a tool author's unit tests.
    #[cfg(feature = "test-util")]
    pub fn for_test(value: Value) -> Self {
        Self {
            value,
            extensions: Extensions::new(),
        }
    }

    /// Gated arguments with what a gate recorded, for a tool author's unit
    /// tests.
    #[cfg(feature = "test-util")]
    pub fn for_test_with(value: Value, extensions: Extensions) -> Self {
        Self { value, extensions }
    }

    /// What the gate established about the call (empty when the gate
    /// recorded nothing, or there was no gate).
    pub fn extensions(&self) -> &Extensions {
        &self.extensions
    }

    /// The arguments.
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// The arguments, owned.
    pub fn into_value(self) -> Value {
        self.value
    }

    /// The arguments deserialized into `T`.
    pub fn parse<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        T::deserialize(&self.value)
    }
}
