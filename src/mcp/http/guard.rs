//! The checks every `/mcp` request passes before rmcp sees it: the bearer
//! token (constant time) and the `Origin` header (DNS rebinding).

use std::fmt;
use std::net::IpAddr;

use http::HeaderMap;
use http::header::{AUTHORIZATION, ORIGIN};
use subtle::ConstantTimeEq;

/// The shortest token accepted: 16 characters.
pub const MIN_TOKEN_LEN: usize = 16;

/// The bearer token every request must carry (`Authorization: Bearer
/// TOKEN`). Its `Debug` does not show it.
#[derive(Clone)]
pub struct BearerToken(Vec<u8>);

impl fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BearerToken(…)")
    }
}

/// Why a token was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenError {
    /// Shorter than [`MIN_TOKEN_LEN`].
    #[error(
        "the token is {0} characters long; use at least 16 random characters, e.g. the output of `openssl rand -hex 32`"
    )]
    TooShort(usize),
    /// A character a bearer token cannot hold (RFC 6750 `b64token`).
    #[error(
        "the token holds a character a bearer token cannot (only letters, digits and - . _ ~ + / = are allowed); use e.g. the output of `openssl rand -hex 32`"
    )]
    BadCharacter,
}

impl BearerToken {
    /// The token in `text`, surrounding whitespace (a file's final
    /// newline) removed.
    pub fn new(text: &str) -> Result<Self, TokenError> {
        let token = text.trim();
        if token.len() < MIN_TOKEN_LEN {
            return Err(TokenError::TooShort(token.len()));
        }
        // RFC 6750 b64token: ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" then "="*.
        let ok = token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/=".contains(&b));
        if !ok {
            return Err(TokenError::BadCharacter);
        }
        Ok(Self(token.as_bytes().to_vec()))
    }

    /// Whether `headers` carry exactly one `Authorization` header whose
    /// value is `Bearer` (any case), one space and this token. The token
    /// is compared in constant time (its length is not secret).
    pub fn admits(&self, headers: &HeaderMap) -> bool {
        let mut values = headers.get_all(AUTHORIZATION).iter();
        let (Some(value), None) = (values.next(), values.next()) else {
            return false;
        };
        let bytes = value.as_bytes();
        let Some((scheme, given)) = bytes.split_at_checked(7) else {
            return false;
        };
        if !scheme.eq_ignore_ascii_case(b"bearer ") {
            return false;
        }
        given.ct_eq(&self.0).into()
    }
}

/// An origin a browser sends: scheme, host and port (RFC 6454).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    scheme: String,
    host: String,
    port: u16,
}

impl Origin {
    /// Parses `scheme://host[:port]` (http or https, no path, no user
    /// information); `None` for anything else, `null` included.
    pub fn parse(text: &str) -> Option<Self> {
        let (scheme, rest) = text.split_once("://")?;
        let scheme = scheme.to_ascii_lowercase();
        let default_port = match scheme.as_str() {
            "http" => 80,
            "https" => 443,
            _ => return None,
        };
        // A browser's Origin has no path; allow the one trailing slash
        // people write in `--allow-origin`.
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.is_empty() || rest.contains(['/', '@', '?', '#', '\\', ' ']) {
            return None;
        }
        let (host, port) = if let Some(v6) = rest.strip_prefix('[') {
            let (inside, after) = v6.split_once(']')?;
            inside.parse::<std::net::Ipv6Addr>().ok()?;
            let port = match after {
                "" => default_port,
                _ => after.strip_prefix(':')?.parse().ok()?,
            };
            (format!("[{}]", inside.to_ascii_lowercase()), port)
        } else {
            match rest.rsplit_once(':') {
                Some((host, port)) => (host.to_ascii_lowercase(), port.parse().ok()?),
                None => (rest.to_ascii_lowercase(), default_port),
            }
        };
        if host.is_empty() || host.contains(':') && !host.starts_with('[') {
            return None;
        }
        Some(Self { scheme, host, port })
    }

    /// `localhost` or a loopback address (127.0.0.0/8, `[::1]`).
    pub fn is_loopback(&self) -> bool {
        if self.host == "localhost" {
            return true;
        }
        let bare = self.host.trim_start_matches('[').trim_end_matches(']');
        bare.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
    }
}

