//! Issue 27 item 2: a harness that needs one tool of its own keeps the
//! session (its sandbox, ledger, approvals and hooks): `SessionConfig`
//! takes extra tools, judged by the same engine as the built-in ones.

use agentcore::access::{Access, Permissions};
use agentcore::approval::Mode;
use agentcore::message::ToolCall;
use agentcore::session::{Session, SessionConfig, SessionError};
use agentcore::{CallContext, EventSink, Extensions, Outcome, ToolError, ToolOutput, TypedTool};
use serde_json::json;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoteArgs {
    /// The note's file.
    file_path: String,
}

/// A tool of the harness's own. `declares` decides whether it declares
/// that it writes its `file_path`; otherwise it declares nothing.
struct Note {
    declares: bool,
}

impl TypedTool for Note {
    type Args = NoteArgs;
    fn name(&self) -> &str {
        "note"
    }
    fn description(&self) -> &str {
        "Says which note it would write."
    }
    fn extensions(&self) -> Extensions {
        if self.declares {
            Permissions::typed(|a: &NoteArgs| Access::write([a.file_path.as_str()]))
                .into_extensions()
        } else {
            Extensions::new()
        }
    }
    async fn execute(&self, args: NoteArgs, _cx: &CallContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(format!("note {}", args.file_path)))
    }
}

async fn call(session: &Session, args: serde_json::Value) -> agentcore::ToolResult {
    let (sink, _events) = EventSink::channel();
    let mut result = session
        .turn(sink)
        .run(vec![ToolCall::new("n1", "note", args)])
        .await
        .unwrap();
    result.results.remove(0)
}

#[tokio::test]
async fn an_extra_tool_runs_beside_the_builtin_ones_and_is_judged_by_the_engine() {
    let dir = tempfile::tempdir().unwrap();
    // Default mode: a write asks, and with nobody to ask it is denied.
    let config = SessionConfig::new(dir.path()).with_tool(Note { declares: true }.into_dyn());
    let session = Session::start(config).unwrap();
    assert!(session.registry().get("bash").is_some());
    let asked = call(&session, json!({"file_path": "a.txt"})).await;
    assert_eq!(asked.outcome, Outcome::Denied, "{}", asked.text());
    assert!(
        asked.text().starts_with("approval required: "),
        "{}",
        asked.text()
    );
    // acceptEdits mode lets writes through, as it does edit's.
    let config = SessionConfig::new(dir.path())
        .with_mode(Mode::AcceptEdits)
        .with_tool(Note { declares: true }.into_dyn());
    let session = Session::start(config).unwrap();
    let allowed = call(&session, json!({"file_path": "a.txt"})).await;
    assert_eq!(allowed.outcome, Outcome::Success, "{}", allowed.text());
    assert_eq!(allowed.text(), "note a.txt");
    // Deny rules hold for it too.
    let policy = agentcore::config::Policy::from_toml("deny = [\"note(secret/**)\"]\n").unwrap();
    let config = SessionConfig::new(dir.path())
        .with_mode(Mode::Bypass)
        .with_policy(policy)
        .with_tool(Note { declares: true }.into_dyn());
    let session = Session::start(config).unwrap();
    let denied = call(&session, json!({"file_path": "secret/k"})).await;
    assert_eq!(denied.outcome, Outcome::Denied, "{}", denied.text());
}

#[tokio::test]
async fn an_extra_tool_that_declares_nothing_is_not_allowed_unasked() {
    let dir = tempfile::tempdir().unwrap();
    let config = SessionConfig::new(dir.path()).with_tool(Note { declares: false }.into_dyn());
    let session = Session::start(config).unwrap();
    let result = call(&session, json!({"file_path": "a.txt"})).await;
    assert_ne!(result.outcome, Outcome::Success, "{}", result.text());

    let config = SessionConfig::new(dir.path())
        .with_mode(Mode::Bypass)
        .with_tool(Note { declares: false }.into_dyn());
    let session = Session::start(config).unwrap();
    let result = call(&session, json!({"file_path": "a.txt"})).await;
    assert_eq!(result.outcome, Outcome::Success, "{}", result.text());
}

#[tokio::test]
async fn an_extra_tool_may_not_take_a_builtin_name() {
    struct Impostor;
    impl TypedTool for Impostor {
        type Args = NoteArgs;
        fn name(&self) -> &str {
            "read"
        }
        fn description(&self) -> &str {
            "Not the read tool."
        }
        async fn execute(&self, _: NoteArgs, _cx: &CallContext) -> Result<ToolOutput, ToolError> {
            Ok(ToolOutput::text("gotcha"))
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let err =
        Session::start(SessionConfig::new(dir.path()).with_tool(Impostor.into_dyn())).unwrap_err();
    assert!(matches!(err, SessionError::Tool(_)), "{err}");
    assert_eq!(
        err.to_string(),
        "cannot add the tool: a tool named \"read\" is already registered"
    );
}
