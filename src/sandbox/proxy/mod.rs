//! The domain-filtering network proxy of the command sandbox.
//!
//! With `network = "allowlist"`, a sandboxed command's network namespace
//! has only loopback; it reaches the network through two proxies served in
//! agentcore's process: an HTTP proxy (`CONNECT` tunnels and plain-HTTP
//! forwarding) and a SOCKS5 proxy. Their listening sockets are made inside
//! the namespace and handed to [`Proxy::start`]; the connections they make
//! go out from the host's network.
//!
//! What a client may reach:
//!
//! - **names** in [`ProxyConfig::allow_domains`]: exact (`crates.io`) or
//!   below a wildcard (`*.npmjs.org` covers `registry.npmjs.org`, not
//!   `npmjs.org`), case-insensitive, a trailing dot ignored; names that are
//!   not plain ASCII letter-digit-hyphen labels are refused;
//! - **IP addresses** only when listed there by address;
//! - **resolution** is the host's: [`ProxyConfig::resolve`] first (trusted
//!   as written, loopback included), else DNS, whose answers must be public
//!   addresses (not loopback, private, link-local, CGNAT, ...) unless
//!   listed; the proxy connects to exactly the addresses it checked, on
//!   exactly the port asked (a name whose answer changes between check and
//!   connect cannot reach what was not checked);
//! - **tunnels** (`CONNECT`, SOCKS) carry nothing upstream before the
//!   client's first bytes are understood: a TLS ClientHello whose server
//!   name is the name asked for, or an HTTP/1.x request whose `Host` is.
//!   Anything else is refused.
//!
//! Each refusal answers the client (HTTP 403, SOCKS reply 0x02) and is
//! kept as a [`Refusal`], whose line reads
//! `(sandboxed: connection to example.com:443 refused: not in allow_domains)`.
//!
//! ```no_run
//! # fn main() -> std::io::Result<()> {
//! use agentcore::sandbox::proxy::{Proxy, ProxyConfig};
//!
//! let config = ProxyConfig::allowing(["crates.io", "*.crates.io"]);
//! let http = std::net::TcpListener::bind("127.0.0.1:0")?;
//! let socks = std::net::TcpListener::bind("127.0.0.1:0")?;
//! let proxy = Proxy::start(config, http, socks)?;
//! let mark = proxy.mark();
//! // ... run a command with HTTPS_PROXY=http://127.0.0.1:PORT ...
//! for refusal in proxy.refusals_since(mark) {
//!     println!("{refusal}");
//! }
//! # Ok(()) }
//! ```

mod domains;
mod first_bytes;
mod http;
mod resolve;
mod socks;

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use serde::Serialize;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

pub use domains::AllowList;
pub use first_bytes::{FirstBytes, Malformed, client_hello_sni, judge};

use domains::Host;
use resolve::Refused;

/// What the proxy allows, and its limits.
///
/// ```
/// use agentcore::sandbox::proxy::ProxyConfig;
///
/// let mut config = ProxyConfig::allowing(["registry.test"]);
/// config
///     .resolve
///     .insert("registry.test".into(), vec!["127.0.0.1".parse().unwrap()]);
/// assert!(config.validate().is_ok());
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ProxyConfig {
    /// Names (`crates.io`), wildcards (`*.npmjs.org`, strictly below) and
    /// IP addresses (`127.0.0.1`, `::1`) a command may reach.
    pub allow_domains: Vec<String>,
    /// Addresses for names, used instead of DNS and trusted as written
    /// (offline mirrors, tests). A name here must still be allowed.
    pub resolve: BTreeMap<String, Vec<IpAddr>>,
    /// Most connections (client side) open at once, both proxies together;
    /// beyond it a new one is refused. Default 256.
    pub max_connections: usize,
    /// Most bytes of an HTTP request head (at least 8 KiB). Default 64 KiB.
    pub max_header_bytes: usize,
    /// Most headers in an HTTP request. Default 100.
    pub max_headers: usize,
    /// How long a client may take to send an HTTP request head. Default 10 s.
    pub header_timeout: Duration,
    /// How long a SOCKS client may take for its greeting and request.
    /// Default 10 s.
    pub socks_timeout: Duration,
    /// How long a tunnel's client may take to send its first bytes (a
    /// whole ClientHello or request head). Default 10 s.
    pub first_bytes_timeout: Duration,
    /// Most bytes read to find a tunnel's whole ClientHello or request
    /// head. Default 64 KiB.
    pub max_first_bytes: usize,
    /// How long resolving a name, then connecting upstream, may take, each.
    /// Default 10 s.
    pub connect_timeout: Duration,
}

