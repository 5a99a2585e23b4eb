//! `agentcore demo`: a scratch workspace and a bundled session that shows
//! the kernel at work. No setup, no network.

use std::process::ExitCode;

use super::out::{self, errln};
use super::pretty::Pretty;
use super::protocol::{Input, parse_line};
use super::run::{Output, run_turn};
use super::term::Screen;
use agentcore::config::Policy;
use agentcore::session::{Session, SessionConfig};

/// The scratch workspace's files.
const FILES: &[(&str, &str)] = &[
    (
        "src/lib.rs",
        "//! A tiny crate with a bug.\n\npub mod util;\n\n/// Adds two numbers.\npub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n",
    ),
    (
        "src/util.rs",
        "/// Doubles a number.\npub fn double(x: i32) -> i32 {\n    x * 2\n}\n",
    ),
    (
        "README.md",
        "# demo\n\nA scratch workspace made by `agentcore demo`.\n",
    ),
    (
        "notes.txt",
        "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n",
    ),
];

/// The policy the demo runs under: edits allowed, a few commands allowed,
/// `rm` denied.
const POLICY: &str = r#"
mode = "accept-edits"
allow = ["bash(echo *)", "bash(sleep *)"]
deny = ["bash(rm *)"]
"#;

/// The bundled session: a note for people, then one protocol line.
const SCENES: &[(&str, &str)] = &[
    (
        "A user prompt starts a run.",
        r#"{"user": "The add function is wrong. Find it and fix it."}"#,
    ),
    (
        "Parallel reads: four read-only calls run side by side.",
        r#"{"turn": [
            {"id": "r1", "name": "read", "args": {"file_path": "src/lib.rs"}},
            {"id": "r2", "name": "read", "args": {"file_path": "README.md"}},
            {"id": "g1", "name": "grep", "args": {"pattern": "fn \\w+", "output_mode": "content"}},
            {"id": "f1", "name": "glob", "args": {"pattern": "**/*.rs"}}]}"#,
    ),
    (
        "Read before write: editing a file the model never read is refused (code 2) ...",
        r#"{"turn": [{"id": "e1", "name": "edit", "args": {"file_path": "src/util.rs", "old_string": "x * 2", "new_string": "x + x"}}]}"#,
    ),
    (
        "... and recovered: read it, then edit it in the same turn (the edit waits for the read). The fix to add shows its diff.",
        r#"{"turn": [
            {"id": "r3", "name": "read", "args": {"file_path": "src/util.rs"}},
            {"id": "e2", "name": "edit", "args": {"file_path": "src/util.rs", "old_string": "x * 2", "new_string": "x + x"}},
            {"id": "e3", "name": "edit", "args": {"file_path": "src/lib.rs", "old_string": "    a - b", "new_string": "    a + b"}}]}"#,
    ),
    (
        "A coerced argument: the model sent limit as the string \"3\"; the schema says integer, so it becomes 3.",
        r#"{"turn": [{"id": "r4", "name": "read", "args": "{\"file_path\": \"notes.txt\", \"limit\": \"3\"}"}]}"#,
    ),
    (
        "A denied command: the policy denies rm; the model reads why and carries on.",
        r#"{"turn": [{"id": "b1", "name": "bash", "args": {"command": "rm -rf target"}}]}"#,
    ),
    (
        "A confined command (Linux): the sandbox lets it run without asking, and its write outside the workspace fails.",
        r#"{"turn": [{"id": "b4", "name": "bash", "args": {"command": "echo probe > ../agentcore-demo-outside.txt"}}]}"#,
    ),
    (
        "A command that times out: its process group is killed and its output kept.",
        r#"{"turn": [{"id": "b2", "name": "bash", "args": {"command": "echo working; sleep 5", "timeout": 1000}}]}"#,
    ),
    (
        "Steering: a user message arrives 300 ms in; the running command is interrupted and the calls not yet started are skipped.",
        r#"{"turn": [
            {"id": "b3", "name": "bash", "args": {"command": "sleep 3"}},
            {"id": "r5", "name": "read", "args": {"file_path": "README.md"}},
            {"id": "g2", "name": "grep", "args": {"pattern": "add"}}],
          "steer_after_ms": 300}"#,
    ),
];

/// Runs the demo; a reader of stdout that goes away ends it quietly
/// (exit 0), the scratch workspace removed.
pub async fn demo(screen: &Screen) -> ExitCode {
    match run_demo(screen).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            errln!("agentcore demo: {message}");
            ExitCode::from(1)
        }
    }
}

async fn run_demo(screen: &Screen) -> Result<(), String> {
    let scratch = tempfile::Builder::new()
        .prefix("agentcore-demo-")
        .tempdir()
        .map_err(|e| format!("cannot make a scratch workspace: {e}"))?;
    for (path, text) in FILES {
        let path = scratch.path().join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        std::fs::write(&path, text).map_err(|e| e.to_string())?;
    }
    let mut config = SessionConfig::new(scratch.path());
    config.policy = Some(Policy::from_toml(POLICY).map_err(|e| e.to_string())?);
    let session = Session::start(config).map_err(|e| e.to_string())?;
    let mut output = Output::Pretty(Box::new(Pretty::new(session.registry().clone(), screen)));
    output.hello(&session);
    for (note, line) in SCENES {
        if out::closed() {
            return Ok(());
        }
        output.note(note);
        // The bundled lines are written over several lines for reading.
        let line = line.replace('\n', " ");
        match parse_line(&line) {
            Ok(Some(Input::User(text))) => {
                session.new_prompt();
                output.user(&text);
            }
            Ok(Some(Input::Turn(turn))) => {
                run_turn(&session, turn, &mut output, None).await;
            }
            Ok(Some(Input::Checkpoints)) => output.checkpoints(&session),
            Ok(Some(Input::Rewind(to, mode))) => output.rewind(&session, to, mode),
            Ok(None) => {}
            Err(message) => return Err(format!("bundled scene is invalid: {message}")),
        }
    }
    output.note("Done. The scratch workspace is removed.");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bundled_scene_parses() {
        for (_, line) in SCENES {
            let line = line.replace('\n', " ");
            assert!(matches!(parse_line(&line), Ok(Some(_))), "{line}");
        }
        assert!(Policy::from_toml(POLICY).is_ok());
    }
}
