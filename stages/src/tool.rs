//! The [`Tool`] trait: what the kernel needs to know about a tool.
//!
//! Four methods are required (`name`, `description`, `schema`, `execute`);
//! everything else is an optional capability with a default, so a tool
//! overrides only what it needs. The trait is dyn-compatible: the kernel
//! holds tools as `Arc<dyn Tool>`.

use std::sync::OnceLock;

use futures::future::BoxFuture;
use http::Extensions;
use serde_json::Value;

use crate::call::{CallContext, GatedArgs};
use crate::outcome::{ToolError, ToolOutput};

/// Whether a running call stops when the user steers (sends a message
/// mid-turn).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum InterruptBehavior {
    /// Stop it: its cancellation fires.
    Cancel,
    /// Let it finish.
    #[default]
    Block,
}

/// A tool's own refusal of a call, from [`Tool::validate`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidationFailure {
    /// What the model reads; a sentence with the fix in it.
    pub message: String,
    /// A numeric code reported as `error_code`.
    pub code: i64,
}

impl ValidationFailure {
    /// The default message when a tool gives none.
    pub const DEFAULT_MESSAGE: &'static str = "tool input validation failed";

    /// A refusal with `message` and `code`.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            code,
        }
    }
}

/// A tool the model can call.
///
/// # Example
///
/// ```
/// use agentcore_stages::{BoxFuture, CallContext, GatedArgs, Tool, ToolError, ToolOutput};
/// use serde_json::{json, Value};
///
/// struct Echo { schema: Value }
///
/// impl Tool for Echo {
///     fn name(&self) -> &str { "echo" }
///     fn description(&self) -> &str { "Returns its `text` argument." }
///     fn schema(&self) -> &Value { &self.schema }
///     fn execute<'a>(&'a self, args: GatedArgs, _cx: &'a CallContext)
///         -> BoxFuture<'a, Result<ToolOutput, ToolError>>
///     {
///         Box::pin(async move {
///             let text = args.value()["text"].as_str().unwrap_or_default().to_owned();
///             Ok(ToolOutput::text(text))
///         })
///     }
///     fn read_only(&self, _args: &Value) -> bool { true }
/// }
///
/// let echo = Echo { schema: json!({"type": "object", "properties": {"text": {"type": "string"}}}) };
/// assert_eq!(echo.name(), "echo");
/// ```
pub trait Tool: Send + Sync + 'static {
    /// The name the model calls it by.
    fn name(&self) -> &str;

    /// What it does, for the model.
    fn description(&self) -> &str;

    /// Its arguments as a JSON Schema (draft 2020-12) object.
    fn schema(&self) -> &Value;

    /// Runs the call. Only gated arguments reach here. The future should
    /// watch `cx.cancellation()` if it runs for long; see
    /// [`Tool::observes_cancellation`].
    fn execute<'a>(
        &'a self,
        args: GatedArgs,
        cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;

    /// A human name for a UI ("Edit File"); the name is shown when `None`.
    fn label(&self) -> Option<&str> {
        None
    }

    /// The tool's own semantic check, after the schema. Read-only: it may
    /// stat or read files but never writes, asks the user or changes shared
    /// state. Do the work inside the returned future (as an `async` block
    /// does): once this gave a future that holds no state, the pipeline
    /// polls the next ones once in the stage's `call()`, and makes one again
    /// to await it when it held state or did not settle.
    fn validate<'a>(
        &'a self,
        _args: &'a Value,
        _cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<(), ValidationFailure>> {
        Box::pin(Settled(|| Ok(())))
    }

    /// A preview for the gate, e.g. a unified diff. May fail. Do the work
    /// inside the returned future, as for [`Tool::validate`].
    fn preview<'a>(
        &'a self,
        _args: &'a Value,
        _cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<Option<String>, ToolError>> {
        Box::pin(Settled(|| Ok(None)))
    }

    /// True when these arguments have no side effects.
    fn read_only(&self, _args: &Value) -> bool {
        false
    }

    /// True when every call of this tool is read-only, whatever its
    /// arguments: what a client may rely on before any call, such as MCP's
    /// `readOnlyHint`. By default, [`Tool::read_only`] of empty arguments
    /// `{}`; a tool whose answer depends on its arguments should leave it
    /// `false` for `{}` or override this.
    fn always_read_only(&self) -> bool {
        self.read_only(&Value::Object(serde_json::Map::new()))
    }

    /// Whether the call may run beside other safe calls; `None` falls back
    /// to [`Tool::read_only`].
    fn concurrency_safe(&self, _args: &Value) -> Option<bool> {
        None
    }

    /// One busy line for a UI, "Running: cargo test".
    fn activity(&self, _args: &Value) -> Option<String> {
        None
    }

    /// What steering does to a running call.
    fn interrupt_behavior(&self, _args: &Value) -> InterruptBehavior {
        InterruptBehavior::Block
    }

    /// True when `execute` watches the cancellation itself and returns
    /// promptly once it fires (e.g. with [`ToolError::cancelled`] carrying
    /// partial output). Otherwise the kernel drops the future on cancel.
    fn observes_cancellation(&self) -> bool {
        false
    }

    /// `Some(summary)` when the model is shown the tool by its name and
    /// this one line only, with a schema taking any object, while its
    /// calls are still coerced and validated against [`Tool::schema`]: a
    /// session with more mounted tools than fit its budget lists them so
    /// and offers a search for their full definitions. `None` (the
    /// default): the description and schema as they are ([`listing`]).
    fn summary_only(&self) -> Option<String> {
        None
    }

    /// Typed metadata the kernel does not know, for harness parts such as
    /// an approval engine.
    fn extensions(&self) -> &Extensions {
        static EMPTY: OnceLock<Extensions> = OnceLock::new();
        EMPTY.get_or_init(Extensions::new)
    }
}

