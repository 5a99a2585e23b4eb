//! `agentcore run --format pretty` shows terminal control sequences from
//! file contents, command output and arguments escaped instead of sending
//! them to the terminal; `--format jsonl` keeps the exact text.

use crate::support::cli;

/// A file whose first line sets the window title, clears the screen,
/// overwrites itself with a carriage return, uses 8-bit CSI and a bidi
/// override.
const HOSTILE: &str =
    "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{1b}[Hall good\rFAILED \u{9b}31m x\u{202e}txt.exe\nsecond\n";

fn run(root: &std::path::Path, format: &str, input: &str) -> String {
    let output = cli::agentcore_run(root, format, &["--mode", "bypass"], input);
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

fn input() -> String {
    let turn = serde_json::json!({"turn": [
        {"id": "r1", "name": "read", "args": {"file_path": "hostile.txt"}},
        {"id": "b1", "name": "bash", "args": {"command": "printf '\\033]2;title\\007ok\\rEVIL\\n'"}},
        {"id": "\u{1b}[31mid", "name": "\u{1b}]0;tool\u{7}", "args": {}},
        {"id": "g1", "name": "grep", "args": {"pattern": "\u{1b}\\[2J", "output_mode": "content"}}
    ]});
    format!(
        "{}\n{turn}\n",
        serde_json::json!({"user": "look \u{1b}[2J here"})
    )
}

#[test]
fn pretty_output_shows_control_sequences_escaped() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hostile.txt"), HOSTILE).unwrap();
    let out = run(dir.path(), "pretty", &input());

    // Not a terminal, so no colours either: no control character at all
    // but newlines and tabs.
    let raw: Vec<char> = out
        .chars()
        .filter(|c| (c.is_control() && *c != '\n' && *c != '\t') || *c == '\u{202e}')
        .collect();
    assert!(raw.is_empty(), "raw controls {raw:?} in:\n{out}");
    for shown in [
        // File contents (read, grep).
        r"\e]0;pwned\u{7}\e[2J\e[Hall good\rFAILED \u{9b}31m x\u{202e}txt.exe",
        // Command output.
        r"\e]2;title\u{7}ok\rEVIL",
        // Arguments: the user's text, a tool name and a call id.
        r"look \e[2J here",
        r"\e]0;tool\u{7}",
    ] {
        assert!(out.contains(shown), "{shown:?} missing from:\n{out}");
    }
}

#[test]
fn jsonl_output_keeps_the_exact_text() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hostile.txt"), HOSTILE).unwrap();
    let out = run(dir.path(), "jsonl", &input());
    let events: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let read_end = events
        .iter()
        .find(|e| e["type"] == "tool_exec_end" && e["tool_id"] == "r1")
        .expect("the read ended");
    let text = read_end["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains(
            "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{1b}[Hall good\rFAILED \u{9b}31m x\u{202e}txt.exe"
        ),
        "{text:?}"
    );
    let bash_end = events
        .iter()
        .find(|e| e["type"] == "tool_exec_end" && e["tool_id"] == "b1")
        .expect("the command ended");
    assert!(
        bash_end["content"]
            .to_string()
            .contains(r"\u001b]2;title\u0007ok\rEVIL"),
        "{bash_end}"
    );
}
