//! The states of a call: each holds what the stages so far established.

use std::sync::Arc;

use serde_json::Value;

use super::{GatedArgs, RawArgs};
use crate::coerce::{Coercion, Precoerced};
use crate::outcome::{Content, Outcome};
use crate::registry::RegisteredTool;

/// State: as the model proposed it.
#[derive(Debug)]
pub struct Unvalidated {
    pub(crate) args: RawArgs,
    pub(crate) pre: Option<Precoerced>,
}

impl Unvalidated {
    /// The raw arguments.
    pub fn args(&self) -> &RawArgs {
        &self.args
    }
}

/// State: the Start event is emitted and the End guard armed.
#[derive(Debug)]
pub struct Started {
    pub(crate) args: RawArgs,
    pub(crate) pre: Option<Precoerced>,
}

impl Started {
    /// The raw arguments.
    pub fn args(&self) -> &RawArgs {
        &self.args
    }
}

/// State: not cancelled, and the breaker lets the tool run.
#[derive(Debug)]
pub struct Admitted {
    pub(crate) args: RawArgs,
    pub(crate) pre: Option<Precoerced>,
}

impl Admitted {
    /// The raw arguments.
    pub fn args(&self) -> &RawArgs {
        &self.args
    }
}

/// State: the tool is found in the registry.
#[derive(Debug)]
pub struct Resolved {
    pub(crate) tool: Arc<RegisteredTool>,
    pub(crate) args: RawArgs,
    pub(crate) pre: Option<Precoerced>,
}

impl Resolved {
    /// The registered tool.
    pub fn tool(&self) -> &Arc<RegisteredTool> {
        &self.tool
    }

    /// The raw arguments.
    pub fn args(&self) -> &RawArgs {
        &self.args
    }
}

/// State: the arguments are parsed and coerced to the tool's schema.
#[derive(Debug)]
pub struct Coerced {
    pub(crate) tool: Arc<RegisteredTool>,
    pub(crate) args: Value,
    pub(crate) coercions: Vec<Coercion>,
}

impl Coerced {
    /// The registered tool.
    pub fn tool(&self) -> &Arc<RegisteredTool> {
        &self.tool
    }

    /// The coerced arguments.
    pub fn args(&self) -> &Value {
        &self.args
    }

    /// The coercions made.
    pub fn coercions(&self) -> &[Coercion] {
        &self.coercions
    }
}

/// State: the arguments passed the schema and the tool's own `validate`.
#[derive(Debug)]
pub struct Validated {
    pub(crate) tool: Arc<RegisteredTool>,
    pub(crate) args: Value,
    pub(crate) coercions: Vec<Coercion>,
}

impl Validated {
    /// The registered tool.
    pub fn tool(&self) -> &Arc<RegisteredTool> {
        &self.tool
    }

    /// The validated arguments.
    pub fn args(&self) -> &Value {
        &self.args
    }

    /// The coercions made.
    pub fn coercions(&self) -> &[Coercion] {
        &self.coercions
    }
}

/// State: the tool's preview (if any) is computed and emitted.
#[derive(Debug)]
pub struct Previewed {
    pub(crate) tool: Arc<RegisteredTool>,
    pub(crate) args: Value,
    pub(crate) coercions: Vec<Coercion>,
    pub(crate) preview: Option<String>,
}

impl Previewed {
    /// The registered tool.
    pub fn tool(&self) -> &Arc<RegisteredTool> {
        &self.tool
    }

    /// The validated arguments.
    pub fn args(&self) -> &Value {
        &self.args
    }

    /// The coercions made.
    pub fn coercions(&self) -> &[Coercion] {
        &self.coercions
    }

    /// The preview, if the tool gives one.
    pub fn preview(&self) -> Option<&str> {
        self.preview.as_deref()
    }
}

/// How the gate let a call through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GateVerdict {
    /// Allowed as proposed.
    Allowed,
    /// Allowed after the gate rewrote the arguments (re-checked since).
    Rewritten,
}

/// State: the gate allowed the call. Only the Gate stage builds this state.
#[derive(Debug)]
pub struct Gated {
    pub(crate) tool: Arc<RegisteredTool>,
    pub(crate) args: GatedArgs,
    pub(crate) coercions: Vec<Coercion>,
    pub(crate) preview: Option<String>,
    pub(crate) verdict: GateVerdict,
}

impl Gated {
    /// The registered tool.
    pub fn tool(&self) -> &Arc<RegisteredTool> {
        &self.tool
    }

    /// The arguments the tool will receive.
    pub fn args(&self) -> &GatedArgs {
        &self.args
    }

    /// The coercions made.
    pub fn coercions(&self) -> &[Coercion] {
        &self.coercions
    }

    /// The preview shown to the gate, if any.
    pub fn preview(&self) -> Option<&str> {
        self.preview.as_deref()
    }

    /// Whether the gate rewrote the arguments.
    pub fn verdict(&self) -> GateVerdict {
        self.verdict
    }
}

/// State: the call is over.
#[derive(Debug)]
pub struct Executed {
    pub(crate) outcome: Outcome,
    pub(crate) content: Vec<Content>,
    pub(crate) error_code: Option<i64>,
    pub(crate) coercions: Vec<Coercion>,
}

impl Executed {
    /// How it ended.
    pub fn outcome(&self) -> Outcome {
        self.outcome
    }

    /// What the model will read.
    pub fn content(&self) -> &[Content] {
        &self.content
    }

    /// A tool validator's code, if any.
    pub fn error_code(&self) -> Option<i64> {
        self.error_code
    }

    /// The coercions made.
    pub fn coercions(&self) -> &[Coercion] {
        &self.coercions
    }
}
