//! The command sandbox: a process confined by the kernel, not only by
//! rules.
//!
//! A [`Sandbox`] confines a command before it starts
//! ([`Sandbox::confine`] on a `tokio::process::Command`). On Linux, with no
//! root, no setuid helper and no extra binary:
//!
//! - **reads**: the whole filesystem but the hidden paths (credential
//!   stores of the home by default), which appear empty;
//! - **writes**: only under the writable roots, the sandbox's own
//!   temporary directory ([`Sandbox::tmpdir`]) and `/dev/null` and the
//!   like (Landlock), never under the protected paths inside them (what
//!   makes git run code: `.git/config`, `hooks/`, … while commits work,
//!   see `git_guard.rs`;
//!   `.claude`, existing `.env*` files: read-only binds, `Read-only file
//!   system`); every other mount is read-only in the command's mount
//!   namespace, so metadata outside the roots (mode, owner, times,
//!   extended attributes), which Landlock does not govern, cannot change
//!   either (`EROFS`), and the roots are `nosuid`;
//! - **session folders**: 0700, and the other sessions' (saved output,
//!   other sandboxes' temporary directories) are hidden from a command;
//! - **network**: none unless allowed, TCP and UDP alike; the commands of
//!   one sandbox share a loopback of their own (one network namespace, made
//!   by [`SandboxBuilder::build`]; or one per command with
//!   [`SandboxBuilder::per_command_loopback`]); a server one command starts
//!   answers the next command while the first one runs (each command has a
//!   PID namespace of its own);
//! - **processes**: the command runs as PID 2 of a PID namespace of its
//!   own, so everything it starts, `setsid` and double forks included, dies
//!   when it exits or when the spawned child is killed;
//! - **UNIX sockets**: with Landlock ABI 9 only those under the writable
//!   roots can be reached; below it seccomp refuses `socket(AF_UNIX)` (and
//!   datagram `socketpair`), so no host service's socket can be reached
//!   whenever it was made (stream `socketpair` still works);
//! - **syscalls**: socket families other than UNIX, INET, INET6 and NETLINK
//!   and `io_uring` are refused (seccomp), set-id modes too (`chmod`, and
//!   `open`/`mknod` creating a file), and the command has no capabilities
//!   (root keeps `dac_override` and `dac_read_search`, with every id mapped
//!   to itself, so files of other users stay readable and writable as
//!   outside; no `chown`, no `fowner`; Landlock and the read-only mounts
//!   bind it all the same);
//! - **lifetime**: a confined command dies with the process that started
//!   it, however that process dies (M watches its parent);
//! - **resources** ([`SandboxLimits`], [`SandboxBuilder::limits`]): memory,
//!   tasks, CPU time per process, file size and the session's `$TMPDIR`
//!   bounded per command (each background job on its own), by a cgroup
//!   (v2, or v1's `memory` and `pids`) when one can be made, otherwise by
//!   `RLIMIT_*` and a watchdog in the command's PID 1; a command that
//!   reaches one is killed and [`Confinement::limit_hit`] says which.
//!
//! How it is built: the spawned child (M) creates a user namespace with
//! mount, PID and (without network) network namespaces, mounts over the
//! hidden and protected paths and forks the PID namespace's init (G),
//! which mounts `/proc` and forks the shell (S); S applies Landlock and
//! seccomp, drops its capabilities and is exec'd. M exits with the
//! command's code (`128 + signal` for a death by signal). Killing M (the
//! pid `spawn` returns) kills everything inside.
//!
//! The kernel may lack a part ([`Sandbox::status`]): in
//! [`SandboxMode::Auto`] a command is confined with what exists, in
//! [`SandboxMode::Required`] [`SandboxBuilder::build`] fails naming the
//! missing feature. On other platforms `Auto` means unconfined.
//!
//! ```no_run
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! use agentcore::sandbox::{Sandbox, SandboxMode};
//!
//! let sandbox = Sandbox::builder()
//!     .writable(["/home/me/project"])
//!     .network(false)
//!     .mode(SandboxMode::Auto)
//!     .build()?;
//! let mut cmd = tokio::process::Command::new("bash");
//! cmd.arg("-c").arg("cargo test").current_dir("/home/me/project");
//! cmd.env("TMPDIR", sandbox.tmpdir());
//! let confinement = sandbox.confine(&mut cmd)?;
//! let status = confinement.spawn(&mut cmd)?.wait().await?;
//! println!("{status} ({})", confinement.enforced());
//! # Ok(()) }
//! ```

#[cfg_attr(not(all(target_os = "linux", feature = "sandbox")), allow(dead_code))]
mod git_guard;
mod limits;
#[cfg(all(target_os = "linux", feature = "sandbox"))]
mod linux;
mod nested_repos;
mod paths;
mod policy;
#[cfg(feature = "sandbox")]
#[cfg(feature = "sandbox")]
pub mod proxy;
mod status;
mod toolchains;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

#[cfg(target_os = "linux")]
use crate::process::pty::ChildTerminal;
/// No terminals are made where there is no `/dev/ptmx` to make them from.
#[cfg(not(target_os = "linux"))]
type ChildTerminal = ();

