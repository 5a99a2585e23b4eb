//! The full output, written to its file on a blocking thread so that a slow
//! disk never stalls the runtime's async workers.

use std::sync::{Arc, Mutex};

use crate::fs::blocking::{self, Blocking};
use crate::process::OutputFile;
use tokio::sync::mpsc;

/// Chunks in flight between the reader and the writer thread; with reads
/// of at most 128 KiB this bounds the memory to 1 MiB. When the disk is
/// slower than the command, the reader waits, and so does the command.
const IN_FLIGHT: usize = 8;

/// Buffers written and handed back for the next chunks: a flood of output
/// reuses the same few buffers instead of allocating one a chunk (fresh
/// pages each time, which the kernel zeroes: 18 % of a 100 MB flood's
/// profile, and 13 MB more peak memory than this).
type Pool = Arc<Mutex<Vec<Vec<u8>>>>;

/// Sends output to an [`OutputFile`] written by a blocking task.
#[derive(Debug)]
pub(crate) struct Spool {
    tx: mpsc::Sender<Vec<u8>>,
    pool: Pool,
    writer: Blocking<OutputFile>,
}

impl Spool {
    /// Starts writing to `file`.
    pub(crate) fn start(mut file: OutputFile) -> Self {
        let (tx, mut rx) = mpsc::channel::<Vec<u8>>(IN_FLIGHT);
        let pool: Pool = Arc::default();
        let returned = pool.clone();
        let writer = blocking::spawn(move || {
            while let Some(mut chunk) = rx.blocking_recv() {
                file.write(&chunk);
                chunk.clear();
                let mut pool = returned.lock().unwrap_or_else(|e| e.into_inner());
                if pool.len() <= IN_FLIGHT {
                    pool.push(chunk);
                }
            }
            file
        });
        Self { tx, pool, writer }
    }

    /// Queues a chunk, waiting while the writer is behind.
    pub(crate) async fn write(&self, bytes: &[u8]) {
        let reused = self.pool.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut chunk = reused.unwrap_or_default();
        chunk.extend_from_slice(bytes);
        // A writer that is gone (it panicked) only costs the file.
        let _ = self.tx.send(chunk).await;
    }

    /// Waits for everything queued to be written; `None` if the writer died.
    pub(crate) async fn finish(self) -> Option<OutputFile> {
        drop(self.tx);
        self.writer.await.ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::OutputDir;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_chunk_reaches_the_file_in_order_through_a_few_reused_buffers() {
        let dir = OutputDir::new().unwrap();
        let spool = Spool::start(dir.create("spool-test").unwrap());
        let mut expected = Vec::new();
        for i in 0..2_000u32 {
            let chunk = format!("chunk {i}\n").repeat(1 + (i as usize % 50));
            expected.extend_from_slice(chunk.as_bytes());
            spool.write(chunk.as_bytes()).await;
        }
        let pooled = spool.pool.lock().unwrap().len();
        assert!(pooled <= IN_FLIGHT + 1, "{pooled} buffers kept");
        let file = spool.finish().await.unwrap();
        assert_eq!(std::fs::read(file.path()).unwrap(), expected);
    }
}
