//! Standard output for the subcommands that print: every line goes through
//! [`line`], and a reader that went away (`agentcore demo | head -1`) is a
//! quiet end, not a panic.
//!
//! Why a writer and not SIGPIPE's default action: with SIGPIPE at its
//! default, the first write to a closed pipe would kill the process on the
//! spot, wherever it is. `agentcore mcp` must then end its session (kill and
//! await background jobs, remove the session's folders) when its client goes
//! away, and a write to a mounted MCP server or a hook that exited would
//! kill the kernel with it. So SIGPIPE stays ignored (as Rust sets it), a
//! write fails with `BrokenPipe`, and each command treats that as the end of
//! its output: [`closed`] tells it to stop, it ends its session as at the end
//! of input, and the exit status is 0 (docs/cli.md, "Exit status").

use std::fmt;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// `eprintln!` that never panics: a message to a closed stderr (`2>&1 |
/// head -1`) is lost, not a panic.
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}
pub(crate) use errln;

/// Set once a write to stdout failed (the output has ended).
static CLOSED: AtomicBool = AtomicBool::new(false);

/// Set once a write to stdout failed otherwise than by a broken pipe (a
/// full disk, `> /dev/full`): the command's output is incomplete.
static FAILED: AtomicBool = AtomicBool::new(false);

/// Whether stdout's reader went away: nothing more can be shown, so the
/// command should wind down.
pub(crate) fn closed() -> bool {
    CLOSED.load(Ordering::Relaxed)
}

/// Whether a write to stdout failed for another reason than a reader that
/// went away: the exit status is then 1, not 0.
pub(crate) fn failed() -> bool {
    FAILED.load(Ordering::Relaxed)
}

/// Writes `text` and a newline to stdout and flushes. Returns `false` when
/// stdout is closed (then and from then on nothing is written); another
/// write error is reported on stderr once and also ends the output.
pub(crate) fn line(text: impl fmt::Display) -> bool {
    write_with(|out| writeln!(out, "{text}"))
}

/// Runs `write` on locked stdout, then flushes; a failure ends the output
/// as for [`line`].
pub(crate) fn write_with(write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> bool {
    if closed() {
        return false;
    }
    let mut out = io::stdout().lock();
    let result = write(&mut out).and_then(|()| out.flush());
    match result {
        Ok(()) => true,
        Err(err) => {
            if err.kind() != io::ErrorKind::BrokenPipe && !CLOSED.load(Ordering::Relaxed) {
                errln!("agentcore: cannot write to stdout: {err}");
                FAILED.store(true, Ordering::Relaxed);
            }
            CLOSED.store(true, Ordering::Relaxed);
            false
        }
    }
}

/// `println!` through [`line`]: `outln!("a {}", b)`; evaluates to whether
/// the line was written.
macro_rules! outln {
    () => {
        $crate::cli::out::line("")
    };
    ($($arg:tt)*) => {
        $crate::cli::out::line(format_args!($($arg)*))
    };
}
pub(crate) use outln;
