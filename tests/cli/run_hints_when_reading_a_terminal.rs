//! `agentcore run` reading tool calls from a terminal says so on stderr,
//! and says nothing when its input is a pipe.

use crate::support::cli::{agentcore_run, workspace};
use crate::terminal::{on_terminal, script};

const HINT: &str = "agentcore run: reading tool calls from the terminal";

#[test]
fn run_on_a_terminal_hints_how_to_type_and_end_the_input() {
    let script = script();
    let dir = workspace();
    let root = dir.path().to_str().unwrap();
    let out = on_terminal(
        script,
        "dumb",
        &[],
        &["run", "--format", "jsonl", "--root", root],
        "{\"user\": \"hi\"}\n",
    );
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{shown}");
    assert!(shown.contains(HINT) && shown.contains("Ctrl-D"), "{shown}");
    assert!(shown.contains("\"run_start\""), "{shown}");
}

#[test]
fn run_reading_a_pipe_gives_no_hint() {
    let dir = workspace();
    let out = agentcore_run(dir.path(), "jsonl", &[], "{\"user\": \"hi\"}\n");
    assert!(out.status.success());
    assert!(!String::from_utf8_lossy(&out.stderr).contains(HINT));
}
