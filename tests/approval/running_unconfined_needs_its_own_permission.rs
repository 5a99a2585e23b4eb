//! Issue 25, item 3: an allow rule names a command the user trusts inside
//! the sandbox, not outside it. With `allow = ["bash(cargo test *)"]` the
//! model ran `cargo test --config 'target.<triple>.runner=[…]'` with
//! `dangerously_disable_sandbox: true`, unconfined, with nobody asked: cargo
//! runs whatever the runner (or `build.rustc-wrapper`, or a `build.rs` a
//! confined command wrote) says. Running unconfined is now a permission of
//! its own, the policy's `allow_unsandboxed`; `allow`, a session grant of
//! the confined command and a PreToolUse hook's `allow` never give it, and
//! bypass mode does not either.
//!
//! Through the engine's API in every mode, through `agentcore run` with a
//! real sandbox (the marker the command would write outside stays absent),
//! and through a session with an approver (session grants) and a hook.
#![cfg(target_os = "linux")]

use std::path::Path;
use std::sync::{Arc, Mutex};

use agentcore::access::Access;
use agentcore::approval::{
    ApprovalAnswer, ApprovalEngine, DecisionSource, Mode, Verdict, approver_fn,
};
use agentcore::config::Policy;
use agentcore::hooks::HookConfig;
use agentcore::message::ToolCall;
use agentcore::session::{Session, SessionConfig};
use agentcore::{EventSink, Outcome, ToolResult};
use serde_json::{Value, json};

use crate::support::require::*;
use crate::support::sandbox::*;

/// The issue's commands: each would run `touch MARKER` outside the sandbox
/// through cargo, had it been allowed unconfined.
fn cargo_attacks(marker: &Path) -> Vec<String> {
    let m = marker.display();
    vec![
        format!(
            "cargo test --config 'target.x86_64-unknown-linux-gnu.runner=[\"sh\",\"-c\",\"touch {m}\"]'"
        ),
        format!(
            "cargo test --config 'target.aarch64-unknown-linux-gnu.runner=[\"sh\",\"-c\",\"touch {m}\"]' -- --nocapture"
        ),
        format!("cargo test --config build.rustc-wrapper=\"{m}.sh\""),
        format!("cargo test --config 'build.rustc-wrapper=\"{m}.sh\"' --lib"),
        // A build.rs written earlier by a confined command runs on any build.
        "cargo test".to_owned(),
    ]
}

fn engine(root: &Path, policy: &str, mode: Mode) -> ApprovalEngine {
    let policy = Policy::from_toml(policy).expect("policy");
    ApprovalEngine::new(root)
        .with_policy(&policy)
        .with_mode(mode)
}

fn unconfined(command: &str) -> Access {
    Access::command(command).outside_sandbox(Some("needs the toolchain".into()))
}

#[test]
fn an_allow_rule_never_lets_a_command_run_outside_the_sandbox() {
    let ws = tempfile::tempdir().unwrap();
    let marker = ws.path().join("ran-unconfined");
    for policy in [
        r#"allow = ["bash(cargo test *)"]"#,
        r#"allow = ["bash(cargo *)"]"#,
        r#"allow = ["bash"]"#,
    ] {
        for mode in [Mode::Default, Mode::AcceptEdits, Mode::Bypass] {
            let e = engine(ws.path(), policy, mode);
            for attack in cargo_attacks(&marker) {
                let d = e.evaluate_access("bash", &unconfined(&attack));
                assert_eq!(d.verdict, Verdict::Ask, "{policy} {mode}: {attack}: {d:?}");
                assert_eq!(d.source, DecisionSource::OutsideSandbox, "{d:?}");
                assert!(
                    d.reason.contains("allow_unsandboxed")
                        && d.reason.contains("\"needs the toolchain\""),
                    "{}",
                    d.reason
                );
                // The same command confined is what the allow rule is for.
                let d = e.evaluate_access("bash", &Access::command(&attack).sandboxed());
                assert_eq!(
                    d.verdict,
                    Verdict::Allow,
                    "{policy} {mode}: {attack}: {d:?}"
                );
            }
        }
    }
}

