//! The README's library quick start, run by CI so it stays true: a session
//! over a scratch workspace with the built-in tools (bash confined by the
//! default sandbox) and one tool of your own, fed an Anthropic assistant
//! message and answering with the user message of its `tool_result`s.
//!
//! Run: `cargo run --example library_quickstart`

use agentcore::access::{Access, Permissions};
use agentcore::approval::Mode;
use agentcore::message::anthropic;
use agentcore::session::{Session, SessionConfig};
use agentcore::{CallContext, EventSink, Extensions, ToolError, ToolOutput, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// Doc comments on the fields become the descriptions the model reads.
#[derive(Deserialize, JsonSchema)]
struct WordCountArgs {
    /// The text whose words to count.
    text: String,
}

struct WordCount;

impl TypedTool for WordCount {
    type Args = WordCountArgs;
    fn name(&self) -> &str {
        "word_count"
    }
    fn description(&self) -> &str {
        "Counts the words of `text`."
    }
    // What a call touches, so the approval engine can judge it: nothing
    // (a pure computation, judged as a read). A tool that declares nothing
    // is taken to run something unknown and is asked about every time.
    fn extensions(&self) -> Extensions {
        Permissions::new(|_| Access::nothing()).into_extensions()
    }
    // Runs beside other read-only calls.
    fn read_only(&self, _args: &WordCountArgs) -> bool {
        true
    }
    async fn execute(&self, args: WordCountArgs, _cx: &CallContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(args.text.split_whitespace().count().to_string()))
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = tempfile::tempdir()?;
    std::fs::write(root.path().join("notes.txt"), "one two three\n")?;

    // The built-in tools plus ours, one ledger, the approval engine in
    // accept-edits mode, bash in the default sandbox.
    let config = SessionConfig::new(root.path())
        .with_mode(Mode::AcceptEdits)
        .with_tool(WordCount.into_dyn());
    let session = Session::start(config)?;

    // What the model sent (a Messages API response or its message).
    let assistant = json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "read", "input": {"file_path": "notes.txt"}},
        {"type": "tool_use", "id": "t2", "name": "word_count", "input": {"text": "one two three"}},
        {"type": "tool_use", "id": "t3", "name": "bash", "input": {"command": "echo hi > /etc/agentcore-was-here"}}
    ]});
    let calls = anthropic::parse_tool_calls(&assistant)?;
    let result = session.turn(EventSink::noop()).run(calls).await?;

    // The next request's user message: one tool_result per call, in order.
    let next = anthropic::user_message(&result.results);
    println!("{}", serde_json::to_string_pretty(&next)?);

    assert_eq!(result.results[1].text(), "3");
    // The command ran confined (or, without a sandbox on this machine, was
    // refused): nothing was written outside the workspace.
    assert!(!std::path::Path::new("/etc/agentcore-was-here").exists());
    session.end_jobs().await;
    Ok(())
}
