//! The exit statuses of docs/cli.md: 0 success, 1 runtime error (and
//! `run --fail-on-error` when a call ended in an error), 2 usage error;
//! `--help` lists them and `--mode`'s values.

use serde_json::json;

use crate::support::cli::{agentcore_output as agentcore, agentcore_run, turn, workspace};

#[test]
fn fail_on_error_exits_1_when_a_tool_call_ends_in_an_error() {
    let dir = workspace();
    let input = turn(&[
        ("ok", "read", json!({"file_path": "a.txt"})),
        ("bad", "read", json!({"file_path": "missing.txt"})),
    ]);
    let out = agentcore_run(dir.path(), "jsonl", &["--fail-on-error"], &input);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The run still went to the end: both calls ended and the model heard.
    let events = crate::support::cli::events(&out);
    assert_eq!(
        crate::support::cli::of_type(&events, "model_response").len(),
        1
    );
    assert_eq!(crate::support::cli::end(&events, "bad")["is_error"], true);
}

#[test]
fn fail_on_error_counts_a_denied_call_as_an_error() {
    let dir = workspace();
    let input = turn(&[(
        "w",
        "write",
        json!({"file_path": "new.txt", "content": "x"}),
    )]);
    let out = agentcore_run(
        dir.path(),
        "jsonl",
        &["--fail-on-error", "--mode", "plan"],
        &input,
    );
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn fail_on_error_exits_0_when_every_call_succeeds() {
    let dir = workspace();
    let input = turn(&[("ok", "read", json!({"file_path": "a.txt"}))]);
    let out = agentcore_run(dir.path(), "jsonl", &["--fail-on-error"], &input);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn without_fail_on_error_a_failed_call_still_exits_0() {
    let dir = workspace();
    let input = turn(&[("bad", "read", json!({"file_path": "missing.txt"}))]);
    let out = agentcore_run(dir.path(), "jsonl", &[], &input);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn a_usage_error_exits_2() {
    for args in [
        &["run", "--no-such-option"][..],
        &["run", "--mode", "yolo"],
        &["frobnicate"],
        &["completions", "tcsh"],
        &["sandbox", "exec"],
        &["--color", "sometimes", "demo"],
    ] {
        let out = agentcore(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!out.stderr.is_empty(), "{args:?}");
    }
}

#[test]
fn help_lists_the_exit_statuses() {
    let out = agentcore(&["--help"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("Exit status:"), "{help}");
    for status in ["  0 ", "  1 ", "  2 ", "  128+N "] {
        assert!(help.contains(status), "{status:?} missing from {help}");
    }
}

#[test]
fn help_lists_the_modes() {
    for command in ["run", "mcp"] {
        let out = agentcore(&[command, "--help"]);
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(
            help.contains("[possible values: default, accept-edits, plan, bypass]"),
            "{command}: {help}"
        );
    }
    let out = agentcore(&["sandbox", "check", "--mode", "accept-edits", "--help"]);
    assert!(out.status.success());
}

#[test]
fn help_names_every_built_in_tool() {
    let out = agentcore(&["run", "--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    for tool in agentcore::tools::set::Builtin::ALL {
        assert!(help.contains(tool.name()), "{tool} missing from {help}");
    }
    assert!(!help.contains("seven"), "{help}");
}
