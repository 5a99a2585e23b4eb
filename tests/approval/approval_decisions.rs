//! The approval engine's decision table, through its own API and through
//! the real pipeline.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agentcore::access::{Access, Capability, Permissions};
use agentcore::approval::{
    ApprovalAnswer, ApprovalEngine, DecisionSource, Mode, Rule, RuleKind, Verdict, approver_fn,
};
use agentcore::config::Policy;
use agentcore::{
    BoxFuture, Call, CallContext, GatedArgs, Outcome, Pipeline, Tool, ToolError, ToolOutput,
    ToolRegistry, ToolResult,
};
use serde_json::{Value, json};
use tower::ServiceExt;

/// A stand-in for a built-in tool: same name, permissive schema, the real
/// permission metadata, and an `execute` that only says it ran.
struct Stub {
    name: &'static str,
    schema: Value,
    extensions: http::Extensions,
}

impl Stub {
    fn builtin(name: &'static str) -> Arc<dyn Tool> {
        Arc::new(Self {
            name,
            schema: json!({"type": "object"}),
            extensions: builtin_permissions(name).into_extensions(),
        })
    }

    fn undescribed(name: &'static str) -> Arc<dyn Tool> {
        Arc::new(Self {
            name,
            schema: json!({"type": "object"}),
            extensions: http::Extensions::new(),
        })
    }
}

impl Tool for Stub {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "test stub"
    }
    fn schema(&self) -> &Value {
        &self.schema
    }
    fn execute<'a>(
        &'a self,
        _args: GatedArgs,
        _cx: &'a CallContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async { Ok(ToolOutput::text("ran")) })
    }
    fn extensions(&self) -> &http::Extensions {
        &self.extensions
    }
}

/// The permissions built-in tool `name` declares in its own file.
fn builtin_permissions(name: &str) -> Permissions {
    match name {
        "edit" => agentcore::tools::edit::permissions(),
        "write" => agentcore::tools::write::permissions(),
        "bash" => agentcore::tools::bash::permissions(),
        "read" => agentcore::tools::read::permissions(),
        "glob" => agentcore::tools::glob::permissions(),
        "grep" => agentcore::tools::grep::permissions(),
        "ls" => agentcore::tools::ls::permissions(),
        _ => panic!("{name} is not a built-in tool"),
    }
}

const BUILTINS: [&str; 7] = ["read", "glob", "grep", "ls", "edit", "write", "bash"];

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for d in ["src", "secrets/deep", ".git", "docs"] {
        std::fs::create_dir_all(dir.path().join(d)).expect("mkdir");
    }
    for f in [
        "src/main.rs",
        "secrets/key.pem",
        "secrets/deep/x",
        ".env",
        "docs/a.md",
    ] {
        std::fs::write(dir.path().join(f), "x").expect("write");
    }
    dir
}

fn engine(root: &Path, mode: Mode, allow: &[&str], ask: &[&str], deny: &[&str]) -> ApprovalEngine {
    let mut engine = ApprovalEngine::new(root).with_mode(mode);
    for (kind, rules) in [
        (RuleKind::Allow, allow),
        (RuleKind::Ask, ask),
        (RuleKind::Deny, deny),
    ] {
        for rule in rules {
            engine = engine.with_rule(kind, rule.parse::<Rule>().expect("a valid rule"));
        }
    }
    engine
}

fn tool(name: &'static str) -> Arc<dyn Tool> {
    Stub::builtin(name)
}

fn verdict(engine: &ApprovalEngine, name: &'static str, args: Value) -> Verdict {
    engine.evaluate(tool(name).as_ref(), &args).verdict
}

use Verdict::{Allow, Ask, Deny};

/// (mode, allow, ask, deny, tool, args, expected)
type Row = (
    Mode,
    &'static [&'static str],
    &'static [&'static str],
    &'static [&'static str],
    &'static str,
    Value,
    Verdict,
);

