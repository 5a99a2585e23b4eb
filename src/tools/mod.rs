//! The built-in tools, one folder (or file) per family: `read`, `glob`,
//! `grep`, `ls`, `edit` (with `multi_edit`), `edit_lines`, `write`, `apply_patch`,
//! `bash` (with `bash_output` and `kill_shell` for its background jobs),
//! and `checkpoints` (with `rewind`) over the session's
//! [checkpoints](crate::checkpoint).
//! They are confined to a [`Workspace`](crate::fs::workspace::Workspace)
//! and keep the read-before-write ledger
//! [`FileReadState`](crate::fs::read_state::FileReadState), both in
//! [`fs`](crate::fs).
//!
//! A tool of your own for the simple case, a closure over typed
//! arguments, is [`fn_tool`].
//!
//! Layer: above [`access`](crate::access), [`fs`](crate::fs),
//! [`checkpoint`](crate::checkpoint),
//! [`process`](crate::process), [`sandbox`](crate::sandbox) and
//! [`shell`](crate::shell); nothing here imports the approval engine, the
//! hooks, the MCP faces or the session.

pub mod apply_patch;
pub mod bash;
pub mod checkpoints;
pub mod edit;
pub mod edit_lines;
mod fn_tool;
pub mod glob;
pub mod grep;
pub mod ls;
pub mod read;
mod schema;
pub mod set;
pub mod spec;
pub(crate) mod text;
pub mod write;

pub use fn_tool::{FnTool, fn_tool};
