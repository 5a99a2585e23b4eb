//! The `read` tool: a file in `cat -n` form, a directory's entries, or an
//! image as a base64 block.
//!
//! A text file is streamed once, in 64 KiB chunks: the chunks are hashed
//! for the [`FileReadState`] stamp, decoded (UTF-8, or UTF-16 after a BOM),
//! checked for valid UTF-8, and split into lines of which only the shown
//! ones are kept. Memory is bounded by the output, not by the file, however
//! deep the offset. A file that turns out not to be UTF-8 (and has no BOM)
//! is streamed twice more: once to guess its legacy encoding, once to
//! decode it with the guess (the first line of the output names it).

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::sync::LazyLock;
use std::time::SystemTime;

use agentcore_stages::TypedTool;
use agentcore_stages::{
    CallContext, Content, Extensions, InterruptBehavior, ToolError, ToolOutput,
};
use base64::Engine as _;
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::schema::builtin_args;
use super::text::Encoding;
use crate::access::{Access, Permissions};
use crate::fs::beneath::list_dir;
use crate::fs::blocking::run_blocking;
use crate::fs::file_tool::{cannot_read, read_denied_text};
use crate::fs::read_state::{FileReadState, ReadStamp, StreamHasher, hash_bytes};
use crate::fs::workspace::{Opened, Workspace};
use crate::limits::read::{
    DEFAULT_LIMIT, MAX_DIR_ENTRIES, MAX_IMAGE_BYTES, MAX_LINE_CHARS, MAX_OUTPUT_BYTES,
    default_limit,
};
use crate::tools::spec::ToolSpec;
use decode::TextDecoder;
use lines::{LineCollector, shown_lines};

mod decode;
mod legacy;
mod lines;

/// A file with a NUL byte in this many first bytes is binary.
const SNIFF_BYTES: usize = 8 * KIB;
const CHUNK_BYTES: usize = 64 * KIB;
const KIB: usize = 1024;
const MIB: usize = 1024 * KIB;

static DESCRIPTION: LazyLock<String> = LazyLock::new(|| {
    format!(
        "Reads a file from the workspace. Text comes back in `cat -n` form: each line \
prefixed by its 1-based number and a tab. By default up to {DEFAULT_LIMIT} lines from the start are shown; \
use `offset` (first line, 1-based) and `limit` (number of lines) to read other parts of a long \
file. Lines longer than {MAX_LINE_CHARS} characters are cut. Output over {} KiB is refused: read a smaller \
range or use grep. A directory lists its entries (directories end in `/`). PNG, JPEG, GIF and \
WebP images are returned as images. Other binary files cannot be read. Paths may be absolute \
or relative to the workspace root. Read a file before editing or overwriting it.",
        MAX_OUTPUT_BYTES / KIB
    )
});

/// The description when `read` shows line anchors (a session offering
/// `edit_lines`): the same, with the anchor in the line layout.
static DESCRIPTION_ANCHORED: LazyLock<String> = LazyLock::new(|| {
    DESCRIPTION.replacen(
        "each line \
prefixed by its 1-based number and a tab.",
        "each line \
prefixed by its 1-based number, a colon, a 3-hex-digit hash of the line and a tab (`12:a3f` is \
the line's anchor for edit_lines).",
        1,
    )
});

/// The `read` tool's identity: its name, label, Claude Code name and path argument.
pub const SPEC: ToolSpec = ToolSpec::new("read", "Read File")
    .claude_code("Read")
    .path_fields(crate::tools::spec::path_fields!(ReadArgs: file_path));

/// The arguments of `read`. The field docs are the descriptions the model
/// reads.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(transform = builtin_args)]
pub struct ReadArgs {
    /// The file or directory to read, absolute or relative to the workspace root.
    pub file_path: String,
    /// The 1-based line number to start reading from. Give it only for files too long to read at once.
    #[schemars(range(min = 1))]
    pub offset: Option<u64>,
    #[doc = concat!("How many lines to read (default ", default_limit!(), "). Give it only for files too long to read at once.")]
    #[schemars(range(min = 1))]
    pub limit: Option<u64>,
}

