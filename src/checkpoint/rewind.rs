//! Rewinding: every path the checkpoints from one on touched, put back to
//! what it held before the first of them, unless something not recorded
//! changed it since.

use std::io;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Mode};
use serde::Serialize;

use super::record::Scope;
use super::state::{State, now_ns, replace_file, replace_symlink, temp_name};
use super::store::{Change, Record};
use super::{Checkpoint, CheckpointError, Checkpoints};
use crate::fs::beneath::{open_dir, open_root};

/// Where a rewind goes: to the state before this.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RewindTo {
    /// Checkpoint number N (undoing it and every later one).
    Checkpoint(u64),
    /// The call with this id (its checkpoint and every later one; a call
    /// that changed nothing: the first checkpoint after it).
    Call(String),
    /// The first checkpoint of user turn T (from 1).
    Turn(u64),
}

/// What a rewind does about conflicts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RewindMode {
    /// With any conflict, change nothing and list them.
    #[default]
    Safe,
    /// Leave conflicting paths as they are; rewind the rest.
    Skip,
    /// Rewind conflicting paths too, overwriting what changed them.
    Force,
}

/// A path changed since the checkpoint by something agentcore did not
/// record (the user's editor, a process outside the session).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Conflict {
    /// The path.
    pub path: PathBuf,
    /// What the last checkpoint touching it left there.
    pub expected: State,
    /// What is there now.
    pub found: State,
}

/// What a rewind did, exactly.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RewindReport {
    /// The first checkpoint undone.
    pub to: u64,
    /// The rewind's own checkpoint (to undo the rewind), when it changed
    /// anything.
    pub checkpoint: Option<u64>,
    /// Paths written back (files, links and folders re-created or
    /// restored).
    pub restored: Vec<PathBuf>,
    /// Paths removed (made by the calls undone).
    pub removed: Vec<PathBuf>,
    /// Paths changed since by something not recorded.
    pub conflicts: Vec<Conflict>,
    /// Whether anything was written: false when conflicts stopped a safe
    /// rewind.
    pub applied: bool,
    /// What the rewind did about conflicts.
    pub mode: RewindMode,
    /// Paths that could not be put back, and why (prior bytes not kept, a
    /// folder holding files not recorded, a link where a folder was).
    pub not_restored: Vec<(PathBuf, String)>,
}

impl RewindReport {
    /// The report in words, one line each.
    pub fn describe(&self, root: &Path) -> Vec<String> {
        let shown = |p: &Path| {
            p.strip_prefix(root)
                .map_or_else(|_| p.display().to_string(), |r| r.display().to_string())
        };
        let mut lines = Vec::new();
        if !self.applied {
            lines.push(format!(
                "Nothing was changed: {} path(s) changed since checkpoint #{} by something agentcore did not record. Rewind again with skip to leave them, or force to overwrite them.",
                self.conflicts.len(),
                self.to
            ));
        } else if self.restored.is_empty() && self.removed.is_empty() {
            lines.push(format!(
                "Nothing to rewind: the files are as they were before checkpoint #{}.",
                self.to
            ));
        } else {
            lines.push(format!(
                "Rewound to before checkpoint #{}: {} restored, {} removed{}.",
                self.to,
                self.restored.len(),
                self.removed.len(),
                self.checkpoint
                    .map(|id| format!(" (undo this with a rewind to #{id})"))
                    .unwrap_or_default()
            ));
        }
        lines.extend(
            self.restored
                .iter()
                .map(|p| format!("restored {}", shown(p))),
        );
        lines.extend(self.removed.iter().map(|p| format!("removed {}", shown(p))));
        for c in &self.conflicts {
            lines.push(format!(
                "conflict {}: changed since by something not recorded ({})",
                shown(&c.path),
                if !self.applied {
                    "kept"
                } else if self.restored.contains(&c.path) || self.removed.contains(&c.path) {
                    "overwritten"
                } else {
                    "left as it is"
                }
            ));
        }
        for (p, why) in &self.not_restored {
            lines.push(format!("not restored {}: {why}", shown(p)));
        }
        lines
    }
}

/// One path's part in a rewind.
struct Step {
    path: PathBuf,
    now: State,
    to: State,
}

