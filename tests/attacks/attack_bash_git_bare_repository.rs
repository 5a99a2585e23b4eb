//! Issue 13, from item 2: a model that can write files lays out a bare
//! repository (HEAD, config with `core.fsmonitor`, objects/, refs/, an
//! index) in a directory of the workspace; an allowed `git status` run
//! there would run the payload. Commands get git's protected setting
//! `safe.bareRepository=explicit` through the environment, so git refuses
//! to use a bare repository it merely finds.
#![cfg(target_os = "linux")]

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use agentcore::TypedTool;
use agentcore::process::OutputDir;
use agentcore::tools::bash::BashTool;
use agentcore::{Call, Outcome, Pipeline, ToolRegistry};
use serde_json::json;
use tower::ServiceExt;

use crate::support::procs::path_and_home;

fn git() -> Option<&'static str> {
    ["/usr/bin/git", "/usr/local/bin/git", "/bin/git"]
        .into_iter()
        .find(|p| Path::new(p).exists())
}

/// Writes the bare layout into `ws/evil`, with a work tree of `ws` and an
/// index, so that `git status` in `ws/evil` runs `core.fsmonitor`.
fn plant(git: &str, ws: &Path) {
    let evil = ws.join("evil");
    std::fs::create_dir_all(evil.join("objects")).unwrap();
    std::fs::create_dir_all(evil.join("refs/heads")).unwrap();
    std::fs::write(evil.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(
        evil.join("config"),
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ..\n",
    )
    .unwrap();
    std::fs::write(ws.join("f.txt"), "hi\n").unwrap();
    // The index, which makes status refresh it through the fsmonitor; an
    // explicit --git-dir is what safe.bareRepository still allows.
    let status = Command::new(git)
        .args(["--git-dir=evil", "--work-tree=.", "add", "f.txt"])
        .current_dir(ws)
        .env_remove("GIT_CONFIG_COUNT")
        .status()
        .unwrap();
    assert!(status.success());
    let mut config = std::fs::read_to_string(evil.join("config")).unwrap();
    config.push_str("\tfsmonitor = \"touch PWNED; false\"\n");
    std::fs::write(evil.join("config"), config).unwrap();
}

fn pwned(ws: &Path) -> bool {
    ws.join("PWNED").exists() || ws.join("evil/PWNED").exists()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs git (in /usr/bin, /usr/local/bin or /bin)"]
async fn git_status_in_a_planted_bare_repository_does_not_run_its_fsmonitor() {
    let git =
        git().expect("this test needs git in /usr/bin, /usr/local/bin or /bin, and there is none");
    let ws = tempfile::tempdir().unwrap();
    plant(git, ws.path());

    // The attack is real: git without the setting runs the payload (unless
    // this machine's own git configuration already refuses bare
    // repositories).
    let configured = Command::new(git)
        .args(["config", "--get", "safe.bareRepository"])
        .output()
        .map(|o| !o.stdout.is_empty())
        .unwrap_or(false);
    if !configured {
        let _ = Command::new(git)
            .arg("status")
            .current_dir(ws.path().join("evil"))
            .env_remove("GIT_CONFIG_COUNT")
            .output()
            .unwrap();
        assert!(
            pwned(ws.path()),
            "the planted repository did not fire without protection"
        );
        let _ = std::fs::remove_file(ws.path().join("PWNED"));
        let _ = std::fs::remove_file(ws.path().join("evil/PWNED"));
    }

    let env = path_and_home();
    let output_dir = Arc::new(OutputDir::new().unwrap());
    let tool = BashTool::new(ws.path().to_owned(), output_dir).base_env(env);
    let registry = ToolRegistry::new().with(tool.into_dyn()).unwrap();
    let pipeline = Pipeline::builder().registry(Arc::new(registry)).build();
    for command in [
        "cd evil && git status",
        "git -C evil status",
        "cd evil && git log",
    ] {
        let result = pipeline
            .service()
            .oneshot(Call::new("t", "bash", json!({"command": command})))
            .await
            .unwrap();
        assert_eq!(result.outcome, Outcome::Success);
        let text = result.text();
        assert!(!pwned(ws.path()), "{command}: the payload ran: {text}");
        assert!(text.contains("safe.bareRepository"), "{command}: {text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs git (in /usr/bin, /usr/local/bin or /bin)"]
async fn the_users_own_git_config_from_the_environment_is_kept() {
    git().expect("this test needs git in /usr/bin, /usr/local/bin or /bin, and there is none");
    let ws = tempfile::tempdir().unwrap();
    let mut env = path_and_home();
    env.extend([
        ("GIT_CONFIG_COUNT".to_owned(), "1".to_owned()),
        ("GIT_CONFIG_KEY_0".to_owned(), "user.name".to_owned()),
        (
            "GIT_CONFIG_VALUE_0".to_owned(),
            "From The Harness".to_owned(),
        ),
    ]);
    let output_dir = Arc::new(OutputDir::new().unwrap());
    let tool = BashTool::new(ws.path().to_owned(), output_dir).base_env(env);
    let registry = ToolRegistry::new().with(tool.into_dyn()).unwrap();
    let pipeline = Pipeline::builder().registry(Arc::new(registry)).build();
    let result = pipeline
        .service()
        .oneshot(Call::new(
            "t",
            "bash",
            json!({"command": "git config --get user.name; git config --get safe.bareRepository"}),
        ))
        .await
        .unwrap();
    assert_eq!(result.text(), "Exit code: 0\nFrom The Harness\nexplicit\n");
}
