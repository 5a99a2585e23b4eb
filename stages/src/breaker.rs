//! The circuit breaker's per-tool count of consecutive failures.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::outcome::Outcome;

/// Consecutive `Failed` outcomes per tool name, shared by a session.
/// Cloning shares the counts.
#[derive(Clone, Debug, Default)]
pub struct Breaker {
    counts: Arc<Mutex<HashMap<String, u32>>>,
}

impl Breaker {
    /// A breaker with every count at zero.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, u32>> {
        self.counts.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The current count for `tool`.
    pub fn count(&self, tool: &str) -> u32 {
        self.lock().get(tool).copied().unwrap_or(0)
    }

    /// Accounts one ended call: `Failed` adds one, `Success` resets, every
    /// other outcome leaves the count as it is.
    pub fn record(&self, tool: &str, outcome: Outcome) {
        match outcome {
            Outcome::Failed => {
                let mut counts = self.lock();
                let n = counts.entry(tool.to_owned()).or_insert(0);
                *n = n.saturating_add(1);
            }
            Outcome::Success => {
                self.lock().remove(tool);
            }
            Outcome::Denied | Outcome::Cancelled | Outcome::Disabled | Outcome::Skipped => {}
        }
    }

    /// Resets every count; the harness calls this when a new user prompt
    /// starts a run.
    pub fn reset(&self) {
        self.lock().clear();
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
}
