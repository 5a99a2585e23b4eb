//! Issue 13, item 2: `.git` as a file. A model allowed to write (accept-
//! edits) and to run `git status` wrote a git directory of its own with
//! `core.fsmonitor` set to a command, then a file named `.git` pointing at
//! it (`gitdir: evil`); `git status` ran the command. The name `.git` is
//! protected at any depth, file or directory, and so is whatever directory
//! a `.git` file (or a `commondir` file) points to.

use std::path::Path;
use std::process::{Command, Stdio};

use agentcore::access::Access;
use agentcore::approval::{ApprovalEngine, DecisionSource, Mode, Verdict};
use agentcore::config::Policy;
use serde_json::{Value, json};

use crate::support::cli;

const POLICY: &str = r#"allow = ["bash(git status *)", "bash(ls *)"]
deny = ["bash(rm *)", "read(./secrets/**)"]
"#;

const PAYLOAD: &str =
    "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = \"touch PWNED; false\"\n";

/// The files of the attack, in the order the model wrote them: a git
/// directory `evil/` whose config runs `touch PWNED`, then `.git` naming it.
fn attack_files(git_file: &str) -> Vec<(String, String)> {
    let evil = match git_file.rsplit_once('/') {
        Some((dir, _)) => format!("{dir}/evil"),
        None => "evil".to_owned(),
    };
    vec![
        (format!("{evil}/config"), PAYLOAD.to_owned()),
        (format!("{evil}/HEAD"), "ref: refs/heads/main\n".to_owned()),
        (format!("{evil}/objects/info/keep"), String::new()),
        (format!("{evil}/refs/heads/keep"), String::new()),
        (git_file.to_owned(), "gitdir: evil\n".to_owned()),
    ]
}

/// Runs `agentcore run --format jsonl` in `root` with `input` on stdin.
fn run(root: &Path, extra: &[&str], input: &str) -> Vec<Value> {
    cli::events(&cli::agentcore_run(root, "jsonl", extra, input))
}

fn end<'a>(events: &'a [Value], id: &str) -> &'a Value {
    events
        .iter()
        .find(|e| e["type"] == "tool_exec_end" && e["tool_id"] == id)
        .unwrap_or_else(|| panic!("no end for {id}: {events:#?}"))
}