pub use limits::{LimitHit, SandboxLimits, format_size, parse_size};
pub use nested_repos::IndexMark;
pub use paths::{DEFAULT_HIDDEN_IN_HOME, default_hidden, default_protected};
pub use policy::{Addresses, SandboxPolicy};
pub use status::{Feature, SandboxStatus};
pub use toolchains::Toolchain;

/// What network a confined command gets; in the policy's `[sandbox]`
/// table `network = "none" | "allowlist" | "open"` (`false` and `true`
/// mean `"none"` and `"open"`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NetworkAccess {
    /// None: a loopback of the session's own, nothing beyond it.
    #[default]
    None,
    /// The names of the allow list only, through the HTTP and SOCKS5
    /// proxies agentcore runs on the session's loopback (`HTTP_PROXY`,
    /// `HTTPS_PROXY`, `ALL_PROXY` point there); nothing else leaves the
    /// loopback.
    Allowlist,
    /// The host's network, as without a sandbox.
    Open,
}

impl NetworkAccess {
    /// Its name in the policy.
    pub fn as_str(self) -> &'static str {
        match self {
            NetworkAccess::None => "none",
            NetworkAccess::Allowlist => "allowlist",
            NetworkAccess::Open => "open",
        }
    }
}

impl<'de> serde::Deserialize<'de> for NetworkAccess {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = NetworkAccess;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("\"none\", \"allowlist\", \"open\", false or true")
            }
            fn visit_bool<E: serde::de::Error>(self, open: bool) -> Result<NetworkAccess, E> {
                Ok(if open {
                    NetworkAccess::Open
                } else {
                    NetworkAccess::None
                })
            }
            fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<NetworkAccess, E> {
                match name {
                    "none" => Ok(NetworkAccess::None),
                    "allowlist" => Ok(NetworkAccess::Allowlist),
                    "open" => Ok(NetworkAccess::Open),
                    other => Err(E::invalid_value(serde::de::Unexpected::Str(other), &self)),
                }
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// How much confinement a [`Sandbox`] insists on; in the policy's
/// `[sandbox]` table `mode = "auto" | "required" | "off"`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxMode {
    /// Confine with what the kernel offers; the status says what is
    /// missing.
    #[default]
    Auto,
    /// Fail ([`SandboxBuilder::build`]) unless every feature the sandbox
    /// needs is there.
    Required,
    /// No confinement: commands run as without a sandbox.
    Off,
}

/// Why a sandbox could not be built or a command not confined.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// [`SandboxMode::Required`] and a feature is missing, e.g. `Landlock
    /// is not available (kernel without CONFIG_SECURITY_LANDLOCK)`.
    #[error("{feature} {} not available ({reason})", feature.verb())]
    Unavailable {
        /// The missing feature.
        feature: Feature,
        /// Why it is missing.
        reason: String,
    },
    /// A writable root that does not exist or cannot be read.
    #[error("the writable root {}: {source}", path.display())]
    WritableRoot {
        /// The root as given.
        path: PathBuf,
        /// What `stat` said.
        source: io::Error,
    },
    /// A path with a NUL byte, which no syscall can take.
    #[error("{} contains a NUL byte", .0.display())]
    NulInPath(PathBuf),
    /// `allow_domains` or `resolve` holds what is not a name, a wildcard
    /// or an address, e.g. `*`.
    #[error("{0}")]
    BadAllowList(String),
    /// The allow list's proxies could not be set up.
    #[error("network allow list unavailable: {0}")]
    Network(String),
    /// The Landlock ruleset could not be built.
    #[error("the Landlock rules: {0}")]
    Landlock(String),
    /// The seccomp filter could not be built.
    #[error("the seccomp filter: {0}")]
    Seccomp(String),
    /// Creating the temporary directory, or reading the working directory.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Builds a [`Sandbox`]; from [`Sandbox::builder`].
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct SandboxBuilder {
    writable: Vec<PathBuf>,
    hidden: Vec<PathBuf>,
    protected: Vec<PathBuf>,
    network: bool,
    network_access: NetworkAccess,
    allow_domains: Vec<String>,
    resolve: std::collections::BTreeMap<String, Vec<std::net::IpAddr>>,
    mode: SandboxMode,
    home: Option<PathBuf>,
    no_default_hidden: bool,
    tmpdir_in: Option<PathBuf>,
    assume_missing: Vec<Feature>,
    per_command_loopback: bool,
    limits: SandboxLimits,
}