impl Checkpoints {
    /// The first kept checkpoint a rewind to `to` would undo now, or why
    /// there is none (a target that matches no kept checkpoint, or one
    /// dropped to keep the store under its size), without looking at the
    /// roots: what a caller checks before asking anyone to approve a
    /// rewind.
    pub fn first_undone(&self, to: &RewindTo) -> Result<u64, CheckpointError> {
        self.start_of(to)
    }

    /// The first kept checkpoint a rewind to `to` undoes.
    pub(super) fn start_of(&self, to: &RewindTo) -> Result<u64, CheckpointError> {
        let rec = self.lock();
        let first = |pred: &dyn Fn(&Checkpoint) -> bool| {
            rec.kept.iter().find(|cp| pred(cp)).map(|cp| cp.id)
        };
        let dropped = rec.dropped_through.unwrap_or(0);
        let found = match to {
            RewindTo::Checkpoint(n) => {
                if *n <= dropped {
                    return Err(CheckpointError::NoSuchCheckpoint(format!(
                        "checkpoint #{n} was dropped to keep the store under its size (checkpoints up to #{dropped} are gone)"
                    )));
                }
                first(&|cp| cp.id >= *n)
            }
            RewindTo::Call(call) => match rec.begun.get(call) {
                Some(id) => first(&|cp| cp.id >= *id),
                None => rec
                    .kept
                    .iter()
                    .find(|cp| &cp.call_id == call)
                    .map(|cp| cp.id),
            },
            RewindTo::Turn(t) => first(&|cp| cp.turn >= *t),
        };
        found.ok_or_else(|| {
            CheckpointError::NoSuchCheckpoint(match to {
                RewindTo::Checkpoint(n) => format!("no checkpoint #{n} or later"),
                RewindTo::Call(c) => format!("no checkpoint of call {c} or later"),
                RewindTo::Turn(t) => format!("no checkpoint in turn {t} or later"),
            })
        })
    }

    /// Puts the roots back to what they held before `to`, as `mode` says
    /// about conflicts; see the module's documentation.
    pub fn rewind(&self, to: RewindTo, mode: RewindMode) -> Result<RewindReport, CheckpointError> {
        // What jobs changed until now is theirs, recorded before planning.
        self.refresh()?;
        let start = self.start_of(&to)?;
        let mut rec = self.lock();
        // A background job still writing makes what a path holds differ
        // from what the last checkpoint left without being a conflict: its
        // changes are recorded as its own and the rewind is planned again.
        let mut tries = 0;
        let (mut report, steps) = loop {
            let mut report = RewindReport {
                to: start,
                mode,
                ..RewindReport::default()
            };
            // Per path: what it held before the first checkpoint undone, and
            // what the last one left.
            let mut order: Vec<PathBuf> = Vec::new();
            let mut first: std::collections::HashMap<PathBuf, (State, State)> = Default::default();
            for cp in rec.kept.iter().filter(|cp| cp.id >= start) {
                for c in &cp.changes {
                    match first.get_mut(&c.path) {
                        Some(entry) => entry.1 = c.after.clone(),
                        None => {
                            order.push(c.path.clone());
                            first.insert(c.path.clone(), (c.before.clone(), c.after.clone()));
                        }
                    }
                }
            }
            let looker = self.looker();
            let mut steps = Vec::new();
            for path in order {
                let (to_state, expected) = first.remove(&path).expect("planned");
                if looker.split(&path).is_none() {
                    report
                        .not_restored
                        .push((path, "outside the roots this session records".to_owned()));
                    continue;
                }
                if self.inner.workspace.is_read_denied(&path) {
                    report
                        .not_restored
                        .push((path, "a read-deny rule covers it".to_owned()));
                    continue;
                }
                let now = match looker.capture_path(&path) {
                    Ok(Some(known)) => known.state,
                    Ok(None) => {
                        report.not_restored.push((
                            path,
                            "it now holds a kind of file checkpoints do not record".to_owned(),
                        ));
                        continue;
                    }
                    // A folder on the way is a link or not a folder: nothing
                    // is at this path through real folders (applying it fails
                    // unless the plan puts the folder back first).
                    Err(_) => State::Absent,
                };
                if now.matches(&to_state) && now == to_state {
                    continue;
                }
                if !now.matches(&expected) {
                    report.conflicts.push(Conflict {
                        path: path.clone(),
                        expected,
                        found: now.clone(),
                    });
                    if mode != RewindMode::Force {
                        continue;
                    }
                }
                if !to_state.restorable() {
                    report.not_restored.push((
                        path,
                        "its prior bytes were over the size limit and were not kept".to_owned(),
                    ));
                    continue;
                }
                steps.push(Step {
                    path,
                    now,
                    to: to_state,
                });
            }
            tries += 1;
            if report.conflicts.is_empty() || tries >= 3 || !self.jobs_may_write(&rec) {
                break (report, steps);
            }
            self.settle(&mut rec, &Scope::All)?;
        };
        if !report.conflicts.is_empty() && mode == RewindMode::Safe {
            return Ok(report);
        }
        report.applied = true;
        if steps.is_empty() {
            return Ok(report);
        }
        let id = rec.next_id;
        rec.next_id += 1;
        let plan: Vec<Change> = steps
            .iter()
            .map(|s| Change {
                path: s.path.clone(),
                before: s.now.clone(),
                after: s.to.clone(),
            })
            .collect();
        self.append(
            &mut rec,
            Record::RewindBegin {
                id,
                plan: plan.clone(),
            },
        )?;
        drop(rec);
        let done = self.apply_plan(id, &plan, &mut report);
        let cp = self.record_rewind(id, format!("rewind to before #{start}"), done)?;
        report.checkpoint = cp;
        Ok(report)
    }

