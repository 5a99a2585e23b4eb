//! Turning a path as the model wrote it into the forms rules match.

use std::fs;
use std::path::{Component, Path, PathBuf};

use super::rule::PathKeys;
use crate::fs::judged::{JudgedPath, final_target};

/// The workspace root in its given and canonical forms.
#[derive(Clone, Debug)]
pub(crate) struct PathResolver {
    /// The root as given (relative paths start here).
    root: PathBuf,
    /// The given and the canonical root, deduplicated.
    roots: Vec<PathBuf>,
}

impl PathResolver {
    pub(crate) fn new(root: &Path) -> Self {
        let root = absolute(root);
        let mut roots = vec![root.clone()];
        if let Ok(canonical) = fs::canonicalize(&root)
            && canonical != root
        {
            roots.push(canonical);
        }
        Self { root, roots }
    }

    /// The absolute, lexically normalized form of `given`.
    pub(crate) fn lexical(&self, given: &Path) -> PathBuf {
        normalize(&self.root.join(given))
    }

    /// The forms of `given`: lexical and (when `resolve`) through symlinks.
    pub(crate) fn keys(&self, given: &Path, resolve: bool) -> PathKeys {
        let lexical = self.lexical(given);
        let mut forms = vec![lexical.clone()];
        let mut is_dir = false;
        if resolve {
            let canonical = canonical_prefix(&lexical);
            is_dir = canonical.is_dir();
            if canonical != lexical {
                forms.push(canonical);
            }
        }
        self.keys_of(&forms, is_dir)
    }

    /// `given` resolved once, for a call being judged: its forms for deny
    /// and ask rules and protected paths (lexical and final target), the
    /// forms of its final target alone for allow rules, and the
    /// [`JudgedPath`] the tool will act on.
    pub(crate) fn judge(&self, given: &str) -> (PathKeys, PathKeys, JudgedPath) {
        let lexical = self.lexical(Path::new(given));
        let judged = JudgedPath::resolve(&self.root, given);
        let is_dir = judged
            .target
            .as_deref()
            .is_some_and(|target| target.is_dir());
        let mut forms = vec![lexical];
        let target_keys = match &judged.target {
            Some(target) => {
                if !forms.contains(target) {
                    forms.push(target.clone());
                }
                self.keys_of(std::slice::from_ref(target), is_dir)
            }
            // Unresolvable: no allow rule can match it.
            None => PathKeys {
                is_dir,
                ..PathKeys::default()
            },
        };
        (self.keys_of(&forms, is_dir), target_keys, judged)
    }

    /// The final target of `given` relative to the root if inside it
    /// (`false`), else absolute, as rules name paths; the lexical form when
    /// it cannot be resolved.
    pub(crate) fn target_display_key(&self, given: &Path) -> (String, bool) {
        match final_target(&self.lexical(given)) {
            Ok(target) => self.display_key(&target),
            Err(_) => self.display_key(given),
        }
    }

    /// The forms of an already absolute path whose kind is known.
    pub(crate) fn keys_of(&self, forms: &[PathBuf], is_dir: bool) -> PathKeys {
        let mut keys = PathKeys {
            is_dir,
            ..PathKeys::default()
        };
        for form in forms {
            for root in &self.roots {
                if let Ok(rel) = form.strip_prefix(root) {
                    keys.relative.push(rel.to_path_buf());
                }
            }
            if let Ok(abs) = form.strip_prefix("/") {
                keys.absolute.push(abs.to_path_buf());
            }
        }
        keys
    }

    /// `path` relative to the root if inside it (`true`), else absolute.
    pub(crate) fn display_key(&self, given: &Path) -> (String, bool) {
        let lexical = self.lexical(given);
        for root in &self.roots {
            if let Ok(rel) = lexical.strip_prefix(root) {
                return (rel.to_string_lossy().into_owned(), false);
            }
        }
        let abs = lexical.strip_prefix("/").unwrap_or(&lexical);
        (abs.to_string_lossy().into_owned(), true)
    }

    /// The root as given, made absolute.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }
}

fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        normalize(path)
    } else {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        normalize(&cwd.join(path))
    }
}

