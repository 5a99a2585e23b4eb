//! The approval engine (stub while building).
pub mod builtin;
pub mod command;
pub mod permissions;
pub use permissions::{Access, Capability, Permissions};
