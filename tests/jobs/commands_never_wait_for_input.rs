//! Issue 16, item 7: no hang on a prompt. Commands are told they run
//! unattended (`CI=1`, `DEBIAN_FRONTEND=noninteractive`, `PIP_NO_INPUT=1`,
//! ssh in batch mode for git), and a command that times out on what looks
//! like a question gets a notice saying so and what to do instead.
//!
//! About `read -p "Continue? [y/N] " x` itself: bash prints that prompt
//! only when stdin is a terminal, and a command's stdin is /dev/null, so
//! `read` returns at once (status 1) without printing anything: it cannot
//! hang (proved below). A prompt that does wait is a program printing a
//! question and reading from elsewhere; that is what the timeout tests run.
//! Every command that waits has a unique number in its argv.
#![cfg(target_os = "linux")]

use std::sync::Arc;

use agentcore::TypedTool;
use agentcore::process::OutputDir;
use agentcore::tools::bash::BashTool;
use agentcore::{Call, Outcome, Pipeline, ToolRegistry, ToolResult};
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::support::procs::{path_and_home, unique};

async fn bash(args: Value) -> ToolResult {
    let root = tempfile::tempdir().unwrap();
    let output_dir = Arc::new(OutputDir::new().unwrap());
    let env = path_and_home();
    let tool = BashTool::new(root.path().to_owned(), output_dir).base_env(env);
    let registry = ToolRegistry::new().with(tool.into_dyn()).unwrap();
    let pipeline = Pipeline::builder().registry(Arc::new(registry)).build();
    pipeline
        .service()
        .oneshot(Call::new("t", "bash", args))
        .await
        .unwrap()
}

const NOTICE_END: &str =
    "; it gets none. Run it non-interactively (for example with --yes) or in the background.";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_on_a_question_says_the_command_waits_for_input() {
    let n = unique();
    let command =
        format!("echo 'Setting up'; printf 'Continue? [y/N] ' >&2; read x < <(exec sleep {n})");
    let result = bash(json!({"command": command, "timeout": 300})).await;
    assert_eq!(result.outcome, Outcome::Failed);
    let text = result.text();
    assert!(text.starts_with("Timed out after 300 ms\n"), "{text}");
    assert!(
        text.ends_with(&format!(
            "\nThe command seems to be waiting for input (\"Continue? [y/N]\"){NOTICE_END}"
        )),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_password_prompt_is_a_question_too() {
    let n = unique();
    let command = format!("printf 'Password: '; exec sleep {n}");
    let text = bash(json!({"command": command, "timeout": 300}))
        .await
        .text();
    assert!(
        text.ends_with(&format!("(\"Password:\"){NOTICE_END}")),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_on_plain_output_has_no_notice() {
    let n = unique();
    let command = format!("echo 'Compiling foo'; exec sleep {n}");
    let text = bash(json!({"command": command, "timeout": 300}))
        .await
        .text();
    assert_eq!(text, "Timed out after 300 ms\nCompiling foo\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_with_a_prompt_gets_end_of_input_at_once() {
    let result = bash(json!({
        "command": "read -p 'Continue? [y/N] ' x; echo \"read returned $?\"",
        "timeout": 600_000,
    }))
    .await;
    assert_eq!(result.text(), "Exit code: 0\nread returned 1\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_are_told_they_run_unattended() {
    let result = bash(json!({
        "command": "echo \"$CI|$DEBIAN_FRONTEND|$PIP_NO_INPUT|$GIT_SSH_COMMAND\"",
    }))
    .await;
    assert_eq!(
        result.text(),
        "Exit code: 0\n1|noninteractive|1|ssh -o BatchMode=yes\n"
    );
}
