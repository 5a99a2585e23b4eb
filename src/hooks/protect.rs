//! The hooks' own files. Hooks run outside any sandbox, with the session's
//! whole environment: a model that could rewrite a hook script would have
//! its code run at the next call. So a call that writes into the
//! workspace's `.claude/` folder, or to a file a hook command names, asks
//! (except in bypass mode), like a protected path.

use std::path::{Path, PathBuf};

use super::config::HookConfig;
use super::input::absolute;
use crate::access::{Access, Capability};

/// The files of the configured hooks.
#[derive(Clone, Debug, Default)]
pub(crate) struct HookFiles {
    /// The workspace's `.claude` folder, as written and as resolved.
    folders: Vec<PathBuf>,
    /// Files the hook commands name, as written and as resolved.
    files: Vec<PathBuf>,
}

impl HookFiles {
    pub(crate) fn new(config: &HookConfig, root: &Path) -> Self {
        let mut folders = vec![root.join(".claude")];
        folders.extend(resolved(&root.join(".claude")));
        let root_text = root.to_string_lossy();
        let mut files = Vec::new();
        for hook in config.commands() {
            for word in hook.command.split_whitespace() {
                let word: String = word.chars().filter(|c| !matches!(c, '"' | '\'')).collect();
                let word = [
                    "${CLAUDE_PROJECT_DIR}",
                    "$CLAUDE_PROJECT_DIR",
                    "${AGENTCORE_PROJECT_DIR}",
                    "$AGENTCORE_PROJECT_DIR",
                ]
                .iter()
                .fold(word, |w, var| w.replace(var, &root_text));
                if !word.contains('/') {
                    continue;
                }
                let path = absolute(Path::new(&word), root);
                if path.is_file() {
                    files.extend(resolved(&path));
                    files.push(path);
                }
            }
        }
        Self { folders, files }
    }

    /// The `.claude` folder and the hook scripts, as written and resolved.
    pub(crate) fn paths(&self) -> impl Iterator<Item = &PathBuf> {
        self.folders.iter().chain(&self.files)
    }

    /// The hook file a call that touches `access` would change, if any.
    pub(crate) fn touched(&self, access: &Access, root: &Path) -> Option<PathBuf> {
        if access.capability != Capability::Write {
            return None;
        }
        access.paths.iter().find_map(|path| {
            let path = absolute(Path::new(path), root);
            let mut seen = vec![path.clone()];
            seen.extend(resolved(&path));
            seen.iter()
                .any(|p| {
                    self.files.iter().any(|f| f == p)
                        || self.folders.iter().any(|d| p.starts_with(d))
                })
                .then_some(path)
        })
    }
}

/// `path` with its symbolic links resolved: the whole path if it exists,
/// else its parent's and its name.
fn resolved(path: &Path) -> Option<PathBuf> {
    if let Ok(real) = path.canonicalize() {
        return Some(real);
    }
    let parent = path.parent()?.canonicalize().ok()?;
    Some(parent.join(path.file_name()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_to_the_claude_folder_and_to_named_scripts_are_hook_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("scripts")).unwrap();
        std::fs::write(root.join("scripts/fmt.sh"), "").unwrap();
        let config = HookConfig::from_settings_json(
            r#"{"hooks": {"PostToolUse": [{"hooks": [
                {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/scripts/fmt.sh --check"}
            ]}]}}"#,
        )
        .unwrap();
        let files = HookFiles::new(&config, &root);
        let write = |p: &str| Access::write([p]);
        assert!(files.touched(&write("scripts/fmt.sh"), &root).is_some());
        assert!(
            files
                .touched(&write("./scripts/../scripts/fmt.sh"), &root)
                .is_some()
        );
        assert!(
            files
                .touched(&write(".claude/settings.json"), &root)
                .is_some()
        );
        assert!(
            files
                .touched(&write(".claude/hooks/new.sh"), &root)
                .is_some()
        );
        assert!(files.touched(&write("scripts/other.sh"), &root).is_none());
        assert!(
            files
                .touched(&Access::read(["scripts/fmt.sh"]), &root)
                .is_none()
        );
    }
}
