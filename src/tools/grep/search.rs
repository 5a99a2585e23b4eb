//! The search of the tree: the parallel walk, one searcher per thread,
//! and what it keeps of each file ([`FileHit`]): every output line
//! counted, only a prefix kept within [`FILE_KEEP_BYTES`] a file and
//! [`KEEP_BYTES`] in all. Files with several names (hard links) are held
//! back until the walk has met every name ([`Found`]).

use std::collections::HashMap;
use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use agentcore_stages::ToolError;
use encoding_rs::Encoding as Charset;
use grep_regex::RegexMatcher;
use grep_searcher::{Searcher, SearcherBuilder};
use tokio_util::sync::CancellationToken;

use super::args::OutputMode;
use super::legacy::{Utf8Watch, decoding_searcher};
use super::sink::{CancelReader, Collect, Line, Raw};
use crate::fs::walk::{Entry, Filters, Flow, Kind, default_threads, walk, walk_error};
use crate::fs::workspace::Workspace;
use crate::tools::text::legacy::{Verdict, judge};

/// Bytes of one file's content-mode lines kept during the walk at most
/// (text plus bookkeeping); the rest are counted, and searched again only
/// if the output reaches them.
pub const FILE_KEEP_BYTES: usize = 256 << 10;
/// Bytes of content-mode lines kept during the walk over all files at
/// most; a file that would go beyond is counted only.
pub const KEEP_BYTES: usize = 16 << 20;

/// What one file contributed.
pub(crate) struct FileHit {
    pub(crate) path: PathBuf,
    /// (device, inode) as searched, so a second search can tell it is the
    /// same file.
    pub(crate) id: (u64, u64),
    pub(crate) matches: u64,
    /// Content mode: how many output lines the file gives.
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

/// The files a search found, with hard-linked ones held back until the
/// walk shows that each of their names was seen.
#[derive(Default)]
pub(crate) struct Found {
    hits: Vec<FileHit>,
    /// Bytes of content lines kept, within [`KEEP_BYTES`].
    kept: usize,
    /// (device, inode) → names seen, link count, hits.
    linked: HashMap<(u64, u64), Linked>,
}

#[derive(Default)]
struct Linked {
    seen: u64,
    nlink: u64,
    hits: Vec<FileHit>,
}

impl Found {
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

    fn linked(&mut self, stat: &rustix::fs::Stat, hit: Option<FileHit>) {
        let entry = self.linked.entry((stat.st_dev, stat.st_ino)).or_default();
        entry.seen += 1;
        // `st_nlink` is u32 on some targets.
        #[allow(clippy::useless_conversion)]
        let nlink = u64::from(stat.st_nlink);
        entry.nlink = entry.nlink.max(nlink);
        entry.hits.extend(hit);
    }

    /// The hits shown, and how many files with hits were withheld.
    ///
    /// A file with several names (hard links) is shown only when this walk
    /// met every one of its names, so every name is inside the searched
    /// tree and none is left out by the policy: otherwise a link placed
    /// beside a denied or protected file (`ln secrets/key notes.txt`, or
    /// `ln .env x`) would show the denied content under another name.
    pub(crate) fn finish(mut self) -> (Vec<FileHit>, usize) {
        let mut withheld = 0;
        for (_, linked) in self.linked {
            if linked.seen >= linked.nlink {
                self.hits.extend(linked.hits);
            } else if !linked.hits.is_empty() {
                withheld += 1;
            }
        }
        (self.hits, withheld)
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
    pub(crate) token: &'a CancellationToken,
}

impl Search<'_> {
    /// Walks the tree from `start` with `filters`, searching every file,
    /// one matcher and searcher per thread.
    pub(crate) fn walk(
        &self,
        workspace: &Workspace,
        start: &Path,
        filters: &Filters,
    ) -> Result<Found, ToolError> {
        let found: Mutex<Found> = Mutex::new(Found::default());
        walk(workspace, start, filters, default_threads(), || {
            let found = &found;
            let matcher = self.matcher.clone();
            let mut searcher = self.searcher.build();
            move |entry: Entry<'_>| self.visit(entry, &matcher, &mut searcher, found)
        })
        .map_err(|e| walk_error(workspace, start, &e))?;
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
        let Ok(Some((file, stat))) = entry.open_file() else {
            return Flow::Continue;
        };
        let hit =
            self.search_file(file, matcher, searcher)
                .map(|(matches, count, lines, charset)| FileHit {
                    path: entry.into_path(),
                    // The stat fields' widths differ between targets.
                    #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
                    id: (stat.st_dev as u64, stat.st_ino as u64),
                    matches,
                    count,
                    lines,
                    charset,
                });
        let mut found = found.lock().unwrap_or_else(|p| p.into_inner());
        let hit = hit.map(|hit| found.keep(hit));
        if stat.st_nlink > 1 {
            found.linked(&stat, hit);
        } else {
            found.hits.extend(hit);
        }
        Flow::Continue
    }

    /// Searches one file: its matches, its number of output lines, the
    /// prefix of them kept and the legacy encoding it was decoded from, or
    /// `None` when it has no match, is binary, or could not be read. A
    /// file that is not UTF-8 is judged, and searched again decoded when
    /// its encoding is sure.
    fn search_file(
        &self,
        file: File,
        matcher: &RegexMatcher,
        searcher: &mut Searcher,
    ) -> Option<(u64, usize, Vec<Line>, Option<&'static Charset>)> {
        let mut reader = Utf8Watch::new(CancelReader {
            file,
            token: self.token,
        });
        let searched = self.search_reader(&mut reader, matcher, searcher)?;
        if !reader.not_utf8() || self.token.is_cancelled() {
            return searched.hit(None);
        }
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
        self.search_reader(reader, matcher, &mut decoding)?
            .hit(Some(charset))
    }

    /// One search of a reader: `None` when it failed or found the file
    /// binary.
    fn search_reader(
        &self,
        reader: impl std::io::Read,
        matcher: &RegexMatcher,
        searcher: &mut Searcher,
    ) -> Option<Searched> {
        // Keeps a prefix of the file's lines within the budgets; every
        // line is counted.
        let mut lines = Vec::new();
        let mut weight = 0;
        let mut keeping = true;
        let mut keep = |index: usize, raw: Raw<'_>| {
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
