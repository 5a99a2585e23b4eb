//! What of a repository a confined command may not change: the parts of
//! `.git` that make git run code, so that a command can commit, branch and
//! stash while what an unconfined git later runs stays as the user left it.
//!
//! Writable inside: objects, refs, the index, `HEAD`, logs,
//! `COMMIT_EDITMSG`, `packed-refs` and the other files git writes while it
//! works (by a lock file renamed over the old one, so `.git` itself must be
//! writable). Read-only: the config and `config.worktree` (hooks paths,
//! `core.fsmonitor`, filter drivers, aliases, `core.sshCommand`), `hooks/`,
//! `info/` (attributes name filter drivers), the pointers `commondir` and
//! `gitdir`, what the config's `core.hooksPath` and includes name, and the
//! folders `modules/` and `worktrees/`: a command cannot add a submodule's
//! or a linked worktree's repository, and those that exist get the same
//! guards inside (their objects and refs stay writable). `.git` and every
//! guarded folder's ancestors below the root become mount points of their
//! own (the sandbox pins them), so none can be renamed away and replaced.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The entries of a repository's folder that are read-only inside, in the
/// order they are mounted.
const GUARDED: &[&str] = &[
    "config",
    "config.worktree",
    "hooks",
    "info",
    "commondir",
    "gitdir",
];

/// Entries created (empty) when missing, so that a command cannot create
/// them: a mount needs an existing path. `true` for a folder.
const CREATED: &[(&str, bool)] = &[
    ("config", false),
    ("config.worktree", false),
    ("hooks", true),
    ("info", true),
    ("modules", true),
    ("worktrees", true),
];

/// How deep submodules' repositories are followed (`modules/a/modules/b`).
const MAX_NESTING: usize = 8;

/// The paths to make read-only for the repository folder `git_dir` (a
/// `.git` folder, canonical), parents before what they hold. A folder that
/// is not a repository (no `HEAD`), one of whose guarded entries is a
/// symbolic link or cannot be created, or a repository nested deeper than
/// [`MAX_NESTING`] is guarded whole: what is not understood stays
/// read-only.
pub(crate) fn repository_guards(git_dir: &Path) -> Vec<PathBuf> {
    let mut guards = Vec::new();
    guard_repository(git_dir, git_dir.parent(), 0, &mut guards);
    let mut unique = Vec::with_capacity(guards.len());
    for path in guards {
        if !unique.contains(&path) {
            unique.push(path);
        }
    }
    unique
}

/// Adds the guards of the repository `dir` (whose work tree is `work_tree`
/// when known, for a relative `core.hooksPath`).
fn guard_repository(dir: &Path, work_tree: Option<&Path>, depth: usize, guards: &mut Vec<PathBuf>) {
    if depth > MAX_NESTING || !dir.join("HEAD").is_file() || prepare(dir).is_err() {
        guards.push(dir.to_path_buf());
        return;
    }
    for name in GUARDED {
        let path = dir.join(name);
        if path.symlink_metadata().is_ok() {
            guards.push(path);
        }
    }
    guards.extend(named_by_config(dir, work_tree));
    let modules = dir.join("modules");
    guards.push(modules.clone());
    for repository in repositories_under(&modules, depth) {
        guard_repository(&repository, None, depth + 1, guards);
    }
    let worktrees = dir.join("worktrees");
    guards.push(worktrees.clone());
    if let Ok(entries) = fs::read_dir(&worktrees) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                // A linked worktree's folder: its own HEAD, index and logs
                // stay writable; its pointers and config do not.
                for name in ["config.worktree", "commondir", "gitdir"] {
                    let path = entry.path().join(name);
                    if path.symlink_metadata().is_ok() {
                        guards.push(path);
                    }
                }
            } else {
                guards.push(entry.path());
            }
        }
    }
}

