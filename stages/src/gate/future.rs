//! The stage's response future.

use crate::call::{Call, Executed};
use crate::future::stage_future;

stage_future! {
    /// The gate's future: the gate's decision, then the inner service.
    boxed ResponseFuture => Call<Executed>
}