    /// Writes a plan: removals deepest first, then folders shallowest
    /// first, then files and links. Returns the steps done.
    fn apply_plan(&self, id: u64, plan: &[Change], report: &mut RewindReport) -> Vec<PathBuf> {
        let depth = |p: &Path| p.components().count();
        let mut removals: Vec<&Change> = plan.iter().filter(|c| c.after == State::Absent).collect();
        removals.sort_by_key(|c| std::cmp::Reverse(depth(&c.path)));
        let mut dirs: Vec<&Change> = plan
            .iter()
            .filter(|c| matches!(c.after, State::Dir { .. }))
            .collect();
        dirs.sort_by_key(|c| depth(&c.path));
        let files = plan
            .iter()
            .filter(|c| matches!(c.after, State::File { .. } | State::Symlink { .. }));
        let mut done = Vec::new();
        for change in removals.into_iter().chain(dirs).chain(files) {
            match self.apply_one(id, change) {
                Ok(()) => {
                    if change.after == State::Absent {
                        report.removed.push(change.path.clone());
                    } else {
                        report.restored.push(change.path.clone());
                    }
                    done.push(change.path.clone());
                }
                Err(why) => report.not_restored.push((change.path.clone(), why)),
            }
        }
        let ledger = self.inner.ledger.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(ledger) = ledger.as_ref() {
            for path in &done {
                ledger.forget(path);
            }
        }
        done
    }

