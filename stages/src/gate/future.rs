//! The stage's response future.

use crate::future::stage_future;

stage_future! {
    /// The gate's future: the inner service's future when no gate is asked,
    /// else the gate's decision and then the inner service.
    sync
}