impl SandboxBuilder {
    /// Adds roots the command may write under (they must exist).
    pub fn writable<I, P>(mut self, paths: I) -> Self
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        self.writable.extend(paths.into_iter().map(Into::into));
        self
    }

    /// Adds paths that appear empty inside (a directory as an empty tmpfs,
    /// a file as `/dev/null`), besides the defaults. A path that does not
    /// exist when a command starts is left alone.
    pub fn hidden<I, P>(mut self, paths: I) -> Self
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        self.hidden.extend(paths.into_iter().map(Into::into));
        self
    }

    /// Adds paths that are read-only inside even under a writable root,
    /// besides each root's `.git` and existing `.env*` files.
    pub fn protected<I, P>(mut self, paths: I) -> Self
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        self.protected.extend(paths.into_iter().map(Into::into));
        self
    }

    /// Whether the command may use the network (default `false`): the
    /// same as [`network_access`](Self::network_access) with
    /// [`NetworkAccess::Open`] or [`NetworkAccess::None`].
    pub fn network(self, allowed: bool) -> Self {
        self.network_access(if allowed {
            NetworkAccess::Open
        } else {
            NetworkAccess::None
        })
    }

    /// What network commands get (default [`NetworkAccess::None`]).
    pub fn network_access(mut self, access: NetworkAccess) -> Self {
        self.network = access == NetworkAccess::Open;
        self.network_access = access;
        self
    }

    /// Adds names (`crates.io`, `*.npmjs.org`) and IP addresses commands
    /// may reach with [`NetworkAccess::Allowlist`].
    pub fn allow_domains<I, S>(mut self, domains: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allow_domains
            .extend(domains.into_iter().map(Into::into));
        self
    }

    /// Names the proxies resolve to these addresses instead of asking DNS
    /// (an offline mirror on loopback, a pinned host).
    pub fn resolve<I>(mut self, entries: I) -> Self
    where
        I: IntoIterator<Item = (String, Vec<std::net::IpAddr>)>,
    {
        self.resolve.extend(entries);
        self
    }

    /// How much confinement to insist on (default [`SandboxMode::Auto`]).
    pub fn mode(mut self, mode: SandboxMode) -> Self {
        self.mode = mode;
        self
    }

    /// The home directory whose credential stores are hidden (default
    /// `$HOME`).
    pub fn home(mut self, home: impl Into<PathBuf>) -> Self {
        self.home = Some(home.into());
        self
    }

    /// Hides only the paths given to [`hidden`](Self::hidden), not the
    /// default credential stores.
    pub fn without_default_hidden(mut self) -> Self {
        self.no_default_hidden = true;
        self
    }

    /// Creates the sandbox's temporary directory in `dir` (default the
    /// system's temporary directory).
    pub fn tmpdir_in(mut self, dir: impl Into<PathBuf>) -> Self {
        self.tmpdir_in = Some(dir.into());
        self
    }

    /// Gives each command a network namespace of its own, instead of one
    /// shared by every command of this sandbox (the default, so that a
    /// server a command starts answers the next command while it runs).
    pub fn per_command_loopback(mut self) -> Self {
        self.per_command_loopback = true;
        self
    }

    /// What each command may consume (default [`SandboxLimits::default`]):
    /// its memory, tasks, CPU time per process and largest file, and the
    /// size of the session's `$TMPDIR`. A command that reaches one is
    /// killed, and [`Confinement::limit_hit`] says which.
    ///
    /// ```no_run
    /// # fn example() -> Result<(), agentcore::sandbox::SandboxError> {
    /// use agentcore::sandbox::{Sandbox, SandboxLimits};
    ///
    /// let limits = SandboxLimits::default()
    ///     .memory(Some(4 << 30))
    ///     .processes(Some(512));
    /// let sandbox = Sandbox::builder().limits(limits).build()?;
    /// # Ok(()) }
    /// ```
    pub fn limits(mut self, limits: SandboxLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Behaves as if this machine lacked `feature`: for tests and for
    /// diagnosis (what would `Required` say, what does `Auto` still
    /// enforce). The status gives the reason `simulated`.
    pub fn assume_missing(mut self, feature: Feature) -> Self {
        self.assume_missing.push(feature);
        self
    }

    /// Probes the kernel (once per process), creates the temporary
    /// directory and checks the writable roots.
    ///
    /// # Errors
    ///
    /// [`SandboxError::Unavailable`] in [`SandboxMode::Required`] when a
    /// needed feature is missing; [`SandboxError::WritableRoot`] for a root
    /// that does not exist; [`SandboxError::Io`] when the temporary
    /// directory cannot be created.
    pub fn build(self) -> Result<Sandbox, SandboxError> {
        let mut status = machine_status().clone().with_network(self.network);
        for feature in &self.assume_missing {
            status.set_missing(*feature, "simulated".to_owned());
        }
        if self.mode == SandboxMode::Required
            && let Some((feature, reason)) = status.first_missing()
        {
            return Err(SandboxError::Unavailable {
                feature,
                reason: reason.to_owned(),
            });
        }
        let mut writable = Vec::new();
        for path in self.writable {
            match std::fs::canonicalize(&path) {
                Ok(real) => writable.push(real),
                Err(source) => return Err(SandboxError::WritableRoot { path, source }),
            }
        }
        let mut hidden = Vec::new();
        if !self.no_default_hidden {
            let home = self
                .home
                .or_else(|| std::env::var_os("HOME").map(PathBuf::from));
            let mut token_dirs = Vec::new();
            if let Some(home) = home {
                let runtime = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from);
                hidden = default_hidden(&home, runtime.as_deref());
                token_dirs.push(home.join(".local/state").join(paths::OAUTH_TOKEN_DIR));
            }
            // The MCP servers' OAuth tokens, under a state directory of
            // the user's choosing too.
            if let Some(state) = std::env::var_os("XDG_STATE_HOME")
                .map(PathBuf::from)
                .filter(|dir| dir.is_absolute())
            {
                let dir = state.join(paths::OAUTH_TOKEN_DIR);
                hidden.push(dir.clone());
                token_dirs.push(dir);
            }
            // A path that does not exist is not covered: the token folder
            // is made now (0700, empty), so that tokens a sign-in writes
            // during the session are hidden too.
            for dir in token_dirs {
                use std::os::unix::fs::DirBuilderExt;
                let _ = std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(dir);
            }
        }
        hidden.extend(self.hidden);
        let mut tmp = tempfile::Builder::new();
        // Named after this process, so that a later start can remove it if
        // this process dies without doing so.
        let prefix = crate::process::owned_prefix(crate::process::SANDBOX_PREFIX);
        tmp.prefix(&prefix);
        let tmpdir = match &self.tmpdir_in {
            Some(dir) => tmp.tempdir_in(dir)?,
            None => tmp.tempdir()?,
        };
        // The command's TMPDIR and its /dev/shm are directories of a
        // folder that is not writable inside: a command can fill them but
        // not swap them for a link to elsewhere, which the next command's
        // Landlock rules and binds would follow.
        let tmp = tmpdir.path().join("tmp");
        let shm = tmpdir.path().join("shm");
        // Every folder 0700: other users see nothing of a session's files
        // (the commands of other sessions of this user do not see them
        // either: they are hidden, see `other_sessions`).
        {
            use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
            let mut dirs = std::fs::DirBuilder::new();
            dirs.mode(0o700);
            dirs.create(&tmp)?;
            dirs.create(&shm)?;
            for dir in [tmpdir.path(), &tmp, &shm] {
                std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
            }
        }
        let allowlist =
            self.network_access == NetworkAccess::Allowlist && self.mode != SandboxMode::Off;
        // The session's loopback (and bounded tmpfs) are made by a forked
        // helper, on a thread of their own while the rest is put together.
        #[cfg(all(target_os = "linux", feature = "sandbox"))]
        let making_net = (self.mode != SandboxMode::Off
            && !self.network
            && (!self.per_command_loopback || allowlist)
            && status.has(Feature::NetworkNamespace))
        .then(|| {
            let dirs = [tmp.clone(), shm.clone()];
            // Files in the tmpfs are memory no command's account keeps once
            // it ends: never more than a command may hold.
            let bytes = self
                .limits
                .tmp_size
                .map(|bytes| self.limits.memory.map_or(bytes, |memory| bytes.min(memory)));
            let make = move || {
                let bounded = bytes.map(|bytes| (&dirs[..], bytes));
                // A helper that cannot mount makes the namespaces without.
                linux::SessionNet::new(bounded).or_else(|e| match bounded {
                    Some(_) => linux::SessionNet::new(None),
                    None => Err(e),
                })
            };
            std::thread::Builder::new()
                .name("agentcore-session-net".to_owned())
                .spawn(make)
        })
        .and_then(Result::ok);
        // Every root the command may write under, canonical; one inside
        // another is writable through it, and left out so that no root's
        // parent is writable inside (a command could swap it for a link).
        // Each root's own `.git` and `.env*` stay protected.
        let protected_roots = writable.clone();
        // Repositories and environment files below the roots, as they are
        // when the sandbox is built (each root's own are looked up again
        // when each command starts).
        let mut protected = self.protected;
        for root in &protected_roots {
            protected.extend(paths::protected_below(root));
        }
        let mut outermost: Vec<PathBuf> = Vec::new();
        for root in &writable {
            let inside_another = writable
                .iter()
                .any(|other| other != root && root.starts_with(other));
            if !inside_another && !outermost.contains(root) {
                outermost.push(root.clone());
            }
        }
        let writable = outermost;
        // Host services' sockets, unless a writable root lives among them.
        let mut keep = writable.clone();
        keep.push(fs_canonical(tmpdir.path()));
        hidden.extend(paths::system_hidden(self.network, &keep));
        // Host services' sockets under /tmp and /var/tmp are looked for on
        // a thread of their own, so that starting a session does not wait
        // for the walk; the first command (or `hidden()`) waits for it.
        let hidden = Arc::new(HiddenPaths {
            listed: hidden,
            socket_keep: keep,
            all: OnceLock::new(),
        });
        #[cfg(all(target_os = "linux", feature = "sandbox"))]
        if self.mode != SandboxMode::Off {
            linux::prepare_cgroups(&self.limits);
        }
        #[cfg(all(target_os = "linux", feature = "sandbox"))]
        let session_net = match making_net.map(std::thread::JoinHandle::join) {
            Some(Ok(Ok(net))) => {
                status = status.with_shared_loopback(true);
                Some(Arc::new(net))
            }
            // Commands then get a network namespace each.
            _ => None,
        };
        if self.mode != SandboxMode::Off {
            let scan = hidden.clone();
            #[cfg(all(target_os = "linux", feature = "sandbox"))]
            let warm = status.clone();
            // Without a thread the first use does the walk itself. The
            // same thread then does what the first command would do once
            // per process (the machine's cgroups, the seccomp programs),
            // so that the first command costs what the next ones do. It
            // starts once the loopback helper is done: on two cores, the
            // walk beside the helper's fork and the rest of the start
            // lengthened the start; after it, it overlaps what is left.
            let _ = std::thread::Builder::new()
                .name("agentcore-socket-scan".to_owned())
                .spawn(move || {
                    scan.all();
                    #[cfg(all(target_os = "linux", feature = "sandbox"))]
                    linux::warm_up(&warm);
                });
        }
        // The allow list's proxies, on the session's loopback. Without
        // them commands get no network at all: fail closed.
        let mut network = Network::default();
        if allowlist {
            #[cfg(all(target_os = "linux", feature = "sandbox"))]
            let started = start_proxies(session_net.as_deref(), &self.allow_domains, &self.resolve);
            #[cfg(not(all(target_os = "linux", feature = "sandbox")))]
            let started: Result<Network, SandboxError> = Err(SandboxError::Network(
                "the allow list needs the Linux sandbox".to_owned(),
            ));
            match started {
                Ok(started) => {
                    network = started;
                    status = status.with_allowlist(Some(self.allow_domains.len()));
                }
                Err(err @ SandboxError::BadAllowList(_)) => return Err(err),
                Err(err) if self.mode == SandboxMode::Required => return Err(err),
                Err(err) => status = status.with_allowlist_unavailable(err.to_string()),
            }
        }
        Ok(Sandbox {
            inner: Arc::new(Inner {
                mode: self.mode,
                network: self.network,
                network_access: self.network_access,
                proxies: network,
                nested: nested_repos::NestedRepos::new(&protected_roots, &protected),
                writable,
                protected_roots,
                hidden,
                protected,
                limits: self.limits,
                _tmpdir: tmpdir,
                tmp,
                shm,
                status,
                #[cfg(all(target_os = "linux", feature = "sandbox"))]
                session_net,
            }),
        })
    }
}

