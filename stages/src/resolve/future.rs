//! The stage's response future.

use crate::future::stage_future;

stage_future! {
    /// Resolve's future: the call ended in the stage, or the inner service's
    /// future.
    sync
}
