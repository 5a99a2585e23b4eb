//! Which paths a sandbox hides, protects and lets the command write: the
//! default lists and the look-ups done once, before any command runs.

use std::fs;
use std::path::{Path, PathBuf};

use crate::access::{PROTECTED_IN_ROOT, is_protected_entry};

/// The credential stores of a user's home hidden by default, relative to
/// the home directory (`.cargo/credentials*` is expanded by
/// [`default_hidden`]).
pub const DEFAULT_HIDDEN_IN_HOME: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    // Tokens of the tools developers log in with.
    ".config/gh",
    ".config/hub",
    ".config/glab-cli",
    ".claude/.credentials.json",
    ".codex/auth.json",
    ".vault-token",
    ".terraform.d/credentials.tfrc.json",
    ".config/op",
    ".password-store",
    // Git's credential cache (its daemon's socket) and store, Claude
    // Code's account file, Docker Desktop's and 1Password's agent sockets.
    ".cache/git/credential",
    ".config/git/credentials",
    ".claude.json",
    ".docker/run",
    ".1password",
    // agentcore's own: the OAuth tokens of mounted MCP servers
    // (`$XDG_STATE_HOME` elsewhere is added by [`default_hidden`]'s caller).
    ".local/state/agentcore/mcp-oauth",
];

/// Where agentcore keeps the OAuth tokens of mounted MCP servers, below
/// the state directory (`$XDG_STATE_HOME`, else `~/.local/state`); the
/// MCP client's token store (`mcp::client::oauth::TOKEN_DIR`) is the same.
pub(crate) const OAUTH_TOKEN_DIR: &str = "agentcore/mcp-oauth";

/// Sockets outside the home that give a command more authority than the
/// user (the docker daemon's is root), hidden by default.
const DEFAULT_HIDDEN_SOCKETS: &[&str] = &["/run/docker.sock", "/var/run/docker.sock"];

/// Where services of the machine keep their UNIX sockets, which Landlock
/// does not govern below ABI 9: hidden whole when commands have no network.
pub(super) const SYSTEM_SOCKET_DIRS: &[&str] = &["/run", "/var/run", "/tmp/.X11-unix"];

/// The sockets and socket folders of services that give a command more
/// authority than the user (systemd, the system bus, container engines,
/// other users' sessions, the display), hidden also when commands have the
/// network, or when `/run` holds a writable root and cannot be hidden whole.
pub(super) const PRIVILEGED_SOCKETS: &[&str] = &[
    "/run/systemd/private",
    "/run/systemd/userdb",
    "/run/systemd/io.system.ManagedOOM",
    "/run/dbus",
    "/run/containerd",
    "/run/docker",
    "/run/podman",
    "/run/crio",
    "/run/libvirt",
    "/run/snapd.socket",
    "/run/snapd-snap.socket",
    "/run/user",
    "/tmp/.X11-unix",
];

/// The machine's socket paths to hide: [`SYSTEM_SOCKET_DIRS`] without
/// network, [`PRIVILEGED_SOCKETS`] with it, and in either case none that
/// holds one of `keep` (a writable root, the temporary directory): such a
/// folder gives way to the sockets in it.
pub(super) fn system_hidden(network: bool, keep: &[PathBuf]) -> Vec<PathBuf> {
    let holds_kept = |path: &Path| {
        let real = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        keep.iter()
            .any(|k| k.starts_with(&real) || k.starts_with(path))
    };
    let mut hidden = Vec::new();
    let lists: &[&[&str]] = if network {
        &[PRIVILEGED_SOCKETS]
    } else {
        &[SYSTEM_SOCKET_DIRS, PRIVILEGED_SOCKETS]
    };
    for list in lists {
        for path in list.iter().map(PathBuf::from) {
            if !holds_kept(&path) && !hidden.contains(&path) {
                hidden.push(path);
            }
        }
    }
    hidden
}

