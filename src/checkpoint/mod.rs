//! Checkpoints of every change a session's calls make, and a rewind that
//! never clobbers a change no call made.
//!
//! Before a call that can write runs, the recorder brings its index of the
//! writable roots up to date; after, it looks again and records what the
//! call changed as a [`Checkpoint`]: each path with what it held before and
//! after (a file's bytes kept in the store by their BLAKE3). A file tool's
//! look covers exactly the files it touches (and folders it made); a
//! command's (bash, a job's start, an MCP tool that is not read-only)
//! covers the roots, compared with the index by `lstat` key, so only files
//! whose key changed are read, the way git's index avoids rehashing; which
//! paths to compare is said by an inotify change feed (feed.rs), or, when
//! it cannot say (the first look, lost events), by a walk of the roots.
//! Changes found before a call, when a background job runs, are recorded
//! as that job's; with no job running they are someone else's (the user's
//! editor): the index learns them, no checkpoint claims them.
//!
//! What is not recorded is said: paths the ignore files cover (`target/`,
//! `node_modules/`), VCS folders, paths the policy's `exclude` globs or a
//! read-deny rule cover; files over `max_file_bytes` are recorded by size
//! and mode only, and a rewind says it cannot put them back.
//!
//! A rewind to before checkpoint N puts every path the checkpoints from N
//! on touched back to what it held before the first of them, after
//! checking that each still holds what the last of them left: a path
//! changed since by something not recorded is a conflict, and a rewind
//! with conflicts changes nothing unless told to skip or force them. Each
//! file is replaced whole (a temporary file renamed over it), through
//! folder handles opened beneath the root without following links. The
//! rewind is recorded as a checkpoint of its own, so it can be undone.
//!
//! The store (`store.rs`) outlives the session, under the user's state
//! directory, outside every root commands may write, hidden from them by
//! the sandbox; `agentcore checkpoints` works on it after the session
//! ended.

use std::collections::{HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};

use crate::fs::workspace::Workspace;

mod diff;
mod feed;
mod layer;
mod record;
mod rewind;
mod state;
mod store;

pub use diff::{DIFF_MAX_BYTES, PathDiff, RewindDiff};
pub use layer::{CheckpointLayer, CheckpointService, RecordsItself};
use record::{Index, Looker, Scope};
pub use rewind::{Conflict, RewindMode, RewindReport, RewindTo};
pub use state::State;
use state::{Known, now_ns};
pub use store::{Change, StoreError};
use store::{Meta, Record, SavedIndex, Store};

/// The default bound of a store: the oldest checkpoints are dropped past it.
pub const DEFAULT_MAX_STORE_BYTES: u64 = 2 << 30;
/// Files over this are recorded by size and mode only.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 16 << 20;

/// How a session keeps checkpoints (`[checkpoints]` in a policy).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CheckpointConfig {
    /// Whether calls are recorded at all.
    pub enabled: bool,
    /// The store's folder; by default
    /// `$XDG_STATE_HOME/agentcore/checkpoints/NAME-HASH` (or
    /// `~/.local/state/…`) for the workspace root.
    pub store: Option<PathBuf>,
    /// The store's size at most; the oldest checkpoints go first.
    pub max_store_bytes: u64,
    /// Files larger than this are recorded by size and mode only.
    pub max_file_bytes: u64,
    /// Globs (relative to a root) never recorded, besides what the ignore
    /// files cover.
    pub exclude: Vec<String>,
}

impl Default for CheckpointConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            store: None,
            max_store_bytes: DEFAULT_MAX_STORE_BYTES,
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            exclude: Vec::new(),
        }
    }
}

impl CheckpointConfig {
    /// Recording off.
    pub fn off() -> Self {
        Self {
            enabled: false,
            ..Self::default()
        }
    }

