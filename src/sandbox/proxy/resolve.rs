//! Host-side resolution: the configured overrides first, else DNS; the
//! addresses DNS gives are checked, and what is connected to is exactly
//! what was checked.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use tokio::net::TcpStream;

use super::domains::{AllowList, Host};

/// Why a destination was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refused {
    /// Not allowed by the rules (SOCKS 0x02, HTTP 403).
    Denied(String),
    /// The name did not resolve (SOCKS 0x04, HTTP 502).
    Unresolved(String),
}

impl Refused {
    pub(crate) fn reason(&self) -> &str {
        match self {
            Refused::Denied(r) | Refused::Unresolved(r) => r,
        }
    }
}

/// The addresses to connect to for `host:port`, once checked against the
/// allow list, or why not.
pub(crate) async fn decide(
    allow: &AllowList,
    overrides: &BTreeMap<String, Vec<IpAddr>>,
    host: &Host,
    port: u16,
    timeout: Duration,
) -> Result<Vec<SocketAddr>, Refused> {
    let name = match host {
        Host::Ip(ip) if allow.allows_ip(*ip) => return Ok(vec![SocketAddr::new(*ip, port)]),
        Host::Ip(_) => {
            return Err(Refused::Denied(
                "an IP address is not in allow_domains".into(),
            ));
        }
        Host::Name(name) => name,
    };
    if !allow.allows_name(name) {
        return Err(Refused::Denied("not in allow_domains".into()));
    }
    if let Some(ips) = overrides.get(name.as_str()) {
        // Written by the user: trusted as written, loopback included.
        if ips.is_empty() {
            return Err(Refused::Unresolved("could not resolve: no address".into()));
        }
        return Ok(ips.iter().map(|ip| SocketAddr::new(*ip, port)).collect());
    }
    let looked_up = tokio::time::timeout(timeout, tokio::net::lookup_host((name.as_str(), port)))
        .await
        .map_err(|_| {
            Refused::Unresolved(format!("could not resolve: no answer within {timeout:?}"))
        })?
        .map_err(|e| Refused::Unresolved(format!("could not resolve: {e}")))?;
    let addrs: Vec<SocketAddr> = looked_up.collect();
    if addrs.is_empty() {
        return Err(Refused::Unresolved("could not resolve: no address".into()));
    }
    for addr in &addrs {
        if let Some(class) = non_public(addr.ip())
            && !allow.allows_ip(addr.ip())
        {
            return Err(Refused::Denied(format!(
                "{name} resolves to {}, {class}",
                addr.ip()
            )));
        }
    }
    Ok(addrs)
}

/// Connects to the first of `addrs` that answers, within `timeout` in all.
pub(crate) async fn connect(addrs: &[SocketAddr], timeout: Duration) -> std::io::Result<TcpStream> {
    let attempt = async {
        let mut last = None;
        for addr in addrs {
            match TcpStream::connect(addr).await {
                Ok(stream) => {
                    let _ = stream.set_nodelay(true);
                    return Ok(stream);
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| std::io::Error::other("no address")))
    };
    tokio::time::timeout(timeout, attempt)
        .await
        .unwrap_or_else(|_| Err(std::io::ErrorKind::TimedOut.into()))
}

/// What kind of non-public address `ip` is ("a private address"), or
/// `None` for an address on the public internet.
pub(crate) fn non_public(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => non_public_v4(v4),
        IpAddr::V6(v6) => non_public_v6(v6),
    }
}

fn non_public_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        _ if ip.is_unspecified() => "an unspecified address",
        _ if ip.is_broadcast() => "a broadcast address",
        (0, _, _) => "a this-network address",
        (127, _, _) => "a loopback address",
        (10, _, _) | (192, 168, _) => "a private address",
        (172, 16..=31, _) => "a private address",
        (169, 254, _) => "a link-local address",
        (100, 64..=127, _) => "a CGNAT address",
        (192, 0, 0) => "an IETF protocol address",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "a documentation address",
        (198, 18..=19, _) => "a benchmarking address",
        (224..=239, _, _) => "a multicast address",
        (240..=255, _, _) => "a reserved address",
        _ => return None,
    })
}

