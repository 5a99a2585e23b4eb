//! A day's work on a real project, offline: in one `agentcore run` session
//! in the default approval mode, with the allow list pointing at a local
//! npm registry, the model's `npm install`, `npm run build`, `npm test` and
//! `git commit` all run confined and succeed, and nobody is asked: a
//! confined command needs no approval. Afterwards the commit is in the
//! repository and the dependency in `node_modules`.

use serde_json::Value;

use crate::support::registry::*;
use crate::support::require::*;
use crate::support::sandbox::*;

/// The policy of a project that installs its npm dependencies from a
/// mirror on loopback and has no other network:
///
/// - `mode = "required"`: every command runs in the sandbox, or not at all;
/// - `network = "allowlist"`: commands get a loopback of their own and
///   `HTTP_PROXY`/`HTTPS_PROXY`/`ALL_PROXY` pointing at agentcore's
///   proxies, which connect only to `allow_domains`;
/// - `resolve`: the proxies map the mirror's name themselves (no DNS);
/// - `toolchains = ["npm"]`: `~/.npm`, npm's cache, is writable.
///
/// The project's `.npmrc` names the mirror:
/// `registry=http://registry.test:PORT/`.
pub const OFFLINE_NPM_POLICY: &str = r#"[sandbox]
mode = "required"
network = "allowlist"
allow_domains = ["registry.test"]
resolve = { "registry.test" = "127.0.0.1" }
toolchains = ["npm"]
"#;

/// A git repository with one commit: a package depending on
/// `agentcore-demo`, whose `build` writes `dist/out.txt` with it and whose
/// `test` checks that file.
fn project(s: &Scene, npm: &NpmPackage) {
    put(
        &s.root.join("package.json"),
        r#"{
  "name": "offline-app",
  "version": "0.1.0",
  "private": true,
  "scripts": {
    "build": "node build.js",
    "test": "node test.js"
  },
  "dependencies": { "agentcore-demo": "^1.0.0" }
}
"#,
    );
    put(
        &s.root.join(".npmrc"),
        &format!(
            "registry={}\naudit=false\nfund=false\nupdate-notifier=false\n",
            npm.registry
        ),
    );
    put(
        &s.root.join("build.js"),
        r#"const fs = require("fs");
const greet = require("agentcore-demo");
fs.mkdirSync("dist", { recursive: true });
fs.writeFileSync("dist/out.txt", greet("build") + "\n");
console.log("built dist/out.txt");
"#,
    );
    put(
        &s.root.join("test.js"),
        &format!(
            r#"const assert = require("assert");
const fs = require("fs");
assert.strictEqual(fs.readFileSync("dist/out.txt", "utf8"), {:?});
console.log("1 test passed");
"#,
            format!("{NPM_GREETING}build\n")
        ),
    );
    put(&s.root.join(".gitignore"), "node_modules/\n");
    // Who commits, as a user's own configuration says.
    put(
        &s.home.join(".gitconfig"),
        "[user]\n\tname = agent\n\temail = agent@example.test\n",
    );
    git(&s.root, &["init", "-q", "-b", "main"]);
    git(&s.root, &["add", "-A"]);
    git(&s.root, &["commit", "-q", "-m", "project"]);
}

/// The event types `agentcore run` writes. It has no approval event: in
/// the default mode a call that needs approval ends `denied`, its text
/// starting `approval required:` (see the last test), so "nobody was
/// asked" is: every call a success, no text about approval.
const EVENT_TYPES: &[&str] = &[
    "hello",
    "run_start",
    "tool_exec_start",
    "tool_exec_update",
    "tool_exec_end",
    "message_start",
    "message_end",
    "model_response",
    "next_request",
    "job_exit",
    "network",
];

#[test]
#[ignore = "needs the command sandbox, npm, node and git"]
fn install_build_test_and_commit_run_confined_without_asking() {
    require_sandbox();
    require_program("npm");
    require_program("node");
    require_program("git");
    let server = Server::start_as(NAME);
    let npm = npm_package(&server);
    let s = scene(OFFLINE_NPM_POLICY);
    project(&s, &npm);

    let calls = [
        ("install", "npm install"),
        ("build", "npm run build"),
        ("test", "npm test"),
        (
            "commit",
            "git add -A && git commit -q -m 'Build with agentcore-demo' && git log --oneline -1",
        ),
    ];
    let lines: Vec<Value> = calls.iter().map(|(id, c)| bash(id, c)).collect();
    let events = run(&s, "default", &lines);

    for event in &events {
        let kind = event["type"].as_str().unwrap_or_default();
        assert!(EVENT_TYPES.contains(&kind), "unexpected event {event}");
    }
    for (id, command) in calls {
        let (outcome, text) = end(&events, id);
        assert_eq!(outcome, "success", "{command}: {text}");
        assert!(text.starts_with("Exit code: 0\n"), "{command}: {text}");
        assert!(!text.contains("approv"), "{command}: {text}");
        assert!(!text.contains("(sandboxed:"), "{command}: {text}");
    }
    assert!(
        text_of(&events, "build").contains("built dist/out.txt"),
        "{}",
        text_of(&events, "build")
    );
    assert!(
        text_of(&events, "test").contains("1 test passed"),
        "{}",
        text_of(&events, "test")
    );
    // Only the proxies know registry.test: the install went through them.
    server.assert_saw("GET", &npm.packument_path);
    server.assert_saw("GET", &npm.tarball_path);
    let network = events
        .iter()
        .find(|e| e["type"] == "network")
        .unwrap_or_else(|| panic!("no network event: {events:?}"));
    assert_eq!(network["connections_refused"], 0, "{network}");
    assert!(
        network["connections_allowed"].as_u64() >= Some(1),
        "{network}"
    );

    let log = git(&s.root, &["log", "--format=%s"]);
    assert_eq!(log, "Build with agentcore-demo\nproject\n");
    let changed = git(&s.root, &["show", "--name-only", "--format=", "HEAD"]);
    assert!(changed.contains("package-lock.json"), "{changed}");
    assert!(changed.contains("dist/out.txt"), "{changed}");
    assert!(
        s.root
            .join("node_modules/agentcore-demo/package.json")
            .is_file()
    );
    assert_eq!(git(&s.root, &["status", "--porcelain"]), "");
}

/// The contrast that makes the test above mean something: in the same
/// mode and policy, a command that asks to leave the sandbox is asked
/// about (and, with nobody to answer, not run).
#[test]
#[ignore = "needs the command sandbox"]
fn the_default_mode_asks_for_a_command_outside_the_sandbox() {
    require_sandbox();
    let s = scene(OFFLINE_NPM_POLICY);
    let (outcome, text) = one_call(
        &s,
        "default",
        serde_json::json!({
            "command": "touch ../outside/x",
            "dangerously_disable_sandbox": true,
            "description": "write outside the workspace",
        }),
    );
    assert_eq!(outcome, "denied", "{text}");
    assert!(text.starts_with("approval required:"), "{text}");
    assert!(!s.outside.join("x").exists());
}
