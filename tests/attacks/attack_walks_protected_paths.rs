//! Issue 13 item 6, the walks: `read .env` asks, so `grep API_KEY` must not
//! print `.env:1:API_KEY=…` and `glob` must not list `.env`. Walks leave out
//! every path whose reading would be denied or would ask — read-deny
//! rules, read-ask rules, protected paths outside bypass mode — and grep
//! does not show a file with several names (hard links) unless the walk met
//! every one of them, so a link to a denied file placed elsewhere shows
//! nothing.

#![cfg(unix)]

use std::fs;
use std::path::Path;

use agentcore::approval::Mode;
use agentcore::config::Policy;
use agentcore::session::{Session, SessionConfig};
use agentcore::{CallContext, EventSink, GatedArgs};
use serde_json::{Value, json};

use crate::support::files::write;
use crate::support::text_of;

const POLICY: &str = r#"
allow = ["bash(git status *)", "bash(ls *)"]
ask = ["read(./private/**)"]
deny = ["bash(rm *)", "read(./secrets/**)"]
"#;

/// A workspace with protected, denied, ask-covered and plain files, all
/// holding `API_KEY`.
fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    write(r, ".env", "API_KEY=sk-live-env\n");
    write(r, ".env.local", "API_KEY=sk-live-env-local\n");
    write(r, "app/.env.production", "API_KEY=sk-live-prod\n");
    write(r, "home/.ssh/id_rsa", "API_KEY=sk-live-ssh\n");
    write(r, "secrets/x", "API_KEY=sk-live-secret\n");
    write(r, "private/notes.txt", "API_KEY=sk-live-private\n");
    write(
        r,
        "src/config.rs",
        "// reads API_KEY from the environment\n",
    );
    dir
}

fn session(root: &Path, mode: Option<Mode>) -> Session {
    let mut config = SessionConfig::new(root);
    config.policy = Some(Policy::from_toml(POLICY).unwrap());
    config.mode = mode;
    Session::start(config).unwrap()
}

async fn call(session: &Session, tool: &str, args: Value) -> String {
    let tool = session
        .registry()
        .get(tool)
        .expect("built-in tool")
        .tool()
        .clone();
    let cx = CallContext::for_test("p1", EventSink::noop());
    match tool.execute(GatedArgs::for_test(args), &cx).await {
        Ok(out) => text_of(&out.content),
        Err(e) => text_of(&e.content),
    }
}

