//! The `checkpoints` and `rewind` tools: offered only when named, only in a
//! session with checkpoints on; `checkpoints` lists what each call
//! changed; `rewind` puts an edited file back byte for byte, asks first in
//! the default mode, is recorded once, and with a conflict changes nothing
//! and says how to go on.

use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use agentcore::approval::{ApprovalAnswer, Mode, approver_fn};
use agentcore::checkpoint::CheckpointConfig;
use agentcore::error_code::ErrorCode;
use agentcore::message::ToolCall;
use agentcore::sandbox::SandboxPolicy;
use agentcore::session::{Session, SessionConfig, SessionError};
use agentcore::tools::set::ToolSet;
use agentcore::{EventSink, Outcome, ToolResult};
use serde_json::{Value, json};

const TOOLS: &str = "read,edit,write,bash,checkpoints,rewind";

/// A session over `root` in `mode`, unconfined, with `tools`, recording
/// into `store`.
fn config(root: &Path, store: &Path, mode: Mode, tools: &str) -> SessionConfig {
    let mut config = SessionConfig::new(root);
    config.mode = Some(mode);
    config.sandbox = Some(SandboxPolicy::off());
    config.tools = tools.parse().unwrap();
    config.checkpoints = CheckpointConfig {
        store: Some(store.to_path_buf()),
        ..CheckpointConfig::default()
    };
    config
}

/// Runs one call and returns its result.
async fn run(session: &Session, id: &str, tool: &str, args: Value) -> ToolResult {
    let (sink, _events) = EventSink::channel();
    let mut turn = session
        .turn(sink)
        .run(vec![ToolCall::new(id, tool, args)])
        .await
        .unwrap();
    turn.results.remove(0)
}

/// Runs one call that must succeed; its text.
async fn ok(session: &Session, id: &str, tool: &str, args: Value) -> String {
    let result = run(session, id, tool, args).await;
    assert_eq!(
        result.outcome,
        Outcome::Success,
        "{tool} {id}: {}",
        result.text()
    );
    result.text()
}

fn names(session: &Session) -> Vec<String> {
    session
        .registry()
        .iter()
        .map(|e| e.tool().name().to_owned())
        .collect()
}

#[tokio::test]
async fn the_tools_are_offered_only_when_named() {
    let dir = tempfile::tempdir().unwrap();
    let store = tempfile::tempdir().unwrap();
    let mut by_default = config(dir.path(), store.path(), Mode::Default, "read");
    by_default.tools = ToolSet::default();
    let names_by_default = names(&Session::start(by_default).unwrap());
    assert!(
        !names_by_default
            .iter()
            .any(|n| n == "checkpoints" || n == "rewind"),
        "{names_by_default:?}"
    );
    let named =
        names(&Session::start(config(dir.path(), store.path(), Mode::Default, TOOLS)).unwrap());
    assert!(named.iter().any(|n| n == "checkpoints"), "{named:?}");
    assert!(named.iter().any(|n| n == "rewind"), "{named:?}");
}

