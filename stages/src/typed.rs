//! Typed tools: arguments as a Rust type, the schema derived from it (see
//! [`TypedTool`]).

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use http::Extensions;
use schemars::generate::SchemaSettings;
use schemars::transform::{Transform, transform_subschemas};
use schemars::{JsonSchema, Schema};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::call::{CallContext, GatedArgs};
use crate::outcome::{ToolError, ToolOutput};
use crate::texts;
use crate::tool::{InterruptBehavior, Tool, ValidationFailure};

/// The `error_code` of a call whose arguments passed the schema but could
/// not be deserialized into the tool's `Args` (JSON-RPC's "invalid params").
pub const DESERIALIZE_FAILURE_CODE: i64 = -32602;

/// A tool whose arguments are a Rust type.
///
/// Only `name`, `description` and `execute` are required; every capability has
/// the same default as on [`Tool`] and receives the typed arguments. The
/// futures must be `Send`; write them as `async fn` in the impl.
///
/// Typed tools: arguments as a Rust type, the schema derived from it.
///
/// A [`TypedTool`] names an `Args` type that is [`DeserializeOwned`] and
/// [`JsonSchema`]; its `execute` receives the arguments already deserialized,
/// and every capability method (`read_only`, `activity`, `validate`, …)
/// sees them typed too. [`Typed`] adapts it to the kernel's [`Tool`] trait
/// (or call [`TypedTool::into_dyn`] for an `Arc<dyn Tool>` at once).
///
/// # The derived schema
///
/// The schema is derived once, when the adapter is built, by schemars with
/// [`SchemaSettings::draft2020_12`] and `inline_subschemas = true`: there is
/// no `$ref` and no `$defs` (only a recursive type keeps a local `$ref`),
/// because several model APIs reject or mishandle references. Doc comments
/// on the fields (and on the types of nested fields) become `description`s
/// the model reads. The root carries no `$schema`, no `title` naming the
/// Rust type and no `description`: the args type's own doc comment is for
/// Rust readers, and what the model reads about the tool as a whole is
/// [`TypedTool::description`]. The schema is the tool's parameters as the
/// model sees them.
///
/// Unknown properties are refused by default: every object schema that
/// lists `properties` and says nothing about further members gets
/// `additionalProperties: false`, as if the type had
/// `#[serde(deny_unknown_fields)]`. Serde itself would silently drop an
/// unknown member; a model that invents a parameter should instead be told
/// `parameter "x" is not allowed` and fix its call. Set
/// [`TypedTool::DENY_UNKNOWN_FIELDS`] to `false` to accept them (they are
/// then ignored). Object nodes combined with `allOf` / `anyOf` / `oneOf`,
/// `patternProperties` or a `$ref`, and maps (`HashMap<String, T>`), are
/// left as schemars made them.
///
/// # Arguments that pass the schema but not serde
///
/// A schema cannot say everything serde checks (a `u8` above 255 is a valid
/// JSON Schema `integer` with bounds, but a custom `Deserialize` may refuse
/// more). The adapter deserializes in the tool's `validate` step, after the
/// schema and before preview and the gate, so nobody is asked to approve a
/// call that cannot run. Such a call ends `Failed` with
/// `tool argument validation failed: NAME could not read its arguments: ERR`
/// and `error_code` [`DESERIALIZE_FAILURE_CODE`].
///
/// # Example
///
/// ```
/// use std::sync::Arc;
/// use agentcore_stages::TypedTool;
/// use agentcore_stages::{Call, CallContext, Outcome, Pipeline, ToolError, ToolOutput, ToolRegistry};
/// use schemars::JsonSchema;
/// use serde::Deserialize;
/// use tower::ServiceExt;
///
/// /// Repeats a word.
/// #[derive(Deserialize, JsonSchema)]
/// struct RepeatArgs {
///     /// The word to repeat.
///     word: String,
///     /// How many times (1 when absent).
///     times: Option<u32>,
/// }
///
/// struct Repeat;
///
/// impl TypedTool for Repeat {
///     type Args = RepeatArgs;
///     fn name(&self) -> &str { "repeat" }
///     fn description(&self) -> &str { "Repeats `word` `times` times." }
///     async fn execute(&self, args: RepeatArgs, _cx: &CallContext) -> Result<ToolOutput, ToolError> {
///         Ok(ToolOutput::text(args.word.repeat(args.times.unwrap_or(1) as usize)))
///     }
///     fn read_only(&self, _args: &RepeatArgs) -> bool { true }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let registry = Arc::new(ToolRegistry::new().with(Repeat.into_dyn()).unwrap());
/// let pipeline = Pipeline::builder().registry(registry).build();
/// // "3" is coerced to 3 under the derived schema.
/// let call = Call::new("c1", "repeat", r#"{"word": "ab", "times": "3"}"#);
/// let result = pipeline.service().oneshot(call).await.unwrap();
/// assert_eq!(result.outcome, Outcome::Success);
/// assert_eq!(result.text(), "ababab");
/// # });
/// ```
pub trait TypedTool: Send + Sync + 'static {
    /// The arguments. Doc comments on its fields become the schema's
    /// descriptions; its own doc comment is left out of the schema (the
    /// tool's [`description`](TypedTool::description) says what it does).
    type Args: DeserializeOwned + JsonSchema + Send + 'static;

    /// Whether the derived schema refuses properties the type does not
    /// name (`additionalProperties: false` on every plain object schema).
    /// `true` by default; see [the derived schema](TypedTool#the-derived-schema).
    const DENY_UNKNOWN_FIELDS: bool = true;

    /// The name the model calls it by.
    fn name(&self) -> &str;

    /// What it does, for the model.
    fn description(&self) -> &str;

    /// Runs the call with its arguments deserialized: the same verb as
    /// [`Tool::execute`], the `Execute` stage and the `Executed` state
    /// (`call` names the request, `Call<S>`, and tower's `Service::call`).
    /// Watch
    /// `cx.cancellation()` if it runs for long (and say so in
    /// [`TypedTool::observes_cancellation`]); report progress with
    /// `cx.progress()`.
    fn execute(
        &self,
        args: Self::Args,
        cx: &CallContext,
    ) -> impl Future<Output = Result<ToolOutput, ToolError>> + Send;

    /// A human name for a UI; see [`Tool::label`].
    fn label(&self) -> Option<&str> {
        None
    }

    /// The tool's own semantic check, after the schema; see
    /// [`Tool::validate`].
    fn validate(
        &self,
        _args: &Self::Args,
        _cx: &CallContext,
    ) -> impl Future<Output = Result<(), ValidationFailure>> + Send {
        async { Ok(()) }
    }

    /// A preview for the gate; see [`Tool::preview`].
    fn preview(
        &self,
        _args: &Self::Args,
        _cx: &CallContext,
    ) -> impl Future<Output = Result<Option<String>, ToolError>> + Send {
        async { Ok(None) }
    }

    /// True when these arguments have no side effects; see
    /// [`Tool::read_only`].
    fn read_only(&self, _args: &Self::Args) -> bool {
        false
    }

    /// True when every call is read-only, whatever its arguments; see
    /// [`Tool::always_read_only`]. `false` unless the tool says so: the
    /// adapter never guesses it from sample arguments.
    fn always_read_only(&self) -> bool {
        false
    }

    /// Whether the call may run beside other safe calls; see
    /// [`Tool::concurrency_safe`].
    fn concurrency_safe(&self, _args: &Self::Args) -> Option<bool> {
        None
    }

    /// One busy line for a UI; see [`Tool::activity`].
    fn activity(&self, _args: &Self::Args) -> Option<String> {
        None
    }

    /// What steering does to a running call; see
    /// [`Tool::interrupt_behavior`].
    fn interrupt_behavior(&self, _args: &Self::Args) -> InterruptBehavior {
        InterruptBehavior::Block
    }

    /// True when `execute` watches the cancellation itself; see
    /// [`Tool::observes_cancellation`].
    fn observes_cancellation(&self) -> bool {
        false
    }

    /// Typed metadata for harness parts, such as the permissions an
    /// approval engine reads; see [`Tool::extensions`]. Asked once, when
    /// the adapter is built. Empty by default.
    fn extensions(&self) -> Extensions {
        Extensions::new()
    }

    /// This tool as the kernel holds tools: `Arc::new(Typed::new(self))`.
    fn into_dyn(self) -> Arc<dyn Tool>
    where
        Self: Sized,
    {
        Arc::new(Typed::new(self))
    }
}

