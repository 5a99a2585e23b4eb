//! Output streamed as progress updates, at most about ten a second.

use std::collections::VecDeque;
use std::time::Duration;

use agentcore_stages::ProgressReporter;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::time::Instant;

/// The least time between two updates.
pub(crate) const INTERVAL: Duration = Duration::from_millis(100);

/// Bytes of new output one update carries at most (the latest ones).
const MAX_BYTES: usize = 4096;

/// One update of a running command's output, as the payload of its
/// `ToolExecUpdate { kind: progress }` event: read it back with
/// `BashProgress::deserialize(&payload)`. On the wire it is `{"output":
/// TEXT, "omitted_bytes": N, "total_bytes": T, "total_lines": L}`.
///
/// A payload with any other field is not one: readers that take progress
/// from every tool show such a payload their generic way (its `text`
/// first).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct BashProgress {
    /// The output since the previous update: its last 4 KiB, cut back to a
    /// character boundary.
    pub output: String,
    /// Bytes of that output left out before `output`.
    pub omitted_bytes: u64,
    /// Bytes of output so far.
    pub total_bytes: u64,
    /// Lines of output so far.
    pub total_lines: u64,
}

/// Collects output between updates and reports it, throttled, as
/// [`BashProgress`].
#[derive(Debug)]
pub(crate) struct Progress {
    reporter: ProgressReporter,
    pending: VecDeque<u8>,
    /// Bytes since the last update that did not fit in `pending`.
    skipped: u64,
    /// A character cut by a chunk boundary, kept for the next update.
    carry: Vec<u8>,
    last: Option<Instant>,
    /// False once the call has ended: reports are refused from then on.
    live: bool,
}

impl Progress {
    pub(crate) fn new(reporter: ProgressReporter) -> Self {
        Self {
            reporter,
            pending: VecDeque::new(),
            skipped: 0,
            carry: Vec::new(),
            last: None,
            live: true,
        }
    }

    /// Takes new output.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        if !self.live {
            return;
        }
        let keep = bytes.len().min(MAX_BYTES);
        let dropped_new = bytes.len() - keep;
        let overflow = (self.pending.len() + keep).saturating_sub(MAX_BYTES);
        self.skipped += (dropped_new + overflow) as u64;
        self.pending.drain(..overflow);
        self.pending.extend(&bytes[bytes.len() - keep..]);
    }

    /// When the next update is due, if there is output waiting.
    pub(crate) fn due(&self) -> Option<Instant> {
        if !self.live || (self.pending.is_empty() && self.carry.is_empty()) {
            return None;
        }
        Some(self.last.map_or_else(Instant::now, |t| t + INTERVAL))
    }

    /// Reports what is waiting, with the totals so far.
    pub(crate) fn flush(&mut self, total_bytes: u64, total_lines: u64) {
        if !self.live {
            return;
        }
        let mut bytes = std::mem::take(&mut self.carry);
        if self.skipped > 0 {
            // The ring cut the front; start at a character boundary.
            bytes.clear();
            let lead = self
                .pending
                .iter()
                .take(3)
                .take_while(|b| (0x80..0xC0).contains(*b))
                .count();
            self.pending.drain(..lead);
        }
        bytes.extend(self.pending.drain(..));
        let cut = incomplete_suffix_len(&bytes);
        self.carry = bytes.split_off(bytes.len() - cut);
        let payload = BashProgress {
            output: String::from_utf8_lossy(&bytes).into_owned(),
            omitted_bytes: self.skipped,
            total_bytes,
            total_lines,
        };
        self.skipped = 0;
        self.last = Some(Instant::now());
        self.live = self
            .reporter
            .report(serde_json::to_value(payload).unwrap_or(Value::Null));
    }
}

/// How many bytes at the end of `bytes` begin a UTF-8 character that is not
/// complete yet.
fn incomplete_suffix_len(bytes: &[u8]) -> usize {
    let start = bytes.len().saturating_sub(3);
    for (i, b) in bytes[start..].iter().enumerate() {
        let width = match b {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => continue,
        };
        let have = bytes.len() - start - i;
        if have < width {
            return have;
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentcore_stages::{CallContext, Event, EventSink};

    #[test]
    fn incomplete_characters_wait_for_the_next_update() {
        let e = "é".as_bytes();
        assert_eq!(incomplete_suffix_len(b"abc"), 0);
        assert_eq!(incomplete_suffix_len(&[b'a', e[0]]), 1);
        assert_eq!(incomplete_suffix_len(&[b'a', e[0], e[1]]), 0);
        assert_eq!(incomplete_suffix_len(&[0xF0, 0x9F, 0x98]), 3);
    }

    #[tokio::test]
    async fn updates_carry_the_latest_output_and_totals() {
        let (sink, mut rx) = EventSink::channel();
        let cx = CallContext::for_test("p", sink);
        let mut p = Progress::new(cx.progress());
        let e = "é".as_bytes();
        p.push(b"hello ");
        p.push(&e[..1]);
        assert!(p.due().is_some());
        p.flush(7, 1);
        p.push(&e[1..]);
        p.flush(8, 1);
        let mut outputs = Vec::new();
        while let Ok(event) = rx.try_recv() {
            if let Event::ToolExecUpdate { payload, .. } = event {
                outputs.push(BashProgress::deserialize(&payload).unwrap().output);
            }
        }
        assert_eq!(outputs, ["hello ", "é"]);
    }

    /// The payload keeps the wire format the untyped map had, byte for
    /// byte, and reads back.
    #[test]
    fn the_update_is_the_same_json_as_before() {
        let update = BashProgress {
            output: "step 1\n\"é\"".into(),
            omitted_bytes: 3,
            total_bytes: 4100,
            total_lines: 12,
        };
        let value = serde_json::to_value(&update).unwrap();
        let before = serde_json::json!({
            "output": "step 1\n\"é\"",
            "omitted_bytes": 3,
            "total_bytes": 4100,
            "total_lines": 12,
        });
        assert_eq!(value, before);
        assert_eq!(value.to_string(), before.to_string());
        assert_eq!(
            value.to_string(),
            r#"{"omitted_bytes":3,"output":"step 1\n\"é\"","total_bytes":4100,"total_lines":12}"#
        );
        assert_eq!(BashProgress::deserialize(&value).unwrap(), update);
        // Another shape is not an update.
        let mut other = before;
        other["text"] = "x".into();
        assert!(BashProgress::deserialize(&other).is_err());
    }

    #[test]
    fn a_flood_keeps_only_the_latest_bytes() {
        let cx = CallContext::for_test("p", EventSink::noop());
        let mut p = Progress::new(cx.progress());
        p.push(&vec![b'a'; 10_000]);
        p.push(b"end");
        assert_eq!(p.pending.len(), MAX_BYTES);
        assert_eq!(p.skipped, 10_003 - MAX_BYTES as u64);
    }
}
