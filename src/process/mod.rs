//! Processes agentcore starts (commands, hooks, mounted MCP servers): how
//! a child is prepared (`child`: a session of its own, a subreaper, no
//! `CAP_SYS_PTRACE`), how every process of one call is found and killed
//! (`tracking`: a marker variable, the session, descent), the
//! environment a child gets (`env`: the scrub of secret-looking names and
//! agentcore's own token), and the session's folders of output
//! ([`OutputDir`]) with the sweep of folders left by dead sessions.
//!
//! Layer: imports nothing else of this crate; the sandbox, the tools and
//! the hooks build on it.

pub(crate) mod child;
pub(crate) mod env;
mod output_dir;
#[cfg(target_os = "linux")]
pub mod pty;
pub(crate) mod tracking;

pub use env::{TOKEN_ENV, command_environment};
pub(crate) use output_dir::OutputFile;
pub use output_dir::{
    JOBS_PREFIX, OUTPUT_PREFIX, Orphan, OutputDir, SANDBOX_PREFIX, StaleSessions, owned_prefix,
    sweep_stale_sessions,
};
pub use tracking::{OrphanScope, adopt_orphans, make_undumpable};
