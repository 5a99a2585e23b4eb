//! How a call is admitted: decided on entry, without I/O.

use std::panic::{AssertUnwindSafe, catch_unwind};

use agentcore_stages::coerce::parse_and_coerce;
use agentcore_stages::{InterruptBehavior, RawArgs, ToolRegistry, is_concurrency_safe};

/// What the scheduler needs to know about a call before it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Admission {
    /// May run beside other safe calls.
    pub safe: bool,
    /// What steering does to it while it runs.
    pub interrupt: InterruptBehavior,
}

impl Admission {
    /// Unsafe and not interruptible: the fail-closed answer.
    pub const UNSAFE: Admission = Admission {
        safe: false,
        interrupt: InterruptBehavior::Block,
    };
}

/// Classifies a call from a pure parse + coerce of its arguments. An unknown
/// tool, unparsable arguments, or a capability method that panics make the
/// call unsafe.
pub fn classify(registry: &ToolRegistry, tool: &str, args: &RawArgs) -> Admission {
    let Some(entry) = registry.get(tool) else {
        return Admission::UNSAFE;
    };
    let Ok((args, _)) = parse_and_coerce(entry, args) else {
        return Admission::UNSAFE;
    };
    let tool = entry.tool();
    catch_unwind(AssertUnwindSafe(|| Admission {
        safe: is_concurrency_safe(tool.as_ref(), &args),
        interrupt: tool.interrupt_behavior(&args),
    }))
    .unwrap_or(Admission::UNSAFE)
}
