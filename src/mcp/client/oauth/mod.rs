//! OAuth 2.1 for `url` servers, as the MCP authorization specification
//! describes it, on rmcp's `auth` building blocks
//! ([`AuthorizationManager`]): discovery from a 401's `WWW-Authenticate`
//! (`resource_metadata`, `scope`) and the protected-resource metadata
//! (RFC 9728, with its well-known fallbacks), the authorization server's
//! metadata (RFC 8414, OpenID discovery), a client registered beforehand,
//! a client-id metadata document or dynamic registration (RFC 7591), the
//! authorization-code flow with PKCE (S256) through the person's browser and
//! a loopback redirect, the `resource` parameter (RFC 8707), refresh, and
//! step-up on `insufficient_scope`.
//!
//! Tokens live in a [`TokenStore`] under the user's state directory. A
//! session signs in only when a person is there ([`SignIn`]); otherwise a
//! server that wants authorization fails its mount with the command to run,
//! `agentcore mcp login NAME`.

mod redirect;
mod store;

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use oauth2::TokenResponse;
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, CredentialStore, OAuthClientConfig, OAuthHttpClient,
    OAuthHttpClientFuture, OAuthHttpRequest, StoredCredentials,
};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use store::Remembered;
pub use store::{TOKEN_DIR, TokenStore, token_dir};

use super::config::McpServerConfig;

/// How long a sign-in waits for the browser's redirect by default.
pub const DEFAULT_SIGN_IN_TIMEOUT: Duration = Duration::from_secs(300);

/// The name agentcore registers under.
const CLIENT_NAME: &str = "agentcore";

/// The largest answer of an authorization server read.
const MAX_OAUTH_BODY: usize = 1024 * 1024;

/// How long one request to an authorization server may take.
const OAUTH_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// What to do with an authorization URL a person must open.
type Opener = Arc<dyn Fn(&str, &str) + Send + Sync>;

/// A person who can sign in: how the authorization URL reaches them, and
/// how long the redirect is waited for.
#[derive(Clone)]
pub struct SignIn {
    open: Opener,
    timeout: Duration,
}

impl std::fmt::Debug for SignIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignIn")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl SignIn {
    /// The person at this terminal: the URL is printed on stderr and
    /// opened with `$BROWSER` (when set) or `xdg-open`.
    pub fn browser() -> Self {
        Self::with_opener(|server, url| {
            // Not `eprintln!`: a closed stderr must not panic.
            let _ = writeln!(
                std::io::stderr(),
                "agentcore: MCP server {server:?} asks you to sign in. Open this URL in a browser (agentcore waits for the sign-in):\n  {url}"
            );
            open_in_browser(url);
        })
    }

    /// `open(server, url)` shows the URL to the person (a test follows it).
    pub fn with_opener(open: impl Fn(&str, &str) + Send + Sync + 'static) -> Self {
        Self {
            open: Arc::new(open),
            timeout: DEFAULT_SIGN_IN_TIMEOUT,
        }
    }

    /// How long the browser's redirect is waited for.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

/// Opens `url` with `$BROWSER` (a command; `%s` in it stands for the URL)
/// or `xdg-open`, without waiting for it.
fn open_in_browser(url: &str) {
    let mut command = browser_command(std::env::var("BROWSER").ok(), url);
    command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    open_with(command);
}

/// The command that opens `url` with `browser` (`$BROWSER`), or with
/// `xdg-open` when there is none.
fn browser_command(browser: Option<String>, url: &str) -> tokio::process::Command {
    match browser.filter(|b| !b.trim().is_empty()) {
        // The URL comes from the authorization server: it reaches the shell
        // only as `$1`, never as text in the command (a `$(…)` in it, within
        // a `"%s"` of the user's, would otherwise run).
        Some(browser) => {
            let script = if browser.contains("%s") {
                browser.replace("%s", "\"$1\"")
            } else {
                format!("{browser} \"$1\"")
            };
            let mut command = tokio::process::Command::new("sh");
            command.arg("-c").arg(script).arg("sh").arg(url);
            command
        }
        None => {
            let mut command = tokio::process::Command::new("xdg-open");
            command.arg(url);
            command
        }
    }
}

