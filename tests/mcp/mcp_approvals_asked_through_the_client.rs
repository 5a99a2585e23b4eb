//! `agentcore mcp --mode default` asks the person through the client: the
//! official Python MCP SDK's elicitation callback answers allow once, deny,
//! decline, allow for the session, too late, not at all (the call is
//! cancelled) or outside the schema; a client without the callback gets
//! the `approval required: ` deny saying it cannot ask.
//!
//! Each test runs tests/mcp_sdk/elicitation_client.py (one scenario) with
//! the Python that has the SDK: `AGENTCORE_MCP_SDK_PYTHON` (set by .ci/run,
//! which installs it; then it must work), or `python3` when it has it.
//! Each is ignored by a plain `cargo test` and fails, saying so, when run
//! without either.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::support::python;

/// The Python with the official MCP SDK; fails the test without it.
fn sdk_python() -> String {
    python::require_sdk_python("mcp.client.session", "the MCP SDK")
}

/// What one scenario did: the calls' results, the questions asked, and how
/// many questions were withdrawn / answered after the server gave up.
struct Report {
    calls: Vec<Value>,
    asked: Vec<Value>,
    withdrawn: u64,
    answered_late: u64,
}

impl Report {
    fn call(&self, i: usize) -> (bool, &str) {
        let call = &self.calls[i];
        (
            call["is_error"].as_bool().expect("is_error"),
            call["text"].as_str().expect("text"),
        )
    }

    fn message(&self, i: usize) -> &str {
        self.asked[i]["message"].as_str().expect("a message")
    }
}

/// Runs `scenario` against `agentcore mcp --root ROOT --mode default
/// OPTIONS…`.
fn run(python: &str, root: &Path, scenario: &str, options: &[&str]) -> Report {
    run_over(python, root, scenario, options, false)
}

/// [`run`] with the server on `--http 127.0.0.1:0`, reached by the SDK's
/// streamable-HTTP client: the question travels on the call's own stream.
fn run_over_http(python: &str, root: &Path, scenario: &str, options: &[&str]) -> Report {
    run_over(python, root, scenario, options, true)
}

fn run_over(python: &str, root: &Path, scenario: &str, options: &[&str], http: bool) -> Report {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/mcp_sdk/elicitation_client.py"
    );
    let output = Command::new(python)
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_agentcore"))
        .arg(root)
        .arg(scenario)
        .args(options)
        .env("ELICIT_OVER_HTTP", if http { "1" } else { "0" })
        .output()
        .expect("python runs");
    assert!(
        output.status.success(),
        "{scenario}: the client failed\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(
        output
            .stdout
            .split(|b| *b == b'\n')
            .rfind(|line| !line.is_empty())
            .expect("a report line"),
    )
    .expect("the report is JSON");
    let list = |key: &str| report[key].as_array().cloned().unwrap_or_default();
    Report {
        calls: list("calls"),
        asked: list("asked"),
        withdrawn: report["withdrawn"].as_u64().unwrap_or(0),
        answered_late: report["answered_late"].as_u64().unwrap_or(0),
    }
}

fn workspace() -> tempfile::TempDir {
    let root = tempfile::tempdir().expect("a temporary workspace");
    std::fs::write(root.path().join("present.txt"), "here\n").unwrap();
    root
}

#[test]
#[ignore = "needs the Python MCP SDK (AGENTCORE_MCP_SDK_PYTHON)"]
fn allowed_once_the_write_and_the_command_run_and_the_question_shows_them() {
    let python = sdk_python();
    let root = workspace();
    // Commands ask even when the sandbox could confine them.
    let etc = tempfile::tempdir().unwrap();
    let policy = etc.path().join("policy.toml");
    std::fs::write(&policy, "[sandbox]\nauto_allow = false\n").unwrap();
    let report = run(
        &python,
        root.path(),
        "allow_once",
        &["--policy", policy.to_str().unwrap()],
    );

    assert_eq!(report.asked.len(), 2, "one question a call");
    let (failed, text) = report.call(0);
    assert!(!failed, "{text}");
    assert_eq!(
        std::fs::read_to_string(root.path().join("once.txt")).unwrap(),
        "allowed once\n"
    );
    let (failed, text) = report.call(1);
    assert!(!failed, "{text}");
    assert!(root.path().join("by-bash.txt").exists());

    // The question names the tool, the path and carries the diff.
    let write = report.message(0);
    assert!(write.contains("Tool: write"), "{write}");
    assert!(write.contains("Paths:\n  once.txt"), "{write}");
    assert!(write.contains("+allowed once"), "{write}");
    assert!(write.contains("Why it asks: "), "{write}");
    let bash = report.message(1);
    assert!(bash.contains("Tool: bash"), "{bash}");
    assert!(bash.contains("Command:\n  touch by-bash.txt"), "{bash}");

    // The form offers the three choices.
    let schema = &report.asked[0]["requestedSchema"];
    assert_eq!(schema["required"], serde_json::json!(["decision"]));
    let choices: Vec<&str> = schema["properties"]["decision"]["oneOf"]
        .as_array()
        .expect("titled choices")
        .iter()
        .map(|c| c["const"].as_str().unwrap())
        .collect();
    assert_eq!(choices, ["allow_once", "allow_session", "deny"]);
}