fn text(end: &Value) -> String {
    end["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The files of the attack are a working payload: written directly, plain
/// `git status` runs it. (Without this the end-to-end test below could pass
/// for the wrong reason.)
#[test]
#[ignore = "needs git"]
fn control_the_attack_files_run_their_payload_under_plain_git() {
    crate::support::require::require_program("git");
    let dir = tempfile::tempdir().unwrap();
    for (path, content) in attack_files(".git") {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    let _ = Command::new("git")
        .arg("status")
        .current_dir(dir.path())
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    assert!(
        dir.path().join("PWNED").exists(),
        "the reproduction no longer triggers fsmonitor in plain git"
    );
}

/// The attack end to end through `agentcore run`, in accept-edits with the
/// issue's policy: the write of `.git` asks (with nobody to ask, it is
/// denied), and `git status` runs nothing.
#[test]
fn the_git_file_attack_through_agentcore_run_is_stopped() {
    for git_file in [".git", "sub/.git"] {
        let dir = tempfile::tempdir().unwrap();
        let policy = dir.path().join("policy.toml");
        std::fs::write(&policy, POLICY).unwrap();
        let mut calls: Vec<Value> = attack_files(git_file)
            .into_iter()
            .enumerate()
            .map(|(i, (path, content))| {
                json!({"id": format!("w{i}"), "name": "write",
                       "args": {"file_path": path, "content": content}})
            })
            .collect();
        let cwd = git_file.trim_end_matches(".git");
        let command = if cwd.is_empty() {
            "git status --short".to_owned()
        } else {
            format!("git status --short {cwd}")
        };
        calls.push(json!({"id": "git", "name": "bash", "args": {"command": command}}));
        let mut input = String::new();
        for call in calls {
            // One turn per call: the writes run in order before git.
            input.push_str(&json!({ "turn": [call] }).to_string());
            input.push('\n');
        }
        let events = run(
            dir.path(),
            &[
                "--mode",
                "accept-edits",
                "--policy",
                policy.to_str().unwrap(),
            ],
            &input,
        );
        // The git directory's own files were ordinary writes…
        assert_eq!(end(&events, "w0")["outcome"], "success", "{git_file}");
        // …but `.git` itself was not written.
        let git = end(&events, "w4");
        assert_eq!(git["outcome"], "denied", "{git_file}: {git}");
        let reason = text(git);
        assert!(
            reason.starts_with("approval required: ") && reason.contains("is a protected path"),
            "{git_file}: {reason}"
        );
        assert!(
            !dir.path().join(git_file).exists(),
            "{git_file} was written"
        );
        // git itself was allowed to run (the policy allows it): the payload
        // did not run because nothing pointed to it, not because git was
        // stopped.
        assert_ne!(end(&events, "git")["outcome"], "denied", "{git_file}");
        assert!(
            !dir.path().join("PWNED").exists() && !dir.path().join("sub/PWNED").exists(),
            "{git_file}: the payload ran"
        );
    }
}

fn engine(root: &Path, mode: Mode) -> ApprovalEngine {
    let policy = Policy::from_toml(r#"allow = ["write(**)", "read(**)"]"#).unwrap();
    ApprovalEngine::new(root)
        .with_policy(&policy)
        .with_mode(mode)
}

fn write_decision(e: &ApprovalEngine, path: &str) -> agentcore::approval::Decision {
    e.evaluate_access("write", &Access::write([path]))
}

#[test]
fn the_name_git_is_protected_at_any_depth_as_file_or_directory() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    std::fs::create_dir_all(root.join("a/b/.git")).unwrap();
    std::fs::write(root.join("a/.git"), "gitdir: x\n").unwrap();
    for mode in [Mode::Default, Mode::AcceptEdits] {
        let e = engine(root, mode);
        for path in [
            ".git",
            "./.git",
            "x/../.git",
            "sub/.git",
            "a/.git",
            "a/b/.git",
            "a/b/.git/config",
            "deep/er/.git",
            "deep/er/.git/hooks/pre-commit",
            ".git/",
        ] {
            let d = write_decision(&e, path);
            assert_eq!(d.verdict, Verdict::Ask, "{mode} write {path}: {}", d.reason);
            assert!(
                matches!(d.source, DecisionSource::ProtectedPath(_)),
                "{mode} {path}: {:?}",
                d.source
            );
            assert!(
                d.reason.contains("is a protected path (.git, .env files"),
                "{mode} {path}: {}",
                d.reason
            );
        }
        // Names that only look alike are not protected.
        for path in [".gitignore", ".github/workflows/ci.yml", "a.git", "git/x"] {
            assert_eq!(
                write_decision(&e, path).verdict,
                Verdict::Allow,
                "{mode} {path}"
            );
        }
    }
    // Bypass mode allows what no deny rule denies, protected paths too.
    let e = engine(root, Mode::Bypass);
    assert_eq!(write_decision(&e, "sub/.git").verdict, Verdict::Allow);
}

#[test]
fn what_a_git_file_points_to_is_protected() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    std::fs::create_dir_all(root.join("nested/deeper")).unwrap();
    std::fs::write(root.join(".git"), "gitdir: evil\n").unwrap();
    std::fs::write(root.join("nested/.git"), "gitdir: gd\r\n").unwrap();
    std::fs::create_dir_all(root.join("evil")).unwrap();
    std::fs::write(root.join("evil/commondir"), "../common\n").unwrap();
    let e = engine(root, Mode::AcceptEdits);
    for path in [
        "evil",
        "evil/config",
        "evil/hooks/post-checkout",
        "./evil/../evil/config",
        "common/config",
        "nested/gd/config",
        "nested/gd",
    ] {
        let d = write_decision(&e, path);
        assert_eq!(d.verdict, Verdict::Ask, "write {path}: {}", d.reason);
        assert!(
            matches!(d.source, DecisionSource::ProtectedPath(_)),
            "{path}: {:?}",
            d.source
        );
    }
    let d = write_decision(&e, "evil/config");
    assert_eq!(
        d.reason,
        "\"evil/config\" is a protected path (it is in evil, the git directory that .git points to; .git, .env files, .ssh folders and Claude Code's settings and hooks always need the user's approval), and this call writes evil/config."
    );
    let d = write_decision(&e, "common/config");
    assert!(
        d.reason
            .contains("it is in common, the git directory that evil/commondir points to"),
        "{}",
        d.reason
    );
    // Reads of it ask too, as reads of .git/ do.
    let read = Access::read(["evil/config"]);
    assert_eq!(e.evaluate_access("read", &read).verdict, Verdict::Ask);
    // Files beside the git directory stay ordinary.
    for path in ["evilx/config", "src/main.rs", "nested/deeper/file.txt"] {
        let d = write_decision(&e, path);
        assert_eq!(d.verdict, Verdict::Allow, "write {path}: {}", d.reason);
    }
}

#[test]
fn a_git_file_that_names_nothing_protects_nothing_else() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    std::fs::write(root.join(".git"), "this is not a pointer\n").unwrap();
    let e = engine(root, Mode::AcceptEdits);
    assert_eq!(write_decision(&e, "evil/config").verdict, Verdict::Allow);
    assert_eq!(write_decision(&e, ".git").verdict, Verdict::Ask);
}

#[test]
fn a_git_file_pointing_at_the_root_s_parent_protects_everything() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path().join("ws");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join(".git"), "gitdir: ..\n").unwrap();
    let e = engine(&root, Mode::AcceptEdits);
    assert_eq!(write_decision(&e, "anything.txt").verdict, Verdict::Ask);
}

#[test]
fn a_redirection_into_the_pointed_directory_is_protected() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    std::fs::write(root.join(".git"), "gitdir: evil\n").unwrap();
    let policy = Policy::from_toml(r#"allow = ["bash(echo *)"]"#).unwrap();
    let e = ApprovalEngine::new(root)
        .with_policy(&policy)
        .with_mode(Mode::AcceptEdits);
    let access = Access::command("echo x > evil/config");
    let d = e.evaluate_access("bash", &access);
    assert_ne!(d.verdict, Verdict::Allow, "{}", d.reason);
}
