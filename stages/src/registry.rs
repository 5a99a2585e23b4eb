//! The [`ToolRegistry`]: tools by name, each with its schema compiled once.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use crate::future::HookShape;
use crate::tool::Tool;
use crate::validate::{SchemaError, compile_schema};

/// A tool with its compiled schema validator.
pub struct RegisteredTool {
    tool: Arc<dyn Tool>,
    validator: jsonschema::Validator,
    hooks: Hooks,
}

/// What the stages learned of a registration's `validate` and `preview`.
#[derive(Debug, Default)]
pub(crate) struct Hooks {
    pub(crate) validate: HookShape,
    pub(crate) preview: HookShape,
}

impl RegisteredTool {
    /// The tool.
    pub fn tool(&self) -> &Arc<dyn Tool> {
        &self.tool
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        self.tool.name()
    }

    /// The compiled schema.
    pub fn validator(&self) -> &jsonschema::Validator {
        &self.validator
    }

    /// What the stages learned of its hooks.
    pub(crate) fn hooks(&self) -> &Hooks {
        &self.hooks
    }
}

impl fmt::Debug for RegisteredTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegisteredTool")
            .field("name", &self.tool.name())
            .finish_non_exhaustive()
    }
}

/// Why a tool could not be registered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// Another tool already has this name.
    #[error("a tool named {0:?} is already registered")]
    Duplicate(String),
    /// The tool's schema is not a valid JSON Schema.
    #[error("the schema of tool {name:?} is invalid: {error}")]
    InvalidSchema {
        /// The tool's name.
        name: String,
        /// Why it does not compile (its text is already in this error's).
        error: SchemaError,
    },
}

/// Tools by name. Build it, then share it as `Arc<ToolRegistry>`.
#[derive(Default)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Arc<RegisteredTool>>,
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `tool`, compiling its schema.
    pub fn register(&mut self, tool: Arc<dyn Tool>) -> Result<&mut Self, RegistryError> {
        let name = tool.name().to_owned();
        if self.tools.contains_key(&name) {
            return Err(RegistryError::Duplicate(name));
        }
        let validator =
            compile_schema(tool.schema()).map_err(|error| RegistryError::InvalidSchema {
                name: name.clone(),
                error,
            })?;
        self.tools.insert(
            name,
            Arc::new(RegisteredTool {
                tool,
                validator,
                hooks: Hooks::default(),
            }),
        );
        Ok(self)
    }

    /// Adds `tool`; builder style.
    pub fn with(mut self, tool: Arc<dyn Tool>) -> Result<Self, RegistryError> {
        self.register(tool)?;
        Ok(self)
    }

    /// The tool named `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<RegisteredTool>> {
        self.tools.get(name)
    }

    /// The label of the tool named `name`, if registered and labelled.
    pub fn label(&self, name: &str) -> Option<String> {
        self.get(name)
            .and_then(|t| t.tool().label().map(str::to_owned))
    }

    /// Every tool, by name.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<RegisteredTool>> {
        self.tools.values()
    }

    /// How many tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

impl fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.tools.keys()).finish()
    }
}