/// Starts `command` and reaps it in the background.
fn open_with(mut command: tokio::process::Command) {
    match command.spawn() {
        Ok(mut child) => {
            // Reaped when it exits; the sign-in does not wait for it.
            tokio::spawn(async move {
                let _ = child.wait().await;
            });
        }
        Err(err) => {
            let _ = writeln!(
                std::io::stderr(),
                "agentcore: no browser could be started ({err}); open the URL above yourself"
            );
        }
    }
}

/// rmcp's OAuth requests through the server's own HTTP client (rustls, its
/// `ca_file`, no proxy, no redirects), answers capped at 1 MiB.
struct OAuthHttp(reqwest::Client);

impl OAuthHttpClient for OAuthHttp {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(async move {
            let boxed = |e: &dyn std::fmt::Display| -> rmcp::transport::OAuthHttpClientError {
                e.to_string().into()
            };
            let timeout = request.timeout.unwrap_or(OAUTH_REQUEST_TIMEOUT);
            let mut request = reqwest::Request::try_from(request.request).map_err(|e| boxed(&e))?;
            *request.timeout_mut() = Some(timeout.min(OAUTH_REQUEST_TIMEOUT));
            let mut response = self.0.execute(request).await.map_err(|e| boxed(&e))?;
            let mut builder = http::Response::builder().status(response.status());
            for (name, value) in response.headers() {
                builder = builder.header(name, value);
            }
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await.map_err(|e| boxed(&e))? {
                if body.len() + chunk.len() > MAX_OAUTH_BODY {
                    return Err(boxed(
                        &"the authorization server's answer is larger than 1 MiB",
                    ));
                }
                body.extend_from_slice(&chunk);
            }
            builder.body(body).map_err(|e| boxed(&e))
        })
    }
}

/// The OAuth state of one `url` server: its token store and rmcp's
/// authorization manager, shared by the server's transport.
pub(crate) struct ServerAuth {
    config: McpServerConfig,
    store: Arc<TokenStore>,
    manager: tokio::sync::Mutex<AuthorizationManager>,
    /// Whether the manager knows the client (set up from the token file or
    /// by a sign-in).
    ready: std::sync::atomic::AtomicBool,
    sign_in: Option<SignIn>,
    /// Sign-ins asked for by the server's refusals so far.
    asked: std::sync::atomic::AtomicU32,
}

/// How many times a server's refusals (401, or 403 `insufficient_scope`)
/// may send the person to sign in during one session: a server that
/// refuses every token it is given does not open the browser forever.
const MAX_SIGN_INS: u32 = 3;

/// The store as rmcp's credential store, shared with [`ServerAuth`] (and
/// the metadata kept beside the credentials).
struct Shared(Arc<TokenStore>);

#[async_trait::async_trait]
impl CredentialStore for Shared {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.0.load().await
    }
    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.0.save(credentials).await
    }
    async fn clear(&self) -> Result<(), AuthError> {
        self.0.clear().await
    }
}

/// Whether `config`'s static `headers` carry an `Authorization` (which
/// wins over stored tokens: OAuth is then not used).
pub(crate) fn has_static_authorization(config: &McpServerConfig) -> bool {
    config
        .headers
        .keys()
        .any(|name| name.eq_ignore_ascii_case("authorization"))
}

impl ServerAuth {
    /// The OAuth state of `config`'s server, over its token file.
    pub(crate) async fn new(
        config: &McpServerConfig,
        client: reqwest::Client,
        sign_in: Option<SignIn>,
    ) -> Result<Arc<Self>, String> {
        let url = config.url.clone().unwrap_or_default();
        let store = Arc::new(TokenStore::for_server(&config.name, &url)?);
        Self::with_store(config, client, sign_in, store).await
    }

    async fn with_store(
        config: &McpServerConfig,
        client: reqwest::Client,
        sign_in: Option<SignIn>,
        store: Arc<TokenStore>,
    ) -> Result<Arc<Self>, String> {
        let url = config.url.clone().unwrap_or_default();
        let mut manager = AuthorizationManager::new_with_oauth_http_client(
            url.as_str(),
            Arc::new(OAuthHttp(client)),
        )
        .await
        .map_err(|e| format!("MCP server {:?}: {e}", config.name))?;
        manager.set_credential_store(Shared(store.clone()));
        Ok(Arc::new(Self {
            config: config.clone(),
            store,
            manager: tokio::sync::Mutex::new(manager),
            ready: std::sync::atomic::AtomicBool::new(false),
            sign_in,
            asked: std::sync::atomic::AtomicU32::new(0),
        }))
    }

