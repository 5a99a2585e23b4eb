//! The accept loop of `agentcore mcp --http`: HTTP/1.1 connections served
//! by hyper with limits `axum::serve` does not have.
//!
//! - **A connection cap** ([`HttpOptions::max_connections`]): with that
//!   many open, a new connection makes room by closing the connection that
//!   has waited longest for a request's headers (one that sent half its
//!   headers, or an idle keep-alive connection); a connection whose
//!   request is being answered is never closed for it. When every
//!   connection is busy, the new one waits (the kernel's backlog holds the
//!   rest). 1,100 connections sending half their headers held every file
//!   descriptor before any of them was authenticated; now they cannot
//!   hold more than the cap, and each new client displaces one of them.
//! - **A header-read timeout** ([`HEADER_TIMEOUT`]): a connection that
//!   has not sent a whole request head within it, from its start or from
//!   the end of its previous answer, is closed.
//! - **Per-connection limits**: at most [`MAX_HEADERS`] headers and
//!   [`MAX_BUF`] bytes of buffered request head; one request at a time
//!   (HTTP/1.1, no pipelining ahead).
//!
//! [`HttpOptions::max_connections`]: super::HttpOptions::max_connections

use std::collections::HashMap;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use hyper::body::{Body as HttpBody, Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

/// How long a connection may take to send a request's headers (from its
/// start, or from the end of the previous answer on a kept-alive
/// connection) before it is closed.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// The most headers one request may carry.
pub const MAX_HEADERS: usize = 100;

/// The most bytes of a request head buffered for one connection.
pub const MAX_BUF: usize = 64 * 1024;

/// How long an accepted connection waits for room when every connection
/// is busy before it is closed.
const ROOM_WAIT: Duration = Duration::from_secs(30);

/// The connections open now.
struct Conns {
    open: Mutex<HashMap<u64, Arc<Conn>>>,
    next: AtomicU64,
}

/// One connection's state, for the cap's choice.
struct Conn {
    /// Requests being answered (their answer's body not yet done).
    busy: AtomicUsize,
    /// Since when it has waited for a request (valid while not busy).
    waiting_since: Mutex<Instant>,
    /// Closes it.
    shed: CancellationToken,
}

impl Conns {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Conn>>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn add(&self) -> (u64, Arc<Conn>) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let conn = Arc::new(Conn {
            busy: AtomicUsize::new(0),
            waiting_since: Mutex::new(Instant::now()),
            shed: CancellationToken::new(),
        });
        self.lock().insert(id, conn.clone());
        (id, conn)
    }

    fn remove(&self, id: u64) {
        self.lock().remove(&id);
    }

    /// Closes the connection that has waited longest for a request's
    /// headers; false when every connection is answering one.
    fn shed_longest_waiting(&self) -> bool {
        let mut open = self.lock();
        let chosen = open
            .iter()
            .filter(|(_, conn)| conn.busy.load(Ordering::Acquire) == 0)
            .min_by_key(|(_, conn)| {
                *conn
                    .waiting_since
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
            })
            .map(|(id, _)| *id);
        match chosen.and_then(|id| open.remove(&id)) {
            Some(conn) => {
                conn.shed.cancel();
                true
            }
            None => false,
        }
    }
}

impl Conn {
    fn begin(self: &Arc<Self>) -> Busy {
        self.busy.fetch_add(1, Ordering::AcqRel);
        Busy(self.clone())
    }
}

/// One request being answered; the connection waits again when it drops.
struct Busy(Arc<Conn>);

impl Drop for Busy {
    fn drop(&mut self) {
        *self
            .0
            .waiting_since
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Instant::now();
        self.0.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

/// An answer's body holding `guard` until it is done or dropped.
struct Guarded<G> {
    inner: Body,
    _guard: G,
}

impl<G: Unpin> HttpBody for Guarded<G> {
    type Data = <Body as HttpBody>::Data;
    type Error = <Body as HttpBody>::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// `response` with `guard` held until its body is done (a streamed answer:
/// until its stream ends or the client goes away).
pub(super) fn holding<G>(response: axum::response::Response, guard: G) -> axum::response::Response
where
    G: Send + Unpin + 'static,
{
    response.map(|inner| {
        Body::new(Guarded {
            inner,
            _guard: guard,
        })
    })
}

/// Serves `router` on `listener` until `stopping` fires, then lets open
/// connections finish their answers for up to `grace` and returns.
pub(super) async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    max_connections: usize,
    header_timeout: Duration,
    stopping: CancellationToken,
    grace: Duration,
) {
    let conns = Arc::new(Conns {
        open: Mutex::default(),
        next: AtomicU64::new(0),
    });
    let room = Arc::new(Semaphore::new(max_connections));
    let mut tasks = JoinSet::new();
    loop {
        let accepted = tokio::select! {
            biased;
            () = stopping.cancelled() => break,
            Some(_) = tasks.join_next(), if !tasks.is_empty() => continue,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(_) => {
                // Out of descriptors, or a connection reset before it was
                // taken: try again shortly.
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        let permit = match room.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                conns.shed_longest_waiting();
                let wait = tokio::time::timeout(ROOM_WAIT, room.clone().acquire_owned());
                tokio::select! {
                    () = stopping.cancelled() => break,
                    got = wait => match got {
                        Ok(Ok(permit)) => permit,
                        // No room in time: this connection is closed.
                        _ => continue,
                    },
                }
            }
        };
        let (id, conn) = conns.add();
        let router = router.clone();
        let stopping = stopping.clone();
        let conns = conns.clone();
        tasks.spawn(async move {
            let _permit = permit;
            let service = {
                let conn = conn.clone();
                hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
                    let busy = conn.begin();
                    let router = router.clone();
                    async move {
                        let response = match router.oneshot(request.map(Body::new)).await {
                            Ok(response) => response,
                            Err(never) => match never {},
                        };
                        Ok::<_, Infallible>(holding(response, busy))
                    }
                })
            };
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout)
                .max_headers(MAX_HEADERS)
                .max_buf_size(MAX_BUF)
                .keep_alive(true);
            let connection = builder.serve_connection(TokioIo::new(stream), service);
            let mut connection = std::pin::pin!(connection);
            let mut ending = false;
            loop {
                tokio::select! {
                    _ = connection.as_mut() => break,
                    () = conn.shed.cancelled() => break,
                    () = stopping.cancelled(), if !ending => {
                        ending = true;
                        connection.as_mut().graceful_shutdown();
                    }
                }
            }
            conns.remove(id);
        });
    }
    drop(listener);
    let _ = tokio::time::timeout(grace, async { while tasks.join_next().await.is_some() {} }).await;
    tasks.abort_all();
}
