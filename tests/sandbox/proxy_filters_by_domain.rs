//! The sandbox's network proxy (`agentcore::sandbox::proxy`), served on
//! loopback without a namespace: what it lets through, what it refuses and
//! the line it records, against test servers on 127.0.0.1 reached through
//! names mapped with `resolve`.

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agentcore::sandbox::proxy::{Proxy, ProxyConfig, RefusalMark};

use crate::support::require::require_program;

const LOCAL: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

/// A proxy allowing `allow`, with `registry.test`, `a.registry.test` and
/// `other.test` all mapped to 127.0.0.1, and `tweak` applied.
struct Scene {
    proxy: Proxy,
    start: RefusalMark,
    http: SocketAddr,
    socks: SocketAddr,
}

fn scene(allow: &[&str], tweak: impl FnOnce(&mut ProxyConfig)) -> Scene {
    let mut config = ProxyConfig::allowing(allow.iter().copied());
    for name in ["registry.test", "a.registry.test", "other.test"] {
        config.resolve.insert(name.into(), vec![LOCAL]);
    }
    tweak(&mut config);
    let http = TcpListener::bind("127.0.0.1:0").expect("bind");
    let socks = TcpListener::bind("127.0.0.1:0").expect("bind");
    let (h, s) = (http.local_addr().unwrap(), socks.local_addr().unwrap());
    let proxy = Proxy::start(config, http, socks).expect("proxy starts");
    Scene {
        start: proxy.mark(),
        proxy,
        http: h,
        socks: s,
    }
}

impl Scene {
    /// The refusal lines since the proxy started.
    fn lines(&self) -> Vec<String> {
        assert!(
            self.proxy.refusals_since(self.proxy.mark()).is_empty(),
            "a mark taken now sees nothing yet"
        );
        self.proxy
            .refusals_since(self.start)
            .iter()
            .map(ToString::to_string)
            .collect()
    }
}

/// Connections a test server saw: the bytes each received, on close.
type Seen = Arc<Mutex<Vec<Vec<u8>>>>;

/// A server that, per connection, answers its first bytes with
/// `port PORT\n` and records everything it received once the client closes
/// (what a TLS server would see, without TLS).
fn recorder() -> (u16, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().unwrap().port();
    let seen: Seen = Arc::default();
    let record = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let record = record.clone();
            std::thread::spawn(move || {
                let mut got = Vec::new();
                let mut buf = [0u8; 4096];
                let mut answered = false;
                while let Ok(n) = stream.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    got.extend_from_slice(&buf[..n]);
                    if !answered {
                        answered = true;
                        let _ = stream.write_all(format!("port {port}\n").as_bytes());
                    }
                }
                record.lock().unwrap().push(got);
            });
        }
    });
    (port, seen)
}

/// A plain HTTP/1.1 server answering `hello from PORT` and recording each
/// request head (and body, by Content-Length).
fn http_server() -> (u16, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().unwrap().port();
    let seen: Seen = Arc::default();
    let record = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let record = record.clone();
            std::thread::spawn(move || {
                let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                let Some(mut request) = read_head(&mut stream) else {
                    return;
                };
                let head = String::from_utf8_lossy(&request).to_lowercase();
                let len = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse::<usize>().ok())
                    .unwrap_or(0);
                let mut body = vec![0u8; len];
                let _ = stream.read_exact(&mut body);
                request.extend_from_slice(&body);
                record.lock().unwrap().push(request);
                let text = format!("hello from {port}");
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                    text.len()
                );
            });
        }
    });
    (port, seen)
}

/// A request or answer head, through its blank line.
fn read_head(stream: &mut TcpStream) -> Option<Vec<u8>> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return None,
        }
    }
    Some(head)
}

