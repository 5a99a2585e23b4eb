//! Registries on loopback, for the tests of `network = "allowlist"`: a
//! small HTTP/1.1 server of files and routes on `127.0.0.1:0`, with a log
//! of every request it was sent (method, path, `Host`), and on it the
//! registries the toolchains fetch from: an npm registry, a git repository
//! over dumb HTTP, a PyPI simple index, a cargo sparse registry, and
//! `GET /hello`.
//!
//! A server is reached by a name ([`Server::start_as`]): the confined tests
//! use [`NAME`], which only the session's proxies resolve (the policy's
//! `resolve`), so the URLs the registries hand out (npm's tarball, cargo's
//! `dl`) go through the proxy too; the control tests use `127.0.0.1`, so the
//! real tools can fetch from the same registries unconfined.
//!
//! ```ignore
//! let server = Server::start_as(NAME);
//! let npm = npm_package(&server);
//! // … `npm install --registry` server.url("/") …
//! assert!(server.saw("GET", &npm.tarball_path));
//! ```

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use base64::Engine as _;
use serde_json::json;

/// The name the confined tests reach the server by: only the session's
/// proxies know it (`resolve = { "registry.test" = "127.0.0.1" }`).
pub const NAME: &str = "registry.test";

/// A name in the policy's `resolve` but not in its `allow_domains`.
pub const DENIED: &str = "denied.test";

/// One request the server was sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// `GET`, `HEAD`, `POST`, …
    pub method: String,
    /// The request target as sent: origin form (`/hello?x`) or, from a
    /// proxy that passes it on, absolute form (`http://host:port/hello`).
    pub target: String,
    /// The target's path, without the query: `/hello`.
    pub path: String,
    /// The `Host` header, when there was one.
    pub host: Option<String>,
}

/// A body served at an exact path, before the files.
struct Route {
    content_type: String,
    body: Vec<u8>,
}

/// What the connection threads share with the test.
struct Shared {
    www: PathBuf,
    routes: Mutex<HashMap<String, Route>>,
    log: Mutex<Vec<Request>>,
    stopped: AtomicBool,
}