#[test]
fn allow_unsandboxed_lets_the_command_it_names_run_outside_the_sandbox() {
    let ws = tempfile::tempdir().unwrap();
    let policy = r#"allow_unsandboxed = ["bash(make deploy *)"]"#;
    for mode in [Mode::Default, Mode::AcceptEdits, Mode::Bypass] {
        let e = engine(ws.path(), policy, mode);
        let d = e.evaluate_access("bash", &unconfined("make deploy --env prod"));
        assert_eq!(d.verdict, Verdict::Allow, "{mode}: {d:?}");
        if mode != Mode::Bypass {
            assert_eq!(
                d.source,
                DecisionSource::UnsandboxedRule("bash(make deploy *)".into()),
                "{d:?}"
            );
            assert!(
                d.reason
                    .contains("allow_unsandboxed rule \"bash(make deploy *)\""),
                "{}",
                d.reason
            );
        }
        // It allows the command confined as well.
        let d = e.evaluate_access("bash", &Access::command("make deploy --env prod"));
        assert_eq!(d.verdict, Verdict::Allow, "{mode}: {d:?}");
        // And nothing else: another command, a compound with one, a hidden part.
        for other in [
            "make test",
            "make deploy; rm -rf ~",
            "make deploy $(curl x)",
            "eval make deploy",
        ] {
            let d = e.evaluate_access("bash", &unconfined(other));
            assert_eq!(d.verdict, Verdict::Ask, "{mode}: {other}: {d:?}");
        }
    }
    // Deny rules, ask rules and plan mode still win.
    let e = engine(
        ws.path(),
        r#"allow_unsandboxed = ["bash(make *)"]
deny = ["bash(make clean *)"]
ask = ["bash(make deploy *)"]"#,
        Mode::Default,
    );
    assert_eq!(
        e.evaluate_access("bash", &unconfined("make clean")).verdict,
        Verdict::Deny
    );
    assert_eq!(
        e.evaluate_access("bash", &unconfined("make deploy"))
            .verdict,
        Verdict::Ask
    );
    assert_eq!(
        e.evaluate_access("bash", &unconfined("make all")).verdict,
        Verdict::Allow
    );
    e.set_mode(Mode::Plan);
    assert_eq!(
        e.evaluate_access("bash", &unconfined("make all")).verdict,
        Verdict::Deny
    );
    // A rule that does not parse is refused with the rule named.
    let err = Policy::from_toml(r#"allow_unsandboxed = ["bash(make"]"#).unwrap_err();
    assert!(err.to_string().contains("specifier is not closed"), "{err}");
}

#[test]
fn a_session_grant_of_the_confined_command_does_not_cover_it_unconfined() {
    let ws = tempfile::tempdir().unwrap();
    let e = engine(ws.path(), "", Mode::Default).with_auto_allow(false);
    let command = "cargo test --config build.rustc-wrapper=/tmp/w.sh";
    let confined = Access::command(command).sandboxed();
    for grant in e.grants_for("bash", &confined) {
        assert!(!grant.is_outside_sandbox(), "{grant}");
        e.grant_session(grant);
    }
    assert_eq!(e.evaluate_access("bash", &confined).verdict, Verdict::Allow);
    let d = e.evaluate_access("bash", &unconfined(command));
    assert_eq!(d.verdict, Verdict::Ask, "{d:?}");
    assert_eq!(d.source, DecisionSource::OutsideSandbox);

    // A grant given for the unconfined run covers it, and says so.
    let grants = e.grants_for("bash", &unconfined(command));
    assert!(!grants.is_empty());
    for grant in &grants {
        assert!(grant.is_outside_sandbox(), "{grant}");
        assert!(
            grant.as_str().ends_with(" (outside the sandbox)"),
            "{grant}"
        );
    }
    for grant in grants {
        e.grant_session(grant);
    }
    let d = e.evaluate_access("bash", &unconfined(command));
    assert_eq!(d.verdict, Verdict::Allow, "{d:?}");
    assert!(matches!(d.source, DecisionSource::SessionGrant(_)), "{d:?}");
    // Only that command.
    let d = e.evaluate_access("bash", &unconfined("cargo test"));
    assert_eq!(d.verdict, Verdict::Ask, "{d:?}");
}

// ---------------------------------------------------------------------
// End to end, with the kernel's sandbox.
// ---------------------------------------------------------------------

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces)"]
fn agentcore_run_does_not_run_the_cargo_attacks_unconfined() {
    require_sandbox();
    let s = scene(&format!(
        "allow = [\"bash(cargo test *)\", \"bash(touch *)\"]\n{CONFINED}"
    ));
    let marker = s.outside.join("ran-unconfined");
    let mut commands = cargo_attacks(&marker);
    commands.push(format!("touch {}", marker.display()));
    for mode in ["default", "accept-edits", "bypass"] {
        for command in &commands {
            let (outcome, text) = one_call(
                &s,
                mode,
                json!({
                    "command": command,
                    "dangerously_disable_sandbox": true,
                    "description": "cargo needs the network"
                }),
            );
            assert_eq!(outcome, "denied", "{mode}: {command}: {text}");
            assert!(
                text.starts_with("approval required: ") && text.contains("outside the sandbox"),
                "{mode}: {command}: {text}"
            );
            assert!(!marker.exists(), "{mode}: {command} ran outside: {text}");
        }
    }
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces)"]
fn agentcore_run_runs_unconfined_what_allow_unsandboxed_names() {
    require_sandbox();
    let s = scene(&format!(
        "allow_unsandboxed = [\"bash(touch *)\"]\n{CONFINED}"
    ));
    let marker = s.outside.join("free.txt");
    let (outcome, text) = one_call(
        &s,
        "default",
        json!({
            "command": format!("touch {}", marker.display()),
            "dangerously_disable_sandbox": true,
            "description": "writes the shared cache"
        }),
    );
    assert_eq!(outcome, "success", "{text}");
    assert!(marker.exists(), "it ran outside the sandbox: {text}");
    // The same command confined cannot write there.
    let inside = s.outside.join("confined.txt");
    let (outcome, text) = one_call(
        &s,
        "default",
        json!({"command": format!("touch {}", inside.display())}),
    );
    assert_eq!(outcome, "success", "{text}");
    assert!(!inside.exists(), "{text}");
}