    fn name(&self) -> &str {
        &self.config.name
    }

    /// Whether tokens are stored for the server.
    pub(crate) fn has_tokens(&self) -> bool {
        matches!(self.store.read(), Ok(Some(c)) if c.token_response.is_some())
    }

    /// Whether tokens can be had when the server asks: a person can sign
    /// in, or the entry has client credentials.
    pub(crate) fn can_sign_in(&self) -> bool {
        self.sign_in.is_some() || self.uses_client_credentials()
    }

    /// Whether the entry says machine to machine (`client_credentials`).
    fn uses_client_credentials(&self) -> bool {
        self.config
            .oauth
            .as_ref()
            .is_some_and(|oauth| oauth.client_credentials)
    }

    /// Tokens for the server: the `client_credentials` grant, or a person's
    /// sign-in (a step-up asks for more scope).
    pub(crate) async fn authorize(
        &self,
        challenge: Option<&str>,
        step_up: bool,
    ) -> Result<String, String> {
        if self.uses_client_credentials() {
            self.client_credentials(challenge).await
        } else {
            self.sign_in(challenge, step_up).await
        }
    }

    /// The `client_credentials` grant (SEP-1046) with the entry's client:
    /// discovery as for a sign-in, the secret sent as the authorization
    /// server's metadata asks (HTTP Basic, or in the body), the `resource`.
    async fn client_credentials(&self, challenge: Option<&str>) -> Result<String, String> {
        use rmcp::transport::auth::ClientCredentialsConfig;
        let name = self.name().to_owned();
        let fail = |what: &str, err: &dyn std::fmt::Display| {
            format!(
                "MCP server {name:?}: getting a token with the client credentials failed: {what}: {err}"
            )
        };
        let oauth = self.config.oauth.clone().unwrap_or_default();
        let (Some(client_id), Some(client_secret)) = (oauth.client_id, oauth.client_secret) else {
            return Err(format!(
                "MCP server {name:?}: `oauth.client_credentials` needs `client_id` and `client_secret`"
            ));
        };
        let mut manager = self.manager.lock().await;
        let metadata = manager
            .resolve_metadata_from_challenge(challenge)
            .await
            .map_err(|e| fail("the server's authorization metadata cannot be read", &e))?
            .metadata;
        manager.set_metadata(metadata.clone());
        let scopes = manager.select_initial_scopes(&[]).await;
        let grant = ClientCredentialsConfig::ClientSecret {
            client_id,
            client_secret,
            scopes,
            resource: self.config.url.clone(),
        };
        manager
            .validate_client_credentials_metadata(&grant)
            .map_err(|e| fail("the authorization server does not take them", &e))?;
        manager
            .configure_client_credentials(&grant)
            .map_err(|e| fail("the OAuth client cannot be set up", &e))?;
        self.store.set_client_secret(None);
        self.store.remember(Remembered {
            metadata: Some(metadata),
            redirect_uri: None,
        });
        let token = manager
            .exchange_client_credentials(&grant)
            .await
            .map_err(|e| fail("the token endpoint refused", &e))?;
        self.ready.store(true, std::sync::atomic::Ordering::Release);
        Ok(token.access_token().secret().clone())
    }

    /// Whether a refusal may get new tokens: always with client
    /// credentials (their tokens expire and have no refresh token; each
    /// request is tried again once only), at most [`MAX_SIGN_INS`] times a
    /// session when it sends the person to sign in; counts it.
    fn may_ask_again(&self) -> bool {
        self.uses_client_credentials()
            || (self.can_sign_in()
                && self.asked.fetch_add(1, std::sync::atomic::Ordering::AcqRel) < MAX_SIGN_INS)
    }

