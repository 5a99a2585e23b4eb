//! Where a `url` server's OAuth tokens are kept: one file per server name
//! and URL under the user's state directory
//! (`$XDG_STATE_HOME/agentcore/mcp-oauth/`, else
//! `~/.local/state/agentcore/mcp-oauth/`), never in a workspace. The
//! folder is 0700 and each file 0600, written whole to a temporary file
//! and renamed over the old one; a folder or file that is a symbolic link
//! is refused, and so is a file others can read.

use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rmcp::transport::auth::{
    AuthError, CredentialRefreshGuard, CredentialStore, StoredCredentials,
};
use serde::{Deserialize, Serialize};

/// The folder below the state directory that holds the token files.
pub const TOKEN_DIR: &str = "agentcore/mcp-oauth";

/// The largest token file read.
const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// The folder the token files of this user go to: `$XDG_STATE_HOME`
/// (when absolute) or `$HOME/.local/state`, then `agentcore/mcp-oauth`.
pub fn token_dir() -> Result<PathBuf, String> {
    let state = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|home| home.is_absolute())
                .map(|home| home.join(".local/state"))
        })
        .ok_or_else(|| {
            "agentcore keeps OAuth tokens under the user's state directory, and neither XDG_STATE_HOME nor HOME is set to an absolute path; set one of them".to_owned()
        })?;
    Ok(state.join(TOKEN_DIR))
}

/// What the token file keeps besides rmcp's credentials: the
/// authorization server's metadata and the redirect the client was
/// registered with, so that a refresh needs no discovery.
#[derive(Clone, Default, Serialize, Deserialize)]
pub(super) struct Remembered {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) metadata: Option<rmcp::transport::auth::AuthorizationMetadata>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) redirect_uri: Option<String>,
}

/// What one token file holds.
#[derive(Clone, Serialize, Deserialize)]
struct TokenFile {
    /// The server's name and URL the tokens were issued for.
    server: String,
    url: String,
    /// The secret of a client registered dynamically (a pre-registered
    /// client's stays in the policy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_secret: Option<String>,
    #[serde(default)]
    remembered: Remembered,
    credentials: StoredCredentials,
}

/// The token file of one server (by name and URL); rmcp's
/// [`CredentialStore`] over it.
pub struct TokenStore {
    dir: PathBuf,
    file: PathBuf,
    server: String,
    url: String,
    /// The client secret written with the next save.
    client_secret: Mutex<Option<String>>,
    /// The metadata and redirect written with the next save.
    remembered: Mutex<Remembered>,
}

impl std::fmt::Debug for TokenStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenStore")
            .field("file", &self.file)
            .finish_non_exhaustive()
    }
}

impl TokenStore {
    /// The store of server `name` at `url` in [`token_dir`].
    pub fn for_server(name: &str, url: &str) -> Result<Self, String> {
        Ok(Self::in_dir(token_dir()?, name, url))
    }

    /// The store of server `name` at `url` in `dir`.
    pub fn in_dir(dir: PathBuf, name: &str, url: &str) -> Self {
        let key = blake3::hash(format!("{name}\0{url}").as_bytes()).to_hex();
        let file = dir.join(format!(
            "{}-{}.json",
            super::super::sanitize(name),
            &key.as_str()[..16]
        ));
        Self {
            dir,
            file,
            server: name.to_owned(),
            url: url.to_owned(),
            client_secret: Mutex::new(None),
            remembered: Mutex::new(Remembered::default()),
        }
    }

    /// The token file.
    pub fn path(&self) -> &Path {
        &self.file
    }

    /// Sets the client secret kept beside the tokens (a dynamically
    /// registered client's).
    pub fn set_client_secret(&self, secret: Option<String>) {
        *self
            .client_secret
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = secret;
    }

