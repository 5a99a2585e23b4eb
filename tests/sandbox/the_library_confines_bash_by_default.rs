//! Issue 27 item 2: a library user who builds the built-in tools without a
//! [`Session`] gets `bash` confined as the CLI confines it, and runs
//! commands unconfined only by asking for it by name.

use std::sync::Arc;

use agentcore::fs::read_state::FileReadState;
use agentcore::fs::workspace::Workspace;
use agentcore::process::OutputDir;
use agentcore::session::{builtin_registry, builtin_registry_unconfined};
use agentcore::tools::bash::Jobs;
use agentcore::tools::set::ToolSet;
use agentcore::{Call, Outcome, Pipeline, ToolRegistry, ToolResult};
use serde_json::json;
use tower::ServiceExt;

use crate::support::require::require_sandbox;

/// One `bash` call through a pipeline with no gate (every call allowed).
async fn bash(registry: ToolRegistry, command: &str) -> ToolResult {
    let pipeline = Pipeline::builder().registry(Arc::new(registry)).build();
    pipeline
        .service()
        .oneshot(Call::new("c1", "bash", json!({"command": command})))
        .await
        .unwrap()
}

#[tokio::test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces)"]
async fn builtin_registry_bash_cannot_write_outside_the_workspace() {
    require_sandbox();
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("escaped.txt");
    let workspace = Workspace::new(root.path()).unwrap();
    let output = Arc::new(OutputDir::new().unwrap());
    let registry = builtin_registry(&workspace, &FileReadState::new(), &output);
    let result = bash(
        registry,
        &format!("echo in > inside.txt; echo hi > {}", target.display()),
    )
    .await;
    assert_eq!(result.outcome, Outcome::Success, "{}", result.text());
    assert!(
        result.text().starts_with("Exit code: 1"),
        "{}",
        result.text()
    );
    assert!(result.text().contains("(sandboxed: "), "{}", result.text());
    assert!(!target.exists(), "the write outside landed");
    assert_eq!(
        std::fs::read_to_string(root.path().join("inside.txt")).unwrap(),
        "in\n",
        "writes inside the workspace still work"
    );
}

#[tokio::test]
async fn builtin_registry_unconfined_says_so_and_writes_anywhere() {
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("written.txt");
    let workspace = Workspace::new(root.path()).unwrap();
    let output = Arc::new(OutputDir::new().unwrap());
    let registry = builtin_registry_unconfined(
        &ToolSet::default(),
        &workspace,
        &FileReadState::new(),
        &output,
        &Arc::new(Jobs::default()),
    );
    let result = bash(registry, &format!("echo hi > {}", target.display())).await;
    assert_eq!(result.outcome, Outcome::Success, "{}", result.text());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "hi\n");
}
