//! The SOCKS5 proxy (RFC 1928): no authentication, or username/password
//! (RFC 1929) with any values; `CONNECT` only; names, IPv4 and IPv6.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};

use super::domains::{self, Host};
use super::resolve::Refused;
use super::{Shared, admit, read_exact};

/// Reply codes (RFC 1928, 6).
const SUCCEEDED: u8 = 0x00;
const NOT_ALLOWED: u8 = 0x02;
const HOST_UNREACHABLE: u8 = 0x04;
const CONNECTION_REFUSED: u8 = 0x05;
const COMMAND_NOT_SUPPORTED: u8 = 0x07;
const ADDRESS_TYPE_NOT_SUPPORTED: u8 = 0x08;

/// Accepts and serves SOCKS5 clients until the runtime stops.
pub(super) async fn serve(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            continue;
        };
        // Beyond the cap the connection is closed at once.
        let Some(permit) = admit(&shared) else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        let shared = shared.clone();
        tokio::spawn(async move {
            let _permit = permit;
            serve_one(stream, &shared).await;
        });
    }
}

/// What a client asked for.
enum Asked {
    /// The host (or its name as shown and why it is not one) and port.
    Connect(Result<Host, (String, String)>, u16),
    /// A reply code to answer with, and close.
    Fail(u8),
}

async fn serve_one(mut stream: TcpStream, shared: &Shared) {
    let asked =
        match tokio::time::timeout(shared.config.socks_timeout, handshake(&mut stream)).await {
            Ok(Ok(asked)) => asked,
            // Timed out, closed, or not SOCKS5: closed without more.
            _ => return,
        };
    shared.request();
    let (host, port) = match asked {
        Asked::Fail(code) => {
            let _ = reply(&mut stream, code).await;
            return;
        }
        Asked::Connect(Err((shown, reason)), port) => {
            shared.refuse(Some(format!("{shown}:{port}")), &reason);
            let _ = reply(&mut stream, NOT_ALLOWED).await;
            return;
        }
        Asked::Connect(Ok(host), port) => (host, port),
    };
    let addrs = match shared.decide(&host, port).await {
        Ok(addrs) => addrs,
        Err(why) => {
            shared.refuse(Some(domains::target(&host, port)), why.reason());
            let code = match why {
                Refused::Denied(_) => NOT_ALLOWED,
                Refused::Unresolved(_) => HOST_UNREACHABLE,
            };
            let _ = reply(&mut stream, code).await;
            return;
        }
    };
    let upstream = match shared.connect(&addrs).await {
        Ok(upstream) => upstream,
        Err(e) => {
            let code = if e.kind() == std::io::ErrorKind::ConnectionRefused {
                CONNECTION_REFUSED
            } else {
                HOST_UNREACHABLE
            };
            let _ = reply(&mut stream, code).await;
            return;
        }
    };
    if reply(&mut stream, SUCCEEDED).await.is_err() {
        return;
    }
    shared.tunnel(stream, &host, port, upstream).await;
}

/// The greeting, the authentication if any, and the request.
async fn handshake(stream: &mut TcpStream) -> std::io::Result<Asked> {
    let mut head = [0u8; 2];
    read_exact(stream, &mut head).await?;
    if head[0] != 5 {
        return Err(std::io::ErrorKind::InvalidData.into());
    }
    let mut methods = vec![0u8; usize::from(head[1])];
    read_exact(stream, &mut methods).await?;
    if methods.contains(&0x00) {
        stream.write_all(&[5, 0x00]).await?;
    } else if methods.contains(&0x02) {
        stream.write_all(&[5, 0x02]).await?;
        // RFC 1929: VER ULEN UNAME PLEN PASSWD; any values do.
        let mut ver_len = [0u8; 2];
        read_exact(stream, &mut ver_len).await?;
        let mut skip = vec![0u8; usize::from(ver_len[1])];
        read_exact(stream, &mut skip).await?;
        let mut plen = [0u8; 1];
        read_exact(stream, &mut plen).await?;
        let mut skip = vec![0u8; usize::from(plen[0])];
        read_exact(stream, &mut skip).await?;
        stream.write_all(&[1, 0x00]).await?;
    } else {
        stream.write_all(&[5, 0xff]).await?;
        return Err(std::io::ErrorKind::InvalidData.into());
    }
    let mut request = [0u8; 4];
    read_exact(stream, &mut request).await?;
    let [ver, cmd, _reserved, atyp] = request;
    if ver != 5 {
        return Err(std::io::ErrorKind::InvalidData.into());
    }
    let host = match atyp {
        0x01 => {
            let mut ip = [0u8; 4];
            read_exact(stream, &mut ip).await?;
            Ok(Host::Ip(IpAddr::V4(Ipv4Addr::from(ip))))
        }
        0x04 => {
            let mut ip = [0u8; 16];
            read_exact(stream, &mut ip).await?;
            Ok(Host::Ip(IpAddr::V6(Ipv6Addr::from(ip))))
        }
        0x03 => {
            let mut len = [0u8; 1];
            read_exact(stream, &mut len).await?;
            let mut name = vec![0u8; usize::from(len[0])];
            read_exact(stream, &mut name).await?;
            let name = String::from_utf8_lossy(&name);
            Host::parse(&name).map_err(|reason| (domains::shown(&name), reason))
        }
        _ => return Ok(Asked::Fail(ADDRESS_TYPE_NOT_SUPPORTED)),
    };
    let mut port = [0u8; 2];
    read_exact(stream, &mut port).await?;
    if cmd != 0x01 {
        return Ok(Asked::Fail(COMMAND_NOT_SUPPORTED));
    }
    Ok(Asked::Connect(host, u16::from_be_bytes(port)))
}

/// A reply with `code` and an unspecified bound address.
async fn reply(stream: &mut TcpStream, code: u8) -> std::io::Result<()> {
    stream.write_all(&[5, code, 0, 1, 0, 0, 0, 0, 0, 0]).await
}
