//! The stage's response future.

use crate::call::{Call, Executed};
use crate::future::stage_future;

stage_future! {
    /// Validate's future: the schema and the tool's check, then the inner
/// service.
    boxed ResponseFuture => Call<Executed>
}
