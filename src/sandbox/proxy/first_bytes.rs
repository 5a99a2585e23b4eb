//! The first bytes of a tunnel: a TLS ClientHello's server name, or an
//! HTTP/1.x request's `Host`, read before anything goes upstream.
//!
//! The ClientHello parser is written for hostile input: a handshake split
//! across several records and reads, lengths that lie, duplicate
//! extensions; it never panics and never reads past what it was given.

/// What the first bytes of a tunnel are, so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FirstBytes {
    /// Not enough bytes yet to tell.
    NeedMore,
    /// A whole TLS ClientHello, with its server name if it has one.
    Tls(Option<String>),
    /// A whole HTTP/1.x request head, with its one `Host` header if it
    /// has exactly one.
    Http(Option<String>),
    /// Something else, or a malformed ClientHello or request head; the
    /// text says what.
    Other(&'static str),
}

/// Judges `buf`, the bytes a client sent so far.
pub fn judge(buf: &[u8]) -> FirstBytes {
    match buf.first() {
        None => FirstBytes::NeedMore,
        Some(0x16) => match client_hello_sni(buf) {
            Ok(sni) => FirstBytes::Tls(sni),
            Err(Malformed::Incomplete) => FirstBytes::NeedMore,
            Err(Malformed::Invalid(why)) => FirstBytes::Other(why),
        },
        Some(b) if b.is_ascii_uppercase() => http_host(buf),
        Some(_) => FirstBytes::Other("not TLS nor HTTP"),
    }
}

fn http_host(buf: &[u8]) -> FirstBytes {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut request = httparse::Request::new(&mut headers);
    match request.parse(buf) {
        Ok(httparse::Status::Partial) => FirstBytes::NeedMore,
        Ok(httparse::Status::Complete(_)) => {
            let mut hosts = request
                .headers
                .iter()
                .filter(|h| h.name.eq_ignore_ascii_case("host"));
            let host = match (hosts.next(), hosts.next()) {
                (Some(h), None) => std::str::from_utf8(h.value).ok().map(str::to_owned),
                _ => None,
            };
            FirstBytes::Http(host)
        }
        Err(_) => FirstBytes::Other("not TLS nor HTTP"),
    }
}

/// Why a ClientHello could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Malformed {
    /// The bytes so far are a valid beginning; more are needed.
    Incomplete,
    /// The bytes are not a valid ClientHello.
    Invalid(&'static str),
}

/// The largest TLS record fragment (RFC 8446, 5.1).
const MAX_FRAGMENT: usize = 1 << 14;

/// The largest ClientHello accepted (several records' worth).
const MAX_HELLO: usize = 64 * 1024;

/// The server name (`server_name` extension, `host_name` entry) of the TLS
/// ClientHello at the start of `buf`, which may span several records;
/// `Ok(None)` for a whole ClientHello without one.
pub fn client_hello_sni(buf: &[u8]) -> Result<Option<String>, Malformed> {
    use Malformed::{Incomplete, Invalid};
    // Reassemble the handshake message from the records' fragments.
    let mut handshake = Vec::new();
    let mut rest = buf;
    let body = loop {
        let Some(header) = rest.get(..5) else {
            return Err(Incomplete);
        };
        if header[0] != 0x16 {
            return Err(Invalid(
                "not TLS nor HTTP (a TLS record other than a handshake)",
            ));
        }
        if header[1] != 3 || header[2] > 4 {
            return Err(Invalid("not TLS nor HTTP (an unknown TLS record version)"));
        }
        let len = usize::from(u16::from_be_bytes([header[3], header[4]]));
        if len == 0 || len > MAX_FRAGMENT {
            return Err(Invalid("not TLS nor HTTP (a TLS record of a bad length)"));
        }
        let Some(fragment) = rest.get(5..5 + len) else {
            return Err(Incomplete);
        };
        handshake.extend_from_slice(fragment);
        rest = &rest[5 + len..];
        if let Some(h) = handshake.get(..4) {
            if h[0] != 1 {
                return Err(Invalid(
                    "not TLS nor HTTP (a TLS handshake other than a ClientHello)",
                ));
            }
            let hello_len =
                (usize::from(h[1]) << 16) | (usize::from(h[2]) << 8) | usize::from(h[3]);
            if hello_len > MAX_HELLO {
                return Err(Invalid("not TLS nor HTTP (a ClientHello too large)"));
            }
            if handshake.len() >= 4 + hello_len {
                // Bytes after the ClientHello in its last record would be
                // another handshake message, which a client does not send
                // before the server answers.
                if handshake.len() != 4 + hello_len {
                    return Err(Invalid("not TLS nor HTTP (bytes after the ClientHello)"));
                }
                break &handshake[4..];
            }
        }
    };
    parse_hello(body).map_err(Invalid)
}

