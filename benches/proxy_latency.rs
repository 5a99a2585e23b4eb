//! The latency the sandbox's network proxy adds to a small HTTP request to
//! a loopback server (for `docs/performance.md`).
//!
//! `cargo bench --bench proxy_latency`
//!
//! Each iteration opens a connection, sends `GET /` and reads the whole
//! answer (the server closes after it): directly, through the HTTP proxy
//! (absolute-form request, forwarded on a new upstream connection), and
//! through a `CONNECT` tunnel (the first bytes checked, then copied).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};

use agentcore::sandbox::proxy::{Proxy, ProxyConfig};
use criterion::{Criterion, criterion_group, criterion_main};

/// A server answering each connection with a small body, then closing.
fn server() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let _ = stream.set_nodelay(true);
            if read_head(&mut stream).is_some() {
                let _ = stream.write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\nconnection: close\r\n\r\nhello",
                );
            }
        }
    });
    addr
}

fn read_head(stream: &mut TcpStream) -> Option<Vec<u8>> {
    let mut head = Vec::new();
    let mut buf = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut buf) {
            Ok(1) => head.push(buf[0]),
            _ => return None,
        }
    }
    Some(head)
}

fn get(addr: SocketAddr, request: &[u8], connect: Option<&[u8]>) -> usize {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    if let Some(connect) = connect {
        stream.write_all(connect).expect("write");
        read_head(&mut stream).expect("CONNECT answer");
    }
    stream.write_all(request).expect("write");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).expect("read");
    assert!(
        answer.ends_with(b"hello"),
        "{}",
        String::from_utf8_lossy(&answer)
    );
    answer.len()
}

fn latency(c: &mut Criterion) {
    let origin = server();
    let port = origin.port();
    let mut config = ProxyConfig::allowing(["registry.test"]);
    config
        .resolve
        .insert("registry.test".into(), vec![origin.ip()]);
    let http = TcpListener::bind("127.0.0.1:0").expect("bind");
    let socks = TcpListener::bind("127.0.0.1:0").expect("bind");
    let proxy_addr = http.local_addr().expect("addr");
    let _proxy = Proxy::start(config, http, socks).expect("proxy");

    let direct = format!("GET / HTTP/1.1\r\nHost: registry.test:{port}\r\n\r\n");
    let forwarded = format!(
        "GET http://registry.test:{port}/ HTTP/1.1\r\nHost: registry.test:{port}\r\nConnection: close\r\n\r\n"
    );
    let connect =
        format!("CONNECT registry.test:{port} HTTP/1.1\r\nHost: registry.test:{port}\r\n\r\n");

    let mut group = c.benchmark_group("proxy_latency");
    group.bench_function("direct", |b| {
        b.iter(|| get(origin, direct.as_bytes(), None))
    });
    group.bench_function("http_proxy", |b| {
        b.iter(|| get(proxy_addr, forwarded.as_bytes(), None))
    });
    group.bench_function("connect_tunnel", |b| {
        b.iter(|| get(proxy_addr, direct.as_bytes(), Some(connect.as_bytes())))
    });
    group.finish();
}

criterion_group!(benches, latency);
criterion_main!(benches);
