//! Issue 25, item 4: hooks ran code the model controls outside the
//! sandbox. A hook command reaches files no rule protects (`bash guard.sh`
//! with no `/` in the word, a protected script that sources another, a
//! formatter from `node_modules/.bin`, `python3 -m black` importing a
//! `black.py` of the workspace, `make fmt`, `npm run lint`, a
//! `rust-toolchain.toml` with `path =`, a `PATH` holding a workspace
//! folder), and any of them can be written by the model. Now a hook runs
//! confined by the session's sandbox, as a confined `bash` command does,
//! unless it says `"unconfined": true`.
//!
//! Each vector through `agentcore run`: the model's file is planted in the
//! workspace, a call fires the hook, and the planted code tries to write a
//! marker outside the workspace and in the home, and one inside. Confined,
//! the inside marker proves it ran and the others stay absent; a hook
//! marked `"unconfined": true` still writes outside.
#![cfg(target_os = "linux")]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{Value, json};

use crate::support::require::*;
use crate::support::sandbox::*;

/// Shell code the model would plant: a marker outside the workspace, one
/// in the home, one inside (which proves it ran).
fn payload(s: &Scene) -> String {
    format!(
        "touch {out}; touch {home}; echo ran > {inside}",
        out = s.outside.join("escaped").display(),
        home = s.home.join("escaped").display(),
        inside = s.root.join("planted-ran").display(),
    )
}

