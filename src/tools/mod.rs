//! The seven built-in tools (read, glob, grep, ls, edit, write, bash), the
//! [`Workspace`](workspace::Workspace) they are confined to, and the
//! read-before-write ledger [`FileReadState`](read_state::FileReadState).

pub mod bash;
mod blocking;
pub mod glob;
pub mod grep;
pub mod ls;
pub mod read;
pub mod read_state;
mod walk;
pub mod workspace;