/// The proxies of an allow list and the variables that point commands at
/// them; empty without one.
#[derive(Debug, Default)]
struct Network {
    #[cfg(feature = "sandbox")]
    proxy: Option<proxy::Proxy>,
    env: Vec<(&'static str, String)>,
}

/// The variables that send a command's HTTP, HTTPS and other traffic
/// through the proxies on `127.0.0.1:http` and `:socks` (every common
/// spelling: curl reads only the lower-case `http_proxy`), and keep the
/// loopback direct.
#[cfg(all(target_os = "linux", feature = "sandbox"))]
fn proxy_env(http: u16, socks: u16) -> Vec<(&'static str, String)> {
    let http_url = format!("http://127.0.0.1:{http}");
    let socks_url = format!("socks5h://127.0.0.1:{socks}");
    let direct = "localhost,127.0.0.1,::1".to_owned();
    vec![
        ("HTTP_PROXY", http_url.clone()),
        ("http_proxy", http_url.clone()),
        ("HTTPS_PROXY", http_url.clone()),
        ("https_proxy", http_url.clone()),
        ("ALL_PROXY", socks_url.clone()),
        ("all_proxy", socks_url),
        ("NO_PROXY", direct.clone()),
        ("no_proxy", direct),
        // npm reads its own settings before these variables.
        ("npm_config_proxy", http_url.clone()),
        ("npm_config_https_proxy", http_url),
    ]
}

/// Makes the proxies' listeners in the session's network namespace and
/// starts them.
#[cfg(all(target_os = "linux", feature = "sandbox"))]
fn start_proxies(
    session_net: Option<&linux::SessionNet>,
    allow_domains: &[String],
    resolve: &std::collections::BTreeMap<String, Vec<std::net::IpAddr>>,
) -> Result<Network, SandboxError> {
    let mut config = proxy::ProxyConfig::allowing(allow_domains.iter().cloned());
    for (name, addresses) in resolve {
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        config.resolve.insert(name, addresses.clone());
    }
    config.validate().map_err(SandboxError::BadAllowList)?;
    let Some(net) = session_net else {
        return Err(SandboxError::Network(
            "the allow list needs a network namespace shared by the session's commands".to_owned(),
        ));
    };
    let [http, socks] = linux::listeners(net)
        .map_err(|e| SandboxError::Network(format!("the proxies' sockets: {e}")))?;
    let ports = (http.local_addr()?.port(), socks.local_addr()?.port());
    let proxy = proxy::Proxy::start(config, http, socks)
        .map_err(|e| SandboxError::Network(format!("the proxies: {e}")))?;
    Ok(Network {
        proxy: Some(proxy),
        env: proxy_env(ports.0, ports.1),
    })
}

/// The paths hidden from commands: those listed when the sandbox is built,
/// and the host's sockets under [`paths::SOCKET_SCAN_DIRS`], found once,
/// by the first of the build's scan thread and the first use.
#[derive(Debug)]
struct HiddenPaths {
    listed: Vec<PathBuf>,
    /// Folders whose sockets stay visible (the commands' own).
    socket_keep: Vec<PathBuf>,
    all: OnceLock<Vec<PathBuf>>,
}

impl HiddenPaths {
    /// Every hidden path; waits for (or does) the socket scan.
    fn all(&self) -> &[PathBuf] {
        self.all.get_or_init(|| {
            let mut all = self.listed.clone();
            all.extend(paths::sockets_under(
                paths::SOCKET_SCAN_DIRS,
                &self.socket_keep,
            ));
            all
        })
    }
}

/// `path` canonical, or as given when it cannot be resolved.
fn fs_canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// What the kernel offers this process, probed once.
fn machine_status() -> &'static SandboxStatus {
    static STATUS: OnceLock<SandboxStatus> = OnceLock::new();
    STATUS.get_or_init(|| {
        #[cfg(all(target_os = "linux", feature = "sandbox"))]
        {
            linux::probe()
        }
        #[cfg(all(target_os = "linux", not(feature = "sandbox")))]
        {
            SandboxStatus::nothing("this build has no command sandbox (feature `sandbox` is off)")
        }
        #[cfg(not(target_os = "linux"))]
        {
            SandboxStatus::nothing("no command sandbox on this platform yet")
        }
    })
}

