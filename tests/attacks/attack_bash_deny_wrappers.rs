//! Issue 13, item 10: a deny rule `bash(rm *)` in bypass mode (where deny
//! rules still apply) must catch `rm` behind wrappers, inside inline shell
//! code, and must not let through a command whose program it cannot see.
//!
//! The choices tested here:
//! - wrappers are unwrapped with their options (`env -i A=1 rm`,
//!   `timeout -s KILL 5 rm`, `xargs -0 -n1 rm`, `find -exec rm`), and the
//!   inner command is matched like any part: deny;
//! - `find … -delete` is judged as the command `rm <starting points>`:
//!   deny;
//! - shell code given inline (`bash -c`, `eval`, `git -c alias.x='!…'`) is
//!   parsed, so an `rm` written in it is denied outright;
//! - a command word that is not literal (`$X`, `$(echo rm)`, a glob),
//!   interpreters with inline code, and every other construct that hides
//!   what runs are unknown: with a deny rule on the tool they are never
//!   allowed silently; they ask, which with no one to ask is a deny.

use std::path::Path;

use agentcore::access::Access;
use agentcore::approval::{ApprovalEngine, DecisionSource, Mode, RuleKind, Verdict};
use agentcore::config::Policy;
use serde_json::{Value, json};

use crate::support::cli;

fn engine(root: &Path, mode: Mode, policy: &str) -> ApprovalEngine {
    let policy = Policy::from_toml(policy).expect("policy");
    ApprovalEngine::new(root)
        .with_policy(&policy)
        .with_mode(mode)
}

const DENY_RM: &str = r#"deny = ["bash(rm *)"]"#;

fn is_deny_rule(source: &DecisionSource) -> bool {
    matches!(source, DecisionSource::Rule { kind: RuleKind::Deny, rule } if rule == "bash(rm *)")
}

#[test]
fn wrapped_rm_is_denied_in_bypass_mode() {
    let ws = tempfile::tempdir().expect("tempdir");
    let e = engine(ws.path(), Mode::Bypass, DENY_RM);
    for command in [
        "rm x",
        "/bin/rm x",
        "\\rm x",
        "'rm' x",
        "r\"\"m x",
        "$'\\x72m' x",
        "$'\\162m' x",
        "env rm x",
        "env -i A=1 rm x",
        "env -u HOME -- rm x",
        "command rm x",
        "command -p rm x",
        "builtin command rm x",
        "exec rm x",
        "xargs rm",
        "ls | xargs rm",
        "xargs -0 -n1 rm",
        "xargs -I{} rm {}",
        "find . -delete",
        "find src -name '*.o' -delete",
        "find . -exec rm {} \\;",
        "find . -execdir rm {} +",
        "find . -ok rm {} \\;",
        "find . -okdir rm {} \\;",
        "bash -c 'rm x'",
        "sh -c 'rm x'",
        "sh -lc 'rm x'",
        "bash -c \"eval 'rm x'\"",
        "eval 'rm x'",
        "eval rm x",
        "trap 'rm x' EXIT",
        "timeout 5 rm x",
        "timeout -s KILL 5 rm x",
        "timeout --signal=KILL -k 1 5 rm x",
        "nice rm x",
        "nice -n 5 rm x",
        "nice -5 rm x",
        "nohup rm x",
        "time rm x",
        "time -p rm x",
        "sudo rm x",
        "sudo -u root rm x",
        "doas rm x",
        "setsid rm x",
        "stdbuf -o0 rm x",
        "busybox rm x",
        "flock lock rm x",
        "flock lock -c 'rm x'",
        "chroot / rm x",
        "git -c alias.x='!rm y' x",
        "git config alias.x '!rm y'",
        "strace -f -o log rm x",
        "taskset 1 rm x",
        "unshare -r rm x",
        "script -qc 'rm x' /dev/null",
        "su -c 'rm x'",
        "timeout 5 env -i nice -n 1 xargs rm",
        "if true; then (cd a && env rm x); fi",
        "echo $(timeout 1 rm x)",
    ] {
        let d = e.evaluate_access("bash", &Access::command(command));
        assert_eq!(d.verdict, Verdict::Deny, "{command:?}: {}", d.reason);
        assert!(is_deny_rule(&d.source), "{command:?}: {:?}", d.source);
    }
}

