//! Repositories a confined command makes and links into a root's
//! repository. A command may create `sub/.git` with a config of its own
//! (no mount can stop a new folder), and since the index is writable it
//! can stage `sub` as a gitlink: an unconfined `git status` in the root
//! then looks into `sub` as a submodule and runs what its config names
//! (`core.fsmonitor`). After each command whose root index changed, the
//! gitlinks are listed; a linked repository not known before is reported
//! in the command's result and protected (its config, hooks, …) for the
//! commands after it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::SystemTime;

/// The repositories known to the sandbox, and those found since it was
/// built (protected for later commands).
#[derive(Debug, Default)]
pub(crate) struct NestedRepos {
    /// The roots that were repositories when the sandbox was built (git
    /// runs only on those: a `.git` a command made has a config of its
    /// making).
    roots: Vec<PathBuf>,
    known: Mutex<Vec<PathBuf>>,
    found: Mutex<Vec<PathBuf>>,
}

/// The state of each root repository's index before a command.
#[derive(Debug, Clone)]
pub struct IndexMark(Vec<(PathBuf, Option<(SystemTime, u64)>)>);

fn index_state(root: &Path) -> Option<(SystemTime, u64)> {
    let meta = std::fs::metadata(root.join(".git/index")).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

impl NestedRepos {
    /// Knowing the `.git` entries of `protected` (found when the sandbox
    /// was built), watching those of `roots` that are repositories now.
    pub(crate) fn new(roots: &[PathBuf], protected: &[PathBuf]) -> Self {
        let roots = roots
            .iter()
            .filter(|r| r.join(".git/HEAD").is_file())
            .cloned()
            .collect();
        let known = protected
            .iter()
            .filter(|p| p.file_name().is_some_and(|n| n == ".git"))
            .cloned()
            .collect();
        NestedRepos {
            roots,
            known: Mutex::new(known),
            found: Mutex::new(Vec::new()),
        }
    }

    /// The `.git` entries found after the build, to protect.
    #[cfg(all(target_os = "linux", feature = "sandbox"))]
    pub(crate) fn found(&self) -> Vec<PathBuf> {
        self.found
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Where each watched root's index stands now.
    pub(crate) fn mark(&self) -> IndexMark {
        IndexMark(
            self.roots
                .iter()
                .map(|r| (r.clone(), index_state(r)))
                .collect(),
        )
    }

    /// The repositories (their `.git`) that a root's index, changed since
    /// `mark`, now links to and that were not known: each is remembered
    /// and protected from the next command on.
    pub(crate) fn new_since(&self, mark: &IndexMark) -> Vec<PathBuf> {
        let mut new = Vec::new();
        for (root, before) in &mark.0 {
            let now = index_state(root);
            if now.is_none() || now == *before {
                continue;
            }
            for link in gitlinks(root) {
                let git = root.join(&link).join(".git");
                if git.symlink_metadata().is_err() {
                    continue;
                }
                let mut known = self
                    .known
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                if known.contains(&git) {
                    continue;
                }
                known.push(git.clone());
                self.found
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push(git.clone());
                new.push(git);
            }
        }
        new
    }
}

/// The paths of `root`'s index entries that are gitlinks (mode 160000),
/// by `git ls-files --stage`, which neither recurses into submodules nor
/// runs hooks; the repository's config is the user's (it is read-only for
/// commands), its fsmonitor is turned off for this call.
fn gitlinks(root: &Path) -> Vec<PathBuf> {
    let Ok(out) = Command::new("git")
        .args(["-c", "core.fsmonitor=false", "ls-files", "--stage", "-z"])
        .current_dir(root)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
    else {
        return Vec::new();
    };
    out.stdout
        .split(|b| *b == 0)
        .filter_map(|entry| {
            let entry = std::str::from_utf8(entry).ok()?;
            let (meta, path) = entry.split_once('\t')?;
            meta.starts_with("160000 ").then(|| PathBuf::from(path))
        })
        .collect()
}

/// The line a command's result ends with for a repository it linked.
pub(crate) fn warning(git: &Path) -> String {
    format!(
        "(sandboxed: this command made the git repository {} and staged it as a submodule; \
         git run outside the sandbox in this repository reads its config: check it before \
         running git unconfined)",
        git.display()
    )
}
