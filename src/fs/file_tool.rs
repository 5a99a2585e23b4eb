//! What the file-changing tools (`edit`, `write`, `apply_patch`) share:
//! the three steps of a change to one file ([`FileTool`]), the read-deny
//! refusal before anything is looked at, reading the file whole, the path
//! lock, committing the new bytes, and stamping the tool's own write in
//! the ledger.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use agentcore_stages::{CallContext, Content, ToolError, ToolOutput, ValidationFailure};
use tokio_util::sync::CancellationToken;

use super::beneath::{CreatedDirs, FileError};
use super::blocking::{self, run_blocking};
use super::read_state::{FileReadState, ReadStamp, StaleRead, hash_bytes};
use super::replace::{Base, CommitError, Written, commit};
use super::workspace::{OpenFile, Workspace};
use crate::error_code::ErrorCode;

/// The validate step of a file change: read-only, it may stat and read
/// but never writes.
pub(crate) type Check<A> = fn(&Workspace, &FileReadState, &A) -> Result<(), ValidationFailure>;
/// The preview of a file change: the unified diff it would make.
pub(crate) type Preview<A> = fn(&Workspace, &FileReadState, &A) -> Result<String, ToolError>;
/// The change itself, at the resolved path, under its path lock.
pub(crate) type Change<A> = fn(
    &Workspace,
    &FileReadState,
    PathBuf,
    &A,
    &CancellationToken,
) -> Result<ToolOutput, ToolError>;

/// The workspace and ledger a file-changing tool (edit, write) works on,
/// and the steps every such tool takes around its own check, preview and
/// change: each on the blocking pool, the change under the path lock.
#[derive(Clone, Debug)]
pub(crate) struct FileTool {
    /// Where the tool may write.
    pub(crate) workspace: Workspace,
    /// The read-before-write ledger.
    pub(crate) state: FileReadState,
}

impl FileTool {
    /// The validate step, on the blocking pool.
    pub(crate) async fn validate<A: Clone + Send + 'static>(
        &self,
        args: &A,
        check: Check<A>,
    ) -> Result<(), ValidationFailure> {
        let (workspace, state, args) = (self.workspace.clone(), self.state.clone(), args.clone());
        check_blocking(move || check(&workspace, &state, &args)).await
    }

    /// The preview, on the blocking pool.
    pub(crate) async fn preview<A: Clone + Send + 'static>(
        &self,
        args: &A,
        cx: &CallContext,
        preview: Preview<A>,
    ) -> Result<Option<String>, ToolError> {
        let (workspace, state, args) = (self.workspace.clone(), self.state.clone(), args.clone());
        run_blocking(cx, move |_| preview(&workspace, &state, &args))
            .await
            .map(Some)
    }

    /// The change: the path resolved, its lock taken (or the call
    /// cancelled while waiting, with nothing done), then the write on the
    /// blocking pool.
    pub(crate) async fn execute<A: Send + 'static>(
        &self,
        file_path: &str,
        args: A,
        cx: &CallContext,
        change: Change<A>,
    ) -> Result<ToolOutput, ToolError> {
        // The path as the gate judged it (when a gate did): resolved again
        // here it must lead to the same file, and that file is what opens.
        let workspace = self.workspace.judged(cx.extensions().get());
        let path = workspace
            .resolve_new(file_path)
            .map_err(|e| ToolError::new(e.to_string()))?;
        if workspace.is_read_denied(&path) {
            return Err(ToolError::new(read_denied_text(file_path, "changes")));
        }
        let shown = workspace.display(&path);
        let lock = lock_or_cancel(&self.state, &path, cx, &shown).await?;
        let state = self.state.clone();
        run_blocking(cx, move |token| {
            // Held until the write is done and stamped, even if the
            // call's future is dropped meanwhile.
            let _lock = lock;
            change(&workspace, &state, path, &args, &token)
        })
        .await
    }

    /// The busy line: `VERB SHOWN-PATH`.
    pub(crate) fn activity(&self, verb: &str, file_path: &str) -> String {
        format!("{verb} {}", self.workspace.shown_arg(file_path))
    }
}

/// A path problem (outside the workspace, missing, a directory, …):
/// [`ErrorCode::BadPath`] (1).
pub(crate) fn path_failure(e: impl ToString) -> ValidationFailure {
    ValidationFailure::new(ErrorCode::BadPath.into(), e.to_string())
}

/// The text for a file that cannot be read.
pub(crate) fn cannot_read(shown: &str, e: &io::Error) -> String {
    format!("Cannot read {shown}: {e}")
}

/// Runs a read-only check on the blocking pool.
async fn check_blocking<F>(check: F) -> Result<(), ValidationFailure>
where
    F: FnOnce() -> Result<(), ValidationFailure> + Send + 'static,
{
    blocking::spawn(check)
        .await
        .unwrap_or_else(|lost| Err(path_failure(lost)))
}

/// Refuses a path that a read-deny rule covers
/// ([`Workspace::is_read_denied`], fed from the approval engine's read
/// filter), before
/// anything about the file is looked at: the tools' own checks run before
/// the gate, and their answers (not read yet, does not exist, is a
/// directory, …) would tell what is there. One answer, whatever is there.
/// Judged on the path as given, then on the path with symlinks resolved.
pub(crate) fn refuse_read_denied(
    workspace: &Workspace,
    given: &str,
    verb: &str,
) -> Result<(), ValidationFailure> {
    let denied = || path_failure(read_denied_text(given, verb));
    if workspace.is_read_denied(&workspace.root().join(given)) {
        return Err(denied());
    }
    // The longest prefix that resolves: a path that cannot be resolved
    // (`link/x/y` with `x` a file) is judged by where its resolvable part
    // leads, so the resolution error cannot tell what is there either.
    for prefix in Path::new(given).ancestors() {
        if prefix.as_os_str().is_empty() {
            break;
        }
        let Some(prefix) = prefix.to_str() else {
            break;
        };
        if let Ok(resolved) = workspace.resolve_new(prefix) {
            if workspace.is_read_denied(&resolved) {
                return Err(denied());
            }
            break;
        }
    }
    Ok(())
}

