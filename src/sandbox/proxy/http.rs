//! The HTTP proxy: `CONNECT host:port` tunnels, and absolute-form requests
//! (`GET http://host/path`) forwarded as plain HTTP, one upstream
//! connection per request. hyper parses and frames the requests.

use std::convert::Infallible;
use std::sync::Arc;

use http_body_util::{Either, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode, Uri};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::sync::OwnedSemaphorePermit;

use super::domains::{self, Host};
use super::resolve::Refused;
use super::{Shared, admit};

type Body = Either<Full<Bytes>, Incoming>;

/// Accepts and serves HTTP proxy clients until the runtime stops.
pub(super) async fn serve(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        let Ok((mut stream, _)) = listener.accept().await else {
            // Out of descriptors, or a reset before accept: try again soon.
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            continue;
        };
        let Some(permit) = admit(&shared) else {
            tokio::spawn(async move {
                let _ = stream
                    .write_all(b"HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\ncontent-length: 0\r\n\r\n")
                    .await;
            });
            continue;
        };
        let _ = stream.set_nodelay(true);
        let shared = shared.clone();
        tokio::spawn(async move {
            let permit = Arc::new(permit);
            let service = {
                let shared = shared.clone();
                let permit = permit.clone();
                hyper::service::service_fn(move |req| {
                    let shared = shared.clone();
                    let permit = permit.clone();
                    async move { Ok::<_, Infallible>(handle(shared, permit, req).await) }
                })
            };
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(shared.config.header_timeout)
                .max_headers(shared.config.max_headers)
                .max_buf_size(shared.config.max_header_bytes);
            let _ = builder
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades()
                .await;
        });
    }
}