fn assert_no_secret(text: &str) {
    for leak in [
        "sk-live",
        ".env",
        "id_rsa",
        ".ssh",
        "secrets/x",
        "private/notes",
    ] {
        assert!(!text.contains(leak), "{leak:?} leaked:\n{text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn walks_leave_out_what_reading_would_ask_for_or_deny() {
    let dir = tree();
    for mode in [None, Some(Mode::AcceptEdits), Some(Mode::Plan)] {
        let s = session(dir.path(), mode);
        let content = call(
            &s,
            "grep",
            json!({"pattern": "API_KEY", "output_mode": "content"}),
        )
        .await;
        assert_no_secret(&content);
        assert_eq!(
            content, "src/config.rs:1:// reads API_KEY from the environment",
            "{mode:?}"
        );
        let files = call(&s, "grep", json!({"pattern": "API_KEY"})).await;
        assert_eq!(files, "Found 1 file\nsrc/config.rs", "{mode:?}");
        let count = call(
            &s,
            "grep",
            json!({"pattern": "sk-live", "output_mode": "count"}),
        )
        .await;
        assert_eq!(count, "No matches found", "{mode:?}");
        let glob = call(&s, "glob", json!({"pattern": "**/*"})).await;
        assert_no_secret(&glob);
        assert_eq!(glob, "src/config.rs", "{mode:?}");
        let glob_env = call(&s, "glob", json!({"pattern": ".env*"})).await;
        assert_eq!(glob_env, "No files found", "{mode:?}");
        let ls = call(&s, "ls", json!({"path": "."})).await;
        assert_no_secret(&ls);
        assert_eq!(
            ls, "- ./\n  - app/\n  - home/\n  - src/\n    - config.rs",
            "{mode:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bypass_mode_shows_protected_and_ask_paths_but_never_denied_ones() {
    let dir = tree();
    let s = session(dir.path(), Some(Mode::Bypass));
    let content = call(
        &s,
        "grep",
        json!({"pattern": "sk-live", "output_mode": "content"}),
    )
    .await;
    assert!(content.contains(".env:1:API_KEY=sk-live-env"), "{content}");
    assert!(content.contains("home/.ssh/id_rsa:1:"), "{content}");
    assert!(content.contains("private/notes.txt:1:"), "{content}");
    assert!(!content.contains("sk-live-secret"), "{content}");
    assert!(!content.contains("secrets/x"), "{content}");

    // The mode is read at each call: leaving bypass hides them again.
    s.approval().set_mode(Mode::Default);
    let content = call(
        &s,
        "grep",
        json!({"pattern": "sk-live", "output_mode": "content"}),
    )
    .await;
    assert_eq!(content, "No matches found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_rooted_at_a_protected_directory_still_hides_it() {
    let dir = tree();
    let s = session(dir.path(), None);
    // The gate asks before such a call runs; the tool itself, called
    // directly, still shows nothing protected beneath its start.
    let text = call(
        &s,
        "grep",
        json!({"pattern": "API_KEY", "path": "home", "output_mode": "content"}),
    )
    .await;
    assert_eq!(text, "No matches found");
    let text = call(&s, "glob", json!({"pattern": "**", "path": "app"})).await;
    assert_eq!(text, "No files found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hard_link_to_a_denied_or_protected_file_shows_nothing() {
    let dir = tree();
    let r = dir.path();
    fs::hard_link(r.join("secrets/x"), r.join("notes.txt")).unwrap();
    fs::hard_link(r.join(".env"), r.join("src/env-copy")).unwrap();
    let s = session(r, None);
    let content = call(
        &s,
        "grep",
        json!({"pattern": "API_KEY", "output_mode": "content"}),
    )
    .await;
    assert_no_secret(&content);
    assert_eq!(
        content,
        "src/config.rs:1:// reads API_KEY from the environment\n(2 files with several names (hard links) were not searched: their other names lie outside the searched files or are hidden by the policy.)"
    );
    let files = call(&s, "grep", json!({"pattern": "sk-live"})).await;
    assert_eq!(
        files,
        "No matches found\n(2 files with several names (hard links) were not searched: their other names lie outside the searched files or are hidden by the policy.)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hard_links_whose_every_name_is_seen_are_searched() {
    let dir = tree();
    let r = dir.path();
    write(r, "src/a.txt", "linked needle\n");
    fs::hard_link(r.join("src/a.txt"), r.join("src/b.txt")).unwrap();
    let s = session(r, None);
    let content = call(
        &s,
        "grep",
        json!({"pattern": "linked needle", "output_mode": "content"}),
    )
    .await;
    assert_eq!(
        content,
        "src/a.txt:1:linked needle\nsrc/b.txt:1:linked needle"
    );
    // Searched from `src` only one name... both names lie in src: still shown.
    let content = call(
        &s,
        "grep",
        json!({"pattern": "linked needle", "path": "src", "output_mode": "content"}),
    )
    .await;
    assert_eq!(
        content,
        "src/a.txt:1:linked needle\nsrc/b.txt:1:linked needle"
    );
    // A search that meets one name only cannot vouch for the other.
    let one = call(
        &s,
        "grep",
        json!({"pattern": "linked needle", "path": "src/a.txt", "output_mode": "content"}),
    )
    .await;
    assert!(
        one.starts_with("No matches found\n(1 file with several names"),
        "{one}"
    );
}

/// Walks leave protected paths out, but that is not a read-deny rule: a
/// write to `.env` is judged by the gate (it asks; in bypass it runs), not
/// refused by the tools' own read-deny check.
#[tokio::test]
async fn protected_paths_hidden_from_walks_are_not_refused_as_read_denied() {
    let dir = tree();
    for mode in [None, Some(Mode::Bypass)] {
        let session = session(dir.path(), mode);
        let cx = CallContext::for_test("p1", EventSink::noop());
        for (tool, args) in [
            (
                "write",
                json!({"file_path": ".env.new", "content": "A=1\n"}),
            ),
            (
                "edit",
                json!({"file_path": ".env", "old_string": "API_KEY", "new_string": "KEY"}),
            ),
        ] {
            let tool = session.registry().get(tool).unwrap().tool().clone();
            if let Err(failure) = tool.validate(&args, &cx).await {
                let text = format!("{failure:?}");
                assert!(
                    !text.contains("denies reading"),
                    "{mode:?}: {args} was refused as read-denied: {text}"
                );
            }
        }
        // secrets/ stays refused by the tools themselves, in every mode.
        let write = session.registry().get("write").unwrap().tool().clone();
        let args = json!({"file_path": "secrets/new", "content": "x"});
        let failure = write.validate(&args, &cx).await.unwrap_err();
        assert!(
            format!("{failure:?}").contains("denies reading"),
            "{mode:?}"
        );
    }
}