fn non_public_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    // Forms that carry an IPv4 address are what that address is.
    if let Some(v4) = embedded_v4(ip) {
        return non_public_v4(v4);
    }
    Some(match s[0] {
        _ if ip.is_unspecified() => "an unspecified address",
        _ if ip.is_loopback() => "a loopback address",
        0xfe80..=0xfebf => "a link-local address",
        0xfec0..=0xfeff => "a site-local address",
        0xfc00..=0xfdff => "a unique-local address",
        0xff00..=0xffff => "a multicast address",
        0x2001 if s[1] == 0x0db8 => "a documentation address",
        0x3fff if s[1] <= 0x0fff => "a documentation address",
        0x0100 if s[1..4] == [0, 0, 0] => "a discard-only address",
        0x0000 => "a reserved address",
        _ => return None,
    })
}

/// The IPv4 address inside an IPv4-mapped (`::ffff:a.b.c.d`),
/// IPv4-compatible (`::a.b.c.d`), NAT64 (`64:ff9b::/96`) or 6to4
/// (`2002::/16`) address.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let low = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    match s {
        [0, 0, 0, 0, 0, 0xffff, hi, lo] => Some(low(hi, lo)),
        // `::` and `::1` are themselves, not 0.0.0.0 and 0.0.0.1.
        [0, 0, 0, 0, 0, 0, hi, lo] if hi != 0 => Some(low(hi, lo)),
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => Some(low(hi, lo)),
        [0x2002, hi, lo, ..] => Some(low(hi, lo)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(s: &str) -> Option<&'static str> {
        non_public(s.parse().expect("address"))
    }

    #[test]
    fn addresses_are_classified() {
        for (ip, want) in [
            ("127.0.0.1", "a loopback address"),
            ("127.255.0.9", "a loopback address"),
            ("10.0.0.5", "a private address"),
            ("172.16.0.1", "a private address"),
            ("172.31.255.255", "a private address"),
            ("192.168.1.1", "a private address"),
            ("169.254.169.254", "a link-local address"),
            ("100.64.0.1", "a CGNAT address"),
            ("100.127.255.255", "a CGNAT address"),
            ("0.0.0.0", "an unspecified address"),
            ("0.1.2.3", "a this-network address"),
            ("224.0.0.1", "a multicast address"),
            ("255.255.255.255", "a broadcast address"),
            ("192.0.2.1", "a documentation address"),
            ("198.51.100.1", "a documentation address"),
            ("203.0.113.1", "a documentation address"),
            ("240.0.0.1", "a reserved address"),
            ("::1", "a loopback address"),
            ("::", "an unspecified address"),
            ("fe80::1", "a link-local address"),
            ("fd00::1", "a unique-local address"),
            ("fc00::1", "a unique-local address"),
            ("ff02::1", "a multicast address"),
            ("2001:db8::1", "a documentation address"),
            ("::ffff:127.0.0.1", "a loopback address"),
            ("::ffff:10.1.2.3", "a private address"),
            ("::127.0.0.1", "a loopback address"),
            ("64:ff9b::a9fe:a9fe", "a link-local address"),
            ("2002:7f00:1::", "a loopback address"),
        ] {
            assert_eq!(class(ip), Some(want), "{ip}");
        }
        for public in [
            "1.1.1.1",
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700::1111",
            "::ffff:1.1.1.1",
            "64:ff9b::808:808",
        ] {
            assert_eq!(class(public), None, "{public}");
        }
    }

    #[tokio::test]
    async fn overrides_are_trusted_and_dns_loopback_is_not() {
        let allow = AllowList::new(&["mirror.test", "localhost"]).expect("valid");
        let mut overrides = BTreeMap::new();
        overrides.insert("mirror.test".to_owned(), vec!["127.0.0.1".parse().unwrap()]);
        let t = Duration::from_secs(5);
        let host = Host::Name("mirror.test".into());
        let got = decide(&allow, &overrides, &host, 8080, t).await;
        assert_eq!(got, Ok(vec!["127.0.0.1:8080".parse().unwrap()]));
        let host = Host::Name("localhost".into());
        let got = decide(&allow, &overrides, &host, 80, t).await;
        match got {
            Err(Refused::Denied(r)) => assert!(r.starts_with("localhost resolves to "), "{r}"),
            other => panic!("{other:?}"),
        }
        let host = Host::Name("other.test".into());
        let got = decide(&allow, &overrides, &host, 80, t).await;
        assert_eq!(got, Err(Refused::Denied("not in allow_domains".into())));
    }
}