/// `.` and `..` removed without touching the file system (`..` at the
/// top stays at `/`).
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The path with every symlink followed to its final target, dangling
/// links included ([`final_target`], the resolution the tools act on); the
/// path as it is when it cannot be resolved (a loop: the tools refuse it).
fn canonical_prefix(path: &Path) -> PathBuf {
    final_target(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The largest `.git` or `commondir` file read; git itself refuses a
/// `.git` file over 1 MiB.
const MAX_GIT_POINTER_BYTES: u64 = 1 << 20;

/// A git directory that a file in the workspace points to: a `.git` *file*
/// (`gitdir: <dir>`, as linked worktrees and submodules have) or a git
/// directory's `commondir` file. Git reads its configuration (and so the
/// commands it runs, such as `core.fsmonitor`) from there, so what lies
/// under `target` is as sensitive as `.git/` itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GitPointer {
    /// The file that names the directory (absolute).
    pub file: PathBuf,
    /// The directory it names, absolute and lexically normalized.
    pub target: PathBuf,
    /// `target` and, where it (or a prefix of it) exists, its form with
    /// symlinks resolved.
    pub forms: Vec<PathBuf>,
}

impl GitPointer {
    /// Whether `path` (absolute) is the target or lies beneath it.
    pub(crate) fn covers(&self, path: &Path) -> bool {
        self.forms.iter().any(|form| path.starts_with(form))
    }
}

impl PathResolver {
    /// The git directories pointed to from the directories where git would
    /// look for a repository when working on `path` (absolute forms of one
    /// path): every ancestor of each form, the root and every ancestor of
    /// the root. In each such directory `D`, a regular file `D/.git` holding
    /// `gitdir: X` points to `X` (relative to `D`), and a `commondir` file
    /// in `X` or in a directory `D/.git` points further.
    ///
    /// One `stat` per directory, a read only where such a file exists; a
    /// FIFO or other special file named `.git` is never opened.
    pub(crate) fn git_pointers(&self, forms: &[PathBuf]) -> Vec<GitPointer> {
        let mut dirs = std::collections::BTreeSet::new();
        for start in forms
            .iter()
            .map(PathBuf::as_path)
            .chain(self.roots.iter().map(PathBuf::as_path))
        {
            // The path itself too: it may be a directory git is run in.
            for dir in start.ancestors() {
                dirs.insert(dir.to_path_buf());
            }
        }
        let mut pointers = Vec::new();
        for dir in dirs {
            let dot_git = dir.join(".git");
            let Ok(meta) = fs::metadata(&dot_git) else {
                continue;
            };
            let gitdirs = if meta.is_file() {
                let targets = read_pointer(&dot_git)
                    .map(|text| gitdir_targets(&text, &dir))
                    .unwrap_or_default();
                for target in &targets {
                    pointers.push(pointer(&dot_git, target.clone()));
                }
                targets
            } else if meta.is_dir() {
                // A symlink named `.git` makes its target the git directory.
                if fs::symlink_metadata(&dot_git).is_ok_and(|m| m.file_type().is_symlink())
                    && let Ok(target) = fs::canonicalize(&dot_git)
                {
                    pointers.push(pointer(&dot_git, target));
                }
                vec![dot_git.clone()]
            } else {
                Vec::new()
            };
            for gitdir in gitdirs {
                let commondir = gitdir.join("commondir");
                if let Some(text) = read_pointer(&commondir) {
                    for target in path_targets(&text, &gitdir) {
                        pointers.push(pointer(&commondir, target));
                    }
                }
            }
        }
        pointers
    }
}

fn pointer(file: &Path, target: PathBuf) -> GitPointer {
    let mut forms = vec![target.clone()];
    let canonical = canonical_prefix(&target);
    if canonical != target {
        forms.push(canonical);
    }
    GitPointer {
        file: file.to_path_buf(),
        target,
        forms,
    }
}

/// The text of a small regular file, opened without blocking (a FIFO
/// swapped in after the `stat` cannot hang the caller); `None` if it is
/// missing, not a regular file, too large or unreadable.
fn read_pointer(path: &Path) -> Option<String> {
    use std::io::Read;
    let meta = fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_GIT_POINTER_BYTES {
        return None;
    }
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(MAX_GIT_POINTER_BYTES)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The directories a `.git` file's text names, relative to `dir` (where
/// the file is): git takes everything after `gitdir: ` up to the trailing
/// line ends. The form with all trailing white space trimmed is added too,
/// so a reader that trims more is covered as well. Text without the
/// `gitdir: ` prefix names nothing (git refuses such a file).
pub(crate) fn gitdir_targets(text: &str, dir: &Path) -> Vec<PathBuf> {
    match text.strip_prefix("gitdir: ") {
        Some(rest) => path_targets(rest, dir),
        None => Vec::new(),
    }
}

/// The path a pointer file's text names (relative to `dir`), with line
/// ends trimmed as git does, and with all trailing white space trimmed.
fn path_targets(text: &str, dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for trimmed in [text.trim_end_matches(['\n', '\r']), text.trim_end()] {
        if trimmed.is_empty() || trimmed.contains('\0') {
            continue;
        }
        let target = normalize(&dir.join(trimmed));
        if !out.contains(&target) {
            out.push(target);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gitdir_text_is_read_as_git_reads_it() {
        let dir = Path::new("/ws/sub");
        assert_eq!(
            gitdir_targets("gitdir: evil\n", dir),
            vec![PathBuf::from("/ws/sub/evil")]
        );
        assert_eq!(
            gitdir_targets("gitdir: ../evil\r\n", dir),
            vec![PathBuf::from("/ws/evil")]
        );
        assert_eq!(
            gitdir_targets("gitdir: /abs/dir", dir),
            vec![PathBuf::from("/abs/dir")]
        );
        // Trailing spaces are part of the name for git; both are covered.
        assert_eq!(
            gitdir_targets("gitdir: evil \n", dir),
            vec![
                PathBuf::from("/ws/sub/evil "),
                PathBuf::from("/ws/sub/evil")
            ]
        );
        assert!(gitdir_targets("not a pointer", dir).is_empty());
        assert!(gitdir_targets("gitdir: \n", dir).is_empty());
    }

    #[test]
    fn pointers_are_found_at_the_path_s_ancestors_and_the_root() {
        let ws = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(ws.path()).unwrap();
        fs::create_dir_all(root.join("a/b")).unwrap();
        fs::write(root.join(".git"), "gitdir: evil\n").unwrap();
        fs::write(root.join("a/.git"), "gitdir: ../other\n").unwrap();
        fs::create_dir_all(root.join("evil")).unwrap();
        fs::write(root.join("evil/commondir"), "../common\n").unwrap();
        let resolver = PathResolver::new(&root);
        let pointers = resolver.git_pointers(&[root.join("a/b/file.txt")]);
        let targets: Vec<&Path> = pointers.iter().map(|p| p.target.as_path()).collect();
        assert!(
            targets.contains(&root.join("evil").as_path()),
            "{targets:?}"
        );
        assert!(
            targets.contains(&root.join("other").as_path()),
            "{targets:?}"
        );
        assert!(
            targets.contains(&root.join("common").as_path()),
            "{targets:?}"
        );
        // A path elsewhere still sees the root's pointer (git run in the root).
        let pointers = resolver.git_pointers(&[PathBuf::from("/tmp/x")]);
        assert!(pointers.iter().any(|p| p.covers(&root.join("evil/config"))));
        assert!(!pointers.iter().any(|p| p.target == root.join("other")));
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_named_git_points_to_its_target() {
        let ws = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(ws.path()).unwrap();
        fs::create_dir_all(root.join("real/refs")).unwrap();
        std::os::unix::fs::symlink("real", root.join(".git")).unwrap();
        let resolver = PathResolver::new(&root);
        let pointers = resolver.git_pointers(&[root.join("real/config")]);
        assert!(
            pointers.iter().any(|p| p.covers(&root.join("real/config"))),
            "{pointers:?}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_named_git_is_not_opened() {
        let ws = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(ws.path()).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(root.join(".git"))
            .status()
            .unwrap();
        assert!(made.success());
        let resolver = PathResolver::new(&root);
        assert!(resolver.git_pointers(&[root.join("x")]).is_empty());
    }
}
