//! The allow list: exact names, `*.` wildcards and IP addresses, and the
//! host names a client may ask for.

use std::collections::HashSet;
use std::fmt;
use std::net::IpAddr;

/// What a client asked to reach, normalized: a host name (lowercase, no
/// trailing dot, plain ASCII letter-digit-hyphen labels) or an IP address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Host {
    /// A host name.
    Name(String),
    /// An IP address literal.
    Ip(IpAddr),
}

impl Host {
    /// Parses a host as a client wrote it (`Example.COM.`, `10.0.0.1`,
    /// `[::1]`, `::1`); the error is the refusal's reason.
    pub(crate) fn parse(raw: &str) -> Result<Host, String> {
        let unbracketed = raw
            .strip_prefix('[')
            .and_then(|r| r.strip_suffix(']'))
            .unwrap_or(raw);
        if let Ok(ip) = unbracketed.parse::<IpAddr>() {
            return Ok(Host::Ip(ip));
        }
        match normalize_name(raw) {
            Some(name) => Ok(Host::Name(name)),
            None => Err(format!("{} is not a plain ASCII host name", shown(raw))),
        }
    }

    /// Whether `other` (a name a client put in a TLS ClientHello or an HTTP
    /// `Host` header) names this host.
    pub(crate) fn is_named_by(&self, other: &str) -> bool {
        match (self, Host::parse(other)) {
            (Host::Name(a), Ok(Host::Name(b))) => *a == b,
            (Host::Ip(a), Ok(Host::Ip(b))) => *a == b,
            _ => false,
        }
    }
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Name(name) => f.write_str(name),
            Host::Ip(ip) => write!(f, "{ip}"),
        }
    }
}

/// `host:port` as a refusal line shows it (`[::1]:443` for IPv6).
pub(crate) fn target(host: &Host, port: u16) -> String {
    match host {
        Host::Ip(IpAddr::V6(ip)) => format!("[{ip}]:{port}"),
        _ => format!("{host}:{port}"),
    }
}

/// `raw` made safe for a one-line message: printable ASCII only, escaped
/// otherwise, at most 100 characters (a client chooses these bytes).
pub(crate) fn shown(raw: &str) -> String {
    let escaped: String = raw.chars().flat_map(char::escape_default).collect();
    if escaped.len() > 100 {
        let mut cut = 100;
        while !escaped.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}...", &escaped[..cut])
    } else {
        escaped
    }
}

/// `raw` lowercased without its trailing dot, if it is a host name of plain
/// ASCII letter-digit-hyphen labels (1 to 63 characters each, no hyphen at
/// either end, 253 characters at most) whose last label starts with a
/// letter (so `127.1` and `0x7f.1`, which resolvers read as addresses, are
/// not names).
pub(crate) fn normalize_name(raw: &str) -> Option<String> {
    let name = raw.strip_suffix('.').unwrap_or(raw);
    if name.is_empty() || name.len() > 253 {
        return None;
    }
    let mut last = "";
    for label in name.split('.') {
        let bytes = label.as_bytes();
        let ldh = bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'-');
        if label.is_empty()
            || label.len() > 63
            || !ldh
            || bytes.first() == Some(&b'-')
            || bytes.last() == Some(&b'-')
        {
            return None;
        }
        last = label;
    }
    if !last.as_bytes()[0].is_ascii_alphabetic() {
        return None;
    }
    Some(name.to_ascii_lowercase())
}

/// A validated allow list ([`ProxyConfig::validate`](super::ProxyConfig::validate)).
#[derive(Clone, Debug, Default)]
pub struct AllowList {
    names: HashSet<String>,
    /// `*.example.com` kept as `.example.com`.
    suffixes: Vec<String>,
    ips: HashSet<IpAddr>,
}

impl AllowList {
    /// Compiles `patterns`; the error names the first bad one and says what
    /// is accepted.
    pub fn new<S: AsRef<str>>(patterns: &[S]) -> Result<AllowList, String> {
        let mut list = AllowList::default();
        for pattern in patterns {
            let pattern = pattern.as_ref();
            if let Ok(ip) = pattern.parse::<IpAddr>() {
                list.ips.insert(ip);
            } else if let Some(rest) = pattern.strip_prefix("*.") {
                let name = normalize_name(rest).ok_or_else(|| bad(pattern))?;
                list.suffixes.push(format!(".{name}"));
            } else {
                let name = normalize_name(pattern).ok_or_else(|| bad(pattern))?;
                list.names.insert(name);
            }
        }
        Ok(list)
    }

