//! Every bound a model or a user can meet, in one place: how much a call
//! may ask for, how much a result shows, how long things may take. The
//! parts that enforce them import them from here; their texts (tool
//! descriptions, error messages) are written from these values.
//!
//! Bounds that are only an implementation's tuning (buffer sizes, poll
//! intervals, walk budgets) stay beside the code they tune.
//!
//! Layer: the bottom, with [`access`](crate::access): it imports nothing.

use std::time::Duration;

/// Messages read by the JSON Lines CLI and the MCP faces.
pub mod input {
    /// The longest line read whole, newline excluded, in MiB.
    pub const MAX_LINE_MIB: usize = 16;

    /// The longest line read whole, newline excluded: [`MAX_LINE_MIB`] MiB.
    pub const MAX_LINE_BYTES: usize = MAX_LINE_MIB * 1024 * 1024;

    /// The deepest nesting of arrays and objects let through: serde_json's
    /// recursion limit.
    pub const MAX_DEPTH: usize = 128;

    /// The most JSON values (scalars, arrays, objects) one message may hold.
    /// A parsed value costs tens of bytes per element (and a typed parse
    /// buffers the message more than once), so a 16 MiB line of
    /// `[0,0,0,…]` took 1.6 GB in `agentcore mcp` and 570 MB in
    /// `agentcore run`; this bounds that to tens of MB, far above what any
    /// request needs.
    pub const MAX_VALUES: usize = 100_000;
}

/// Paths a model gives.
pub mod paths {
    /// The longest path, in bytes, a model may give (Linux's `PATH_MAX`).
    pub const MAX_PATH_BYTES: usize = 4096;

    /// How many symbolic links one resolution may follow (Linux's limit).
    pub const MAX_SYMLINK_HOPS: usize = 40;
}

/// The `read` tool.
pub mod read {
    /// The default `limit` as a literal, for the texts that name it.
    macro_rules! default_limit {
        () => {
            2000
        };
    }
    pub(crate) use default_limit;

    /// Lines shown when the model gives no `limit`.
    pub const DEFAULT_LIMIT: u64 = default_limit!();
    /// Characters of one line shown before it is cut.
    pub const MAX_LINE_CHARS: usize = 2000;
    /// The largest output `read` returns; more is refused.
    pub const MAX_OUTPUT_BYTES: usize = 256 * 1024;
    /// The largest image `read` returns, in file bytes.
    pub const MAX_IMAGE_BYTES: u64 = 5 * 1024 * 1024;
    /// Entries of a directory listed at most.
    pub const MAX_DIR_ENTRIES: usize = 1000;
}

/// The `glob` tool.
pub mod glob {
    /// Paths shown at most.
    pub const MAX_RESULTS: usize = 100;
}

/// The `ls` tool.
pub mod ls {
    /// Entries shown at most (the root line not counted).
    pub const MAX_ENTRIES: usize = 1000;
}

/// The `multi_edit` tool.
pub mod multi_edit {
    /// The most edits one call may make.
    pub const MAX_EDITS: usize = 100;
}

/// Results of tools mounted from other MCP servers.
pub mod mcp {
    /// Characters of text (text and JSON blocks together) a result shows at
    /// most, head and tail, as bash's output; the whole text is kept in a
    /// file of the session's output folder.
    pub const MAX_RESULT_CHARS: usize = super::bash::MAX_OUTPUT_CHARS;
    /// Images a result shows at most; later ones are kept as files.
    pub const MAX_RESULT_IMAGES: usize = 8;
    /// The largest image a result shows, in decoded bytes (read's cap);
    /// a larger one is kept as a file.
    pub const MAX_IMAGE_BYTES: u64 = super::read::MAX_IMAGE_BYTES;
}

/// The `edit_lines` tool.
pub mod edit_lines {
    /// The most operations one call may make.
    pub const MAX_OPERATIONS: usize = 100;
}

/// The `bash` tool and its background jobs.
pub mod bash {
    use super::Duration;

    /// The timeout when the model gives none, in milliseconds.
    pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;

    /// The longest timeout a model may ask for, in milliseconds.
    pub const MAX_TIMEOUT_MS: u64 = 600_000;

    /// Characters of output a result shows at most (head and tail).
    pub const MAX_OUTPUT_CHARS: usize = 30_000;

    /// Jobs alive at once, by default.
    pub const DEFAULT_MAX_JOBS: usize = 8;

    /// How long a job may run, by default: one hour.
    pub const DEFAULT_JOB_LIFETIME: Duration = Duration::from_secs(60 * 60);

    /// The longest `wait_ms` a model may ask `bash_output` for.
    pub const MAX_WAIT_MS: u64 = 60_000;

    /// How long a terminal session's call waits for output when the model
    /// gives no `yield_ms`.
    pub const DEFAULT_YIELD_MS: u64 = 1_000;

    /// The longest `yield_ms` a model may give.
    pub const MAX_YIELD_MS: u64 = 60_000;

    /// A terminal's size when the model gives none.
    pub const DEFAULT_ROWS: u16 = 30;
    /// See [`DEFAULT_ROWS`].
    pub const DEFAULT_COLS: u16 = 120;

    /// The smallest and largest terminal a model may ask for.
    pub const MIN_ROWS: u16 = 5;
    /// See [`MIN_ROWS`].
    pub const MAX_ROWS: u16 = 200;
    /// See [`MIN_ROWS`].
    pub const MIN_COLS: u16 = 20;
    /// See [`MIN_ROWS`].
    pub const MAX_COLS: u16 = 500;

    /// The most bytes one `write_stdin` types.
    pub const MAX_INPUT_BYTES: usize = 64 * 1024;

    /// Lines `bash_output` shows of a saved output when the model gives
    /// no `limit` (matching lines, with a `pattern`).
    pub const DEFAULT_REREAD_LIMIT: u64 = 200;

    /// The largest `limit` a model may ask `bash_output` for.
    pub const MAX_REREAD_LIMIT: u64 = 2000;

    /// The most `context` lines `bash_output` shows on each side of a
    /// matching line.
    pub const MAX_REREAD_CONTEXT: u64 = 10;

    /// Characters of one saved line `bash_output` shows before it is cut
    /// (and matches a `pattern` against).
    pub const MAX_REREAD_LINE_CHARS: usize = 2000;
}

/// Claude Code hooks.
pub mod hooks {
    use super::Duration;

    /// Bytes of stdout and of stderr kept of one hook; the rest is read and
    /// dropped (so the hook never blocks on a full pipe).
    pub const MAX_HOOK_OUTPUT: usize = 1 << 20;

    /// A hook's timeout when it gives none (Claude Code's): 60 seconds.
    pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(60);
}

/// The session.
pub mod session {
    use super::Duration;

    /// How long a question to the person waits for an answer, unless the
    /// session's `ask_timeout` says otherwise: 120 s.
    pub const DEFAULT_ASK_TIMEOUT: Duration = Duration::from_secs(120);
}