    /// The store's folder for the workspace `root`.
    pub fn store_dir(&self, root: &Path) -> Result<PathBuf, StoreError> {
        if let Some(dir) = &self.store {
            return Ok(dir.clone());
        }
        let base = match std::env::var_os("XDG_STATE_HOME").filter(|v| !v.is_empty()) {
            Some(dir) if Path::new(&dir).is_absolute() => PathBuf::from(dir),
            _ => PathBuf::from(
                std::env::var_os("HOME")
                    .filter(|v| !v.is_empty())
                    .ok_or(StoreError::NoStateDir)?,
            )
            .join(".local/state"),
        };
        let name: String = root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            .take(40)
            .collect();
        let hash = blake3::hash(root.as_os_str().as_encoded_bytes()).to_hex();
        Ok(base
            .join("agentcore/checkpoints")
            .join(format!("{name}-{}", &hash[..16])))
    }

    /// The roots the store of workspace `root` recorded the last time a
    /// session opened it (the workspace root first, then the policy's
    /// other writable roots), as its `meta.json` says; `None` when there
    /// is no such store or it belongs to another root. A store opened
    /// after its session ended opens these, so a rewind reaches every
    /// path the session recorded.
    pub fn recorded_roots(&self, root: &Path) -> Option<Vec<PathBuf>> {
        let dir = self.store_dir(root).ok()?;
        let bytes = std::fs::read(dir.join("meta.json")).ok()?;
        let meta: Meta = serde_json::from_slice(&bytes).ok()?;
        (meta.root == root && meta.roots.first().is_some_and(|r| r == root)).then_some(meta.roots)
    }
}

/// One checkpoint: what one call (or a background job, or a rewind)
/// changed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// Its number in the store, rising.
    pub id: u64,
    /// The call's id (`job-N` for a job's later changes, `rewind-N` for a
    /// rewind).
    pub call_id: String,
    /// The tool (`bash`, `edit`, …; `rewind`).
    pub tool: String,
    /// A short line: the command, the file, the rewind's target.
    pub label: String,
    /// The session's turn (user prompt) it belongs to, from 1.
    pub turn: u64,
    /// When it was recorded, milliseconds since the epoch.
    pub at_ms: u64,
    /// What changed, by path.
    pub changes: Vec<Change>,
    /// What else is worth knowing (recovered after a crash, paths that
    /// could not be looked at).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Checkpoint {
    /// The changes in words, one a line: `created PATH`, `modified PATH`,
    /// `deleted PATH`, `renamed OLD -> NEW`, `mode of PATH 644 -> 755`,
    /// with ` (not restorable: over the size limit)` where its prior bytes
    /// were not kept.
    pub fn describe(&self, root: &Path) -> Vec<String> {
        describe_changes(&self.changes, root)
    }
}

/// The changes in words (see [`Checkpoint::describe`]).
pub fn describe_changes(changes: &[Change], root: &Path) -> Vec<String> {
    let shown = |p: &Path| {
        p.strip_prefix(root)
            .map_or_else(|_| p.display().to_string(), |r| r.display().to_string())
    };
    // A deleted file and a created one with the same bytes: a rename.
    let mut renamed_to: HashMap<usize, usize> = HashMap::new();
    let mut taken = HashSet::new();
    for (i, c) in changes.iter().enumerate() {
        if let (State::File { hash: Some(h), .. }, State::Absent) = (&c.before, &c.after)
            && let Some(j) = (0..changes.len()).find(|&j| {
                !taken.contains(&j)
                    && changes[j].before == State::Absent
                    && matches!(&changes[j].after, State::File { hash: Some(g), .. } if g == h)
            })
        {
            taken.insert(j);
            renamed_to.insert(i, j);
        }
    }
    let mut lines = Vec::new();
    for (i, c) in changes.iter().enumerate() {
        if taken.contains(&i) {
            continue;
        }
        let path = shown(&c.path);
        let mut line = match (&c.before, &c.after) {
            _ if renamed_to.contains_key(&i) => {
                format!("renamed {path} -> {}", shown(&changes[renamed_to[&i]].path))
            }
            (State::Absent, State::Dir { .. }) => format!("created folder {path}"),
            (State::Absent, _) => format!("created {path}"),
            (State::Dir { .. }, State::Absent) => format!("deleted folder {path}"),
            (_, State::Absent) => format!("deleted {path}"),
            (
                State::File {
                    hash: a, mode: ma, ..
                },
                State::File {
                    hash: b, mode: mb, ..
                },
            ) if a == b && ma != mb => {
                format!("mode of {path} {ma:o} -> {mb:o}")
            }
            (State::Dir { mode: ma }, State::Dir { mode: mb }) => {
                format!("mode of folder {path} {ma:o} -> {mb:o}")
            }
            _ => format!("modified {path}"),
        };
        if !c.before.restorable() {
            line.push_str(" (not restorable: its prior bytes were over the size limit)");
        }
        lines.push(line);
    }
    lines
}

