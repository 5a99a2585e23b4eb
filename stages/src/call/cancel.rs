//! Cancellation with a reason: abort or skip.

use std::sync::{Arc, OnceLock};

use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

/// Why a call's cancellation fired.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CancelReason {
    /// The user or harness aborted: `Tool execution cancelled.`
    Abort,
    /// A queued user message skipped the call: `Skipped due to queued user message.`
    Skip,
}

/// A cancellation token with the reason it fired. Children are cancelled
/// with their parent and inherit its reason unless they were given one.
///
/// Clones share one token handle: a clone or a drop is a reference count,
/// where a clone of the token itself takes the token's lock (a call's
/// cancellation is cloned and dropped several times on its way through
/// the stages and the scheduler).
#[derive(Clone, Default)]
pub struct Cancellation {
    inner: Arc<Shared>,
}

/// What the clones of one cancellation share: its token, its own reason,
/// and its parent's (one allocation besides the token's, as for a fresh
/// one).
#[derive(Default)]
struct Shared {
    token: CancellationToken,
    own: OnceLock<CancelReason>,
    parent: Option<Arc<Shared>>,
}

impl std::fmt::Debug for Cancellation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cancellation")
            .field("cancelled", &self.is_cancelled())
            .field("reason", &self.reason())
            .finish()
    }
}

impl Cancellation {
    /// A fresh, uncancelled cancellation.
    pub fn new() -> Self {
        Self::default()
    }

    /// A child: cancelled when `self` is, on its own without affecting `self`.
    pub fn child(&self) -> Self {
        Self {
            inner: Arc::new(Shared {
                token: self.inner.token.child_token(),
                own: OnceLock::new(),
                parent: Some(self.inner.clone()),
            }),
        }
    }

    /// Cancels with `reason` (the first reason given wins).
    pub fn cancel(&self, reason: CancelReason) {
        let _ = self.inner.own.set(reason);
        self.inner.token.cancel();
    }

    /// Whether it fired.
    pub fn is_cancelled(&self) -> bool {
        self.inner.token.is_cancelled()
    }

    /// Why it fired: its own reason, else its parent's, else `Abort`;
    /// `None` while not cancelled.
    pub fn reason(&self) -> Option<CancelReason> {
        if !self.is_cancelled() {
            return None;
        }
        let mut node = Some(&*self.inner);
        while let Some(shared) = node {
            if let Some(own) = shared.own.get() {
                return Some(*own);
            }
            node = shared.parent.as_deref();
        }
        Some(CancelReason::Abort)
    }

    /// The underlying token, for `select!` or for handing to spawned work.
    pub fn token(&self) -> &CancellationToken {
        &self.inner.token
    }

    /// Completes when it fires.
    pub fn cancelled(&self) -> WaitForCancellationFuture<'_> {
        self.inner.token.cancelled()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_one_cancellation_and_children_inherit_the_reason() {
        let turn = Cancellation::new();
        let call = turn.child();
        let clone = call.clone();
        let other = turn.child();
        assert!(!clone.is_cancelled() && clone.reason().is_none());
        call.cancel(CancelReason::Skip);
        assert_eq!(clone.reason(), Some(CancelReason::Skip));
        assert!(clone.token().is_cancelled());
        assert!(!turn.is_cancelled() && !other.is_cancelled());
        drop(call);
        turn.cancel(CancelReason::Abort);
        assert_eq!(other.reason(), Some(CancelReason::Abort));
        assert_eq!(
            clone.reason(),
            Some(CancelReason::Skip),
            "its own reason wins"
        );
        let late = turn.child();
        assert_eq!(late.reason(), Some(CancelReason::Abort));
    }

    #[test]
    fn a_child_of_a_child_fires_with_the_root_and_a_dropped_clone_changes_nothing() {
        let root = Cancellation::new();
        let middle = root.child();
        let leaf = middle.child();
        let leaf_clone = leaf.clone();
        drop(middle);
        drop(leaf);
        assert!(!leaf_clone.is_cancelled());
        root.cancel(CancelReason::Skip);
        assert_eq!(leaf_clone.reason(), Some(CancelReason::Skip));
        assert!(format!("{leaf_clone:?}").contains("Skip"));
    }
}
