//! The search of the tree: the parallel walk, one searcher per thread,
//! and what it keeps of each file ([`FileHit`]): its output lines counted
//! (with a window, up to one past it), only a prefix kept within
//! [`FILE_KEEP_BYTES`] a file and [`KEEP_BYTES`] in all. Files with
//! several names (hard links) are held back until the walk has met every
//! name ([`Found`]). With a `head_limit` in content and count modes the
//! walk goes in path order and stops once the window is filled by hits
//! it has finished ([`Window`]).

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use agentcore_stages::ToolError;
use encoding_rs::Encoding as Charset;
use grep_regex::RegexMatcher;
use grep_searcher::{Searcher, SearcherBuilder};
use rustix::fs::FileType;
use tokio_util::sync::CancellationToken;

use super::args::OutputMode;
use super::legacy::{Utf8Watch, decoding_searcher};
use super::sink::{CancelReader, Collect, Line, Raw};
use crate::fs::learned::{self, Stamp, Verdicts};
use crate::fs::walk::{Entry, Filters, Flow, Kind, Settled, walk, walk_error, walk_in_order};
use crate::fs::workspace::Workspace;
use crate::tools::text::legacy::{Verdict, judge};

/// Bytes of one file's content-mode lines kept during the walk at most
/// (text plus bookkeeping); the rest are counted, and searched again only
/// if the output reaches them.
pub const FILE_KEEP_BYTES: usize = 256 << 10;
/// Bytes of content-mode lines kept during the walk over all files at
/// most; a file that would go beyond is counted only.
pub const KEEP_BYTES: usize = 16 << 20;
/// Bytes of content-mode lines one search keeps for the next search of
/// the same files at most (beside each file's verdict); a matching file
/// beyond is read again by the next.
pub(crate) const KEEP_FOR_NEXT_BYTES: usize = 2 << 20;

/// What decides a matching file's content-mode hit besides the pattern
/// and the matcher's flags (which key the verdicts): the mode, the
/// context lines, the lines that can be shown, and whether a file's
/// search stops past them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    pub(crate) mode: OutputMode,
    pub(crate) context: (usize, usize),
    pub(crate) keep_lines: usize,
    pub(crate) stops: bool,
}

/// A matching file's hit kept for the next search of the same shape, so
/// that a repeated search need not read the file again while its stamp
/// holds.
struct KeptHit {
    shape: Shape,
    matches: u64,
    count: usize,
    lines: Vec<Line>,
}

/// What one file contributed.
pub(crate) struct FileHit {
    pub(crate) path: PathBuf,
    /// (device, inode) as searched, so a second search can tell it is the
    /// same file.
    pub(crate) id: (u64, u64),
    /// Its names (hard links) when searched.
    links: u64,
    pub(crate) matches: u64,
    /// Content mode: how many output lines the file gives (with a window,
    /// at most one past it: the search of the file stops there).
    pub(crate) count: usize,
    /// Content mode: the first of those lines (all of them when
    /// `lines.len() == count`).
    pub(crate) lines: Vec<Line>,
    /// The legacy encoding the file was searched decoded from, when it is
    /// not UTF-8 (see [`super::legacy`]).
    pub(crate) charset: Option<&'static Charset>,
}

impl FileHit {
    fn weight(&self) -> usize {
        self.lines.iter().map(Line::weight).sum()
    }
}

/// How far a search with a window goes: the output units (content lines,
/// `--` separators included, or count-mode files) in path order up to
/// `end` are shown, and the search stops once more than `end` are known.
#[derive(Clone, Copy)]
pub(crate) struct Window {
    pub(crate) end: usize,
    /// Content mode (units are output lines) rather than count mode
    /// (units are files).
    pub(crate) lines: bool,
    /// Whether a `--` separates the files' lines (content with context).
    pub(crate) separators: bool,
}

impl Window {
    /// The output units `hit` adds (`first`: whether it is the first hit
    /// shown, with no separator before it).
    fn units(&self, hit: &FileHit, first: bool) -> usize {
        if !self.lines {
            return 1;
        }
        hit.count + usize::from(self.separators && !first)
    }
}

