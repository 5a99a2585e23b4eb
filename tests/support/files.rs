//! A scratch workspace with the read, edit, multi_edit, apply_patch, edit_lines and write tools over one ledger,
//! shared by the write and edit behaviour tests, and the small helpers of
//! the file tools' tests: results that must have succeeded or failed,
//! files to write, date or encode.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use agentcore::fs::read_state::FileReadState;
use agentcore::fs::workspace::Workspace;
use agentcore::stages::gate::gate_fn;
use agentcore::tools::apply_patch::ApplyPatchTool;
use agentcore::tools::edit::EditTool;
use agentcore::tools::edit::multi_edit::MultiEditTool;
use agentcore::tools::edit_lines::EditLinesTool;
use agentcore::tools::read::ReadTool;
use agentcore::tools::write::WriteTool;
use agentcore::{Call, Gate, Outcome, Pipeline, ToolRegistry, ToolResult};
use agentcore::{GateDecision, TypedTool};
use serde_json::{Value, json};
use tower::ServiceExt;

/// A temporary workspace and the session's ledger.
pub struct Env {
    pub dir: tempfile::TempDir,
    pub state: FileReadState,
    /// Whether `read` shows line anchors (as beside `edit_lines`).
    pub anchors: bool,
}

impl Env {
    pub fn new() -> Self {
        Self::at(tempfile::tempdir().unwrap())
    }

    pub fn at(dir: tempfile::TempDir) -> Self {
        Self {
            dir,
            state: FileReadState::new(),
            anchors: false,
        }
    }

    /// A workspace whose `read` shows line anchors, as in a session
    /// offering `edit_lines`.
    pub fn anchored() -> Self {
        Self {
            anchors: true,
            ..Self::new()
        }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.root().join(name)
    }

    pub fn put(&self, name: &str, bytes: impl AsRef<[u8]>) {
        let path = self.path(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, bytes).unwrap();
    }

    pub fn bytes(&self, name: &str) -> Vec<u8> {
        fs::read(self.path(name)).unwrap()
    }

    pub fn registry(&self) -> Arc<ToolRegistry> {
        let ws = Workspace::new(self.root()).unwrap();
        Arc::new(
            ToolRegistry::new()
                .with(
                    ReadTool::new(ws.clone(), self.state.clone())
                        .line_anchors(self.anchors)
                        .into_dyn(),
                )
                .unwrap()
                .with(EditTool::new(ws.clone(), self.state.clone()).into_dyn())
                .unwrap()
                .with(MultiEditTool::new(ws.clone(), self.state.clone()).into_dyn())
                .unwrap()
                .with(ApplyPatchTool::new(ws.clone(), self.state.clone()).into_dyn())
                .unwrap()
                .with(EditLinesTool::new(ws.clone(), self.state.clone()).into_dyn())
                .unwrap()
                .with(WriteTool::new(ws, self.state.clone()).into_dyn())
                .unwrap(),
        )
    }

    pub fn pipeline(&self, gate: Option<Arc<dyn Gate>>) -> Pipeline {
        match gate {
            Some(gate) => Pipeline::builder()
                .registry(self.registry())
                .gate(gate)
                .build(),
            None => Pipeline::builder().registry(self.registry()).build(),
        }
    }

    pub async fn call_with(
        &self,
        tool: &str,
        args: Value,
        gate: Option<Arc<dyn Gate>>,
    ) -> ToolResult {
        self.pipeline(gate)
            .service()
            .oneshot(Call::new("c1", tool, args))
            .await
            .unwrap()
    }

    pub async fn call(&self, tool: &str, args: Value) -> ToolResult {
        self.call_with(tool, args, None).await
    }

    pub async fn call_gated(&self, tool: &str, args: Value, gate: Arc<dyn Gate>) -> ToolResult {
        self.call_with(tool, args, Some(gate)).await
    }

    pub async fn read(&self, name: &str) {
        let r = self.call("read", json!({"file_path": name})).await;
        assert_eq!(r.outcome, Outcome::Success, "{}", r.text());
    }