/// Folders scanned for UNIX sockets when a sandbox is built (tmux,
/// ssh-agent, editors and test services keep theirs there).
pub(super) const SOCKET_SCAN_DIRS: &[&str] = &["/tmp", "/var/tmp"];

/// How deep and how many entries the walk of [`sockets_under`] looks at:
/// the kernel's list finds sockets at any depth, the walk only those it
/// misses (see there), which live near the top.
const SOCKET_SCAN_DEPTH: usize = 3;
/// How deep the walk goes when the kernel's list cannot be read.
const SOCKET_SCAN_DEPTH_ALONE: usize = 4;
const SOCKET_SCAN_LIMIT: usize = 20_000;

/// The kernel's list of bound UNIX sockets (this network namespace's).
const PROC_NET_UNIX: &str = "/proc/net/unix";

/// The UNIX sockets under `dirs` now, except under `keep` (the commands'
/// own folders): hidden, so that a command cannot reach the services
/// listening on them.
///
/// Two sources, so that the cost does not grow with what `dirs` hold (a
/// busy `/tmp` of tens of thousands of entries made a full walk cost tens
/// of milliseconds at every session start):
/// - every socket bound in this network namespace, at any depth, from
///   `/proc/net/unix` (one read);
/// - a walk of the top [`SOCKET_SCAN_DEPTH`] levels (symbolic links not
///   followed, at most [`SOCKET_SCAN_LIMIT`] entries) for socket files the
///   list does not show: those bound in another network namespace (a
///   container's, or systemd's `PrivateTmp` folders) or by a relative path;
///   [`SOCKET_SCAN_DEPTH_ALONE`] levels when the list cannot be read.
pub(super) fn sockets_under(dirs: &[&str], keep: &[PathBuf]) -> Vec<PathBuf> {
    let (mut found, depth) = match fs::read(PROC_NET_UNIX) {
        Ok(listed) => (bound_sockets_under(&listed, dirs, keep), SOCKET_SCAN_DEPTH),
        Err(_) => (Vec::new(), SOCKET_SCAN_DEPTH_ALONE),
    };
    for path in walked_sockets_under(dirs, keep, depth) {
        if !found.contains(&path) {
            found.push(path);
        }
    }
    found
}

/// The socket paths of a `/proc/net/unix` listing that lie under `dirs`
/// and not under `keep`, whose files are sockets now.
fn bound_sockets_under(listing: &[u8], dirs: &[&str], keep: &[PathBuf]) -> Vec<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::FileTypeExt;
    let mut found: Vec<PathBuf> = Vec::new();
    // Each line after the header: seven fields, then the path (which may
    // hold spaces) for sockets bound to one; abstract names start `@`.
    for line in listing.split(|b| *b == b'\n').skip(1) {
        let mut rest = line;
        let mut fields = 0;
        while fields < 7 {
            let start = rest.iter().position(|b| *b != b' ').unwrap_or(rest.len());
            rest = &rest[start..];
            let end = rest.iter().position(|b| *b == b' ').unwrap_or(rest.len());
            rest = &rest[end..];
            fields += 1;
        }
        let path = match rest.iter().position(|b| *b != b' ') {
            Some(start) => &rest[start..],
            None => continue,
        };
        if path.first() != Some(&b'/') {
            continue;
        }
        let path = PathBuf::from(std::ffi::OsStr::from_bytes(path));
        let under = dirs.iter().any(|d| path.starts_with(d));
        if !under || keep.iter().any(|k| path.starts_with(k)) || found.contains(&path) {
            continue;
        }
        // A socket whose file was removed (or replaced) stays listed.
        if fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_socket()) {
            found.push(path);
        }
    }
    found
}

