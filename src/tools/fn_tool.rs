//! A typed tool from a closure, for the simple case: [`fn_tool`].

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;

use agentcore_stages::{CallContext, Extensions, Tool, ToolError, ToolOutput, TypedTool};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use crate::access::{Access, Permissions};

/// A tool named `name`, described to the model by `description`, whose
/// calls run `execute` with the arguments deserialized as `A`.
///
/// `A`'s schema is derived as for any [`TypedTool`] (field doc comments
/// become the descriptions the model reads; unknown properties are
/// refused), and arguments that do not fit it end the call `Failed` with a
/// message naming the parameter, before `execute` runs. The closure gets
/// its own clone of the call's [`CallContext`] (cancellation, progress,
/// extensions).
///
/// By default the tool is taken to have side effects: each call runs
/// alone, MCP clients see `destructiveHint: true`, and the approval engine,
/// which finds no [`Permissions`] on it, judges every call as running
/// something it cannot see into ([`Access::unknown`]), so it asks unless a
/// rule allows the tool. Say otherwise with [`FnTool::read_only`] and
/// [`FnTool::permissions`].
///
/// ```
/// use std::sync::Arc;
/// use agentcore::schemars::JsonSchema;
/// use agentcore::tools::fn_tool;
/// use agentcore::{Call, Outcome, Pipeline, ToolOutput, ToolRegistry};
/// use serde::Deserialize;
/// use tower::ServiceExt;
///
/// #[derive(Deserialize, JsonSchema)]
/// #[schemars(crate = "agentcore::schemars")]
/// struct AddArgs {
///     /// The first term.
///     a: i64,
///     /// The second term.
///     b: i64,
/// }
///
/// let add = fn_tool("add", "Adds two integers.", |args: AddArgs, _cx| async move {
///     Ok(ToolOutput::text((args.a + args.b).to_string()))
/// })
/// .read_only();
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let registry = Arc::new(ToolRegistry::new().with(add.into_dyn()).unwrap());
/// let pipeline = Pipeline::builder().registry(registry).build();
/// let result = pipeline
///     .service()
///     .oneshot(Call::new("c1", "add", r#"{"a": 2, "b": 3}"#))
///     .await
///     .unwrap();
/// assert_eq!(result.outcome, Outcome::Success);
/// assert_eq!(result.text(), "5");
/// # });
/// ```
pub fn fn_tool<A, F, Fut>(
    name: impl Into<String>,
    description: impl Into<String>,
    execute: F,
) -> FnTool<A, F>
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    F: Fn(A, CallContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolOutput, ToolError>> + Send,
{
    FnTool {
        name: name.into(),
        description: description.into(),
        label: None,
        read_only: false,
        permissions: None,
        execute,
        args: PhantomData,
    }
}

/// A tool made by [`fn_tool`]; its builder methods say what the closure
/// does.
pub struct FnTool<A, F> {
    name: String,
    description: String,
    label: Option<String>,
    read_only: bool,
    permissions: Option<Permissions>,
    execute: F,
    // `fn() -> A`: the tool holds no `A`, so it is `Send + Sync` whatever
    // `A` is.
    args: PhantomData<fn() -> A>,
}

impl<A, F> FnTool<A, F> {
    /// Every call is free of side effects: calls may run beside other safe
    /// calls, MCP clients see `readOnlyHint: true`, and, unless
    /// [`FnTool::permissions`] says more, the approval engine judges each
    /// call as touching nothing ([`Access::nothing`], a read of no paths:
    /// allowed without asking unless a rule about reads or about this tool
    /// says otherwise).
    #[must_use]
    pub fn read_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    /// What a call touches, for the approval engine (see
    /// [`Permissions::typed`] to compute it from `A`). Without it, the
    /// engine judges the tool as in [`fn_tool`]'s docs.
    #[must_use]
    pub fn permissions(mut self, permissions: Permissions) -> Self {
        self.permissions = Some(permissions);
        self
    }

    /// A human name for a UI (see [`Tool::label`]).
    #[must_use]
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }
}