/// Creates the missing guarded entries of `dir` empty (never through a
/// link: `create_new` and `mkdir` do not follow one), and fails when a
/// guarded entry is a symbolic link or not of its kind.
fn prepare(dir: &Path) -> io::Result<()> {
    for name in GUARDED {
        if let Ok(meta) = dir.join(name).symlink_metadata()
            && meta.file_type().is_symlink()
        {
            return Err(io::Error::other("a guarded entry is a symbolic link"));
        }
    }
    for (name, folder) in CREATED {
        let path = dir.join(name);
        match path.symlink_metadata() {
            Ok(meta) if meta.file_type().is_symlink() || meta.is_dir() != *folder => {
                return Err(io::Error::other("a guarded entry is of another kind"));
            }
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if *folder {
                    fs::create_dir(&path)?;
                } else {
                    fs::OpenOptions::new()
                        .write(true)
                        .create_new(true)
                        .open(&path)?;
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The repositories under `modules` (a submodule's name may hold
/// slashes: `modules/lib/a`), not entered further once one is found.
fn repositories_under(modules: &Path, depth: usize) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![(modules.to_path_buf(), 0usize)];
    while let Some((dir, level)) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let path = entry.path();
            if path.join("HEAD").is_file() {
                found.push(path);
            } else if level + depth < MAX_NESTING {
                stack.push((path, level + 1));
            }
        }
    }
    found.sort();
    found
}

/// What the repository's config names that git would run or read config
/// from: `core.hooksPath` (relative to the work tree) and the paths of
/// `include.path` and `includeIf.*.path` (relative to the config's
/// folder), those that exist.
fn named_by_config(dir: &Path, work_tree: Option<&Path>) -> Vec<PathBuf> {
    let Ok(text) = fs::read(dir.join("config")) else {
        return Vec::new();
    };
    let text = String::from_utf8_lossy(&text);
    let mut found = Vec::new();
    for (key, value) in config_entries(&text) {
        let base = if key == "core.hookspath" {
            work_tree.unwrap_or(dir)
        } else if key == "include.path" || (key.starts_with("includeif.") && key.ends_with(".path"))
        {
            dir
        } else {
            continue;
        };
        let folder = key == "core.hookspath";
        let path = match value.strip_prefix("~/") {
            Some(rest) => match std::env::var_os("HOME") {
                Some(home) => PathBuf::from(home).join(rest),
                None => continue,
            },
            None => base.join(&value),
        };
        if path.symlink_metadata().is_ok() {
            found.push(path);
            continue;
        }
        // Missing: a command could create it (a hooks folder, an included
        // config). Created empty beneath its base when the name stays
        // beneath it, else its nearest existing ancestor is guarded.
        let relative = Path::new(&value);
        let beneath = !value.starts_with("~/")
            && relative
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)));
        if beneath && create_beneath(base, relative, folder).is_ok() {
            found.push(path);
        } else if let Some(ancestor) = path.ancestors().skip(1).find(|a| a.exists())
            && let (Ok(ancestor), Ok(home)) = (
                fs::canonicalize(ancestor),
                fs::canonicalize(work_tree.unwrap_or(dir)),
            )
            && ancestor.starts_with(&home)
        {
            // Only inside the repository's own tree: outside it, what is
            // not a writable root is read-only for commands anyway.
            found.push(ancestor);
        }
    }
    found
}

/// Creates `relative` (plain names only) beneath `base`, a folder or an
/// empty file, one name at a time from an open folder, never following a
/// symbolic link (one in the way fails the creation).
fn create_beneath(base: &Path, relative: &Path, folder: bool) -> io::Result<()> {
    use rustix::fs::{CWD, Mode, OFlags, mkdirat, openat};
    use rustix::io::Errno;
    let step = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut dir = openat(CWD, base, step, Mode::empty())?;
    let names: Vec<_> = relative.components().map(|c| c.as_os_str()).collect();
    for (i, name) in names.iter().enumerate() {
        if i + 1 == names.len() && !folder {
            let create =
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            return openat(&dir, *name, create, Mode::from_raw_mode(0o644))
                .map(drop)
                .map_err(io::Error::from);
        }
        match mkdirat(&dir, *name, Mode::from_raw_mode(0o755)) {
            Ok(()) | Err(Errno::EXIST) => {}
            Err(e) => return Err(e.into()),
        }
        dir = openat(&dir, *name, step, Mode::empty())?;
    }
    Ok(())
}

