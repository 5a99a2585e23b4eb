//! Resolve: find the tool by name, or end `Failed` with
//! `tool "NAME" not found`.

mod future;
mod layer;
mod service;

pub use future::ResponseFuture;
pub use layer::ResolveLayer;
pub use service::Resolve;