/// Starts, on a thread of its own, what building a sandbox with these
/// limits waits for first: the probe of what this machine enforces (a
/// forked child trying each namespace) and, on cgroup v1, the cgroup of
/// the first command. A program calls it as soon as it knows it will
/// confine commands, so that the work overlaps its own start;
/// [`SandboxBuilder::build`] then waits only for what is still running.
/// Without the sandbox on this platform it does nothing.
pub fn prefetch(limits: &SandboxLimits) {
    #[cfg(all(target_os = "linux", feature = "sandbox"))]
    {
        // Two threads: the probe's fork should not wait for the cgroups'
        // set-up (file reads, a trial folder, the spawners' threads).
        let _ = std::thread::Builder::new()
            .name("agentcore-probe".to_owned())
            .spawn(machine_status);
        let limits = *limits;
        let _ = std::thread::Builder::new()
            .name("agentcore-cgroups".to_owned())
            .spawn(move || linux::prepare_cgroups(&limits));
    }
    #[cfg(not(all(target_os = "linux", feature = "sandbox")))]
    let _ = limits;
}

/// Variables [`Sandbox::confine`] removes from a command's environment:
/// the ssh agent's and the D-Bus session's sockets give authority the
/// sandbox would not.
pub const UNSET_ENV: &[&str] = &["SSH_AUTH_SOCK", "DBUS_SESSION_BUS_ADDRESS"];