#[test]
#[ignore = "needs the Python MCP SDK (AGENTCORE_MCP_SDK_PYTHON)"]
fn denied_the_write_does_not_run_and_the_model_reads_why() {
    let python = sdk_python();
    let root = workspace();
    let report = run(&python, root.path(), "deny", &[]);
    assert_eq!(report.asked.len(), 1);
    let (failed, text) = report.call(0);
    assert!(failed, "{text}");
    assert!(text.starts_with("the user denied this call"), "{text}");
    assert!(!root.path().join("denied.txt").exists());
}

#[test]
#[ignore = "needs the Python MCP SDK (AGENTCORE_MCP_SDK_PYTHON)"]
fn declined_the_write_does_not_run_and_the_model_reads_that_the_user_refused() {
    let python = sdk_python();
    let root = workspace();
    let report = run(&python, root.path(), "decline", &[]);
    assert_eq!(report.asked.len(), 1);
    let (failed, text) = report.call(0);
    assert!(failed, "{text}");
    assert!(text.starts_with("the user denied this call"), "{text}");
    assert!(!root.path().join("declined.txt").exists());
}

#[test]
#[ignore = "needs the Python MCP SDK (AGENTCORE_MCP_SDK_PYTHON)"]
fn allowed_for_the_session_the_second_similar_call_is_not_asked() {
    let python = sdk_python();
    let root = workspace();
    let report = run(&python, root.path(), "session", &[]);
    for i in 0..3 {
        let (failed, text) = report.call(i);
        assert!(!failed, "call {i}: {text}");
    }
    assert_eq!(report.asked.len(), 1, "the second write was not asked");
    assert!(
        report
            .message(0)
            .contains("Allow for this session also allows, until the session ends: write(/s.txt)"),
        "{}",
        report.message(0)
    );
    assert_eq!(
        std::fs::read_to_string(root.path().join("s.txt")).unwrap(),
        "two\n"
    );
}

#[test]
#[ignore = "needs the Python MCP SDK (AGENTCORE_MCP_SDK_PYTHON)"]
fn unanswered_in_time_the_call_is_denied_and_a_late_answer_grants_nothing() {
    let python = sdk_python();
    let root = workspace();
    let report = run(&python, root.path(), "timeout", &["--ask-timeout", "1"]);
    let (failed, text) = report.call(0);
    assert!(failed, "{text}");
    assert!(
        text.starts_with("approval timed out: no answer came within 1 s"),
        "{text}"
    );
    // The question was withdrawn (notifications/cancelled), or, if the
    // answer came anyway, it was ignored: the second write is asked again
    // and denied, and nothing was written.
    assert_eq!(report.withdrawn + report.answered_late, 1);
    assert_eq!(report.asked.len(), 2, "the late answer granted nothing");
    let (failed, text) = report.call(1);
    assert!(
        failed && text.starts_with("the user denied this call"),
        "{text}"
    );
    assert!(!root.path().join("late.txt").exists());
}

#[test]
#[ignore = "needs the Python MCP SDK (AGENTCORE_MCP_SDK_PYTHON)"]
fn a_call_cancelled_while_asking_withdraws_the_question() {
    let python = sdk_python();
    let root = workspace();
    let report = run(&python, root.path(), "cancel", &[]);
    assert_eq!(report.asked.len(), 1);
    assert_eq!(report.withdrawn, 1, "the open question was withdrawn");
    assert!(!root.path().join("cancelled.txt").exists());
    // The server goes on serving.
    let last = report.calls.last().expect("the read after the cancel");
    assert_eq!(last["tool"], "read");
    assert_eq!(last["is_error"], false, "{last}");
}

