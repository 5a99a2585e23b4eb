//! With `network = "allowlist"`, the real toolchains fetch from registries
//! through the session's proxies, by name, and nothing else leaves the
//! session's loopback: curl, git (dumb HTTP), pip, npm and cargo (sparse
//! registry) each reach a registry on the host's loopback
//! ([`crate::support::registry`]) named `registry.test`, a name only the
//! proxies resolve (the policy's `resolve`), and the registry's log shows
//! each request with `Host: registry.test:PORT`; a name in `resolve` but not
//! in `allow_domains` is refused with a line in the output; a connection
//! that skips the proxy (curl `--noproxy`, a UDP datagram) reaches nothing.
//!
//! The `*_unconfined` tests are the controls: the same commands, without
//! agentcore, against the same registries named `127.0.0.1`. When a
//! confined test fails and its control passes, the fault is the proxy or
//! the sandbox, not the registry.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::support::registry::*;
use crate::support::require::*;
use crate::support::sandbox::*;

/// The policy of these tests: the allow list names `registry.test` only;
/// `denied.test` resolves (to the same registry) but is not allowed; the
/// toolchains' caches are writable.
const POLICY: &str = r#"[sandbox]
mode = "required"
network = "allowlist"
allow_domains = ["registry.test"]
resolve = { "registry.test" = "127.0.0.1", "denied.test" = "127.0.0.1" }
toolchains = ["cargo", "npm", "pip"]
"#;

/// The Python the commands run pip with: the system one, by path, as in
/// the other sandbox tests (not whichever shim is first on `PATH`).
const PYTHON: &str = "/usr/bin/python3";

/// Runs `command` in one confined bash call at the scene's root; its text,
/// after asserting the call succeeded with exit code 0.
fn confined_ok(s: &Scene, command: &str) -> String {
    let events = events(&output_of(
        || {
            let mut agentcore = agentcore(s, User::Current, "bypass", &[]);
            // The user of the scene has their cargo home in the scene's
            // home; what `cargo test` set for this process is not theirs.
            for (name, _) in std::env::vars_os() {
                if name.to_string_lossy().starts_with("CARGO") {
                    agentcore.env_remove(name);
                }
            }
            agentcore
        },
        &[bash("c", command)],
    ));
    let (outcome, text) = end(&events, "c");
    assert_eq!(outcome, "success", "{text}");
    assert!(text.starts_with("Exit code: 0\n"), "{command}: {text}");
    text
}

/// Runs `command` with `bash -c` in `dir`, unconfined, `HOME` a folder of
/// `dir`'s (caches stay out of the user's); asserts it exits 0 and returns
/// stdout and stderr.
fn unconfined_ok(dir: &Path, command: &str) -> String {
    let home = dir.join(".home");
    std::fs::create_dir_all(&home).unwrap();
    let out = Command::new("bash")
        .args(["-c", command])
        .current_dir(dir)
        .env("HOME", &home)
        .env_remove("CARGO_HOME")
        .env_remove("XDG_CACHE_HOME")
        .env_remove("npm_config_cache")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{command}: {text}");
    text
}

/// A scratch folder for a control test.
fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("agentcore-registry-control-")
        .tempdir_in("/tmp")
        .unwrap()
}

fn curl_hello(server: &Server) -> String {
    format!("curl -sS --max-time 30 {}", server.url("/hello"))
}

fn git_clone(repo: &GitRepository) -> String {
    format!(
        "git clone -q {} demo && cat demo/README.md && git -C demo rev-parse HEAD",
        repo.url
    )
}

fn pip_download(server: &Server, wheel: &PypiWheel) -> String {
    format!(
        "{PYTHON} -m pip download --no-deps --disable-pip-version-check --index-url {} \
         --trusted-host {} -d wheels agentcore-demo && ls wheels",
        wheel.index_url,
        server.authority()
    )
}

/// A project depending on `agentcore-demo` 1.0.0 from `npm.registry`.
fn npm_project(dir: &Path, npm: &NpmPackage) {
    put(
        &dir.join("package.json"),
        r#"{
  "name": "demo-app",
  "version": "0.0.0",
  "private": true,
  "dependencies": { "agentcore-demo": "1.0.0" }
}
"#,
    );
    put(
        &dir.join(".npmrc"),
        &format!(
            "registry={}\naudit=false\nfund=false\nupdate-notifier=false\n",
            npm.registry
        ),
    );
}