/// The files a search found, in path order, with hard-linked ones held
/// back until the walk shows that each of their names was seen.
pub(crate) struct Found {
    hits: BTreeMap<PathBuf, FileHit>,
    /// Bytes of content lines kept, within [`KEEP_BYTES`].
    kept: usize,
    /// (device, inode) → names seen and link count, for files with
    /// several names.
    linked: HashMap<(u64, u64), Linked>,
    window: Option<Window>,
    /// Output units of every hit recorded (an upper bound of what any
    /// prefix gives).
    recorded: usize,
    /// The last hit of the settled prefix (see [`Found::settle`]) and the
    /// units of the prefix.
    settled: Option<PathBuf>,
    settled_units: usize,
    /// This search's verdicts that can be kept for the next.
    verdicts: Vec<learned::Verdict>,
    /// Bytes of lines those verdicts keep, within [`KEEP_FOR_NEXT_BYTES`].
    kept_for_next: usize,
}

#[derive(Default)]
struct Linked {
    seen: u64,
    nlink: u64,
}

impl Found {
    fn new(window: Option<Window>) -> Self {
        Self {
            hits: BTreeMap::new(),
            kept: 0,
            linked: HashMap::new(),
            window,
            recorded: 0,
            settled: None,
            settled_units: 0,
            verdicts: Vec::new(),
            kept_for_next: 0,
        }
    }

    /// This search's verdicts on the files it read or recognised, for the
    /// next search of the same pattern.
    pub(crate) fn take_verdicts(&mut self) -> Vec<learned::Verdict> {
        std::mem::take(&mut self.verdicts)
    }

    /// Whether `weight` more bytes of lines fit within
    /// [`KEEP_FOR_NEXT_BYTES`].
    fn has_room_for_next(&self, weight: usize) -> bool {
        self.kept_for_next
            .checked_add(weight)
            .is_some_and(|total| total <= KEEP_FOR_NEXT_BYTES)
    }

    /// Adds a verdict for the next search; what it found in the file
    /// goes with it only within [`KEEP_FOR_NEXT_BYTES`] (`weight`: its
    /// lines' bytes).
    fn learn(&mut self, mut verdict: learned::Verdict, weight: usize) {
        if verdict.found.is_some() {
            if self.has_room_for_next(weight) {
                self.kept_for_next += weight;
            } else {
                verdict.found = None;
            }
        }
        self.verdicts.push(verdict);
    }

    /// `hit`, its kept lines dropped when they would pass [`KEEP_BYTES`].
    fn keep(&mut self, mut hit: FileHit) -> FileHit {
        let weight = hit.weight();
        if self.kept.saturating_add(weight) > KEEP_BYTES {
            hit.lines = Vec::new();
        } else {
            self.kept += weight;
        }
        hit
    }

    /// Records one searched file: its hit, and one more of its names seen.
    fn record(&mut self, stat: &rustix::fs::Stat, hit: Option<FileHit>) {
        if stat.st_nlink > 1 {
            let entry = self.linked.entry((stat.st_dev, stat.st_ino)).or_default();
            entry.seen += 1;
            // `st_nlink` is u32 on some targets.
            #[allow(clippy::useless_conversion)]
            let nlink = u64::from(stat.st_nlink);
            entry.nlink = entry.nlink.max(nlink);
        }
        if let Some(hit) = hit {
            if let Some(window) = self.window {
                self.recorded = self.recorded.saturating_add(window.units(&hit, false));
            }
            self.hits.insert(hit.path.clone(), hit);
        }
    }

    /// Whether every name of the file of `hit` was met.
    fn whole(&self, hit: &FileHit) -> bool {
        hit.links <= 1 || self.linked.get(&hit.id).is_some_and(|l| l.seen >= l.nlink)
    }

    /// Whether the hits recorded have more output units than the window
    /// shows, so that [`Found::settle`] may find the window passed.
    fn may_pass_window(&self) -> bool {
        self.window.is_some_and(|window| self.recorded > window.end)
    }

    /// With a window: extends the settled prefix (the hits in path order
    /// that the walk has finished, none of them a file with names not yet
    /// all met) as far as `settled` allows; `true` once the prefix passes
    /// the window's end, so the search can stop.
    fn settle(&mut self, settled: &Settled) -> bool {
        let Some(window) = self.window else {
            return false;
        };
        if self.recorded <= window.end {
            return false;
        }
        let range = match &self.settled {
            Some(last) => self
                .hits
                .range::<PathBuf, _>((Bound::Excluded(last), Bound::Unbounded)),
            None => self.hits.range::<PathBuf, _>(..),
        };
        let mut last = None;
        let mut passed = false;
        for (path, hit) in range {
            if !settled.covers(path) || !self.whole(hit) {
                break;
            }
            let first = self.settled.is_none() && last.is_none();
            self.settled_units += window.units(hit, first);
            last = Some(path);
            if self.settled_units > window.end {
                passed = true;
                break;
            }
        }
        if let Some(last) = last {
            self.settled = Some(last.clone());
        }
        passed
    }