/// The JSON Schema a typed tool gets for `A`: draft 2020-12 (without a
/// `$schema` member, without the root `title` schemars gives it, the
/// Rust type's name, and without the root `description`, `A`'s doc
/// comment), subschemas inlined, and with `deny_unknown_fields`
/// every plain object schema closed with `additionalProperties: false`
/// (see [`TypedTool`]).
pub fn schema_for<A: JsonSchema>(deny_unknown_fields: bool) -> Value {
    let mut settings = SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    // The model reads this schema as the tool's parameters: no `$schema`
    // (the validate stage fixes draft 2020-12 whatever it says) and no
    // `title` naming the Rust type (a title the type sets itself stays).
    settings.meta_schema = None;
    let mut schema = settings.into_generator().into_root_schema_for::<A>();
    if schema
        .get("title")
        .is_some_and(|title| *title == *A::schema_name())
    {
        schema.remove("title");
    }
    // The root `description` is the args type's doc comment, written for
    // Rust readers; the model reads the tool's own description beside the
    // schema, so keeping both says the same thing twice (or two things).
    schema.remove("description");
    if deny_unknown_fields {
        CloseObjects.transform(&mut schema);
    }
    schema.to_value()
}

/// Adds `additionalProperties: false` to object schemas that list
/// `properties` and nothing that would make closing them wrong.
struct CloseObjects;