/// The checkpoints of a store, oldest first, and what the store holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Listing {
    /// The checkpoints kept.
    pub checkpoints: Vec<Checkpoint>,
    /// Checkpoints up to this number were dropped to keep the store under
    /// its size.
    pub dropped_through: Option<u64>,
    /// The store's folder.
    pub store: PathBuf,
    /// Bytes the store's kept versions take.
    pub store_bytes: u64,
    /// The bound of that.
    pub max_store_bytes: u64,
    /// What is not recorded, in words.
    pub excluded: Vec<String>,
}

impl Listing {
    /// The listing in words, one a line, paths relative to `root`: what
    /// `agentcore checkpoints ls` prints and the `checkpoints` tool
    /// returns. Each checkpoint as `#ID  turn T  TOOL  LABEL  (call ID)`
    /// with its changes ([`Checkpoint::describe`]) and notes indented
    /// below; then the store, its size and bound, how far old checkpoints
    /// were dropped, and what is not recorded.
    pub fn describe(&self, root: &Path) -> Vec<String> {
        let mut lines = Vec::new();
        if self.checkpoints.is_empty() {
            lines.push(format!("No checkpoints for {}.", root.display()));
        }
        for cp in &self.checkpoints {
            lines.push(format!(
                "#{}  turn {}  {}  {}  (call {})",
                cp.id, cp.turn, cp.tool, cp.label, cp.call_id
            ));
            lines.extend(cp.describe(root).into_iter().map(|l| format!("    {l}")));
            lines.extend(cp.notes.iter().map(|n| format!("    ({n})")));
        }
        lines.push(String::new());
        lines.push(format!(
            "store: {} ({} of {})",
            self.store.display(),
            bytes_in_words(self.store_bytes),
            bytes_in_words(self.max_store_bytes)
        ));
        if let Some(through) = self.dropped_through {
            lines.push(format!(
                "checkpoints up to #{through} were dropped to keep the store under {}",
                bytes_in_words(self.max_store_bytes)
            ));
        }
        lines.push(format!("not recorded: {}", self.excluded.join("; ")));
        lines
    }
}

/// A session's recorder: cloned handles share one store.
#[derive(Clone, Debug)]
pub struct Checkpoints {
    inner: Arc<Inner>,
}

struct Inner {
    store: Store,
    workspace: Workspace,
    roots: Vec<PathBuf>,
    exclude: GlobSet,
    config: CheckpointConfig,
    state: Mutex<Recorder>,
    /// The change feed that spares a command's look a walk of the roots.
    feed: Mutex<feed::Tracker>,
    /// The background jobs running now (`job-N`, command), for changes
    /// found between calls.
    jobs: Mutex<Option<RunningJobs>>,
    /// The read-before-write ledger: a restored file must be read again
    /// before the next edit.
    ledger: Mutex<Option<crate::fs::read_state::FileReadState>>,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checkpoints")
            .field("store", &self.store.dir)
            .field("roots", &self.roots)
            .finish_non_exhaustive()
    }
}

/// A background job of the session as the recorder sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobSeen {
    /// Its id (`job-N`).
    pub id: String,
    /// Its command.
    pub command: String,
    /// Whether it runs now (false: it ended).
    pub running: bool,
}

/// The session's background jobs, running and ended: changes found between
/// calls are theirs while one runs, or ended since the last whole look.
pub type RunningJobs = Arc<dyn Fn() -> Vec<JobSeen> + Send + Sync>;