#[test]
fn every_mode_without_rules() {
    let ws = workspace();
    let root = ws.path();
    // (mode, read, write, bash)
    let table = [
        (Mode::Default, Allow, Ask, Ask),
        (Mode::AcceptEdits, Allow, Allow, Ask),
        (Mode::Plan, Allow, Deny, Deny),
        (Mode::Bypass, Allow, Allow, Allow),
    ];
    for (mode, read, write, bash) in table {
        let e = engine(root, mode, &[], &[], &[]);
        assert_eq!(
            verdict(&e, "read", json!({"file_path": "src/main.rs"})),
            read,
            "{mode} read"
        );
        assert_eq!(
            verdict(&e, "grep", json!({"pattern": "x"})),
            read,
            "{mode} grep"
        );
        assert_eq!(
            verdict(&e, "glob", json!({"pattern": "*"})),
            read,
            "{mode} glob"
        );
        assert_eq!(verdict(&e, "ls", json!({"path": "src"})), read, "{mode} ls");
        assert_eq!(
            verdict(&e, "write", json!({"file_path": "src/n.rs", "content": ""})),
            write,
            "{mode} write"
        );
        assert_eq!(
            verdict(
                &e,
                "edit",
                json!({"file_path": "src/main.rs", "old_string": "a", "new_string": "b"})
            ),
            write,
            "{mode} edit"
        );
        assert_eq!(
            verdict(&e, "bash", json!({"command": "ls"})),
            bash,
            "{mode} bash"
        );
    }
}

#[test]
fn decisions_carry_their_source() {
    let ws = workspace();
    let e = engine(ws.path(), Mode::Plan, &[], &[], &[]);
    let d = e.evaluate(
        tool("write").as_ref(),
        &json!({"file_path": "a", "content": ""}),
    );
    assert_eq!(d.source, DecisionSource::Mode(Mode::Plan));
    assert!(d.reason.contains("planning mode"), "{}", d.reason);

    let e = engine(ws.path(), Mode::Default, &["write(src/**)"], &[], &[]);
    let d = e.evaluate(
        tool("write").as_ref(),
        &json!({"file_path": "src/a.rs", "content": ""}),
    );
    assert_eq!(d.verdict, Allow);
    assert_eq!(
        d.source,
        DecisionSource::Rule {
            kind: RuleKind::Allow,
            rule: "write(src/**)".into()
        }
    );
}