/// The socket files in the top `max_depth` levels of `dirs`.
fn walked_sockets_under(dirs: &[&str], keep: &[PathBuf], max_depth: usize) -> Vec<PathBuf> {
    use std::os::unix::fs::FileTypeExt;
    let mut found = Vec::new();
    let mut seen = 0usize;
    let mut stack: Vec<(PathBuf, usize)> = dirs.iter().map(|d| (PathBuf::from(d), 0)).collect();
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > SOCKET_SCAN_LIMIT {
                return found;
            }
            let path = entry.path();
            if keep.iter().any(|k| path.starts_with(k)) {
                continue;
            }
            match entry.file_type() {
                Ok(t) if t.is_socket() => found.push(path),
                Ok(t) if t.is_dir() && depth + 1 < max_depth => {
                    stack.push((path, depth + 1));
                }
                _ => {}
            }
        }
    }
    found
}

/// The default hidden paths for `home`: [`DEFAULT_HIDDEN_IN_HOME`], every
/// `~/.cargo/credentials*` present, the docker sockets and
/// `$XDG_RUNTIME_DIR` when given (it holds the D-Bus and ssh-agent
/// sockets). Paths that do not exist are kept: a sandbox skips them when
/// the mounts are planned.
pub fn default_hidden(home: &Path, xdg_runtime_dir: Option<&Path>) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = DEFAULT_HIDDEN_IN_HOME
        .iter()
        .map(|rel| home.join(rel))
        .collect();
    if let Ok(entries) = fs::read_dir(home.join(".cargo")) {
        let mut credentials: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().starts_with("credentials"))
            .map(|e| e.path())
            .collect();
        credentials.sort();
        paths.extend(credentials);
    }
    paths.extend(DEFAULT_HIDDEN_SOCKETS.iter().map(PathBuf::from));
    if let Some(dir) = xdg_runtime_dir {
        paths.push(dir.to_path_buf());
    }
    paths
}

/// Entries [`protected_below`] looks at, at most, per root.
const PROTECTED_WALK_LIMIT: usize = 100_000;

/// The `.git` entries and `.env*` files below `root` at any depth (not
/// its own, which [`default_protected`] finds when each command starts),
/// as they are now: the repositories and environment files of a folder of
/// projects or a vendored checkout. Symbolic links are not followed
/// (a `.env` link is listed, and a sandbox protects its target), and
/// `.git` folders are not entered; at most [`PROTECTED_WALK_LIMIT`]
/// entries are looked at.
pub(super) fn protected_below(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut seen = 0usize;
    let mut stack: Vec<PathBuf> = match fs::read_dir(root) {
        Ok(entries) => entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter(|e| e.file_name() != ".git")
            .map(|e| e.path())
            .collect(),
        Err(_) => return found,
    };
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > PROTECTED_WALK_LIMIT {
                return found;
            }
            let name = entry.file_name();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if is_protected_entry(&name, kind.is_dir()) {
                found.push(entry.path());
            } else if kind.is_dir() {
                stack.push(entry.path());
            }
        }
    }
    found
}

/// The paths inside a writable root protected by default:
/// `PROTECTED_IN_ROOT` (`.git`, `.claude`) and the `.env*` files present now (a mount needs
/// an existing path, so a `.env` created later is not protected).
pub fn default_protected(root: &Path) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    for name in PROTECTED_IN_ROOT {
        let path = root.join(name);
        if path.symlink_metadata().is_ok() {
            paths.push(path);
        }
    }
    if let Ok(entries) = fs::read_dir(root) {
        let mut envs: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().starts_with(".env"))
            // A link too: the sandbox protects what it points to.
            .filter(|e| e.file_type().is_ok_and(|t| !t.is_dir()))
            .map(|e| e.path())
            .collect();
        envs.sort();
        paths.extend(envs);
    }
    paths
}

/// The session folders of other agentcore sessions (saved output, other
/// sandboxes' temporary directories) in `dirs`, not `own`: hidden from a
/// command, so that a session's commands cannot read another session's
/// `$TMPDIR` or output, even of the same user. Looked up when each command
/// starts.
#[cfg_attr(not(all(target_os = "linux", feature = "sandbox")), allow(dead_code))]
pub(super) fn other_sessions(dirs: &[&Path], own: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for dir in dirs {
        let Ok(entries) = fs::read_dir(dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let session = name.starts_with(crate::process::OUTPUT_PREFIX)
                || name.starts_with(crate::process::SANDBOX_PREFIX);
            if !session || !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let path = entry.path();
            if path != own && !found.contains(&path) {
                found.push(path);
            }
        }
    }
    found
}