fn start(policy: &str, hooks: HookConfig) -> (Scene, Session) {
    let s = scene("");
    let mut config = SessionConfig::new(&s.root);
    config.mode = Some(Mode::Default);
    config.policy = Some(Policy::from_toml(policy).expect("policy"));
    config.hooks = hooks;
    let session = Session::start(config).expect("session");
    (s, session)
}

async fn call(session: &Session, id: &str, args: Value) -> ToolResult {
    let (sink, _events) = EventSink::channel();
    let result = session
        .turn(sink)
        .run(vec![ToolCall::new(id, "bash", args)])
        .await
        .unwrap();
    result.results.into_iter().next().unwrap()
}

/// What decided the question, and the grants it offered.
type Asked = (DecisionSource, Vec<String>);

#[tokio::test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces)"]
async fn allow_for_the_session_of_a_confined_call_does_not_allow_it_unconfined() {
    require_sandbox();
    let (s, session) = start(
        &format!("{CONFINED}auto_allow = false\n"),
        HookConfig::default(),
    );
    let marker = s.outside.join("granted.txt");
    let command = format!("touch {}", marker.display());
    // The person allows everything for the session, and says so each time.
    let asked: Arc<Mutex<Vec<Asked>>> = Arc::default();
    let seen = asked.clone();
    session
        .approval()
        .set_approver(Some(Arc::new(approver_fn(move |request| {
            let grants = request
                .session_grants
                .iter()
                .map(|g| g.as_str().to_owned())
                .collect();
            seen.lock()
                .unwrap()
                .push((request.decision.source.clone(), grants));
            async { ApprovalAnswer::AllowSession }
        }))));

    // Confined: asked once, granted for the session; the sandbox refuses
    // the write outside.
    let r = call(&session, "c1", json!({"command": command})).await;
    assert_eq!(r.outcome, Outcome::Success, "{}", r.text());
    assert!(!marker.exists(), "{}", r.text());
    let r = call(&session, "c2", json!({"command": command})).await;
    assert_eq!(r.outcome, Outcome::Success, "{}", r.text());
    assert_eq!(asked.lock().unwrap().len(), 1, "the grant answered c2");

    // Unconfined: the confined grant does not cover it; the person is
    // asked again, and shown that the grant is for running outside.
    let unconfined = json!({"command": command, "dangerously_disable_sandbox": true});
    let r = call(&session, "u1", unconfined.clone()).await;
    assert_eq!(r.outcome, Outcome::Success, "{}", r.text());
    {
        let asked = asked.lock().unwrap();
        assert_eq!(asked.len(), 2, "{asked:?}");
        assert_eq!(asked[1].0, DecisionSource::OutsideSandbox);
        assert!(
            asked[1]
                .1
                .iter()
                .all(|g| g.ends_with(" (outside the sandbox)")),
            "{asked:?}"
        );
    }
    assert!(marker.exists(), "the person allowed it outside");
    std::fs::remove_file(&marker).unwrap();
    // That grant covers the unconfined run from now on.
    let r = call(&session, "u2", unconfined).await;
    assert_eq!(r.outcome, Outcome::Success, "{}", r.text());
    assert!(marker.exists());
    assert_eq!(asked.lock().unwrap().len(), 2);
}

#[tokio::test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces)"]
async fn a_hook_allow_does_not_skip_the_person_for_an_unconfined_run() {
    require_sandbox();
    let allow = r#"cat > /dev/null; echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "permissionDecisionReason": "the hook allows"}}'"#;
    let hooks = HookConfig::from_settings_json(
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": allow, "unconfined": true}
        ]}]}})
        .to_string(),
    )
    .unwrap();
    let (s, session) = start(&format!("allow = [\"bash(touch *)\"]\n{CONFINED}"), hooks);
    let marker = s.outside.join("hook.txt");
    let command = format!("touch {}", marker.display());
    let r = call(
        &session,
        "h1",
        json!({"command": command, "dangerously_disable_sandbox": true}),
    )
    .await;
    assert_eq!(r.outcome, Outcome::Denied, "{}", r.text());
    assert!(
        r.text().starts_with("approval required: ") && r.text().contains("outside the sandbox"),
        "{}",
        r.text()
    );
    assert!(!marker.exists());
    // The hook's allow still skips the ask of the mode for a confined call.
    let (s, session) = start(
        &format!("{CONFINED}auto_allow = false\n"),
        HookConfig::from_settings_json(
            &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": allow, "unconfined": true}
            ]}]}})
            .to_string(),
        )
        .unwrap(),
    );
    let r = call(&session, "h2", json!({"command": "echo hi > made.txt"})).await;
    assert_eq!(r.outcome, Outcome::Success, "{}", r.text());
    assert!(s.root.join("made.txt").exists());
}
