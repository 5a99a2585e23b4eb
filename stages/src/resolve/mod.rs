//! Resolve: find the tool by name, or end `Failed` with
//! `tool "NAME" not found`.

mod layer;
mod service;

pub use layer::ResolveLayer;
pub use service::Resolve;
