//! The loopback redirect of a sign-in (RFC 8252): a listener on
//! 127.0.0.1 at a port the system picks, which takes the browser's one
//! `GET /callback?code=…&state=…` and checks its `state`.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The largest request head read from the browser.
const MAX_HEAD: usize = 16 * 1024;
/// How long one connection may take to send its request head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);

/// What the authorization server sent back through the browser.
#[derive(Debug)]
pub(super) struct Callback {
    pub(super) code: String,
    pub(super) state: String,
    /// RFC 9207's `iss`, when given.
    pub(super) issuer: Option<String>,
}

/// The listener of one sign-in.
pub(super) struct Listener {
    listener: TcpListener,
    port: u16,
}

impl Listener {
    /// Listens on 127.0.0.1 at a free port.
    pub(super) async fn bind() -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let port = listener.local_addr()?.port();
        Ok(Self { listener, port })
    }

    /// The redirect URI to register and send.
    pub(super) fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}/callback", self.port)
    }

    /// Waits up to `timeout` for the redirect to `/callback`. Requests for
    /// other paths (a browser's `/favicon.ico`) get 404 and the wait goes
    /// on; a redirect whose `state` is not `state` ends the sign-in, and so
    /// does one that carries the authorization server's `error`.
    pub(super) async fn wait(
        self,
        state: &str,
        server: &str,
        timeout: Duration,
    ) -> Result<Callback, String> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let accepted = tokio::time::timeout_at(deadline, self.listener.accept()).await;
            let mut stream = match accepted {
                Err(_) => {
                    return Err(format!(
                        "the browser did not come back to {} within {} s; run the sign-in again and finish it in the browser",
                        self.redirect_uri(),
                        timeout.as_secs()
                    ));
                }
                Ok(Err(err)) => return Err(format!("the redirect listener failed: {err}")),
                Ok(Ok((stream, _))) => stream,
            };
            let Some(target) = read_target(&mut stream).await else {
                let _ = respond(&mut stream, "400 Bad Request", "Not a sign-in redirect.").await;
                continue;
            };
            let Ok(url) = reqwest::Url::parse(&format!("http://127.0.0.1{target}")) else {
                let _ = respond(&mut stream, "400 Bad Request", "Not a sign-in redirect.").await;
                continue;
            };
            if url.path() != "/callback" {
                let _ = respond(&mut stream, "404 Not Found", "Not found.").await;
                continue;
            }
            let param = |name: &str| {
                url.query_pairs()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.into_owned())
            };
            if param("state").as_deref() != Some(state) {
                let _ = respond(
                    &mut stream,
                    "400 Bad Request",
                    "This redirect does not belong to the sign-in agentcore started; the sign-in was stopped.",
                )
                .await;
                return Err(
                    "the browser's redirect carried a `state` this sign-in did not send, so it was refused (it may not come from the authorization server); run the sign-in again".to_owned(),
                );
            }
            if let Some(error) = param("error") {
                let _ = respond(
                    &mut stream,
                    "400 Bad Request",
                    "The authorization server refused the sign-in; see the terminal.",
                )
                .await;
                let detail = param("error_description")
                    .map(|d| format!(" ({})", printable(&d, 300)))
                    .unwrap_or_default();
                return Err(format!(
                    "the authorization server refused: {}{detail}; run the sign-in again, and allow agentcore in the browser",
                    printable(&error, 100)
                ));
            }
            let Some(code) = param("code").filter(|c| !c.is_empty()) else {
                let _ = respond(&mut stream, "400 Bad Request", "The redirect has no code.").await;
                return Err(
                    "the browser's redirect carried no authorization code; run the sign-in again"
                        .to_owned(),
                );
            };
            let _ = respond(
                &mut stream,
                "200 OK",
                &format!("Signed in to the MCP server {server:?}. You can close this tab."),
            )
            .await;
            return Ok(Callback {
                code,
                state: state.to_owned(),
                issuer: param("iss"),
            });
        }
    }
}

/// The request target of a `GET` on `stream`, or `None` when the head is
/// not one (or too slow, or too long).
async fn read_target(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let read = async {
        let mut chunk = [0u8; 2048];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = stream.read(&mut chunk).await.ok()?;
            if n == 0 || head.len() + n > MAX_HEAD {
                return None;
            }
            head.extend_from_slice(&chunk[..n]);
        }
        Some(())
    };
    tokio::time::timeout(HEAD_TIMEOUT, read).await.ok()??;
    let line = head.split(|b| *b == b'\n').next()?;
    let line = std::str::from_utf8(line).ok()?.trim_end();
    let mut parts = line.split(' ');
    let (method, target) = (parts.next()?, parts.next()?);
    (method == "GET" && target.starts_with('/')).then(|| target.to_owned())
}

/// At most `max` characters of `text` a server chose, without control
/// characters (no escape sequence reaches the terminal).
fn printable(text: &str, max: usize) -> String {
    text.chars().filter(|c| !c.is_control()).take(max).collect()
}

/// A small plain-text page.
async fn respond(stream: &mut TcpStream, status: &str, text: &str) -> std::io::Result<()> {
    let body = format!("{text}\n");
    let answer = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(answer.as_bytes()).await?;
    stream.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn get(uri: &str, path: &str) -> String {
        let addr = uri
            .trim_start_matches("http://")
            .trim_end_matches("/callback")
            .to_owned();
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream
            .write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        answer
    }

    #[tokio::test]
    async fn the_redirect_with_the_state_gives_the_code() {
        let listener = Listener::bind().await.unwrap();
        let uri = listener.redirect_uri();
        assert!(uri.starts_with("http://127.0.0.1:"), "{uri}");
        let waiting =
            tokio::spawn(async move { listener.wait("s-1", "gh", Duration::from_secs(10)).await });
        assert!(get(&uri, "/favicon.ico").await.starts_with("HTTP/1.1 404"));
        let answer = get(&uri, "/callback?code=c%2F1&state=s-1&iss=https%3A%2F%2Fa").await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        let callback = waiting.await.unwrap().unwrap();
        assert_eq!(callback.code, "c/1");
        assert_eq!(callback.issuer.as_deref(), Some("https://a"));
    }

    #[tokio::test]
    async fn a_wrong_state_ends_the_sign_in() {
        let listener = Listener::bind().await.unwrap();
        let uri = listener.redirect_uri();
        let waiting =
            tokio::spawn(async move { listener.wait("s-1", "gh", Duration::from_secs(10)).await });
        let answer = get(&uri, "/callback?code=c&state=forged").await;
        assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
        let err = waiting.await.unwrap().unwrap_err();
        assert!(err.contains("`state` this sign-in did not send"), "{err}");
    }

    #[tokio::test]
    async fn an_error_from_the_server_is_reported_and_no_one_waits_forever() {
        let listener = Listener::bind().await.unwrap();
        let uri = listener.redirect_uri();
        let waiting =
            tokio::spawn(async move { listener.wait("s", "gh", Duration::from_secs(10)).await });
        get(
            &uri,
            "/callback?error=access_denied&error_description=no%1B%5B31m&state=s",
        )
        .await;
        let err = waiting.await.unwrap().unwrap_err();
        assert!(err.contains("refused: access_denied (no[31m)"), "{err}");
        let listener = Listener::bind().await.unwrap();
        let err = listener
            .wait("s", "gh", Duration::from_millis(100))
            .await
            .unwrap_err();
        assert!(err.contains("did not come back"), "{err}");
    }
}
