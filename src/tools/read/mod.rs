//! The `read` tool: a file in `cat -n` form, a directory's entries, or an
//! image as a base64 block.
//!
//! A text file is streamed once, in 64 KiB chunks: the chunks are hashed
//! for the [`FileReadState`] stamp, decoded (UTF-8, or UTF-16 after a BOM),
//! checked for valid UTF-8, and split into lines of which only the shown
//! ones are kept. Memory is bounded by the output, not by the file, however
//! deep the offset.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::path::Path;
use std::time::SystemTime;

use agentcore_stages::{
    BoxFuture, CallContext, Content, GatedArgs, InterruptBehavior, Tool, ToolError, ToolOutput,
};
use base64::Engine as _;
use encoding_rs::{Decoder, UTF_16BE, UTF_16LE};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::beneath::list_dir;
use super::blocking::{bad_args, run_blocking};
use super::read_state::{FileReadState, ReadStamp, ShownLines, StreamHasher, hash_bytes};
use super::workspace::{Opened, Workspace};

/// Lines shown when the model gives no `limit`.
pub const DEFAULT_LIMIT: u64 = 2000;
/// Characters of one line shown before it is cut.
pub const MAX_LINE_CHARS: usize = 2000;
/// The largest output `read` returns; more is refused.
pub const MAX_OUTPUT_BYTES: usize = 256 * 1024;
/// The largest image `read` returns, in file bytes.
pub const MAX_IMAGE_BYTES: u64 = 5 * 1024 * 1024;
/// Entries of a directory listed at most.
pub const MAX_DIR_ENTRIES: usize = 1000;
/// A file with a NUL byte in this many first bytes is binary.
const SNIFF_BYTES: usize = 8 * 1024;
const CHUNK_BYTES: usize = 64 * 1024;
/// Bytes of one line kept: enough for [`MAX_LINE_CHARS`] characters.
const LINE_KEEP_BYTES: usize = MAX_LINE_CHARS * 4 + 4;

const DESCRIPTION: &str = "Reads a file from the workspace. Text comes back in `cat -n` form: each line \
prefixed by its 1-based number and a tab. By default up to 2000 lines from the start are shown; \
use `offset` (first line, 1-based) and `limit` (number of lines) to read other parts of a long \
file. Lines longer than 2000 characters are cut. Output over 256 KiB is refused: read a smaller \
range or use grep. A directory lists its entries (directories end in `/`). PNG, JPEG, GIF and \
WebP images are returned as images. Other binary files cannot be read. Paths may be absolute \
or relative to the workspace root. Read a file before editing or overwriting it.";

/// The `read` tool. Records what it shows in the session's
/// [`FileReadState`], so that `write` and `edit` can tell whether the
/// model has seen the file as it is.
///
/// ```
/// use agentcore::tools::{read::ReadTool, read_state::FileReadState, workspace::Workspace};
/// use agentcore::Tool;
///
/// let ws = Workspace::new(std::env::temp_dir()).unwrap();
/// let read = ReadTool::new(ws, FileReadState::new());
/// assert_eq!(read.label(), Some("Read File"));
/// ```
#[derive(Debug)]
pub struct ReadTool {
    workspace: Workspace,
    state: FileReadState,
    schema: Value,
}

impl ReadTool {
    /// A `read` tool confined to `workspace`, recording into `state`.
    pub fn new(workspace: Workspace, state: FileReadState) -> Self {
        let schema = json!({
            "type": "object",
            "properties": {
                "file_path": {
                    "type": "string",
                    "description": "The file or directory to read, absolute or relative to the workspace root."
                },
                "offset": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "The 1-based line number to start reading from. Give it only for files too long to read at once."
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "How many lines to read (default 2000). Give it only for files too long to read at once."
                }
            },
            "required": ["file_path"],
            "additionalProperties": false
        });
        Self {
            workspace,
            state,
            schema,
        }
    }
}

#[derive(Deserialize)]
struct ReadArgs {
    file_path: String,
    offset: Option<u64>,
    limit: Option<u64>,
}

