//! The stage's response future.

use crate::future::stage_future;

stage_future! {
    /// Validate's future: the call ended in the stage, or the inner
    /// service's future, or (when the tool's `validate` must be awaited) the
    /// check and then the inner service.
    sync
}