    /// Reads `name` with anchors on: each shown line's anchor (`12:a3f`)
    /// and text, as the model sees them.
    pub async fn read_anchors(&self, name: &str) -> Vec<(String, String)> {
        assert!(self.anchors, "read_anchors needs Env::anchored()");
        let r = self.call("read", json!({"file_path": name})).await;
        assert_eq!(r.outcome, Outcome::Success, "{}", r.text());
        anchored_lines(&r.text())
    }

    /// An `edit_lines` call on `name`.
    pub async fn edit_lines(&self, name: &str, operations: Value) -> ToolResult {
        self.call(
            "edit_lines",
            json!({"file_path": name, "operations": operations}),
        )
        .await
    }

    pub async fn edit(&self, name: &str, old: &str, new: &str) -> ToolResult {
        self.call(
            "edit",
            json!({"file_path": name, "old_string": old, "new_string": new}),
        )
        .await
    }

    pub async fn write(&self, name: &str, content: &str) -> ToolResult {
        self.call("write", json!({"file_path": name, "content": content}))
            .await
    }

    /// A gate that allows the call, but only after writing `text` to `name`
    /// itself: someone changes the file while a person decides.
    pub fn gate_that_writes(&self, name: &str, text: &'static str) -> Arc<dyn Gate> {
        let path = self.path(name);
        Arc::new(gate_fn(move |_req| {
            let path = path.clone();
            async move {
                fs::write(&path, text).unwrap();
                Ok(GateDecision::Allow)
            }
        }))
    }
}

/// The lines of anchored `read` output (or of an edit_lines message that
/// shows lines): each `    N:HHH\ttext` as (`N:HHH`, text); other lines
/// skipped.
pub fn anchored_lines(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|line| {
            let (head, body) = line.split_once('\t')?;
            let head = head.trim_start();
            let (n, h) = head.split_once(':')?;
            let ok = !n.is_empty()
                && n.bytes().all(|b| b.is_ascii_digit())
                && h.len() == 3
                && h.bytes().all(|b| b.is_ascii_hexdigit());
            ok.then(|| (head.to_owned(), body.to_owned()))
        })
        .collect()
}

/// The text of a result that succeeded.
pub fn ok(r: &ToolResult) -> String {
    assert_eq!(r.outcome, Outcome::Success, "{}", r.text());
    r.text()
}

/// The text of a result that succeeded with no error code.
pub fn ok_no_error_code(r: &ToolResult) -> String {
    assert_eq!(r.outcome, Outcome::Success, "{}", r.text());
    assert_eq!(r.error_code, None);
    r.text()
}

/// The text of a result that failed with error code `code`.
pub fn refused(r: &ToolResult, code: i64) -> String {
    assert_eq!(r.outcome, Outcome::Failed, "{}", r.text());
    assert_eq!(r.error_code, Some(code), "{}", r.text());
    r.text()
}

/// A result that failed with error code `code`, saying exactly `message`.
pub fn refused_saying(r: &ToolResult, code: i64, message: &str) {
    assert_eq!(r.outcome, Outcome::Failed, "{}", r.text());
    assert_eq!(r.error_code, Some(code), "{}", r.text());
    assert_eq!(r.text(), message);
}

/// `line I` for each I of `range`, one a line.
pub fn numbered(range: std::ops::RangeInclusive<usize>) -> String {
    range.map(|i| format!("line {i}\n")).collect()
}

/// `s` in UTF-16LE with its byte order mark.
pub fn utf16le(s: &str) -> Vec<u8> {
    let mut out = vec![0xFF, 0xFE];
    for u in s.encode_utf16() {
        out.extend_from_slice(&u.to_le_bytes());
    }
    out
}

/// Writes `root/name`, making its parents.
pub fn write(root: &Path, name: &str, body: impl AsRef<[u8]>) {
    let path = root.join(name);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, body).unwrap();
}

/// Sets `name`'s mtime to a fixed point `secs_ago` seconds before a fixed
/// base, so equal arguments give equal mtimes.
pub fn age(root: &Path, name: &str, secs_ago: u64) {
    let base = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    let f = File::options().write(true).open(root.join(name)).unwrap();
    f.set_modified(base - Duration::from_secs(secs_ago))
        .unwrap();
}
