//! The protected-path vocabulary: the names a call may not change without
//! the user, in the forms the engine, the sandbox and the hooks read.

/// Paths that ask even where a rule or the mode allows (not in bypass),
/// each matched at any depth: the name `.git` (a directory or a file) and
/// everything under it, `.env` files, `.ssh` folders, and Claude Code's
/// settings files and hooks folder (`.claude/settings.json`,
/// `.claude/settings.local.json`, `.claude/hooks/`), which name commands
/// that run outside any sandbox. Besides these, a git
/// directory that a `.git` file points to (`gitdir: …`) is protected too:
/// see the approval engine's `ApprovalEngine`, step 8.
pub const PROTECTED_PATHS: [&str; 7] = [
    ".git",
    ".git/**",
    ".env*",
    "**/.ssh/**",
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".claude/hooks/**",
];

/// Folders of a writable root protected whole when present: the
/// repository, and Claude Code's settings (`.claude/settings.json`,
/// `settings.local.json`, `hooks/`: what they name runs outside any
/// sandbox, whether or not agentcore runs hooks).
pub const PROTECTED_IN_ROOT: &[&str] = &[".git", CLAUDE_DIR];

/// Claude Code's folder in a project: its settings files and hooks.
pub const CLAUDE_DIR: &str = ".claude";

/// Whether a directory entry named `name` is protected wherever it is
/// found below a writable root: `.git` (a folder, a file or a link), a
/// `.claude` folder, and an `.env*` entry that is not a folder.
pub fn is_protected_entry(name: &std::ffi::OsStr, is_dir: bool) -> bool {
    let env_file = name.to_string_lossy().starts_with(".env") && !is_dir;
    name == ".git" || (name == CLAUDE_DIR && is_dir) || env_file
}

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;

    use super::*;

    #[test]
    fn entries_are_protected_by_name_and_kind() {
        assert!(is_protected_entry(OsStr::new(".git"), true));
        assert!(is_protected_entry(OsStr::new(".git"), false));
        assert!(is_protected_entry(OsStr::new(".claude"), true));
        assert!(!is_protected_entry(OsStr::new(".claude"), false));
        assert!(is_protected_entry(OsStr::new(".env.local"), false));
        assert!(!is_protected_entry(OsStr::new(".envs"), true));
        assert!(!is_protected_entry(OsStr::new("src"), true));
    }
}
