//! Issue 13, item 15: the tools' own checks run before the gate, so edit's
//! and write's answers (not read yet, does not exist, is a directory, …)
//! told whether a file under a read-denied path exists. Now a path a
//! read-deny rule covers gets one answer, whether or not anything is there.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

use agentcore::approval::{ApprovalEngine, Mode};
use agentcore::config::Policy;
use agentcore::fs::read_state::FileReadState;
use agentcore::fs::workspace::Workspace;
use agentcore::process::OutputDir;
use agentcore::session::builtin_registry;
use agentcore::{Call, Pipeline, ToolRegistry, ToolResult};
use serde_json::{Value, json};
use tower::ServiceExt;

const POLICY: &str = r#"allow = ["bash(git status *)", "bash(ls *)"]
deny = ["bash(rm *)", "read(./secrets/**)"]
"#;

/// The three states of the workspace the answers must not tell apart.
#[derive(Clone, Copy, Debug)]
enum There {
    /// `secrets/x` is a file.
    File,
    /// `secrets/` exists, `secrets/x` does not.
    Nothing,
    /// `secrets/x` is a directory.
    Directory,
    /// There is no `secrets/` at all.
    NoFolder,
}

const STATES: [There; 4] = [
    There::File,
    There::Nothing,
    There::Directory,
    There::NoFolder,
];

fn workspace(there: There) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let secrets = dir.path().join("secrets");
    match there {
        There::File => {
            std::fs::create_dir(&secrets).unwrap();
            std::fs::write(secrets.join("x"), "API_KEY=k\n").unwrap();
        }
        There::Nothing => std::fs::create_dir(&secrets).unwrap(),
        There::Directory => std::fs::create_dir_all(secrets.join("x")).unwrap(),
        There::NoFolder => {}
    }
    std::fs::write(dir.path().join("policy.toml"), POLICY).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(dir.path().join("secrets"), dir.path().join("innocent")).unwrap();
    dir
}

/// The calls that once answered differently by what was there.
fn calls() -> Vec<Value> {
    let mut calls = Vec::new();
    for path in [
        "secrets/x",
        "./secrets/x",
        "src/../secrets/x",
        "secrets/x/y",
        "innocent/x",
        "innocent/x/y",
        "innocent/x/y/z",
    ] {
        calls.push(json!({"name": "edit", "args": {"file_path": path, "old_string": "API_KEY", "new_string": "K"}}));
        calls.push(json!({"name": "edit", "args": {"file_path": path, "old_string": "", "new_string": "K"}}));
        calls.push(json!({"name": "write", "args": {"file_path": path, "content": "K"}}));
    }
    calls
}

/// The built-in tools as a session has them (with their permissions).
fn registry(ws: &Workspace) -> Arc<ToolRegistry> {
    let output = Arc::new(OutputDir::new().unwrap());
    Arc::new(builtin_registry(ws, &FileReadState::new(), &output))
}

/// What the model learns from a result: outcome, code and text.
fn answer(r: &ToolResult) -> (String, Option<i64>, String) {
    (format!("{:?}", r.outcome), r.error_code, r.text())
}

async fn answers_in_process(there: There, mode: Mode) -> Vec<(String, Option<i64>, String)> {
    let dir = workspace(there);
    let policy = Policy::from_toml(POLICY).unwrap();
    let engine = ApprovalEngine::new(dir.path())
        .with_policy(&policy)
        .with_mode(mode);
    let filter = engine.read_filter();
    let ws = Workspace::new(dir.path())
        .unwrap()
        .with_read_denied(Arc::new(move |p: &Path| filter.is_denied(p)));
    let registry = registry(&ws);
    let pipeline = Pipeline::builder()
        .registry(registry)
        .gate(Arc::new(engine))
        .max_tool_errors(0)
        .build();
    let mut out = Vec::new();
    for (i, call) in calls().into_iter().enumerate() {
        let r = pipeline
            .service()
            .oneshot(Call::new(
                format!("c{i}"),
                call["name"].as_str().unwrap(),
                call["args"].clone(),
            ))
            .await
            .unwrap();
        out.push(answer(&r));
    }
    // Nothing was created or changed.
    let x = dir.path().join("secrets/x");
    match there {
        There::File => assert_eq!(std::fs::read_to_string(&x).unwrap(), "API_KEY=k\n"),
        There::Directory => assert!(x.is_dir()),
        There::Nothing | There::NoFolder => assert!(!x.exists()),
    }
    out
}

