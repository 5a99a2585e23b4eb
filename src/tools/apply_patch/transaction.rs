//! The transaction: a checked plan written all or nothing. Every new and
//! rewritten file is written first, each atomically, then the deleted and
//! moved files are deleted; when a step fails (or the call is cancelled
//! between steps), the steps done are undone, newest first, and the call
//! fails saying what was put back. Past the last step, the writes are
//! stamped in the ledger and the result lists every file.

use std::fmt::Write as _;
use std::io;
use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use agentcore_stages::{Content, ToolError, ToolOutput};
use rustix::fs::{AtFlags, unlinkat};
use tokio_util::sync::CancellationToken;

use super::plan::{Action, Planned};
use crate::fs::beneath;
use crate::fs::file_tool::{FileTool, stamp_written, write_through};
use crate::fs::read_state::{StaleRead, hash_bytes};
use crate::fs::replace::{CommitError, Written};
use crate::fs::workspace::{OpenFile, Workspace};

/// What was done to a file, to be undone if a later step fails.
enum Done {
    /// A file was created at this path.
    Created(PathBuf),
    /// The file at this path was replaced: its bytes before, and the bytes
    /// written.
    Replaced {
        path: PathBuf,
        old: Vec<u8>,
        new: Vec<u8>,
    },
    /// The file at this path was deleted: its bytes and mode.
    Removed {
        path: PathBuf,
        old: Vec<u8>,
        mode: u32,
    },
}

/// A step's failure, as the model reads it.
type StepFailure = String;

/// Writes the planned changes: every new and rewritten file first, each
/// atomically, then the deletions (of deleted and moved files). When a
/// step fails, the steps before it are undone, newest first, and the call
/// fails saying so. `fault` makes step N fail (tests only pass one that
/// does).
pub(crate) fn commit_all(
    files: &FileTool,
    planned: Vec<Planned>,
    token: &CancellationToken,
    fault: &dyn Fn(usize) -> Option<io::Error>,
) -> Result<ToolOutput, ToolError> {
    let mut steps = Steps {
        workspace: &files.workspace,
        token,
        fault,
        done: Vec::new(),
        stamps: Vec::new(),
        step: 0,
    };
    // Writes first, then deletions.
    let result = steps
        .write_all(&planned)
        .and_then(|()| steps.remove_all(&planned));
    if let Err(failure) = result {
        return Err(steps.roll_back(failure));
    }
    // Past the point of no return: stamps and the report.
    Ok(applied(files, &planned, &steps.stamps))
}

/// The steps of one transaction so far.
struct Steps<'a> {
    workspace: &'a Workspace,
    token: &'a CancellationToken,
    fault: &'a dyn Fn(usize) -> Option<io::Error>,
    /// What was done, to be undone if a later step fails.
    done: Vec<Done>,
    /// Every file written, with what was written, to stamp at the end.
    stamps: Vec<(PathBuf, Written, Vec<u8>)>,
    /// The number of the next step (for `fault`).
    step: usize,
}