    /// Whether the host name `name` (normalized) is allowed: listed, or
    /// strictly below a `*.` pattern.
    pub(crate) fn allows_name(&self, name: &str) -> bool {
        self.names.contains(name) || self.suffixes.iter().any(|s| name.ends_with(s.as_str()))
    }

    /// Whether `ip` is listed.
    pub(crate) fn allows_ip(&self, ip: IpAddr) -> bool {
        self.ips.contains(&ip)
    }
}

fn bad(pattern: &str) -> String {
    format!(
        "allow_domains: {:?} is not a host name, a `*.` wildcard over one (`*.example.com`) or an IP address; \
         write names without scheme, port, path or other `*`, in plain ASCII (punycode `xn--` for international names)",
        shown(pattern)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(p: &[&str]) -> AllowList {
        AllowList::new(p).expect("valid")
    }

    #[test]
    fn exact_names_match_case_insensitively_and_without_trailing_dot() {
        let l = list(&["crates.io", "Static.Crates.IO."]);
        for host in ["crates.io", "CRATES.IO", "crates.io.", "static.crates.io"] {
            let Ok(Host::Name(n)) = Host::parse(host) else {
                panic!("{host} parses")
            };
            assert!(l.allows_name(&n), "{host}");
        }
        let Ok(Host::Name(n)) = Host::parse("index.crates.io") else {
            panic!()
        };
        assert!(!l.allows_name(&n));
        assert!(!l.allows_name("xcrates.io"));
    }

    #[test]
    fn wildcard_matches_below_but_not_the_name_itself() {
        let l = list(&["*.npmjs.org"]);
        assert!(l.allows_name("registry.npmjs.org"));
        assert!(l.allows_name("a.b.npmjs.org"));
        assert!(!l.allows_name("npmjs.org"));
        assert!(!l.allows_name("evilnpmjs.org"));
        assert!(!l.allows_name("npmjs.org.evil.com"));
    }

    #[test]
    fn bad_patterns_are_clear_errors() {
        for p in [
            "*",
            "*.",
            "a*b.com",
            "",
            "example.com:443",
            "https://example.com",
            "exa mple.com",
            "*.*.com",
            "ex_ample.com",
            "bücher.de",
            "-a.com",
            "a..com",
            "127.1",
            "[::1]",
            "example.com/path",
        ] {
            let err = AllowList::new(&[p]).expect_err(p);
            assert!(err.contains("allow_domains"), "{err}");
        }
    }

    #[test]
    fn ip_literals_are_listed_by_address() {
        let l = list(&["127.0.0.1", "::1", "xn--bcher-kva.de"]);
        assert!(l.allows_ip("127.0.0.1".parse().unwrap()));
        assert!(l.allows_ip("::1".parse().unwrap()));
        assert!(!l.allows_ip("127.0.0.2".parse().unwrap()));
        assert!(l.allows_name("xn--bcher-kva.de"));
    }

    #[test]
    fn requested_hosts_parse_to_names_or_addresses() {
        assert_eq!(Host::parse("[::1]"), Ok(Host::Ip("::1".parse().unwrap())));
        assert_eq!(
            Host::parse("10.0.0.1"),
            Ok(Host::Ip("10.0.0.1".parse().unwrap()))
        );
        assert_eq!(Host::parse("A.b."), Ok(Host::Name("a.b".into())));
        for bad in [
            "127.1",
            "0x7f.1",
            "bücher.de",
            "a b",
            "a\nb",
            "",
            ".",
            "a..b",
            "_x.com",
        ] {
            let err = Host::parse(bad).expect_err(bad);
            assert!(!err.contains('\n'), "{err}");
        }
        assert!(Host::Name("a.com".into()).is_named_by("A.COM."));
        assert!(!Host::Name("a.com".into()).is_named_by("b.com"));
        assert!(Host::Ip("::1".parse().unwrap()).is_named_by("[::1]"));
    }
}