#[tokio::test]
async fn edit_and_write_answer_the_same_whatever_is_there() {
    for mode in [Mode::Default, Mode::AcceptEdits, Mode::Bypass] {
        let mut first: Option<Vec<_>> = None;
        for there in STATES {
            let answers = answers_in_process(there, mode).await;
            for (call, (outcome, code, text)) in calls().iter().zip(&answers) {
                assert_eq!(outcome, "Failed", "{mode} {there:?} {call}: {text}");
                assert_eq!(*code, Some(1), "{mode} {there:?} {call}: {text}");
                assert!(
                    text.starts_with("denied by a policy rule that denies reading ")
                        && text.ends_with("The user does not allow it; do not retry it or work around it with another tool, and choose a different approach."),
                    "{mode} {there:?} {call}: {text}"
                );
            }
            match &first {
                None => first = Some(answers),
                Some(first) => assert_eq!(first, &answers, "{mode}: {there:?} differs"),
            }
        }
    }
}

#[tokio::test]
async fn paths_beside_the_denied_folder_are_untouched() {
    let dir = workspace(There::File);
    let policy = Policy::from_toml(POLICY).unwrap();
    let engine = ApprovalEngine::new(dir.path())
        .with_policy(&policy)
        .with_mode(Mode::AcceptEdits);
    let filter = engine.read_filter();
    let ws = Workspace::new(dir.path())
        .unwrap()
        .with_read_denied(Arc::new(move |p: &Path| filter.is_denied(p)));
    let registry = registry(&ws);
    let pipeline = Pipeline::builder()
        .registry(registry)
        .gate(Arc::new(engine))
        .build();
    for path in ["secretsx/x", "src/secrets.txt", "public/secrets"] {
        let r = pipeline
            .service()
            .oneshot(Call::new(
                "w",
                "write",
                json!({"file_path": path, "content": "ok"}),
            ))
            .await
            .unwrap();
        assert_eq!(
            r.outcome,
            agentcore::Outcome::Success,
            "{path}: {}",
            r.text()
        );
    }
}

/// The same through `agentcore run` (the session wires the read filter into
/// the workspace), in accept-edits with the issue's policy.
#[test]
fn the_answers_are_identical_through_agentcore_run() {
    let mut first: Option<Vec<Value>> = None;
    for there in STATES {
        let dir = workspace(there);
        let mut input = String::new();
        for (i, mut call) in calls().into_iter().enumerate() {
            call["id"] = json!(format!("c{i}"));
            input.push_str(&json!({ "turn": [call] }).to_string());
            input.push('\n');
        }
        let mut child = Command::new(env!("CARGO_BIN_EXE_agentcore"))
            .args(["run", "--format", "jsonl", "--mode", "accept-edits"])
            // Every call fails by design: keep the breaker out of it.
            .args(["--max-tool-errors", "0", "--root"])
            .arg(dir.path())
            .arg("--policy")
            .arg(dir.path().join("policy.toml"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let ends: Vec<Value> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|e| e["type"] == "tool_exec_end")
            .map(|e| json!([e["tool_id"], e["outcome"], e["error_code"], e["content"]]))
            .collect();
        assert_eq!(ends.len(), calls().len(), "{there:?}");
        for end in &ends {
            assert_eq!(end[1], "failed", "{there:?}: {end}");
        }
        match &first {
            None => first = Some(ends),
            Some(first) => assert_eq!(first, &ends, "{there:?} differs"),
        }
    }
}