/// What the kernel of this machine offers the sandbox (probed once per
/// process; the probe's trial is skipped when one made in the same
/// circumstances found everything, see docs/sandbox.md).
pub fn check() -> SandboxStatus {
    machine_status().clone()
}

/// [`check`] with the probe's trial made whatever was remembered (for
/// `agentcore sandbox check`); what it finds is remembered for the next
/// sessions, or forgotten.
pub fn check_afresh() -> SandboxStatus {
    #[cfg(all(target_os = "linux", feature = "sandbox"))]
    {
        linux::probe_afresh()
    }
    #[cfg(not(all(target_os = "linux", feature = "sandbox")))]
    {
        check()
    }
}

/// A command sandbox: what a confined command may write, what it cannot
/// see, whether it has the network. Cheap to clone (shared); its temporary
/// directory is removed when the last clone is dropped.
#[derive(Debug, Clone)]
pub struct Sandbox {
    inner: Arc<Inner>,
}

#[derive(Debug)]
// What only the Linux backend reads is unused without it.
#[cfg_attr(not(all(target_os = "linux", feature = "sandbox")), allow(dead_code))]
struct Inner {
    mode: SandboxMode,
    network: bool,
    network_access: NetworkAccess,
    proxies: Network,
    writable: Vec<PathBuf>,
    hidden: Arc<HiddenPaths>,
    protected: Vec<PathBuf>,
    /// Repositories commands made and linked, protected once found.
    nested: nested_repos::NestedRepos,
    limits: SandboxLimits,
    /// Removed with the sandbox; holds `tmp` and `shm`, and is not
    /// writable inside.
    _tmpdir: tempfile::TempDir,
    /// The commands' `TMPDIR`.
    tmp: PathBuf,
    /// Mounted on the commands' `/dev/shm`.
    shm: PathBuf,
    /// Every writable root given (canonical), nested ones included, whose
    /// `.git` and `.env*` files are protected.
    protected_roots: Vec<PathBuf>,
    status: SandboxStatus,
    /// The session's shared loopback, when made.
    #[cfg(all(target_os = "linux", feature = "sandbox"))]
    session_net: Option<Arc<linux::SessionNet>>,
}

impl Sandbox {
    /// A builder: no writable root, the default hidden paths, no network,
    /// [`SandboxMode::Auto`].
    pub fn builder() -> SandboxBuilder {
        SandboxBuilder::default()
    }

    /// What this sandbox can enforce here (with the features assumed
    /// missing struck out).
    pub fn status(&self) -> &SandboxStatus {
        &self.inner.status
    }

    /// The mode it was built with.
    pub fn mode(&self) -> SandboxMode {
        self.inner.mode
    }

