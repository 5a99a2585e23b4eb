//! The `[sandbox]` table of the policy file, and the sandbox a session
//! builds from it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Feature, Sandbox, SandboxBuilder, SandboxError, SandboxLimits, SandboxMode};

/// The `[sandbox]` table of the policy file:
///
/// ```toml
/// [sandbox]
/// mode = "auto"          # "auto" | "required" | "off" (default "auto")
/// network = false        # commands get the network (default false)
/// writable = ["~/.cargo/registry", "~/.cargo/git", "~/.cache"]
/// hidden = ["~/work/other-client"]
/// protected = ["Makefile", ".github"]   # read-only for commands
/// auto_allow = true      # a fully confined command needs no approval (default true)
///
/// [sandbox.limits]       # what each command may consume; "off" turns one off
/// memory = "8G"
/// processes = 1024
/// cpu_seconds = 3600
/// tmp_size = "2G"
/// file_size = "16G"
/// ```
///
/// Paths are absolute, `~/…`, or relative to the workspace root. The
/// workspace's read-write roots are always writable, and the read-deny
/// rules of the policy are hidden besides `hidden`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SandboxPolicy {
    /// How much confinement to insist on.
    pub mode: SandboxMode,
    /// Whether commands get the network.
    pub network: bool,
    /// Paths commands may write under, besides the workspace's read-write
    /// roots and the session's temporary directory. Entries that do not
    /// exist when the session starts are skipped.
    pub writable: Vec<PathBuf>,
    /// Paths that appear empty to commands, besides the default credential
    /// stores and the read-deny rules.
    pub hidden: Vec<PathBuf>,
    /// Paths commands cannot change even under a writable root, besides
    /// `.git` and existing `.env*` files (those that exist when a command
    /// starts are made read-only for it).
    pub protected: Vec<PathBuf>,
    /// In the `default` and `accept-edits` modes, a command that runs fully
    /// confined is allowed without asking unless a deny or ask rule
    /// matches it.
    pub auto_allow: bool,
    /// Behave as if this machine lacked these kernel features: for
    /// diagnosis and tests (what `required` says, what `auto` still
    /// enforces).
    pub assume_missing: Vec<Feature>,
    /// The `[sandbox.limits]` table: what each command may consume (see
    /// [`SandboxLimits`] for the defaults and why).
    pub limits: SandboxLimits,
}

impl Default for SandboxPolicy {
    fn default() -> Self {
        Self {
            mode: SandboxMode::Auto,
            network: false,
            writable: Vec::new(),
            hidden: Vec::new(),
            protected: Vec::new(),
            auto_allow: true,
            assume_missing: Vec::new(),
            limits: SandboxLimits::default(),
        }
    }
}

impl SandboxPolicy {
    /// No sandbox: commands run with the user's authority, as without one.
    pub fn off() -> Self {
        Self {
            mode: SandboxMode::Off,
            ..Self::default()
        }
    }

    /// The builder for a workspace at `root` whose commands may write under
    /// `writable_roots` (the workspace's read-write roots), hiding `hidden`
    /// besides the table's own list (e.g. what read-deny rules cover).
    /// Relative entries are taken from `root`, `~/…` from `$HOME`;
    /// `writable` entries that do not exist are left out.
    pub fn builder(
        &self,
        root: &Path,
        writable_roots: impl IntoIterator<Item = PathBuf>,
        hidden: impl IntoIterator<Item = PathBuf>,
        protected: impl IntoIterator<Item = PathBuf>,
    ) -> SandboxBuilder {
        let extra_writable = self
            .writable
            .iter()
            .map(|p| resolve(p, root))
            .filter(|p| p.exists());
        let mut builder = Sandbox::builder()
            .mode(self.mode)
            .network(self.network)
            .limits(self.limits)
            .writable(writable_roots.into_iter().chain(extra_writable))
            .hidden(self.hidden.iter().map(|p| resolve(p, root)).chain(hidden))
            .protected(
                self.protected
                    .iter()
                    .map(|p| resolve(p, root))
                    .chain(protected),
            );
        for feature in &self.assume_missing {
            builder = builder.assume_missing(*feature);
        }
        builder
    }

    /// [`builder`](Self::builder), built.
    ///
    /// # Errors
    ///
    /// As [`SandboxBuilder::build`]: in `required` mode, the missing
    /// feature, e.g. `Landlock is not available (simulated)`.
    pub fn build(
        &self,
        root: &Path,
        writable_roots: impl IntoIterator<Item = PathBuf>,
        hidden: impl IntoIterator<Item = PathBuf>,
        protected: impl IntoIterator<Item = PathBuf>,
    ) -> Result<Sandbox, SandboxError> {
        self.builder(root, writable_roots, hidden, protected)
            .build()
    }
}

/// `~/…` from `$HOME`, relative from `root`, absolute as is.
fn resolve(path: &Path, root: &Path) -> PathBuf {
    if let Ok(rest) = path.strip_prefix("~")
        && let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty())
    {
        return PathBuf::from(home).join(rest);
    }
    root.join(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_parses_with_defaults_and_refuses_unknown_fields() {
        let p: SandboxPolicy = toml::from_str("").unwrap();
        assert_eq!(p, SandboxPolicy::default());
        assert!(p.auto_allow);
        assert_eq!(p.mode, SandboxMode::Auto);
        let p: SandboxPolicy = toml::from_str(
            r#"
            mode = "required"
            network = true
            writable = ["~/.cache", "build"]
            hidden = ["/srv/secrets"]
            protected = ["Makefile"]
            auto_allow = false
            assume_missing = ["landlock", "pid-namespace"]
            "#,
        )
        .unwrap();
        assert_eq!(p.mode, SandboxMode::Required);
        assert!(p.network && !p.auto_allow);
        assert_eq!(
            p.assume_missing,
            vec![Feature::Landlock, Feature::PidNamespace]
        );
        let err = toml::from_str::<SandboxPolicy>("mode = \"strict\"").unwrap_err();
        assert!(
            err.to_string().contains("unknown variant `strict`"),
            "{err}"
        );
        let p: SandboxPolicy =
            toml::from_str("[limits]\nmemory = \"512M\"\nprocesses = \"off\"").unwrap();
        assert_eq!(p.limits.memory, Some(512 << 20));
        assert_eq!(p.limits.processes, None);
        assert_eq!(p.limits.cpu_seconds, SandboxLimits::default().cpu_seconds);
        let err = toml::from_str::<SandboxPolicy>("networks = true").unwrap_err();
        assert!(
            err.to_string().contains("unknown field `networks`"),
            "{err}"
        );
    }

    #[test]
    fn paths_resolve_from_the_root_and_home() {
        let root = Path::new("/w/proj");
        assert_eq!(resolve(Path::new("build"), root), root.join("build"));
        assert_eq!(resolve(Path::new("/abs"), root), PathBuf::from("/abs"));
        if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
            assert_eq!(
                resolve(Path::new("~/.cache"), root),
                PathBuf::from(home).join(".cache")
            );
        }
    }
}