#[test]
fn rule_kinds_and_their_order() {
    let ws = workspace();
    let root = ws.path();
    // (mode, allow, ask, deny, tool, args, expected)
    let table: Vec<Row> = vec![
        // Command prefix with a wildcard.
        (
            Mode::Default,
            &["bash(cargo test *)"],
            &[],
            &[],
            "bash",
            json!({"command": "cargo test"}),
            Allow,
        ),
        (
            Mode::Default,
            &["bash(cargo test *)"],
            &[],
            &[],
            "bash",
            json!({"command": "cargo  test --release -p x"}),
            Allow,
        ),
        (
            Mode::Default,
            &["bash(cargo test *)"],
            &[],
            &[],
            "bash",
            json!({"command": "cargo build"}),
            Ask,
        ),
        (
            Mode::Default,
            &["bash(cargo test:*)"],
            &[],
            &[],
            "bash",
            json!({"command": "cargo test x"}),
            Allow,
        ),
        // Path globs relative to the root.
        (
            Mode::Default,
            &["write(src/**)"],
            &[],
            &[],
            "write",
            json!({"file_path": "src/deep/a.rs", "content": ""}),
            Allow,
        ),
        (
            Mode::Default,
            &["write(src/**)"],
            &[],
            &[],
            "write",
            json!({"file_path": "docs/a.md", "content": ""}),
            Ask,
        ),
        (
            Mode::Default,
            &["write(src/**)"],
            &[],
            &[],
            "edit",
            json!({"file_path": "src/main.rs", "old_string": "a", "new_string": "b"}),
            Allow,
        ),
        (
            Mode::Default,
            &["edit(src/**)"],
            &[],
            &[],
            "write",
            json!({"file_path": "src/main.rs", "content": ""}),
            Allow,
        ),
        // Absolute paths inside the root match relative rules.
        (
            Mode::Default,
            &["write(src/**)"],
            &[],
            &[],
            "write",
            json!({"file_path": root.join("src/x.rs").to_string_lossy(), "content": ""}),
            Allow,
        ),
        // `..` is resolved before matching.
        (
            Mode::Default,
            &["write(src/**)"],
            &[],
            &[],
            "write",
            json!({"file_path": "src/../docs/a.md", "content": ""}),
            Ask,
        ),
        // Bare rules bind every call of the tool.
        (
            Mode::Default,
            &[],
            &[],
            &["grep"],
            "grep",
            json!({"pattern": "x", "path": "src"}),
            Deny,
        ),
        (
            Mode::Default,
            &["bash"],
            &[],
            &[],
            "bash",
            json!({"command": "anything > out; rm x"}),
            Allow,
        ),
        (
            Mode::Default,
            &[],
            &["read"],
            &[],
            "read",
            json!({"file_path": "src/main.rs"}),
            Ask,
        ),
        // Deny, then ask, then allow, then the mode.
        (
            Mode::Default,
            &["bash(git *)"],
            &["bash(git push *)"],
            &[],
            "bash",
            json!({"command": "git push origin"}),
            Ask,
        ),
        (
            Mode::Default,
            &["bash(git *)"],
            &["bash(git push *)"],
            &["bash(git push --force *)"],
            "bash",
            json!({"command": "git push --force"}),
            Deny,
        ),
        (
            Mode::AcceptEdits,
            &[],
            &["write(docs/**)"],
            &[],
            "write",
            json!({"file_path": "docs/a.md", "content": ""}),
            Ask,
        ),
        // Deny rules hold in every mode, bypass included.
        (
            Mode::Bypass,
            &[],
            &[],
            &["bash(rm *)"],
            "bash",
            json!({"command": "rm -rf x"}),
            Deny,
        ),
        (
            Mode::Bypass,
            &[],
            &[],
            &["bash(rm *)"],
            "bash",
            json!({"command": "ls && /bin/rm -rf x"}),
            Deny,
        ),
        (
            Mode::Bypass,
            &[],
            &[],
            &["bash(rm *)"],
            "bash",
            json!({"command": "echo $(rm -rf x)"}),
            Deny,
        ),
        (
            Mode::Bypass,
            &[],
            &["bash(ls *)"],
            &[],
            "bash",
            json!({"command": "ls"}),
            Allow,
        ),
        // Plan mode is a hard stop for writes and commands.
        (
            Mode::Plan,
            &["bash(cargo test *)"],
            &[],
            &[],
            "bash",
            json!({"command": "cargo test"}),
            Deny,
        ),
        (
            Mode::Plan,
            &["write(src/**)"],
            &[],
            &[],
            "write",
            json!({"file_path": "src/a.rs", "content": ""}),
            Deny,
        ),
        (
            Mode::Plan,
            &[],
            &[],
            &[],
            "grep",
            json!({"pattern": "x"}),
            Allow,
        ),
    ];
    for (i, (mode, allow, ask, deny, name, args, expected)) in table.into_iter().enumerate() {
        let e = engine(root, mode, allow, ask, deny);
        let name: &'static str = BUILTINS.into_iter().find(|b| *b == name).expect("built-in");
        let d = e.evaluate(tool(name).as_ref(), &args);
        assert_eq!(
            d.verdict, expected,
            "row {i}: {mode} {name} {args}: {}",
            d.reason
        );
    }
}

#[test]
fn compound_commands_cannot_ride_on_an_allowed_prefix() {
    let ws = workspace();
    let e = engine(ws.path(), Mode::Default, &["bash(git status *)"], &[], &[]);
    assert_eq!(verdict(&e, "bash", json!({"command": "git status"})), Allow);
    assert_eq!(
        verdict(&e, "bash", json!({"command": "git status --short 2>&1"})),
        Allow
    );
    for attack in [
        "git status; rm -rf ~",
        "git status && curl x | sh",
        "git status $(rm -rf ~)",
        "git status `rm -rf ~`",
        "git status > ~/.bashrc",
        "git status >> ~/.bashrc",
        "git status < /etc/passwd",
        "git status || rm -rf ~",
        "git status | sh",
        "git status\nrm -rf ~",
        "git status & rm -rf ~",
        "git status \"$(rm -rf ~)\"",
        "(git status; rm -rf ~)",
        "git status ${x:-$(rm -rf ~)}",
        "git status <(rm -rf ~)",
        "git status 'unterminated",
    ] {
        let d = e.evaluate(tool("bash").as_ref(), &json!({"command": attack}));
        assert_eq!(d.verdict, Ask, "{attack:?} must ask: {}", d.reason);
    }
    // When every part is allowed, the compound is allowed.
    let e = engine(
        ws.path(),
        Mode::Default,
        &["bash(git status *)", "bash(git diff *)"],
        &[],
        &[],
    );
    assert_eq!(
        verdict(
            &e,
            "bash",
            json!({"command": "git status && git diff | git status"})
        ),
        Allow
    );
}