    /// The hits shown, how many files with hits were withheld, and whether
    /// more output lies beyond the window's end (then the hits stop at the
    /// first whose units pass it).
    ///
    /// A file with several names (hard links) is shown only when this walk
    /// met every one of its names, so every name is inside the searched
    /// tree and none is left out by the policy: otherwise a link placed
    /// beside a denied or protected file (`ln secrets/key notes.txt`, or
    /// `ln .env x`) would show the denied content under another name.
    ///
    /// With a window, what is shown depends only on the tree, never on how
    /// far the walk went before it stopped: the hits in path order up to
    /// the first that passes the end, which the walk always finished.
    pub(crate) fn finish(self) -> (Vec<FileHit>, usize, bool) {
        let mut withheld = 0;
        let mut units = 0;
        let mut shown = Vec::new();
        let end = self.window.map(|w| w.end);
        for hit in self.hits.values() {
            if end.is_some_and(|end| units > end) {
                break;
            }
            if !self.whole(hit) {
                withheld += 1;
                continue;
            }
            if let Some(window) = self.window {
                units += window.units(hit, shown.is_empty());
            }
            shown.push(hit.path.clone());
        }
        let more = end.is_some_and(|end| units > end);
        let mut hits = self.hits;
        let shown = shown
            .into_iter()
            .filter_map(|path| hits.remove(&path))
            .collect();
        (shown, withheld, more)
    }
}

/// One search of the tree: how every file is searched, and how much of
/// its output is kept.
pub(crate) struct Search<'a> {
    pub(crate) matcher: &'a RegexMatcher,
    pub(crate) searcher: &'a SearcherBuilder,
    pub(crate) mode: OutputMode,
    /// A file's output lines from this index on (`offset + head_limit`)
    /// are never shown, wherever the file lands in path order.
    pub(crate) keep_lines: usize,
    /// With a `head_limit` in content and count modes: the search stops
    /// once the first output units in path order fill the window.
    pub(crate) window: Option<Window>,
    /// Threads of the walk.
    pub(crate) threads: usize,
    /// Context lines before and after a match (content mode).
    pub(crate) context: (usize, usize),
    /// What earlier searches of the same pattern found of each file.
    pub(crate) known: Option<Arc<Verdicts>>,
    /// When the search started, for the stamps that can be kept.
    pub(crate) now: SystemTime,
    pub(crate) token: &'a CancellationToken,
}