impl Steps<'_> {
    /// Writes every created and rewritten file, in the patch's order.
    fn write_all(&mut self, planned: &[Planned]) -> Result<(), StepFailure> {
        for p in planned {
            if self.token.is_cancelled() && !matches!(p.action, Action::Remove) {
                return Err(format!("Cancelled before {} was written.", p.shown));
            }
            let (target, base, bytes) = match &p.action {
                Action::Remove => continue,
                Action::Create { bytes, .. } => (p.path.as_path(), None, bytes),
                Action::Rewrite { bytes, to, .. } => match to {
                    None => (
                        p.path.as_path(),
                        p.existing
                            .as_ref()
                            .map(|open| (open, p.old_bytes.as_slice())),
                        bytes,
                    ),
                    Some((to, _)) => (to.as_path(), None, bytes),
                },
            };
            let outcome = write_step(
                self.workspace,
                target,
                base,
                bytes,
                self.token,
                self.step,
                self.fault,
            );
            self.step += 1;
            let written = outcome.map_err(|e| format!("{}: {e}", p.title))?;
            self.done.push(match base {
                Some(_) => Done::Replaced {
                    path: target.to_path_buf(),
                    old: p.old_bytes.clone(),
                    new: bytes.clone(),
                },
                None => Done::Created(target.to_path_buf()),
            });
            self.stamps
                .push((target.to_path_buf(), written, bytes.clone()));
        }
        Ok(())
    }

    /// Deletes every deleted file and every moved file's old path.
    fn remove_all(&mut self, planned: &[Planned]) -> Result<(), StepFailure> {
        for p in planned {
            let removes = matches!(
                p.action,
                Action::Remove | Action::Rewrite { to: Some(_), .. }
            );
            let Some(open) = p.existing.as_ref().filter(|_| removes) else {
                continue;
            };
            if self.token.is_cancelled() {
                return Err(format!("Cancelled before {} was deleted.", p.shown));
            }
            let outcome = remove_step(open, self.step, self.fault);
            self.step += 1;
            outcome.map_err(|e| format!("{}: {e}", p.title))?;
            self.done.push(Done::Removed {
                path: p.path.clone(),
                old: p.old_bytes.clone(),
                mode: open.meta.mode(),
            });
        }
        Ok(())
    }

    /// Undoes the steps done after `failure`, and the call's error saying
    /// what was put back.
    fn roll_back(self, failure: StepFailure) -> ToolError {
        let not_restored = undo(self.workspace, self.done);
        // A cancellation between the writes is reported as one (the
        // outcome is Cancelled), saying what was put back.
        let was_cancelled = self.token.is_cancelled();
        let what = if was_cancelled {
            "the cancellation"
        } else {
            "this failure"
        };
        let mut message = failure;
        if not_restored.is_empty() {
            let _ = write!(
                message,
                "\nNo file was changed: the files written before {what} were put back as they were."
            );
        } else {
            let _ = write!(
                message,
                "\nThe files written before {what} were put back, except: {}. Read them to see what they hold now.",
                not_restored.join(", ")
            );
        }
        if was_cancelled {
            ToolError::cancelled(vec![Content::text(message)])
        } else {
            ToolError::new(message)
        }
    }
}

/// Once every step is done: the writes stamped in the ledger, the deleted
/// and moved files forgotten, and the report of every file.
fn applied(
    files: &FileTool,
    planned: &[Planned],
    stamps: &[(PathBuf, Written, Vec<u8>)],
) -> ToolOutput {
    let (workspace, state) = (&files.workspace, &files.state);
    let mut notes = Vec::new();
    for (path, written, bytes) in stamps {
        stamp_written(state, path, written, bytes);
        if let Some(note) = written.note() {
            notes.push(format!("{}: {note}", workspace.display(path)));
        }
    }
    for p in planned {
        if matches!(
            p.action,
            Action::Remove | Action::Rewrite { to: Some(_), .. }
        ) {
            state.forget(&p.path);
        }
    }
    let mut out = String::from("The patch was applied:");
    for p in planned {
        let _ = match &p.action {
            Action::Create { .. } => write!(out, "\nA {}", p.shown),
            Action::Remove => write!(out, "\nD {}", p.shown),
            Action::Rewrite { to: None, .. } => write!(out, "\nM {}", p.shown),
            Action::Rewrite {
                to: Some((_, to)), ..
            } => write!(out, "\nR {} -> {to}", p.shown),
        };
    }
    for note in notes {
        out.push('\n');
        out.push_str(&note);
    }
    ToolOutput::text(out)
}

/// Writes one file atomically: `bytes` over the file checked (`base`,
/// its handle and old bytes) or as a new file.
fn write_step(
    workspace: &Workspace,
    path: &Path,
    base: Option<(&OpenFile, &[u8])>,
    bytes: &[u8],
    token: &CancellationToken,
    step: usize,
    fault: &dyn Fn(usize) -> Option<io::Error>,
) -> Result<Written, String> {
    let shown = workspace.display(path);
    if let Some(e) = fault(step) {
        return Err(format!("cannot write {shown}: {e}"));
    }
    let (existing, hash) = match base {
        Some((open, old)) => (Some(open), hash_bytes(old)),
        None => (None, hash_bytes(b"")),
    };
    write_through(workspace, path, existing, hash, bytes, token).map_err(|e| match e {
        CommitError::Cancelled => format!("Cancelled before {shown} was written."),
        CommitError::Moved => StaleRead::ModifiedBeforeWrite.to_string(),
        CommitError::File(e) => e.message(&shown, "write"),
    })
}