const NPM_INSTALL: &str =
    "npm install && node -e 'console.log(require(\"agentcore-demo\")(\"npm\"))'";

/// The folder of the Rust toolchain's real binaries: the rustup proxies on
/// `PATH` look for toolchains in `$HOME/.rustup` unless `RUSTUP_HOME` is
/// set, and `HOME` is the scene's.
fn rust_bin() -> PathBuf {
    let out = Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .unwrap();
    assert!(out.status.success(), "rustc --print sysroot failed");
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()).join("bin")
}

/// A binary crate depending on `agentcore-demo` 0.1 from the registry
/// `local` (`krate.index`, in `.cargo/config.toml`).
fn cargo_project(dir: &Path, krate: &CargoCrate) {
    put(
        &dir.join("Cargo.toml"),
        "[package]\nname = \"demo-app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         [dependencies]\nagentcore-demo = { version = \"0.1\", registry = \"local\" }\n",
    );
    put(
        &dir.join("src/main.rs"),
        "fn main() {\n    println!(\"{}\", agentcore_demo::greeting());\n}\n",
    );
    put(
        &dir.join(".cargo/config.toml"),
        &format!("[registries.local]\nindex = \"{}\"\n", krate.index),
    );
}

fn cargo_run() -> String {
    format!("export PATH={}:$PATH && cargo run -q", rust_bin().display())
}

// Confined: through `agentcore run` and the proxies.

#[test]
#[ignore = "needs the command sandbox and curl"]
fn curl_reaches_an_allowed_name_through_the_proxy() {
    require_sandbox();
    require_program("curl");
    let server = Server::start_as(NAME);
    hello(&server);
    let s = scene(POLICY);
    let text = confined_ok(&s, &curl_hello(&server));
    assert!(text.contains(HELLO), "{text}");
    server.assert_saw("GET", "/hello");
}

#[test]
#[ignore = "needs the command sandbox and git"]
fn git_clones_over_http_through_the_proxy() {
    require_sandbox();
    require_program("git");
    let server = Server::start_as(NAME);
    let repo = git_repository(&server);
    let s = scene(POLICY);
    let text = confined_ok(&s, &git_clone(&repo));
    assert!(text.contains(repo.readme), "{text}");
    assert!(text.contains(&repo.commit), "{text}");
    server.assert_saw("GET", &repo.refs_path);
    assert_eq!(
        std::fs::read_to_string(s.root.join("demo/README.md")).unwrap(),
        repo.readme
    );
}

#[test]
#[ignore = "needs the command sandbox and /usr/bin/python3 with pip"]
fn pip_downloads_a_wheel_through_the_proxy() {
    require_sandbox();
    require_file(PYTHON);
    let server = Server::start_as(NAME);
    let wheel = pypi_wheel(&server);
    let s = scene(POLICY);
    let text = confined_ok(&s, &pip_download(&server, &wheel));
    assert!(text.contains(wheel.file_name), "{text}");
    server.assert_saw("GET", &wheel.project_path);
    server.assert_saw("GET", &wheel.wheel_path);
    assert!(s.root.join("wheels").join(wheel.file_name).is_file());
}

#[test]
#[ignore = "needs the command sandbox and npm"]
fn npm_installs_from_the_registry_through_the_proxy() {
    require_sandbox();
    require_program("npm");
    require_program("node");
    let server = Server::start_as(NAME);
    let npm = npm_package(&server);
    let s = scene(POLICY);
    npm_project(&s.root, &npm);
    let text = confined_ok(&s, NPM_INSTALL);
    assert!(text.contains(&format!("{NPM_GREETING}npm")), "{text}");
    server.assert_saw("GET", &npm.packument_path);
    server.assert_saw("GET", &npm.tarball_path);
    // The cache the `npm` toolchain made writable was used.
    assert!(s.home.join(".npm/_cacache").is_dir());
}