    /// Sets the manager's client up from the token file (the metadata and
    /// client kept there), discovering the metadata when it was not kept.
    async fn prepare(&self, manager: &mut AuthorizationManager) -> Result<(), AuthError> {
        if self.ready.load(std::sync::atomic::Ordering::Acquire) {
            return Ok(());
        }
        let Some(stored) = self.store.read().map_err(AuthError::CredentialStoreError)? else {
            return Err(AuthError::AuthorizationRequired);
        };
        let remembered = self.store.remembered();
        let metadata = match remembered.metadata {
            Some(metadata) => metadata,
            None => manager.resolve_metadata().await?.metadata,
        };
        manager.set_metadata(metadata);
        let mut client = OAuthClientConfig::new(
            stored.client_id.clone(),
            remembered
                .redirect_uri
                .unwrap_or_else(|| "http://127.0.0.1/callback".to_owned()),
        );
        client.client_secret = self.client_secret_for(&stored.client_id);
        manager.configure_client(client)?;
        self.ready.store(true, std::sync::atomic::Ordering::Release);
        Ok(())
    }

    /// The secret of client `id`: the policy's for its pre-registered
    /// client, else the one a dynamic registration gave.
    fn client_secret_for(&self, id: &str) -> Option<String> {
        let oauth = self.config.oauth.as_ref();
        if oauth.and_then(|o| o.client_id.as_deref()) == Some(id) {
            return oauth.and_then(|o| o.client_secret.clone());
        }
        self.store.client_secret()
    }

    /// The access token to send, refreshed when it is about to expire;
    /// `None` when there is none (or it cannot be refreshed).
    async fn token(&self) -> Result<Option<String>, AuthError> {
        if !self.has_tokens() {
            return Ok(None);
        }
        let mut manager = self.manager.lock().await;
        match self.prepare(&mut manager).await {
            Ok(()) => {}
            Err(AuthError::AuthorizationRequired) => return Ok(None),
            Err(err) => return Err(err),
        }
        match manager.get_access_token().await {
            Ok(token) => Ok(Some(token)),
            Err(AuthError::AuthorizationRequired) => Ok(None),
            Err(err) => Err(err),
        }
    }

    /// After the server refused `sent`: a refreshed token, when the stored
    /// one is another already (a concurrent refresh) or a refresh token
    /// gives one.
    async fn refreshed(&self, sent: Option<&str>) -> Option<String> {
        let mut manager = self.manager.lock().await;
        self.prepare(&mut manager).await.ok()?;
        let current = manager.get_access_token().await.ok();
        if current.is_some() && current.as_deref() != sent {
            return current;
        }
        sent?;
        let fresh = manager.refresh_token().await.ok()?;
        Some(fresh.access_token().secret().clone())
    }