#[test]
fn a_command_whose_program_is_unknown_is_never_allowed_under_a_deny_rule() {
    let ws = tempfile::tempdir().expect("tempdir");
    let e = engine(ws.path(), Mode::Bypass, DENY_RM);
    for command in [
        "X=rm; $X y",
        "$(echo rm) y",
        "`echo rm` y",
        "\"$X\" y",
        "/???/r? y",
        "{rm,y}",
        "env $X y",
        "xargs $X",
        "timeout 5 $X y",
        "eval \"$X\"",
        "bash -c \"$X\"",
        "echo rm y | sh",
        "sh <<< 'rm y'",
        "bash -s < script",
        "python3 -c 'import os; os.remove(\"y\")'",
        "python -Bc 'import os'",
        "perl -e 'unlink \"y\"'",
        "perl -lne 'print' f",
        "perl -le 'unlink \"y\"'",
        "perl -0777 -pe 1 f",
        "perl -I lib -e 1",
        "ruby -r json -e 1",
        "ruby -e 'File.delete(\"y\")'",
        "node -e 'require(\"fs\").unlinkSync(\"y\")'",
        "node --eval=1",
        "php -r 'unlink(\"y\");'",
        "awk 'BEGIN{system(\"rm y\")}'",
        "awk '{print | \"sh\"}' f",
        "X='a[$(rm y)]'; (( X ))",
        "source ./script.sh",
        "alias x=rm",
        "git -c core.pager=less log",
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!rm y' git x",
        "BASH_ENV=./evil bash script.sh",
        "hash -p /bin/rm ls; ls y",
        "ls 'unterminated",
        "env 'BASH_FUNC_ls%%=() { rm y; }' bash script.sh",
        "git config core.fsmonitor 'touch x'",
        "parallel echo ::: a",
    ] {
        let d = e.evaluate_access("bash", &Access::command(command));
        assert_eq!(d.verdict, Verdict::Ask, "{command:?}: {}", d.reason);
        assert!(is_deny_rule(&d.source), "{command:?}: {:?}", d.source);
        assert!(
            d.reason.contains("deny \"bash(rm *)\"") && d.reason.contains("cannot be checked"),
            "{command:?}: {}",
            d.reason
        );
    }
}

