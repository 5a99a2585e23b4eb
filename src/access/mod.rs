//! What a call touches, in one vocabulary shared by every part that judges
//! or confines it.
//!
//! A tool says what one call touches as an [`Access`] (a [`Capability`]
//! and the paths or the command), computed by the [`Permissions`] value it
//! carries in its typed extensions; the approval engine, the hooks and the
//! sandbox all read it from there. The paths that always need the user
//! ([`PROTECTED_PATHS`]) and their forms for the sandbox's mounts
//! ([`PROTECTED_IN_ROOT`], [`is_protected_entry`]) and the hooks' own
//! folder ([`CLAUDE_DIR`]) are listed once, in [`protected`](self#protected-paths).
//!
//! This is the lowest layer above the pipeline (`stages`): it imports
//! nothing else of this crate.
//!
//! # Protected paths
//!
//! One list, three readers: the approval engine matches
//! [`PROTECTED_PATHS`] against what a call touches (ask, except in bypass);
//! the sandbox mounts [`PROTECTED_IN_ROOT`] and every entry
//! [`is_protected_entry`] names read-only in a writable root; the hooks
//! treat a write under [`CLAUDE_DIR`] like a protected path.

mod permissions;
mod protected;

pub use permissions::{Access, Capability, Containment, Permissions};
pub use protected::{CLAUDE_DIR, PROTECTED_IN_ROOT, PROTECTED_PATHS, is_protected_entry};