#[test]
#[ignore = "needs the Python MCP SDK (AGENTCORE_MCP_SDK_PYTHON)"]
fn attack_answers_outside_the_schema_deny_and_nothing_runs() {
    let python = sdk_python();
    let root = workspace();
    let report = run(&python, root.path(), "bad", &[]);
    assert_eq!(report.calls.len(), 8);
    for (i, call) in report.calls.iter().enumerate() {
        assert_eq!(call["is_error"], true, "answer {i}: {call}");
        let text = call["text"].as_str().unwrap();
        assert!(text.starts_with("approval failed: "), "answer {i}: {text}");
        assert!(!root.path().join(format!("bad-{i}.txt")).exists());
    }
}

#[test]
#[ignore = "needs the Python MCP SDK (AGENTCORE_MCP_SDK_PYTHON)"]
fn a_client_without_elicitation_is_told_the_client_cannot_ask() {
    let python = sdk_python();
    let root = workspace();
    let report = run(&python, root.path(), "none", &[]);
    assert!(report.asked.is_empty());
    let (failed, text) = report.call(0);
    assert!(failed, "{text}");
    assert!(text.starts_with("approval required: "), "{text}");
    assert!(
        text.contains(
            "The MCP client cannot ask the user: it did not declare the elicitation capability."
        ),
        "{text}"
    );
    assert!(text.contains("allow = [\"write(none.txt)\"]"), "{text}");
    assert!(!root.path().join("none.txt").exists());
}

#[test]
#[ignore = "needs the Python MCP SDK (AGENTCORE_MCP_SDK_PYTHON)"]
fn over_http_the_question_reaches_the_client_and_its_answers_decide() {
    let python = sdk_python();
    let root = workspace();
    // Commands ask even when the sandbox could confine them.
    let etc = tempfile::tempdir().unwrap();
    let policy = etc.path().join("policy.toml");
    std::fs::write(&policy, "[sandbox]\nauto_allow = false\n").unwrap();
    let policy = ["--policy", policy.to_str().unwrap()];
    let report = run_over_http(&python, root.path(), "allow_once", &policy);
    assert_eq!(report.asked.len(), 2, "both calls were asked");
    for i in 0..2 {
        let (failed, text) = report.call(i);
        assert!(!failed, "call {i}: {text}");
    }
    assert!(root.path().join("once.txt").exists());
    assert!(root.path().join("by-bash.txt").exists());

    let report = run_over_http(&python, root.path(), "deny", &policy);
    let (failed, text) = report.call(0);
    assert!(failed, "{text}");
    assert!(!root.path().join("denied.txt").exists());

    let report = run_over_http(&python, root.path(), "session", &policy);
    assert_eq!(report.asked.len(), 1, "the second write was not asked");
    assert_eq!(
        std::fs::read_to_string(root.path().join("s.txt")).unwrap(),
        "two\n"
    );
}

#[test]
#[ignore = "needs the Python MCP SDK (AGENTCORE_MCP_SDK_PYTHON)"]
fn over_http_a_client_without_elicitation_is_told_the_client_cannot_ask() {
    let python = sdk_python();
    let root = workspace();
    let report = run_over_http(&python, root.path(), "none", &[]);
    let (failed, text) = report.call(0);
    assert!(failed, "{text}");
    assert!(
        text.contains("The MCP client cannot ask the user"),
        "{text}"
    );
    assert!(!root.path().join("none.txt").exists());
}

/// Issue 25 item 1 (c): the person approved the write of `x` (a link to
/// `a.txt`, shown with its diff), and while the question was open the
/// link was pointed at `.envrc`. The approved call does not write `.envrc`:
/// the path now leads elsewhere than the file that was judged and shown.
#[test]
#[ignore = "needs the Python MCP SDK (AGENTCORE_MCP_SDK_PYTHON)"]
fn an_approved_write_does_not_follow_a_link_changed_while_the_person_decided() {
    let python = sdk_python();
    let root = workspace();
    std::os::unix::fs::symlink("a.txt", root.path().join("x")).unwrap();
    for http in [false, true] {
        let report = run_over(&python, root.path(), "relink", &[], http);
        assert_eq!(report.asked.len(), 1, "http {http}");
        let (failed, text) = report.call(0);
        assert!(failed, "http {http}: {text}");
        assert!(text.contains("now leads to a different file"), "{text}");
        assert!(!root.path().join(".envrc").exists(), "http {http}");
        assert!(!root.path().join("a.txt").exists(), "http {http}");
        // Back to the start for the next transport.
        std::fs::remove_file(root.path().join("x")).unwrap();
        std::os::unix::fs::symlink("a.txt", root.path().join("x")).unwrap();
    }
}