    /// Whether commands get the host's network ([`NetworkAccess::Open`]).
    pub fn network(&self) -> bool {
        self.inner.network
    }

    /// What network commands get, as asked (with
    /// [`NetworkAccess::Allowlist`], [`proxy`](Self::proxy) says whether
    /// the proxies run: without them commands get none).
    pub fn network_access(&self) -> NetworkAccess {
        self.inner.network_access
    }

    /// The allow list's proxies, when they run: their counters and the
    /// refusals to show a command's output.
    #[cfg(feature = "sandbox")]
    pub fn proxy(&self) -> Option<&proxy::Proxy> {
        self.inner.proxies.proxy.as_ref()
    }

    /// The writable roots, canonical.
    pub fn writable(&self) -> &[PathBuf] {
        &self.inner.writable
    }

    /// The paths hidden from commands (those that exist when a command
    /// starts are covered).
    pub fn hidden(&self) -> &[PathBuf] {
        self.inner.hidden.all()
    }

    /// What each command may consume.
    pub fn limits(&self) -> &SandboxLimits {
        &self.inner.limits
    }

    /// One line per limit with what enforces it on this machine, e.g.
    /// `memory: 4G (cgroup v1)`, `processes: 512 (RLIMIT_NPROC +
    /// watchdog)`, `tmp_size: 2G (tmpfs, $TMPDIR and /dev/shm each)`, or
    /// `file_size: off`; a limit nothing here can enforce says so.
    pub fn limits_summary(&self) -> Vec<String> {
        #[cfg(all(target_os = "linux", feature = "sandbox"))]
        {
            let status = &self.inner.status;
            let watchdog = self.inner.mode != SandboxMode::Off
                && status.has(Feature::UserNamespace)
                && status.has(Feature::PidNamespace)
                && status.has(Feature::MountNamespace);
            let tmpfs = self
                .inner
                .session_net
                .as_ref()
                .is_some_and(|net| net.has_tmpfs());
            linux::limits_summary(&self.inner.limits, watchdog, tmpfs)
        }
        #[cfg(not(all(target_os = "linux", feature = "sandbox")))]
        {
            vec!["not enforced: no command sandbox on this platform or build".to_owned()]
        }
    }

    /// The sandbox's temporary directory: writable inside, removed with the
    /// sandbox. Export it to the command as `TMPDIR`.
    pub fn tmpdir(&self) -> &Path {
        &self.inner.tmp
    }

    /// Whether a command is confined by every feature it needs (`false`
    /// for [`SandboxMode::Off`]).
    pub fn is_fully_confining(&self) -> bool {
        self.inner.mode != SandboxMode::Off && self.inner.status.is_complete()
    }

    /// Prepares `cmd` to run confined: removes [`UNSET_ENV`] from its
    /// environment, computes the mounts, the Landlock ruleset and the
    /// seccomp filters now, and adds a `pre_exec` step that
    /// builds the sandbox between fork and exec. Call it after the command's
    /// other `pre_exec` steps, once per command; the spawned child is M,
    /// whose death kills everything inside (see the module docs).
    ///
    /// # Errors
    ///
    /// A path with a NUL byte, or a Landlock or seccomp rule the crates
    /// refuse. Failures in the child (a mount refused) make `spawn` fail.
    pub fn confine(&self, cmd: &mut tokio::process::Command) -> Result<Confinement, SandboxError> {
        self.confine_with_terminal(cmd, None)
            .map(|(confinement, _)| confinement)
    }

    /// [`Sandbox::confine`], making the command's terminal (when given) in
    /// the sandbox's last process before the exec, from the sandbox's own
    /// `/dev/ptmx`. The terminal comes back when the sandbox did not take
    /// it (mode `off`, or no sandbox on this platform): the caller makes
    /// it then.
    pub(crate) fn confine_with_terminal(
        &self,
        cmd: &mut tokio::process::Command,
        terminal: Option<ChildTerminal>,
    ) -> Result<(Confinement, Option<ChildTerminal>), SandboxError> {
        if self.inner.mode == SandboxMode::Off {
            return Ok((Confinement::unconfined(), terminal));
        }
        // Agent sockets that may live outside the hidden paths.
        for name in UNSET_ENV {
            cmd.env_remove(name);
        }
        for (name, value) in &self.inner.proxies.env {
            cmd.env(name, value);
        }
        #[cfg(all(target_os = "linux", feature = "sandbox"))]
        {
            linux::confine(&self.inner, cmd, terminal).map(|confinement| (confinement, None))
        }
        #[cfg(not(all(target_os = "linux", feature = "sandbox")))]
        {
            let _ = cmd;
            Ok((Confinement::unconfined(), terminal))
        }
    }
}

impl Sandbox {
    /// Where the root repositories' indexes stand, before a command, for
    /// [`new_linked_repositories`](Self::new_linked_repositories).
    pub fn index_mark(&self) -> IndexMark {
        self.inner.nested.mark()
    }

    /// After a command: the repositories (their `.git`) it made and staged
    /// as submodules of a root's repository, whose config an unconfined
    /// `git status` there would obey. Each is reported once, and protected
    /// like the others for the commands that follow.
    pub fn new_linked_repositories(&self, mark: &IndexMark) -> Vec<PathBuf> {
        self.inner.nested.new_since(mark)
    }

