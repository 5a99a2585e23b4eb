//! Issue 18: Claude Code command hooks, run unchanged (the scripts in
//! `tests/fixtures/hooks/`, bash and python3), at their places in the
//! pipeline: PreToolUse in the gate before the approval engine,
//! PostToolUse and PostToolUseFailure after Execute.
#![cfg(target_os = "linux")]

use std::path::PathBuf;
use std::time::Duration;

use agentcore::approval::Mode;
use agentcore::config::Policy;
use agentcore::hooks::{HookConfig, HookEvent};
use agentcore::message::ToolCall;
use agentcore::session::{Session, SessionConfig};
use agentcore::{Content, Event, EventSink, Outcome, ToolResult, UpdateKind};
use serde_json::{Value, json};

use crate::support::hook_fixture;
use crate::support::procs::alive;

/// Settings with one matcher group of one command hook for `event`.
fn one_hook(event: &str, matcher: &str, hook: Value) -> HookConfig {
    let mut hook = hook;
    if hook.is_string() {
        hook = json!({"type": "command", "command": hook});
    }
    HookConfig::from_settings_json(
        &json!({"hooks": {event: [{"matcher": matcher, "hooks": [hook]}]}}).to_string(),
    )
    .unwrap()
}

struct Project {
    dir: tempfile::TempDir,
    session: Session,
}

impl Project {
    fn new(mode: Mode, hooks: HookConfig) -> Self {
        Self::with(mode, hooks, |_| {})
    }

    fn with(mode: Mode, hooks: HookConfig, tune: impl FnOnce(&mut SessionConfig)) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut config = SessionConfig::new(dir.path());
        config.mode = Some(mode);
        config.hooks = hooks;
        // What the hooks decide, judged as without a sandbox: a confined
        // command would be allowed by auto_allow where these tests expect
        // the engine to ask.
        config.sandbox = Some(agentcore::sandbox::SandboxPolicy::off());
        tune(&mut config);
        let session = Session::start(config).unwrap();
        Self { dir, session }
    }

    fn root(&self) -> PathBuf {
        self.session.workspace().root().to_path_buf()
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Runs one call as a turn: its result and the call's events.
    async fn call(&self, id: &str, tool: &str, args: Value) -> (ToolResult, Vec<Event>) {
        let (sink, mut events) = EventSink::channel();
        let result = self
            .session
            .turn(sink)
            .run(vec![ToolCall::new(id, tool, args)])
            .await
            .unwrap();
        let mut seen = Vec::new();
        while let Ok(event) = events.try_recv() {
            seen.push(event);
        }
        (result.results.into_iter().next().unwrap(), seen)
    }
}