impl Tool for ReadTool {
    fn name(&self) -> &str {
        "read"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn schema(&self) -> &Value {
        &self.schema
    }

    fn label(&self) -> Option<&str> {
        Some("Read File")
    }

    fn read_only(&self, _args: &Value) -> bool {
        true
    }

    fn concurrency_safe(&self, _args: &Value) -> Option<bool> {
        Some(true)
    }

    fn interrupt_behavior(&self, _args: &Value) -> InterruptBehavior {
        InterruptBehavior::Cancel
    }

    fn activity(&self, args: &Value) -> Option<String> {
        let path = args.get("file_path")?.as_str()?;
        Some(format!("Reading {}", shown_arg(&self.workspace, path)))
    }

    fn execute<'a>(
        &'a self,
        args: GatedArgs,
        cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let args: ReadArgs = args.parse().map_err(|e| bad_args("read", e))?;
            let workspace = self.workspace.clone();
            let state = self.state.clone();
            run_blocking(cx, move |token| read(&workspace, &state, &args, &token)).await
        })
    }
}

/// A path argument as a UI line shows it: relative when it is under the
/// root, as given otherwise. Purely lexical (no filesystem access).
pub(crate) fn shown_arg(workspace: &Workspace, path: &str) -> String {
    match Path::new(path).strip_prefix(workspace.root()) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.to_string_lossy().into_owned(),
        _ => path.to_owned(),
    }
}

fn read(
    workspace: &Workspace,
    state: &FileReadState,
    args: &ReadArgs,
    token: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let path = workspace
        .resolve(&args.file_path)
        .map_err(|e| ToolError::new(e.to_string()))?;
    let shown = workspace.display(&path);
    let cannot = |e: io::Error| ToolError::new(format!("Cannot read {shown}: {e}"));
    // Taken before opening: a write racing the read must look racy.
    let read_at = SystemTime::now();
    // Opened beneath the root's handle, typed first (a FIFO or device is
    // refused, never opened blocking), link-checked.
    let (mut file, meta) = match workspace.open_for_read(&path) {
        Ok(Opened::Dir(dir)) => return list_directory(&dir, &shown).map(ToolOutput::text),
        Ok(Opened::File(file, meta)) => (file, meta),
        Err(e) => return Err(ToolError::new(e.message(&shown, "read"))),
    };
    let head = read_head(&mut file, SNIFF_BYTES).map_err(cannot)?;

    if let Some(media_type) = image_type(&head) {
        if meta.len() > MAX_IMAGE_BYTES {
            return Err(ToolError::new(format!(
                "Image file {shown} is {:.1} MiB, over the 5 MiB limit for images; it cannot be read.",
                meta.len() as f64 / (1024.0 * 1024.0)
            )));
        }
        let mut bytes = head;
        file.read_to_end(&mut bytes).map_err(cannot)?;
        let stamp = ReadStamp::new(&meta, hash_bytes(&bytes), false, read_at);
        state.record(&path, stamp);
        let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
        return Ok(ToolOutput::blocks(vec![Content::image(media_type, data)]));
    }

    let (encoding, bom_len) = sniff_encoding(&head);
    if encoding == TextEncoding::Utf8 && memchr::memchr(0, &head).is_some() {
        return Err(ToolError::new(format!("Cannot read binary file {shown}")));
    }

    let offset = args.offset.unwrap_or(1).max(1);
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT).max(1);
    let mut lines = LineCollector::new(offset, limit);
    let mut hasher = StreamHasher::new();
    let mut text = TextDecoder::new(encoding);

    hasher.update(&head);
    text.feed(&head[bom_len..], false, &mut lines);
    let mut buf = vec![0u8; CHUNK_BYTES];
    loop {
        if token.is_cancelled() {
            return Err(ToolError::cancelled(vec![Content::text("Read cancelled.")]));
        }
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(cannot(e)),
        };
        hasher.update(&buf[..n]);
        text.feed(&buf[..n], false, &mut lines);
    }
    text.feed(&[], true, &mut lines);
    let valid_text = text.is_valid();
    let report = lines.finish();
    let (hash, _) = hasher.finish();

    // The stamp records which lines were shown in full; reads of the same
    // content add up in the ledger, so a read with offset/limit that shows
    // everything, or two reads of two halves, make a full stamp.
    let record = || {
        let shown = shown_lines(offset, &report);
        state.record(&path, ReadStamp::of_lines(&meta, hash, shown, read_at));
    };

    if report.total_lines == 0 {
        record();
        return Ok(ToolOutput::text(
            "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>",
        ));
    }
    if offset > report.total_lines {
        record();
        return Ok(ToolOutput::text(format!(
            "<system-reminder>Warning: the file exists but is shorter than the provided offset ({offset}). The file has {} lines.</system-reminder>",
            report.total_lines
        )));
    }

    let mut out_len = report.body_len;
    let note = (!valid_text).then_some(INVALID_TEXT_NOTE);
    if let Some(note) = note {
        out_len += note.len() + 1;
    }
    let last_shown = offset + report.shown - 1;
    let more = (last_shown < report.total_lines).then(|| {
        format!(
            "(File has {} lines; showed {offset}–{last_shown}. Use offset and limit to read more.)",
            report.total_lines
        )
    });
    if let Some(more) = &more {
        out_len += more.len() + 1;
    }
    if out_len > MAX_OUTPUT_BYTES {
        return Err(ToolError::new(format!(
            "File content ({} KiB) exceeds maximum allowed size (256 KiB). Use offset and limit parameters to read specific portions of the file, or use grep to search for specific content.",
            out_len.div_ceil(1024)
        )));
    }
    record();

    let mut out = String::with_capacity(out_len);
    if let Some(note) = note {
        out.push_str(note);
        out.push('\n');
    }
    out.push_str(&report.body);
    if let Some(more) = more {
        out.push('\n');
        out.push_str(&more);
    }
    Ok(ToolOutput::text(out))
}

