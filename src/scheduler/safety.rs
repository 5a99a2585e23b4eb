//! How a call is admitted: decided on entry, without I/O.

use std::panic::{AssertUnwindSafe, catch_unwind};

use agentcore_stages::{Call, InterruptBehavior, ToolRegistry, Unvalidated, is_concurrency_safe};

/// What the scheduler needs to know about a call before it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Admission {
    /// May run beside other safe calls.
    pub safe: bool,
    /// What steering does to it while it runs.
    pub interrupt: InterruptBehavior,
}

impl Admission {
    /// Unsafe and not interruptible: the fail-closed answer.
    pub(super) const UNSAFE: Admission = Admission {
        safe: false,
        interrupt: InterruptBehavior::Block,
    };
}

/// Classifies a call from a pure parse + coerce of its arguments, which the
/// call keeps for the pipeline's Coerce stage ([`Call::coerce_for`]). An
/// unknown tool, unparsable arguments, or a capability method that panics
/// make the call unsafe.
pub(crate) fn classify(registry: &ToolRegistry, call: &mut Call<Unvalidated>) -> Admission {
    let Some(entry) = registry.get(call.tool_name()) else {
        return Admission::UNSAFE;
    };
    let Ok(args) = call.coerce_for(entry) else {
        return Admission::UNSAFE;
    };
    let tool = entry.tool();
    catch_unwind(AssertUnwindSafe(|| Admission {
        safe: is_concurrency_safe(tool.as_ref(), args),
        interrupt: tool.interrupt_behavior(args),
    }))
    .unwrap_or(Admission::UNSAFE)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use agentcore_stages::{
        BoxFuture, CallContext, GatedArgs, RawArgs, Tool, ToolError, ToolOutput,
    };
    use serde_json::{Value, json};

    use super::*;

    /// Read-only unless `panics`, in which case its capability methods panic.
    struct Probe {
        panics: bool,
        schema: Value,
    }

    impl Tool for Probe {
        fn name(&self) -> &str {
            if self.panics { "panicky" } else { "probe" }
        }
        fn description(&self) -> &str {
            "probe"
        }
        fn schema(&self) -> &Value {
            &self.schema
        }
        fn read_only(&self, _args: &Value) -> bool {
            assert!(!self.panics, "capability method panicked");
            true
        }
        fn interrupt_behavior(&self, _args: &Value) -> InterruptBehavior {
            InterruptBehavior::Cancel
        }
        fn execute<'a>(
            &'a self,
            _args: GatedArgs,
            _cx: &'a CallContext,
        ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
            Box::pin(async { Ok(ToolOutput::text("ok")) })
        }
    }

    fn registry() -> ToolRegistry {
        let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        ToolRegistry::new()
            .with(Arc::new(Probe {
                panics: false,
                schema: schema.clone(),
            }))
            .and_then(|r| {
                r.with(Arc::new(Probe {
                    panics: true,
                    schema,
                }))
            })
            .expect("register")
    }

    fn classify(registry: &ToolRegistry, tool: &str, args: &RawArgs) -> Admission {
        super::classify(registry, &mut Call::new("c1", tool, args.clone()))
    }

    #[test]
    fn safe_tools_are_classified_from_their_coerced_args() {
        let admission = classify(&registry(), "probe", &RawArgs::Text(r#"{"n": "3"}"#.into()));
        assert_eq!(
            admission,
            Admission {
                safe: true,
                interrupt: InterruptBehavior::Cancel
            }
        );
    }

    #[test]
    fn unknown_tools_bad_args_and_panicking_capabilities_fail_closed() {
        let registry = registry();
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let panicky = classify(&registry, "panicky", &RawArgs::Text("{}".into()));
        std::panic::set_hook(hook);
        assert_eq!(panicky, Admission::UNSAFE);
        assert_eq!(
            classify(&registry, "ghost", &RawArgs::Text("{}".into())),
            Admission::UNSAFE
        );
        assert_eq!(
            classify(&registry, "probe", &RawArgs::Text("{".into())),
            Admission::UNSAFE
        );
        assert_eq!(
            classify(&registry, "probe", &RawArgs::Text("[1]".into())),
            Admission::UNSAFE
        );
    }
}