/// Waits until `seen` holds `n` connections.
fn wait_for(seen: &Seen, n: usize) -> Vec<Vec<u8>> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let got = seen.lock().unwrap().clone();
        if got.len() >= n || Instant::now() > deadline {
            return got;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn client(addr: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect(addr).expect("connect to the proxy");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
}

/// Everything `stream` sends until it closes.
fn read_all(stream: &mut TcpStream) -> String {
    let mut out = Vec::new();
    let _ = stream.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether the proxy closed `stream` (read gives end of file or a reset).
fn closed(stream: &mut TcpStream) -> bool {
    let mut buf = [0u8; 64];
    matches!(stream.read(&mut buf), Ok(0) | Err(_))
}

/// `CONNECT target`: the answer's status line and the stream.
fn connect(proxy: SocketAddr, target: &str) -> (String, TcpStream) {
    let mut stream = client(proxy);
    write!(
        stream,
        "CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n"
    )
    .unwrap();
    let head = read_head(&mut stream).expect("an answer");
    let head = String::from_utf8_lossy(&head).into_owned();
    (head.lines().next().unwrap_or("").to_owned(), stream)
}

/// A SOCKS5 CONNECT to `addr` (already encoded: ATYP and address) and
/// `port`: the reply code and the stream.
fn socks(proxy: SocketAddr, addr: &[u8], port: u16, with_password: bool) -> (u8, TcpStream) {
    let mut stream = client(proxy);
    if with_password {
        stream.write_all(&[5, 1, 2]).unwrap();
        let mut choice = [0u8; 2];
        stream.read_exact(&mut choice).unwrap();
        assert_eq!(choice, [5, 2]);
        stream.write_all(&[1, 1, b'u', 2, b'p', b'w']).unwrap();
        let mut ok = [0u8; 2];
        stream.read_exact(&mut ok).unwrap();
        assert_eq!(ok, [1, 0]);
    } else {
        stream.write_all(&[5, 1, 0]).unwrap();
        let mut choice = [0u8; 2];
        stream.read_exact(&mut choice).unwrap();
        assert_eq!(choice, [5, 0]);
    }
    let mut request = vec![5, 1, 0];
    request.extend_from_slice(addr);
    request.extend_from_slice(&port.to_be_bytes());
    stream.write_all(&request).unwrap();
    let mut reply = [0u8; 10];
    stream.read_exact(&mut reply).expect("a SOCKS reply");
    assert_eq!(reply[0], 5);
    (reply[1], stream)
}

fn domain(name: &str) -> Vec<u8> {
    let mut out = vec![3, name.len() as u8];
    out.extend_from_slice(name.as_bytes());
    out
}

/// A minimal syntactically valid TLS 1.3 ClientHello with `sni`, in one
/// record.
fn client_hello(sni: Option<&str>) -> Vec<u8> {
    let mut ext = Vec::new();
    if let Some(name) = sni {
        let n = name.len() as u16;
        ext.extend_from_slice(&[0, 0]);
        ext.extend_from_slice(&(n + 5).to_be_bytes());
        ext.extend_from_slice(&(n + 3).to_be_bytes());
        ext.push(0);
        ext.extend_from_slice(&n.to_be_bytes());
        ext.extend_from_slice(name.as_bytes());
    }
    ext.extend_from_slice(&[0x00, 0x2b, 0x00, 0x03, 0x02, 0x03, 0x04]);
    let mut body = vec![0x03, 0x03];
    body.extend_from_slice(&[0x5a; 32]);
    body.push(0);
    body.extend_from_slice(&[0x00, 0x02, 0x13, 0x01, 0x01, 0x00]);
    body.extend_from_slice(&(ext.len() as u16).to_be_bytes());
    body.extend_from_slice(&ext);
    let mut handshake = vec![1];
    handshake.extend_from_slice(&(body.len() as u32).to_be_bytes()[1..]);
    handshake.extend_from_slice(&body);
    let mut record = vec![0x16, 0x03, 0x01];
    record.extend_from_slice(&(handshake.len() as u16).to_be_bytes());
    record.extend_from_slice(&handshake);
    record
}

/// Sends `hello` through a tunnel, reads the server's answer, closes, and
/// returns the answer.
fn through(mut stream: TcpStream, hello: &[u8]) -> String {
    stream.write_all(hello).unwrap();
    let mut answer = [0u8; 64];
    let n = stream.read(&mut answer).unwrap_or(0);
    String::from_utf8_lossy(&answer[..n]).into_owned()
}

fn start(allow: &[&str], tweak: impl FnOnce(&mut ProxyConfig)) -> Scene {
    scene(allow, tweak)
}

#[test]
fn an_allowed_name_is_forwarded_as_plain_http() {
    let (port, seen) = http_server();
    let s = start(&["registry.test"], |_| {});
    let mut c = client(s.http);
    write!(
        c,
        "GET http://registry.test:{port}/crates/x?y=1 HTTP/1.1\r\nHost: wrong.test\r\nProxy-Authorization: Basic eA==\r\nProxy-Connection: keep-alive\r\nConnection: close, x-drop\r\nX-Drop: 1\r\nX-Keep: 2\r\n\r\n"
    )
    .unwrap();
    let answer = read_all(&mut c);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.ends_with(&format!("hello from {port}")), "{answer}");
    let got = wait_for(&seen, 1);
    let head = String::from_utf8_lossy(&got[0]).to_lowercase();
    assert!(head.starts_with("get /crates/x?y=1 http/1.1\r\n"), "{head}");
    assert!(
        head.contains(&format!("host: registry.test:{port}\r\n")),
        "{head}"
    );
    assert!(head.contains("x-keep: 2"), "{head}");
    for gone in [
        "proxy-authorization",
        "proxy-connection",
        "x-drop",
        "wrong.test",
    ] {
        assert!(!head.contains(gone), "{gone} forwarded: {head}");
    }
    assert!(s.lines().is_empty());
}

#[test]
fn connect_forwards_a_client_hello_byte_for_byte() {
    let (port, seen) = recorder();
    let s = start(&["registry.test"], |_| {});
    let (status, stream) = connect(s.http, &format!("registry.test:{port}"));
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    let hello = client_hello(Some("Registry.Test."));
    assert_eq!(through(stream, &hello), format!("port {port}\n"));
    assert_eq!(wait_for(&seen, 1), vec![hello]);
}

#[test]
fn socks5_with_a_domain_reaches_an_allowed_name() {
    let (port, seen) = recorder();
    let s = start(&["registry.test"], |_| {});
    for with_password in [false, true] {
        let (code, stream) = socks(s.socks, &domain("registry.test"), port, with_password);
        assert_eq!(code, 0);
        let hello = client_hello(Some("registry.test"));
        assert_eq!(through(stream, &hello), format!("port {port}\n"));
    }
    assert_eq!(wait_for(&seen, 2).len(), 2);
}

#[test]
fn a_denied_name_is_refused_with_the_exact_line() {
    let (port, seen) = http_server();
    let s = start(&["registry.test"], |_| {});
    let (status, mut stream) = connect(s.http, "other.test:443");
    assert!(status.starts_with("HTTP/1.1 403"), "{status}");
    let mut body = [0u8; 200];
    let n = stream.read(&mut body).unwrap();
    let line = "(sandboxed: connection to other.test:443 refused: not in allow_domains)";
    assert_eq!(String::from_utf8_lossy(&body[..n]).trim(), line);
    let (code, _) = socks(s.socks, &domain("other.test"), port, false);
    assert_eq!(code, 0x02, "not allowed by ruleset");
    let mut c = client(s.http);
    write!(c, "GET http://other.test:{port}/ HTTP/1.1\r\n\r\n").unwrap();
    assert!(read_all(&mut c).starts_with("HTTP/1.1 403"));
    assert_eq!(
        s.lines(),
        vec![
            line.to_owned(),
            format!("(sandboxed: connection to other.test:{port} refused: not in allow_domains)"),
            format!("(sandboxed: connection to other.test:{port} refused: not in allow_domains)"),
        ]
    );
    assert!(wait_for(&seen, 0).is_empty(), "nothing reached the server");
}

#[test]
fn a_wildcard_covers_names_below_it_only() {
    let (port, _seen) = recorder();
    let s = start(&["*.registry.test"], |_| {});
    let (status, stream) = connect(s.http, &format!("a.registry.test:{port}"));
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    assert_eq!(
        through(stream, &client_hello(Some("a.registry.test"))),
        format!("port {port}\n")
    );
    let (status, _) = connect(s.http, &format!("registry.test:{port}"));
    assert!(status.starts_with("HTTP/1.1 403"), "{status}");
}

#[test]
fn an_ip_literal_is_refused_unless_listed() {
    let (port, seen) = recorder();
    let s = start(&["registry.test"], |_| {});
    let (status, _) = connect(s.http, &format!("127.0.0.1:{port}"));
    assert!(status.starts_with("HTTP/1.1 403"), "{status}");
    let (code, _) = socks(s.socks, &[1, 127, 0, 0, 1], port, false);
    assert_eq!(code, 0x02);
    let line = format!(
        "(sandboxed: connection to 127.0.0.1:{port} refused: an IP address is not in allow_domains)"
    );
    assert_eq!(s.lines(), vec![line.clone(), line]);
    assert!(wait_for(&seen, 0).is_empty());

    let listed = start(&["127.0.0.1"], |_| {});
    let (status, stream) = connect(listed.http, &format!("127.0.0.1:{port}"));
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    assert_eq!(
        through(stream, &client_hello(None)),
        format!("port {port}\n")
    );
    let (code, stream) = socks(listed.socks, &[1, 127, 0, 0, 1], port, false);
    assert_eq!(code, 0);
    assert_eq!(
        through(stream, &client_hello(Some("127.0.0.1"))),
        format!("port {port}\n")
    );
}

#[test]
fn a_name_dns_resolves_to_loopback_is_refused() {
    let (port, seen) = recorder();
    // `localhost` is not in `resolve`: the system resolver answers.
    let s = start(&["localhost"], |_| {});
    let (status, _) = connect(s.http, &format!("localhost:{port}"));
    assert!(status.starts_with("HTTP/1.1 403"), "{status}");
    let lines = s.lines();
    assert_eq!(lines.len(), 1);
    let want =
        format!("(sandboxed: connection to localhost:{port} refused: localhost resolves to ");
    assert!(lines[0].starts_with(&want), "{}", lines[0]);
    assert!(lines[0].ends_with(", a loopback address)"), "{}", lines[0]);
    assert!(wait_for(&seen, 0).is_empty());
}

#[test]
fn a_tls_name_other_than_the_host_asked_is_refused() {
    let (port, seen) = recorder();
    let s = start(&["registry.test", "other.test"], |_| {});
    let (status, mut stream) = connect(s.http, &format!("registry.test:{port}"));
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    stream.write_all(&client_hello(Some("other.test"))).unwrap();
    assert!(closed(&mut stream));
    let (code, mut stream) = socks(s.socks, &domain("registry.test"), port, false);
    assert_eq!(code, 0);
    stream.write_all(&client_hello(None)).unwrap();
    assert!(closed(&mut stream));
    assert_eq!(
        s.lines(),
        vec![
            format!(
                "(sandboxed: connection to registry.test:{port} refused: TLS name other.test does not match registry.test)"
            ),
            format!(
                "(sandboxed: connection to registry.test:{port} refused: TLS without a server name, not registry.test)"
            ),
        ]
    );
    // The upstream saw connections, never a byte.
    assert_eq!(wait_for(&seen, 2), vec![Vec::<u8>::new(), Vec::new()]);
}

#[test]
fn first_bytes_neither_tls_nor_http_are_refused() {
    let (port, seen) = recorder();
    let s = start(&["registry.test"], |c| {
        c.first_bytes_timeout = Duration::from_millis(300);
    });
    let (_, mut stream) = connect(s.http, &format!("registry.test:{port}"));
    stream.write_all(b"SSH-2.0-OpenSSH_9.6\r\n").unwrap();
    assert!(closed(&mut stream));
    // A protocol where the server speaks first: the client sends nothing.
    let (_, mut stream) = socks(s.socks, &domain("registry.test"), port, false);
    assert!(closed(&mut stream));
    let lines = s.lines();
    assert_eq!(
        lines[0],
        format!("(sandboxed: connection to registry.test:{port} refused: not TLS nor HTTP)")
    );
    assert!(
        lines[1].starts_with(&format!(
            "(sandboxed: connection to registry.test:{port} refused: not TLS nor HTTP (no whole"
        )),
        "{}",
        lines[1]
    );
    assert_eq!(wait_for(&seen, 2), vec![Vec::<u8>::new(), Vec::new()]);
}

#[test]
fn http_in_a_tunnel_must_name_the_host_asked() {
    let (port, seen) = http_server();
    let s = start(&["registry.test"], |_| {});
    let (_, mut stream) = connect(s.http, &format!("registry.test:{port}"));
    write!(stream, "GET / HTTP/1.1\r\nHost: other.test\r\n\r\n").unwrap();
    assert!(closed(&mut stream));
    let (_, mut stream) = connect(s.http, &format!("registry.test:{port}"));
    write!(
        stream,
        "GET /ok HTTP/1.1\r\nHost: registry.test:{port}\r\n\r\n"
    )
    .unwrap();
    assert!(read_all(&mut stream).ends_with(&format!("hello from {port}")));
    assert_eq!(
        s.lines(),
        vec![format!(
            "(sandboxed: connection to registry.test:{port} refused: HTTP Host other.test does not match registry.test)"
        )]
    );
    let got = wait_for(&seen, 1);
    assert_eq!(got.len(), 1);
    assert!(got[0].starts_with(b"GET /ok "));
}

#[test]
fn the_upstream_sees_exactly_the_port_asked() {
    let (a, seen_a) = recorder();
    let (b, seen_b) = recorder();
    let s = start(&["registry.test"], |_| {});
    let hello = client_hello(Some("registry.test"));
    for port in [a, b, a] {
        let mut c = client(s.http);
        // A Host header naming the other port changes nothing.
        let other = if port == a { b } else { a };
        write!(
            c,
            "CONNECT registry.test:{port} HTTP/1.1\r\nHost: registry.test:{other}\r\n\r\n"
        )
        .unwrap();
        read_head(&mut c).expect("answer");
        assert_eq!(through(c, &hello), format!("port {port}\n"));
    }
    assert_eq!(wait_for(&seen_a, 2).len(), 2);
    assert_eq!(wait_for(&seen_b, 1).len(), 1);
}

#[test]
fn request_smuggling_does_not_reach_the_upstream() {
    let (port, seen) = http_server();
    let s = start(&["registry.test"], |_| {});
    // Content-Length and Transfer-Encoding both: the body is read as
    // chunked (empty), and the request hidden behind it is never read.
    let smuggled = format!("GET http://registry.test:{port}/smuggled HTTP/1.1\r\n\r\n");
    let body = format!("0\r\n\r\n{smuggled}");
    let mut c = client(s.http);
    write!(
        c,
        "POST http://registry.test:{port}/a HTTP/1.1\r\nContent-Length: {}\r\nTransfer-Encoding: chunked\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let answer = read_all(&mut c);
    assert_eq!(answer.matches("HTTP/1.1 ").count(), 1, "{answer}");
    // A coding other than plain chunked, and two differing lengths: 400.
    for headers in [
        "Transfer-Encoding: gzip, chunked\r\n",
        "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
        "Content-Length: 1\r\nContent-Length: 2\r\n",
        "Content-Length: 1\r\n Content-Length: 2\r\n",
    ] {
        let mut c = client(s.http);
        write!(
            c,
            "POST http://registry.test:{port}/b HTTP/1.1\r\n{headers}\r\n0\r\n\r\n"
        )
        .unwrap();
        let answer = read_all(&mut c);
        assert!(answer.starts_with("HTTP/1.1 400"), "{headers}: {answer}");
    }
    std::thread::sleep(Duration::from_millis(200));
    let got = seen.lock().unwrap().clone();
    assert_eq!(got.len(), 1, "only the first POST went upstream");
    let head = String::from_utf8_lossy(&got[0]).to_lowercase();
    assert!(!head.contains("smuggled"), "{head}");
    assert!(
        !head.contains("transfer-encoding") || !head.contains("content-length"),
        "{head}"
    );
}

#[test]
fn an_absurdly_large_header_is_refused_before_any_upstream_connection() {
    let (port, seen) = http_server();
    let s = start(&["registry.test"], |_| {});
    let mut c = client(s.http);
    let big = "x".repeat(200 * 1024);
    let _ = write!(
        c,
        "GET http://registry.test:{port}/ HTTP/1.1\r\nX-Big: {big}\r\n\r\n"
    );
    let answer = read_all(&mut c);
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 431"),
        "{answer}"
    );
    std::thread::sleep(Duration::from_millis(100));
    assert!(seen.lock().unwrap().is_empty());
    assert_eq!(s.proxy.counters().connections_allowed, 0);
}

#[test]
fn a_slow_client_times_out() {
    let s = start(&["registry.test"], |c| {
        c.header_timeout = Duration::from_millis(300);
        c.socks_timeout = Duration::from_millis(300);
    });
    let began = Instant::now();
    let mut c = client(s.http);
    c.write_all(b"GET http://registry.test/ HTTP/1.1\r\nX-Slow: ")
        .unwrap();
    let answer = read_all(&mut c);
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 408"),
        "{answer}"
    );
    let mut c = client(s.socks);
    c.write_all(&[5, 1]).unwrap();
    assert!(closed(&mut c));
    assert!(
        began.elapsed() < Duration::from_secs(5),
        "{:?}",
        began.elapsed()
    );
}