/// The default hooks' future: settled at once, and holding no state, so
/// boxing it allocates nothing and the pipeline settles it without a box of
/// its own (see `HookShape` in `future.rs`).
struct Settled<F>(F);

impl<F: Fn() -> T + Unpin, T> std::future::Future for Settled<F> {
    type Output = T;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<T> {
        std::task::Poll::Ready((self.0)())
    }
}

/// The description and schema the model is shown for `tool`: its own, or
/// its one-line summary and a schema taking any object when it is listed
/// by summary only ([`Tool::summary_only`]). Every writer of tool
/// definitions goes through this.
///
/// ```
/// use agentcore_stages::{Tool, listing};
/// # use agentcore_stages::{BoxFuture, CallContext, GatedArgs, ToolError, ToolOutput};
/// # use serde_json::{Value, json};
/// struct Big(Value);
/// impl Tool for Big {
///     fn name(&self) -> &str { "big" }
///     fn description(&self) -> &str { "A long story.\nWith many lines." }
///     fn schema(&self) -> &Value { &self.0 }
///     fn summary_only(&self) -> Option<String> { Some("A long story.".into()) }
///     fn execute<'a>(&'a self, _: GatedArgs, _: &'a CallContext)
///         -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
///         Box::pin(async { Ok(ToolOutput::text("")) })
///     }
/// }
/// let big = Big(json!({"type": "object", "required": ["x"]}));
/// let (description, schema) = listing(&big);
/// assert_eq!(description, "A long story.");
/// assert_eq!(*schema, json!({"type": "object"}));
/// ```
pub fn listing(tool: &dyn Tool) -> (std::borrow::Cow<'_, str>, std::borrow::Cow<'_, Value>) {
    use std::borrow::Cow;
    match tool.summary_only() {
        Some(summary) => (
            Cow::Owned(summary),
            Cow::Owned(serde_json::json!({"type": "object"})),
        ),
        None => (
            Cow::Borrowed(tool.description()),
            Cow::Borrowed(tool.schema()),
        ),
    }
}

