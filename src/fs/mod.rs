//! The files a call may touch, and how they are touched: the
//! [`Workspace`](workspace::Workspace) (roots, path checks, handle-based
//! resolution below a root in `beneath`), the walks of glob, grep and ls
//! and what they learn for the next call (`learned`),
//! a file's content replaced whole and crash-safe (`replace`), the steps
//! the file-changing tools share (`file_tool`), the read-before-write
//! ledger ([`FileReadState`](read_state::FileReadState)), and the paths
//! the gate judged ([`judged`]).
//!
//! Layer: above [`access`](crate::access); imports nothing else of this
//! crate.

pub(crate) mod beneath;
pub(crate) mod blocking;
pub(crate) mod file_tool;
pub mod judged;
pub(crate) mod learned;
pub mod read_state;
pub(crate) mod replace;
pub(crate) mod walk;
pub mod workspace;

/// The user's home directory: `$HOME` when set and not empty.
pub(crate) fn home_dir() -> Option<std::path::PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(std::path::PathBuf::from)
}
