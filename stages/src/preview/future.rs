//! The stage's response future.

use crate::future::stage_future;

stage_future! {
    /// Preview's future: the call ended in the stage, or the inner
    /// service's future, or (when the tool's `preview` must be awaited) the
    /// preview and then the inner service.
    sync
}
