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
#[derive(Clone, Debug, Default)]
pub struct Cancellation {
    token: CancellationToken,
    reason: Arc<OnceLock<CancelReason>>,
    parent: Option<Arc<Cancellation>>,
}

impl Cancellation {
    /// A fresh, uncancelled cancellation.
    pub fn new() -> Self {
        Self::default()
    }

    /// A child: cancelled when `self` is, on its own without affecting `self`.
    pub fn child(&self) -> Self {
        Self {
            token: self.token.child_token(),
            reason: Arc::new(OnceLock::new()),
            parent: Some(Arc::new(self.clone())),
        }
    }

    /// Cancels with `reason` (the first reason given wins).
    pub fn cancel(&self, reason: CancelReason) {
        let _ = self.reason.set(reason);
        self.token.cancel();
    }

    /// Whether it fired.
    pub fn is_cancelled(&self) -> bool {
        self.token.is_cancelled()
    }

    /// Why it fired: its own reason, else its parent's, else `Abort`;
    /// `None` while not cancelled.
    pub fn reason(&self) -> Option<CancelReason> {
        if !self.is_cancelled() {
            return None;
        }
        Some(
            self.own_or_inherited_reason()
                .unwrap_or(CancelReason::Abort),
        )
    }

    fn own_or_inherited_reason(&self) -> Option<CancelReason> {
        self.reason.get().copied().or_else(|| {
            self.parent
                .as_ref()
                .and_then(|p| p.own_or_inherited_reason())
        })
    }

    /// The underlying token, for `select!` or for handing to spawned work.
    pub fn token(&self) -> &CancellationToken {
        &self.token
    }

    /// Completes when it fires.
    pub fn cancelled(&self) -> WaitForCancellationFuture<'_> {
        self.token.cancelled()
    }
}
