//! The per-call event emitter: nothing after the End.

use std::sync::{Arc, Mutex};

use crate::event::{Event, EventSink};

/// Emits a call's events and refuses any after its End.
#[derive(Clone, Default)]
pub(crate) struct CallEvents {
    inner: Arc<Mutex<EventsInner>>,
}

#[derive(Default)]
struct EventsInner {
    sink: Option<EventSink>,
    ended: bool,
}

impl CallEvents {
    fn lock(&self) -> std::sync::MutexGuard<'_, EventsInner> {
        // A panic while holding this lock cannot leave it inconsistent:
        // the two fields are each written in one step.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Uses `sink` for this call's events.
    pub(crate) fn bind(&self, sink: EventSink) {
        self.lock().sink = Some(sink);
    }

    /// Uses `sink` unless the call already has one.
    pub(crate) fn bind_default(&self, sink: &EventSink) {
        let mut inner = self.lock();
        if inner.sink.is_none() {
            inner.sink = Some(sink.clone());
        }
    }

    /// Emits the event `make` builds unless the End was emitted; returns
    /// whether it was. The event is built only for a sink that keeps it.
    pub(crate) fn emit_with(&self, make: impl FnOnce() -> Event) -> bool {
        let inner = self.lock();
        if inner.ended {
            return false;
        }
        if let Some(sink) = inner.sink.as_ref().filter(|sink| !sink.is_noop()) {
            sink.emit(make());
        }
        true
    }

    /// Emits the End event `make` builds, once; later events are dropped.
    /// The event is built only for a sink that keeps it.
    pub(crate) fn emit_end_with(&self, make: impl FnOnce() -> Event) -> bool {
        let mut inner = self.lock();
        if inner.ended {
            return false;
        }
        inner.ended = true;
        if let Some(sink) = inner.sink.as_ref().filter(|sink| !sink.is_noop()) {
            sink.emit(make());
        }
        true
    }
}