impl Transform for CloseObjects {
    fn transform(&mut self, schema: &mut Schema) {
        if let Some(object) = schema.as_object_mut() {
            let is_object = match object.get("type") {
                Some(Value::String(t)) => t == "object",
                Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
                _ => false,
            };
            // These combine with, or stand for, other schemas: members
            // allowed there would be refused here.
            const OPEN_KEYS: [&str; 8] = [
                "additionalProperties",
                "unevaluatedProperties",
                "patternProperties",
                "allOf",
                "anyOf",
                "oneOf",
                "$ref",
                "$dynamicRef",
            ];
            if is_object
                && object.contains_key("properties")
                && !OPEN_KEYS.iter().any(|k| object.contains_key(*k))
            {
                object.insert("additionalProperties".to_owned(), Value::Bool(false));
            }
        }
        transform_subschemas(self, schema);
    }
}

/// A [`TypedTool`] as a [`Tool`]: holds the schema derived once, and
/// deserializes the arguments for each method.
///
/// Capability methods run on coerced but not yet validated arguments (the
/// scheduler asks them early); when those do not deserialize, they answer
/// the fail-closed default: not read-only, not concurrency-safe, no
/// activity, `Block`.
pub struct Typed<T> {
    tool: T,
    schema: Value,
    extensions: Extensions,
}

impl<T: TypedTool> Typed<T> {
    /// Wraps `tool`, deriving its schema.
    pub fn new(tool: T) -> Self {
        Self {
            schema: schema_for::<T::Args>(T::DENY_UNKNOWN_FIELDS),
            extensions: tool.extensions(),
            tool,
        }
    }

    /// The typed tool.
    pub fn get_ref(&self) -> &T {
        &self.tool
    }

    /// The typed tool, unwrapped.
    pub fn into_inner(self) -> T {
        self.tool
    }

    fn parse(&self, args: &Value) -> Result<T::Args, String> {
        T::Args::deserialize(args).map_err(|err| {
            texts::arguments_refused(
                self.tool.name(),
                format_args!("could not read its arguments: {err}"),
            )
        })
    }
}