    /// Puts one path back, through folder handles opened beneath its root
    /// without following links.
    fn apply_one(&self, id: u64, change: &Change) -> Result<(), String> {
        let looker = self.looker();
        let (root, rel) = looker
            .split(&change.path)
            .ok_or_else(|| "outside the roots".to_owned())?;
        let (Some(parent), Some(name)) = (rel.parent(), rel.file_name()) else {
            return Err("a root itself is not rewound".to_owned());
        };
        let root_fd = open_root(root).map_err(|e| e.to_string())?;
        let dir = open_dir(root_fd.as_fd(), parent)
            .map_err(|e| e.message(&parent.display().to_string(), "open the folder"))?;
        let dir = dir.as_fd();
        // What the plan was made from must still be there: a background
        // job or another process that wrote since is not overwritten.
        match super::state::capture(
            dir,
            name,
            &self.inner.store.objects,
            self.inner.config.max_file_bytes,
        ) {
            Ok(Some(now)) if now.state.matches(&change.before) => {}
            Ok(_) => {
                return Err(
                    "it changed while the rewind ran (a background job or another process wrote it), so it was left as it is"
                        .to_owned(),
                );
            }
            Err(e) => return Err(format!("it cannot be looked at: {e}")),
        }
        let current = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).ok();
        let is_dir = current
            .as_ref()
            .is_some_and(|s| rustix::fs::FileType::from_raw_mode(s.st_mode).is_dir());
        let remove = |what: &str| -> Result<(), String> {
            if current.is_none() {
                return Ok(());
            }
            let flags = if is_dir {
                AtFlags::REMOVEDIR
            } else {
                AtFlags::empty()
            };
            rustix::fs::unlinkat(dir, name, flags).map_err(|e| match e {
                rustix::io::Errno::NOTEMPTY | rustix::io::Errno::EXIST => format!(
                    "the folder there holds files checkpoints do not record (ignored or excluded), so it was kept{what}"
                ),
                e => io::Error::from(e).to_string(),
            })
        };
        match &change.after {
            State::Absent => remove(""),
            State::Dir { mode } => {
                if !is_dir {
                    remove("")?;
                    rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o700))
                        .map_err(|e| io::Error::from(e).to_string())?;
                }
                rustix::fs::chmodat(dir, name, Mode::from_raw_mode(*mode), AtFlags::empty())
                    .map_err(|e| io::Error::from(e).to_string())
            }
            State::File { hash, mode, .. } => {
                let hash = hash.as_deref().ok_or("its prior bytes were not kept")?;
                let mut source = self
                    .inner
                    .store
                    .objects
                    .read(hash)
                    .map_err(|e| format!("its kept version cannot be read: {e}"))?;
                if is_dir {
                    remove(", and the file could not be put back in its place")?;
                }
                replace_file(dir, name, &mut source, *mode, id).map_err(|e| e.to_string())
            }
            State::Symlink { target } => {
                if is_dir {
                    remove(", and the link could not be put back in its place")?;
                }
                replace_symlink(dir, name, target, id).map_err(|e| e.to_string())
            }
        }
    }

    /// Removes the temporary file or link rewind `id` may have left beside
    /// `path` when a crash cut it off between writing and renaming
    /// (beneath the root, not following links; nothing else is touched).
    fn remove_leftover(&self, id: u64, path: &Path) {
        let looker = self.looker();
        let Some((root, rel)) = looker.split(path) else {
            return;
        };
        let (Some(parent), Some(name)) = (rel.parent(), rel.file_name()) else {
            return;
        };
        let Ok(root_fd) = open_root(root) else {
            return;
        };
        if let Ok(dir) = open_dir(root_fd.as_fd(), parent) {
            let _ = rustix::fs::unlinkat(
                dir.as_fd(),
                temp_name(name, id).as_os_str(),
                AtFlags::empty(),
            );
        }
    }

    /// Records the rewind's checkpoint: what each path done held before it
    /// and holds now (so the rewind can be undone).
    fn record_rewind(
        &self,
        id: u64,
        label: String,
        done: Vec<PathBuf>,
    ) -> Result<Option<u64>, CheckpointError> {
        let mut rec = self.lock();
        let (mut changes, notes) = self
            .looker()
            .changes(&mut rec.index, &Scope::Paths(done.clone()));
        changes.retain(|c| done.contains(&c.path));
        let cp = Checkpoint {
            id,
            call_id: format!("rewind-{id}"),
            tool: "rewind".to_owned(),
            label,
            turn: rec.turn,
            at_ms: (now_ns() / 1_000_000) as u64,
            changes,
            notes,
        };
        self.append(&mut rec, Record::Checkpoint(cp.clone()))?;
        let has_changes = !cp.changes.is_empty();
        rec.kept.push(cp);
        Ok(has_changes.then_some(id))
    }

    /// Finishes a rewind a crash stopped: each planned path that still
    /// holds what it held before the rewind is written; one that holds the
    /// target already is done; one that holds something else is left.
    pub(super) fn finish_rewind(&self, id: u64, plan: Vec<Change>) -> Result<(), CheckpointError> {
        let looker = self.looker();
        let mut todo = Vec::new();
        let mut report = RewindReport::default();
        let mut already = Vec::new();
        for change in &plan {
            self.remove_leftover(id, &change.path);
        }
        for change in plan {
            match looker.capture_path(&change.path) {
                Ok(Some(now)) if now.state.matches(&change.after) => already.push(change.path),
                Ok(Some(now)) if now.state.matches(&change.before) => todo.push(change),
                _ => {}
            }
        }
        // The index learns the states before the rewind from the plan (the
        // saved index may be older), so the checkpoint says what changed.
        {
            let mut rec = self.lock();
            for change in todo.iter() {
                rec.index.insert(
                    change.path.clone(),
                    super::state::Known {
                        state: change.before.clone(),
                        key: super::state::StatKey::absent(),
                        racy: true,
                    },
                );
            }
        }
        let mut done = self.apply_plan(id, &todo, &mut report);
        done.extend(already);
        self.record_rewind(id, "rewind (finished after a crash)".to_owned(), done)?;
        Ok(())
    }
}