#[test]
fn connections_beyond_the_cap_are_refused() {
    let s = start(&["registry.test"], |c| c.max_connections = 2);
    let held: Vec<TcpStream> = (0..2).map(|_| client(s.socks)).collect();
    std::thread::sleep(Duration::from_millis(100));
    let mut third = client(s.http);
    assert!(read_all(&mut third).starts_with("HTTP/1.1 503"));
    let mut fourth = client(s.socks);
    assert!(closed(&mut fourth));
    assert_eq!(
        s.lines(),
        vec!["(sandboxed: connection to the proxy refused: more than 2 connections at once)"; 2]
    );
    drop(held);
    // Room again once they close.
    std::thread::sleep(Duration::from_millis(100));
    let (status, _) = connect(s.http, "other.test:1");
    assert!(status.starts_with("HTTP/1.1 403"), "{status}");
}

#[test]
fn counters_count() {
    let (port, _) = recorder();
    let (web, _) = http_server();
    let s = start(&["registry.test"], |_| {});
    let hello = client_hello(Some("registry.test"));
    let (_, stream) = connect(s.http, &format!("registry.test:{port}"));
    through(stream, &hello);
    let mut c = client(s.http);
    write!(
        c,
        "GET http://registry.test:{web}/ HTTP/1.1\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let answer = read_all(&mut c);
    let _ = connect(s.http, "other.test:443");
    // The tunnel's task counts its bytes as it ends.
    std::thread::sleep(Duration::from_millis(200));
    let n = s.proxy.counters();
    assert_eq!(n.connections_allowed, 2);
    assert_eq!(n.connections_refused, 1);
    assert_eq!(n.requests, 3);
    assert!(n.bytes_up > hello.len() as u64, "{n:?}");
    assert!(answer.ends_with(&format!("hello from {web}")), "{answer}");
    // What the two servers sent, exactly: the recorder's line and the web
    // server's whole answer.
    let text = format!("hello from {web}");
    let raw = format!(
        "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
        text.len()
    );
    let down = format!("port {port}\n").len() + raw.len();
    assert_eq!(n.bytes_down, down as u64, "{n:?}");
    let json = serde_json::to_value(n).unwrap();
    assert_eq!(json["connections_refused"], 1);
}

/// `curl ARGS` with a 10 s limit: its stdout.
fn curl(args: &[&str]) -> String {
    let out = std::process::Command::new("curl")
        .args(["-sS", "--max-time", "10"])
        .args(args)
        .output()
        .expect("curl runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
#[ignore = "needs curl"]
fn curl_works_through_both_proxies() {
    require_program("curl");
    let (port, _) = http_server();
    let s = start(&["registry.test"], |_| {});
    let url = format!("http://registry.test:{port}/");
    let want = format!("hello from {port}");
    assert_eq!(curl(&["-x", &format!("http://{}", s.http), &url]), want);
    assert_eq!(
        curl(&["--socks5-hostname", &s.socks.to_string(), &url]),
        want
    );
    // Through CONNECT (`-p`): plain HTTP in the tunnel, Host checked.
    assert_eq!(
        curl(&["-p", "-x", &format!("http://{}", s.http), &url]),
        want
    );
    let denied = curl(&[
        "-x",
        &format!("http://{}", s.http),
        &format!("http://other.test:{port}/"),
    ]);
    assert_eq!(
        denied.trim(),
        format!("(sandboxed: connection to other.test:{port} refused: not in allow_domains)")
    );
}

#[test]
fn socks5_refuses_bind_udp_and_unknown_address_types() {
    let (port, seen) = recorder();
    let s = start(&["registry.test"], |_| {});
    for (cmd, atyp, want) in [(2u8, 3u8, 0x07u8), (3, 3, 0x07), (1, 9, 0x08)] {
        let mut c = client(s.socks);
        c.write_all(&[5, 1, 0]).unwrap();
        let mut choice = [0u8; 2];
        c.read_exact(&mut choice).unwrap();
        let mut request = vec![5, cmd, 0, atyp, 13];
        request.extend_from_slice(b"registry.test");
        request.extend_from_slice(&port.to_be_bytes());
        c.write_all(&request).unwrap();
        let mut reply = [0u8; 10];
        c.read_exact(&mut reply).unwrap();
        assert_eq!(reply[1], want, "command {cmd}, address type {atyp}");
    }
    // No acceptable method: 0xFF.
    let mut c = client(s.socks);
    c.write_all(&[5, 1, 0x80]).unwrap();
    let mut choice = [0u8; 2];
    c.read_exact(&mut choice).unwrap();
    assert_eq!(choice, [5, 0xff]);
    // A name that is not plain ASCII: refused, shown escaped on one line.
    let (code, _) = socks(s.socks, &domain("bad\nname.test"), port, false);
    assert_eq!(code, 0x02);
    let lines = s.lines();
    assert_eq!(lines.len(), 1);
    assert!(!lines[0].contains('\n'), "{}", lines[0]);
    assert!(
        lines[0].contains("is not a plain ASCII host name"),
        "{}",
        lines[0]
    );
    assert!(wait_for(&seen, 0).is_empty());
}

#[test]
fn an_idle_http_connection_is_closed_after_the_header_timeout() {
    let s = start(&["registry.test"], |c| {
        c.header_timeout = Duration::from_millis(300)
    });
    let began = Instant::now();
    let mut c = client(s.http);
    assert!(closed(&mut c));
    assert!(
        began.elapsed() < Duration::from_secs(5),
        "{:?}",
        began.elapsed()
    );
}

#[test]
fn dropping_the_proxy_closes_its_listeners_and_tunnels() {
    let (port, _seen) = recorder();
    let s = start(&["registry.test"], |_| {});
    let (_, mut tunnel) = connect(s.http, &format!("registry.test:{port}"));
    tunnel
        .write_all(&client_hello(Some("registry.test")))
        .unwrap();
    let mut answer = [0u8; 32];
    assert!(tunnel.read(&mut answer).unwrap() > 0, "the tunnel is open");
    let (http, socks) = (s.http, s.socks);
    drop(s);
    assert!(closed(&mut tunnel), "the open tunnel is closed");
    for addr in [http, socks] {
        match TcpStream::connect(addr) {
            Err(_) => {}
            Ok(mut c) => assert!(closed(&mut c), "{addr} still answers"),
        }
    }
}
