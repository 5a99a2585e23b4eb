//! The pipe a command's stdout and stderr share, enlarged so that a
//! command printing fast is read in big chunks (one wake-up a megabyte
//! rather than one every few kilobytes), within a budget so that the
//! user's pipe memory is not spent.
//!
//! Linux counts the pages of every pipe a user holds; above
//! `/proc/sys/fs/pipe-user-pages-soft` (64 MiB by default) the user's new
//! pipes get two pages. The enlarged pipes of this process stay under
//! [`BUDGET`] together; a pipe beyond it keeps the default size (64 KiB),
//! which only makes that command's output slower to read.

use std::io::{self, PipeReader, PipeWriter};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The size asked for: the unprivileged maximum by default
/// (`/proc/sys/fs/pipe-max-size`).
pub(crate) const ENLARGED: usize = 1 << 20;

/// Bytes of enlarged pipes this process holds at most (a quarter of the
/// default per-user soft limit).
const BUDGET: usize = 16 << 20;

/// Bytes of enlarged pipes held now.
static HELD: AtomicUsize = AtomicUsize::new(0);

/// The share of [`BUDGET`] one enlarged pipe holds, given back when its
/// read end is dropped (the writers are the command's, and die with it).
#[derive(Debug)]
pub(crate) struct Enlarged(usize);

impl Drop for Enlarged {
    fn drop(&mut self) {
        HELD.fetch_sub(self.0, Ordering::Relaxed);
    }
}

/// Takes `bytes` of the budget, or `None` when that would pass it.
fn reserve(bytes: usize) -> Option<Enlarged> {
    HELD.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |held| {
        held.checked_add(bytes).filter(|total| *total <= BUDGET)
    })
    .ok()
    .map(|_| Enlarged(bytes))
}

/// A pipe for a command's output: the read end, the write end, and the
/// share of the budget it holds when it could be enlarged.
pub(crate) fn output_pipe() -> io::Result<(PipeReader, PipeWriter, Option<Enlarged>)> {
    let (reader, writer) = io::pipe()?;
    let enlarged = enlarge(&reader);
    Ok((reader, writer, enlarged))
}

#[cfg(target_os = "linux")]
fn enlarge(reader: &PipeReader) -> Option<Enlarged> {
    let share = reserve(ENLARGED)?;
    // EPERM: above the user's soft limit or the system's maximum; the pipe
    // then keeps its size.
    match rustix::pipe::fcntl_setpipe_size(reader, ENLARGED) {
        Ok(size) if size >= ENLARGED => Some(share),
        _ => None,
    }
}

#[cfg(not(target_os = "linux"))]
fn enlarge(_reader: &PipeReader) -> Option<Enlarged> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_os = "linux")]
    fn an_enlarged_output_pipe_holds_a_megabyte() {
        let (reader, _writer, enlarged) = output_pipe().unwrap();
        if enlarged.is_some() {
            assert!(rustix::pipe::fcntl_getpipe_size(&reader).unwrap() >= ENLARGED);
        }
    }

    #[test]
    fn the_budget_is_never_passed() {
        let shares: Vec<_> = std::iter::from_fn(|| reserve(ENLARGED)).take(64).collect();
        assert!(HELD.load(Ordering::Relaxed) <= BUDGET);
        assert!(shares.len() <= BUDGET / ENLARGED);
        assert!(reserve(ENLARGED).is_none());
    }
}
