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
    reason: Arc<Reason>,
}

/// A cancellation's own reason, and its parent's (one allocation a child).
#[derive(Debug, Default)]
struct Reason {
    own: OnceLock<CancelReason>,
    parent: Option<Arc<Reason>>,
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
            reason: Arc::new(Reason {
                own: OnceLock::new(),
                parent: Some(self.reason.clone()),
            }),
        }
    }

    /// Cancels with `reason` (the first reason given wins).
    pub fn cancel(&self, reason: CancelReason) {
        let _ = self.reason.own.set(reason);
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
        let mut node = Some(&*self.reason);
        while let Some(reason) = node {
            if let Some(own) = reason.own.get() {
                return Some(*own);
            }
            node = reason.parent.as_deref();
        }
        Some(CancelReason::Abort)
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
