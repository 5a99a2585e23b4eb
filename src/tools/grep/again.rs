//! The second search: a file whose shown lines the walk did not keep is
//! searched again, through handles beneath the root, and only if it is
//! still the same file (device and inode).

use grep_regex::RegexMatcher;
use grep_searcher::{Searcher, SearcherBuilder};
use tokio_util::sync::CancellationToken;

use super::args::OutputMode;
use super::legacy::decoding_searcher;
use super::search::FileHit;
use super::sink::{CancelReader, Collect, Line, Raw};
use crate::fs::beneath;
use crate::fs::workspace::Workspace;

/// The second search of files whose shown lines the walk did not keep.
pub(crate) struct Again<'a> {
    pub(crate) workspace: &'a Workspace,
    pub(crate) matcher: &'a RegexMatcher,
    pub(crate) searcher: Searcher,
    /// What `searcher` was built from, for a file decoded from a legacy
    /// encoding.
    pub(crate) builder: &'a SearcherBuilder,
    pub(crate) token: &'a CancellationToken,
    /// Files that changed since the walk searched them (shown paths).
    pub(crate) changed: Vec<String>,
}

impl Again<'_> {
    /// Searches `hit` again, handing its output lines from index `from` on
    /// to `emit` until it returns `false`. `false` when the file is no
    /// longer the one the walk searched, or no longer gives the lines it
    /// gave (recorded for [`Again::note`]).
    pub(crate) fn search(
        &mut self,
        hit: &FileHit,
        from: usize,
        emit: &mut dyn FnMut(Line) -> bool,
    ) -> bool {
        let mut ended_early = false;
        let mut count = 0;
        let mut forward = |index: usize, raw: Raw<'_>| {
            count = index + 1;
            if index < from {
                return true;
            }
            if index >= hit.count || !emit(raw.line()) {
                ended_early = index < hit.count;
                return false;
            }
            true
        };
        let same = match self.open(hit) {
            Some(file) => {
                let mut sink = Collect::new(OutputMode::Content, self.token, &mut forward);
                let reader = CancelReader {
                    file,
                    token: self.token,
                };
                // Decoded as the walk decoded it.
                let mut decoding = hit
                    .charset
                    .and_then(|charset| decoding_searcher(self.builder, charset));
                let searcher = decoding.as_mut().unwrap_or(&mut self.searcher);
                let searched = searcher.search_reader(self.matcher, reader, &mut sink);
                let binary = sink.binary;
                searched.is_ok() && !binary && (ended_early || count == hit.count)
            }
            None => false,
        };
        if !same && !self.token.is_cancelled() {
            self.changed.push(self.workspace.display(&hit.path));
        }
        same
    }

    /// Opens the file `hit` names beneath the root, without following a
    /// link, if it is still the file the walk searched.
    fn open(&self, hit: &FileHit) -> Option<std::fs::File> {
        use std::os::fd::AsFd;
        use std::os::unix::fs::MetadataExt;
        let (dir, name) = self.workspace.open_parent(&hit.path).ok()?;
        let file = beneath::open_file_at(dir.as_fd(), &name, beneath::Access::Read).ok()?;
        let meta = file.metadata().ok()?;
        ((meta.dev(), meta.ino()) == hit.id).then_some(file)
    }

    /// The note for files that changed while the search ran.
    pub(crate) fn note(&self) -> Option<String> {
        let (first, rest) = self.changed.split_first()?;
        let n = self.changed.len();
        Some(format!(
            "({n} file{} changed while the search ran, so some of {} lines are missing above: {}. Search again to see them.)",
            if n == 1 { "" } else { "s" },
            if n == 1 { "its" } else { "their" },
            std::iter::once(first)
                .chain(rest)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }
}
