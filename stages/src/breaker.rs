//! The circuit breaker's per-tool count of consecutive failures.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::outcome::Outcome;

/// Consecutive `Failed` outcomes per tool name, shared by a session.
/// Cloning shares the counts.
#[derive(Clone, Debug, Default)]
pub struct Breaker {
    inner: Arc<Counts>,
}

#[derive(Debug, Default)]
struct Counts {
    /// Whether any tool has a count: while none has, a call's lookup and
    /// its success take no lock.
    any: AtomicBool,
    counts: Mutex<HashMap<String, u32>>,
}

impl Breaker {
    /// A breaker with every count at zero.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, u32>> {
        self.inner.counts.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` on the counts under the lock, keeping `any` in step.
    fn update<T>(&self, f: impl FnOnce(&mut HashMap<String, u32>) -> T) -> T {
        let mut counts = self.lock();
        let out = f(&mut counts);
        self.inner.any.store(!counts.is_empty(), Ordering::Release);
        out
    }

    /// The current count for `tool`.
    pub fn count(&self, tool: &str) -> u32 {
        if !self.inner.any.load(Ordering::Acquire) {
            return 0;
        }
        self.lock().get(tool).copied().unwrap_or(0)
    }

    /// Accounts one ended call: `Failed` adds one, `Success` resets, every
    /// other outcome leaves the count as it is.
    pub fn record(&self, tool: &str, outcome: Outcome) {
        match outcome {
            Outcome::Failed => self.update(|counts| {
                let n = counts.entry(tool.to_owned()).or_insert(0);
                *n = n.saturating_add(1);
            }),
            Outcome::Success => {
                if self.inner.any.load(Ordering::Acquire) {
                    self.update(|counts| counts.remove(tool));
                }
            }
            Outcome::Denied | Outcome::Cancelled | Outcome::Disabled | Outcome::Skipped => {}
        }
    }

    /// Resets every count; the harness calls this when a new user prompt
    /// starts a run.
    pub fn reset(&self) {
        self.update(HashMap::clear);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_counts_success_resets_others_leave() {
        let b = Breaker::new();
        b.record("t", Outcome::Failed);
        b.record("t", Outcome::Failed);
        for o in [
            Outcome::Denied,
            Outcome::Cancelled,
            Outcome::Disabled,
            Outcome::Skipped,
        ] {
            b.record("t", o);
        }
        assert_eq!(b.count("t"), 2);
        b.record("t", Outcome::Success);
        assert_eq!(b.count("t"), 0);
        b.record("t", Outcome::Failed);
        b.reset();
        assert_eq!(b.count("t"), 0);
    }

    #[test]
    fn one_tool_s_success_leaves_another_s_count_and_reset_clears_all() {
        let b = Breaker::new();
        assert_eq!(b.count("a"), 0);
        b.record("b", Outcome::Success);
        b.record("a", Outcome::Failed);
        b.record("b", Outcome::Success);
        assert_eq!(b.count("a"), 1);
        b.record("b", Outcome::Failed);
        b.record("a", Outcome::Success);
        assert_eq!((b.count("a"), b.count("b")), (0, 1));
        b.record("b", Outcome::Success);
        assert_eq!(b.count("b"), 0);
        b.record("a", Outcome::Failed);
        let shared = b.clone();
        shared.reset();
        assert_eq!(b.count("a"), 0);
        b.record("a", Outcome::Failed);
        assert_eq!(shared.count("a"), 1);
    }
}