/// A path to mount over, split by what covers it: a directory gets an empty
/// tmpfs, anything else (file, socket, device) a bind of `/dev/null`.
#[cfg_attr(not(all(target_os = "linux", feature = "sandbox")), allow(dead_code))] // used by the Linux sandbox
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Cover {
    Dir(PathBuf),
    File(PathBuf),
}

/// The paths of `paths` that exist (following symlinks, as `mount` does),
/// canonical and without duplicates, in their first order, each with the
/// cover its kind needs.
#[cfg_attr(not(all(target_os = "linux", feature = "sandbox")), allow(dead_code))]
pub(crate) fn existing(paths: &[PathBuf]) -> Vec<Cover> {
    // A set: with a hundred sockets listed (a busy `/tmp`), comparing each
    // with every one seen was a third of the plan's time.
    let mut seen: std::collections::HashSet<PathBuf> = std::collections::HashSet::new();
    let mut covers = Vec::new();
    for path in paths {
        // One `stat` first: most listed paths do not exist, and resolving
        // them costs a `readlink` per component. It follows links, as the
        // canonical path does: its kind is the kind of what is covered.
        let Ok(meta) = fs::metadata(path) else {
            continue;
        };
        let Ok(real) = fs::canonicalize(path) else {
            continue;
        };
        if !seen.insert(real.clone()) {
            continue;
        }
        covers.push(if meta.is_dir() {
            Cover::Dir(real)
        } else {
            Cover::File(real)
        });
    }
    covers
}

