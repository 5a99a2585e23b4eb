//! The MCP client's OAuth 2.1 (issue 32 item 2), end to end through the
//! `agentcore` binary, against an authorization server and a protected MCP
//! server written here (axum): `agentcore mcp login` discovers the server
//! from its 401, registers, sends the person's browser (a `$BROWSER`
//! stand-in that allows every sign-in) through the authorization-code flow
//! with PKCE, which the server verifies, and keeps the tokens 0600 under
//! the user's state directory, never the workspace; `agentcore run` uses
//! them, refreshes them when the server refuses them, fails the mount by
//! name with the command when nobody is there, signs in and steps up
//! (`insufficient_scope`) when a person is at the terminal; a redirect
//! with a wrong `state` is refused; `agentcore mcp logout` deletes them.
//! An entry with client credentials gets its tokens with no one there.

use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine;
use serde_json::{Value, json};

use crate::support::cli::{end, events, text, turn};

/// What the servers saw and hold.
#[derive(Default)]
struct Seen {
    base: String,
    registrations: Vec<Value>,
    /// The query of each authorization request.
    authorizations: Vec<HashMap<String, String>>,
    /// The form of each token request.
    token_requests: Vec<HashMap<String, String>>,
    /// code → (PKCE challenge, scope, redirect_uri, client_id).
    codes: HashMap<String, (String, String, String, String)>,
    /// access token → its scopes.
    access: HashMap<String, HashSet<String>>,
    /// refresh token → its scopes.
    refresh: HashMap<String, HashSet<String>>,
    /// The bearer tokens the MCP endpoint was sent.
    bearer_seen: Vec<String>,
    /// When set, an access token expires after this many MCP requests.
    max_uses: Option<usize>,
    uses: HashMap<String, usize>,
    next: u32,
}

type Shared = Arc<Mutex<Seen>>;

/// The two servers on one loopback port: `/mcp` (protected, scope `read`
/// for everything, `write` besides for the tool `change`) and the
/// authorization server at the root.
struct Servers {
    base: String,
    seen: Shared,
    _runtime: std::thread::JoinHandle<()>,
}

impl Servers {
    fn start() -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let seen: Shared = Arc::new(Mutex::new(Seen {
            base: base.clone(),
            ..Seen::default()
        }));
        let state = seen.clone();
        let runtime = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let app = axum::Router::new()
                    .route(
                        "/.well-known/oauth-protected-resource/mcp",
                        get(resource_metadata),
                    )
                    .route(
                        "/.well-known/oauth-authorization-server",
                        get(server_metadata),
                    )
                    .route("/register", post(register))
                    .route("/authorize", get(authorize))
                    .route("/token", post(token))
                    .route(
                        "/mcp",
                        post(mcp).get(no_stream).delete(|| async { StatusCode::OK }),
                    )
                    .with_state(state);
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                axum::serve(listener, app).await.unwrap();
            });
        });
        Servers {
            base,
            seen,
            _runtime: runtime,
        }
    }

    fn url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.seen.lock().unwrap()
    }

    /// The server forgets every access token it issued (they expired).
    fn expire_access_tokens(&self) {
        self.seen().access.clear();
    }
}

async fn resource_metadata(State(seen): State<Shared>) -> impl IntoResponse {
    let base = seen.lock().unwrap().base.clone();
    axum::Json(json!({
        "resource": format!("{base}/mcp"),
        "authorization_servers": [base],
        "scopes_supported": ["read"],
    }))
}

async fn server_metadata(State(seen): State<Shared>) -> impl IntoResponse {
    let base = seen.lock().unwrap().base.clone();
    axum::Json(json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "registration_endpoint": format!("{base}/register"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_basic"],
        "scopes_supported": ["read", "write"],
    }))
}

async fn register(State(seen): State<Shared>, body: String) -> impl IntoResponse {
    let request: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let mut seen = seen.lock().unwrap();
    seen.next += 1;
    let id = format!("client-{}", seen.next);
    seen.registrations.push(request.clone());
    (
        StatusCode::CREATED,
        axum::Json(json!({
            "client_id": id,
            "redirect_uris": request["redirect_uris"],
            "token_endpoint_auth_method": "none",
        })),
    )
}