/// Deletes the opened file, if it is still the file checked.
fn remove_step(
    open: &OpenFile,
    step: usize,
    fault: &dyn Fn(usize) -> Option<io::Error>,
) -> Result<(), String> {
    if let Some(e) = fault(step) {
        return Err(format!("cannot delete it: {e}"));
    }
    match beneath::stat_at(open.dir.as_fd(), &open.name) {
        Ok(Some(st)) => {
            // The stat fields' widths differ between architectures.
            #[allow(clippy::unnecessary_cast)]
            let same = (st.st_dev as u64, st.st_ino as u64) == (open.meta.dev(), open.meta.ino());
            if !same {
                return Err(StaleRead::ModifiedBeforeWrite.to_string());
            }
        }
        Ok(None) => return Err(StaleRead::ModifiedBeforeWrite.to_string()),
        Err(e) => return Err(format!("cannot delete it: {}", e.message("it", "delete"))),
    }
    unlinkat(&open.dir, open.name.as_os_str(), AtFlags::empty())
        .map_err(|e| format!("cannot delete it: {}", io::Error::from(e)))
}

/// Undoes `done`, newest first; returns the paths (as shown) that could
/// not be put back.
fn undo(workspace: &Workspace, done: Vec<Done>) -> Vec<String> {
    let mut failed = Vec::new();
    let token = CancellationToken::new();
    for step in done.into_iter().rev() {
        let (path, ok) = match step {
            Done::Created(path) => {
                let ok = workspace
                    .open_parent(&path)
                    .ok()
                    .and_then(|(dir, name)| unlinkat(&dir, name.as_os_str(), AtFlags::empty()).ok())
                    .is_some();
                (path, ok)
            }
            Done::Replaced { path, old, new } => {
                let ok = workspace.open_file(&path).ok().is_some_and(|open| {
                    write_through(
                        workspace,
                        &path,
                        Some(&open),
                        hash_bytes(&new),
                        &old,
                        &token,
                    )
                    .is_ok()
                });
                (path, ok)
            }
            Done::Removed { path, old, mode } => {
                let ok =
                    write_through(workspace, &path, None, hash_bytes(b""), &old, &token).is_ok();
                if ok && let Ok(open) = workspace.open_file(&path) {
                    use std::os::unix::fs::PermissionsExt;
                    let _ = open
                        .file
                        .set_permissions(std::fs::Permissions::from_mode(mode & 0o7777));
                }
                (path, ok)
            }
        };
        // The ledger's stamps still describe the old bytes, which are
        // back (and no stamp was made for the steps undone).
        if !ok {
            failed.push(workspace.display(&path));
        }
    }
    failed
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    use super::*;
    use crate::tools::apply_patch::parse::parse;
    use crate::tools::apply_patch::plan::{Refusal, Stage, plan};

    /// A workspace whose files are all stamped as read.
    fn workspace(files: &[(&str, &str)]) -> (tempfile::TempDir, FileTool) {
        let dir = tempfile::tempdir().unwrap();
        let tool = FileTool {
            workspace: Workspace::new(dir.path()).unwrap(),
            state: Default::default(),
        };
        for (name, text) in files {
            fs::write(dir.path().join(name), text).unwrap();
            let path = tool.workspace.resolve(name).unwrap();
            tool.state
                .record_after_write(&path, text.as_bytes())
                .unwrap();
        }
        (dir, tool)
    }

    fn run(files: &FileTool, body: &str, fail_at: usize) -> Result<ToolOutput, ToolError> {
        let patch = parse(&format!("*** Begin Patch\n{body}*** End Patch")).unwrap();
        let planned = plan(files, &patch, Stage::Execute).map_err(Refusal::into_error)?;
        let fault =
            move |step: usize| (step == fail_at).then(|| io::Error::other("injected failure"));
        commit_all(files, planned, &CancellationToken::new(), &fault)
    }

    fn text_of(e: &ToolError) -> String {
        e.content
            .iter()
            .filter_map(|c| c.as_text())
            .collect::<Vec<_>>()
            .join("\n")
    }

    const BODY: &str = "*** Update File: a.txt\n@@\n-a\n+A\n*** Add File: new/n.txt\n+n\n*** Delete File: gone.txt\n*** Update File: c.txt\n*** Move to: d.txt\n@@\n-c\n+C\n";

    #[test]
    fn a_failed_write_midway_puts_back_every_file_already_written() {
        // Steps: write a.txt (0), new/n.txt (1), d.txt (2); delete
        // gone.txt (3), c.txt (4).
        for fail_at in 0..=4 {
            let files = [("a.txt", "a\n"), ("gone.txt", "keep\n"), ("c.txt", "c\n")];
            let (dir, tool) = workspace(&files);
            let err = run(&tool, BODY, fail_at).unwrap_err();
            let message = text_of(&err);
            assert!(message.contains("injected failure"), "{fail_at}: {message}");
            assert!(
                message.ends_with("No file was changed: the files written before this failure were put back as they were."),
                "{fail_at}: {message}"
            );
            for (name, text) in files {
                assert_eq!(
                    fs::read_to_string(dir.path().join(name)).unwrap(),
                    text,
                    "{fail_at}"
                );
            }
            assert!(!dir.path().join("new/n.txt").exists(), "{fail_at}");
            assert!(!dir.path().join("d.txt").exists(), "{fail_at}");
            // The stamps still describe the files: the patch can be tried again.
            run(&tool, BODY, usize::MAX).unwrap();
            assert_eq!(fs::read_to_string(dir.path().join("a.txt")).unwrap(), "A\n");
            assert_eq!(fs::read_to_string(dir.path().join("d.txt")).unwrap(), "C\n");
            assert!(!dir.path().join("gone.txt").exists());
            assert!(!dir.path().join("c.txt").exists());
        }
    }

    #[test]
    fn a_cancellation_between_the_writes_is_reported_as_cancelled_with_what_was_put_back() {
        // Steps: write a.txt (0), new/n.txt (1), d.txt (2); delete
        // gone.txt (3), c.txt (4). The call is cancelled right after step
        // `at` began; cancelled during the last step, the call is past its
        // point of no return and succeeds.
        for at in 0..=4 {
            let files = [("a.txt", "a\n"), ("gone.txt", "keep\n"), ("c.txt", "c\n")];
            let (dir, tool) = workspace(&files);
            let patch = parse(&format!("*** Begin Patch\n{BODY}*** End Patch")).unwrap();
            let planned = plan(&tool, &patch, Stage::Execute).map_err(Refusal::into_error);
            let token = CancellationToken::new();
            let canceller = token.clone();
            let fault = move |step: usize| {
                if step == at {
                    canceller.cancel();
                }
                None
            };
            let outcome = commit_all(&tool, planned.unwrap(), &token, &fault);
            if at == 4 {
                assert!(
                    outcome.is_ok(),
                    "{}",
                    outcome.map_err(|e| text_of(&e)).unwrap_err()
                );
                continue;
            }
            let err = outcome.unwrap_err();
            let message = text_of(&err);
            assert!(err.cancelled, "{at}: {message}");
            assert!(message.contains("Cancelled before"), "{at}: {message}");
            assert!(
                message.ends_with("No file was changed: the files written before the cancellation were put back as they were."),
                "{at}: {message}"
            );
            for (name, text) in files {
                assert_eq!(
                    fs::read_to_string(dir.path().join(name)).unwrap(),
                    text,
                    "{at}"
                );
            }
            assert!(!dir.path().join("new/n.txt").exists(), "{at}");
            assert!(!dir.path().join("d.txt").exists(), "{at}");
        }
    }

    #[test]
    fn a_deleted_file_is_put_back_with_its_mode() {
        let (dir, tool) = workspace(&[("x.txt", "x\n"), ("y.txt", "y\n")]);
        fs::set_permissions(dir.path().join("x.txt"), fs::Permissions::from_mode(0o640)).unwrap();
        let err = run(&tool, "*** Delete File: x.txt\n*** Delete File: y.txt\n", 1).unwrap_err();
        assert!(text_of(&err).starts_with("Delete File y.txt: cannot delete it: injected failure"));
        let meta = fs::metadata(dir.path().join("x.txt")).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o640);
        assert_eq!(fs::read(dir.path().join("x.txt")).unwrap(), b"x\n");
    }
}