/// An HTTP/1.1 server on `127.0.0.1:0`: the files under [`Server::www`]
/// (a folder serves its `index.html`), the [`routes`](Server::route)
/// before them, `GET` and `HEAD` only (anything else is a 404 after its
/// body is read), keep-alive. Stopped when dropped.
pub struct Server {
    name: String,
    addr: SocketAddr,
    dir: tempfile::TempDir,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

impl Server {
    /// A server whose URLs name it `name` (`registry.test`, or `127.0.0.1`
    /// for a tool that fetches unconfined).
    pub fn start_as(name: &str) -> Server {
        let dir = tempfile::Builder::new()
            .prefix("agentcore-registry-")
            .tempdir_in("/tmp")
            .unwrap();
        let www = dir.path().join("www");
        std::fs::create_dir_all(&www).unwrap();
        std::fs::create_dir_all(dir.path().join("build")).unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared {
            www,
            routes: Mutex::new(HashMap::new()),
            log: Mutex::new(Vec::new()),
            stopped: AtomicBool::new(false),
        });
        let accepting = Arc::clone(&shared);
        let accept = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if accepting.stopped.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let shared = Arc::clone(&accepting);
                std::thread::spawn(move || serve(stream, &shared));
            }
        });
        Server {
            name: name.to_owned(),
            addr,
            dir,
            shared,
            accept: Some(accept),
        }
    }

    /// The port it listens on (on 127.0.0.1).
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// `NAME:PORT`, what a client reaching it by name sends as `Host`.
    pub fn authority(&self) -> String {
        format!("{}:{}", self.name, self.port())
    }

    /// `http://NAME:PORT` followed by `path` (which starts with `/`).
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.authority())
    }

    /// The folder whose files it serves.
    pub fn www(&self) -> &Path {
        &self.shared.www
    }

    /// A scratch folder beside `www`, not served: where builders make what
    /// they then publish.
    pub fn build_dir(&self) -> PathBuf {
        self.dir.path().join("build")
    }

    /// Serves `body` at exactly `path` (the query is ignored), before any
    /// file.
    pub fn route(&self, path: &str, content_type: &str, body: impl Into<Vec<u8>>) {
        self.shared.routes.lock().unwrap().insert(
            path.to_owned(),
            Route {
                content_type: content_type.to_owned(),
                body: body.into(),
            },
        );
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Request> {
        self.shared.log.lock().unwrap().clone()
    }

    /// Whether a `method` request for `path` arrived, sent to this
    /// server by its name (`Host: NAME:PORT`).
    pub fn saw(&self, method: &str, path: &str) -> bool {
        let host = self.authority();
        self.requests()
            .iter()
            .any(|r| r.method == method && r.path == path && r.host.as_deref() == Some(&host))
    }

    /// Asserts [`saw`](Self::saw), showing the log when not.
    pub fn assert_saw(&self, method: &str, path: &str) {
        assert!(
            self.saw(method, path),
            "the registry saw no {method} {path} with Host: {}; it saw {:#?}",
            self.authority(),
            self.requests()
        );
    }

    /// Stops accepting; connections open now end after their current
    /// request. Also done on drop.
    pub fn stop(&mut self) {
        self.shared.stopped.store(true, Ordering::SeqCst);
        // Wakes the accept loop, which then sees `stopped`.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The largest request body read (and dropped); a longer one closes the
/// connection.
const MAX_BODY: usize = 1 << 20;

/// Serves one connection until the client closes it, it is idle for ten
/// seconds, or the server stops.
fn serve(stream: TcpStream, shared: &Shared) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    let mut writer = stream;
    while let Some((request, keep_alive)) = read_request(&mut reader) {
        shared.log.lock().unwrap().push(request.clone());
        let (status, content_type, body) = respond(shared, &request);
        let keep_alive = keep_alive && !shared.stopped.load(Ordering::SeqCst);
        let head = format!(
            "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: {}\r\n\r\n",
            body.len(),
            if keep_alive { "keep-alive" } else { "close" }
        );
        let sent = writer.write_all(head.as_bytes()).and_then(|()| {
            if request.method == "HEAD" {
                Ok(())
            } else {
                writer.write_all(&body)
            }
        });
        if sent.and_then(|()| writer.flush()).is_err() || !keep_alive {
            break;
        }
    }
    let _ = writer.shutdown(Shutdown::Both);
}

/// Reads one request (its body is read and dropped): the request, and
/// whether the connection may serve another. `None` at the end of the
/// stream or on a malformed request.
fn read_request(reader: &mut impl BufRead) -> Option<(Request, bool)> {
    let mut line = String::new();
    // Some clients send a stray CRLF after a body; skip empty lines.
    while line.trim().is_empty() {
        line.clear();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
    }
    let mut words = line.split_whitespace();
    let (method, target, version) = (words.next()?, words.next()?, words.next()?);
    let mut host = None;
    let mut length = 0usize;
    let mut keep_alive = version == "HTTP/1.1";
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).ok()? == 0 {
            return None;
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        let value = value.trim();
        match name.to_ascii_lowercase().as_str() {
            "host" => host = Some(value.to_owned()),
            "content-length" => length = value.parse().ok()?,
            "connection" if value.eq_ignore_ascii_case("close") => keep_alive = false,
            "connection" if value.eq_ignore_ascii_case("keep-alive") => keep_alive = true,
            // A chunked body is not parsed: answer, then close.
            "transfer-encoding" => keep_alive = false,
            _ => {}
        }
    }
    if length > MAX_BODY {
        return None;
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    let request = Request {
        method: method.to_owned(),
        target: target.to_owned(),
        path: path_of(target),
        host,
    };
    Some((request, keep_alive))
}

/// The path of a request target, origin or absolute form, without the
/// query or fragment.
fn path_of(target: &str) -> String {
    let origin = match target.split_once("://") {
        Some((_, rest)) => rest.find('/').map_or("/", |i| &rest[i..]),
        None => target,
    };
    let end = origin.find(['?', '#']).unwrap_or(origin.len());
    origin[..end].to_owned()
}

/// The status, content type and body for `request`.
fn respond(shared: &Shared, request: &Request) -> (&'static str, String, Vec<u8>) {
    let not_found = || {
        (
            "404 Not Found",
            "text/plain".to_owned(),
            format!("not found: {}\n", request.path).into_bytes(),
        )
    };
    if request.method != "GET" && request.method != "HEAD" {
        return not_found();
    }
    if let Some(route) = shared.routes.lock().unwrap().get(&request.path) {
        return ("200 OK", route.content_type.clone(), route.body.clone());
    }
    let relative = request.path.trim_start_matches('/');
    if relative
        .split('/')
        .any(|part| part == ".." || part == "." || part.contains('\\'))
    {
        return not_found();
    }
    let mut file = shared.www.join(relative);
    if file.is_dir() {
        file = file.join("index.html");
    }
    match std::fs::read(&file) {
        Ok(body) => ("200 OK", content_type(&file).to_owned(), body),
        Err(_) => not_found(),
    }
}

fn content_type(file: &Path) -> &'static str {
    match file.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("json") => "application/json",
        Some("txt") => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// What `GET /hello` answers.
pub const HELLO: &str = "hello from registry.test\n";

/// Serves [`HELLO`] at `GET /hello`.
pub fn hello(server: &Server) {
    server.route("/hello", "text/plain; charset=utf-8", HELLO);
}

/// Runs `program ARGS` in `dir`; its stdout. Panics with its stderr when
/// it fails.
fn run(dir: &Path, program: &str, args: &[&str]) -> Vec<u8> {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "registry")
        .env("GIT_AUTHOR_EMAIL", "registry@example.test")
        .env("GIT_COMMITTER_NAME", "registry")
        .env("GIT_COMMITTER_EMAIL", "registry@example.test")
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The digest of `file` by `tool` (`sha1sum`, `sha256sum`, `sha512sum`),
/// in hex.
fn digest_hex(tool: &str, file: &Path) -> String {
    let out = run(Path::new("/"), tool, &[file.to_str().unwrap()]);
    String::from_utf8_lossy(&out)
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned()
}

fn hex_to_bytes(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

/// Writes each `(path, text)` under `dir`, making the folders.
fn write_tree(dir: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let file = dir.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
}

/// `tar czf OUT -C DIR TOP`: a gzip tar whose entries are under `TOP/`.
fn tar_gz(dir: &Path, top: &str, out: &Path) {
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    run(
        dir,
        "tar",
        &[
            "--owner=0",
            "--group=0",
            "--numeric-owner",
            "-czf",
            out.to_str().unwrap(),
            top,
        ],
    );
}

/// The npm package the registry serves.
#[derive(Clone, Debug)]
pub struct NpmPackage {
    /// `agentcore-demo`.
    pub name: &'static str,
    /// `1.0.0`.
    pub version: &'static str,
    /// `/agentcore-demo`: the packument.
    pub packument_path: String,
    /// `/agentcore-demo/-/agentcore-demo-1.0.0.tgz`.
    pub tarball_path: String,
    /// The registry URL to give npm: `http://NAME:PORT/`.
    pub registry: String,
    /// `dist.shasum`: the tarball's SHA-1, hex.
    pub shasum: String,
    /// `dist.integrity`: `sha512-` and the tarball's SHA-512, base64.
    pub integrity: String,
}

/// What `require("agentcore-demo")("x")` returns: [`NPM_GREETING`] and x.
pub const NPM_GREETING: &str = "hello from agentcore-demo, ";

/// An npm registry of one package, `agentcore-demo` 1.0.0, whose `main`
/// exports `greet(name)`: the packument at `GET /agentcore-demo` (its
/// `dist.tarball` naming the server by its name) and the tarball.
pub fn npm_package(server: &Server) -> NpmPackage {
    let (name, version) = ("agentcore-demo", "1.0.0");
    let src = server.build_dir().join("npm");
    write_tree(
        &src,
        &[
            (
                "package/package.json",
                &format!(
                    "{{\n  \"name\": \"{name}\",\n  \"version\": \"{version}\",\n  \"main\": \"index.js\",\n  \"license\": \"MIT\"\n}}\n"
                ),
            ),
            (
                "package/index.js",
                &format!(
                    "module.exports = function greet(who) {{\n  return {NPM_GREETING:?} + who;\n}};\n"
                ),
            ),
        ],
    );
    let tarball_path = format!("/{name}/-/{name}-{version}.tgz");
    let tarball = server.www().join(tarball_path.trim_start_matches('/'));
    tar_gz(&src, "package", &tarball);
    let shasum = digest_hex("sha1sum", &tarball);
    let integrity = format!(
        "sha512-{}",
        base64::engine::general_purpose::STANDARD
            .encode(hex_to_bytes(&digest_hex("sha512sum", &tarball)))
    );
    let packument = json!({
        "_id": name,
        "name": name,
        "dist-tags": {"latest": version},
        "versions": {
            version: {
                "_id": format!("{name}@{version}"),
                "name": name,
                "version": version,
                "main": "index.js",
                "license": "MIT",
                "dist": {
                    "tarball": server.url(&tarball_path),
                    "shasum": shasum,
                    "integrity": integrity,
                },
            },
        },
    });
    let packument_path = format!("/{name}");
    server.route(&packument_path, "application/json", packument.to_string());
    NpmPackage {
        name,
        version,
        packument_path,
        tarball_path,
        registry: server.url("/"),
        shasum,
        integrity,
    }
}

/// The git repository the server serves over dumb HTTP.
#[derive(Clone, Debug)]
pub struct GitRepository {
    /// `http://NAME:PORT/demo.git`.
    pub url: String,
    /// `/demo.git/info/refs`: what every clone asks first.
    pub refs_path: String,
    /// The commit of its `main`.
    pub commit: String,
    /// The text of its `README.md`.
    pub readme: &'static str,
}

/// What `README.md` of the served repository says.
pub const GIT_README: &str = "agentcore demo repository\n";

/// A bare repository `demo.git` with one commit on `main` (`README.md`),
/// after `git update-server-info`, served as static files.
pub fn git_repository(server: &Server) -> GitRepository {
    let work = server.build_dir().join("git-work");
    std::fs::create_dir_all(&work).unwrap();
    write_tree(&work, &[("README.md", GIT_README)]);
    let git = |dir: &Path, args: &[&str]| {
        let mut all = vec!["-c", "safe.directory=*", "-c", "init.defaultBranch=main"];
        all.extend_from_slice(args);
        run(dir, "git", &all)
    };
    git(&work, &["init", "-q"]);
    git(&work, &["add", "README.md"]);
    git(&work, &["commit", "-q", "-m", "demo"]);
    let bare = server.www().join("demo.git");
    git(
        &work,
        &[
            "clone",
            "-q",
            "--bare",
            "--no-local",
            ".",
            bare.to_str().unwrap(),
        ],
    );
    git(&bare, &["update-server-info"]);
    let commit = String::from_utf8(git(&bare, &["rev-parse", "main"]))
        .unwrap()
        .trim()
        .to_owned();
    GitRepository {
        url: server.url("/demo.git"),
        refs_path: "/demo.git/info/refs".to_owned(),
        commit,
        readme: GIT_README,
    }
}

/// The wheel the PyPI simple index lists.
#[derive(Clone, Debug)]
pub struct PypiWheel {
    /// `http://NAME:PORT/simple/`, for `--index-url`.
    pub index_url: String,
    /// `/simple/agentcore-demo/`: the project's page.
    pub project_path: String,
    /// `agentcore_demo-1.0-py3-none-any.whl`.
    pub file_name: &'static str,
    /// `/packages/agentcore_demo-1.0-py3-none-any.whl`.
    pub wheel_path: String,
    /// The wheel's SHA-256, hex (the link's `#sha256=` fragment).
    pub sha256: String,
}

/// Builds a wheel with python3's zipfile: argv `OUT`; a package
/// `agentcore_demo` and the `.dist-info` with METADATA, WHEEL and a RECORD
/// of their hashes.
const MAKE_WHEEL: &str = r#"
import base64, hashlib, sys, zipfile
files = {
    "agentcore_demo/__init__.py": "def greet(who):\n    return 'hello from agentcore-demo, ' + who\n",
    "agentcore_demo-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: agentcore-demo\nVersion: 1.0\nSummary: agentcore demo\n",
    "agentcore_demo-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: agentcore-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = "agentcore_demo-1.0.dist-info/RECORD"
lines = []
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as whl:
    for name, text in files.items():
        data = text.encode()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        lines.append(f"{name},sha256={digest},{len(data)}")
        whl.writestr(name, data)
    lines.append(f"{record},,")
    whl.writestr(record, "\n".join(lines) + "\n")
"#;

/// A PyPI simple index (PEP 503) of one project, `agentcore-demo`, with
/// one wheel, `agentcore_demo-1.0-py3-none-any.whl`, linked with its
/// SHA-256.
pub fn pypi_wheel(server: &Server) -> PypiWheel {
    let file_name = "agentcore_demo-1.0-py3-none-any.whl";
    let wheel_path = format!("/packages/{file_name}");
    let wheel = server.www().join(wheel_path.trim_start_matches('/'));
    std::fs::create_dir_all(wheel.parent().unwrap()).unwrap();
    run(
        &server.build_dir(),
        "python3",
        &["-c", MAKE_WHEEL, wheel.to_str().unwrap()],
    );
    let sha256 = digest_hex("sha256sum", &wheel);
    let project_path = "/simple/agentcore-demo/".to_owned();
    write_tree(
        server.www(),
        &[
            (
                "simple/index.html",
                "<!DOCTYPE html>\n<html><body>\n<a href=\"agentcore-demo/\">agentcore-demo</a>\n</body></html>\n",
            ),
            (
                "simple/agentcore-demo/index.html",
                &format!(
                    "<!DOCTYPE html>\n<html><body>\n<a href=\"../../packages/{file_name}#sha256={sha256}\">{file_name}</a>\n</body></html>\n"
                ),
            ),
        ],
    );
    PypiWheel {
        index_url: server.url("/simple/"),
        project_path,
        file_name,
        wheel_path,
        sha256,
    }
}

/// The crate the cargo sparse registry serves.
#[derive(Clone, Debug)]
pub struct CargoCrate {
    /// `sparse+http://NAME:PORT/index/`, for `[registries.NAME] index`.
    pub index: String,
    /// `/index/config.json`.
    pub config_path: String,
    /// `/index/ag/en/agentcore-demo`: the crate's index entry.
    pub entry_path: String,
    /// `/crates/agentcore-demo/0.1.0/download`: the `.crate`.
    pub download_path: String,
    /// The `.crate`'s SHA-256, hex (the entry's `cksum`).
    pub cksum: String,
}

/// What `agentcore_demo::greeting()` returns.
pub const CRATE_GREETING: &str = "hello from agentcore-demo";

/// A cargo sparse registry of one crate, `agentcore-demo` 0.1.0 (a
/// library whose `greeting()` returns [`CRATE_GREETING`]): `config.json`
/// whose `dl` names the server by its name, the index entry, and the
/// download.
pub fn cargo_crate(server: &Server) -> CargoCrate {
    let (name, version) = ("agentcore-demo", "0.1.0");
    let src = server.build_dir().join("crate");
    let top = format!("{name}-{version}");
    write_tree(
        &src,
        &[
            (
                &format!("{top}/Cargo.toml"),
                &format!(
                    "[package]\nname = \"{name}\"\nversion = \"{version}\"\nedition = \"2021\"\ndescription = \"agentcore demo\"\nlicense = \"MIT\"\n"
                ),
            ),
            (
                &format!("{top}/src/lib.rs"),
                &format!(
                    "/// The demo's greeting.\npub fn greeting() -> &'static str {{\n    {CRATE_GREETING:?}\n}}\n"
                ),
            ),
        ],
    );
    let download_path = format!("/crates/{name}/{version}/download");
    let dot_crate = server.www().join(download_path.trim_start_matches('/'));
    tar_gz(&src, &top, &dot_crate);
    let cksum = digest_hex("sha256sum", &dot_crate);
    let config = json!({
        "dl": server.url("/crates/{crate}/{version}/download"),
        "api": null,
    });
    let entry = json!({
        "name": name,
        "vers": version,
        "deps": [],
        "cksum": cksum,
        "features": {},
        "yanked": false,
    });
    let entry_path = format!("/index/{}/{}/{name}", &name[..2], &name[2..4]);
    write_tree(
        server.www(),
        &[
            ("index/config.json", &format!("{config}\n")),
            (entry_path.trim_start_matches('/'), &format!("{entry}\n")),
        ],
    );
    CargoCrate {
        index: format!("sparse+{}", server.url("/index/")),
        config_path: "/index/config.json".to_owned(),
        entry_path,
        download_path,
        cksum,
    }
}

/// Every registry on one server.
pub struct Registries {
    pub server: Server,
    pub npm: NpmPackage,
    pub git: GitRepository,
    pub pypi: PypiWheel,
    pub cargo: CargoCrate,
}

impl Registries {
    /// A server named `name` with all of them, and `GET /hello`.
    pub fn start_as(name: &str) -> Registries {
        let server = Server::start_as(name);
        hello(&server);
        Registries {
            npm: npm_package(&server),
            git: git_repository(&server),
            pypi: pypi_wheel(&server),
            cargo: cargo_crate(&server),
            server,
        }
    }
}