/// A short plain-text answer.
fn answer(status: StatusCode, line: &str) -> Response<Body> {
    let mut response = Response::new(Either::Left(Full::new(Bytes::from(format!("{line}\n")))));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    // After a refusal or an error the client's connection is closed: what
    // it sent after the request is not read.
    if status != StatusCode::OK {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// The answer to a refused destination, recorded.
fn refused(shared: &Shared, host: &Host, port: u16, why: &Refused) -> Response<Body> {
    let refusal = shared.refuse(Some(domains::target(host, port)), why.reason());
    let status = match why {
        Refused::Denied(_) => StatusCode::FORBIDDEN,
        Refused::Unresolved(_) => StatusCode::BAD_GATEWAY,
    };
    answer(status, &refusal.to_string())
}

async fn handle(
    shared: Arc<Shared>,
    permit: Arc<OwnedSemaphorePermit>,
    req: Request<Incoming>,
) -> Response<Body> {
    shared.request();
    if req.method() == Method::CONNECT {
        connect(shared, permit, req).await
    } else {
        forward(shared, req).await
    }
}

/// The host and port of `uri`'s authority, the port defaulting to
/// `default`; `None` without an authority or with a bad port.
fn host_port(uri: &Uri, default: Option<u16>) -> Option<Result<(Host, u16), String>> {
    let authority = uri.authority()?;
    let port = match authority.port_u16() {
        Some(port) => port,
        None => default?,
    };
    Some(Host::parse(authority.host()).map(|host| (host, port)))
}

async fn connect(
    shared: Arc<Shared>,
    permit: Arc<OwnedSemaphorePermit>,
    mut req: Request<Incoming>,
) -> Response<Body> {
    let (host, port) = match host_port(req.uri(), None) {
        Some(Ok(target)) => target,
        Some(Err(reason)) => {
            let line = shared.refuse(Some(domains::shown(&req.uri().to_string())), &reason);
            return answer(StatusCode::FORBIDDEN, &line.to_string());
        }
        None => return answer(StatusCode::BAD_REQUEST, "CONNECT needs host:port"),
    };
    let addrs = match shared.decide(&host, port).await {
        Ok(addrs) => addrs,
        Err(why) => return refused(&shared, &host, port, &why),
    };
    let upstream = match shared.connect(&addrs).await {
        Ok(upstream) => upstream,
        Err(e) => {
            return answer(
                StatusCode::BAD_GATEWAY,
                &format!("could not connect to {}: {e}", domains::target(&host, port)),
            );
        }
    };
    let upgrade = hyper::upgrade::on(&mut req);
    tokio::spawn(async move {
        let _permit = permit;
        if let Ok(upgraded) = upgrade.await {
            shared
                .tunnel(TokioIo::new(upgraded), &host, port, upstream)
                .await;
        }
    });
    Response::new(Either::Left(Full::new(Bytes::new())))
}

/// Headers that describe one hop, never forwarded (RFC 9110, 7.6.1).
const HOP_BY_HOP: [&str; 7] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// `headers` without the hop-by-hop ones, those `Connection` names, and
/// `Proxy-*`; a request's `Content-Length` too (`keep_length` false):
/// hyper frames the body again from what it decoded.
fn end_to_end(headers: &HeaderMap, keep_length: bool) -> HeaderMap {
    let named: Vec<String> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|n| n.trim().to_ascii_lowercase())
        .collect();
    let mut out = HeaderMap::with_capacity(headers.len());
    for (name, value) in headers {
        let n = name.as_str();
        if HOP_BY_HOP.contains(&n)
            || n.starts_with("proxy-")
            || named.iter().any(|c| c == n)
            || (!keep_length && name == header::CONTENT_LENGTH)
        {
            continue;
        }
        out.append(name.clone(), value.clone());
    }
    out
}

async fn forward(shared: Arc<Shared>, req: Request<Incoming>) -> Response<Body> {
    if req.uri().scheme_str() != Some("http") {
        let line = if req.uri().scheme_str() == Some("https") {
            "this proxy forwards http:// URLs; for https:// use CONNECT"
        } else {
            "this is a proxy: a request needs an absolute http:// URL"
        };
        return answer(StatusCode::BAD_REQUEST, line);
    }
    // A request hyper framed by Transfer-Encoding may also have carried a
    // Content-Length (hyper then drops it and closes the connection after
    // the answer, so nothing smuggled behind it is read); a coding other
    // than plain `chunked` would not be understood upstream once the
    // framing is redone.
    let te: Vec<_> = req
        .headers()
        .get_all(header::TRANSFER_ENCODING)
        .iter()
        .collect();
    if !te.is_empty() && (te.len() > 1 || !te[0].as_bytes().eq_ignore_ascii_case(b"chunked")) {
        return answer(
            StatusCode::BAD_REQUEST,
            "Transfer-Encoding other than chunked",
        );
    }
    if req.headers().get_all(header::CONTENT_LENGTH).iter().count() > 1 {
        return answer(StatusCode::BAD_REQUEST, "more than one Content-Length");
    }
    let (host, port) = match host_port(req.uri(), Some(80)) {
        Some(Ok(target)) => target,
        Some(Err(reason)) => {
            let line = shared.refuse(Some(domains::shown(&req.uri().to_string())), &reason);
            return answer(StatusCode::FORBIDDEN, &line.to_string());
        }
        None => {
            return answer(
                StatusCode::BAD_REQUEST,
                "a request needs an absolute http:// URL",
            );
        }
    };
    let addrs = match shared.decide(&host, port).await {
        Ok(addrs) => addrs,
        Err(why) => return refused(&shared, &host, port, &why),
    };
    let target = domains::target(&host, port);
    let upstream = match shared.connect(&addrs).await {
        Ok(upstream) => upstream,
        Err(e) => {
            return answer(
                StatusCode::BAD_GATEWAY,
                &format!("could not connect to {target}: {e}"),
            );
        }
    };
    let (parts, body) = req.into_parts();
    let path = parts
        .uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    let mut upstream_req = Request::new(body);
    *upstream_req.method_mut() = parts.method;
    *upstream_req.uri_mut() = match path.parse() {
        Ok(uri) => uri,
        Err(_) => return answer(StatusCode::BAD_REQUEST, "a bad request path"),
    };
    let mut headers = end_to_end(&parts.headers, false);
    let host_value = if parts.uri.port_u16().is_some() {
        target.clone()
    } else {
        host_header(&host)
    };
    match HeaderValue::from_str(&host_value) {
        Ok(v) => {
            headers.insert(header::HOST, v);
        }
        Err(_) => return answer(StatusCode::BAD_REQUEST, "a bad host"),
    }
    *upstream_req.headers_mut() = headers;
    let (mut sender, connection) =
        match hyper::client::conn::http1::handshake(TokioIo::new(upstream)).await {
            Ok(pair) => pair,
            Err(e) => return answer(StatusCode::BAD_GATEWAY, &format!("{target}: {e}")),
        };
    tokio::spawn(async move {
        let _ = connection.await;
    });
    match sender.send_request(upstream_req).await {
        Ok(response) => {
            let (mut parts, body) = response.into_parts();
            parts.headers = end_to_end(&parts.headers, true);
            Response::from_parts(parts, Either::Right(body))
        }
        Err(e) => answer(StatusCode::BAD_GATEWAY, &format!("{target}: {e}")),
    }
}

/// The `Host` header for `host` on its default port.
fn host_header(host: &Host) -> String {
    match host {
        Host::Ip(std::net::IpAddr::V6(ip)) => format!("[{ip}]"),
        other => other.to_string(),
    }
}