impl<T> std::fmt::Debug for Typed<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Typed")
            .field("tool", &std::any::type_name::<T>())
            .field("schema", &self.schema)
            .finish()
    }
}

impl<T: TypedTool> Tool for Typed<T> {
    fn name(&self) -> &str {
        self.tool.name()
    }

    fn description(&self) -> &str {
        self.tool.description()
    }

    fn schema(&self) -> &Value {
        &self.schema
    }

    fn execute<'a>(
        &'a self,
        args: GatedArgs,
        cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            // Validate already parsed these; a gate's rewrite is re-validated.
            let args = self.parse(args.value()).map_err(ToolError::new)?;
            self.tool.execute(args, cx).await
        })
    }

    fn label(&self) -> Option<&str> {
        self.tool.label()
    }

    fn validate<'a>(
        &'a self,
        args: &'a Value,
        cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<(), ValidationFailure>> {
        Box::pin(async move {
            let args = self
                .parse(args)
                .map_err(|message| ValidationFailure::new(DESERIALIZE_FAILURE_CODE, message))?;
            self.tool.validate(&args, cx).await
        })
    }

    fn preview<'a>(
        &'a self,
        args: &'a Value,
        cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<Option<String>, ToolError>> {
        Box::pin(async move {
            let args = self.parse(args).map_err(ToolError::new)?;
            self.tool.preview(&args, cx).await
        })
    }

    fn read_only(&self, args: &Value) -> bool {
        self.parse(args)
            .is_ok_and(|args| self.tool.read_only(&args))
    }

    fn always_read_only(&self) -> bool {
        self.tool.always_read_only()
    }

    fn concurrency_safe(&self, args: &Value) -> Option<bool> {
        match self.parse(args) {
            Ok(args) => self.tool.concurrency_safe(&args),
            Err(_) => Some(false),
        }
    }

    fn activity(&self, args: &Value) -> Option<String> {
        self.parse(args)
            .ok()
            .and_then(|args| self.tool.activity(&args))
    }

    fn interrupt_behavior(&self, args: &Value) -> InterruptBehavior {
        self.parse(args).map_or(InterruptBehavior::Block, |args| {
            self.tool.interrupt_behavior(&args)
        })
    }

    fn observes_cancellation(&self) -> bool {
        self.tool.observes_cancellation()
    }

    fn extensions(&self) -> &Extensions {
        &self.extensions
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    /// Where to look.
    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Range {
        /// First line.
        start: u32,
        /// Last line.
        end: Option<u32>,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Args {
        path: String,
        range: Option<Range>,
        ranges: Vec<Range>,
        labels: std::collections::BTreeMap<String, String>,
        #[serde(default)]
        mode: Mode,
    }

    #[derive(Deserialize, JsonSchema, Default)]
    #[serde(rename_all = "snake_case")]
    enum Mode {
        #[default]
        Fast,
        Careful,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Node {
        name: String,
        children: Vec<Node>,
    }

    struct Probe;

    impl TypedTool for Probe {
        type Args = Args;
        fn name(&self) -> &str {
            "probe"
        }
        fn description(&self) -> &str {
            "d"
        }
        async fn execute(&self, args: Args, _cx: &CallContext) -> Result<ToolOutput, ToolError> {
            Ok(ToolOutput::text(args.path))
        }
        fn read_only(&self, args: &Args) -> bool {
            args.path.starts_with("ro/")
        }
        fn activity(&self, args: &Args) -> Option<String> {
            Some(format!("Probing {}", args.path))
        }
        fn interrupt_behavior(&self, _args: &Args) -> InterruptBehavior {
            InterruptBehavior::Cancel
        }
        fn extensions(&self) -> Extensions {
            let mut extensions = Extensions::new();
            extensions.insert(Owner("probe team"));
            extensions
        }
    }

    #[derive(Clone, Debug, PartialEq)]
    struct Owner(&'static str);

    #[test]
    fn extensions_are_asked_once_and_kept() {
        let tool = Typed::new(Probe);
        assert_eq!(tool.extensions().get::<Owner>(), Some(&Owner("probe team")));
        assert!(Typed::new(Plain).extensions().is_empty());
    }

    struct Plain;

    impl TypedTool for Plain {
        type Args = Args;
        fn name(&self) -> &str {
            "plain"
        }
        fn description(&self) -> &str {
            "d"
        }
        async fn execute(&self, args: Args, _cx: &CallContext) -> Result<ToolOutput, ToolError> {
            Ok(ToolOutput::text(args.path))
        }
    }

    fn walk<'a>(value: &'a Value, out: &mut Vec<(&'a str, &'a Value)>) {
        match value {
            Value::Object(map) => {
                for (k, v) in map {
                    out.push((k, v));
                    walk(v, out);
                }
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }

    #[test]
    fn schema_is_draft_2020_12_inlined_and_closed() {
        let schema = schema_for::<Args>(true);
        // Draft 2020-12 is what the validate stage compiles with; the model
        // sees neither a dialect URI nor the Rust type's name.
        assert!(schema.get("$schema").is_none());
        assert!(schema.get("title").is_none());
        let mut keys = Vec::new();
        walk(&schema, &mut keys);
        assert!(keys.iter().all(|(k, _)| *k != "$ref" && *k != "$defs"));
        assert_eq!(schema["additionalProperties"], false);
        assert_eq!(
            schema["properties"]["ranges"]["items"]["additionalProperties"],
            false
        );
        assert_eq!(
            schema["properties"]["ranges"]["items"]["properties"]["start"]["description"],
            "First line."
        );
        // A map keeps its value schema, not `false`.
        assert_eq!(
            schema["properties"]["labels"]["additionalProperties"]["type"],
            "string"
        );
        assert!(crate::validate::compile_schema(&schema).is_ok());
    }

    /// Written for Rust readers: not in the schema.
    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Documented {
        /// Where to look.
        place: Range,
        /// The file.
        path: String,
    }

    #[test]
    fn the_args_doc_comment_is_not_the_root_description() {
        let schema = schema_for::<Documented>(true);
        assert!(schema.get("description").is_none(), "{schema:#}");
        // Field descriptions stay, and so does a nested type's.
        assert_eq!(schema["properties"]["path"]["description"], "The file.");
        assert!(schema["properties"]["place"]["description"].is_string());
        assert_eq!(
            schema["properties"]["place"]["properties"]["start"]["description"],
            "First line."
        );
    }

    #[test]
    fn schema_stays_open_when_asked() {
        let schema = schema_for::<Args>(false);
        assert!(schema.get("additionalProperties").is_none());
    }

    #[test]
    fn recursive_types_keep_a_local_ref_and_compile() {
        let schema = schema_for::<Node>(true);
        assert!(crate::validate::compile_schema(&schema).is_ok());
    }

    #[test]
    fn capabilities_see_typed_args_and_fail_closed() {
        let tool = Typed::new(Probe);
        let ok = json!({"path": "ro/x", "ranges": [], "labels": {}});
        assert!(tool.read_only(&ok));
        assert_eq!(tool.activity(&ok).as_deref(), Some("Probing ro/x"));
        assert_eq!(tool.interrupt_behavior(&ok), InterruptBehavior::Cancel);
        assert_eq!(tool.concurrency_safe(&ok), None);
        assert!(crate::tool::is_concurrency_safe(&tool, &ok));

        // Read-only for some arguments is not read-only for every call.
        assert!(!tool.always_read_only());

        let bad = json!({"path": 3});
        assert!(!tool.read_only(&bad));
        assert_eq!(tool.activity(&bad), None);
        assert_eq!(tool.interrupt_behavior(&bad), InterruptBehavior::Block);
        assert_eq!(tool.concurrency_safe(&bad), Some(false));
        assert_eq!(tool.name(), "probe");
        assert_eq!(tool.schema()["type"], "object");
    }
}