/// The `section.key` (lower case; a subsection kept as written between
/// its quotes, e.g. `includeif.gitdir:~/w/.path`) and value of each entry
/// of a git config file; values unquoted, comments dropped.
fn config_entries(text: &str) -> Vec<(String, String)> {
    let mut entries = Vec::new();
    let mut section = String::new();
    for line in text.lines() {
        let mut rest = line.trim_start();
        if let Some(header) = rest.strip_prefix('[') {
            let Some(end) = header.find(']') else {
                continue;
            };
            let inside = &header[..end];
            section = match inside.split_once(char::is_whitespace) {
                Some((name, sub)) => format!(
                    "{}.{}",
                    name.to_ascii_lowercase(),
                    sub.trim().trim_matches('"')
                ),
                None => inside.to_ascii_lowercase(),
            };
            rest = header[end + 1..].trim_start();
            if rest.is_empty() {
                continue;
            }
        }
        if rest.starts_with('#') || rest.starts_with(';') || rest.is_empty() {
            continue;
        }
        let (key, value) = match rest.split_once('=') {
            Some((key, value)) => (key.trim(), value_of(value)),
            None => (rest.trim(), String::new()),
        };
        entries.push((format!("{section}.{}", key.to_ascii_lowercase()), value));
    }
    entries
}