/// The text written to `/proc/PID/uid_map` or `gid_map`: the id mapped to
/// itself, or for root every id to itself (`0 0 4294967295`), so that files
/// owned by other users stay accessible as outside.
#[cfg_attr(not(all(target_os = "linux", feature = "sandbox")), allow(dead_code))]
pub(crate) fn id_map(id: u32, everything: bool) -> String {
    if everything {
        "0 0 4294967295".to_owned()
    } else {
        format!("{id} {id} 1")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listening_socket_deep_below_is_found_and_one_in_keep_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let deep = dir.path().join("a/b/c/d");
        fs::create_dir_all(&deep).unwrap();
        let kept = dir.path().join("kept");
        fs::create_dir_all(&kept).unwrap();
        let _deep = std::os::unix::net::UnixListener::bind(deep.join("svc.sock")).unwrap();
        let _kept = std::os::unix::net::UnixListener::bind(kept.join("own.sock")).unwrap();
        // A socket file nobody listens on any more, near the top: the walk.
        drop(std::os::unix::net::UnixListener::bind(dir.path().join("left.sock")).unwrap());
        let root = dir.path().to_str().unwrap();
        let found = sockets_under(&[root], std::slice::from_ref(&kept));
        assert!(found.contains(&deep.join("svc.sock")), "{found:?}");
        assert!(found.contains(&dir.path().join("left.sock")), "{found:?}");
        assert!(!found.iter().any(|p| p.starts_with(&kept)), "{found:?}");
    }

    #[test]
    fn the_kernels_list_is_read_with_spaces_abstract_names_and_junk() {
        let dir = tempfile::tempdir().unwrap();
        let spaced = dir.path().join("with space.sock");
        let _l = std::os::unix::net::UnixListener::bind(&spaced).unwrap();
        let root = dir.path().to_str().unwrap();
        let listing = format!(
            "Num       RefCount Protocol Flags    Type St Inode Path\n\
             0000000000000000: 00000002 00000000 00010000 0001 01 1 {}\n\
             0000000000000000: 00000002 00000000 00010000 0001 01 2 @abstract{root}/x\n\
             0000000000000000: 00000002 00000000 00010000 0001 01 3\n\
             garbage\n\
             0000000000000000: 00000002 00000000 00010000 0001 01 4 {root}/gone.sock\n",
            spaced.display()
        );
        let found = bound_sockets_under(listing.as_bytes(), &[root], &[]);
        assert_eq!(found, vec![spaced]);
    }

    #[test]
    fn default_hidden_are_home_relative_and_expand_cargo_credentials() {
        let home = tempfile::tempdir().unwrap();
        fs::create_dir(home.path().join(".cargo")).unwrap();
        fs::write(home.path().join(".cargo/credentials.toml"), "t").unwrap();
        fs::write(home.path().join(".cargo/config.toml"), "").unwrap();
        let hidden = default_hidden(home.path(), Some(Path::new("/run/user/1000")));
        assert_eq!(hidden[0], home.path().join(".ssh"));
        assert!(hidden.contains(&home.path().join(".config/gcloud")));
        assert!(hidden.contains(&home.path().join(".docker/config.json")));
        assert!(hidden.contains(&home.path().join(".config/gh")));
        assert!(hidden.contains(&home.path().join(".claude/.credentials.json")));
        assert!(hidden.contains(&home.path().join(".cargo/credentials.toml")));
        assert!(!hidden.contains(&home.path().join(".cargo/config.toml")));
        assert!(hidden.contains(&PathBuf::from("/run/docker.sock")));
        assert_eq!(hidden.last().unwrap(), Path::new("/run/user/1000"));
    }

    #[test]
    fn protected_are_git_and_existing_env_files() {
        let root = tempfile::tempdir().unwrap();
        fs::create_dir(root.path().join(".git")).unwrap();
        fs::write(root.path().join(".env"), "").unwrap();
        fs::write(root.path().join(".env.local"), "").unwrap();
        fs::create_dir(root.path().join(".envs")).unwrap();
        fs::write(root.path().join("env"), "").unwrap();
        assert_eq!(
            default_protected(root.path()),
            vec![
                root.path().join(".git"),
                root.path().join(".env"),
                root.path().join(".env.local"),
            ]
        );
    }

    #[test]
    fn repositories_and_env_files_below_a_root_are_found_but_not_inside_git() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for d in [".git/objects", "lib/.git", "app/deep/er", "node"] {
            fs::create_dir_all(root.join(d)).unwrap();
        }
        for f in [
            ".env",
            "app/.env.local",
            "app/deep/er/.envrc",
            "app/env",
            ".git/objects/.env",
        ] {
            fs::write(root.join(f), "").unwrap();
        }
        fs::write(root.join("node/.git"), "gitdir: ../.git\n").unwrap();
        std::os::unix::fs::symlink("app/env", root.join("app/deep/.env")).unwrap();
        let mut found = protected_below(root);
        found.sort();
        let expected: Vec<PathBuf> = [
            "app/.env.local",
            "app/deep/.env",
            "app/deep/er/.envrc",
            "lib/.git",
            "node/.git",
        ]
        .iter()
        .map(|p| root.join(p))
        .collect();
        assert_eq!(found, expected);
    }

    #[test]
    fn existing_drops_missing_and_duplicates_and_splits_by_kind() {
        let dir = tempfile::tempdir().unwrap();
        let real = fs::canonicalize(dir.path()).unwrap();
        fs::create_dir(real.join("d")).unwrap();
        fs::write(real.join("f"), "").unwrap();
        std::os::unix::fs::symlink(real.join("d"), real.join("link")).unwrap();
        let covers = existing(&[
            real.join("d"),
            real.join("missing"),
            real.join("f"),
            real.join("link"),
        ]);
        assert_eq!(
            covers,
            vec![Cover::Dir(real.join("d")), Cover::File(real.join("f"))]
        );
    }

    #[test]
    fn id_maps_are_identity() {
        assert_eq!(id_map(1000, false), "1000 1000 1");
        assert_eq!(id_map(0, true), "0 0 4294967295");
    }
}
