//! Toolchains a policy names (`[sandbox] toolchains = ["cargo", "npm"]`):
//! the cache folders each writes (made writable for commands) and the
//! hosts it downloads from (added to `allow_domains`), so that a fetch and
//! a build work confined without rewriting the policy.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// A toolchain of `[sandbox] toolchains`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Toolchain {
    /// Rust's cargo: the registry index and crate downloads, git
    /// dependencies' checkouts.
    Cargo,
    /// Node's npm (and `npx`): its cache.
    Npm,
    /// Python's pip: its cache.
    Pip,
    /// Go modules: the module cache and the build cache.
    Go,
}

impl Toolchain {
    /// Every toolchain, in the order `sandbox check --toolchains` lists
    /// them.
    pub const ALL: [Toolchain; 4] = [
        Toolchain::Cargo,
        Toolchain::Npm,
        Toolchain::Pip,
        Toolchain::Go,
    ];

    /// Its name in the policy.
    pub fn name(self) -> &'static str {
        match self {
            Toolchain::Cargo => "cargo",
            Toolchain::Npm => "npm",
            Toolchain::Pip => "pip",
            Toolchain::Go => "go",
        }
    }

    /// The hosts its default registry is served from: the index, the
    /// downloads and, for Go, the checksum database.
    pub fn domains(self) -> &'static [&'static str] {
        match self {
            Toolchain::Cargo => &["crates.io", "index.crates.io", "static.crates.io"],
            Toolchain::Npm => &["registry.npmjs.org"],
            Toolchain::Pip => &["pypi.org", "files.pythonhosted.org"],
            Toolchain::Go => &["proxy.golang.org", "sum.golang.org"],
        }
    }

    /// The cache folders it writes, under `home` (or where its variable,
    /// `CARGO_HOME`, `npm_config_cache`, `PIP_CACHE_DIR`, `GOMODCACHE`,
    /// `GOCACHE`, moves them). Its programs (`~/.cargo/bin`) and its
    /// credentials (`~/.cargo/credentials.toml`, `~/.npmrc`, hidden by
    /// default) are not among them.
    pub fn caches(self, home: &Path) -> Vec<PathBuf> {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        };
        let cache = var("XDG_CACHE_HOME").unwrap_or_else(|| home.join(".cache"));
        match self {
            Toolchain::Cargo => {
                let cargo = var("CARGO_HOME").unwrap_or_else(|| home.join(".cargo"));
                vec![cargo.join("registry"), cargo.join("git")]
            }
            Toolchain::Npm => vec![var("npm_config_cache").unwrap_or_else(|| home.join(".npm"))],
            Toolchain::Pip => vec![var("PIP_CACHE_DIR").unwrap_or_else(|| cache.join("pip"))],
            Toolchain::Go => vec![
                var("GOMODCACHE").unwrap_or_else(|| home.join("go/pkg/mod")),
                var("GOCACHE").unwrap_or_else(|| cache.join("go-build")),
            ],
        }
    }

    /// [`caches`](Self::caches), each created (0700, its parents as
    /// needed) when missing, since only an existing folder can be made
    /// writable; one that cannot be created is left out.
    pub(crate) fn prepared_caches(self, home: &Path) -> Vec<PathBuf> {
        use std::os::unix::fs::DirBuilderExt;
        self.caches(home)
            .into_iter()
            .filter(|dir| {
                dir.is_dir()
                    || std::fs::DirBuilder::new()
                        .recursive(true)
                        .mode(0o700)
                        .create(dir)
                        .is_ok()
            })
            .collect()
    }
}

impl std::fmt::Display for Toolchain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_toolchain_names_caches_under_the_home_and_registry_hosts() {
        let home = Path::new("/h");
        for toolchain in Toolchain::ALL {
            assert!(!toolchain.domains().is_empty());
            for dir in toolchain.caches(home) {
                assert!(dir.is_absolute(), "{toolchain}: {}", dir.display());
                assert!(!dir.ends_with("bin"), "{toolchain}: {}", dir.display());
            }
        }
        assert!(Toolchain::Npm.domains().contains(&"registry.npmjs.org"));
    }

    #[test]
    fn missing_caches_are_created() {
        let home = tempfile::tempdir().unwrap();
        let made = Toolchain::Npm.prepared_caches(home.path());
        assert!(made.iter().all(|d| d.is_dir()), "{made:?}");
    }
}
