//! The stage's response future.

use crate::call::{Call, Executed};
use crate::future::stage_future;

stage_future! {
    /// Preview's future: the tool's preview, then the inner service.
    boxed ResponseFuture => Call<Executed>
}