    /// The client secret kept beside the tokens.
    pub fn client_secret(&self) -> Option<String> {
        self.client_secret
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Sets the metadata and redirect kept beside the tokens.
    pub(super) fn remember(&self, remembered: Remembered) {
        *self
            .remembered
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = remembered;
    }

    /// The metadata and redirect kept beside the tokens.
    pub(super) fn remembered(&self) -> Remembered {
        self.remembered
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The stored credentials, `None` when there are none (or they were
    /// issued for another URL under the same name).
    pub fn read(&self) -> Result<Option<StoredCredentials>, String> {
        let Some(file) = self.read_file()? else {
            return Ok(None);
        };
        if file.server != self.server || file.url != self.url {
            return Ok(None);
        }
        // What a sign-in under way set stays (the file is the older).
        {
            let mut secret = self
                .client_secret
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let mut remembered = self
                .remembered
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if secret.is_none() && remembered.metadata.is_none() {
                *secret = file.client_secret;
                *remembered = file.remembered;
            }
        }
        Ok(Some(file.credentials))
    }

    fn read_file(&self) -> Result<Option<TokenFile>, String> {
        let path = &self.file;
        match fs::symlink_metadata(&self.dir) {
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(self.unusable(&self.dir, &err.to_string())),
            Ok(meta) if !meta.is_dir() => {
                return Err(self.unusable(&self.dir, "it is not a plain folder (a symbolic link?)"));
            }
            Ok(_) => {}
        }
        let mut file = match fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
        {
            Ok(file) => file,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(err) if err.raw_os_error() == Some(libc::ELOOP) => {
                return Err(self.unusable(path, "it is a symbolic link"));
            }
            Err(err) => return Err(self.unusable(path, &err.to_string())),
        };
        let meta = file
            .metadata()
            .map_err(|err| self.unusable(path, &err.to_string()))?;
        if !meta.is_file() {
            return Err(self.unusable(path, "it is not a regular file"));
        }
        if meta.mode() & 0o077 != 0 {
            return Err(self.unusable(
                path,
                "others than its owner can read or write it; run `chmod 600` on it or sign in again",
            ));
        }
        let mut text = String::new();
        Read::by_ref(&mut file)
            .take(MAX_FILE_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(|err| self.unusable(path, &err.to_string()))?;
        if text.len() as u64 > MAX_FILE_BYTES {
            return Err(self.unusable(path, "it is larger than 1 MiB"));
        }
        serde_json::from_str(&text).map(Some).map_err(|err| {
            self.unusable(
                path,
                &format!("it is not a token file ({err}); delete it with `agentcore mcp logout`"),
            )
        })
    }

    /// Writes `credentials` (with the client secret): the folder made 0700
    /// if missing, a 0600 temporary file renamed over the old one.
    pub fn write(&self, credentials: StoredCredentials) -> Result<(), String> {
        self.make_dir()?;
        if fs::symlink_metadata(&self.file).is_ok_and(|meta| !meta.is_file()) {
            return Err(self.unusable(&self.file, "it is a symbolic link or not a regular file"));
        }
        let file = TokenFile {
            server: self.server.clone(),
            url: self.url.clone(),
            client_secret: self.client_secret(),
            remembered: self.remembered(),
            credentials,
        };
        let text = serde_json::to_vec_pretty(&file)
            .map_err(|err| self.unusable(&self.file, &err.to_string()))?;
        let mut temp = tempfile::Builder::new()
            .prefix(".tokens-")
            .permissions(fs::Permissions::from_mode(0o600))
            .tempfile_in(&self.dir)
            .map_err(|err| self.unusable(&self.dir, &err.to_string()))?;
        temp.write_all(&text)
            .and_then(|()| temp.as_file().sync_all())
            .map_err(|err| self.unusable(temp.path(), &err.to_string()))?;
        temp.persist(&self.file)
            .map_err(|err| self.unusable(&self.file, &err.error.to_string()))?;
        Ok(())
    }

    /// Deletes the token file; whether there was one.
    pub fn delete(&self) -> Result<bool, String> {
        let _ = fs::remove_file(self.file.with_extension("lock"));
        match fs::remove_file(&self.file) {
            Ok(()) => Ok(true),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(err) => Err(self.unusable(&self.file, &err.to_string())),
        }
    }

    /// Makes the folder (0700, with its missing parents) and checks it: a
    /// folder of this user's, not a symbolic link, closed to others.
    fn make_dir(&self) -> Result<(), String> {
        let dir = &self.dir;
        if let Err(err) = fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
        {
            return Err(self.unusable(dir, &err.to_string()));
        }
        // The folder and `agentcore` above it: not links someone left.
        for path in [Some(dir.as_path()), dir.parent()].into_iter().flatten() {
            let meta =
                fs::symlink_metadata(path).map_err(|e| self.unusable(path, &e.to_string()))?;
            if !meta.is_dir() {
                return Err(self.unusable(path, "it is a symbolic link or not a folder"));
            }
            if meta.uid() != rustix::process::geteuid().as_raw() {
                return Err(self.unusable(path, "it belongs to another user"));
            }
        }
        let meta = fs::symlink_metadata(dir).map_err(|e| self.unusable(dir, &e.to_string()))?;
        if meta.mode() & 0o077 != 0 {
            fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
                .map_err(|e| self.unusable(dir, &e.to_string()))?;
        }
        Ok(())
    }

    /// Waits for the server's refresh lock (a 0600 file beside the
    /// tokens, `flock`ed), so that two agentcore processes do not both
    /// spend a refresh token the server rotates; released when the
    /// returned file is dropped.
    pub fn lock_for_refresh(&self) -> Result<fs::File, String> {
        self.make_dir()?;
        let path = self.file.with_extension("lock");
        let file = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)
            .map_err(|err| self.unusable(&path, &err.to_string()))?;
        rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|err| self.unusable(&path, &err.to_string()))?;
        Ok(file)
    }

    fn unusable(&self, path: &Path, why: &str) -> String {
        format!(
            "the OAuth token store of MCP server {:?} cannot be used: {}: {why}",
            self.server,
            path.display()
        )
    }
}

fn store_error(message: String) -> AuthError {
    AuthError::CredentialStoreError(message)
}

#[async_trait::async_trait]
impl CredentialStore for TokenStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.read().map_err(store_error)
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.write(credentials).map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.delete().map(|_| ()).map_err(store_error)
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let store = Self::in_dir(self.dir.clone(), &self.server, &self.url);
        let lock = tokio::task::spawn_blocking(move || store.lock_for_refresh())
            .await
            .map_err(|err| store_error(err.to_string()))?
            .map_err(store_error)?;
        Ok(Some(CredentialRefreshGuard::new(lock)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn credentials(token: &str) -> StoredCredentials {
        let response = serde_json::from_value(serde_json::json!({
            "access_token": token, "token_type": "Bearer", "expires_in": 3600,
            "refresh_token": "r-1"
        }))
        .unwrap();
        StoredCredentials::new("client-1".into(), Some(response), vec!["a".into()], Some(1))
    }

    fn access_token(credentials: &StoredCredentials) -> String {
        use oauth2::TokenResponse;
        credentials
            .token_response
            .as_ref()
            .unwrap()
            .access_token()
            .secret()
            .clone()
    }

    #[test]
    fn tokens_are_written_0600_in_a_0700_folder_and_read_back() {
        let state = tempfile::tempdir().unwrap();
        let dir = state.path().join("nested/agentcore/mcp-oauth");
        let store = TokenStore::in_dir(dir.clone(), "gh", "https://mcp.example.com/mcp");
        assert!(store.read().unwrap().is_none());
        store.set_client_secret(Some("s3".into()));
        store.write(credentials("t-1")).unwrap();
        let dir_mode = fs::metadata(&dir).unwrap().mode() & 0o777;
        assert_eq!(dir_mode, 0o700);
        let file_mode = fs::metadata(store.path()).unwrap().mode() & 0o777;
        assert_eq!(file_mode, 0o600);
        assert!(store.path().starts_with(&dir));
        let again = TokenStore::in_dir(dir.clone(), "gh", "https://mcp.example.com/mcp");
        assert_eq!(access_token(&again.read().unwrap().unwrap()), "t-1");
        assert_eq!(again.client_secret().as_deref(), Some("s3"));
        // Another URL under the same name has tokens of its own.
        let other = TokenStore::in_dir(dir, "gh", "https://other.example.com/mcp");
        assert_ne!(other.path(), store.path());
        assert!(other.read().unwrap().is_none());
        assert!(store.delete().unwrap());
        assert!(!store.delete().unwrap());
        assert!(store.read().unwrap().is_none());
    }

    #[test]
    fn a_write_replaces_the_file_whole_and_leaves_no_temporary_file() {
        let state = tempfile::tempdir().unwrap();
        let store = TokenStore::in_dir(state.path().join("s"), "a", "http://127.0.0.1/mcp");
        store.write(credentials("first")).unwrap();
        let before = fs::metadata(store.path()).unwrap().ino();
        store.write(credentials("second")).unwrap();
        // Renamed over, not written in place: a reader sees one or the other.
        assert_ne!(fs::metadata(store.path()).unwrap().ino(), before);
        assert_eq!(access_token(&store.read().unwrap().unwrap()), "second");
        let names: Vec<_> = fs::read_dir(state.path().join("s"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn an_open_folder_is_closed_on_write() {
        let state = tempfile::tempdir().unwrap();
        let dir = state.path().join("s");
        fs::create_dir(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        let store = TokenStore::in_dir(dir.clone(), "a", "http://127.0.0.1/mcp");
        store.write(credentials("t")).unwrap();
        assert_eq!(fs::metadata(&dir).unwrap().mode() & 0o777, 0o700);
    }

    #[test]
    fn symlinked_store_paths_are_refused() {
        let state = tempfile::tempdir().unwrap();
        let elsewhere = state.path().join("elsewhere");
        fs::create_dir(&elsewhere).unwrap();
        // The folder is a link.
        let linked_dir = state.path().join("linked");
        std::os::unix::fs::symlink(&elsewhere, &linked_dir).unwrap();
        let store = TokenStore::in_dir(linked_dir, "a", "http://127.0.0.1/mcp");
        let err = store.write(credentials("t")).unwrap_err();
        assert!(err.contains("symbolic link"), "{err}");
        assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 0);
        let err = store.read().unwrap_err();
        assert!(err.contains("symbolic link"), "{err}");
        // The file is a link to a file someone else chose.
        let dir = state.path().join("real");
        let store = TokenStore::in_dir(dir.clone(), "a", "http://127.0.0.1/mcp");
        store.write(credentials("t")).unwrap();
        let target = elsewhere.join("target.json");
        fs::copy(store.path(), &target).unwrap();
        fs::remove_file(store.path()).unwrap();
        std::os::unix::fs::symlink(&target, store.path()).unwrap();
        let err = store.read().unwrap_err();
        assert!(err.contains("symbolic link"), "{err}");
        let err = store.write(credentials("t2")).unwrap_err();
        assert!(err.contains("symbolic link"), "{err}");
    }

    #[test]
    fn one_process_at_a_time_refreshes() {
        let state = tempfile::tempdir().unwrap();
        let dir = state.path().join("s");
        let store = TokenStore::in_dir(dir.clone(), "a", "http://127.0.0.1/mcp");
        let held = store.lock_for_refresh().unwrap();
        let lock = store.path().with_extension("lock");
        assert_eq!(fs::metadata(&lock).unwrap().mode() & 0o777, 0o600);
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || {
            // Another open file description, as another process has.
            let other = TokenStore::in_dir(dir, "a", "http://127.0.0.1/mcp");
            let _lock = other.lock_for_refresh().unwrap();
            tx.send(()).unwrap();
        });
        assert!(
            rx.recv_timeout(std::time::Duration::from_millis(200))
                .is_err()
        );
        drop(held);
        rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
        waiter.join().unwrap();
    }

    #[test]
    fn a_file_others_can_read_is_refused_with_the_fix() {
        let state = tempfile::tempdir().unwrap();
        let store = TokenStore::in_dir(state.path().join("s"), "a", "http://127.0.0.1/mcp");
        store.write(credentials("t")).unwrap();
        fs::set_permissions(store.path(), fs::Permissions::from_mode(0o644)).unwrap();
        let err = store.read().unwrap_err();
        assert!(err.contains("chmod 600"), "{err}");
    }

    #[test]
    fn a_damaged_file_says_how_to_start_over() {
        let state = tempfile::tempdir().unwrap();
        let store = TokenStore::in_dir(state.path().join("s"), "a", "http://127.0.0.1/mcp");
        store.write(credentials("t")).unwrap();
        fs::write(store.path(), "{not json").unwrap();
        let err = store.read().unwrap_err();
        assert!(err.contains("agentcore mcp logout"), "{err}");
    }
}
