//! The full output, written to its file on a blocking thread so that a slow
//! disk never stalls the runtime's async workers.

use crate::fs::blocking::{self, Blocking};
use crate::process::OutputFile;
use tokio::sync::mpsc;

/// Chunks in flight between the reader and the writer thread; with reads
/// of at most 128 KiB this bounds the memory to 1 MiB. When the disk is
/// slower than the command, the reader waits, and so does the command.
const IN_FLIGHT: usize = 8;

/// Sends output to an [`OutputFile`] written by a blocking task.
#[derive(Debug)]
pub(crate) struct Spool {
    tx: mpsc::Sender<Vec<u8>>,
    writer: Blocking<OutputFile>,
}

impl Spool {
    /// Starts writing to `file`.
    pub(crate) fn start(mut file: OutputFile) -> Self {
        let (tx, mut rx) = mpsc::channel::<Vec<u8>>(IN_FLIGHT);
        let writer = blocking::spawn(move || {
            while let Some(chunk) = rx.blocking_recv() {
                file.write(&chunk);
            }
            file
        });
        Self { tx, writer }
    }

    /// Queues a chunk, waiting while the writer is behind.
    pub(crate) async fn write(&self, bytes: &[u8]) {
        // A writer that is gone (it panicked) only costs the file.
        let _ = self.tx.send(bytes.to_vec()).await;
    }

    /// Waits for everything queued to be written; `None` if the writer died.
    pub(crate) async fn finish(self) -> Option<OutputFile> {
        drop(self.tx);
        self.writer.await.ok()
    }
}