/// A cursor over a byte slice whose reads fail instead of panicking.
struct Reader<'a>(&'a [u8]);

const SHORT: &str = "not TLS nor HTTP (a ClientHello whose lengths do not add up)";

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], &'static str> {
        if self.0.len() < n {
            return Err(SHORT);
        }
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8, &'static str> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, &'static str> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }
    /// A vector with a one-byte length.
    fn vec8(&mut self) -> Result<&'a [u8], &'static str> {
        let n = self.u8()?;
        self.take(usize::from(n))
    }
    /// A vector with a two-byte length.
    fn vec16(&mut self) -> Result<&'a [u8], &'static str> {
        let n = self.u16()?;
        self.take(usize::from(n))
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

fn parse_hello(body: &[u8]) -> Result<Option<String>, &'static str> {
    let mut r = Reader(body);
    let _legacy_version = r.u16()?;
    let _random = r.take(32)?;
    let session_id = r.vec8()?;
    if session_id.len() > 32 {
        return Err(SHORT);
    }
    let suites = r.vec16()?;
    if suites.is_empty() || suites.len() % 2 != 0 {
        return Err(SHORT);
    }
    if r.vec8()?.is_empty() {
        return Err(SHORT);
    }
    if r.is_empty() {
        return Ok(None);
    }
    let mut extensions = Reader(r.vec16()?);
    if !r.is_empty() {
        return Err(SHORT);
    }
    let mut seen = Vec::new();
    let mut sni = None;
    while !extensions.is_empty() {
        let kind = extensions.u16()?;
        let data = extensions.vec16()?;
        if seen.contains(&kind) {
            return Err("not TLS nor HTTP (a ClientHello with an extension twice)");
        }
        seen.push(kind);
        if kind == 0 {
            sni = server_name(data)?;
        }
    }
    Ok(sni)
}