    /// Signs in through the person's browser (the authorization-code flow
    /// with PKCE and a loopback redirect), from `challenge` (a 401's or
    /// 403's `WWW-Authenticate`), asking for `scopes` besides those the
    /// challenge and metadata name; the new access token.
    pub(crate) async fn sign_in(
        &self,
        challenge: Option<&str>,
        step_up: bool,
    ) -> Result<String, String> {
        let Some(sign_in) = self.sign_in.clone() else {
            return Err(login_hint(&self.config));
        };
        let name = self.name().to_owned();
        let fail = |what: &str, err: &dyn std::fmt::Display| {
            format!("MCP server {name:?}: signing in failed: {what}: {err}")
        };
        let listener = redirect::Listener::bind()
            .await
            .map_err(|e| fail("no loopback port for the browser's redirect", &e))?;
        let redirect_uri = listener.redirect_uri();
        let mut manager = self.manager.lock().await;
        let resolution = manager
            .resolve_metadata_from_challenge(challenge)
            .await
            .map_err(|e| fail("the server's authorization metadata cannot be read", &e))?;
        // The 2025-03-26 fallback endpoints only for a server that asked.
        if challenge.is_none() && !resolution.source.is_discovered() {
            return Err(format!(
                "MCP server {name:?} did not ask for authorization (it answered without 401) and publishes no OAuth metadata, so there is nothing to sign in to: it is mounted as it is"
            ));
        }
        let metadata = resolution.metadata;
        check_endpoint(&metadata.authorization_endpoint)
            .map_err(|e| fail("the authorization endpoint cannot be used", &e))?;
        manager.set_metadata(metadata.clone());
        let granted = if step_up {
            self.store
                .read()
                .ok()
                .flatten()
                .map(|c| c.granted_scopes)
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        let mut scopes = if step_up {
            let required = challenge_scope(challenge.unwrap_or_default());
            let mut union = granted;
            for scope in manager
                .select_scopes(required.as_deref(), &[])
                .into_iter()
                .chain(
                    required
                        .iter()
                        .flat_map(|r| r.split_whitespace().map(str::to_owned)),
                )
            {
                if !union.contains(&scope) {
                    union.push(scope);
                }
            }
            union
        } else {
            manager.select_initial_scopes(&[]).await
        };
        scopes.dedup();
        let scope_refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
        let oauth = self.config.oauth.clone().unwrap_or_default();
        let documents_supported = metadata
            .additional_fields
            .get("client_id_metadata_document_supported")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false);
        let (client, dynamic_secret) = if let Some(id) = &oauth.client_id {
            let mut client = OAuthClientConfig::new(id.clone(), redirect_uri.clone());
            client.client_secret = oauth.client_secret.clone();
            (client, None)
        } else if let Some(document) = oauth
            .client_metadata_url
            .as_ref()
            .filter(|_| documents_supported)
        {
            (
                OAuthClientConfig::new(document.clone(), redirect_uri.clone()),
                None,
            )
        } else if metadata.registration_endpoint.is_some() {
            let client = manager
                .register_client(CLIENT_NAME, &redirect_uri, &scope_refs)
                .await
                .map_err(|e| fail("registering agentcore with the authorization server", &e))?;
            let secret = client.client_secret.clone();
            (client, secret)
        } else {
            return Err(format!(
                "MCP server {name:?}: signing in failed: its authorization server offers no dynamic client registration{}; register agentcore with it (redirect URI http://127.0.0.1/callback, any port) and give the client in the server's [[mcp_servers]] entry, `oauth = {{ client_id = \"…\" }}`",
                if documents_supported {
                    " (it takes client-id metadata documents: `oauth = { client_metadata_url = \"https://…\" }`)"
                } else {
                    ""
                }
            ));
        };
        let mut client = client;
        client.redirect_uri = redirect_uri.clone();
        client.scopes = scopes.clone();
        manager
            .configure_client(client)
            .map_err(|e| fail("the OAuth client cannot be set up", &e))?;
        let url = manager
            .get_authorization_url(&scope_refs)
            .await
            .map_err(|e| fail("no authorization URL", &e))?;
        let state = reqwest::Url::parse(&url)
            .ok()
            .and_then(|u| {
                u.query_pairs()
                    .find(|(k, _)| k == "state")
                    .map(|(_, v)| v.into_owned())
            })
            .ok_or_else(|| fail("the authorization URL has no state", &url))?;
        (sign_in.open)(&name, &url);
        let callback = listener
            .wait(&state, &name, sign_in.timeout)
            .await
            .map_err(|e| format!("MCP server {name:?}: signing in failed: {e}"))?;
        // What the file keeps beside the tokens is set before the exchange
        // saves them.
        self.store.set_client_secret(dynamic_secret);
        self.store.remember(Remembered {
            metadata: Some(metadata),
            redirect_uri: Some(redirect_uri),
        });
        let token = manager
            .exchange_code_for_token_with_issuer(
                &callback.code,
                &callback.state,
                callback.issuer.as_deref(),
            )
            .await
            .map_err(|e| {
                fail(
                    "the authorization server did not give a token for the code",
                    &e,
                )
            })?;
        self.ready.store(true, std::sync::atomic::Ordering::Release);
        Ok(token.access_token().secret().clone())
    }
}

/// `scope` of a `WWW-Authenticate` challenge.
fn challenge_scope(challenge: &str) -> Option<String> {
    let params = rmcp::transport::auth::WWWAuthenticateParams::parse(
        challenge,
        &reqwest::Url::parse("http://127.0.0.1/").ok()?,
    );
    params.scope
}

