//! The writer of `agentcore mcp` on stdio, watched for a client that went
//! away: the first write that fails with a broken pipe cancels a token, so
//! the server ends its session (calls aborted, jobs killed, folders
//! removed) even while the client still holds stdin open.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::AsyncWrite;
use tokio_util::sync::CancellationToken;

/// `inner`, cancelling `gone` once a write or flush fails with
/// [`io::ErrorKind::BrokenPipe`].
pub(crate) struct ClientGone<W> {
    inner: W,
    gone: CancellationToken,
}

impl<W> ClientGone<W> {
    /// Watches `inner`; `gone` is cancelled when its reader has gone away.
    pub(crate) fn new(inner: W, gone: CancellationToken) -> Self {
        Self { inner, gone }
    }

    fn watch<T>(&self, result: Poll<io::Result<T>>) -> Poll<io::Result<T>> {
        if let Poll::Ready(Err(err)) = &result
            && err.kind() == io::ErrorKind::BrokenPipe
        {
            self.gone.cancel();
        }
        result
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for ClientGone<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let result = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.watch(result)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let result = Pin::new(&mut self.inner).poll_flush(cx);
        self.watch(result)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let result = Pin::new(&mut self.inner).poll_shutdown(cx);
        self.watch(result)
    }
}
