//! Standard input read on a thread of its own, so that a signal can end the
//! process while a read is waiting.
//!
//! `tokio::io::stdin()` reads on the runtime's blocking pool, and a runtime
//! does not shut down until its blocking threads return: a read waiting for
//! the next line of an open pipe (or terminal, or socket) held the process
//! after SIGTERM until the writer closed it. A plain thread is not waited
//! for: the process exits with it still blocked in `read`.

use std::io::Read;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::mpsc;

/// Bytes read at a time.
const CHUNK: usize = 64 * 1024;

/// Chunks read ahead of the reader (backpressure beyond them).
const AHEAD: usize = 4;

/// Standard input as an [`AsyncRead`], read on a detached thread.
pub(crate) struct ThreadStdin {
    chunks: mpsc::Receiver<std::io::Result<Vec<u8>>>,
    pending: Vec<u8>,
    at: usize,
    done: bool,
}

impl ThreadStdin {
    /// Starts the reading thread.
    pub(crate) fn new() -> std::io::Result<Self> {
        let (send, chunks) = mpsc::channel(AHEAD);
        std::thread::Builder::new()
            .name("agentcore-stdin".to_owned())
            .spawn(move || {
                let mut stdin = std::io::stdin().lock();
                loop {
                    let mut chunk = vec![0u8; CHUNK];
                    let got = match stdin.read(&mut chunk) {
                        Ok(0) => return,
                        Ok(n) => {
                            chunk.truncate(n);
                            Ok(chunk)
                        }
                        Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
                        Err(err) => Err(err),
                    };
                    let failed = got.is_err();
                    // The reader is gone (the run ended): stop reading.
                    if send.blocking_send(got).is_err() || failed {
                        return;
                    }
                }
            })?;
        Ok(Self {
            chunks,
            pending: Vec::new(),
            at: 0,
            done: false,
        })
    }
}

impl AsyncRead for ThreadStdin {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        if this.at == this.pending.len() {
            if this.done {
                return Poll::Ready(Ok(()));
            }
            match this.chunks.poll_recv(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => {
                    this.done = true;
                    return Poll::Ready(Ok(()));
                }
                Poll::Ready(Some(Err(err))) => {
                    this.done = true;
                    return Poll::Ready(Err(err));
                }
                Poll::Ready(Some(Ok(chunk))) => {
                    this.pending = chunk;
                    this.at = 0;
                }
            }
        }
        let n = buf.remaining().min(this.pending.len() - this.at);
        buf.put_slice(&this.pending[this.at..this.at + n]);
        this.at += n;
        Poll::Ready(Ok(()))
    }
}