#[tokio::test]
async fn naming_them_without_checkpoints_fails_saying_how_to_turn_them_on() {
    let dir = tempfile::tempdir().unwrap();
    for (tools, expected) in [
        (
            "read,rewind",
            "rewind works only with checkpoints on: add --checkpoints or a [checkpoints] table to the policy (library: SessionConfig::checkpoints), or leave rewind out of the tools",
        ),
        (
            "checkpoints,read,rewind",
            "checkpoints and rewind work only with checkpoints on: add --checkpoints or a [checkpoints] table to the policy (library: SessionConfig::checkpoints), or leave checkpoints and rewind out of the tools",
        ),
    ] {
        let config = SessionConfig::new(dir.path()).with_tools(tools.parse().unwrap());
        let err = Session::start(config).unwrap_err();
        assert!(matches!(err, SessionError::CheckpointsOff(_)), "{err:?}");
        assert_eq!(err.to_string(), expected);
    }
    // A store another session holds: the same tools, and why not.
    let store = tempfile::tempdir().unwrap();
    let _first = Session::start(config(dir.path(), store.path(), Mode::Default, "read")).unwrap();
    let err = Session::start(config(
        dir.path(),
        store.path(),
        Mode::Default,
        "read,rewind",
    ))
    .unwrap_err();
    assert!(
        err.to_string().starts_with(
            "rewind works only with checkpoints on, and they cannot be: the checkpoint store "
        ) && err
            .to_string()
            .ends_with("is in use by another agentcore session"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkpoints_lists_what_each_call_changed() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let store = tempfile::tempdir().unwrap();
    fs::write(root.join("a.txt"), "alpha\n").unwrap();
    let session = Session::start(config(&root, store.path(), Mode::Bypass, TOOLS)).unwrap();
    ok(&session, "r1", "read", json!({"file_path": "a.txt"})).await;
    ok(
        &session,
        "e1",
        "edit",
        json!({"file_path": "a.txt", "old_string": "alpha", "new_string": "ALPHA"}),
    )
    .await;
    ok(
        &session,
        "w1",
        "write",
        json!({"file_path": "sub/b.txt", "content": "bravo\n"}),
    )
    .await;
    let listed = ok(&session, "c1", "checkpoints", json!({})).await;
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(
        lines[..5],
        [
            "#1  turn 1  edit  Editing a.txt  (call e1)",
            "    modified a.txt",
            "#2  turn 1  write  Writing sub/b.txt  (call w1)",
            "    created folder sub",
            "    created sub/b.txt",
        ],
        "{listed}"
    );
    assert!(
        lines.iter().any(|l| l.starts_with("not recorded: ")),
        "{listed}"
    );
    // Listing is no checkpoint of its own.
    let listing = session.checkpoints().unwrap().unwrap();
    assert_eq!(listing.checkpoints.len(), 2, "{listing:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewind_puts_an_edited_file_back_byte_for_byte_and_is_recorded_once() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let store = tempfile::tempdir().unwrap();
    // CRLF, a tab, no newline at the end, not ASCII: what an edit must
    // not disturb and a rewind must bring back exactly.
    let original: &[u8] = "one\r\n\ttwo — ünï\r\nthree".as_bytes();
    fs::write(root.join("a.txt"), original).unwrap();
    let session = Session::start(config(&root, store.path(), Mode::Bypass, TOOLS)).unwrap();
    ok(&session, "r1", "read", json!({"file_path": "a.txt"})).await;
    ok(
        &session,
        "e1",
        "edit",
        json!({"file_path": "a.txt", "old_string": "two", "new_string": "TWO"}),
    )
    .await;
    ok(
        &session,
        "w1",
        "write",
        json!({"file_path": "new.txt", "content": "new\n"}),
    )
    .await;
    assert_ne!(fs::read(root.join("a.txt")).unwrap(), original);

    let report = ok(&session, "back", "rewind", json!({"call": "e1"})).await;
    assert_eq!(fs::read(root.join("a.txt")).unwrap(), original);
    assert!(!root.join("new.txt").exists());
    let lines: Vec<&str> = report.lines().collect();
    assert_eq!(
        lines[0],
        "Rewound to before checkpoint #1: 1 restored, 1 removed (undo this with a rewind to #3).",
        "{report}"
    );
    assert!(lines.contains(&"restored a.txt"), "{report}");
    assert!(lines.contains(&"removed new.txt"), "{report}");

    // One checkpoint for the rewind, the recorder's own.
    let listing = session.checkpoints().unwrap().unwrap();
    let tools: Vec<&str> = listing
        .checkpoints
        .iter()
        .map(|c| c.tool.as_str())
        .collect();
    assert_eq!(tools, ["edit", "write", "rewind"], "{listing:#?}");

    // The restored file must be read again before it is edited.
    let edit = run(
        &session,
        "e2",
        "edit",
        json!({"file_path": "a.txt", "old_string": "one", "new_string": "ONE"}),
    )
    .await;
    assert_eq!(edit.outcome, Outcome::Failed, "{}", edit.text());
    assert_eq!(edit.error_code, Some(ErrorCode::NotRead.into()));

    // And the rewind itself can be undone.
    ok(&session, "again", "rewind", json!({"to": 3})).await;
    assert_ne!(fs::read(root.join("a.txt")).unwrap(), original);
    assert_eq!(fs::read(root.join("new.txt")).unwrap(), b"new\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewind_asks_the_user_in_the_default_mode() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let store = tempfile::tempdir().unwrap();
    fs::write(root.join("a.txt"), "alpha\n").unwrap();
    let session = Session::start(config(&root, store.path(), Mode::Default, TOOLS)).unwrap();
    let asked: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let previews: Arc<Mutex<Vec<Option<String>>>> = Arc::default();
    let allow_rewind = Arc::new(AtomicBool::new(false));
    let approver = {
        let asked = asked.clone();
        let previews = previews.clone();
        let allow_rewind = allow_rewind.clone();
        approver_fn(move |request| {
            if request.tool == "rewind" {
                previews.lock().unwrap().push(request.preview.clone());
            }
            asked
                .lock()
                .unwrap()
                .push((request.tool.clone(), request.decision.reason.clone()));
            let answer = if request.tool != "rewind" || allow_rewind.load(Ordering::SeqCst) {
                ApprovalAnswer::AllowOnce
            } else {
                ApprovalAnswer::Deny(Some("not now".into()))
            };
            async move { answer }
        })
    };
    session.approval().set_approver(Some(Arc::new(approver)));
    ok(&session, "r1", "read", json!({"file_path": "a.txt"})).await;
    ok(
        &session,
        "e1",
        "edit",
        json!({"file_path": "a.txt", "old_string": "alpha", "new_string": "ALPHA"}),
    )
    .await;
    // Listing asks nobody.
    ok(&session, "c1", "checkpoints", json!({})).await;
    assert!(
        !asked
            .lock()
            .unwrap()
            .iter()
            .any(|(t, _)| t == "checkpoints"),
        "{asked:?}"
    );

    let denied = run(&session, "b1", "rewind", json!({"to": 1})).await;
    assert_eq!(denied.outcome, Outcome::Denied, "{}", denied.text());
    assert_eq!(fs::read(root.join("a.txt")).unwrap(), b"ALPHA\n");
    let (tool, reason) = asked.lock().unwrap().last().cloned().unwrap();
    assert_eq!(tool, "rewind");
    assert!(reason.contains("in default mode"), "{reason}");
    // The person asked sees what the rewind would change.
    let preview = previews.lock().unwrap().last().cloned().flatten();
    assert_eq!(
        preview.as_deref(),
        Some(
            "A rewind to before checkpoint #1 would change 1 path(s):\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-ALPHA\n+alpha\n"
        )
    );

    allow_rewind.store(true, Ordering::SeqCst);
    ok(&session, "b2", "rewind", json!({"to": 1})).await;
    assert_eq!(fs::read(root.join("a.txt")).unwrap(), b"alpha\n");
    let rewinds = asked
        .lock()
        .unwrap()
        .iter()
        .filter(|(t, _)| t == "rewind")
        .count();
    assert_eq!(rewinds, 2);

    // With nobody to ask, it is denied and nothing changes.
    session.approval().set_approver(None);
    let unasked = run(&session, "b3", "rewind", json!({"to": 2})).await;
    assert_eq!(unasked.outcome, Outcome::Denied, "{}", unasked.text());
    assert!(
        unasked.text().starts_with("approval required: "),
        "{}",
        unasked.text()
    );
    assert_eq!(fs::read(root.join("a.txt")).unwrap(), b"alpha\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_the_user_changed_since_stops_the_rewind_and_nothing_changes() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let store = tempfile::tempdir().unwrap();
    fs::write(root.join("a.txt"), "alpha\n").unwrap();
    fs::write(root.join("b.txt"), "bravo\n").unwrap();
    let session = Session::start(config(&root, store.path(), Mode::Bypass, TOOLS)).unwrap();
    for (file, old, new) in [("a.txt", "alpha", "ALPHA"), ("b.txt", "bravo", "BRAVO")] {
        ok(
            &session,
            &format!("r-{file}"),
            "read",
            json!({"file_path": file}),
        )
        .await;
        ok(
            &session,
            &format!("e-{file}"),
            "edit",
            json!({"file_path": file, "old_string": old, "new_string": new}),
        )
        .await;
    }
    // The user's editor, meanwhile.
    fs::write(root.join("a.txt"), "the user's\n").unwrap();

    let stopped = run(&session, "back", "rewind", json!({"to": 1})).await;
    assert_eq!(stopped.outcome, Outcome::Failed, "{}", stopped.text());
    let text = stopped.text();
    assert!(
        text.starts_with("Nothing was changed: 1 path(s) changed since checkpoint #1 by something agentcore did not record."),
        "{text}"
    );
    assert!(
        text.contains("conflict a.txt: changed since by something not recorded (kept)"),
        "{text}"
    );
    assert!(
        text.contains(r#"call rewind again with "mode": "skip""#)
            && text.contains(r#""mode": "force""#),
        "{text}"
    );
    assert_eq!(fs::read(root.join("a.txt")).unwrap(), b"the user's\n");
    assert_eq!(fs::read(root.join("b.txt")).unwrap(), b"BRAVO\n");
    let listing = session.checkpoints().unwrap().unwrap();
    assert_eq!(listing.checkpoints.len(), 2, "{listing:#?}");

    // skip: the user's file stays, the rest is rewound.
    let skipped = ok(&session, "skip", "rewind", json!({"to": 1, "mode": "skip"})).await;
    assert!(
        skipped.contains("conflict a.txt: changed since by something not recorded (left as it is)"),
        "{skipped}"
    );
    assert_eq!(fs::read(root.join("a.txt")).unwrap(), b"the user's\n");
    assert_eq!(fs::read(root.join("b.txt")).unwrap(), b"bravo\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rewind_to_nowhere_is_refused_before_anyone_is_asked() {
    let dir = tempfile::tempdir().unwrap();
    let store = tempfile::tempdir().unwrap();
    // Default mode with nobody to ask: a call that reached the gate would
    // be denied, so a failure here is the tool's own refusal. No breaker:
    // four refusals in a row.
    let mut config = config(dir.path(), store.path(), Mode::Default, TOOLS);
    config.max_tool_errors = 0;
    let session = Session::start(config).unwrap();
    for (args, expected) in [
        (
            json!({}),
            "say where to rewind to: give one of `to` (a checkpoint ID from the checkpoints tool), `call` (a call id) or `turn` (a turn number)",
        ),
        (
            json!({"to": 1, "turn": 1}),
            "give only one of `to`, `call` and `turn`: each names a place to rewind to",
        ),
        (
            json!({"to": 7}),
            "no checkpoint #7 or later; the checkpoints tool lists the checkpoints kept",
        ),
        (
            json!({"call": "nope"}),
            "no checkpoint of call nope or later; the checkpoints tool lists the checkpoints kept",
        ),
    ] {
        let result = run(&session, "x", "rewind", args.clone()).await;
        assert_eq!(result.outcome, Outcome::Failed, "{args}: {}", result.text());
        assert_eq!(
            result.error_code,
            Some(ErrorCode::NoSuchCheckpoint.into()),
            "{args}"
        );
        assert!(
            result.text().ends_with(expected),
            "{args}: {}",
            result.text()
        );
    }
}

/// A harness's tool that writes `FILE` in the workspace; with `quiet`, it
/// says it records itself.
struct Stamp {
    root: std::path::PathBuf,
    quiet: bool,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct StampArgs {
    /// The file to write.
    file: String,
}

impl agentcore::TypedTool for Stamp {
    type Args = StampArgs;

    fn name(&self) -> &str {
        if self.quiet { "stamp_quietly" } else { "stamp" }
    }

    fn description(&self) -> &str {
        "Writes a file."
    }

    async fn execute(
        &self,
        args: StampArgs,
        _cx: &agentcore::CallContext,
    ) -> Result<agentcore::ToolOutput, agentcore::ToolError> {
        fs::write(self.root.join(&args.file), "stamped\n")?;
        Ok(agentcore::ToolOutput::text("stamped"))
    }

    fn extensions(&self) -> agentcore::Extensions {
        let mut extensions = agentcore::access::Permissions::typed(|args: &StampArgs| {
            agentcore::access::Access::write([args.file.as_str()])
        })
        .into_extensions();
        if self.quiet {
            extensions.insert(agentcore::checkpoint::RecordsItself);
        }
        extensions
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_checkpoint_stage_leaves_a_tool_that_records_itself_alone() {
    use agentcore::TypedTool;
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let store = tempfile::tempdir().unwrap();
    let config = config(&root, store.path(), Mode::Bypass, "read")
        .with_tool(
            Stamp {
                root: root.clone(),
                quiet: false,
            }
            .into_dyn(),
        )
        .with_tool(
            Stamp {
                root: root.clone(),
                quiet: true,
            }
            .into_dyn(),
        );
    let session = Session::start(config).unwrap();
    ok(&session, "s1", "stamp", json!({"file": "loud.txt"})).await;
    ok(
        &session,
        "s2",
        "stamp_quietly",
        json!({"file": "quiet.txt"}),
    )
    .await;
    let listing = session.checkpoints().unwrap().unwrap();
    let calls: Vec<&str> = listing
        .checkpoints
        .iter()
        .map(|c| c.call_id.as_str())
        .collect();
    assert_eq!(calls, ["s1"], "{listing:#?}");
}

/// What the person approves is what is rewound: when a file the rewind
/// would change changes while they decide, the approved rewind does
/// nothing and says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rewind_acts_only_on_what_its_approval_showed() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let store = tempfile::tempdir().unwrap();
    fs::write(root.join("a.txt"), "alpha\n").unwrap();
    let session = Session::start(config(&root, store.path(), Mode::Default, TOOLS)).unwrap();
    let approver = {
        let root = root.clone();
        approver_fn(move |request| {
            if request.tool == "rewind" {
                // The user saves the file while the question is open.
                fs::write(root.join("a.txt"), "the user's\n").unwrap();
            }
            async { ApprovalAnswer::AllowOnce }
        })
    };
    session.approval().set_approver(Some(Arc::new(approver)));
    ok(&session, "r1", "read", json!({"file_path": "a.txt"})).await;
    ok(
        &session,
        "e1",
        "edit",
        json!({"file_path": "a.txt", "old_string": "alpha", "new_string": "ALPHA"}),
    )
    .await;
    let result = run(&session, "b1", "rewind", json!({"to": 1})).await;
    assert_eq!(result.outcome, Outcome::Failed, "{}", result.text());
    assert!(
        result
            .text()
            .contains("no longer what its preview showed when it was approved"),
        "{}",
        result.text()
    );
    assert_eq!(fs::read(root.join("a.txt")).unwrap(), b"the user's\n");
}
