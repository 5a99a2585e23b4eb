//! The `apply_patch` tool: the patch format OpenAI's models write
//! (`*** Begin Patch` … `*** End Patch`, with Add, Delete and Update File
//! sections), parsed by our own parser ([`parse`]), its hunks placed with
//! the tiers `edit` uses ([`apply_hunks`]), and applied all or nothing
//! across files ([`ApplyPatchTool`]).
//!
//! Every hunk is placed and every refusal found before anything is
//! written; then each file is written atomically, and if a write fails
//! midway the files already written are put back. Updated, moved and
//! deleted files need a read stamp (codes 2 and 3, as for `edit`); added
//! files must not exist (code 7). A patch that cannot be parsed is code
//! 10, a hunk not found code 4 (with the closest lines), a hunk that
//! matches several places code 5. The approval engine sees a write of
//! every path the patch names ([`permissions`]).
//!
//! One concept per file: the patch format in `parse`; placing hunks in
//! `apply`; the tool (description, permissions, its steps, the preview)
//! in `tool`; the plan (every operation checked and every file's new
//! bytes made, nothing written) in `plan`; and the all-or-nothing write
//! of the plan, with its rollback, in `transaction`.

mod apply;
mod parse;
mod plan;
mod tool;
mod transaction;

pub use apply::{HunkError, Patched, apply_hunks};
pub use parse::{FileOp, Hunk, Line, ParseError, Patch, parse};
pub use tool::{ApplyPatchArgs, ApplyPatchTool, SPEC, permissions};
