//! The `[sandbox]` table of the policy file, and the sandbox a session
//! builds from it.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::toolchains::Toolchain;
use super::{
    Feature, NetworkAccess, Sandbox, SandboxBuilder, SandboxError, SandboxLimits, SandboxMode,
};

/// The `[sandbox]` table of the policy file:
///
/// ```toml
/// [sandbox]
/// mode = "auto"          # "auto" | "required" | "off" (default "auto")
/// network = "allowlist"  # "none" | "allowlist" | "open" (default "none";
///                        # false and true mean "none" and "open")
/// allow_domains = ["crates.io", "*.crates.io"]  # with "allowlist"
/// resolve = { "registry.test" = "127.0.0.1" }   # names the proxy maps itself
/// toolchains = ["cargo", "npm"]  # their caches writable, registries allowed
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
    /// What network commands get: none (a loopback of the session's own),
    /// the domains of [`allow_domains`](Self::allow_domains) through the
    /// session's proxies, or the host's network.
    pub network: NetworkAccess,
    /// With `network = "allowlist"`: the names commands may reach, exact
    /// (`crates.io`) or every name below one (`*.crates.io`, not
    /// `crates.io` itself), and IP addresses reachable as such (an address
    /// a name resolves to that is loopback or private is refused unless
    /// listed here).
    pub allow_domains: Vec<String>,
    /// Names the proxies resolve to these addresses instead of asking DNS:
    /// an offline mirror (`"registry.test" = "127.0.0.1"`) or a pinned
    /// host; a string or a list of strings. Trusted as written, loopback
    /// included.
    pub resolve: BTreeMap<String, Addresses>,
    /// Toolchains whose cache folders become writable and whose
    /// registries are added to `allow_domains`
    /// (`agentcore sandbox check --toolchains` lists them).
    pub toolchains: Vec<Toolchain>,
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
            network: NetworkAccess::None,
            allow_domains: Vec::new(),
            resolve: BTreeMap::new(),
            toolchains: Vec::new(),
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
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        let mut toolchain_writable = Vec::new();
        let mut domains = self.allow_domains.clone();
        for toolchain in &self.toolchains {
            if let Some(home) = &home {
                toolchain_writable.extend(toolchain.prepared_caches(home));
            }
            if self.network == NetworkAccess::Allowlist {
                domains.extend(toolchain.domains().iter().map(|d| (*d).to_owned()));
            }
        }
        let extra_writable = self
            .writable
            .iter()
            .map(|p| resolve(p, root))
            .chain(toolchain_writable)
            .filter(|p| p.exists());
        let mut builder = Sandbox::builder()
            .mode(self.mode)
            .network_access(self.network)
            .allow_domains(domains)
            .resolve(
                self.resolve
                    .iter()
                    .map(|(name, to)| (name.clone(), to.0.clone())),
            )
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

    /// Whether a confined command can reach this machine's loopback (a
    /// server agentcore or the user runs there): with the open network, or
    /// an allow list listing a loopback address or resolving a name to one.
    pub fn reaches_host_loopback(&self) -> bool {
        let loopback = |text: &str| {
            text.trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<IpAddr>()
                .is_ok_and(|ip| {
                    ip.is_loopback()
                        || ip.is_unspecified()
                        || matches!(ip, IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()))
                })
        };
        match self.network {
            NetworkAccess::Open => true,
            NetworkAccess::None => false,
            NetworkAccess::Allowlist => {
                self.allow_domains.iter().any(|d| loopback(d))
                    || self
                        .resolve
                        .values()
                        .flat_map(|a| &a.0)
                        .any(|ip| loopback(&ip.to_string()))
            }
        }
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

/// The addresses of a `resolve` entry: one (`"127.0.0.1"`) or a list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Addresses(pub Vec<IpAddr>);

impl<'de> Deserialize<'de> for Addresses {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum OneOrMany {
            One(String),
            Many(Vec<String>),
        }
        let list = match OneOrMany::deserialize(deserializer).map_err(|_| {
            serde::de::Error::custom("expected an IP address or a list of IP addresses")
        })? {
            OneOrMany::One(one) => vec![one],
            OneOrMany::Many(many) => many,
        };
        if list.is_empty() {
            return Err(serde::de::Error::custom("an empty list of addresses"));
        }
        list.iter()
            .map(|a| {
                a.parse::<IpAddr>()
                    .map_err(|_| serde::de::Error::custom(format!("`{a}` is not an IP address")))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Addresses)
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
            network = "allowlist"
            allow_domains = ["crates.io", "*.npmjs.org"]
            resolve = { "registry.test" = "127.0.0.1", "pair.test" = ["::1", "10.0.0.1"] }
            toolchains = ["cargo", "pip"]
            writable = ["~/.cache", "build"]
            hidden = ["/srv/secrets"]
            protected = ["Makefile"]
            auto_allow = false
            assume_missing = ["landlock", "pid-namespace"]
            "#,
        )
        .unwrap();
        assert_eq!(p.mode, SandboxMode::Required);
        assert_eq!(p.network, NetworkAccess::Allowlist);
        assert!(!p.auto_allow);
        assert_eq!(p.allow_domains, ["crates.io", "*.npmjs.org"]);
        assert_eq!(
            p.resolve["pair.test"].0,
            [
                "::1".parse::<IpAddr>().unwrap(),
                "10.0.0.1".parse().unwrap()
            ]
        );
        assert_eq!(p.toolchains, [Toolchain::Cargo, Toolchain::Pip]);
        assert_eq!(
            p.assume_missing,
            vec![Feature::Landlock, Feature::PidNamespace]
        );
        let err = toml::from_str::<SandboxPolicy>("mode = \"strict\"").unwrap_err();
        assert!(
            err.to_string().contains("unknown variant `strict`"),
            "{err}"
        );
        for (text, network) in [
            ("network = false", NetworkAccess::None),
            ("network = true", NetworkAccess::Open),
            ("network = \"none\"", NetworkAccess::None),
            ("network = \"open\"", NetworkAccess::Open),
        ] {
            assert_eq!(
                toml::from_str::<SandboxPolicy>(text).unwrap().network,
                network
            );
        }
        let err = toml::from_str::<SandboxPolicy>("network = \"some\"").unwrap_err();
        assert!(
            err.to_string()
                .contains("expected \"none\", \"allowlist\", \"open\", false or true"),
            "{err}"
        );
        let err = toml::from_str::<SandboxPolicy>("resolve = { a = \"localhost\" }").unwrap_err();
        assert!(
            err.to_string().contains("`localhost` is not an IP address"),
            "{err}"
        );
        let err = toml::from_str::<SandboxPolicy>("toolchains = [\"maven\"]").unwrap_err();
        assert!(err.to_string().contains("unknown variant `maven`"), "{err}");
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
