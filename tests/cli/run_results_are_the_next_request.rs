//! `agentcore run --results PROVIDER`: after each turn a `next_request`
//! line carries the turn's results as that provider's next request takes
//! them, in the calls' order, errors included.

use serde_json::{Value, json};

use crate::support::cli::{agentcore_run, events, of_type, workspace};

fn next_requests(provider: &str) -> Vec<Value> {
    let dir = workspace();
    std::fs::write(dir.path().join("n.txt"), "hello\n").unwrap();
    let input = concat!(
        r#"{"turn": [{"id": "c1", "name": "read", "args": {"file_path": "n.txt"}}, {"id": "c2", "name": "nope", "args": {}}]}"#,
        "\n",
        r#"{"turn": [{"id": "c3", "name": "read", "args": {"file_path": "n.txt"}}]}"#,
        "\n",
    );
    let output = agentcore_run(dir.path(), "jsonl", &["--results", provider], input);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let events = events(&output);
    // Each turn's next_request follows its model_response.
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    let responses: Vec<usize> = (0..kinds.len())
        .filter(|&i| kinds[i] == "model_response")
        .collect();
    assert_eq!(responses.len(), 2, "{kinds:?}");
    for i in responses {
        assert_eq!(kinds.get(i + 1), Some(&"next_request"), "{kinds:?}");
    }
    of_type(&events, "next_request")
        .into_iter()
        .cloned()
        .collect()
}

#[test]
fn anthropic_gets_one_user_message_of_tool_results() {
    let lines = next_requests("anthropic");
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["provider"], "anthropic");
    let messages = lines[0]["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0]["role"], "user");
    let blocks = messages[0]["content"].as_array().unwrap();
    assert_eq!(blocks.len(), 2);
    assert_eq!(blocks[0]["type"], "tool_result");
    assert_eq!(blocks[0]["tool_use_id"], "c1");
    assert_eq!(blocks[0]["is_error"], false);
    assert_eq!(
        blocks[0]["content"],
        json!([{"type": "text", "text": "     1\thello"}])
    );
    assert_eq!(blocks[1]["tool_use_id"], "c2");
    assert_eq!(blocks[1]["is_error"], true);
    assert_eq!(lines[1]["messages"][0]["content"][0]["tool_use_id"], "c3");
}

#[test]
fn openai_gets_a_tool_message_per_call() {
    let lines = next_requests("openai");
    assert_eq!(lines[0]["provider"], "openai");
    assert_eq!(
        lines[0]["messages"],
        json!([
            {"role": "tool", "tool_call_id": "c1", "content": "     1\thello"},
            {"role": "tool", "tool_call_id": "c2", "content": "tool \"nope\" not found"},
        ])
    );
}

#[test]
fn openai_responses_gets_function_call_output_items() {
    let lines = next_requests("openai-responses");
    assert_eq!(lines[0]["provider"], "openai-responses");
    assert_eq!(
        lines[0]["input"],
        json!([
            {"type": "function_call_output", "call_id": "c1", "output": "     1\thello"},
            {"type": "function_call_output", "call_id": "c2", "output": "tool \"nope\" not found"},
        ])
    );
    assert!(lines[0].get("messages").is_none());
}

#[test]
fn without_results_there_is_no_next_request_line() {
    let dir = workspace();
    let input = "{\"turn\": [{\"id\": \"c1\", \"name\": \"nope\", \"args\": {}}]}\n";
    let output = agentcore_run(dir.path(), "jsonl", &[], input);
    assert!(of_type(&events(&output), "next_request").is_empty());
}

#[test]
fn an_unknown_provider_is_a_usage_error_naming_the_choices() {
    let dir = workspace();
    let output = agentcore_run(dir.path(), "jsonl", &["--results", "gemini"], "");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("anthropic") && stderr.contains("openai-responses"),
        "{stderr}"
    );
}