impl Default for ProxyConfig {
    fn default() -> Self {
        ProxyConfig {
            allow_domains: Vec::new(),
            resolve: BTreeMap::new(),
            max_connections: 256,
            max_header_bytes: 64 * 1024,
            max_headers: 100,
            header_timeout: Duration::from_secs(10),
            socks_timeout: Duration::from_secs(10),
            first_bytes_timeout: Duration::from_secs(10),
            max_first_bytes: 64 * 1024,
            connect_timeout: Duration::from_secs(10),
        }
    }
}

impl ProxyConfig {
    /// The default limits with `domains` allowed.
    pub fn allowing<I, S>(domains: I) -> ProxyConfig
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        ProxyConfig {
            allow_domains: domains.into_iter().map(Into::into).collect(),
            ..ProxyConfig::default()
        }
    }

    /// The compiled allow list, or a sentence naming the bad pattern or
    /// setting and what is accepted.
    pub fn validate(&self) -> Result<AllowList, String> {
        let list = AllowList::new(&self.allow_domains)?;
        for name in self.resolve.keys() {
            if domains::normalize_name(name).as_deref() != Some(name.as_str()) {
                return Err(format!(
                    "resolve: {:?} is not a host name in lowercase without a trailing dot",
                    domains::shown(name)
                ));
            }
        }
        if self.max_connections == 0 {
            return Err("max_connections: must be at least 1".into());
        }
        if self.max_headers == 0 {
            return Err("max_headers: must be at least 1".into());
        }
        if self.max_header_bytes < 8192 || self.max_first_bytes < 1024 {
            return Err(
                "max_header_bytes must be at least 8192 and max_first_bytes at least 1024".into(),
            );
        }
        Ok(list)
    }
}

/// What the proxy did since it started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ProxyCounters {
    /// Connections made upstream (tunnels and forwarded requests).
    pub connections_allowed: u64,
    /// Connections and requests refused (each also a [`Refusal`]).
    pub connections_refused: u64,
    /// Bytes sent upstream.
    pub bytes_up: u64,
    /// Bytes received from upstream.
    pub bytes_down: u64,
    /// HTTP requests (`CONNECT` and forwarded) and SOCKS requests read.
    pub requests: u64,
}

/// A point in the refusal log ([`Proxy::mark`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct RefusalMark(u64);

/// One refused connection or request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Refusal {
    /// `host:port` as asked (`[::1]:443` for IPv6), or `None` when the
    /// proxy refused before learning it (too many connections).
    pub target: Option<String>,
    /// Why (`not in allow_domains`).
    pub reason: String,
}

impl fmt::Display for Refusal {
    /// `(sandboxed: connection to example.com:443 refused: not in allow_domains)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.target {
            Some(target) => write!(
                f,
                "(sandboxed: connection to {target} refused: {})",
                self.reason
            ),
            None => write!(
                f,
                "(sandboxed: connection to the proxy refused: {})",
                self.reason
            ),
        }
    }
}

/// The most refusals kept.
const REFUSALS_KEPT: usize = 256;

/// What the proxy's tasks share.
pub(crate) struct Shared {
    allow: AllowList,
    config: ProxyConfig,
    room: Arc<Semaphore>,
    allowed: AtomicU64,
    refused: AtomicU64,
    up: Arc<AtomicU64>,
    down: Arc<AtomicU64>,
    requests: AtomicU64,
    /// The next sequence number, and the last [`REFUSALS_KEPT`] refusals
    /// with theirs.
    log: Mutex<(u64, VecDeque<(u64, Refusal)>)>,
}

impl Shared {
    fn refuse(&self, target: Option<String>, reason: &str) -> Refusal {
        self.refused.fetch_add(1, Ordering::Relaxed);
        let refusal = Refusal {
            target,
            reason: reason.to_owned(),
        };
        let mut log = self.log.lock().unwrap_or_else(PoisonError::into_inner);
        let seq = log.0;
        log.0 += 1;
        if log.1.len() == REFUSALS_KEPT {
            log.1.pop_front();
        }
        log.1.push_back((seq, refusal.clone()));
        refusal
    }

    fn request(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
    }

    /// Checks `host:port` and resolves it: the addresses to connect to.
    async fn decide(&self, host: &Host, port: u16) -> Result<Vec<std::net::SocketAddr>, Refused> {
        resolve::decide(
            &self.allow,
            &self.config.resolve,
            host,
            port,
            self.config.connect_timeout,
        )
        .await
    }