/// What a call of `read` touches: a read of `file_path`.
///
/// ```
/// use agentcore::access::Capability;
/// use serde_json::json;
///
/// let access = agentcore::tools::read::permissions().describe(&json!({"file_path": "src/lib.rs"}));
/// assert_eq!((access.capability, access.paths), (Capability::Read, vec!["src/lib.rs".to_owned()]));
/// ```
pub fn permissions() -> Permissions {
    Permissions::typed(|args: &ReadArgs| Access::read([args.file_path.as_str()]))
}

/// The `read` tool. Records what it shows in the session's
/// [`FileReadState`], so that `write` and `edit` can tell whether the
/// model has seen the file as it is.
///
/// ```
/// use agentcore::fs::{read_state::FileReadState, workspace::Workspace};
/// use agentcore::tools::read::ReadTool;
/// use agentcore::TypedTool;
///
/// let ws = Workspace::new(std::env::temp_dir()).unwrap();
/// let read = ReadTool::new(ws, FileReadState::new());
/// assert_eq!(read.label(), Some("Read File"));
/// let read = read.into_dyn();
/// assert_eq!(read.name(), "read");
/// ```
#[derive(Debug)]
pub struct ReadTool {
    workspace: Workspace,
    state: FileReadState,
    anchors: bool,
}

impl ReadTool {
    /// A `read` tool confined to `workspace`, recording into `state`.
    pub fn new(workspace: Workspace, state: FileReadState) -> Self {
        Self {
            workspace,
            state,
            anchors: false,
        }
    }

    /// The same tool, showing each line's anchor for `edit_lines` after
    /// its number (`    12:a3f\t    return x`) when `on`; a session turns
    /// it on when `edit_lines` is among its tools.
    /// [`edit_lines::anchor`](crate::tools::edit_lines::anchor) says what
    /// the hash is.
    pub fn line_anchors(mut self, on: bool) -> Self {
        self.anchors = on;
        self
    }
}

impl TypedTool for ReadTool {
    type Args = ReadArgs;

    fn name(&self) -> &str {
        SPEC.name
    }

    fn description(&self) -> &str {
        if self.anchors {
            &DESCRIPTION_ANCHORED
        } else {
            &DESCRIPTION
        }
    }

    async fn execute(&self, args: ReadArgs, cx: &CallContext) -> Result<ToolOutput, ToolError> {
        // The path as the gate judged it, when a gate did.
        let workspace = self.workspace.judged(cx.extensions().get());
        let state = self.state.clone();
        let anchors = self.anchors;
        run_blocking(cx, move |token| {
            read(&workspace, &state, &args, anchors, &token)
        })
        .await
    }

    fn label(&self) -> Option<&str> {
        Some(SPEC.label)
    }

    fn read_only(&self, _args: &ReadArgs) -> bool {
        true
    }

    fn always_read_only(&self) -> bool {
        true
    }

    fn concurrency_safe(&self, _args: &ReadArgs) -> Option<bool> {
        Some(true)
    }

    fn interrupt_behavior(&self, _args: &ReadArgs) -> InterruptBehavior {
        InterruptBehavior::Cancel
    }

    fn activity(&self, args: &ReadArgs) -> Option<String> {
        Some(format!(
            "Reading {}",
            self.workspace.shown_arg(&args.file_path)
        ))
    }

    fn extensions(&self) -> Extensions {
        permissions().into_extensions()
    }
}