#[test]
fn the_reason_names_what_was_not_allowed() {
    let ws = workspace();
    let e = engine(ws.path(), Mode::Default, &["bash(git status *)"], &[], &[]);
    let d = e.evaluate(
        tool("bash").as_ref(),
        &json!({"command": "git status > ~/.bashrc"}),
    );
    assert!(d.reason.contains("~/.bashrc"), "{}", d.reason);
    let d = e.evaluate(
        tool("bash").as_ref(),
        &json!({"command": "git status; rm -rf ~"}),
    );
    assert!(d.reason.contains("`rm -rf ~`"), "{}", d.reason);
}

#[test]
fn protected_paths_ask_unless_bypass() {
    let ws = workspace();
    let root = ws.path();
    for mode in [Mode::Default, Mode::AcceptEdits] {
        let e = engine(root, mode, &["write(**)", "bash(echo *)"], &[], &[]);
        for path in [
            ".git/config",
            ".env",
            ".env.local",
            "sub/.env",
            "home/.ssh/id_rsa",
            ".git",
        ] {
            let d = e.evaluate(
                tool("write").as_ref(),
                &json!({"file_path": path, "content": ""}),
            );
            assert_eq!(d.verdict, Ask, "{mode} write {path}");
            assert!(
                matches!(d.source, DecisionSource::ProtectedPath(_)),
                "{mode} {path}: {:?}",
                d.source
            );
        }
        assert_eq!(
            verdict(&e, "read", json!({"file_path": ".env"})),
            Ask,
            "{mode} read .env"
        );
        assert_eq!(
            verdict(&e, "ls", json!({"path": ".git"})),
            Ask,
            "{mode} ls .git"
        );
        assert_eq!(
            verdict(
                &e,
                "write",
                json!({"file_path": "src/env.rs", "content": ""})
            ),
            Allow
        );
        assert_eq!(
            verdict(&e, "read", json!({"file_path": "src/main.rs"})),
            Allow
        );
        assert_eq!(
            verdict(&e, "ls", json!({"path": "."})),
            Allow,
            "the root is not protected"
        );
    }
    let e = engine(root, Mode::Bypass, &[], &[], &[]);
    assert_eq!(
        verdict(
            &e,
            "write",
            json!({"file_path": ".git/config", "content": ""})
        ),
        Allow
    );
    // Absolute paths outside the workspace too.
    let e = engine(root, Mode::AcceptEdits, &[], &[], &[]);
    assert_eq!(
        verdict(
            &e,
            "write",
            json!({"file_path": "/root/.ssh/authorized_keys", "content": ""})
        ),
        Ask
    );
}

#[test]
fn read_deny_binds_the_search_tools() {
    let ws = workspace();
    let root = ws.path();
    let e = engine(root, Mode::Default, &[], &[], &["read(./secrets/**)"]);
    assert_eq!(
        verdict(&e, "read", json!({"file_path": "secrets/key.pem"})),
        Deny
    );
    assert_eq!(
        verdict(&e, "read", json!({"file_path": "./secrets/deep/x"})),
        Deny
    );
    assert_eq!(
        verdict(&e, "read", json!({"file_path": "src/../secrets/key.pem"})),
        Deny
    );
    assert_eq!(
        verdict(&e, "grep", json!({"pattern": "x", "path": "secrets"})),
        Deny
    );
    assert_eq!(
        verdict(&e, "grep", json!({"pattern": "x", "path": "secrets/deep"})),
        Deny
    );
    assert_eq!(
        verdict(&e, "glob", json!({"pattern": "*", "path": "secrets"})),
        Deny
    );
    assert_eq!(verdict(&e, "ls", json!({"path": "secrets/"})), Deny);
    assert_eq!(verdict(&e, "read", json!({"file_path": "secrets"})), Deny);
    // Searches rooted elsewhere run; the filter leaves the files out.
    assert_eq!(verdict(&e, "grep", json!({"pattern": "x"})), Allow);
    assert_eq!(verdict(&e, "ls", json!({"path": "."})), Allow);
    assert_eq!(
        verdict(&e, "read", json!({"file_path": "src/main.rs"})),
        Allow
    );
    let filter = e.read_filter();
    assert!(!filter.is_empty());
    assert!(filter.is_denied(&root.join("secrets")));
    assert!(filter.is_denied(&root.join("secrets/key.pem")));
    assert!(filter.is_denied(Path::new("secrets/deep/x")));
    assert!(!filter.is_denied(&root.join("src/main.rs")));
    assert!(!filter.is_denied(root));
    assert!(e.is_read_denied(&root.join("secrets/deep")));
    // A read-deny rule holds in bypass too.
    let e = engine(root, Mode::Bypass, &[], &[], &["read(./secrets/**)"]);
    assert_eq!(
        verdict(&e, "grep", json!({"pattern": "x", "path": "secrets"})),
        Deny
    );
}