    /// Connects to `addrs`; the stream counts its bytes.
    async fn connect(&self, addrs: &[std::net::SocketAddr]) -> io::Result<Counted<TcpStream>> {
        let stream = resolve::connect(addrs, self.config.connect_timeout).await?;
        self.allowed.fetch_add(1, Ordering::Relaxed);
        Ok(Counted {
            inner: stream,
            up: self.up.clone(),
            down: self.down.clone(),
        })
    }

    /// Reads `client`'s first bytes and, if they name `host`, sends them
    /// upstream and copies both ways until either side closes; otherwise
    /// records the refusal and closes both.
    async fn tunnel<C>(
        &self,
        mut client: C,
        host: &Host,
        port: u16,
        mut upstream: Counted<TcpStream>,
    ) where
        C: AsyncRead + AsyncWrite + Unpin,
    {
        let first = match self.first_bytes(&mut client, host).await {
            Ok(first) => first,
            Err(reason) => {
                self.refuse(Some(domains::target(host, port)), &reason);
                return;
            }
        };
        if upstream.write_all(&first).await.is_err() {
            return;
        }
        let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
    }

    /// The client's first bytes, once they are a ClientHello or request
    /// head naming `host`; else why not.
    async fn first_bytes<C: AsyncRead + Unpin>(
        &self,
        client: &mut C,
        host: &Host,
    ) -> Result<Vec<u8>, String> {
        let cap = self.config.max_first_bytes;
        let timeout = self.config.first_bytes_timeout;
        let mut buf = Vec::with_capacity(4096.min(cap));
        let read = async {
            loop {
                match judge(&buf) {
                    FirstBytes::NeedMore => {}
                    verdict => return Ok(verdict),
                }
                if buf.len() >= cap {
                    return Err(format!(
                        "not TLS nor HTTP (no whole ClientHello or request head in {cap} bytes)"
                    ));
                }
                let mut chunk = [0u8; 4096];
                let room = chunk.len().min(cap - buf.len());
                match client.read(&mut chunk[..room]).await {
                    Ok(0) | Err(_) if buf.is_empty() => {
                        return Err("not TLS nor HTTP (the client sent nothing)".to_owned());
                    }
                    Ok(0) | Err(_) => return Err("not TLS nor HTTP (cut short)".to_owned()),
                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                }
            }
        };
        let verdict = tokio::time::timeout(timeout, read).await.map_err(|_| {
            format!("not TLS nor HTTP (no whole ClientHello or request head within {timeout:?})")
        })??;
        match verdict {
            FirstBytes::Tls(None) if matches!(host, Host::Ip(_)) => Ok(buf),
            FirstBytes::Tls(None) => Err(format!("TLS without a server name, not {host}")),
            FirstBytes::Tls(Some(sni)) if host.is_named_by(&sni) => Ok(buf),
            FirstBytes::Tls(Some(sni)) => Err(format!(
                "TLS name {} does not match {host}",
                domains::shown(&sni)
            )),
            FirstBytes::Http(Some(h)) if host.is_named_by(strip_port(&h)) => Ok(buf),
            FirstBytes::Http(Some(h)) => Err(format!(
                "HTTP Host {} does not match {host}",
                domains::shown(&h)
            )),
            FirstBytes::Http(None) => Err("an HTTP request without one Host header".to_owned()),
            FirstBytes::Other(why) => Err(why.to_owned()),
            FirstBytes::NeedMore => Err("not TLS nor HTTP".to_owned()),
        }
    }
}

/// `host` of `host:port` or `[v6]:port`.
fn strip_port(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        return match rest.split_once(']') {
            Some((ip, _)) => &authority[..ip.len() + 2],
            None => authority,
        };
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
        _ => authority,
    }
}

/// A stream that counts the bytes written to it (up) and read from it
/// (down).
pub(crate) struct Counted<S> {
    inner: S,
    up: Arc<AtomicU64>,
    down: Arc<AtomicU64>,
}

impl<S: AsyncRead + Unpin> AsyncRead for Counted<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        let n = buf.filled().len() - before;
        self.down.fetch_add(n as u64, Ordering::Relaxed);
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Counted<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = polled {
            self.up.fetch_add(n as u64, Ordering::Relaxed);
        }
        polled
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// The running proxy: both listeners served on a thread of its own.
/// Dropping it stops accepting and closes every connection.
pub struct Proxy {
    shared: Arc<Shared>,
    stop: CancellationToken,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl fmt::Debug for Proxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Proxy")
            .field("counters", &self.counters())
            .finish_non_exhaustive()
    }
}

