//! [`ReadFilter`]: read-deny rules for the search tools' results.

use std::fmt;
use std::fs;
use std::path::Path;
use std::sync::Arc;

use super::paths::PathResolver;
use super::rule::Rule;

/// The `read(…)` deny rules of a policy, for tools that list or search many
/// files (glob, grep, ls): a denied file is left out of their results, and
/// a denied directory is not descended into.
///
/// The gate already denies a search *rooted* inside a denied path; this is
/// for what a search rooted elsewhere walks over. Cheap to clone; get one
/// from [`ApprovalEngine::read_filter`](super::ApprovalEngine::read_filter).
///
/// ```
/// use std::path::Path;
/// use agentcore::approval::{ApprovalEngine, Policy};
///
/// let root = std::env::temp_dir();
/// let policy = Policy::from_toml(r#"deny = ["read(./secrets/**)"]"#).unwrap();
/// let filter = ApprovalEngine::new(&root).with_policy(&policy).read_filter();
/// assert!(filter.is_denied(&root.join("secrets/key.pem")));
/// assert!(!filter.is_denied(&root.join("src/main.rs")));
/// ```
#[derive(Clone)]
pub struct ReadFilter {
    resolver: Arc<PathResolver>,
    rules: Arc<[Rule]>,
}

impl ReadFilter {
    pub(crate) fn new(resolver: Arc<PathResolver>, rules: Vec<Rule>) -> Self {
        Self {
            resolver,
            rules: rules.into(),
        }
    }

    /// A filter that denies nothing.
    pub fn none() -> Self {
        Self::new(Arc::new(PathResolver::new(Path::new("/"))), Vec::new())
    }

    /// True when there are no read-deny rules: a tool may skip the checks.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Whether a read-deny rule covers `path` (absolute, or relative to the
    /// workspace root). One `lstat`; a symlink is also judged by its
    /// target. For a directory, true means skip it and everything in it.
    pub fn is_denied(&self, path: &Path) -> bool {
        if self.rules.is_empty() {
            return false;
        }
        let meta = fs::symlink_metadata(self.resolver.lexical(path));
        let symlink = meta.as_ref().is_ok_and(|m| m.file_type().is_symlink());
        let keys = if symlink {
            self.resolver.keys(path, true)
        } else {
            let is_dir = meta.as_ref().is_ok_and(fs::Metadata::is_dir);
            self.resolver
                .keys_of(&[self.resolver.lexical(path)], is_dir)
        };
        self.rules
            .iter()
            .any(|rule| rule.matches_path(&keys) == Some(true))
    }
}

impl Default for ReadFilter {
    fn default() -> Self {
        Self::none()
    }
}

impl fmt::Debug for ReadFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.rules.iter().map(Rule::as_str))
            .finish()
    }
}
