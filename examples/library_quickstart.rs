//! The README's library quick start, run by CI so it stays true: a session
//! over a scratch workspace with the built-in tools (bash confined by the
//! default sandbox) and one tool of your own, fed an Anthropic assistant
//! message and answering with the user message of its `tool_result`s.
//!
//! Run: `cargo run --example library_quickstart`

use agentcore::approval::Mode;
use agentcore::message::anthropic;
use agentcore::schemars::JsonSchema;
use agentcore::session::{Session, SessionConfig};
use agentcore::tools::fn_tool;
use agentcore::{EventSink, ToolOutput};
use serde::Deserialize;
use serde_json::json;

/// Doc comments on the fields become the descriptions the model reads.
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "agentcore::schemars")]
struct WordCountArgs {
    /// The text whose words to count.
    text: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = tempfile::tempdir()?;
    std::fs::write(root.path().join("notes.txt"), "one two three\n")?;

    // A tool of our own. Without `.read_only()` it would run alone and the
    // approval engine, knowing nothing of what it touches, would ask.
    let word_count = fn_tool(
        "word_count",
        "Counts the words of `text`.",
        |args: WordCountArgs, _cx| async move {
            Ok(ToolOutput::text(
                args.text.split_whitespace().count().to_string(),
            ))
        },
    )
    .read_only();

    // The built-in tools plus ours, one ledger, the approval engine in
    // accept-edits mode, bash in the default sandbox.
    let config = SessionConfig::new(root.path())
        .with_mode(Mode::AcceptEdits)
        .with_tool(word_count.into_dyn());
    let session = Session::start(config)?;

    // What the model is offered, in the Messages API's `tools` shape.
    let tools = anthropic::tool_definitions(session.registry());
    assert!(tools.iter().any(|t| t["name"] == "word_count"));

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