/// Whether `tool` may run beside other safe calls with `args`.
pub fn is_concurrency_safe(tool: &dyn Tool, args: &Value) -> bool {
    tool.concurrency_safe(args)
        .unwrap_or_else(|| tool.read_only(args))
}

/// A tool with typed extensions added by the harness: every method is the
/// inner tool's, except [`Tool::extensions`], which also holds what was
/// added here (the harness's values win over the tool's own of the same
/// type).
///
/// ```
/// # use agentcore_stages::WithExtensions;
/// # fn wrap<T: agentcore_stages::Tool>(tool: T) {
/// #[derive(Clone)]
/// struct Owner(&'static str);
/// let tool = WithExtensions::new(tool).with(Owner("platform team"));
/// # }
/// ```
pub struct WithExtensions<T> {
    inner: T,
    extensions: Extensions,
}

impl<T: Tool> WithExtensions<T> {
    /// Wraps `inner`, starting from its own extensions.
    pub fn new(inner: T) -> Self {
        let extensions = inner.extensions().clone();
        Self { inner, extensions }
    }

    /// Adds `value`, replacing any value of the same type.
    pub fn with<V: Clone + Send + Sync + 'static>(mut self, value: V) -> Self {
        self.extensions.insert(value);
        self
    }

    /// The wrapped tool.
    pub fn get_ref(&self) -> &T {
        &self.inner
    }
}

impl<T: Tool> Tool for WithExtensions<T> {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn description(&self) -> &str {
        self.inner.description()
    }
    fn schema(&self) -> &Value {
        self.inner.schema()
    }
    fn execute<'a>(
        &'a self,
        args: GatedArgs,
        cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        self.inner.execute(args, cx)
    }
    fn label(&self) -> Option<&str> {
        self.inner.label()
    }
    fn validate<'a>(
        &'a self,
        args: &'a Value,
        cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<(), ValidationFailure>> {
        self.inner.validate(args, cx)
    }
    fn preview<'a>(
        &'a self,
        args: &'a Value,
        cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<Option<String>, ToolError>> {
        self.inner.preview(args, cx)
    }
    fn read_only(&self, args: &Value) -> bool {
        self.inner.read_only(args)
    }
    fn always_read_only(&self) -> bool {
        self.inner.always_read_only()
    }
    fn summary_only(&self) -> Option<String> {
        self.inner.summary_only()
    }
    fn concurrency_safe(&self, args: &Value) -> Option<bool> {
        self.inner.concurrency_safe(args)
    }
    fn activity(&self, args: &Value) -> Option<String> {
        self.inner.activity(args)
    }
    fn interrupt_behavior(&self, args: &Value) -> InterruptBehavior {
        self.inner.interrupt_behavior(args)
    }
    fn observes_cancellation(&self) -> bool {
        self.inner.observes_cancellation()
    }
    fn extensions(&self) -> &Extensions {
        &self.extensions
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    struct Bare(Value);

    impl Tool for Bare {
        fn name(&self) -> &str {
            "bare"
        }
        fn description(&self) -> &str {
            "d"
        }
        fn schema(&self) -> &Value {
            &self.0
        }
        fn read_only(&self, _args: &Value) -> bool {
            true
        }
        fn execute<'a>(
            &'a self,
            _args: GatedArgs,
            _cx: &'a CallContext,
        ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
            Box::pin(async { Ok(ToolOutput::text("x")) })
        }
    }

    #[derive(Clone, Debug, PartialEq)]
    struct Tag(u8);

    #[test]
    fn extensions_are_added_and_everything_else_delegates() {
        let tool = WithExtensions::new(Bare(json!({}))).with(Tag(7));
        assert_eq!(tool.extensions().get::<Tag>(), Some(&Tag(7)));
        assert_eq!(tool.name(), "bare");
        assert!(tool.read_only(&json!({})));
        assert!(is_concurrency_safe(&tool, &json!({})));
        // Read-only at `{}`, so read-only for every call by default.
        assert!(tool.always_read_only());
        assert!(Bare(json!({})).extensions().get::<Tag>().is_none());
    }
}