struct Recorder {
    index: Index,
    /// Checkpoints kept, oldest first.
    kept: Vec<Checkpoint>,
    /// The log's records so far.
    records: usize,
    next_id: u64,
    dropped_through: Option<u64>,
    turn: u64,
    /// Call id → the number its begin took (a call that changed nothing
    /// has no checkpoint; a rewind to it goes to the next one).
    begun: HashMap<String, u64>,
    /// Ended jobs a whole look of the roots has seen ended: what they
    /// wrote is recorded, and later changes are not theirs.
    jobs_done: HashSet<String>,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("paths", &self.index.len())
            .field("kept", &self.kept.len())
            .finish_non_exhaustive()
    }
}

/// A call being recorded: given by [`Checkpoints::begin`], ended by
/// [`Checkpoints::end`].
#[derive(Debug)]
pub struct Recording {
    id: u64,
    call_id: String,
    tool: String,
    label: String,
    scope: Scope,
}

/// Why checkpoints are off or an operation failed.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// The store.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An `exclude` glob that does not parse.
    #[error("[checkpoints] exclude: {0}")]
    Glob(#[from] globset::Error),
    /// No checkpoint matches a rewind's target.
    #[error("{0}")]
    NoSuchCheckpoint(String),
    /// The file system.
    #[error("checkpoints: {0}")]
    Io(#[from] io::Error),
}

impl Checkpoints {
    /// Opens the store of `workspace` (its root first in `roots`, the
    /// roots commands may write), recovering from a crash (a rewind that
    /// stopped halfway is finished; what a call that was running changed
    /// is recorded as its checkpoint), and brings the index up to date
    /// with the roots as they are (reading only files whose `lstat` key
    /// changed since the last session).
    pub fn open(
        config: &CheckpointConfig,
        workspace: &Workspace,
        roots: Vec<PathBuf>,
    ) -> Result<Self, CheckpointError> {
        let root = workspace.root().to_path_buf();
        let dir = config.store_dir(&root)?;
        let dir = absolute(&dir);
        for r in &roots {
            if dir.starts_with(r) {
                return Err(StoreError::InsideRoot {
                    store: dir,
                    root: r.clone(),
                }
                .into());
            }
        }
        let mut globs = GlobSetBuilder::new();
        for glob in &config.exclude {
            globs.add(Glob::new(glob)?);
        }
        let meta = Meta {
            root,
            roots: roots.clone(),
        };
        let (store, records, saved) = Store::open(&dir, &meta, config.max_store_bytes)?;
        let tracker = feed::Tracker::new(&roots);
        let inner = Inner {
            store,
            workspace: workspace.clone(),
            roots,
            exclude: globs.build()?,
            config: config.clone(),
            feed: Mutex::new(tracker),
            state: Mutex::new(Recorder {
                index: Index::new(),
                kept: Vec::new(),
                records: 0,
                next_id: 1,
                dropped_through: None,
                turn: 1,
                begun: HashMap::new(),
                jobs_done: HashSet::new(),
            }),
            jobs: Mutex::new(None),
            ledger: Mutex::new(None),
        };
        let this = Self {
            inner: Arc::new(inner),
        };
        this.load(records, saved)?;
        Ok(this)
    }

    /// Tells the recorder how to see the running background jobs.
    pub fn watch_jobs(&self, jobs: RunningJobs) {
        *self.inner.jobs.lock().unwrap_or_else(|e| e.into_inner()) = Some(jobs);
    }

    /// Tells the recorder the session's read-before-write ledger: a rewind
    /// makes the next edit of a file it restored ask for a read.
    pub fn use_ledger(&self, ledger: crate::fs::read_state::FileReadState) {
        *self.inner.ledger.lock().unwrap_or_else(|e| e.into_inner()) = Some(ledger);
    }

    /// The store's folder.
    pub fn store_dir(&self) -> &Path {
        &self.inner.store.dir
    }

    /// The workspace root, which the listings' and reports' paths are
    /// shown relative to.
    pub fn root(&self) -> &Path {
        self.inner.workspace.root()
    }

    /// A new user prompt: later checkpoints belong to the next turn.
    pub fn new_turn(&self) {
        self.lock().turn += 1;
    }

    fn lock(&self) -> MutexGuard<'_, Recorder> {
        self.inner.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn looker(&self) -> Looker<'_> {
        Looker {
            workspace: &self.inner.workspace,
            roots: &self.inner.roots,
            objects: &self.inner.store.objects,
            exclude: &self.inner.exclude,
            max_file: self.inner.config.max_file_bytes,
            tracker: &self.inner.feed,
        }
    }

    /// Rebuilds the index from the saved one and the log after it, finishes
    /// what a crash interrupted, and looks at the roots.
    fn load(&self, records: Vec<Record>, saved: SavedIndex) -> Result<(), CheckpointError> {
        let mut rec = self.lock();
        rec.index = saved.paths.into_iter().collect();
        let mut dangling: Option<(u64, String, String, String, u64)> = None;
        let mut rewinding: Option<(u64, Vec<Change>)> = None;
        for (i, record) in records.iter().enumerate() {
            match record {
                Record::Begin {
                    id,
                    call_id,
                    tool,
                    label,
                    turn,
                } => {
                    rec.next_id = rec.next_id.max(id + 1);
                    rec.turn = rec.turn.max(*turn);
                    rec.begun.insert(call_id.clone(), *id);
                    dangling = Some((*id, call_id.clone(), tool.clone(), label.clone(), *turn));
                }
                Record::Checkpoint(cp) => {
                    rec.next_id = rec.next_id.max(cp.id + 1);
                    rec.turn = rec.turn.max(cp.turn);
                    if dangling.as_ref().is_some_and(|d| d.0 == cp.id) {
                        dangling = None;
                    }
                    if rewinding.as_ref().is_some_and(|r| r.0 == cp.id) {
                        rewinding = None;
                    }
                    if i >= saved.records {
                        for change in &cp.changes {
                            // The key is unknown: the next look reads it.
                            rec.index.insert(
                                change.path.clone(),
                                Known {
                                    state: change.after.clone(),
                                    key: state::StatKey::absent(),
                                    racy: true,
                                },
                            );
                        }
                    }
                    rec.kept.push(cp.clone());
                }
                Record::RewindBegin { id, plan } => {
                    rec.next_id = rec.next_id.max(id + 1);
                    rewinding = Some((*id, plan.clone()));
                }
                Record::Dropped { through } => {
                    rec.dropped_through = Some(*through);
                    rec.kept.retain(|cp| cp.id > *through);
                }
            }
        }
        rec.records = records.len();
        // A kept state whose bytes are gone (a damaged store) is looked at
        // again.
        let objects = &self.inner.store.objects;
        for known in rec.index.values_mut() {
            if let State::File { hash: Some(h), .. } = &known.state
                && !objects.has(h)
            {
                known.racy = true;
                known.key = state::StatKey::absent();
            }
        }
        if let Some((id, plan)) = rewinding {
            drop(rec);
            self.finish_rewind(id, plan)?;
            rec = self.lock();
        }
        let (changes, problems) = self.looker().changes(&mut rec.index, &Scope::All);
        if let Some((id, call_id, tool, label, turn)) = dangling
            && !changes.is_empty()
        {
            let mut notes = vec![
                "recorded after a crash: what changed between the call and the next start"
                    .to_owned(),
            ];
            notes.extend(problems);
            let cp = Checkpoint {
                id,
                call_id,
                tool,
                label,
                turn,
                at_ms: (now_ns() / 1_000_000) as u64,
                changes,
                notes,
            };
            self.append(&mut rec, Record::Checkpoint(cp.clone()))?;
            rec.kept.push(cp);
        }
        self.save_index(&rec)?;
        Ok(())
    }

    fn append(&self, rec: &mut Recorder, record: Record) -> io::Result<()> {
        self.inner.store.log.append(&record)?;
        rec.records += 1;
        Ok(())
    }

    fn save_index(&self, rec: &Recorder) -> io::Result<()> {
        self.inner.store.save_index(&SavedIndex {
            records: rec.records,
            paths: rec
                .index
                .iter()
                .map(|(p, k)| (p.clone(), k.clone()))
                .collect(),
        })
    }

    /// Saves the index, so that the next session reads only what changed
    /// since (called when the session ends).
    pub fn save(&self) -> io::Result<()> {
        let rec = self.lock();
        self.save_index(&rec)
    }

    /// The background jobs that may have written since the last look: those
    /// running, and those ended that no whole look has seen ended.
    fn jobs_to_blame(&self, rec: &Recorder) -> Vec<JobSeen> {
        self.inner
            .jobs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map(|f| f())
            .unwrap_or_default()
            .into_iter()
            .filter(|j| j.running || !rec.jobs_done.contains(&j.id))
            .collect()
    }

    /// Whether a background job may have written since the last look.
    fn jobs_may_write(&self, rec: &Recorder) -> bool {
        !self.jobs_to_blame(rec).is_empty()
    }

    /// Brings the index up to date with what changed within `scope` since
    /// the last look: changes found while background jobs run are recorded
    /// as theirs; otherwise nobody recorded made them and the index only
    /// learns them.
    fn settle(&self, rec: &mut Recorder, scope: &Scope) -> io::Result<()> {
        // The jobs are read before the look: one that ends during it is
        // still a candidate, and is marked done only by the next look.
        let jobs = self.jobs_to_blame(rec);
        let (changes, problems) = self.looker().changes(&mut rec.index, scope);
        if matches!(scope, Scope::All) {
            // Whatever an ended job wrote is in this look.
            rec.jobs_done
                .extend(jobs.iter().filter(|j| !j.running).map(|j| j.id.clone()));
        }
        if changes.is_empty() || jobs.is_empty() {
            return Ok(());
        }
        let id = rec.next_id;
        rec.next_id += 1;
        let (call_id, label) = if jobs.len() == 1 {
            let label = match jobs[0].command.as_str() {
                "" => format!("background job {}", jobs[0].id),
                command => format!("background job {}: {command}", jobs[0].id),
            };
            (jobs[0].id.clone(), label)
        } else {
            let ids: Vec<&str> = jobs.iter().map(|j| j.id.as_str()).collect();
            (ids.join(","), format!("background jobs {}", ids.join(", ")))
        };
        let cp = Checkpoint {
            id,
            call_id,
            tool: "bash".to_owned(),
            label,
            turn: rec.turn,
            at_ms: (now_ns() / 1_000_000) as u64,
            changes,
            notes: problems.into_iter().chain(self.feed_note()).collect(),
        };
        self.append(rec, Record::Checkpoint(cp.clone()))?;
        rec.kept.push(cp);
        self.bound(rec)
    }

    /// What the change feed has to say, once: why a look compared the
    /// roots whole.
    fn feed_note(&self) -> Option<String> {
        self.inner
            .feed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .note
            .take()
    }

    /// Starts recording a call that can write: what changed before it is
    /// learnt (or recorded as a running job's), and a begin record is
    /// written so that a crash before [`Checkpoints::end`] still attributes
    /// the call's changes to it. `paths` are the exact files a file tool
    /// touches; `None` for a command (everything under the roots).
    pub fn begin(
        &self,
        call_id: &str,
        tool: &str,
        label: &str,
        paths: Option<Vec<PathBuf>>,
    ) -> io::Result<Recording> {
        let scope = match paths {
            Some(paths) => Scope::Paths(paths),
            None => Scope::All,
        };
        let mut rec = self.lock();
        self.settle(&mut rec, &scope)?;
        let id = rec.next_id;
        rec.next_id += 1;
        let turn = rec.turn;
        rec.begun.insert(call_id.to_owned(), id);
        self.append(
            &mut rec,
            Record::Begin {
                id,
                call_id: call_id.to_owned(),
                tool: tool.to_owned(),
                label: label.to_owned(),
                turn,
            },
        )?;
        Ok(Recording {
            id,
            call_id: call_id.to_owned(),
            tool: tool.to_owned(),
            label: label.to_owned(),
            scope,
        })
    }

    /// Ends recording a call: what changed within its scope since
    /// [`Checkpoints::begin`] is its checkpoint (none when nothing did).
    pub fn end(&self, recording: Recording) -> io::Result<Option<Checkpoint>> {
        let mut rec = self.lock();
        let (changes, mut notes) = self.looker().changes(&mut rec.index, &recording.scope);
        if changes.is_empty() {
            return Ok(None);
        }
        notes.extend(self.feed_note());
        let cp = Checkpoint {
            id: recording.id,
            call_id: recording.call_id,
            tool: recording.tool,
            label: recording.label,
            turn: rec.turn,
            at_ms: (now_ns() / 1_000_000) as u64,
            changes,
            notes,
        };
        self.append(&mut rec, Record::Checkpoint(cp.clone()))?;
        rec.kept.push(cp.clone());
        self.bound(&mut rec)?;
        Ok(Some(cp))
    }

    /// Looks at the roots now: what background jobs changed since the last
    /// look is recorded as theirs.
    pub fn refresh(&self) -> io::Result<()> {
        let mut rec = self.lock();
        self.settle(&mut rec, &Scope::All)
    }

    /// The checkpoints kept, oldest first (after a look at the roots, so a
    /// running job's changes are in).
    pub fn list(&self) -> io::Result<Listing> {
        let mut rec = self.lock();
        self.settle(&mut rec, &Scope::All)?;
        Ok(self.listing(&rec))
    }

    fn listing(&self, rec: &Recorder) -> Listing {
        let mut excluded = vec![
            "paths the ignore files cover (.gitignore, .ignore, .git/info/exclude)".to_owned(),
            "version-control folders (.git, .hg, .svn, .jj)".to_owned(),
            "paths a read-deny rule covers".to_owned(),
            format!(
                "bytes of files over {} (recorded by size and mode only)",
                bytes_in_words(self.inner.config.max_file_bytes)
            ),
        ];
        if !self.inner.config.exclude.is_empty() {
            excluded.push(format!(
                "the policy's exclude globs: {}",
                self.inner.config.exclude.join(", ")
            ));
        }
        Listing {
            checkpoints: rec.kept.clone(),
            dropped_through: rec.dropped_through,
            store: self.inner.store.dir.clone(),
            store_bytes: self.inner.store.objects.bytes(),
            max_store_bytes: self.inner.config.max_store_bytes,
            excluded,
        }
    }

    /// Keeps the store under its bound: the oldest checkpoints are dropped
    /// (a `dropped` record says how far), and versions nothing names any
    /// more are removed.
    fn bound(&self, rec: &mut Recorder) -> io::Result<()> {
        let limit = self.inner.config.max_store_bytes;
        let objects = &self.inner.store.objects;
        if objects.bytes() <= limit / 10 * 9 || rec.kept.is_empty() {
            return Ok(());
        }
        while objects.bytes() > limit / 10 * 7 && !rec.kept.is_empty() {
            let drop_n = (rec.kept.len() / 4).max(1);
            let through = rec.kept[drop_n - 1].id;
            self.append(rec, Record::Dropped { through })?;
            rec.kept.drain(..drop_n);
            rec.dropped_through = Some(through);
            let mut keep: HashSet<&str> = HashSet::new();
            for known in rec.index.values() {
                if let State::File { hash: Some(h), .. } = &known.state {
                    keep.insert(h);
                }
            }
            for cp in &rec.kept {
                for c in &cp.changes {
                    for s in [&c.before, &c.after] {
                        if let State::File { hash: Some(h), .. } = s {
                            keep.insert(h);
                        }
                    }
                }
            }
            objects.collect(&keep)?;
        }
        Ok(())
    }
}

/// `path` made absolute against the current folder (not resolved).
fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().map_or_else(|_| path.to_path_buf(), |d| d.join(path))
    }
}

/// `16 MiB`, `512 KiB`, `100 bytes`.
pub fn bytes_in_words(n: u64) -> String {
    match n {
        n if n >= 1 << 30 && n % (1 << 30) == 0 => format!("{} GiB", n >> 30),
        n if n >= 1 << 20 => {
            format!("{:.1} MiB", n as f64 / f64::from(1 << 20)).replace(".0 MiB", " MiB")
        }
        n if n >= 1 << 10 => format!("{} KiB", n >> 10),
        n => format!("{n} bytes"),
    }
}