impl Search<'_> {
    /// Walks the tree from `start` with `filters`, searching every file,
    /// one matcher and searcher per thread; with a window, in path order,
    /// stopping once the window is known.
    pub(crate) fn walk(
        &self,
        workspace: &Workspace,
        start: &Path,
        filters: &Filters,
    ) -> Result<Found, ToolError> {
        let found: Mutex<Found> = Mutex::new(Found::new(self.window));
        let make_visitor = || {
            let found = &found;
            let matcher = self.matcher.clone();
            let mut searcher = self.searcher.build();
            move |entry: Entry<'_>| self.visit(entry, &matcher, &mut searcher, found)
        };
        let walked = if self.window.is_some() {
            walk_in_order(workspace, start, filters, self.threads, make_visitor)
        } else {
            walk(workspace, start, filters, self.threads, make_visitor)
        };
        walked.map_err(|e| walk_error(workspace, start, &e))?;
        Ok(found.into_inner().unwrap_or_else(|p| p.into_inner()))
    }

    /// Searches the entry if it is a file, and records what it gave.
    fn visit(
        &self,
        entry: Entry<'_>,
        matcher: &RegexMatcher,
        searcher: &mut Searcher,
        found: &Mutex<Found>,
    ) -> Flow {
        if self.token.is_cancelled() {
            return Flow::Quit;
        }
        // Symlinks are not followed (as ripgrep without -L); FIFOs,
        // sockets and devices are not opened.
        if entry.kind() != Kind::File {
            return Flow::Continue;
        }
        if let Some(flow) = self.known_verdict(&entry, found) {
            return flow;
        }
        let Ok(Some((file, stat))) = entry.open_file() else {
            return Flow::Continue;
        };
        let mut sure = true;
        let hit = self.search_file(file, matcher, searcher, &mut sure).map(
            |(matches, count, lines, charset)| FileHit {
                path: entry.path().to_path_buf(),
                // The stat fields' widths differ between targets.
                #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
                id: (stat.st_dev as u64, stat.st_ino as u64),
                #[allow(clippy::useless_conversion)]
                links: u64::from(stat.st_nlink),
                matches,
                count,
                lines,
                charset,
            },
        );
        // The stamp was taken before the read: a change during it moves
        // the file's stamp, so this verdict never matches it again.
        let stamp = Stamp::of(&stat);
        let mut found = found.lock().unwrap_or_else(|p| p.into_inner());
        if sure && stamp.settled(self.now) {
            let mut verdict = learned::Verdict::of(stamp, hit.is_some());
            let mut weight = 0;
            // The lines are copied only while the search has room to keep
            // them for the next one.
            if let Some(hit) = hit
                .as_ref()
                .filter(|_| self.mode != OutputMode::FilesWithMatches)
                .filter(|hit| found.has_room_for_next(hit.weight()))
            {
                weight = hit.weight();
                verdict.found = Some(Arc::new(KeptHit {
                    shape: self.shape(),
                    matches: hit.matches,
                    count: hit.count,
                    lines: hit.lines.clone(),
                }));
            }
            found.learn(verdict, weight);
        }
        let hit = hit.map(|hit| found.keep(hit));
        self.recorded(&entry, &stat, hit, &mut found)
    }

    /// What decides this search's content-mode hits besides the pattern.
    fn shape(&self) -> Shape {
        Shape {
            mode: self.mode,
            context: self.context,
            keep_lines: self.keep_lines,
            stops: self.window.is_some(),
        }
    }

    /// Records what one file gave; with a window, `Flow::Quit` once the
    /// window is filled by files the walk has finished.
    fn recorded(
        &self,
        entry: &Entry<'_>,
        stat: &rustix::fs::Stat,
        hit: Option<FileHit>,
        found: &mut Found,
    ) -> Flow {
        found.record(stat, hit);
        // What the walk finished is asked only once the hits recorded
        // could pass the window (`settle` does nothing before): asking
        // locks the walk's queue and copies paths, at every file.
        if found.may_pass_window()
            && let Some(settled) = entry.settled()
            && found.settle(&settled)
        {
            return Flow::Quit;
        }
        Flow::Continue
    }

    /// A file an earlier search of the same pattern judged, unchanged
    /// since (same identity, size and times to the nanosecond, looked at
    /// through its directory's handle): recorded without reading it when
    /// it did not match, in files mode when it did, and in the other
    /// modes when that search was of the same [`Shape`] and kept what it
    /// found. `None` when the file must be searched.
    fn known_verdict(&self, entry: &Entry<'_>, found: &Mutex<Found>) -> Option<Flow> {
        let known = self.known.as_ref()?;
        let stat = entry.stat().ok()?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
            return None;
        }
        let stamp = Stamp::of(&stat);
        let verdict = known.get(&stamp.id)?;
        if verdict.stamp != stamp {
            return None;
        }
        let mut weight = 0;
        let hit = match (verdict.matched, self.mode) {
            (false, _) => None,
            (true, OutputMode::FilesWithMatches) => Some(FileHit {
                path: entry.path().to_path_buf(),
                id: stamp.id,
                #[allow(clippy::useless_conversion)]
                links: u64::from(stat.st_nlink),
                matches: 1,
                count: 0,
                lines: Vec::new(),
                charset: None,
            }),
            (true, _) => {
                let kept = verdict.found.as_deref()?.downcast_ref::<KeptHit>()?;
                if kept.shape != self.shape() {
                    return None;
                }
                let hit = FileHit {
                    path: entry.path().to_path_buf(),
                    id: stamp.id,
                    #[allow(clippy::useless_conversion)]
                    links: u64::from(stat.st_nlink),
                    matches: kept.matches,
                    count: kept.count,
                    lines: kept.lines.clone(),
                    // Only what a file's own search was sure of is kept:
                    // never a legacy encoding's.
                    charset: None,
                };
                weight = hit.weight();
                Some(hit)
            }
        };
        let mut found = found.lock().unwrap_or_else(|p| p.into_inner());
        let hit = hit.map(|hit| found.keep(hit));
        found.learn(verdict.clone(), weight);
        Some(self.recorded(entry, &stat, hit, &mut found))
    }

    /// Searches one file: its matches, its number of output lines, the
    /// prefix of them kept and the legacy encoding it was decoded from, or
    /// `None` when it has no match, is binary, or could not be read. A
    /// file that is not UTF-8 is judged, and searched again decoded when
    /// its encoding is sure.
    ///
    /// `sure` is cleared when the verdict may not be the content's alone
    /// (a read failed, the call was cancelled, or the file took the legacy
    /// encodings' path), so it is not kept for the next search.
    fn search_file(
        &self,
        file: File,
        matcher: &RegexMatcher,
        searcher: &mut Searcher,
        sure: &mut bool,
    ) -> Option<(u64, usize, Vec<Line>, Option<&'static Charset>)> {
        let mut reader = Utf8Watch::new(CancelReader {
            file,
            token: self.token,
        });
        let searched = self.search_reader(&mut reader, matcher, searcher, sure)?;
        if !reader.not_utf8() || self.token.is_cancelled() {
            return searched.hit(None);
        }
        *sure = false;
        let mut file = reader.inner.file;
        let cancelled = || self.token.is_cancelled();
        let Ok(Verdict::Sure(charset)) = judge(&mut file, &cancelled) else {
            return searched.hit(None);
        };
        let Some(mut decoding) = decoding_searcher(self.searcher, charset) else {
            return searched.hit(None);
        };
        if file.seek(SeekFrom::Start(0)).is_err() {
            return searched.hit(None);
        }
        let reader = CancelReader {
            file,
            token: self.token,
        };
        self.search_reader(reader, matcher, &mut decoding, sure)?
            .hit(Some(charset))
    }

    /// One search of a reader: `None` when it failed (`sure` cleared) or
    /// found the file binary.
    fn search_reader(
        &self,
        reader: impl std::io::Read,
        matcher: &RegexMatcher,
        searcher: &mut Searcher,
        sure: &mut bool,
    ) -> Option<Searched> {
        // Keeps a prefix of the file's lines within the budgets; every
        // line is counted.
        let mut lines = Vec::new();
        let mut weight = 0;
        let mut keeping = true;
        // With a window, a file's search stops one line past what can be
        // shown: its count then says only that more lines follow.
        let stop = self.window.is_some();
        let mut keep = |index: usize, raw: Raw<'_>| {
            if stop && index >= self.keep_lines {
                return false;
            }
            if keeping && index < self.keep_lines {
                let line = raw.line();
                weight += line.weight();
                if weight <= FILE_KEEP_BYTES {
                    lines.push(line);
                    return true;
                }
            }
            keeping = false;
            true
        };
        let mut sink = Collect::new(self.mode, self.token, &mut keep);
        let searched = searcher.search_reader(matcher, reader, &mut sink);
        let (binary, matches, count) = (sink.binary, sink.matches, sink.count);
        if searched.is_err() || self.token.is_cancelled() {
            *sure = false;
        }
        (searched.is_ok() && !binary).then_some(Searched {
            matches,
            count,
            lines,
        })
    }
}