/// Whether the `Origin` of a request is acceptable: absent (a client
/// that is not a browser), or exactly one value that is a loopback origin
/// or one of `allowed`. `null`, a second `Origin` header and anything
/// unparsable are refused.
pub fn origin_allowed(headers: &HeaderMap, allowed: &[Origin]) -> bool {
    let mut values = headers.get_all(ORIGIN).iter();
    match (values.next(), values.next()) {
        (None, _) => true,
        (Some(value), None) => value
            .to_str()
            .ok()
            .and_then(Origin::parse)
            .is_some_and(|origin| origin.is_loopback() || allowed.contains(&origin)),
        (Some(_), Some(_)) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    const TOKEN: &str = "0123456789abcdef0123";

    fn headers(name: http::header::HeaderName, values: &[&str]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for value in values {
            map.append(name.clone(), HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn the_token_is_admitted_only_exactly() {
        let token = BearerToken::new(&format!("{TOKEN}\n")).unwrap();
        let auth = |values: &[&str]| token.admits(&headers(AUTHORIZATION, values));
        assert!(auth(&[&format!("Bearer {TOKEN}")]));
        assert!(auth(&[&format!("bearer {TOKEN}")]));
        assert!(auth(&[&format!("BEARER {TOKEN}")]));
        assert!(!auth(&[]));
        assert!(!auth(&[TOKEN]));
        assert!(!auth(&[&format!("Bearer  {TOKEN}")]));
        assert!(!auth(&[&format!("Bearer {TOKEN} ")]));
        assert!(!auth(&[&format!("Bearer {}", &TOKEN[..TOKEN.len() - 1])]));
        assert!(!auth(&[&format!("Bearer {TOKEN}x")]));
        assert!(!auth(&[&format!("Basic {TOKEN}")]));
        assert!(!auth(&[&format!("Bearer\t{TOKEN}")]));
        assert!(!auth(&["Bearer "]));
        assert!(!auth(&["Bearer"]));
        // Two headers, even both right, are refused.
        assert!(!auth(&[
            &format!("Bearer {TOKEN}"),
            &format!("Bearer {TOKEN}")
        ]));
        assert!(!auth(&["Bearer wrong", &format!("Bearer {TOKEN}")]));
    }

    #[test]
    fn short_or_odd_tokens_are_refused() {
        assert_eq!(
            BearerToken::new("short\n").unwrap_err(),
            TokenError::TooShort(5)
        );
        assert_eq!(
            BearerToken::new("   ").unwrap_err(),
            TokenError::TooShort(0)
        );
        assert_eq!(
            BearerToken::new("0123456789 abcdef0123").unwrap_err(),
            TokenError::BadCharacter
        );
        assert_eq!(
            BearerToken::new("0123456789abcdef\"0123").unwrap_err(),
            TokenError::BadCharacter
        );
        assert!(!format!("{:?}", BearerToken::new(TOKEN).unwrap()).contains(TOKEN));
    }

    #[test]
    fn origins_parse_to_scheme_host_and_port() {
        let o = Origin::parse("HTTP://LocalHost:8080").unwrap();
        assert_eq!(
            (o.scheme.as_str(), o.host.as_str(), o.port),
            ("http", "localhost", 8080)
        );
        assert_eq!(Origin::parse("https://a.example").unwrap().port, 443);
        assert_eq!(Origin::parse("https://a.example/").unwrap().port, 443);
        assert_eq!(Origin::parse("http://[::1]:3000").unwrap().host, "[::1]");
        for bad in [
            "null",
            "",
            "localhost",
            "file://",
            "ftp://localhost",
            "http://",
            "http://localhost:99999",
            "http://localhost:x",
            "http://evil.com@localhost",
            "http://localhost/path",
            "http://[::1",
            "http://::1",
        ] {
            assert_eq!(Origin::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn loopback_and_listed_origins_pass_others_do_not() {
        let allowed = vec![Origin::parse("https://app.example.com").unwrap()];
        let pass = |values: &[&str]| origin_allowed(&headers(ORIGIN, values), &allowed);
        assert!(pass(&[]));
        for good in [
            "http://localhost",
            "http://localhost:5173",
            "https://127.0.0.1:8443",
            "http://127.1.2.3",
            "http://[::1]:8080",
            "https://app.example.com",
            "https://APP.example.com:443",
        ] {
            assert!(pass(&[good]), "{good}");
        }
        for bad in [
            "null",
            "http://localhost.evil.com",
            "http://127.0.0.1.nip.io",
            "http://evil.com",
            "https://app.example.com:8443",
            "http://app.example.com",
            "https://app.example.com.evil.com",
            "http://localhost@evil.com",
            "http://0.0.0.0",
        ] {
            assert!(!pass(&[bad]), "{bad}");
        }
        assert!(!pass(&["http://localhost", "http://localhost"]));
        assert!(!pass(&["http://localhost", "http://evil.com"]));
    }
}