async fn authorize(
    State(seen): State<Shared>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let mut seen = seen.lock().unwrap();
    seen.authorizations.push(query.clone());
    if query.get("code_challenge_method").map(String::as_str) != Some("S256") {
        return (StatusCode::BAD_REQUEST, "PKCE S256 is required").into_response();
    }
    seen.next += 1;
    let code = format!("code-{}", seen.next);
    let redirect = query.get("redirect_uri").cloned().unwrap_or_default();
    seen.codes.insert(
        code.clone(),
        (
            query.get("code_challenge").cloned().unwrap_or_default(),
            query.get("scope").cloned().unwrap_or_default(),
            redirect.clone(),
            query.get("client_id").cloned().unwrap_or_default(),
        ),
    );
    let mut location = reqwest::Url::parse(&redirect).unwrap();
    location
        .query_pairs_mut()
        .append_pair("code", &code)
        .append_pair("state", query.get("state").map_or("", String::as_str));
    (
        StatusCode::FOUND,
        [(header::LOCATION, location.to_string())],
    )
        .into_response()
}

fn form(body: &str) -> HashMap<String, String> {
    reqwest::Url::parse(&format!("http://x/?{body}"))
        .unwrap()
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

fn refused(error: &str) -> Response {
    (StatusCode::BAD_REQUEST, axum::Json(json!({"error": error}))).into_response()
}

async fn token(State(seen): State<Shared>, headers: HeaderMap, body: String) -> Response {
    let mut form = form(&body);
    if let Some(basic) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Basic "))
    {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(basic)
            .unwrap_or_default();
        form.insert(
            "basic".into(),
            String::from_utf8_lossy(&decoded).into_owned(),
        );
    }
    let mut seen = seen.lock().unwrap();
    seen.token_requests.push(form.clone());
    let expected_resource = format!("{}/mcp", seen.base);
    if form.get("resource") != Some(&expected_resource) {
        return refused("invalid_target");
    }
    let scopes: HashSet<String> = match form.get("grant_type").map(String::as_str) {
        Some("authorization_code") => {
            let Some((challenge, scope, redirect, client)) =
                form.get("code").and_then(|c| seen.codes.remove(c))
            else {
                return refused("invalid_grant");
            };
            // PKCE: BASE64URL(SHA256(code_verifier)) is the challenge.
            let verifier = form.get("code_verifier").cloned().unwrap_or_default();
            let digest = <sha2::Sha256 as sha2::Digest>::digest(verifier.as_bytes());
            let computed = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest);
            if verifier.len() < 43 || computed != challenge {
                return refused("invalid_grant");
            }
            if form.get("redirect_uri") != Some(&redirect) || form.get("client_id") != Some(&client)
            {
                return refused("invalid_grant");
            }
            scope.split_whitespace().map(str::to_owned).collect()
        }
        Some("client_credentials") => {
            if form.get("basic").map(String::as_str) != Some("m2m:s3cret") {
                return refused("invalid_client");
            }
            HashSet::from(["read".to_owned(), "write".to_owned()])
        }
        Some("refresh_token") => {
            match form
                .get("refresh_token")
                .and_then(|r| seen.refresh.remove(r))
            {
                Some(scopes) => scopes,
                None => return refused("invalid_grant"),
            }
        }
        _ => return refused("unsupported_grant_type"),
    };
    seen.next += 1;
    let access = format!("access-{}", seen.next);
    let refresh = format!("refresh-{}", seen.next);
    seen.access.insert(access.clone(), scopes.clone());
    seen.refresh.insert(refresh.clone(), scopes.clone());
    let mut scope: Vec<&str> = scopes.iter().map(String::as_str).collect();
    scope.sort_unstable();
    axum::Json(json!({
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": 3600,
        "refresh_token": refresh,
        "scope": scope.join(" "),
    }))
    .into_response()
}

async fn no_stream() -> StatusCode {
    StatusCode::METHOD_NOT_ALLOWED
}