    /// The line a command's result ends with for such a repository.
    pub fn linked_repository_warning(git: &Path) -> String {
        nested_repos::warning(git)
    }
}

/// What [`Sandbox::confine`] installed for one command.
#[derive(Debug, Clone)]
pub struct Confinement {
    full: bool,
    tree_dies_with_child: bool,
    enforced: String,
    #[cfg(all(target_os = "linux", feature = "sandbox"))]
    failure: Option<Arc<linux::Failure>>,
    #[cfg(all(target_os = "linux", feature = "sandbox"))]
    limits: Option<Arc<linux::CommandLimits>>,
    hit: Arc<OnceLock<Option<LimitHit>>>,
}

impl Confinement {
    fn unconfined() -> Self {
        Confinement {
            full: false,
            tree_dies_with_child: false,
            enforced: "unconfined".to_owned(),
            #[cfg(all(target_os = "linux", feature = "sandbox"))]
            failure: None,
            #[cfg(all(target_os = "linux", feature = "sandbox"))]
            limits: None,
            hit: Arc::default(),
        }
    }

    /// The limit the command reached, once it has ended: `killed_by` is
    /// the signal that ended the spawned child, if one did. From the
    /// kernel's account (the cgroup's events, a death by `SIGXCPU` or
    /// `SIGXFSZ`) or the watchdog's report, never from an exit code; the
    /// first call decides (later ones give the same answer).
    ///
    /// A command that hit one ends with [`LimitHit::line`] as its last
    /// line in the bash tool, e.g. `(sandboxed: killed — memory limit 4G
    /// reached)`.
    pub fn limit_hit(&self, killed_by: Option<i32>) -> Option<LimitHit> {
        *self.hit.get_or_init(|| {
            #[cfg(all(target_os = "linux", feature = "sandbox"))]
            if let (Some(limits), Some(failure)) = (&self.limits, &self.failure) {
                return limits.hit(failure, killed_by);
            }
            let _ = killed_by;
            None
        })
    }

    /// Spawns `cmd`, which [`Sandbox::confine`] prepared (call this rather
    /// than `cmd.spawn()`): where the machine's cgroups allow, the command
    /// is forked by a thread already in the cgroup made for it, which
    /// spares it the move into that cgroup (a wait of several ms on an
    /// idle machine); elsewhere it is `cmd.spawn()`. A failure comes
    /// [explained](Self::explain).
    ///
    /// # Errors
    ///
    /// What `spawn` returns, with the sandbox's failed step in front.
    pub fn spawn(&self, cmd: &mut tokio::process::Command) -> io::Result<tokio::process::Child> {
        #[cfg(all(target_os = "linux", feature = "sandbox"))]
        if let Some(limits) = &self.limits {
            return limits.spawn(cmd).map_err(|e| self.explain(e));
        }
        cmd.spawn().map_err(|e| self.explain(e))
    }

    /// The error of a failed `spawn` with the sandbox's failed step in
    /// front, e.g. `the sandbox could not hide /home/me/.ssh (a tmpfs over
    /// it): Operation not permitted (os error 1)`; any other error comes
    /// back unchanged.
    pub fn explain(&self, error: io::Error) -> io::Error {
        #[cfg(all(target_os = "linux", feature = "sandbox"))]
        if let Some(failure) = &self.failure {
            return failure.explain(error);
        }
        error
    }

    /// Whether every feature the sandbox needs confines the command (what
    /// approval's `auto_allow` may rely on).
    pub fn is_full(&self) -> bool {
        self.full
    }

    /// Whether killing the spawned child (M) kills every process of the
    /// command (a PID namespace of its own). Otherwise the caller kills the
    /// process tree as for an unconfined command.
    pub fn tree_dies_with_child(&self) -> bool {
        self.tree_dies_with_child
    }

    /// What is enforced, one line (see [`SandboxStatus::enforced`]).
    pub fn enforced(&self) -> &str {
        &self.enforced
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::net::UnixListener;

    use super::*;

    /// A host service's socket under `/tmp` is hidden whether the scan ran
    /// on the build's thread (the first use waits for it) or at the first
    /// use (no thread is started with the sandbox off), and the first use
    /// sees sockets bound after the build.
    #[test]
    fn host_sockets_are_hidden_whether_the_scan_ran_on_its_thread_or_at_first_use() {
        let dir = tempfile::Builder::new()
            .prefix("agentcore-hidden-test-")
            .tempdir_in("/tmp")
            .unwrap();
        let before = dir.path().join("before.sock");
        let _before = UnixListener::bind(&before).unwrap();
        let scanned = Sandbox::builder().build().unwrap();
        assert!(scanned.hidden().contains(&before), "{:?}", scanned.hidden());

        let lazy = Sandbox::builder().mode(SandboxMode::Off).build().unwrap();
        let after = dir.path().join("after.sock");
        let _after = UnixListener::bind(&after).unwrap();
        assert!(lazy.hidden().contains(&after), "{:?}", lazy.hidden());
        assert!(lazy.hidden().contains(&before));
    }
}