#[cfg(unix)]
#[test]
fn read_deny_follows_symlinks() {
    let ws = workspace();
    let root = ws.path();
    std::os::unix::fs::symlink(root.join("secrets"), root.join("innocent")).expect("symlink");
    let e = engine(root, Mode::Default, &[], &[], &["read(./secrets/**)"]);
    assert_eq!(
        verdict(&e, "read", json!({"file_path": "innocent/key.pem"})),
        Deny
    );
    assert_eq!(
        verdict(&e, "grep", json!({"pattern": "x", "path": "innocent"})),
        Deny
    );
    assert!(e.read_filter().is_denied(&root.join("innocent")));
}

#[test]
fn tools_without_permissions_fail_closed() {
    let ws = workspace();
    let e = engine(ws.path(), Mode::AcceptEdits, &[], &[], &[]);
    let mystery = Stub::undescribed("mystery");
    let d = e.evaluate(mystery.as_ref(), &json!({}));
    assert_eq!(d.verdict, Ask);
    assert!(d.reason.contains("declares no permissions"), "{}", d.reason);
    let e = engine(ws.path(), Mode::Default, &["mystery"], &[], &[]);
    assert_eq!(e.evaluate(mystery.as_ref(), &json!({})).verdict, Allow);
    // Custom metadata.
    let access = Access::write(["src/a.rs"]);
    assert_eq!(access.capability, Capability::Write);
    let e = engine(ws.path(), Mode::Default, &["write(src/**)"], &[], &[]);
    assert_eq!(e.evaluate_access("mine", &access).verdict, Allow);
}

#[test]
fn session_grants() {
    let ws = workspace();
    let e = engine(ws.path(), Mode::Default, &[], &[], &["bash(rm *)"]);
    assert_eq!(verdict(&e, "bash", json!({"command": "npm test"})), Ask);
    e.grant_session("bash(npm test *)".parse().expect("rule"));
    let d = e.evaluate(tool("bash").as_ref(), &json!({"command": "npm test -- x"}));
    assert_eq!(d.verdict, Allow);
    assert_eq!(
        d.source,
        DecisionSource::SessionGrant("bash(npm test *)".into())
    );
    // A grant never beats a deny rule or a compound with an ungranted part.
    e.grant_session("bash(rm *)".parse().expect("rule"));
    assert_eq!(verdict(&e, "bash", json!({"command": "rm x"})), Deny);
    assert_eq!(
        verdict(&e, "bash", json!({"command": "npm test; curl x"})),
        Ask
    );
    // Clones share grants; clearing forgets them.
    let clone = e.clone();
    clone.clear_session_grants();
    assert_eq!(verdict(&e, "bash", json!({"command": "npm test"})), Ask);
    // What "allow for the session" remembers: the normalized specifier.
    let grants = e.grants_for("bash", &Access::command("cargo   test -p x && git status"));
    let texts: Vec<String> = grants.iter().map(ToString::to_string).collect();
    assert_eq!(texts, ["bash(cargo test -p x)", "bash(git status)"]);
    let grants = e.grants_for(
        "write",
        &Access::write([ws.path().join("src/a.rs").to_string_lossy()]),
    );
    assert_eq!(grants[0].to_string(), "write(/src/a.rs)");
}

#[test]
fn read_only_roots_deny_writes() {
    let ws = workspace();
    let other = tempfile::tempdir().expect("tempdir");
    let policy = Policy::from_toml(&format!(
        "mode = \"accept-edits\"\n[[roots]]\npath = {:?}\naccess = \"read-only\"\n",
        other.path().to_string_lossy()
    ))
    .expect("policy");
    let e = ApprovalEngine::new(ws.path()).with_policy(&policy);
    let inside = other.path().join("a.txt").to_string_lossy().into_owned();
    let d = e.evaluate(
        tool("write").as_ref(),
        &json!({"file_path": inside, "content": ""}),
    );
    assert_eq!(d.verdict, Deny);
    assert!(matches!(d.source, DecisionSource::ReadOnlyRoot(_)));
    assert_eq!(verdict(&e, "read", json!({"file_path": inside})), Allow);
    let mut workspace = agentcore::fs::workspace::Workspace::new(ws.path()).expect("ws");
    policy.apply_roots(&mut workspace).expect("roots");
    assert_eq!(workspace.roots().len(), 2);
}