/// A minimal streamable-HTTP MCP server answering in JSON, behind bearer
/// tokens: `read` for everything, `write` besides for the tool `change`.
async fn mcp(State(seen): State<Shared>, headers: HeaderMap, body: String) -> Response {
    let message: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let method = message["method"].as_str().unwrap_or_default().to_owned();
    let mut seen = seen.lock().unwrap();
    let metadata = format!("{}/.well-known/oauth-protected-resource/mcp", seen.base);
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned);
    let scopes = match bearer.as_ref().and_then(|t| seen.access.get(t)) {
        Some(scopes) => scopes.clone(),
        None => {
            return (
                StatusCode::UNAUTHORIZED,
                [(
                    header::WWW_AUTHENTICATE,
                    format!(r#"Bearer resource_metadata="{metadata}", scope="read""#),
                )],
                "sign in",
            )
                .into_response();
        }
    };
    let bearer = bearer.unwrap_or_default();
    let uses = {
        let uses = seen.uses.entry(bearer.clone()).or_default();
        *uses += 1;
        *uses
    };
    if seen.max_uses.is_some_and(|max| uses >= max) {
        // Its last use: the next request with it is refused.
        seen.access.remove(&bearer);
    }
    seen.bearer_seen.push(bearer);
    let needed: &[&str] = if method == "tools/call" && message["params"]["name"] == "change" {
        &["read", "write"]
    } else {
        &["read"]
    };
    if !needed.iter().all(|s| scopes.contains(*s)) {
        return (
            StatusCode::FORBIDDEN,
            [(
                header::WWW_AUTHENTICATE,
                format!(
                    r#"Bearer error="insufficient_scope", scope="{}", resource_metadata="{metadata}""#,
                    needed.join(" ")
                ),
            )],
            "more scope",
        )
            .into_response();
    }
    if message.get("id").is_none() {
        return StatusCode::ACCEPTED.into_response();
    }
    let id = message["id"].clone();
    let result = match method.as_str() {
        "initialize" => json!({
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "protected", "version": "1"}
        }),
        "tools/list" => json!({"tools": [
            {"name": "peek", "description": "Reads.", "inputSchema": {"type": "object"}},
            {"name": "change", "description": "Writes.", "inputSchema": {"type": "object"}}
        ]}),
        "tools/call" => json!({"content": [{"type": "text",
            "text": format!("{} done", message["params"]["name"].as_str().unwrap_or_default())}]}),
        _ => json!({}),
    };
    (
        [(header::CONTENT_TYPE, "application/json")],
        json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string(),
    )
        .into_response()
}

/// A user's machine: a state directory (where tokens go), a workspace, a
/// policy mounting the protected server as `prot`, and `$BROWSER`.
struct User {
    dir: tempfile::TempDir,
    policy: PathBuf,
}

impl User {
    /// `browser` is the body of a Python script given the URL as argv[1].
    fn new(url: &str, browser: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("ws")).unwrap();
        let policy = dir.path().join("policy.toml");
        std::fs::write(
            &policy,
            format!(
                "allow = [\"mcp__prot__*\"]\n[[mcp_servers]]\nname = \"prot\"\nurl = {}\nstartup_timeout_secs = 20\ncall_timeout_secs = 20\n",
                json!(url)
            ),
        )
        .unwrap();
        let script = dir.path().join("browser.py");
        std::fs::write(&script, browser).unwrap();
        Self { dir, policy }
    }

    fn state(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    fn workspace(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_agentcore"));
        command
            .args(args)
            .current_dir(self.workspace())
            .env("XDG_STATE_HOME", self.state())
            .env("HOME", self.dir.path())
            .env(
                "BROWSER",
                format!("python3 {}", self.dir.path().join("browser.py").display()),
            );
        command
    }

    fn login(&self) -> Output {
        let policy = self.policy.to_string_lossy().into_owned();
        self.command(&[
            "mcp",
            "login",
            "prot",
            "--policy",
            &policy,
            "--timeout",
            "20",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap()
    }

    fn logout(&self) -> Output {
        let policy = self.policy.to_string_lossy().into_owned();
        self.command(&["mcp", "logout", "prot", "--policy", &policy])
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    fn run_args(&self) -> Vec<String> {
        vec![
            "run".into(),
            "--format".into(),
            "jsonl".into(),
            "--root".into(),
            self.workspace().to_string_lossy().into_owned(),
            "--policy".into(),
            self.policy.to_string_lossy().into_owned(),
        ]
    }

    /// `agentcore run` with `input` on a pipe: nobody at a terminal.
    fn run(&self, input: &str) -> (Vec<Value>, Output) {
        let args = self.run_args();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut child = self
            .command(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let output = child.wait_with_output().unwrap();
        (events(&output), output)
    }

    /// `agentcore run` with a terminal on stdin (a person there), who types
    /// `input` and ends it.
    fn run_on_terminal(&self, input: &str) -> (Vec<Value>, Output) {
        use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
        let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).unwrap();
        grantpt(&master).unwrap();
        unlockpt(&master).unwrap();
        let name = ptsname(&master, Vec::new()).unwrap();
        let slave = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(name.to_str().unwrap())
            .unwrap();
        let args = self.run_args();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let child = self
            .command(&args)
            .stdin(slave)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut master = std::fs::File::from(master);
        master.write_all(input.as_bytes()).unwrap();
        master.write_all(b"\x04").unwrap();
        // The terminal's echo is drained, so that the person's typing
        // never blocks.
        let mut drain = master.try_clone().unwrap();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while drain.read(&mut buf).is_ok_and(|n| n > 0) {}
        });
        let output = child.wait_with_output().unwrap();
        drop(master);
        (events(&output), output)
    }

    /// The token files under the state directory.
    fn token_files(&self) -> Vec<PathBuf> {
        let dir = self.state().join("agentcore/mcp-oauth");
        std::fs::read_dir(&dir)
            .map(|entries| {
                entries
                    .map(|e| e.unwrap().path())
                    .filter(|p| p.extension().is_some_and(|x| x == "json"))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// A person who allows every sign-in: follows the authorization URL and
/// its redirect to agentcore's loopback listener.
const ALLOW: &str =
    "import sys, urllib.request\nurllib.request.urlopen(sys.argv[1], timeout=20).read()\n";

/// A page that sends agentcore's listener a redirect with a `state` of its
/// own: it reads where the authorization server would redirect, and
/// changes the state.
const FORGE_STATE: &str = r#"import sys, urllib.request, urllib.parse
class Stop(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args):
        return None
opener = urllib.request.build_opener(Stop)
try:
    opener.open(sys.argv[1], timeout=20)
except urllib.error.HTTPError as e:
    location = e.headers["Location"]
parts = urllib.parse.urlsplit(location)
query = dict(urllib.parse.parse_qsl(parts.query))
query["state"] = "forged-by-another-page"
forged = urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query)))
try:
    urllib.request.urlopen(forged, timeout=20).read()
except urllib.error.HTTPError:
    pass
"#;

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Every file below `dir`, read, that holds `needle`.
fn files_holding(dir: &Path, needle: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if std::fs::read(&path)
                .is_ok_and(|bytes| String::from_utf8_lossy(&bytes).contains(needle))
            {
                found.push(path);
            }
        }
    }
    found
}

