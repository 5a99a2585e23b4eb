//! Arrival order for `tools/call` requests.
//!
//! rmcp reads requests one at a time but runs each handler in its own task,
//! so handlers may reach the scheduler in any order. The transport wrapper
//! here numbers every `tools/call` as it is read; a handler hands its call
//! to the scheduler only when every earlier one has been handed over (or
//! dropped), so the scheduler admits requests in the order they arrived.

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use rmcp::RoleServer;
use rmcp::model::{ClientRequest, JsonRpcMessage, JsonRpcRequest};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::Notify;

/// Hands out numbers in arrival order and tells each holder when its turn
/// has come.
#[derive(Debug, Default)]
pub(crate) struct Arrivals {
    state: Mutex<State>,
    turn_changed: Notify,
}

#[derive(Debug, Default)]
struct State {
    /// The number the next arrival gets.
    issued: u64,
    /// The lowest number not yet released: whose turn it is.
    next: u64,
    /// Numbers released out of order, waiting for `next` to reach them.
    released: BTreeSet<u64>,
}

impl Arrivals {
    /// A new sequence starting at 0.
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // The state stays consistent under every panic point (plain integer
        // and set updates), so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The next number, for a request just read.
    pub(crate) fn ticket(self: &Arc<Self>) -> Ticket {
        let number = {
            let mut state = self.state();
            let n = state.issued;
            state.issued += 1;
            n
        };
        Ticket(Arc::new(TicketInner {
            number,
            arrivals: self.clone(),
            released: AtomicBool::new(false),
        }))
    }

    /// Waits until every number below `number` has been released.
    async fn turn(&self, number: u64) {
        loop {
            let notified = self.turn_changed.notified();
            tokio::pin!(notified);
            // Register before checking, so a release in between is not missed.
            notified.as_mut().enable();
            if self.state().next >= number {
                return;
            }
            notified.await;
        }
    }

    fn release(&self, number: u64) {
        {
            let mut guard = self.state();
            let state = &mut *guard;
            state.released.insert(number);
            while state.released.remove(&state.next) {
                state.next += 1;
            }
        }
        self.turn_changed.notify_waiters();
    }
}

/// A request's place in the arrival order. Released explicitly once the
/// call is with the scheduler, or when the last copy is dropped (a request
/// rmcp rejected before it reached the handler).
#[derive(Clone, Debug)]
pub(crate) struct Ticket(Arc<TicketInner>);

#[derive(Debug)]
struct TicketInner {
    number: u64,
    arrivals: Arc<Arrivals>,
    released: AtomicBool,
}

impl TicketInner {
    fn release(&self) {
        if !self.released.swap(true, Ordering::AcqRel) {
            self.arrivals.release(self.number);
        }
    }
}

impl Drop for TicketInner {
    fn drop(&mut self) {
        self.release();
    }
}

impl Ticket {
    /// Waits until every request that arrived before this one has been
    /// handed to the scheduler.
    pub(crate) async fn turn(&self) {
        self.0.arrivals.turn(self.0.number).await;
    }

    /// Lets the next request go.
    pub(crate) fn release(&self) {
        self.0.release();
    }
}

/// A transport that gives every `tools/call` request a [`Ticket`] as it is
/// read (in the request's extensions, which rmcp hands to the handler).
pub(crate) struct InArrivalOrder<T> {
    inner: T,
    arrivals: Arc<Arrivals>,
}

impl<T> InArrivalOrder<T> {
    pub(crate) fn new(inner: T, arrivals: Arc<Arrivals>) -> Self {
        Self { inner, arrivals }
    }
}

impl<T> Transport<RoleServer> for InArrivalOrder<T>
where
    T: Transport<RoleServer>,
{
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        // Cancel-safe as the inner receive is: nothing happens after the
        // await that could be lost.
        let mut message = self.inner.receive().await?;
        if let JsonRpcMessage::Request(JsonRpcRequest {
            request: ClientRequest::CallToolRequest(request),
            ..
        }) = &mut message
        {
            request.extensions.insert(self.arrivals.ticket());
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn turns_follow_issue_order_and_skip_dropped_tickets() {
        let arrivals = Arrivals::new();
        let first = arrivals.ticket();
        let second = arrivals.ticket();
        let third = arrivals.ticket();
        first.turn().await;
        let waiting = tokio::spawn({
            let third = third.clone();
            async move { third.turn().await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiting.is_finished());
        first.release();
        second.turn().await;
        // A ticket dropped without an explicit release still lets the next go.
        drop(second);
        tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("third's turn came")
            .expect("task ran");
        third.release();
        third.release();
        arrivals.ticket().turn().await;
    }
}
