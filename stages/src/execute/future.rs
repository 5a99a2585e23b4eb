//! The response futures of [`Execute`](super::Execute) and
//! [`Boundary`](super::Boundary).

use crate::call::{Call, Executed};
use crate::future::stage_future;

stage_future! {
    /// Execute's future: the tool's run.
    boxed ResponseFuture => Call<Executed>
}

stage_future! {
    /// The boundary's future: the user middleware's result, its errors and
    /// panics turned into `Failed`.
    boxed BoundaryFuture => Call<Executed>
}
