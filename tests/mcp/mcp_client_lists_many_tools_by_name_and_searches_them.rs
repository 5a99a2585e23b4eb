//! Issue 32, item 4: many mounted tools do not flood the model. Past the
//! budget of `[tool_search]` (10,000 estimated tokens by default), every
//! mounted tool is listed by its name and one line, with a schema taking
//! any object; `tool_search` returns full definitions on demand; calls
//! are still coerced and validated against each tool's full schema. Below
//! the budget, or with `enabled = false`, nothing changes.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::support::cli::{self, end, text, turn};

const FAKE_SERVER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/mcp_client/fake_server.py"
);

fn policy(dir: &Path, mode: &str, extra: &str) -> String {
    let file = dir.join("policy.toml");
    std::fs::write(
        &file,
        format!(
            "{extra}\n[[mcp_servers]]\nname = \"many\"\ncommand = \"python3\"\nargs = {}\n",
            json!([FAKE_SERVER, mode])
        ),
    )
    .unwrap();
    file.to_string_lossy().into_owned()
}

/// `agentcore tools --format anthropic --policy FILE`.
fn listed(file: &str) -> Vec<Value> {
    let output = Command::new(env!("CARGO_BIN_EXE_agentcore"))
        .args(["tools", "--format", "anthropic", "--policy", file])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice::<Value>(&output.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

fn find<'a>(tools: &'a [Value], name: &str) -> Option<&'a Value> {
    tools.iter().find(|t| t["name"] == name)
}

#[test]
fn past_the_budget_mounted_tools_are_listed_by_name_and_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let tools = listed(&policy(dir.path(), "many", ""));
    let seven = find(&tools, "mcp__many__tool_7").expect("tool_7 listed");
    assert_eq!(
        seven["description"],
        "Does task number 7. (Listed by name only: call tool_search with \"select:mcp__many__tool_7\" for its full definition before calling it.)"
    );
    assert_eq!(seven["input_schema"], json!({"type": "object"}));
    let search = find(&tools, "tool_search").expect("tool_search listed");
    assert_eq!(search["input_schema"]["required"], json!(["query"]));
    // Built-in tools keep their full definitions.
    let read = find(&tools, "read").unwrap();
    assert!(read["input_schema"]["properties"]["file_path"].is_object());
    // The listing is a fraction of the full definitions.
    let full = listed(&policy(
        dir.path(),
        "many",
        "[tool_search]\nenabled = false",
    ));
    let size = |tools: &[Value]| -> usize {
        tools
            .iter()
            .filter(|t| t["name"].as_str().unwrap().starts_with("mcp__"))
            .map(|t| t.to_string().len())
            .sum()
    };
    assert!(
        size(&tools) * 3 < size(&full),
        "{} vs {}",
        size(&tools),
        size(&full)
    );
    assert!(find(&full, "tool_search").is_none());
    assert_eq!(
        find(&full, "mcp__many__tool_7").unwrap()["input_schema"]["required"],
        json!(["count"])
    );
}

#[test]
fn below_the_budget_nothing_is_listed_by_name_only() {
    let dir = tempfile::tempdir().unwrap();
    let tools = listed(&policy(dir.path(), "normal", ""));
    assert!(find(&tools, "tool_search").is_none());
    let echo = find(&tools, "mcp__many__echo").unwrap();
    assert_eq!(echo["description"], "Returns its text.");
    // A budget of 0 lists any mounted tool by name only.
    let tools = listed(&policy(
        dir.path(),
        "normal",
        "[tool_search]\nafter_tokens = 0",
    ));
    assert!(find(&tools, "tool_search").is_some());
    assert_eq!(
        find(&tools, "mcp__many__echo").unwrap()["input_schema"],
        json!({"type": "object"})
    );
}

#[test]
fn tool_search_returns_full_definitions_and_calls_are_validated_against_them() {
    let dir = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let file = policy(dir.path(), "many", "");
    let input = [
        turn(&[(
            "s1",
            "tool_search",
            json!({"query": "select:mcp__many__tool_7,mcp__many__nope"}),
        )]),
        turn(&[(
            "s2",
            "tool_search",
            json!({"query": "task number 42", "max_results": 2}),
        )]),
        turn(&[("s3", "tool_search", json!({"query": "weather"}))]),
        // Called without searching first: the full schema still decides.
        turn(&[("c1", "mcp__many__tool_7", json!({"label": "x"}))]),
        // "3" is coerced to 3 against the full schema.
        turn(&[("c2", "mcp__many__tool_7", json!({"count": "3"}))]),
    ]
    .concat();
    let output = cli::agentcore_run(root.path(), "jsonl", &["--policy", &file], &input);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let events = cli::events(&output);

    let s1 = end(&events, "s1");
    assert_eq!(s1["outcome"], "success", "{s1:#}");
    assert_eq!(
        s1["content"][0]["text"],
        "1 of the 120 tools listed by name only: (this one is not among them: \"mcp__many__nope\")"
    );
    let definition = &s1["content"][1]["value"];
    assert_eq!(definition["name"], "mcp__many__tool_7");
    assert!(
        definition["description"]
            .as_str()
            .unwrap()
            .starts_with("Does task number 7.\nDetails of the task"),
        "{definition:#}"
    );
    assert_eq!(definition["input_schema"]["required"], json!(["count"]));

    let s2 = end(&events, "s2");
    assert_eq!(s2["outcome"], "success", "{s2:#}");
    let names: Vec<&str> = s2["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["value"]["name"].as_str())
        .collect();
    assert_eq!(names.len(), 2, "{s2:#}");

    let s3 = end(&events, "s3");
    assert_eq!(s3["outcome"], "failed", "{s3:#}");
    assert!(
        text(s3).starts_with("No listed tool matches \"weather\". The tools listed by name only are: mcp__many__tool_0, "),
        "{s3:#}"
    );
    assert!(text(s3).contains(" and 70 more."), "{s3:#}");

    let c1 = end(&events, "c1");
    assert_eq!(c1["outcome"], "failed", "{c1:#}");
    assert!(text(c1).contains("count"), "{c1:#}");
    let c2 = end(&events, "c2");
    assert_eq!(c2["outcome"], "success", "{c2:#}");
    assert_eq!(text(c2), "tool_7 did 3");
}
