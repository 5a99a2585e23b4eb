//! The built-in tools (read, glob, grep, ls, edit, multi_edit, write, apply_patch, bash, and bash_output and kill_shell for bash's background jobs), the
//! [`Workspace`](workspace::Workspace) they are confined to, and the
//! read-before-write ledger [`FileReadState`](read_state::FileReadState).

pub mod apply_patch;
mod atomic;
pub mod bash;
pub mod bash_output;
pub(crate) mod beneath;
mod blocking;
mod diff;
pub mod edit;
mod file_write;
pub mod glob;
pub mod grep;
pub mod kill_shell;
pub mod ls;
pub mod multi_edit;
pub mod read;
pub mod read_state;
mod schema;
pub mod set;
mod text;
mod walk;
pub mod workspace;
pub mod write;