fn read(
    workspace: &Workspace,
    state: &FileReadState,
    args: &ReadArgs,
    anchors: bool,
    token: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let path = workspace
        .resolve(&args.file_path)
        .map_err(|e| ToolError::new(e.to_string()))?;
    // Judged again where the file is opened: a read-deny rule holds for
    // whatever the path leads to now.
    if workspace.is_read_denied(&path) {
        return Err(ToolError::new(read_denied_text(&args.file_path, "reads")));
    }
    let shown = workspace.display(&path);
    let cannot = |e: io::Error| ToolError::new(cannot_read(&shown, &e));
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
                "Image file {shown} is {:.1} MiB, over the {} MiB limit for images; it cannot be read.",
                meta.len() as f64 / MIB as f64,
                MAX_IMAGE_BYTES / MIB as u64
            )));
        }
        let mut bytes = head;
        file.read_to_end(&mut bytes).map_err(cannot)?;
        let stamp = ReadStamp::new(&meta, hash_bytes(&bytes), false, read_at);
        state.record(&path, stamp);
        let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
        return Ok(ToolOutput::blocks(vec![Content::image(media_type, data)]));
    }

    let encoding = Encoding::sniff(&head);
    if encoding.is_utf8() && memchr::memchr(0, &head).is_some() {
        return Err(ToolError::new(format!("Cannot read binary file {shown}")));
    }

    let offset = args.offset.unwrap_or(1).max(1);
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT).max(1);
    let mut lines = LineCollector::new(offset, limit);
    if anchors {
        lines = lines.with_anchors();
    }
    let mut hasher = StreamHasher::new();
    let mut text = TextDecoder::new(encoding);

    hasher.update(&head);
    text.feed(&head[encoding.bom().len()..], false, &mut lines);
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
    // Not UTF-8 and no BOM: read again in the legacy encoding it is most
    // likely in, if it is text in that.
    let mut note = (!valid_text).then(|| INVALID_TEXT_NOTE.to_owned());
    let (report, hash) = match (valid_text, encoding) {
        (false, Encoding::Utf8) => {
            match legacy::reread(&mut file, offset, limit, anchors, token, &cannot)? {
                Some(reread) => {
                    note = Some(reread.note);
                    (reread.report, reread.hash)
                }
                None => (report, hash),
            }
        }
        _ => (report, hash),
    };

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
    if let Some(note) = &note {
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
            "File content ({} KiB) exceeds maximum allowed size ({} KiB). Use offset and limit parameters to read specific portions of the file, or use grep to search for specific content.",
            out_len.div_ceil(KIB),
            MAX_OUTPUT_BYTES / KIB
        )));
    }
    record();

    let mut out = String::with_capacity(out_len);
    if let Some(note) = &note {
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

/// The first line of a file that is not valid text (nor text in a legacy
/// encoding).
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
    use serde_json::json;

    use super::*;

    #[test]
    fn image_magic_bytes() {
        assert_eq!(image_type(b"\x89PNG\r\n\x1a\n...."), Some("image/png"));
        assert_eq!(image_type(b"\xFF\xD8\xFF\xE0"), Some("image/jpeg"));
        assert_eq!(image_type(b"GIF89a.."), Some("image/gif"));
        assert_eq!(image_type(b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
        assert_eq!(image_type(b"RIFF\0\0\0\0WAVE"), None);
    }

    #[test]
    fn the_anchored_description_names_the_anchor() {
        assert!(DESCRIPTION.contains("number and a tab."));
        assert!(DESCRIPTION_ANCHORED.contains("`12:a3f` is the line's anchor for edit_lines"));
        assert_ne!(*DESCRIPTION, *DESCRIPTION_ANCHORED);
    }

    #[test]
    fn a_call_reads_its_file_path() {
        let args = json!({"file_path": "src/lib.rs", "offset": 3, "limit": 10});
        assert_eq!(permissions().describe(&args), Access::read(["src/lib.rs"]));
        let ws = Workspace::new(std::env::temp_dir()).unwrap();
        let tool = ReadTool::new(ws, FileReadState::new()).into_dyn();
        assert_eq!(
            Permissions::of(tool.as_ref(), &args),
            Access::read(["src/lib.rs"])
        );
    }
}