/// What one search of a file found.
struct Searched {
    matches: u64,
    count: usize,
    lines: Vec<Line>,
}

impl Searched {
    /// The file's hit, if it matched.
    #[allow(clippy::type_complexity)]
    fn hit(
        self,
        charset: Option<&'static Charset>,
    ) -> Option<(u64, usize, Vec<Line>, Option<&'static Charset>)> {
        (self.matches > 0).then_some((self.matches, self.count, self.lines, charset))
    }
}

#[cfg(test)]
mod tests {
    use grep_regex::RegexMatcherBuilder;

    use super::*;

    /// A tree of 1,000 files, every one matching: with a window of 5
    /// lines, the walk stops after a handful of files, not 1,000.
    #[test]
    fn a_window_stops_the_walk_after_a_few_files() {
        let dir = tempfile::tempdir().unwrap();
        for d in 0..40 {
            let sub = dir.path().join(format!("d{d:02}"));
            std::fs::create_dir(&sub).unwrap();
            for f in 0..25 {
                std::fs::write(sub.join(format!("f{f:02}.txt")), "hit\nhit\n").unwrap();
            }
        }
        let workspace = Workspace::new(dir.path()).unwrap();
        let matcher = RegexMatcherBuilder::new().build("hit").unwrap();
        let mut builder = SearcherBuilder::new();
        builder.line_number(true);
        let token = CancellationToken::new();
        let search = |window: Option<Window>, threads: usize| {
            Search {
                matcher: &matcher,
                searcher: &builder,
                mode: OutputMode::Content,
                keep_lines: 5,
                window,
                threads,
                context: (0, 0),
                known: None,
                now: SystemTime::now(),
                token: &token,
            }
            .walk(&workspace, workspace.root(), &Filters::default())
            .unwrap()
        };
        let window = Window {
            end: 5,
            lines: true,
            separators: false,
        };
        // One thread: exactly the three files that fill the window.
        let found = search(Some(window), 1);
        assert_eq!(found.hits.len(), 3);
        let (hits, withheld, more) = found.finish();
        assert_eq!((hits.len(), withheld, more), (3, 0, true));
        assert!(hits[0].path.ends_with("d00/f00.txt"));
        assert!(hits[2].path.ends_with("d00/f02.txt"));
        // Several threads may search a few more before they see the stop;
        // what is shown is the same.
        for _ in 0..10 {
            let (hits, withheld, more) = search(Some(window), 4).finish();
            let paths: Vec<_> = hits.iter().map(|h| h.path.clone()).collect();
            assert_eq!((paths.len(), withheld, more), (3, 0, true));
            assert!(paths[2].ends_with("d00/f02.txt"));
        }
        // Without a window every file is searched.
        let found = search(None, 2);
        assert_eq!(found.hits.len(), 1000);
    }

