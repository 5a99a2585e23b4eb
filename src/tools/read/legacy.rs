//! The second and third passes `read` makes over a file that is not
//! UTF-8 and has no byte-order mark: the survey that guesses its legacy
//! encoding, then the file decoded with the guess and judged (see
//! [`crate::tools::text::legacy`]). Both stream, as the first pass does.

use std::fs::File;
use std::io;

use agentcore_stages::{Content, ToolError};
use tokio_util::sync::CancellationToken;

use super::decode::TextDecoder;
use super::lines::{LineCollector, LineReport};
use crate::fs::read_state::StreamHasher;
use crate::tools::text::Encoding;
use crate::tools::text::legacy::{self, Survey, Verdict, name};

/// A file read again in its legacy encoding.
pub(super) struct Reread {
    /// The lines, decoded.
    pub(super) report: LineReport,
    /// The hash of the bytes decoded (the stamp's).
    pub(super) hash: u128,
    /// The first line of the output: the encoding, and whether it is a
    /// guess.
    pub(super) note: String,
}

/// Reads `file` again from its start in the legacy encoding it is most
/// likely in; `None` when it is not text in that encoding either (then
/// the first pass's lossy lines stand).
pub(super) fn reread(
    file: &mut File,
    offset: u64,
    limit: u64,
    anchors: bool,
    token: &CancellationToken,
    cannot: &dyn Fn(io::Error) -> ToolError,
) -> Result<Option<Reread>, ToolError> {
    let mut survey = Survey::new();
    each_chunk(file, token, cannot, &mut |chunk| survey.feed(chunk))?;
    let surveyed = survey.finish();

    let mut lines = LineCollector::new(offset, limit);
    if anchors {
        lines = lines.with_anchors();
    }
    let mut hasher = StreamHasher::new();
    let mut text = TextDecoder::new(Encoding::Legacy(surveyed.guess));
    each_chunk(file, token, cannot, &mut |chunk| {
        hasher.update(chunk);
        text.feed(chunk, false, &mut lines);
    })?;
    text.feed(&[], true, &mut lines);
    let Some(trial) = text.trial() else {
        return Ok(None);
    };
    let note = match surveyed.verdict(trial) {
        Verdict::Sure(charset) => format!("(file is {}; shown as UTF-8)", name(charset)),
        Verdict::Unsure(charset, doubt) => format!(
            "(file is probably {name}, but that is a guess: {reason}; shown as UTF-8 from that guess. It cannot be changed with edit, multi_edit, apply_patch or write until it is converted to UTF-8.)",
            name = name(charset),
            reason = doubt.reason(charset),
        ),
        Verdict::NotText => return Ok(None),
    };
    Ok(Some(Reread {
        report: lines.finish(),
        hash: hasher.finish().0,
        note,
    }))
}

/// Every chunk of `file` from its start; cancelled when the call is.
fn each_chunk(
    file: &mut File,
    token: &CancellationToken,
    cannot: &dyn Fn(io::Error) -> ToolError,
    each: &mut dyn FnMut(&[u8]),
) -> Result<(), ToolError> {
    legacy::each_chunk(file, &|| token.is_cancelled(), each).map_err(|e| {
        if token.is_cancelled() {
            ToolError::cancelled(vec![Content::text("Read cancelled.")])
        } else {
            cannot(e)
        }
    })
}
