//! Issue 32, item 1: the MCP client reaches `https://` servers with
//! rustls. A private CA named in `ca_file` is trusted besides the
//! platform's roots; without it the server's certificate is refused; a
//! certificate for another name is refused; plain `http://` reaches only
//! loopback unless the entry says `allow_insecure = true`.
//!
//! The server is `agentcore mcp --http` behind a small TLS front
//! (tests/mcp_client/tls_proxy.py), with a CA and a certificate for
//! `localhost` made by `openssl` for the test.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::json;

use crate::support::cli::{end, run_with_policy as run, text, turn};
use crate::support::http::{TOKEN, running};

const TLS_PROXY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp_client/tls_proxy.py");

fn openssl(dir: &Path, args: &[&str]) {
    let output = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl runs");
    assert!(
        output.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A CA (`ca.pem`) and a certificate it signed for `localhost` only
/// (`server.pem`, `server.key`) in `dir`.
fn certificates(dir: &Path) {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=agentcore test CA",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
        ],
    );
    std::fs::write(
        dir.join("ext.cnf"),
        "basicConstraints=CA:FALSE\nsubjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=localhost",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
        ],
    );
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "ext.cnf",
            "-out",
            "server.pem",
        ],
    );
}

/// The TLS front, killed when dropped.
struct Front {
    child: Child,
    port: u16,
}

impl Drop for Front {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn front(certs: &Path, backend: u16) -> Front {
    let mut child = Command::new("python3")
        .arg(TLS_PROXY)
        .arg(certs.join("server.pem"))
        .arg(certs.join("server.key"))
        .arg(backend.to_string())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line.trim().parse().expect("the front's port");
    Front { child, port }
}

fn policy(url: &str, ca_file: Option<&PathBuf>) -> String {
    let ca = ca_file
        .map(|p| format!("ca_file = {}\n", json!(p)))
        .unwrap_or_default();
    format!(
        "allow = [\"mcp__remote__*\"]\n[[mcp_servers]]\nname = \"remote\"\nurl = {}\nheaders = {{ Authorization = {} }}\nstartup_timeout_secs = 20\n{ca}",
        json!(url),
        json!(format!("Bearer {TOKEN}")),
    )
}

#[test]
fn an_https_server_signed_by_the_ca_file_is_mounted_and_others_are_refused() {
    let certs = tempfile::tempdir().unwrap();
    certificates(certs.path());
    let server = running("127.0.0.1:0", &[], &[("AGENTCORE_MCP_TOKEN", TOKEN)]);
    std::fs::write(server.root.path().join("notes.txt"), "over tls\n").unwrap();
    let front = front(certs.path(), server.connect.port());
    let ca = certs.path().join("ca.pem");
    let read = turn(&[("r", "mcp__remote__read", json!({"file_path": "notes.txt"}))]);

    // Trusted through ca_file, named localhost: mounted, read through it.
    let url = format!("https://localhost:{}/mcp", front.port);
    let (events, output) = run(&policy(&url, Some(&ca)), &read);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let r = end(&events, "r");
    assert_eq!(r["outcome"], "success", "{r:#} {stderr}");
    assert!(text(r).contains("over tls"), "{r:#}");

    // Without ca_file the platform's roots do not know the CA.
    let (events, output) = run(&policy(&url, None), &read);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("MCP server \"remote\""), "{stderr}");
    assert!(
        stderr.contains("invalid peer certificate: UnknownIssuer"),
        "the refusal names the certificate: {stderr}"
    );
    assert_eq!(end(&events, "r")["outcome"], "failed");

    // The certificate is for localhost, not for 127.0.0.1.
    let by_address = format!("https://127.0.0.1:{}/mcp", front.port);
    let (events, output) = run(&policy(&by_address, Some(&ca)), &read);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("MCP server \"remote\""), "{stderr}");
    assert!(
        stderr.contains("invalid peer certificate") && stderr.contains("not valid for name"),
        "the refusal names the certificate: {stderr}"
    );
    assert_eq!(end(&events, "r")["outcome"], "failed");
    assert!(!stderr.contains(TOKEN), "{stderr}");
}

#[test]
fn a_ca_file_that_is_not_pem_fails_the_mount_by_name() {
    let etc = tempfile::tempdir().unwrap();
    let bad = etc.path().join("ca.pem");
    std::fs::write(&bad, "not a certificate\n").unwrap();
    let (_, output) = run(
        &policy("https://localhost:1/mcp", Some(&bad)),
        &turn(&[("b", "ls", json!({}))]),
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("MCP server \"remote\": `ca_file` ")
            && stderr.contains("holds no PEM certificate"),
        "{stderr}"
    );
}

/// A server that answers with a redirect does not get the request, nor
/// the token of `headers`, sent anywhere else: the mount fails by name and
/// the address it pointed to sees no request.
#[test]
fn a_redirect_is_not_followed_and_the_token_goes_nowhere_else() {
    use std::io::{Read, Write};
    use std::net::TcpListener;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    let elsewhere = TcpListener::bind("127.0.0.1:0").unwrap();
    let elsewhere_port = elsewhere.local_addr().unwrap().port();
    elsewhere.set_nonblocking(true).unwrap();
    let redirector = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = redirector.local_addr().unwrap().port();
    let done = Arc::new(AtomicBool::new(false));
    let stop = done.clone();
    let thread = std::thread::spawn(move || {
        redirector.set_nonblocking(true).unwrap();
        while !stop.load(Ordering::Relaxed) {
            if let Ok((mut conn, _)) = redirector.accept() {
                conn.set_nonblocking(false).unwrap();
                let mut buf = [0u8; 8192];
                let _ = conn.read(&mut buf);
                let _ = write!(
                    conn,
                    "HTTP/1.1 307 Temporary Redirect\r\nLocation: http://127.0.0.1:{elsewhere_port}/mcp\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                );
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    });
    let url = format!("http://127.0.0.1:{port}/mcp");
    let (events, output) = run(
        &policy(&url, None),
        &turn(&[("r", "mcp__remote__read", json!({"file_path": "x"}))]),
    );
    done.store(true, Ordering::Relaxed);
    thread.join().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("MCP server \"remote\""), "{stderr}");
    assert_eq!(end(&events, "r")["outcome"], "failed");
    assert!(
        elsewhere.accept().is_err(),
        "the redirect was followed to the other address"
    );
    assert!(!stderr.contains(TOKEN), "{stderr}");
}