fn script(path: &Path, body: &str) {
    put(path, &format!("#!/bin/sh\n{body}\n"));
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Runs `agentcore run` with one PostToolUse hook (every tool) of this
/// command and `extra` fields, and one `read` call that fires it, with
/// these variables added to agentcore's environment.
fn fire(s: &Scene, command: &str, extra: Value, env: &[(&str, String)]) -> Vec<Value> {
    let mut hook = json!({"type": "command", "command": command, "timeout": 60});
    if let (Some(hook), Some(extra)) = (hook.as_object_mut(), extra.as_object()) {
        hook.extend(extra.clone());
    }
    let settings = s.dir.join("hooks.json");
    std::fs::write(
        &settings,
        json!({"hooks": {"PostToolUse": [{"matcher": "*", "hooks": [hook]}]}}).to_string(),
    )
    .unwrap();
    let line = json!({"turn": [{"id": "r", "name": "read", "args": {"file_path": "a.txt"}}]});
    let out = output_of(
        || {
            let mut cmd = agentcore(s, User::Current, "default", &[]);
            cmd.arg("--hooks").arg(&settings);
            // `cargo test` runs under rustup, whose choice of toolchain
            // would beat the workspace's rust-toolchain.toml.
            cmd.env_remove("RUSTUP_TOOLCHAIN");
            for (name, value) in env {
                cmd.env(name, value);
            }
            cmd
        },
        std::slice::from_ref(&line),
    );
    events(&out)
}

/// The hook's update event of call `r`, for messages.
fn hook_update(events: &[Value]) -> String {
    events
        .iter()
        .filter(|e| e["type"] == "tool_exec_update")
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The planted code ran, and only inside the sandbox.
fn ran_confined(s: &Scene, vector: &str, events: &[Value]) {
    let (outcome, text) = end(events, "r");
    assert_eq!(outcome, "success", "{vector}: {text}");
    assert!(
        s.root.join("planted-ran").exists(),
        "{vector}: the planted code did not run at all: {}",
        hook_update(events)
    );
    assert!(
        !s.outside.join("escaped").exists(),
        "{vector}: the planted code wrote outside the workspace: {}",
        hook_update(events)
    );
    assert!(
        !s.home.join("escaped").exists(),
        "{vector}: the planted code wrote in the home: {}",
        hook_update(events)
    );
}

fn vector_scene() -> Scene {
    scene(CONFINED)
}

/// One vector: planted by `plant`, fired by a hook running `command`.
/// Confined, the planted code runs inside the sandbox only; marked
/// `"unconfined": true` (what every hook did before), it writes outside,
/// which shows the vector is real.
fn vector(
    name: &str,
    plant: impl Fn(&Scene),
    command: &str,
    env: impl Fn(&Scene) -> Vec<(&'static str, String)>,
) {
    let s = vector_scene();
    plant(&s);
    let events = fire(&s, command, json!({}), &env(&s));
    ran_confined(&s, name, &events);

    let s = vector_scene();
    plant(&s);
    let events = fire(&s, command, json!({"unconfined": true}), &env(&s));
    assert!(
        s.outside.join("escaped").exists(),
        "{name}: the vector did not reach outside even unconfined: {}",
        hook_update(&events)
    );
}

fn no_env(_: &Scene) -> Vec<(&'static str, String)> {
    Vec::new()
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces)"]
fn a_script_named_without_a_slash_runs_confined() {
    require_sandbox();
    vector(
        "bash guard.sh",
        |s| script(&s.root.join("guard.sh"), &payload(s)),
        "bash guard.sh",
        no_env,
    );
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces)"]
fn a_protected_script_sourcing_an_unprotected_one_runs_confined() {
    require_sandbox();
    vector(
        "sourced lib.sh",
        |s| {
            script(
                &s.root.join(".claude/hooks/fmt.sh"),
                ". \"$CLAUDE_PROJECT_DIR/scripts/lib.sh\"",
            );
            put(&s.root.join("scripts/lib.sh"), &payload(s));
        },
        "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/fmt.sh",
        no_env,
    );
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces), npx and jq"]
fn the_documented_prettier_hook_runs_a_planted_prettier_confined() {
    require_sandbox();
    require_program("npx");
    require_program("jq");
    vector(
        "npx prettier",
        |s| {
            script(&s.root.join("node_modules/.bin/prettier"), &payload(s));
            put(
                &s.root.join("node_modules/prettier/package.json"),
                r#"{"name": "prettier", "version": "3.0.0", "bin": {"prettier": "../.bin/prettier"}}"#,
            );
            put(
                &s.root.join("package.json"),
                r#"{"name": "ws", "version": "1.0.0"}"#,
            );
        },
        "jq -r '.tool_input.file_path' | xargs npx --no-install prettier --write",
        no_env,
    );
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces) and /usr/bin/python3"]
fn python_m_black_imports_a_planted_black_py_confined() {
    require_sandbox();
    require_file("/usr/bin/python3");
    vector(
        "python3 -m black",
        |s| {
            put(
                &s.root.join("black.py"),
                &format!("import os\nos.system({:?})\n", payload(s)),
            )
        },
        "/usr/bin/python3 -m black .",
        no_env,
    );
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces) and make"]
fn make_fmt_runs_a_planted_makefile_confined() {
    require_sandbox();
    require_program("make");
    vector(
        "make fmt",
        |s| {
            put(
                &s.root.join("Makefile"),
                &format!("fmt:\n\t{}\n", payload(s)),
            )
        },
        "make fmt",
        no_env,
    );
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces) and npm"]
fn npm_run_lint_runs_a_planted_script_confined() {
    require_sandbox();
    require_program("npm");
    vector(
        "npm run lint",
        |s| {
            put(
                &s.root.join("package.json"),
                &json!({"name": "ws", "version": "1.0.0", "scripts": {"lint": payload(s)}})
                    .to_string(),
            )
        },
        "npm run lint --offline",
        no_env,
    );
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces) and rustup"]
fn a_rust_toolchain_file_with_a_path_runs_a_planted_cargo_confined() {
    require_sandbox();
    require_program("rustup");
    // rustup's own home, which the scene's home does not have.
    let rustup_home = std::env::var("RUSTUP_HOME")
        .unwrap_or_else(|_| format!("{}/.rustup", std::env::var("HOME").unwrap_or_default()));
    vector(
        "rust-toolchain.toml path",
        |s| {
            let toolchain = s.root.join("tc");
            script(&toolchain.join("bin/cargo"), &payload(s));
            script(&toolchain.join("bin/rustc"), "echo rustc 1.0.0");
            put(
                &s.root.join("rust-toolchain.toml"),
                &format!("[toolchain]\npath = \"{}\"\n", toolchain.display()),
            );
        },
        "cargo fmt",
        |_| vec![("RUSTUP_HOME", rustup_home.clone())],
    );
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces)"]
fn a_workspace_folder_on_path_runs_a_planted_program_confined() {
    require_sandbox();
    vector(
        "PATH",
        |s| script(&s.root.join("bin/fmt-tool"), &payload(s)),
        "fmt-tool --check",
        |s| {
            let path = format!(
                "{}:{}",
                s.root.join("bin").display(),
                std::env::var("PATH").unwrap_or_default()
            );
            vec![("PATH", path)]
        },
    );
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces)"]
fn a_confined_hook_sees_no_secrets_in_its_environment() {
    require_sandbox();
    let s = vector_scene();
    let events = {
        let settings = s.dir.join("hooks.json");
        std::fs::write(
            &settings,
            json!({"hooks": {"PostToolUse": [{"matcher": "*", "hooks": [
                {"type": "command", "command": "env > hook-env.txt"}
            ]}]}})
            .to_string(),
        )
        .unwrap();
        let line = json!({"turn": [{"id": "r", "name": "read", "args": {"file_path": "a.txt"}}]});
        let out = output_of(
            || {
                let mut cmd = agentcore(&s, User::Current, "default", &[]);
                cmd.arg("--hooks")
                    .arg(&settings)
                    .env("AWS_SECRET_ACCESS_KEY", "HOOK-SECRET-VALUE");
                cmd
            },
            std::slice::from_ref(&line),
        );
        events(&out)
    };
    let env = std::fs::read_to_string(s.root.join("hook-env.txt"))
        .unwrap_or_else(|e| panic!("the hook did not run ({e}): {}", hook_update(&events)));
    assert!(!env.contains("HOOK-SECRET-VALUE"), "{env}");
    assert!(env.contains("CLAUDE_PROJECT_DIR="), "{env}");
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces)"]
fn a_hook_marked_unconfined_still_runs_outside_the_sandbox() {
    require_sandbox();
    let s = vector_scene();
    script(&s.root.join("guard.sh"), &payload(&s));
    let events = fire(&s, "bash guard.sh", json!({"unconfined": true}), &[]);
    let (outcome, text) = end(&events, "r");
    assert_eq!(outcome, "success", "{text}");
    assert!(
        s.root.join("planted-ran").exists(),
        "{}",
        hook_update(&events)
    );
    assert!(
        s.outside.join("escaped").exists() && s.home.join("escaped").exists(),
        "an unconfined hook runs with the user's authority: {}",
        hook_update(&events)
    );
}

#[test]
fn a_hook_that_must_run_confined_where_no_sandbox_can_be_built_blocks() {
    // A required sandbox missing a feature: the hook is not run unconfined.
    let s = scene("[sandbox]\nmode = \"required\"\nassume_missing = [\"landlock\"]\n");
    script(&s.root.join("guard.sh"), &payload(&s));
    let events = fire(&s, "bash guard.sh", json!({}), &[]);
    let (outcome, text) = end(&events, "r");
    assert_ne!(outcome, "success", "{text}");
    assert!(
        text.contains("cannot be set up here") && text.contains("\"unconfined\": true"),
        "{text}"
    );
    assert!(!s.root.join("planted-ran").exists());
    assert!(!s.outside.join("escaped").exists());
}

#[test]
fn without_a_sandbox_hooks_run_with_the_users_authority() {
    // `mode = "off"`: as documented, hooks run as in Claude Code.
    let s = scene("[sandbox]\nmode = \"off\"\n");
    script(&s.root.join("guard.sh"), &payload(&s));
    let events = fire(&s, "bash guard.sh", json!({}), &[]);
    let (outcome, text) = end(&events, "r");
    assert_eq!(outcome, "success", "{text}");
    assert!(
        s.outside.join("escaped").exists(),
        "{}",
        hook_update(&events)
    );
}
