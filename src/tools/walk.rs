//! The directory walk shared by glob, grep and ls: ripgrep's rules with the
//! machine-dependent parts off, so results depend only on the workspace.

use std::ffi::OsStr;
use std::fs;
use std::path::Path;

use ignore::WalkBuilder;

use super::workspace::Workspace;

/// Version-control directories never walked into.
const VCS_DIRS: [&str; 4] = [".git", ".hg", ".svn", ".jj"];

/// A walker over `start` that honours `.gitignore` (in and out of git
/// repositories), `.ignore` and `.rgignore` files, skips the user's global
/// gitignore and VCS directories, includes hidden files, and does not
/// follow symlinks (the caller decides about symlink entries with
/// [`symlink_inside`]). Paths the workspace excludes are left out.
pub(crate) fn walker(workspace: &Workspace, start: &Path) -> WalkBuilder {
    let mut builder = WalkBuilder::new(start);
    let workspace = workspace.clone();
    builder
        .hidden(false)
        .parents(true)
        .ignore(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(move |entry| {
            !is_vcs_dir(entry.file_name()) && !workspace.is_excluded(entry.path())
        });
    builder.add_custom_ignore_filename(".rgignore");
    builder
}

fn is_vcs_dir(name: &OsStr) -> bool {
    VCS_DIRS.iter().any(|v| name == OsStr::new(v))
}

/// For a symlink met in a walk: whether its final target exists and lies
/// inside the roots, and if so whether it is a directory. Symlinks pointing
/// out (or nowhere) are skipped by every walk.
pub(crate) fn symlink_inside(workspace: &Workspace, link: &Path) -> Option<bool> {
    let target = fs::canonicalize(link).ok()?;
    if !workspace.contains(&target) {
        return None;
    }
    Some(fs::metadata(&target).ok()?.is_dir())
}