/// A config value: quotes removed, a comment outside them dropped, `\"`
/// and `\\` unescaped.
fn value_of(raw: &str) -> String {
    let mut value = String::new();
    let mut quoted = false;
    let mut chars = raw.trim().chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '\\' => {
                if let Some(next) = chars.next() {
                    value.push(match next {
                        'n' => '\n',
                        't' => '\t',
                        other => other,
                    });
                }
            }
            '#' | ';' if !quoted => break,
            c => value.push(c),
        }
    }
    value.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repository(dir: &Path) {
        fs::create_dir_all(dir.join("objects")).unwrap();
        fs::create_dir_all(dir.join("refs/heads")).unwrap();
        fs::write(dir.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        fs::write(dir.join("config"), "[core]\n\tbare = false\n").unwrap();
    }

    #[test]
    fn a_repository_guards_what_runs_code_and_creates_what_is_missing() {
        let root = tempfile::tempdir().unwrap();
        let git = root.path().join(".git");
        repository(&git);
        let guards = repository_guards(&git);
        let names: Vec<String> = guards
            .iter()
            .map(|p| p.strip_prefix(&git).unwrap().display().to_string())
            .collect();
        assert_eq!(
            names,
            [
                "config",
                "config.worktree",
                "hooks",
                "info",
                "modules",
                "worktrees"
            ]
        );
        assert!(git.join("hooks").is_dir() && git.join("config.worktree").is_file());
        assert!(
            !guards
                .iter()
                .any(|p| p.ends_with("objects") || p.ends_with("HEAD"))
        );
    }

    #[test]
    fn submodules_and_worktrees_are_guarded_inside_and_their_folders_read_only() {
        let root = tempfile::tempdir().unwrap();
        let git = root.path().join(".git");
        repository(&git);
        repository(&git.join("modules/lib/a"));
        let wt = git.join("worktrees/feature");
        fs::create_dir_all(&wt).unwrap();
        fs::write(wt.join("commondir"), "../..\n").unwrap();
        fs::write(wt.join("gitdir"), "/elsewhere/.git\n").unwrap();
        let guards = repository_guards(&git);
        for path in [
            git.join("modules"),
            git.join("modules/lib/a/config"),
            git.join("modules/lib/a/hooks"),
            git.join("worktrees"),
            wt.join("commondir"),
            wt.join("gitdir"),
        ] {
            assert!(
                guards.contains(&path),
                "{} not in {guards:?}",
                path.display()
            );
        }
        let modules = guards.iter().position(|p| *p == git.join("modules"));
        let inner = guards
            .iter()
            .position(|p| *p == git.join("modules/lib/a/config"));
        assert!(modules < inner);
        assert!(!guards.contains(&git.join("modules/lib/a")));
    }

    #[test]
    fn a_link_or_a_folder_without_head_is_guarded_whole() {
        let root = tempfile::tempdir().unwrap();
        let git = root.path().join(".git");
        fs::create_dir(&git).unwrap();
        assert_eq!(repository_guards(&git), vec![git.clone()]);
        repository(&git);
        std::os::unix::fs::symlink("/etc", git.join("hooks")).unwrap();
        assert_eq!(repository_guards(&git), vec![git.clone()]);
        assert!(!git.join("info").exists() || git.join("info").is_dir());
    }

    #[test]
    fn a_link_where_a_missing_entry_would_be_created_is_not_followed() {
        let root = tempfile::tempdir().unwrap();
        let git = root.path().join(".git");
        repository(&git);
        let target = root.path().join("target");
        std::os::unix::fs::symlink(&target, git.join("config.worktree")).unwrap();
        assert_eq!(repository_guards(&git), vec![git.clone()]);
        assert!(!target.exists());
    }

    #[test]
    fn the_hooks_path_and_includes_the_config_names_are_guarded() {
        let root = tempfile::tempdir().unwrap();
        let git = root.path().join(".git");
        repository(&git);
        fs::create_dir(root.path().join(".husky")).unwrap();
        fs::write(root.path().join("shared.gitconfig"), "").unwrap();
        fs::write(
            git.join("config"),
            "[core]\n\thooksPath = .husky ; husky\n[include]\n\tpath = \"../shared.gitconfig\"\n\
             [includeIf \"gitdir:~/w/\"]\n\tpath = missing\n",
        )
        .unwrap();
        let guards = repository_guards(&git);
        assert!(guards.contains(&root.path().join(".husky")), "{guards:?}");
        assert!(
            guards.contains(&git.join("../shared.gitconfig")),
            "{guards:?}"
        );
        // A missing include is created empty, and guarded.
        assert!(guards.iter().any(|p| p.ends_with("missing")), "{guards:?}");
        assert!(git.join("missing").is_file());
    }

    #[test]
    fn a_missing_hooks_path_is_created_but_never_through_a_link() {
        let root = tempfile::tempdir().unwrap();
        let git = root.path().join(".git");
        repository(&git);
        let elsewhere = root.path().join("elsewhere");
        fs::create_dir(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, root.path().join(".husky")).unwrap();
        fs::write(
            git.join("config"),
            "[core]\n\thooksPath = .husky/_\n[include]\n\tpath = ../../outside.cfg\n",
        )
        .unwrap();
        let guards = repository_guards(&git);
        assert!(!elsewhere.join("_").exists(), "created through the link");
        // What could not be created is guarded by its nearest ancestor in
        // the repository's tree (the link's target); the include outside
        // the tree is left to the read-only tree.
        assert!(guards.contains(&elsewhere), "{guards:?}");
        assert!(
            !guards.iter().any(|p| !p.starts_with(root.path())),
            "{guards:?}"
        );
        let plain = tempfile::tempdir().unwrap();
        let git = plain.path().join(".git");
        repository(&git);
        fs::write(git.join("config"), "[core]\n\thooksPath = .githooks/x\n").unwrap();
        let guards = repository_guards(&git);
        assert!(plain.path().join(".githooks/x").is_dir());
        assert!(
            guards.contains(&plain.path().join(".githooks/x")),
            "{guards:?}"
        );
    }

    #[test]
    fn config_entries_read_sections_subsections_and_quotes() {
        let entries = config_entries(
            "# c\n[Core]\n  HooksPath = \"a b\" # x\n[includeIf \"gitdir:/w/\"] path = p\nbare\n",
        );
        assert_eq!(
            entries,
            [
                ("core.hookspath".to_owned(), "a b".to_owned()),
                ("includeif.gitdir:/w/.path".to_owned(), "p".to_owned()),
                ("includeif.gitdir:/w/.bare".to_owned(), String::new()),
            ]
        );
    }
}