    /// A matching file's lines kept by one search are what the next
    /// search of the same shape shows, without reading the file (shown
    /// here by lines no read could give); a search of another shape, or
    /// of a file whose stamp moved, reads it.
    #[test]
    fn kept_lines_are_used_only_by_a_search_of_the_same_shape_while_the_stamp_holds() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.txt");
        std::fs::write(&path, "a hit here\n").unwrap();
        let workspace = Workspace::new(dir.path()).unwrap();
        let matcher = RegexMatcherBuilder::new().build("hit").unwrap();
        let token = CancellationToken::new();
        let search = |context: usize, known: Option<Arc<Verdicts>>| {
            let mut builder = SearcherBuilder::new();
            builder
                .line_number(true)
                .before_context(context)
                .after_context(context);
            let mut found = Search {
                matcher: &matcher,
                searcher: &builder,
                mode: OutputMode::Content,
                keep_lines: 250,
                window: None,
                threads: 1,
                context: (context, context),
                known,
                // Later than the settling time, so the file's stamp counts
                // as settled and what was found is kept.
                now: SystemTime::now() + crate::fs::learned::SETTLE * 2,
                token: &token,
            }
            .walk(&workspace, workspace.root(), &Filters::default())
            .unwrap();
            let verdicts = found.take_verdicts();
            let text: Vec<String> = found
                .finish()
                .0
                .iter()
                .flat_map(|hit| hit.lines.iter())
                .map(|line| match line {
                    Line::Match(n, t) => format!("{n}:{t}"),
                    Line::Context(n, t) => format!("{n}-{t}"),
                    Line::Break => "--".to_owned(),
                })
                .collect();
            (text, verdicts)
        };
        let (text, verdicts) = search(0, None);
        assert_eq!(text, ["1:a hit here"]);
        // The same verdicts with other lines in place of the kept ones.
        let forged: Verdicts = verdicts
            .into_iter()
            .map(|mut verdict| {
                let kept = verdict
                    .found
                    .as_deref()
                    .unwrap()
                    .downcast_ref::<KeptHit>()
                    .unwrap();
                verdict.found = Some(Arc::new(KeptHit {
                    shape: kept.shape,
                    matches: kept.matches,
                    count: kept.count,
                    lines: vec![Line::Match(7, "from memory".to_owned())],
                }));
                (verdict.stamp.id, verdict)
            })
            .collect();
        let forged = Arc::new(forged);
        assert_eq!(search(0, Some(forged.clone())).0, ["7:from memory"]);
        assert_eq!(
            search(1, Some(forged.clone())).0,
            ["1:a hit here"],
            "another shape"
        );
        // Any write moves the change time, even of the same bytes.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&path, "a hit here\n").unwrap();
        assert_eq!(
            search(0, Some(forged)).0,
            ["1:a hit here"],
            "the stamp moved"
        );
    }
}