/// The refusal of a path a read-deny rule covers.
pub(crate) fn read_denied_text(given: &str, verb: &str) -> String {
    format!(
        "denied by a policy rule that denies reading {given}: this call {verb} {given}. The user does not allow it; do not retry it or work around it with another tool, and choose a different approach."
    )
}

/// Reads a whole open file.
pub(crate) fn read_all(mut file: &File, len: u64) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The bytes of the open file `open` at `path` and their hash: those its
/// change's validate step kept ([`FileReadState::keep_snapshot`]) while
/// the file's metadata is unchanged since (`take` empties the slot, and
/// then the file is hashed again to be sure the kept bytes are its own),
/// else read now.
pub(crate) fn current_bytes(
    state: &FileReadState,
    path: &Path,
    open: &OpenFile,
    take: bool,
) -> io::Result<(std::sync::Arc<Vec<u8>>, u128)> {
    if let Some(kept) = state.snapshot(path, &open.meta, take) {
        // The metadata is unchanged, but a write can leave it so (through a
        // shared mapping, or on a network file system caching attributes):
        // before the bytes are changed and written, check they are still
        // the file's, streaming it (no second copy in memory).
        if !take || crate::fs::read_state::hash_open_file(&open.file)?.0 == kept.1 {
            return Ok(kept);
        }
    }
    let bytes = read_all(&open.file, open.meta.len())?;
    let hash = hash_bytes(&bytes);
    Ok((std::sync::Arc::new(bytes), hash))
}

/// Reads a whole file through the workspace (beneath its root, no link
/// followed, regular files only); `Ok(None)` when there is none.
pub(crate) fn read_existing(
    workspace: &Workspace,
    path: &Path,
) -> Result<Option<Vec<u8>>, FileError> {
    match workspace.open_file(path) {
        Ok(open) => Ok(Some(read_all(&open.file, open.meta.len())?)),
        Err(FileError::NotFound) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Waits for the path lock of `path`, or for the call's cancellation
/// (then nothing was done: Cancelled).
async fn lock_or_cancel(
    state: &FileReadState,
    path: &Path,
    cx: &CallContext,
    shown: &str,
) -> Result<tokio::sync::OwnedMutexGuard<()>, ToolError> {
    let lock = state.path_lock(path);
    tokio::select! {
        biased;
        () = cx.cancellation().cancelled() => Err(cancelled(shown)),
        guard = lock.lock_owned() => Ok(guard),
    }
}

/// Waits for the path locks of every one of `paths`, taken in sorted order
/// (each once) so that two calls holding some of them never wait on each
/// other; or for the call's cancellation (then nothing was done).
pub(crate) async fn lock_all(
    state: &FileReadState,
    paths: &[PathBuf],
    cx: &CallContext,
    shown: &str,
) -> Result<Vec<tokio::sync::OwnedMutexGuard<()>>, ToolError> {
    let sorted: std::collections::BTreeSet<&PathBuf> = paths.iter().collect();
    let mut guards = Vec::with_capacity(sorted.len());
    for path in sorted {
        guards.push(lock_or_cancel(state, path, cx, shown).await?);
    }
    Ok(guards)
}

/// The result of a write or edit cancelled before its point of no return.
pub(crate) fn cancelled(shown: &str) -> ToolError {
    ToolError::cancelled(vec![Content::text(format!(
        "Cancelled before anything was written; {shown} is unchanged."
    ))])
}

/// The failure for a [`CommitError`]: the call did not change the file.
pub(crate) fn commit_failure(e: CommitError, shown: &str, verb: &str) -> ToolError {
    match e {
        CommitError::Cancelled => cancelled(shown),
        CommitError::Moved => StaleRead::ModifiedBeforeWrite.into(),
        CommitError::File(e) => ToolError::new(e.message(shown, verb)),
    }
}

/// Commits `bytes` to `path`: over `existing` (the file as opened and
/// checked, whose bytes hash to `hash`), or as a new file, creating its
/// missing parent directories beneath the root.
pub(crate) fn write_through(
    workspace: &Workspace,
    path: &Path,
    existing: Option<&OpenFile>,
    hash: u128,
    bytes: &[u8],
    token: &CancellationToken,
) -> Result<Written, CommitError> {
    match existing {
        Some(open) => {
            let base = Base {
                file: &open.file,
                meta: &open.meta,
                hash,
            };
            commit(
                &open.dir,
                &open.name,
                Some(base),
                bytes,
                token,
                CreatedDirs::default(),
            )
        }
        None => {
            if token.is_cancelled() {
                return Err(CommitError::Cancelled);
            }
            let (dir, name, created) = workspace.create_parent(path)?;
            commit(&dir, &name, None, bytes, token, created)
        }
    }
}

/// Records the ledger stamp of the tool's own write, from the metadata of
/// the handle the bytes went through, so it matches the file as written.
pub(crate) fn stamp_written(state: &FileReadState, path: &Path, written: &Written, bytes: &[u8]) {
    let stamp = ReadStamp::new(&written.meta, hash_bytes(bytes), false, SystemTime::now());
    state.record(path, stamp);
}