#[test]
fn login_signs_in_with_pkce_and_keeps_the_tokens_0600_outside_the_workspace() {
    let servers = Servers::start();
    let user = User::new(&servers.url(), ALLOW);
    let output = user.login();
    let err = stderr(&output);
    assert!(output.status.success(), "{err}");
    assert!(err.contains("signed in to \"prot\": 2 tools"), "{err}");
    {
        let seen = servers.seen();
        // Registered dynamically, with a loopback redirect.
        assert_eq!(seen.registrations.len(), 1, "{:?}", seen.registrations);
        let redirect = seen.registrations[0]["redirect_uris"][0].as_str().unwrap();
        assert!(redirect.starts_with("http://127.0.0.1:"), "{redirect}");
        // One authorization: PKCE S256, the challenge's scope, the
        // resource, a state.
        assert_eq!(seen.authorizations.len(), 1);
        let asked = &seen.authorizations[0];
        assert_eq!(asked["code_challenge_method"], "S256");
        assert_eq!(asked["scope"], "read");
        assert_eq!(asked["resource"], servers.url());
        assert!(asked["state"].len() >= 16, "{asked:?}");
        // The code was exchanged with the verifier (checked by the token
        // endpoint) and the resource.
        let exchanged = &seen.token_requests[0];
        assert_eq!(exchanged["grant_type"], "authorization_code");
        assert_eq!(exchanged["resource"], servers.url());
        assert!(seen.codes.is_empty(), "the code was used");
    }
    // The tokens: one file, 0600, in a 0700 folder of the state directory.
    let files = user.token_files();
    assert_eq!(files.len(), 1, "{files:?}");
    let mode = std::fs::metadata(&files[0]).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let dir_mode = std::fs::metadata(files[0].parent().unwrap())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(dir_mode & 0o777, 0o700);
    let access = servers.seen().access.keys().next().unwrap().clone();
    assert!(
        std::fs::read_to_string(&files[0])
            .unwrap()
            .contains(&access)
    );
    // Never under the workspace, and no message shows it.
    assert!(files_holding(&user.workspace(), &access).is_empty());
    assert!(!err.contains(&access), "{err}");

    // A run without a person uses them.
    let (events, output) = user.run(&turn(&[("p", "mcp__prot__peek", json!({}))]));
    let err = stderr(&output);
    assert!(output.status.success(), "{err}");
    let peeked = end(&events, "p");
    assert_eq!(peeked["outcome"], "success", "{peeked:#} {err}");
    assert_eq!(text(peeked), "peek done");
    assert!(servers.seen().bearer_seen.contains(&access));
    assert!(files_holding(&user.workspace(), &access).is_empty());
}