#[test]
fn plain_commands_stay_allowed_in_bypass_mode() {
    let ws = tempfile::tempdir().expect("tempdir");
    let e = engine(ws.path(), Mode::Bypass, DENY_RM);
    for command in [
        "ls",
        "git status",
        "git -C sub status",
        "cargo test 2>&1",
        "find . -name '*.rs'",
        "command -v rm",
        "env",
        "timeout 5 ls",
        "xargs ls",
        "xargs",
        "bash script.sh",
        "python3 script.py",
        "python3 -m pytest",
        "python3 --version",
        "echo rm",
        "ls rm",
        "awk '{print $1}' f",
        "for f in a b; do echo $f; done",
        "git config user.name x",
        "git rm --cached x",
    ] {
        let d = e.evaluate_access("bash", &Access::command(command));
        assert_eq!(d.verdict, Verdict::Allow, "{command:?}: {}", d.reason);
    }
    // Without a deny rule on the tool, bypass allows what it cannot see.
    let e = engine(ws.path(), Mode::Bypass, r#"deny = ["read(./secrets/**)"]"#);
    for command in ["eval 'x'", "python3 -c 1", "X=ls; $X"] {
        let d = e.evaluate_access("bash", &Access::command(command));
        assert_eq!(d.verdict, Verdict::Allow, "{command:?}: {}", d.reason);
    }
}

#[test]
fn an_allow_rule_on_a_wrapper_does_not_cover_what_it_wraps() {
    let ws = tempfile::tempdir().expect("tempdir");
    let e = engine(
        ws.path(),
        Mode::Default,
        r#"allow = ["bash(find *)", "bash(xargs *)", "bash(timeout *)", "bash(ls *)"]"#,
    );
    for (command, verdict) in [
        ("find . -name x", Verdict::Allow),
        ("find . -delete", Verdict::Ask),
        ("find . -exec curl x \\;", Verdict::Ask),
        ("find . -exec ls {} +", Verdict::Allow),
        ("ls | xargs ls", Verdict::Allow),
        ("ls | xargs rm", Verdict::Ask),
        ("timeout 5 ls", Verdict::Allow),
        ("timeout 5 curl x", Verdict::Ask),
    ] {
        let d = e.evaluate_access("bash", &Access::command(command));
        assert_eq!(d.verdict, verdict, "{command:?}: {}", d.reason);
    }
}

#[test]
fn a_bare_allow_rule_does_not_outrank_a_deny_rule_it_cannot_check() {
    let ws = tempfile::tempdir().expect("tempdir");
    let e = engine(
        ws.path(),
        Mode::Default,
        r#"allow = ["bash"]
deny = ["bash(rm *)"]"#,
    );
    let d = e.evaluate_access("bash", &Access::command("X=rm; $X y"));
    assert_eq!(d.verdict, Verdict::Ask, "{}", d.reason);
    let d = e.evaluate_access("bash", &Access::command("env rm y"));
    assert_eq!(d.verdict, Verdict::Deny, "{}", d.reason);
    let d = e.evaluate_access("bash", &Access::command("ls > out"));
    assert_eq!(d.verdict, Verdict::Allow, "{}", d.reason);
}

// ---- end to end, bypass mode ----

fn run_bash(root: &Path, policy: &str, command: &str) -> Value {
    let turn = json!({"turn": [{"id": "b", "name": "bash", "args": {"command": command}}]});
    let output = cli::agentcore_run(
        root,
        "jsonl",
        &["--policy", policy, "--mode", "bypass"],
        &format!("{turn}\n"),
    );
    cli::events(&output)
        .into_iter()
        .find(|e| e["type"] == "tool_exec_end")
        .expect("a tool_exec_end event")
}

#[test]
fn agentcore_run_in_bypass_mode_deletes_nothing_through_a_wrapper() {
    for command in [
        "env rm victim.txt",
        "command rm victim.txt",
        "builtin command rm victim.txt",
        "exec rm victim.txt",
        "echo victim.txt | xargs rm",
        "find . -name victim.txt -delete",
        "find . -name victim.txt -exec rm {} \\;",
        "bash -c 'rm victim.txt'",
        "sh -c 'rm victim.txt'",
        "eval 'rm victim.txt'",
        "X=rm; $X victim.txt",
        "$(echo rm) victim.txt",
        "timeout 5 rm victim.txt",
        "nice rm victim.txt",
        "nohup rm victim.txt",
        "time rm victim.txt",
        "git -c alias.x='!rm victim.txt' x",
        "python3 -c 'import os; os.remove(\"victim.txt\")'",
    ] {
        let ws = tempfile::tempdir().expect("tempdir");
        std::fs::write(ws.path().join("victim.txt"), "victim\n").expect("write");
        let policy = ws.path().join("policy.toml");
        std::fs::write(&policy, DENY_RM).expect("policy");
        let end = run_bash(ws.path(), policy.to_str().expect("utf-8"), command);
        assert_eq!(end["outcome"], "denied", "{command:?}: {end}");
        assert!(
            ws.path().join("victim.txt").exists(),
            "{command:?} deleted the victim in bypass mode"
        );
    }
    // The control: an unrelated command runs.
    let ws = tempfile::tempdir().expect("tempdir");
    std::fs::write(ws.path().join("victim.txt"), "victim\n").expect("write");
    let policy = ws.path().join("policy.toml");
    std::fs::write(&policy, DENY_RM).expect("policy");
    let end = run_bash(ws.path(), policy.to_str().expect("utf-8"), "cat victim.txt");
    assert_eq!(end["outcome"], "success", "{end}");
}

/// Found by a red-team pass over the first fix: each of these deleted the
/// file in bypass mode despite `bash(rm *)`.
#[test]
fn the_second_round_of_wrapped_rm_is_not_allowed() {
    let ws = tempfile::tempdir().expect("tempdir");
    let e = engine(ws.path(), Mode::Bypass, DENY_RM);
    for command in [
        // Bash cuts a word at a NUL.
        "$'rm\\0' victim.txt",
        // A quote splits a brace or a bracket.
        "{r'',x}m victim.txt",
        "/bin/r[''m] victim.txt",
        "find . -name victim.txt {-de''lete,}",
        // `env -` is `env -i`.
        "env - rm victim.txt",
        // Options take values, so the key is not the first operand.
        "git config -f .git/config alias.x '!rm victim.txt'",
        "git config --file .git/config alias.x '!rm victim.txt'",
        // A here-document body and `$'…'` inside `${…}`.
        "ls <<EOF\n\"'$(rm victim.txt)'\"\nEOF",
        "ls \"${X:-$'\\x24(rm victim.txt)'}\"",
    ] {
        let d = e.evaluate_access("bash", &Access::command(command));
        assert_ne!(d.verdict, Verdict::Allow, "{command:?}: {}", d.reason);
    }
}

/// Issue 25, item 12(f): a long option of a wrapper whose arity the
/// analysis did not know was read as taking no value, so its value was
/// taken for the command: `strace --output /dev/null rm x` judged
/// `/dev/null rm x` and deleted `x`. Known value options now take their
/// value (the `rm` is found and denied); an unknown long option makes the
/// command unknown, which asks under a deny rule (a deny with no one to
/// ask) and is never allowed.
#[test]
fn a_wrapper_long_option_of_unknown_arity_does_not_hide_the_command() {
    let ws = tempfile::tempdir().expect("tempdir");
    for mode in [Mode::Default, Mode::AcceptEdits, Mode::Bypass] {
        let e = engine(ws.path(), mode, DENY_RM);
        // The issue's three: their options are known now, so rm is denied.
        for command in [
            "strace --output /dev/null rm x",
            "strace -f --output /dev/null rm x",
            "setpriv --reuid 0 rm x",
            "setpriv --reuid 0 --regid 0 --clear-groups rm x",
            "unshare --propagation unchanged rm x",
            "unshare --map-root-user --propagation private rm x",
            "timeout --signal KILL 5 rm x",
            "timeout --preserve-status 5 rm x",
        ] {
            let d = e.evaluate_access("bash", &Access::command(command));
            assert_eq!(
                d.verdict,
                Verdict::Deny,
                "{mode}: {command:?}: {}",
                d.reason
            );
            assert!(is_deny_rule(&d.source), "{command:?}: {:?}", d.source);
        }
        // Long options it does not know: the command is unknown, so asks.
        for command in [
            "strace --made-up-option /dev/null rm x",
            "setpriv --future-option 0 rm x",
            "unshare --new-thing unchanged rm x",
            "nohup --whatever rm x",
            "stdbuf --unknown L rm x",
            "xargs --some-new-flag rm",
            "timeout --new 5 rm x",
        ] {
            let d = e.evaluate_access("bash", &Access::command(command));
            assert_ne!(
                d.verdict,
                Verdict::Allow,
                "{mode}: {command:?}: {}",
                d.reason
            );
            // Bypass would allow it, but the deny rule cannot be checked.
            if mode == Mode::Bypass {
                assert!(is_deny_rule(&d.source), "{command:?}: {:?}", d.source);
            }
        }
    }
}

#[test]
fn agentcore_run_deletes_nothing_through_a_wrapper_long_option() {
    for command in [
        "strace --output /dev/null rm victim.txt",
        "setpriv --reuid 0 rm victim.txt",
        "unshare --propagation unchanged rm victim.txt",
    ] {
        let ws = tempfile::tempdir().expect("tempdir");
        std::fs::write(ws.path().join("victim.txt"), "x").unwrap();
        let policy = ws.path().join("policy.toml");
        std::fs::write(&policy, DENY_RM).unwrap();
        let end = run_bash(ws.path(), policy.to_str().unwrap(), command);
        assert_eq!(end["outcome"], "denied", "{command}: {end}");
        assert!(ws.path().join("victim.txt").exists(), "{command}: {end}");
    }
}
