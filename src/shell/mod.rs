//! What a shell command does, read before it runs: the command split into
//! its parts ([`CommandAnalysis`]), the wrappers that run another command
//! (`env`, `timeout`, `xargs`, `find -exec`, `bash -c`, …) seen through,
//! and the programs known to only read (which run side by side).
//!
//! Layer: above [`access`](crate::access); imports nothing else of this
//! crate. The approval engine matches rules against the parts; the bash
//! tool asks `read_only` whether a command may run beside others.

mod analysis;
pub(crate) mod read_only;

pub(crate) use analysis::pattern_words;
pub use analysis::{CommandAnalysis, CommandPart, Hazard};