#[test]
fn a_refused_token_is_refreshed_and_the_run_goes_on() {
    let servers = Servers::start();
    let user = User::new(&servers.url(), ALLOW);
    assert!(user.login().status.success());
    let first = servers.seen().access.keys().next().unwrap().clone();
    servers.expire_access_tokens();
    let (events, output) = user.run(&turn(&[("p", "mcp__prot__peek", json!({}))]));
    let err = stderr(&output);
    let peeked = end(&events, "p");
    assert_eq!(peeked["outcome"], "success", "{peeked:#} {err}");
    let seen = servers.seen();
    let grants: Vec<&str> = seen
        .token_requests
        .iter()
        .map(|f| f["grant_type"].as_str())
        .collect();
    assert_eq!(grants, ["authorization_code", "refresh_token"]);
    // No new sign-in: one authorization request in all.
    assert_eq!(seen.authorizations.len(), 1);
    // The refreshed token is stored in place of the old one.
    let file = std::fs::read_to_string(&user.token_files()[0]).unwrap();
    assert!(!file.contains(&first));
    let fresh = seen.access.keys().next().unwrap();
    assert!(file.contains(fresh.as_str()));
}

#[test]
fn without_a_person_the_mount_fails_by_name_with_the_command_to_run() {
    let servers = Servers::start();
    let user = User::new(&servers.url(), ALLOW);
    let input = turn(&[
        ("p", "mcp__prot__peek", json!({})),
        ("l", "glob", json!({"pattern": "*"})),
    ]);
    let (events, output) = user.run(&input);
    let err = stderr(&output);
    assert!(output.status.success(), "{err}");
    let command = format!(
        "`agentcore mcp login prot --policy {}`",
        user.policy.display()
    );
    assert!(
        err.contains("MCP server \"prot\" wants you to sign in"),
        "{err}"
    );
    assert!(err.contains(&command), "{err}");
    assert_eq!(end(&events, "p")["outcome"], "failed");
    let listed = end(&events, "l");
    assert_eq!(listed["outcome"], "success", "{listed:#}");
    // Nobody was sent to sign in, and nothing was stored.
    assert!(servers.seen().authorizations.is_empty());
    assert!(user.token_files().is_empty());
}

#[test]
fn a_person_at_the_terminal_signs_in_and_steps_up_for_more_scope() {
    let servers = Servers::start();
    let user = User::new(&servers.url(), ALLOW);
    let input = turn(&[("p", "mcp__prot__peek", json!({}))])
        + &turn(&[("c", "mcp__prot__change", json!({}))]);
    let (events, output) = user.run_on_terminal(&input);
    let err = stderr(&output);
    assert!(output.status.success(), "{err}");
    // The URL was shown to the person.
    assert!(
        err.contains("MCP server \"prot\" asks you to sign in"),
        "{err}"
    );
    assert!(
        err.contains(&format!("{}/authorize?", servers.base)),
        "{err}"
    );
    assert_eq!(end(&events, "p")["outcome"], "success", "{err}");
    let changed = end(&events, "c");
    assert_eq!(changed["outcome"], "success", "{changed:#} {err}");
    assert_eq!(text(changed), "change done");
    let seen = servers.seen();
    assert_eq!(seen.authorizations.len(), 2, "{:?}", seen.authorizations);
    assert_eq!(seen.authorizations[0]["scope"], "read");
    // Step-up: the union of what was granted and what is asked.
    let second: HashSet<&str> = seen.authorizations[1]["scope"].split(' ').collect();
    assert_eq!(second, HashSet::from(["read", "write"]));
}

#[test]
fn without_a_person_a_step_up_fails_the_call_with_the_command() {
    let servers = Servers::start();
    let user = User::new(&servers.url(), ALLOW);
    assert!(user.login().status.success());
    let (events, output) = user.run(&turn(&[("c", "mcp__prot__change", json!({}))]));
    let err = stderr(&output);
    let changed = end(&events, "c");
    assert_eq!(changed["outcome"], "failed", "{changed:#}");
    let message = text(changed);
    assert!(message.contains("for want of authorization"), "{message}");
    assert!(
        message.contains("agentcore mcp login prot --policy"),
        "{message}"
    );
    assert_eq!(servers.seen().authorizations.len(), 1, "{err}");
}