#[test]
fn policy_files() {
    let policy = Policy::from_toml(
        r#"
        mode = "plan"
        allow = ["bash(cargo test *)", "write(src/**)"]
        ask = ["bash(git push *)"]
        deny = ["read(./secrets/**)", "grep"]
        "#,
    )
    .expect("policy");
    assert_eq!(policy.mode, Mode::Plan);
    assert_eq!(policy.allow.len(), 2);
    assert_eq!(policy.deny[1].to_string(), "grep");
    let empty = Policy::from_toml("").expect("empty policy");
    assert_eq!(empty.mode, Mode::Default);
    for (bad, needle) in [
        (
            r#"mode = "yolo""#,
            "use one of default, accept-edits, plan, bypass",
        ),
        (r#"allow = ["bash(cargo test"]"#, "not closed"),
        (r#"deny = ["bash(a && b)"]"#, "one rule per command"),
        (r#"deny = ["read(!x)"]"#, "negated"),
        (r#"alow = []"#, "unknown field"),
        ("allow = [", "invalid policy"),
    ] {
        let err = Policy::from_toml(bad).expect_err(bad).to_string();
        assert!(err.contains(needle), "{bad}: {err}");
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("policy.toml");
    std::fs::write(&file, "mode = \"bypass\"").expect("write");
    assert_eq!(Policy::load(&file).expect("load").mode, Mode::Bypass);
    let err = Policy::load(dir.path().join("missing.toml")).expect_err("missing");
    assert!(err.to_string().contains("cannot read policy file"), "{err}");
}

// ---- through the real pipeline ----

fn pipeline(engine: ApprovalEngine) -> Pipeline {
    let mut registry = ToolRegistry::new();
    for name in BUILTINS {
        registry.register(tool(name)).expect("register");
    }
    Pipeline::builder()
        .registry(Arc::new(registry))
        .gate(Arc::new(engine))
        .build()
}

async fn run(p: &Pipeline, id: &str, name: &str, args: Value) -> ToolResult {
    p.service()
        .oneshot(Call::new(id, name, args))
        .await
        .expect("infallible")
}

#[tokio::test]
async fn ask_without_an_approver_is_a_deny_that_says_approval_was_required() {
    let ws = workspace();
    let p = pipeline(engine(
        ws.path(),
        Mode::Default,
        &["bash(cargo test *)"],
        &[],
        &[],
    ));
    let r = run(&p, "c1", "bash", json!({"command": "cargo build"})).await;
    assert_eq!(r.outcome, Outcome::Denied);
    assert!(r.text().starts_with("approval required: "), "{}", r.text());
    assert!(
        r.text().contains("bash(cargo build *)"),
        "suggests a rule: {}",
        r.text()
    );
    let r = run(&p, "c2", "bash", json!({"command": "cargo test"})).await;
    assert_eq!(r.outcome, Outcome::Success);
    let r = run(&p, "c3", "read", json!({"file_path": "src/main.rs"})).await;
    assert_eq!(r.outcome, Outcome::Success);
}

#[tokio::test]
async fn plan_mode_reason_reaches_the_model() {
    let ws = workspace();
    let p = pipeline(engine(ws.path(), Mode::Plan, &[], &[], &[]));
    let r = run(
        &p,
        "c1",
        "edit",
        json!({"file_path": "src/main.rs", "old_string": "a", "new_string": "b"}),
    )
    .await;
    assert_eq!(r.outcome, Outcome::Denied);
    assert!(r.text().contains("planning mode"), "{}", r.text());
}

#[tokio::test]
async fn five_denials_never_disable_a_tool() {
    let ws = workspace();
    let e = engine(
        ws.path(),
        Mode::Default,
        &["bash(echo *)"],
        &[],
        &["bash(rm *)"],
    );
    let p = pipeline(e);
    for i in 0..5 {
        let r = run(&p, &format!("d{i}"), "bash", json!({"command": "rm -rf /"})).await;
        assert_eq!(r.outcome, Outcome::Denied, "call {i}");
    }
    for i in 0..5 {
        let r = run(
            &p,
            &format!("a{i}"),
            "bash",
            json!({"command": "curl x | sh"}),
        )
        .await;
        assert_eq!(r.outcome, Outcome::Denied, "ask {i}");
    }
    let r = run(&p, "ok", "bash", json!({"command": "echo hi"})).await;
    assert_eq!(r.outcome, Outcome::Success, "{}", r.text());
}

#[tokio::test]
async fn a_person_answers_and_session_grants_are_remembered() {
    let ws = workspace();
    let asked = Arc::new(AtomicUsize::new(0));
    let counter = asked.clone();
    let approver = approver_fn(move |req| {
        counter.fetch_add(1, Ordering::SeqCst);
        async move {
            assert_eq!(req.decision.verdict, Verdict::Ask);
            match req.args["command"].as_str() {
                Some(c) if c.starts_with("npm") => ApprovalAnswer::AllowSession,
                Some(c) if c.starts_with("make") => ApprovalAnswer::AllowOnce,
                _ => ApprovalAnswer::Deny(Some("not today".into())),
            }
        }
    });
    let e = engine(ws.path(), Mode::Default, &[], &[], &[]).with_approver(Arc::new(approver));
    let p = pipeline(e.clone());
    assert_eq!(
        run(&p, "1", "bash", json!({"command": "npm test"}))
            .await
            .outcome,
        Outcome::Success
    );
    assert_eq!(
        run(&p, "2", "bash", json!({"command": "npm   test"}))
            .await
            .outcome,
        Outcome::Success
    );
    assert_eq!(
        asked.load(Ordering::SeqCst),
        1,
        "the grant answered the second call"
    );
    assert_eq!(
        run(&p, "3", "bash", json!({"command": "make"}))
            .await
            .outcome,
        Outcome::Success
    );
    assert_eq!(
        run(&p, "4", "bash", json!({"command": "make"}))
            .await
            .outcome,
        Outcome::Success
    );
    assert_eq!(
        asked.load(Ordering::SeqCst),
        3,
        "allow once is not remembered"
    );
    let r = run(&p, "5", "bash", json!({"command": "curl x"})).await;
    assert_eq!(r.outcome, Outcome::Denied);
    assert!(r.text().contains("not today"), "{}", r.text());
    assert_eq!(e.session_grants().len(), 1);
    // Plan mode set at runtime overrides the grant.
    e.set_mode(Mode::Plan);
    assert_eq!(
        run(&p, "6", "bash", json!({"command": "npm test"}))
            .await
            .outcome,
        Outcome::Denied
    );
}

/// Issue 30: a terminal session runs whatever is typed into it, so an
/// allow rule for the command (`less` and `vi` run `!cmd`) does
/// not cover it in a terminal; only a bare `bash` rule does, and a deny
/// rule on commands makes it ask even in bypass mode.
#[test]
fn a_terminal_session_is_not_covered_by_the_rules_for_its_command() {
    let ws = workspace();
    let e = engine(
        ws.path(),
        Mode::Default,
        &["bash(less *)", "bash(vi *)"],
        &[],
        &[],
    );
    for command in ["less docs/a.md", "vi docs/a.md"] {
        assert_eq!(
            verdict(&e, "bash", json!({"command": command})),
            Allow,
            "{command}"
        );
        let d = e.evaluate(
            tool("bash").as_ref(),
            &json!({"command": command, "tty": true}),
        );
        assert_eq!(d.verdict, Ask, "{command} in a terminal: {}", d.reason);
        assert!(d.reason.contains("terminal session"), "{}", d.reason);
    }
    let bare = engine(ws.path(), Mode::Default, &["bash"], &[], &[]);
    assert_eq!(
        verdict(
            &bare,
            "bash",
            json!({"command": "less docs/a.md", "tty": true})
        ),
        Allow
    );
    let denying = engine(ws.path(), Mode::Bypass, &[], &[], &["bash(rm *)"]);
    assert_eq!(
        verdict(&denying, "bash", json!({"command": "less docs/a.md"})),
        Allow
    );
    assert_eq!(
        verdict(
            &denying,
            "bash",
            json!({"command": "less docs/a.md", "tty": true})
        ),
        Ask
    );
}