#[test]
#[ignore = "needs the command sandbox and cargo"]
fn cargo_builds_against_a_sparse_registry_through_the_proxy() {
    require_sandbox();
    require_program("rustc");
    require_program("cargo");
    let server = Server::start_as(NAME);
    let krate = cargo_crate(&server);
    let s = scene(POLICY);
    cargo_project(&s.root, &krate);
    let text = confined_ok(&s, &cargo_run());
    assert!(text.contains(CRATE_GREETING), "{text}");
    server.assert_saw("GET", &krate.config_path);
    server.assert_saw("GET", &krate.entry_path);
    server.assert_saw("GET", &krate.download_path);
    assert!(s.home.join(".cargo/registry").is_dir());
}

#[test]
#[ignore = "needs the command sandbox and curl"]
fn a_name_not_in_allow_domains_is_refused_by_the_proxy() {
    require_sandbox();
    require_program("curl");
    let server = Server::start_as(DENIED);
    hello(&server);
    let s = scene(POLICY);
    let command = format!("curl -sS -f --max-time 30 {}", server.url("/hello"));
    let (outcome, text) = end(&run(&s, "bypass", &[bash("c", &command)]), "c");
    assert_eq!(outcome, "success", "{text}");
    assert!(!text.starts_with("Exit code: 0\n"), "{text}");
    assert!(!text.contains(HELLO), "{text}");
    assert!(
        text.contains(&format!(
            "(sandboxed: connection to {} refused: not in allow_domains)",
            server.authority()
        )),
        "{text}"
    );
    assert_eq!(server.requests(), []);
}

/// Sends one UDP datagram to each address of argv (`host:port`), printing
/// `sent HOST` or `error HOST: …` for each.
const UDP_SEND: &str = r#"
import socket, sys
for target in sys.argv[1:]:
    host, port = target.rsplit(":", 1)
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.sendto(b"escape", (host, int(port)))
        print("sent", host)
    except OSError as e:
        print("error", host + ":", e)
"#;