#[test]
fn a_redirect_with_a_wrong_state_is_refused() {
    let servers = Servers::start();
    let user = User::new(&servers.url(), FORGE_STATE);
    let output = user.login();
    let err = stderr(&output);
    assert!(!output.status.success(), "{err}");
    assert!(err.contains("`state` this sign-in did not send"), "{err}");
    let seen = servers.seen();
    // The code the forged redirect carried was never exchanged.
    assert!(seen.token_requests.is_empty(), "{:?}", seen.token_requests);
    assert!(user.token_files().is_empty());
}

#[test]
fn logout_deletes_the_tokens_and_static_headers_win_over_them() {
    let servers = Servers::start();
    let user = User::new(&servers.url(), ALLOW);
    assert!(user.login().status.success());
    assert_eq!(user.token_files().len(), 1);
    // A token in `headers` is sent instead of the stored one.
    let policy = std::fs::read_to_string(&user.policy).unwrap()
        + "headers = { Authorization = \"Bearer static-token\" }\n";
    std::fs::write(&user.policy, policy).unwrap();
    servers.seen().bearer_seen.clear();
    let (events, output) = user.run(&turn(&[("p", "mcp__prot__peek", json!({}))]));
    assert_eq!(end(&events, "p")["outcome"], "failed");
    let err = stderr(&output);
    assert!(
        err.contains("The server refused the Authorization in the entry's `headers`"),
        "{err}"
    );
    assert!(servers.seen().bearer_seen.is_empty());
    let policy = std::fs::read_to_string(&user.policy).unwrap().replace(
        "headers = { Authorization = \"Bearer static-token\" }\n",
        "",
    );
    std::fs::write(&user.policy, policy).unwrap();

    let output = user.logout();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stderr(&output).contains("deleted the tokens of \"prot\""));
    assert!(user.token_files().is_empty());
    let output = user.logout();
    assert!(stderr(&output).contains("no tokens were kept"));
    let (events, output) = user.run(&turn(&[("p", "mcp__prot__peek", json!({}))]));
    assert_eq!(end(&events, "p")["outcome"], "failed");
    assert!(stderr(&output).contains("agentcore mcp login prot"));
}

#[test]
fn client_credentials_get_tokens_with_no_one_there() {
    let servers = Servers::start();
    let user = User::new(&servers.url(), ALLOW);
    let policy = std::fs::read_to_string(&user.policy).unwrap()
        + "oauth = { client_id = \"m2m\", client_secret = \"s3cret\", client_credentials = true }\n";
    std::fs::write(&user.policy, policy).unwrap();
    // Tokens that expire after two requests: a long session gets new ones
    // as often as it needs, with no one asked.
    servers.seen().max_uses = Some(2);
    let calls: Vec<String> = (0..6).map(|i| format!("c{i}")).collect();
    // (Arguments of their own, or the loop guard would stop repeats.)
    let input: String = calls
        .iter()
        .map(|id| turn(&[(id.as_str(), "mcp__prot__change", json!({ "call": id }))]))
        .collect();
    let (events, output) = user.run(&input);
    let err = stderr(&output);
    for id in &calls {
        let changed = end(&events, id);
        assert_eq!(changed["outcome"], "success", "{changed:#} {err}");
    }
    let seen = servers.seen();
    assert!(seen.token_requests.len() >= 4, "{:?}", seen.token_requests);
    // No browser: no authorization request, no registration.
    assert!(seen.authorizations.is_empty());
    assert!(seen.registrations.is_empty());
    let grant = &seen.token_requests[0];
    assert_eq!(grant["grant_type"], "client_credentials");
    assert_eq!(grant["resource"], servers.url());
    // The secret went in the Basic header the metadata asked for, and is
    // in no message.
    assert!(!err.contains("s3cret"), "{err}");
    assert_eq!(user.token_files().len(), 1);
}

#[test]
fn login_to_a_server_that_does_not_ask_says_there_is_nothing_to_sign_in_to() {
    let server = crate::support::http::running("127.0.0.1:0", &[], &[]);
    let user = User::new(&format!("http://{}/mcp", server.connect), ALLOW);
    let output = user.login();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(err.contains("did not ask for authorization"), "{err}");
    assert!(err.contains("nothing to sign in to"), "{err}");
    assert!(user.token_files().is_empty());
}