/// The `host_name` of a `server_name` extension's data (RFC 6066, 3).
fn server_name(data: &[u8]) -> Result<Option<String>, &'static str> {
    let mut outer = Reader(data);
    let mut list = Reader(outer.vec16()?);
    if !outer.is_empty() {
        return Err(SHORT);
    }
    let mut host = None;
    while !list.is_empty() {
        let kind = list.u8()?;
        let name = list.vec16()?;
        if kind == 0 {
            if host.is_some() {
                return Err("not TLS nor HTTP (a ClientHello with two server names)");
            }
            let name = std::str::from_utf8(name)
                .ok()
                .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_graphic()))
                .ok_or("not TLS nor HTTP (a TLS server name that is not ASCII)")?;
            host = Some(name.to_owned());
        }
    }
    Ok(host)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A minimal valid ClientHello record with `sni` (if any), one record.
    pub(crate) fn client_hello(sni: Option<&str>) -> Vec<u8> {
        let mut ext = Vec::new();
        if let Some(name) = sni {
            let n = name.len() as u16;
            ext.extend_from_slice(&0u16.to_be_bytes());
            ext.extend_from_slice(&(n + 5).to_be_bytes());
            ext.extend_from_slice(&(n + 3).to_be_bytes());
            ext.push(0);
            ext.extend_from_slice(&n.to_be_bytes());
            ext.extend_from_slice(name.as_bytes());
        }
        // supported_versions: TLS 1.3
        ext.extend_from_slice(&[0x00, 0x2b, 0x00, 0x03, 0x02, 0x03, 0x04]);
        let mut body = vec![0x03, 0x03];
        body.extend_from_slice(&[7; 32]);
        body.push(0);
        body.extend_from_slice(&[0x00, 0x02, 0x13, 0x01]);
        body.extend_from_slice(&[0x01, 0x00]);
        body.extend_from_slice(&(ext.len() as u16).to_be_bytes());
        body.extend_from_slice(&ext);
        let mut hs = vec![1];
        hs.extend_from_slice(&(body.len() as u32).to_be_bytes()[1..]);
        hs.extend_from_slice(&body);
        records(&hs, usize::MAX)
    }

    /// `handshake` cut into records of at most `size` bytes.
    pub(crate) fn records(handshake: &[u8], size: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for chunk in handshake.chunks(size.min(MAX_FRAGMENT)) {
            out.extend_from_slice(&[0x16, 0x03, 0x01]);
            out.extend_from_slice(&(chunk.len() as u16).to_be_bytes());
            out.extend_from_slice(chunk);
        }
        out
    }

    #[test]
    fn reads_the_server_name() {
        let hello = client_hello(Some("registry.test"));
        assert_eq!(client_hello_sni(&hello), Ok(Some("registry.test".into())));
        assert_eq!(judge(&hello), FirstBytes::Tls(Some("registry.test".into())));
        assert_eq!(client_hello_sni(&client_hello(None)), Ok(None));
    }

    #[test]
    fn every_prefix_asks_for_more() {
        let hello = client_hello(Some("registry.test"));
        for cut in 0..hello.len() {
            assert_eq!(
                client_hello_sni(&hello[..cut]),
                Err(Malformed::Incomplete),
                "{cut}"
            );
        }
    }

    #[test]
    fn a_hello_split_across_records_is_reassembled() {
        let hello = client_hello(Some("a.example.com"));
        let handshake = &hello[5..];
        for size in [1, 2, 7, 40] {
            let split = records(handshake, size);
            assert_eq!(
                client_hello_sni(&split),
                Ok(Some("a.example.com".into())),
                "{size}"
            );
            for cut in 0..split.len() {
                assert_eq!(client_hello_sni(&split[..cut]), Err(Malformed::Incomplete));
            }
        }
    }

    #[test]
    fn lying_lengths_are_invalid() {
        let hello = client_hello(Some("registry.test"));
        // The extensions' total length one too large, then one too small.
        let ext_len_at = 5 + 4 + 2 + 32 + 1 + 4 + 2;
        for delta in [1i32, -1] {
            let mut bad = hello.clone();
            let v = i32::from(u16::from_be_bytes([bad[ext_len_at], bad[ext_len_at + 1]])) + delta;
            bad[ext_len_at..ext_len_at + 2].copy_from_slice(&(v as u16).to_be_bytes());
            assert!(
                matches!(client_hello_sni(&bad), Err(Malformed::Invalid(_))),
                "{delta}"
            );
        }
        // A record longer than 2^14.
        assert!(matches!(
            client_hello_sni(&[0x16, 3, 1, 0x40, 0x01]),
            Err(Malformed::Invalid(_))
        ));
        // A handshake that is not a ClientHello.
        assert!(matches!(
            client_hello_sni(&[0x16, 3, 1, 0, 4, 2, 0, 0, 0]),
            Err(Malformed::Invalid(_))
        ));
    }

    #[test]
    fn duplicate_server_names_are_invalid() {
        let mut hello = client_hello(Some("a.test"));
        // Append a second server_name extension.
        let dup = [
            0u8, 0, 0, 11, 0, 9, 0, 0, 6, b'b', b'.', b't', b'e', b's', b't',
        ];
        hello.extend_from_slice(&dup[..]);
        // Fix lengths: record, handshake, extensions.
        let add = dup.len();
        let fix16 = |b: &mut Vec<u8>, at: usize| {
            let v = u16::from_be_bytes([b[at], b[at + 1]]) as usize + add;
            b[at..at + 2].copy_from_slice(&(v as u16).to_be_bytes());
        };
        fix16(&mut hello, 3);
        let hs = u32::from_be_bytes([0, hello[6], hello[7], hello[8]]) as usize + add;
        hello[6..9].copy_from_slice(&(hs as u32).to_be_bytes()[1..]);
        fix16(&mut hello, 5 + 4 + 2 + 32 + 1 + 4 + 2);
        assert!(matches!(
            client_hello_sni(&hello),
            Err(Malformed::Invalid(_))
        ));
    }

    #[test]
    fn http_and_other_first_bytes() {
        assert_eq!(
            judge(b"GET / HTTP/1.1\r\nHost: a.test\r\n\r\n"),
            FirstBytes::Http(Some("a.test".into()))
        );
        assert_eq!(judge(b"GET / HTTP/1.1\r\nHost: a.t"), FirstBytes::NeedMore);
        assert_eq!(judge(b"GET / HTTP/1.1\r\n\r\n"), FirstBytes::Http(None));
        assert_eq!(
            judge(b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"),
            FirstBytes::Http(None)
        );
        assert_eq!(
            judge(b"SSH-2.0-OpenSSH\r\n"),
            FirstBytes::Other("not TLS nor HTTP")
        );
        assert_eq!(judge(b"\x00\x01"), FirstBytes::Other("not TLS nor HTTP"));
    }

    proptest! {
        #[test]
        fn never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
            let _ = judge(&bytes);
            let mut tls = vec![0x16, 3, 1];
            tls.extend_from_slice(&bytes);
            let _ = client_hello_sni(&tls);
        }

        #[test]
        fn never_panics_on_mutated_hellos(
            at in 0usize..200, byte in any::<u8>(), cut in 0usize..200, size in 1usize..64
        ) {
            let hello = client_hello(Some("registry.test"));
            let mut split = records(&hello[5..], size);
            if at < split.len() {
                split[at] = byte;
            }
            split.truncate(split.len().saturating_sub(cut));
            let _ = client_hello_sni(&split);
        }
    }
}