/// The payloads of the call's `hook` updates.
fn hook_updates(events: &[Event]) -> Vec<Value> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ToolExecUpdate {
                kind: UpdateKind::Hook,
                payload,
                ..
            } => Some(payload.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_guard_blocks_rm_rf_by_exit_2_and_lets_other_commands_run() {
    let guard = hook_fixture("block_rm_rf.sh");
    let project = Project::new(Mode::Bypass, one_hook("PreToolUse", "Bash", json!(guard)));
    std::fs::create_dir(project.path("build")).unwrap();

    let (result, events) = project
        .call("c1", "bash", json!({"command": "rm -rf build"}))
        .await;
    assert_eq!(result.outcome, Outcome::Denied, "{}", result.text());
    assert_eq!(
        result.text(),
        format!(
            "PreToolUse hook {guard:?} denied this call: Blocked: rm -rf is not allowed in this project; delete the files you mean by name."
        )
    );
    assert!(project.path("build").is_dir(), "the command ran");
    let updates = hook_updates(&events);
    assert_eq!(updates.len(), 1);
    assert_eq!(updates[0]["hook"], json!(guard));
    assert_eq!(updates[0]["hook_event_name"], "PreToolUse");
    assert_eq!(updates[0]["exit"], 2);
    assert_eq!(updates[0]["effect"], "deny");
    assert!(updates[0]["duration_ms"].is_u64());

    let (result, _) = project
        .call("c2", "bash", json!({"command": "ls -d build"}))
        .await;
    assert_eq!(result.outcome, Outcome::Success, "{}", result.text());
}

#[tokio::test]
async fn a_hook_denies_by_json_with_its_reason_and_sees_absolute_paths() {
    let hook = hook_fixture("deny_secrets.py");
    let project = Project::new(
        Mode::Bypass,
        one_hook("PreToolUse", "Read|Edit|Write", json!(hook)),
    );
    std::fs::write(project.path("keys.secret"), "k=1\n").unwrap();
    std::fs::write(project.path("notes.txt"), "n\n").unwrap();

    let (result, events) = project
        .call("c1", "read", json!({"file_path": "keys.secret"}))
        .await;
    assert_eq!(result.outcome, Outcome::Denied);
    let absolute = project.root().join("keys.secret");
    assert_eq!(
        result.text(),
        format!(
            "PreToolUse hook {hook:?} denied this call: {} holds secrets; ask the user for the value instead.",
            absolute.display()
        )
    );
    assert_eq!(hook_updates(&events)[0]["exit"], 0);
    assert_eq!(hook_updates(&events)[0]["effect"], "deny");

    let (result, _) = project
        .call("c2", "read", json!({"file_path": "notes.txt"}))
        .await;
    assert_eq!(result.outcome, Outcome::Success);
}

#[tokio::test]
async fn updated_input_is_run_and_judged_as_rewritten() {
    // Default mode: commands ask, and with no one to ask they are denied;
    // the hook's "allow" skips that ask, and its rewrite is what runs.
    let hooks = one_hook(
        "PreToolUse",
        "Bash",
        json!(hook_fixture("python3_everywhere.py")),
    );
    let project = Project::new(Mode::Default, hooks.clone());
    let (result, events) = project
        .call("c1", "bash", json!({"command": "python -c 'print(6*7)'"}))
        .await;
    assert_eq!(result.outcome, Outcome::Success, "{}", result.text());
    assert!(result.text().contains("42"), "{}", result.text());
    assert_eq!(hook_updates(&events)[0]["effect"], "rewrite");
    let started = events
        .iter()
        .find_map(|e| match e {
            Event::ToolExecStart { args, .. } => Some(args.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        started["command"], "python -c 'print(6*7)'",
        "the Start event keeps what the model sent"
    );

    // Not rewritten, not allowed by the hook: the engine asks, no one can
    // answer.
    let (result, _) = project
        .call("c2", "bash", json!({"command": "echo hi"}))
        .await;
    assert_eq!(result.outcome, Outcome::Denied);
    assert!(
        result.text().starts_with("approval required: "),
        "{}",
        result.text()
    );

    // A deny rule judges the rewritten command: deny wins over the hook's
    // allow.
    let project = Project::with(Mode::Default, hooks, |config| {
        config.policy = Some(Policy::from_toml(r#"deny = ["bash(python3 *)"]"#).unwrap());
    });
    let (result, _) = project
        .call("c3", "bash", json!({"command": "python -c 'print(1)'"}))
        .await;
    assert_eq!(result.outcome, Outcome::Denied);
    assert!(
        result.text().contains("deny \"bash(python3 *)\""),
        "{}",
        result.text()
    );
}

#[tokio::test]
async fn an_invalid_rewrite_is_denied_with_the_validation_message() {
    let command = r#"cat > /dev/null; echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"command": 5, "timeout": "soon"}}}'"#;
    let project = Project::new(Mode::Bypass, one_hook("PreToolUse", "Bash", json!(command)));
    let (result, _) = project
        .call("c1", "bash", json!({"command": "echo hi"}))
        .await;
    assert_eq!(result.outcome, Outcome::Denied);
    assert!(
        result.text().starts_with(&format!(
            "the PreToolUse hook {command:?} rewrote the arguments into an invalid call: InputValidationError: bash failed"
        )),
        "{}",
        result.text()
    );
}

#[tokio::test]
async fn a_crashing_hook_fails_open_by_default() {
    let crash = hook_fixture("crash.sh");
    let project = Project::new(Mode::Bypass, one_hook("PreToolUse", "*", json!(crash)));
    let (result, events) = project
        .call("c1", "bash", json!({"command": "echo ran"}))
        .await;
    assert_eq!(result.outcome, Outcome::Success);
    assert!(result.text().contains("ran"));
    let update = &hook_updates(&events)[0];
    assert_eq!(update["exit"], 1);
    assert_eq!(update["effect"], "failed");
    assert_eq!(update["error"], "exit 1");
}

#[tokio::test]
async fn a_crashing_hook_blocks_when_it_says_on_failure_block() {
    let crash = hook_fixture("crash.sh");
    let project = Project::new(
        Mode::Bypass,
        one_hook(
            "PreToolUse",
            "Bash",
            json!({"type": "command", "command": crash, "onFailure": "block"}),
        ),
    );
    std::fs::write(project.path("kept"), "").unwrap();
    let (result, events) = project
        .call("c1", "bash", json!({"command": "rm kept"}))
        .await;
    assert_eq!(result.outcome, Outcome::Denied);
    assert_eq!(
        result.text(),
        format!("PreToolUse hook \"{crash}\" failed (exit 1); blocking as configured.")
    );
    assert!(project.path("kept").exists());
    assert_eq!(hook_updates(&events)[0]["effect"], "block");
}

#[tokio::test]
async fn a_crashing_hook_blocks_when_the_policy_fails_closed() {
    let crash = hook_fixture("crash.sh");
    let policy = Policy::from_toml(&format!(
        r#"
        mode = "bypass"
        [hooks]
        fail_closed = true
        [[hooks.PreToolUse]]
        matcher = "Bash"
        [[hooks.PreToolUse.hooks]]
        type = "command"
        command = "{crash}"
        "#
    ))
    .unwrap();
    let project = Project::with(Mode::Bypass, HookConfig::default(), |config| {
        config.policy = Some(policy);
    });
    let (result, _) = project
        .call("c1", "bash", json!({"command": "echo no"}))
        .await;
    assert_eq!(result.outcome, Outcome::Denied);
    assert_eq!(
        result.text(),
        format!("PreToolUse hook \"{crash}\" failed (exit 1); blocking as configured.")
    );
}

#[tokio::test]
async fn a_hook_past_its_timeout_is_killed_with_everything_it_started() {
    let sleepy = hook_fixture("sleepy.sh");
    let hook = json!({"type": "command", "command": sleepy, "timeout": 1});
    let mut hooks = one_hook("PreToolUse", "Bash", hook);
    hooks.fail_closed = true;
    let project = Project::new(Mode::Bypass, hooks);
    let (result, events) = project
        .call("c1", "bash", json!({"command": "echo no"}))
        .await;
    assert_eq!(result.outcome, Outcome::Denied);
    assert_eq!(
        result.text(),
        format!(
            "PreToolUse hook \"{sleepy}\" failed (timed out after 1 s); blocking as configured."
        )
    );
    let update = &hook_updates(&events)[0];
    assert_eq!(update["exit"], Value::Null);
    let pid: i32 = std::fs::read_to_string(project.path("sleeper.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // The kill is over when the call ends; allow the kernel a moment to
    // tear the process down.
    let mut gone = !alive(pid);
    for _ in 0..100 {
        if gone {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        gone = !alive(pid);
    }
    assert!(gone, "the hook's helper {pid} outlived its timeout");
}

#[tokio::test]
async fn a_timed_out_hook_fails_open_by_default() {
    let hook = json!({"type": "command", "command": "sleep 30", "timeout": 0.5});
    let project = Project::new(Mode::Bypass, one_hook("PreToolUse", "Bash", hook));
    let (result, events) = project
        .call("c1", "bash", json!({"command": "echo ran"}))
        .await;
    assert_eq!(result.outcome, Outcome::Success);
    assert_eq!(hook_updates(&events)[0]["error"], "timed out after 0.5 s");
}

#[tokio::test]
async fn a_formatter_changes_the_edited_file_and_the_next_edit_must_read_it_again() {
    let project = Project::new(
        Mode::AcceptEdits,
        one_hook(
            "PostToolUse",
            "Edit|MultiEdit|Write",
            json!(hook_fixture("strip_trailing_spaces.py")),
        ),
    );
    std::fs::write(project.path("a.py"), "x = 1\ny = 2\n").unwrap();
    let (read, _) = project
        .call("r", "read", json!({"file_path": "a.py"}))
        .await;
    assert_eq!(read.outcome, Outcome::Success);
    let (edit, events) = project
        .call(
            "e1",
            "edit",
            json!({"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 10   "}),
        )
        .await;
    assert_eq!(edit.outcome, Outcome::Success, "{}", edit.text());
    assert_eq!(hook_updates(&events)[0]["hook_event_name"], "PostToolUse");
    assert_eq!(
        std::fs::read_to_string(project.path("a.py")).unwrap(),
        "x = 10\ny = 2\n",
        "the formatter ran on the edited file"
    );
    // The model saw its own edit, not the formatter's: the stamp is stale.
    let (next, _) = project
        .call(
            "e2",
            "edit",
            json!({"file_path": "a.py", "old_string": "y = 2", "new_string": "y = 3"}),
        )
        .await;
    assert_eq!(next.outcome, Outcome::Failed, "{}", next.text());
    assert_eq!(next.error_code, Some(3));
    // Read again, and the edit lands.
    project
        .call("r2", "read", json!({"file_path": "a.py"}))
        .await;
    let (again, _) = project
        .call(
            "e3",
            "edit",
            json!({"file_path": "a.py", "old_string": "y = 2", "new_string": "y = 3"}),
        )
        .await;
    assert_eq!(again.outcome, Outcome::Success, "{}", again.text());
}

#[tokio::test]
async fn additional_context_reaches_the_models_message() {
    let project = Project::new(
        Mode::AcceptEdits,
        one_hook(
            "PostToolUse",
            "Write",
            json!(hook_fixture("remind_tests.sh")),
        ),
    );
    let (sink, _events) = EventSink::channel();
    let turn = project
        .session
        .turn(sink)
        .run(vec![ToolCall::new(
            "w",
            "write",
            json!({"file_path": "new.txt", "content": "hello\n"}),
        )])
        .await
        .unwrap();
    let message = &turn.messages()[0];
    assert!(!message.is_error);
    assert_eq!(
        message.content.last(),
        Some(&Content::text(
            "Reminder from the project: run the tests after editing."
        ))
    );
    assert!(message.content.len() >= 2, "the tool's own output stays");
}

#[tokio::test]
async fn a_post_hook_block_says_the_tool_ran_and_does_not_trip_the_breaker() {
    let lint = hook_fixture("lint_blocks.py");
    let project = Project::with(
        Mode::AcceptEdits,
        one_hook("PostToolUse", "Write", json!(lint)),
        |config| config.max_tool_errors = 1,
    );
    for id in ["w1", "w2", "w3"] {
        let (result, _) = project
            .call(
                id,
                "write",
                json!({"file_path": format!("{id}.txt"), "content": "TODO: later\n"}),
            )
            .await;
        assert_eq!(result.outcome, Outcome::Denied, "{}", result.text());
        let path = project.root().join(format!("{id}.txt"));
        assert!(
            result.text().starts_with(&format!(
                "PostToolUse hook {lint:?} blocked this result: {} contains TODO; finish it or remove the marker.\nThe tool already ran: what it did stays done",
                path.display()
            )),
            "{}",
            result.text()
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "TODO: later\n");
    }
}

#[tokio::test]
async fn post_tool_use_failure_hooks_see_the_error_and_add_to_it() {
    let command = r#"cat > "$CLAUDE_PROJECT_DIR/failure-input.json"; echo '{"hookSpecificOutput": {"hookEventName": "PostToolUseFailure", "additionalContext": "Look for the file with glob first."}}'"#;
    let project = Project::new(
        Mode::Bypass,
        one_hook("PostToolUseFailure", "Read", json!(command)),
    );
    let (result, _) = project
        .call("c1", "read", json!({"file_path": "missing.txt"}))
        .await;
    assert_eq!(result.outcome, Outcome::Failed);
    assert_eq!(
        result.content.last(),
        Some(&Content::text("Look for the file with glob first."))
    );
    let input: Value =
        serde_json::from_str(&std::fs::read_to_string(project.path("failure-input.json")).unwrap())
            .unwrap();
    assert_eq!(input["hook_event_name"], "PostToolUseFailure");
    assert_eq!(input["tool_name"], "Read");
    assert!(
        input["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{input}"
    );
}

#[tokio::test]
async fn hooks_see_the_call_as_claude_code_describes_it() {
    let project = Project::new(
        Mode::Default,
        one_hook(
            "PreToolUse",
            "Read",
            json!(format!("{} pre", hook_fixture("record.sh"))),
        ),
    );
    std::fs::create_dir(project.path("src")).unwrap();
    std::fs::write(project.path("src/lib.rs"), "fn main() {}\n").unwrap();
    let (result, _) = project
        .call(
            "toolu_01",
            "read",
            json!({"file_path": "./src/lib.rs", "limit": "5"}),
        )
        .await;
    assert_eq!(result.outcome, Outcome::Success);
    let input: Value =
        serde_json::from_str(&std::fs::read_to_string(project.path("last-input.json")).unwrap())
            .unwrap();
    let root = project.root();
    assert_eq!(input["hook_event_name"], "PreToolUse");
    assert_eq!(input["tool_name"], "Read");
    assert_eq!(input["tool_use_id"], "toolu_01");
    assert_eq!(input["permission_mode"], "default");
    assert_eq!(input["cwd"], json!(root.display().to_string()));
    assert!(input["session_id"].as_str().is_some_and(|s| !s.is_empty()));
    assert_eq!(
        input["tool_input"],
        json!({"file_path": root.join("src/lib.rs").display().to_string(), "limit": 5}),
        "coerced, with the path made absolute"
    );
    assert_eq!(
        std::fs::read_to_string(project.path("last-env.txt")).unwrap(),
        format!("{}|{}\n", root.display(), root.display())
    );
}

#[tokio::test]
async fn matchers_are_regexes_over_claude_code_names() {
    let record = hook_fixture("record.sh");
    let settings = json!({"hooks": {"PreToolUse": [
        {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": format!("{record} W")}]},
        {"matcher": "Gl.*", "hooks": [{"type": "command", "command": format!("{record} G")}]},
        {"matcher": "^L", "hooks": [{"type": "command", "command": format!("{record} L")}]},
        {"matcher": "*", "hooks": [{"type": "command", "command": format!("{record} ALL")}]},
        {"matcher": "read", "hooks": [{"type": "command", "command": format!("{record} lower")}]}
    ]}});
    let project = Project::new(
        Mode::Bypass,
        HookConfig::from_settings_json(&settings.to_string()).unwrap(),
    );
    std::fs::write(project.path("a.txt"), "a\n").unwrap();
    for (id, tool, args) in [
        ("c1", "read", json!({"file_path": "a.txt"})),
        ("c2", "glob", json!({"pattern": "*.txt"})),
        ("c3", "ls", json!({"path": "."})),
        (
            "c4",
            "write",
            json!({"file_path": "b.txt", "content": "b\n"}),
        ),
    ] {
        let (result, _) = project.call(id, tool, args).await;
        assert_eq!(
            result.outcome,
            Outcome::Success,
            "{tool}: {}",
            result.text()
        );
    }
    let mut lines: Vec<String> = std::fs::read_to_string(project.path("hooks.log"))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    lines.sort();
    assert_eq!(
        lines,
        [
            "ALL Glob",
            "ALL LS",
            "ALL Read",
            "ALL Write",
            "G Glob",
            "L LS",
            "W Write"
        ]
    );
}

#[tokio::test]
async fn the_documented_claude_code_settings_load_unchanged_and_run() {
    let hooks = HookConfig::load_settings(hook_fixture("claude_code_settings.json")).unwrap();
    assert_eq!(hooks.matching(HookEvent::PreToolUse, "Bash").len(), 1);
    assert_eq!(hooks.matching(HookEvent::PreToolUse, "Write").len(), 1);
    assert_eq!(hooks.matching(HookEvent::PostToolUse, "MultiEdit").len(), 1);
    assert!(hooks.matching(HookEvent::PostToolUse, "Read").is_empty());
    assert_eq!(
        hooks.notice().unwrap(),
        "hooks: ignoring the events Notification, Stop; agentcore runs command hooks of PreToolUse, PostToolUse and PostToolUseFailure only"
    );

    let project = Project::new(Mode::AcceptEdits, hooks);
    // The documented file-protection one-liner (python3 -c …) exits 2.
    let (result, _) = project
        .call(
            "c1",
            "write",
            json!({"file_path": "package-lock.json", "content": "{}\n"}),
        )
        .await;
    assert_eq!(result.outcome, Outcome::Denied, "{}", result.text());
    assert!(
        result
            .text()
            .ends_with("denied this call: it exited with code 2 and gave no reason"),
        "{}",
        result.text()
    );
    assert!(!project.path("package-lock.json").exists());
    // The documented PostToolUse formatter is not in this project: its
    // failure (exit 127) does not block.
    let (result, events) = project
        .call(
            "c2",
            "write",
            json!({"file_path": "README.md", "content": "# x\n"}),
        )
        .await;
    assert_eq!(result.outcome, Outcome::Success, "{}", result.text());
    let updates = hook_updates(&events);
    let post = updates
        .iter()
        .find(|u| u["hook_event_name"] == "PostToolUse")
        .unwrap();
    assert_eq!(post["exit"], 127);
    assert_eq!(post["effect"], "failed");
}

#[tokio::test]
async fn hooks_of_one_event_run_side_by_side() {
    // Each hook waits for the other's mark: only overlapping runs finish
    // before the (generous) timeout.
    let wait_for = |mine: &str, theirs: &str| {
        format!(
            r#"cat > /dev/null; touch "$CLAUDE_PROJECT_DIR/{mine}"; for i in $(seq 1 500); do [ -e "$CLAUDE_PROJECT_DIR/{theirs}" ] && exit 0; sleep 0.02; done; exit 1"#
        )
    };
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": wait_for("a", "b"), "onFailure": "block"},
        {"type": "command", "command": wait_for("b", "a"), "onFailure": "block"}
    ]}]}});
    let project = Project::new(
        Mode::Bypass,
        HookConfig::from_settings_json(&settings.to_string()).unwrap(),
    );
    let (result, events) = project
        .call("c1", "bash", json!({"command": "echo ok"}))
        .await;
    assert_eq!(result.outcome, Outcome::Success, "{}", result.text());
    assert_eq!(hook_updates(&events).len(), 2);
}
