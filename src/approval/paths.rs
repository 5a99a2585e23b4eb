//! Turning a path as the model wrote it into the forms rules match.

use std::fs;
use std::path::{Component, Path, PathBuf};

use super::rule::PathKeys;

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

/// The path with symlinks resolved in its longest existing prefix, the rest
/// appended (a file about to be created).
fn canonical_prefix(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(canonical) = fs::canonicalize(&existing) {
            let mut out = canonical;
            for name in rest.iter().rev() {
                out.push(name);
            }
            return normalize(&out);
        }
        match (
            existing.file_name().map(|n| n.to_os_string()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}