/// The lines a read starting at `offset` showed in full: the shown range
/// without the lines cut at [`MAX_LINE_CHARS`].
fn shown_lines(offset: u64, report: &LineReport) -> ShownLines {
    let mut shown = ShownLines::new(report.total_lines);
    if report.shown == 0 {
        return shown;
    }
    let last = offset + report.shown - 1;
    let mut start = offset;
    for &cut in &report.cut {
        if cut > start {
            shown.add(start, cut - 1);
        }
        start = cut + 1;
    }
    if start <= last {
        shown.add(start, last);
    }
    shown
}

/// The first line of a file that is not valid text.
const INVALID_TEXT_NOTE: &str = "(Note: this file is not valid UTF-8 or UTF-16 text; invalid bytes are shown as \u{FFFD}. It cannot be edited with the edit tool.)";

fn read_head(file: &mut File, n: usize) -> io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(n);
    file.by_ref().take(n as u64).read_to_end(&mut head)?;
    Ok(head)
}

fn image_type(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if head.starts_with(b"\xFF\xD8\xFF") {
        Some("image/jpeg")
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TextEncoding {
    Utf8,
    Utf16Le,
    Utf16Be,
}

/// The encoding a BOM announces (UTF-8 without one) and the BOM's length.
fn sniff_encoding(head: &[u8]) -> (TextEncoding, usize) {
    if head.starts_with(b"\xEF\xBB\xBF") {
        (TextEncoding::Utf8, 3)
    } else if head.starts_with(b"\xFF\xFE") {
        (TextEncoding::Utf16Le, 2)
    } else if head.starts_with(b"\xFE\xFF") {
        (TextEncoding::Utf16Be, 2)
    } else {
        (TextEncoding::Utf8, 0)
    }
}

/// Turns raw chunks into UTF-8-ish bytes for the line collector and tells
/// whether the whole file was valid text.
enum TextDecoder {
    Utf8 {
        /// An incomplete UTF-8 sequence at the end of the last chunk.
        carry: Vec<u8>,
        valid: bool,
    },
    Utf16 {
        decoder: Box<Decoder>,
        out: String,
        valid: bool,
    },
}

impl TextDecoder {
    fn new(encoding: TextEncoding) -> Self {
        match encoding {
            TextEncoding::Utf8 => TextDecoder::Utf8 {
                carry: Vec::new(),
                valid: true,
            },
            TextEncoding::Utf16Le | TextEncoding::Utf16Be => {
                let enc = if encoding == TextEncoding::Utf16Le {
                    UTF_16LE
                } else {
                    UTF_16BE
                };
                TextDecoder::Utf16 {
                    decoder: Box::new(enc.new_decoder_without_bom_handling()),
                    out: String::new(),
                    valid: true,
                }
            }
        }
    }

    fn feed(&mut self, chunk: &[u8], last: bool, lines: &mut LineCollector) {
        match self {
            TextDecoder::Utf8 { carry, valid } => {
                if *valid {
                    check_utf8(carry, chunk, last, valid);
                }
                lines.feed(chunk);
            }
            TextDecoder::Utf16 {
                decoder,
                out,
                valid,
            } => {
                out.clear();
                let need = decoder
                    .max_utf8_buffer_length(chunk.len())
                    .unwrap_or(chunk.len() * 3 + 16);
                out.reserve(need);
                let (_, _, replaced) = decoder.decode_to_string(chunk, out, last);
                if replaced {
                    *valid = false;
                }
                lines.feed(out.as_bytes());
            }
        }
    }

    fn is_valid(&self) -> bool {
        match self {
            TextDecoder::Utf8 { valid, .. } | TextDecoder::Utf16 { valid, .. } => *valid,
        }
    }
}

/// Streaming UTF-8 validation: `carry` holds a sequence cut by the chunk
/// boundary (at most 3 bytes).
fn check_utf8(carry: &mut Vec<u8>, chunk: &[u8], last: bool, valid: &mut bool) {
    let mut rest = chunk;
    if !carry.is_empty() {
        // Complete the cut sequence with up to 3 bytes of this chunk.
        let had = carry.len();
        let take = rest.len().min(4 - had);
        carry.extend_from_slice(&rest[..take]);
        match std::str::from_utf8(carry) {
            Ok(_) => rest = &rest[take..],
            // The cut character is complete (it starts at 0, so the valid
            // prefix covers it and reaches into this chunk).
            Err(e) if e.valid_up_to() > 0 => rest = &rest[e.valid_up_to() - had..],
            // Still incomplete: this chunk was too short to finish it.
            Err(e) if e.error_len().is_none() && !last => return,
            Err(_) => {
                *valid = false;
                return;
            }
        }
        carry.clear();
    }
    match std::str::from_utf8(rest) {
        Ok(_) => {}
        Err(e) if e.error_len().is_none() && !last => {
            carry.extend_from_slice(&rest[e.valid_up_to()..]);
        }
        Err(_) => *valid = false,
    }
    if last && !carry.is_empty() {
        *valid = false;
    }
}

/// What the collector gathered: the shown lines in `cat -n` form.
struct LineReport {
    body: String,
    /// Bytes the body would have had, kept or not (the body stops growing
    /// past the output cap).
    body_len: usize,
    shown: u64,
    total_lines: u64,
    any_cut: bool,
    /// The numbers of the shown lines that were cut, ascending.
    cut: Vec<u64>,
}

/// Splits decoded bytes into lines, keeping only lines `offset ..
/// offset + limit`, each cut at [`MAX_LINE_CHARS`]; all others are only
/// counted.
struct LineCollector {
    first: u64,
    last: u64,
    /// The 1-based number of the line being read.
    line_no: u64,
    /// Whether the current line has any bytes yet (a final line without a
    /// newline still counts).
    open: bool,
    kept: Vec<u8>,
    /// Characters of the current line beyond `kept`.
    extra_chars: usize,
    last_byte_cr: bool,
    report: LineReport,
}

impl LineCollector {
    fn new(offset: u64, limit: u64) -> Self {
        Self {
            first: offset,
            last: offset.saturating_add(limit - 1),
            line_no: 1,
            open: false,
            kept: Vec::new(),
            extra_chars: 0,
            last_byte_cr: false,
            report: LineReport {
                body: String::new(),
                body_len: 0,
                shown: 0,
                total_lines: 0,
                any_cut: false,
                cut: Vec::new(),
            },
        }
    }

    fn in_range(&self) -> bool {
        self.line_no >= self.first && self.line_no <= self.last
    }

    fn feed(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            if !self.in_range() {
                // Outside the range: count newlines until the range starts.
                if self.line_no < self.first {
                    let need = (self.first - self.line_no) as usize;
                    let mut seen = 0usize;
                    let mut cut = None;
                    for i in memchr::memchr_iter(b'\n', bytes) {
                        seen += 1;
                        if seen == need {
                            cut = Some(i + 1);
                            break;
                        }
                    }
                    self.line_no += seen as u64;
                    match cut {
                        Some(at) => {
                            self.open = false;
                            bytes = &bytes[at..];
                        }
                        None => {
                            self.open = !bytes.ends_with(b"\n");
                            return;
                        }
                    }
                } else {
                    let n = memchr::memchr_iter(b'\n', bytes).count();
                    self.line_no += n as u64;
                    self.open = !bytes.ends_with(b"\n");
                    return;
                }
                continue;
            }
            self.open = true;
            match memchr::memchr(b'\n', bytes) {
                Some(i) => {
                    self.keep(&bytes[..i]);
                    self.end_line();
                    bytes = &bytes[i + 1..];
                }
                None => {
                    self.keep(bytes);
                    return;
                }
            }
        }
    }

    fn keep(&mut self, part: &[u8]) {
        if part.is_empty() {
            return;
        }
        let room = LINE_KEEP_BYTES.saturating_sub(self.kept.len());
        let (kept, rest) = part.split_at(part.len().min(room));
        self.kept.extend_from_slice(kept);
        self.extra_chars += rest.iter().filter(|&&b| (b as i8) >= -0x40).count();
        self.last_byte_cr = part.last() == Some(&b'\r');
    }

    fn end_line(&mut self) {
        let mut extra = self.extra_chars;
        let mut kept = std::mem::take(&mut self.kept);
        if self.last_byte_cr {
            // CRLF: show the line without its CR.
            if extra > 0 {
                extra -= 1;
            } else {
                kept.pop();
            }
        }
        let text = String::from_utf8_lossy(&kept);
        let chars = text.chars().count() + extra;
        let line_no = self.line_no;
        let r = &mut self.report;
        let sep = usize::from(r.shown > 0);
        let mut line = String::new();
        if chars > MAX_LINE_CHARS {
            r.any_cut = true;
            r.cut.push(line_no);
            let cut: String = text.chars().take(MAX_LINE_CHARS).collect();
            line.push_str(&cut);
            line.push_str(&format!(" [… {} more characters]", chars - MAX_LINE_CHARS));
        } else {
            line.push_str(&text);
        }
        let entry = format!("{line_no:>6}\t{line}");
        r.body_len += sep + entry.len();
        if r.body_len <= MAX_OUTPUT_BYTES {
            if sep == 1 {
                r.body.push('\n');
            }
            r.body.push_str(&entry);
        }
        r.shown += 1;
        self.extra_chars = 0;
        self.last_byte_cr = false;
        self.line_no += 1;
        self.open = false;
    }

    fn finish(mut self) -> LineReport {
        if self.open && self.in_range() {
            self.end_line();
        } else if self.open {
            self.line_no += 1;
        }
        self.report.total_lines = self.line_no - 1;
        self.report
    }
}

fn list_directory(dir: &OwnedFd, shown: &str) -> Result<String, ToolError> {
    let cannot = |e: io::Error| ToolError::new(format!("Cannot read directory {shown}: {e}"));
    let mut entries = Vec::new();
    for (name, is_dir) in list_dir(dir).map_err(cannot)? {
        let mut name = name.to_string_lossy().into_owned();
        if is_dir {
            name.push('/');
        }
        entries.push(name);
    }
    if entries.is_empty() {
        return Ok(format!("Directory {shown} is empty."));
    }
    entries.sort();
    let total = entries.len();
    entries.truncate(MAX_DIR_ENTRIES);
    let mut out = entries.join("\n");
    if total > MAX_DIR_ENTRIES {
        out.push_str(&format!(
            "\n(Directory has {total} entries; showed the first {MAX_DIR_ENTRIES}. Use glob or ls with a pattern to narrow the listing.)"
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(input: &[&[u8]], offset: u64, limit: u64) -> LineReport {
        let mut c = LineCollector::new(offset, limit);
        for chunk in input {
            c.feed(chunk);
        }
        c.finish()
    }

    #[test]
    fn lines_split_across_chunks() {
        let r = collect(&[b"ab", b"c\nde", b"f\n", b"g"], 1, 10);
        assert_eq!(r.body, "     1\tabc\n     2\tdef\n     3\tg");
        assert_eq!(r.total_lines, 3);
    }

    #[test]
    fn offset_and_limit_count_all_lines() {
        let r = collect(&[b"1\n2\n3\n4\n5\n"], 2, 2);
        assert_eq!(r.body, "     2\t2\n     3\t3");
        assert_eq!((r.shown, r.total_lines), (2, 5));
        let r = collect(&[b"1\n", b"2\n3", b"\n4"], 4, 9);
        assert_eq!(r.body, "     4\t4");
        assert_eq!(r.total_lines, 4);
    }

    #[test]
    fn crlf_is_shown_without_cr() {
        let r = collect(&[b"a\r\nb\r", b"\n"], 1, 10);
        assert_eq!(r.body, "     1\ta\n     2\tb");
    }

    #[test]
    fn long_lines_are_cut_with_the_count() {
        let line = "é".repeat(MAX_LINE_CHARS + 5000);
        let r = collect(&[line.as_bytes()], 1, 10);
        assert!(r.body.ends_with(" [… 5000 more characters]"));
        assert!(r.any_cut);
    }

    #[test]
    fn utf8_validation_across_chunk_boundaries() {
        let text = "añb€c😀d".as_bytes();
        for cut in 0..text.len() {
            let mut carry = Vec::new();
            let mut valid = true;
            check_utf8(&mut carry, &text[..cut], false, &mut valid);
            check_utf8(&mut carry, &text[cut..], false, &mut valid);
            check_utf8(&mut carry, &[], true, &mut valid);
            assert!(valid, "cut at {cut}");
        }
        for cut in 0..4 {
            let bad = b"ab\xFFcd";
            let mut carry = Vec::new();
            let mut valid = true;
            check_utf8(&mut carry, &bad[..cut], false, &mut valid);
            check_utf8(&mut carry, &bad[cut..], false, &mut valid);
            check_utf8(&mut carry, &[], true, &mut valid);
            assert!(!valid, "cut at {cut}");
        }
        let mut carry = Vec::new();
        let mut valid = true;
        check_utf8(&mut carry, b"a\xE2\x82", false, &mut valid);
        check_utf8(&mut carry, &[], true, &mut valid);
        assert!(!valid, "truncated sequence at the end");
    }

    #[test]
    fn byte_by_byte_validation() {
        let text = "x€😀ñ".as_bytes();
        let mut carry = Vec::new();
        let mut valid = true;
        for b in text {
            check_utf8(&mut carry, std::slice::from_ref(b), false, &mut valid);
        }
        check_utf8(&mut carry, &[], true, &mut valid);
        assert!(valid);
    }

    #[test]
    fn shown_lines_leave_out_cut_lines() {
        let wide = "x".repeat(MAX_LINE_CHARS + 1);
        let text = format!("a\n{wide}\nb\n{wide}\nc\n");
        let r = collect(&[text.as_bytes()], 1, 10);
        assert_eq!(r.cut, [2, 4]);
        assert_eq!(shown_lines(1, &r).ranges(), &[(1, 1), (3, 3), (5, 5)]);
        let r = collect(&[text.as_bytes()], 2, 2);
        assert_eq!(shown_lines(2, &r).ranges(), &[(3, 3)]);
        let r = collect(&[text.as_bytes()], 9, 2);
        assert!(shown_lines(9, &r).ranges().is_empty());
        let r = collect(&[b"1\n2\n3\n"], 2, 5);
        let shown = shown_lines(2, &r);
        assert_eq!((shown.ranges(), shown.total()), (&[(2, 3)][..], 3));
    }

    #[test]
    fn image_magic_bytes() {
        assert_eq!(image_type(b"\x89PNG\r\n\x1a\n...."), Some("image/png"));
        assert_eq!(image_type(b"\xFF\xD8\xFF\xE0"), Some("image/jpeg"));
        assert_eq!(image_type(b"GIF89a.."), Some("image/gif"));
        assert_eq!(image_type(b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
        assert_eq!(image_type(b"RIFF\0\0\0\0WAVE"), None);
    }
}