impl<A, F, Fut> FnTool<A, F>
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    F: Fn(A, CallContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolOutput, ToolError>> + Send,
{
    /// This tool as the kernel holds tools, for
    /// [`ToolRegistry::with`](agentcore_stages::ToolRegistry::with) (the
    /// same as [`TypedTool::into_dyn`], without importing the trait).
    pub fn into_dyn(self) -> Arc<dyn Tool> {
        TypedTool::into_dyn(self)
    }
}

impl<A, F> fmt::Debug for FnTool<A, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnTool")
            .field("name", &self.name)
            .field("read_only", &self.read_only)
            .field("permissions", &self.permissions.is_some())
            .finish_non_exhaustive()
    }
}

impl<A, F, Fut> TypedTool for FnTool<A, F>
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    F: Fn(A, CallContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolOutput, ToolError>> + Send,
{
    type Args = A;

    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn execute(
        &self,
        args: A,
        cx: &CallContext,
    ) -> impl Future<Output = Result<ToolOutput, ToolError>> + Send {
        (self.execute)(args, cx.clone())
    }

    fn label(&self) -> Option<&str> {
        self.label.as_deref()
    }

    fn read_only(&self, _args: &A) -> bool {
        self.read_only
    }

    fn always_read_only(&self) -> bool {
        self.read_only
    }

    fn extensions(&self) -> Extensions {
        match (&self.permissions, self.read_only) {
            (Some(permissions), _) => permissions.clone().into_extensions(),
            (None, true) => Permissions::new(|_| Access::nothing()).into_extensions(),
            (None, false) => Extensions::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    /// A greeting's arguments: for Rust readers, not in the schema.
    #[derive(Deserialize, JsonSchema)]
    struct Args {
        /// Who to greet.
        name: String,
    }

    type Ready = std::future::Ready<Result<ToolOutput, ToolError>>;

    fn hello(args: Args, _cx: CallContext) -> Ready {
        std::future::ready(Ok(ToolOutput::text(format!("hello {}", args.name))))
    }

    fn greet() -> FnTool<Args, fn(Args, CallContext) -> Ready> {
        fn_tool(
            "greet",
            "Greets someone.",
            hello as fn(Args, CallContext) -> Ready,
        )
    }

    #[test]
    fn the_default_is_a_tool_with_side_effects_and_no_permissions() {
        let tool = greet().into_dyn();
        assert!(!tool.always_read_only());
        assert!(!tool.read_only(&json!({"name": "a"})));
        assert!(tool.extensions().get::<Permissions>().is_none());
        assert_eq!(tool.label(), None);
    }

    #[test]
    fn read_only_is_read_only_everywhere_and_touches_nothing() {
        let tool = greet().read_only().label("Greet").into_dyn();
        assert!(tool.always_read_only());
        assert!(tool.read_only(&json!({"name": "a"})));
        let permissions = tool.extensions().get::<Permissions>().cloned().unwrap();
        assert_eq!(
            permissions.describe(&json!({"name": "a"})),
            Access::nothing()
        );
        assert_eq!(tool.label(), Some("Greet"));
    }

    #[test]
    fn permissions_given_are_kept_over_the_read_only_default() {
        let tool = greet()
            .read_only()
            .permissions(Permissions::typed(|a: &Args| {
                Access::write([a.name.as_str()])
            }))
            .into_dyn();
        let permissions = tool.extensions().get::<Permissions>().cloned().unwrap();
        assert_eq!(permissions.describe(&json!({"name": "f"})).paths, ["f"]);
    }

    #[test]
    fn the_schema_has_field_descriptions_and_no_root_description() {
        let tool = greet().into_dyn();
        let schema = tool.schema();
        assert_eq!(schema["properties"]["name"]["description"], "Who to greet.");
        assert!(schema.get("description").is_none());
        assert_eq!(schema["additionalProperties"], false);
    }
}