/// The host's address on its default route, when it has one: where a
/// datagram to "the host" from outside its loopback would go.
fn host_address() -> Option<std::net::IpAddr> {
    let probe = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    // Connecting a UDP socket sends nothing; it picks the source address.
    probe.connect("192.0.2.1:9").ok()?;
    let ip = probe.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

#[test]
#[ignore = "needs the command sandbox, curl and /usr/bin/python3"]
fn connections_that_skip_the_proxy_reach_nothing() {
    require_sandbox();
    require_program("curl");
    require_file(PYTHON);
    let server = Server::start_as(NAME);
    hello(&server);
    let udp = std::net::UdpSocket::bind("0.0.0.0:0").unwrap();
    let udp_port = udp.local_addr().unwrap().port();
    let mut targets = vec![format!("127.0.0.1:{udp_port}")];
    let host = host_address();
    if let Some(ip) = host {
        targets.push(format!("{ip}:{udp_port}"));
    }
    let s = scene(POLICY);
    put(&s.root.join("udp.py"), UDP_SEND);
    let events = run(
        &s,
        "bypass",
        &[
            bash(
                "direct",
                &format!(
                    "curl -sS --noproxy '*' --max-time 10 http://127.0.0.1:{}/hello",
                    server.port()
                ),
            ),
            bash(
                "by-name",
                &format!(
                    "curl -sS --noproxy '*' --max-time 10 {}",
                    server.url("/hello")
                ),
            ),
            bash("udp", &format!("{PYTHON} udp.py {}", targets.join(" "))),
        ],
    );
    for id in ["direct", "by-name"] {
        let (outcome, text) = end(&events, id);
        assert_eq!(outcome, "success", "{text}");
        assert!(!text.starts_with("Exit code: 0\n"), "{id}: {text}");
        assert!(!text.contains(HELLO), "{id}: {text}");
    }
    let (outcome, text) = end(&events, "udp");
    assert_eq!(outcome, "success", "{text}");
    assert!(text.starts_with("Exit code: 0\n"), "{text}");
    if let Some(ip) = host {
        // Only a loopback in the session: the host's address is unreachable.
        assert!(text.contains(&format!("error {ip}:")), "{text}");
    }
    udp.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let mut buf = [0u8; 64];
    assert!(
        udp.recv_from(&mut buf).is_err(),
        "a datagram reached the host: {text}"
    );
    assert_eq!(server.requests(), []);
}

// Controls: the same commands, unconfined, against `127.0.0.1`.

#[test]
#[ignore = "needs curl"]
fn curl_reaches_the_registry_unconfined() {
    require_program("curl");
    let server = Server::start_as("127.0.0.1");
    hello(&server);
    let dir = scratch();
    let text = unconfined_ok(dir.path(), &curl_hello(&server));
    assert_eq!(text, HELLO);
    server.assert_saw("GET", "/hello");
}

#[test]
#[ignore = "needs git"]
fn git_clones_the_registry_unconfined() {
    require_program("git");
    let server = Server::start_as("127.0.0.1");
    let repo = git_repository(&server);
    let dir = scratch();
    let text = unconfined_ok(dir.path(), &git_clone(&repo));
    assert!(text.contains(repo.readme), "{text}");
    assert!(text.contains(&repo.commit), "{text}");
    server.assert_saw("GET", &repo.refs_path);
}

#[test]
#[ignore = "needs /usr/bin/python3 with pip"]
fn pip_downloads_from_the_registry_unconfined() {
    require_file(PYTHON);
    let server = Server::start_as("127.0.0.1");
    let wheel = pypi_wheel(&server);
    let dir = scratch();
    let text = unconfined_ok(dir.path(), &pip_download(&server, &wheel));
    assert!(text.contains(wheel.file_name), "{text}");
    server.assert_saw("GET", &wheel.wheel_path);
    // pip checked the wheel against the index's `#sha256=`, and so can we.
    let unzip = Command::new(PYTHON)
        .args([
            "-c",
            "import sys, zipfile; zipfile.ZipFile(sys.argv[1]).testzip() is None or sys.exit(1)",
        ])
        .arg(dir.path().join("wheels").join(wheel.file_name))
        .status()
        .unwrap();
    assert!(unzip.success());
}

#[test]
#[ignore = "needs npm"]
fn npm_installs_from_the_registry_unconfined() {
    require_program("npm");
    require_program("node");
    let server = Server::start_as("127.0.0.1");
    let npm = npm_package(&server);
    let dir = scratch();
    npm_project(dir.path(), &npm);
    let text = unconfined_ok(dir.path(), NPM_INSTALL);
    assert!(text.contains(&format!("{NPM_GREETING}npm")), "{text}");
    server.assert_saw("GET", &npm.tarball_path);
    let lock = std::fs::read_to_string(dir.path().join("package-lock.json")).unwrap();
    assert!(lock.contains(&npm.integrity), "{lock}");
}

#[test]
#[ignore = "needs cargo"]
fn cargo_builds_against_the_registry_unconfined() {
    require_program("rustc");
    require_program("cargo");
    let server = Server::start_as("127.0.0.1");
    let krate = cargo_crate(&server);
    let dir = scratch();
    cargo_project(dir.path(), &krate);
    let text = unconfined_ok(dir.path(), &cargo_run());
    assert!(text.contains(CRATE_GREETING), "{text}");
    server.assert_saw("GET", &krate.download_path);
    let lock = std::fs::read_to_string(dir.path().join("Cargo.lock")).unwrap();
    assert!(lock.contains(&krate.cksum), "{lock}");
}

#[test]
fn the_registry_server_logs_and_answers_plain_http() {
    let server = Server::start_as("127.0.0.1");
    hello(&server);
    let ask = |request: &str| {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", server.port())).unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        answer
    };
    let answer = ask("GET /hello?x=1 HTTP/1.1\r\nHost: a.test:1\r\nConnection: close\r\n\r\n");
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert!(answer.ends_with(&format!("\r\n\r\n{HELLO}")), "{answer}");
    let answer = ask(&format!(
        "GET {} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        server.url("/../etc/passwd"),
        server.authority()
    ));
    assert!(answer.starts_with("HTTP/1.1 404 "), "{answer}");
    let answer = ask("POST /hello HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc");
    assert!(answer.starts_with("HTTP/1.1 404 "), "{answer}");
    let log = server.requests();
    assert_eq!(log.len(), 3, "{log:?}");
    assert_eq!(
        (
            log[0].method.as_str(),
            log[0].path.as_str(),
            log[0].host.as_deref()
        ),
        ("GET", "/hello", Some("a.test:1"))
    );
    assert_eq!(log[1].path, "/../etc/passwd");
    assert_eq!(
        (log[2].method.as_str(), log[2].host.as_deref()),
        ("POST", None)
    );
}