/// An authorization endpoint a browser may be sent to: `https://`, or
/// `http://` (a loopback server's).
fn check_endpoint(endpoint: &str) -> Result<(), String> {
    match reqwest::Url::parse(endpoint) {
        Ok(url) if matches!(url.scheme(), "https" | "http") && url.host().is_some() => Ok(()),
        _ => Err(format!(
            "{endpoint:?} is not an https:// URL a browser can be sent to"
        )),
    }
}

/// The command that signs in to `config`'s server.
pub fn login_command(config: &McpServerConfig) -> String {
    let mut command = format!("agentcore mcp login {}", shell_word(&config.name));
    if let Some(policy) = &config.policy_file {
        command.push_str(" --policy ");
        command.push_str(&shell_word(&policy.to_string_lossy()));
    }
    command
}

/// The sentence a mount without a person ends with.
pub(crate) fn login_hint(config: &McpServerConfig) -> String {
    format!(
        "MCP server {:?} wants you to sign in (OAuth) and nobody is at a terminal to do it: run `{}`, then start again; or give a token the server accepts in its [[mcp_servers]] entry, `headers = {{ Authorization = \"Bearer …\" }}`",
        config.name,
        login_command(config)
    )
}

/// `word` as one shell word.
fn shell_word(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.:/@+=".contains(c))
    {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The server's HTTP client with OAuth: the stored token on each request,
/// refreshed when it expires or is refused, and, when a person is there, a
/// sign-in on 401 and a step-up on 403 `insufficient_scope` (each request
/// retried once with the new token).
#[derive(Clone)]
pub(crate) struct Authorized {
    inner: reqwest::Client,
    auth: Arc<ServerAuth>,
}

impl Authorized {
    pub(crate) fn new(inner: reqwest::Client, auth: Arc<ServerAuth>) -> Self {
        Self { inner, auth }
    }

    async fn call<T, F, Fut>(&self, call: F) -> Result<T, StreamableHttpError<reqwest::Error>>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = Result<T, StreamableHttpError<reqwest::Error>>>,
    {
        let token = self.auth.token().await?;
        let failure = match call(token.clone()).await {
            Err(failure @ StreamableHttpError::AuthRequired(_)) => failure,
            Err(failure @ StreamableHttpError::InsufficientScope(_)) => failure,
            other => return other,
        };
        let fresh = match &failure {
            StreamableHttpError::AuthRequired(challenge) => {
                match self.auth.refreshed(token.as_deref()).await {
                    Some(fresh) => Some(fresh),
                    None if self.auth.may_ask_again() => Some(
                        self.auth
                            .authorize(Some(&challenge.www_authenticate_header), false)
                            .await
                            .map_err(sign_in_failed)?,
                    ),
                    None => None,
                }
            }
            StreamableHttpError::InsufficientScope(challenge) if self.auth.may_ask_again() => Some(
                self.auth
                    .authorize(Some(&challenge.www_authenticate_header), true)
                    .await
                    .map_err(sign_in_failed)?,
            ),
            _ => None,
        };
        match fresh {
            Some(fresh) => call(Some(fresh)).await,
            None => Err(failure),
        }
    }
}

fn sign_in_failed(message: String) -> StreamableHttpError<reqwest::Error> {
    StreamableHttpError::Auth(AuthError::AuthorizationFailed(message))
}

impl StreamableHttpClient for Authorized {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.call(|token| {
            self.inner.post_message(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.call(|token| {
            self.inner.post_message_with_max_sse_event_size(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.call(|token| {
            self.inner.post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
                limits,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        // Closing needs no sign-in: the stored token or none.
        let token = self.auth.token().await.ok().flatten();
        self.inner
            .delete_session(uri, session_id, token, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<
        BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>,
        StreamableHttpError<Self::Error>,
    > {
        self.call(|token| {
            self.inner.get_stream(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token,
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<
        BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>,
        StreamableHttpError<Self::Error>,
    > {
        self.call(|token| {
            self.inner.get_stream_with_max_sse_event_size(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token,
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }
}

/// The `WWW-Authenticate` of a 401 to an unauthenticated `initialize`
/// sent to `url` (`None`: the server did not ask for authorization there).
pub(crate) async fn probe_challenge(
    client: &reqwest::Client,
    url: &str,
) -> Result<Option<String>, String> {
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": super::connection::REQUESTED_VERSION.as_str(),
            "capabilities": {},
            "clientInfo": {"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")}
        }
    });
    let response = client
        .post(url)
        .header(http::header::ACCEPT, "application/json, text/event-stream")
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(body.to_string())
        .timeout(OAUTH_REQUEST_TIMEOUT)
        .send()
        .await
        .map_err(|e| e.to_string())?;
    if response.status() != http::StatusCode::UNAUTHORIZED {
        return Ok(None);
    }
    Ok(Some(
        response
            .headers()
            .get(http::header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("Bearer")
            .to_owned(),
    ))
}

/// `agentcore mcp login NAME`: signs in to `config`'s server through
/// `sign_in` and stores the tokens; the token file.
pub async fn login(
    config: &McpServerConfig,
    sign_in: SignIn,
) -> Result<std::path::PathBuf, String> {
    config.check()?;
    let Some(url) = config.url.clone() else {
        return Err(format!(
            "MCP server {:?} is started as a command, not reached by `url`; OAuth sign-in is for `url` servers",
            config.name
        ));
    };
    let client = super::connection::http_client(config)?;
    let auth = ServerAuth::new(config, client.clone(), Some(sign_in)).await?;
    let challenge = probe_challenge(&client, &url)
        .await
        .map_err(|e| format!("MCP server {:?}: {url} cannot be reached: {e}", config.name))?;
    auth.authorize(challenge.as_deref(), false).await?;
    Ok(auth.store.path().to_path_buf())
}

/// `agentcore mcp logout NAME`: deletes the server's stored tokens;
/// whether there were any, and the file.
pub fn logout(config: &McpServerConfig) -> Result<(bool, std::path::PathBuf), String> {
    let Some(url) = config.url.as_deref() else {
        return Err(format!(
            "MCP server {:?} is started as a command, not reached by `url`; it has no OAuth tokens",
            config.name
        ));
    };
    let store = TokenStore::for_server(&config.name, url)?;
    Ok((store.delete()?, store.path().to_path_buf()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_login_hint_is_a_command_to_paste() {
        let mut config = McpServerConfig {
            name: "github".into(),
            ..McpServerConfig::default()
        };
        let hint = login_hint(&config);
        assert!(hint.contains("`agentcore mcp login github`"), "{hint}");
        config.name = "my server's".into();
        config.policy_file = Some("/home/a b/policy.toml".into());
        let hint = login_hint(&config);
        assert!(
            hint.contains(
                r"`agentcore mcp login 'my server'\''s' --policy '/home/a b/policy.toml'`"
            ),
            "{hint}"
        );
    }

    #[tokio::test]
    async fn a_url_reaches_the_browser_command_as_one_argument_never_as_shell_text() {
        let dir = tempfile::tempdir().unwrap();
        let got = dir.path().join("got");
        let pwned = dir.path().join("pwned");
        let url = format!(
            "https://auth.example/authorize?x=$(touch {0})&y=`touch {0}`&z=';touch {0};'",
            pwned.display()
        );
        for browser in [
            format!("printf %s > {}", got.display()),
            format!("echo \"%s\" > {}", got.display()),
        ] {
            let mut command = browser_command(Some(browser.clone()), &url);
            let status = command.status().await.unwrap();
            assert!(status.success(), "{browser}");
            assert!(!pwned.exists(), "{browser} ran text from the URL");
            assert!(
                std::fs::read_to_string(&got).unwrap().trim_end() == url,
                "{browser}"
            );
        }
    }

    #[test]
    fn only_web_urls_are_opened() {
        assert!(check_endpoint("https://auth.example.com/authorize").is_ok());
        assert!(check_endpoint("http://127.0.0.1:9/authorize").is_ok());
        for bad in [
            "file:///etc/passwd",
            "javascript:alert(1)",
            "not a url",
            "ftp://host/x",
        ] {
            assert!(check_endpoint(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_challenge_scope_is_read() {
        assert_eq!(
            challenge_scope(
                r#"Bearer error="insufficient_scope", scope="a b", resource_metadata="http://x/y""#
            )
            .as_deref(),
            Some("a b")
        );
        assert_eq!(challenge_scope("Bearer"), None);
    }
}