impl Proxy {
    /// Serves `http` (HTTP proxy) and `socks` (SOCKS5) with `config` on a
    /// thread of its own (a current-thread tokio runtime it owns), so it
    /// works from sync and async callers alike. Fails on an invalid
    /// `config` ([`ProxyConfig::validate`]'s sentence, `InvalidInput`) or
    /// when the runtime or the listeners cannot be set up.
    pub fn start(
        config: ProxyConfig,
        http: std::net::TcpListener,
        socks: std::net::TcpListener,
    ) -> io::Result<Proxy> {
        let allow = config
            .validate()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        http.set_nonblocking(true)?;
        socks.set_nonblocking(true)?;
        let (http, socks) = {
            let _entered = runtime.enter();
            (
                tokio::net::TcpListener::from_std(http)?,
                tokio::net::TcpListener::from_std(socks)?,
            )
        };
        let shared = Arc::new(Shared {
            allow,
            room: Arc::new(Semaphore::new(config.max_connections)),
            config,
            allowed: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            up: Arc::new(AtomicU64::new(0)),
            down: Arc::new(AtomicU64::new(0)),
            requests: AtomicU64::new(0),
            log: Mutex::new((0, VecDeque::new())),
        });
        let stop = CancellationToken::new();
        let thread = {
            let shared = shared.clone();
            let stop = stop.clone();
            std::thread::Builder::new()
                .name("agentcore-proxy".into())
                .spawn(move || {
                    runtime.block_on(async move {
                        tokio::spawn(http::serve(http, shared.clone()));
                        tokio::spawn(socks::serve(socks, shared));
                        stop.cancelled().await;
                    });
                    // Dropping the runtime drops every connection's task.
                    drop(runtime);
                })?
        };
        Ok(Proxy {
            shared,
            stop,
            thread: Some(thread),
        })
    }

    /// The counters so far.
    pub fn counters(&self) -> ProxyCounters {
        let s = &self.shared;
        ProxyCounters {
            connections_allowed: s.allowed.load(Ordering::Relaxed),
            connections_refused: s.refused.load(Ordering::Relaxed),
            bytes_up: s.up.load(Ordering::Relaxed),
            bytes_down: s.down.load(Ordering::Relaxed),
            requests: s.requests.load(Ordering::Relaxed),
        }
    }

    /// The point the refusal log has reached: refusals from now on are
    /// [`Proxy::refusals_since`] it.
    pub fn mark(&self) -> RefusalMark {
        let log = self
            .shared
            .log
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        RefusalMark(log.0)
    }

    /// The refusals since `mark` (of the last 256 kept), oldest first: the
    /// lines the bash tool appends to the output of a command that ran
    /// meanwhile.
    pub fn refusals_since(&self, mark: RefusalMark) -> Vec<Refusal> {
        let log = self
            .shared
            .log
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        log.1
            .iter()
            .filter(|(seq, _)| *seq >= mark.0)
            .map(|(_, r)| r.clone())
            .collect()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.cancel();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Takes a connection slot, or records the refusal.
fn admit(shared: &Shared) -> Option<tokio::sync::OwnedSemaphorePermit> {
    match shared.room.clone().try_acquire_owned() {
        Ok(permit) => Some(permit),
        Err(_) => {
            shared.refuse(
                None,
                &format!(
                    "more than {} connections at once",
                    shared.config.max_connections
                ),
            );
            None
        }
    }
}

/// Reads exactly `buf.len()` bytes.
async fn read_exact<R: AsyncRead + Unpin>(r: &mut R, buf: &mut [u8]) -> io::Result<()> {
    r.read_exact(buf).await.map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_stripped_from_host_headers() {
        assert_eq!(strip_port("a.test:8080"), "a.test");
        assert_eq!(strip_port("a.test"), "a.test");
        assert_eq!(strip_port("[::1]:80"), "[::1]");
        assert_eq!(strip_port("[::1]"), "[::1]");
    }

    #[test]
    fn refusal_lines_read_as_specified() {
        let r = Refusal {
            target: Some("example.com:443".into()),
            reason: "not in allow_domains".into(),
        };
        assert_eq!(
            r.to_string(),
            "(sandboxed: connection to example.com:443 refused: not in allow_domains)"
        );
    }

    #[test]
    fn bad_configs_are_refused() {
        assert!(ProxyConfig::allowing(["*"]).validate().is_err());
        let mut c = ProxyConfig::allowing(["a.test"]);
        c.resolve.insert("A.test".into(), vec![]);
        assert!(c.validate().is_err());
    }
}
