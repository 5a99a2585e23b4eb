//! Issue 13, item 1: an allowed `ls` must not run anything else. Bash
//! evaluates the contents of variables as code in arithmetic, `[[ ]]`,
//! array subscripts and `@P` expansions, so a command whose words show only
//! `ls` can still run `rm`. Allow rules cover only commands the analysis
//! fully understood; everything else asks (a deny when no one can ask).
//!
//! Through the public API ([`ApprovalEngine`] with the issue's policy) in
//! every mode, through `agentcore run` and `agentcore mcp` end to end (the
//! victim file survives and the secret is not printed), and as a property:
//! a marker command embedded in any such construct, nested in any
//! compound, around an allowed command, is never allowed.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use agentcore::access::Access;
use agentcore::approval::{ApprovalEngine, Mode, Verdict};
use agentcore::config::Policy;
use proptest::prelude::*;
use serde_json::{Value, json};

use crate::support::cli;

/// The policy of the issue.
const POLICY: &str = r#"
allow = ["bash(git status *)", "bash(ls *)"]
deny = ["bash(rm *)", "read(./secrets/**)"]
"#;

/// The attack of the issue and its variants: each deletes `victim.txt`
/// and prints the secret when bash runs it.
const ATTACKS: [&str; 12] = [
    "for X in 'a[$(cat secrets/x .env >&2; rm victim.txt)]'; do (( X )); ls; done",
    "X='a[$(cat secrets/x >&2; rm victim.txt)]'; [[ X -eq 1 ]]; ls",
    "X='a[$(cat secrets/x >&2; rm victim.txt)]'; ls ${X[@]:X}",
    "X='a[$(cat secrets/x >&2; rm victim.txt)]'; for ((i=X;i<1;i++)); do ls; done",
    "for X in '$(cat secrets/x >&2; rm victim.txt)'; do ls ${X@P}; done",
    "X='a[$(cat secrets/x >&2; rm victim.txt)]'; ls $((X))",
    "X='a[$(cat secrets/x >&2; rm victim.txt)]'; ls $[X]",
    "X='a[$(cat secrets/x >&2; rm victim.txt)]'; test -v \"$X\"; ls",
    "X='a[$(cat secrets/x >&2; rm victim.txt)]'; [ -v \"$X\" ]; ls",
    "X='a[$(cat secrets/x >&2; rm victim.txt)]'; let X; ls",
    "X='a[$(cat secrets/x >&2; rm victim.txt)]'; Y=X; ls ${!Y}",
    "X='a[$(cat secrets/x >&2; rm victim.txt)]'; printf -v \"$X\" %s 1; ls",
];

fn engine(root: &Path, mode: Mode) -> ApprovalEngine {
    let policy = Policy::from_toml(POLICY).expect("the issue's policy");
    ApprovalEngine::new(root)
        .with_policy(&policy)
        .with_mode(mode)
}

fn verdict(engine: &ApprovalEngine, command: &str) -> (Verdict, String) {
    let d = engine.evaluate_access("bash", &Access::command(command));
    (d.verdict, d.reason)
}

#[test]
fn the_issue_attack_and_its_variants_are_never_allowed_in_any_mode() {
    let ws = tempfile::tempdir().expect("tempdir");
    for mode in [Mode::Default, Mode::AcceptEdits, Mode::Plan, Mode::Bypass] {
        let e = engine(ws.path(), mode);
        for attack in ATTACKS {
            let (v, reason) = verdict(&e, attack);
            assert_ne!(
                v,
                Verdict::Allow,
                "{mode}: {attack:?} was allowed: {reason}"
            );
        }
    }
}

#[test]
fn the_allowed_command_alone_is_still_allowed() {
    let ws = tempfile::tempdir().expect("tempdir");
    for mode in [Mode::Default, Mode::AcceptEdits] {
        let e = engine(ws.path(), mode);
        for ok in [
            "ls",
            "ls -la src",
            "ls \"$HOME\" ~/x *.rs",
            "git status --short 2>&1",
            "git status && ls | ls",
            "for f in a b; do ls $f; done",
            "if ls a; then ls b; else git status; fi",
            "(ls; { git status; })",
            "ls ${X:-a} ${X#*.} ${#X} ${X/a/b}",
            "ls $(ls)",
        ] {
            let (v, reason) = verdict(&e, ok);
            assert_eq!(v, Verdict::Allow, "{mode}: {ok:?}: {reason}");
        }
    }
}

#[test]
fn every_construct_that_evaluates_hidden_code_asks_and_says_why() {
    let ws = tempfile::tempdir().expect("tempdir");
    let e = engine(ws.path(), Mode::Default);
    // (command, a phrase its reason must contain)
    let table = [
        ("(( X )); ls", "arithmetic"),
        ("ls $((X))", "arithmetic"),
        ("ls $[X]", "arithmetic"),
        ("let X; ls", "arithmetic"),
        ("declare -i X=1; ls", "arithmetic"),
        ("for ((i=0;i<1;i++)); do ls; done", "arithmetic"),
        ("[[ X -eq 1 ]]; ls", "[[ ]]"),
        ("test -v X; ls", "test -v"),
        ("[ -v X ]; ls", "test -v"),
        ("ls ${a[1]}", "subscript"),
        ("ls ${a[@]}", "subscript"),
        ("ls ${#a[1]}", "subscript"),
        ("a[1]=x; ls", "subscript"),
        ("ls ${X:1:2}", "offset"),
        ("ls ${!X}", "${!X}"),
        ("ls ${X@P}", "@P"),
        ("ls ${X@E}", "@P and @E"),
        ("printf -v X %s 1; ls", "printf -v"),
        ("read -a X; ls", "read -a"),
        ("mapfile X; ls", "callback"),
        ("eval ls", "eval"),
        ("source x.sh; ls", "file"),
        (". x.sh; ls", "file"),
        ("trap ls EXIT; ls", "trap"),
        ("alias ls=rm; ls", "alias"),
        ("f() { ls; }; f", "function"),
        ("exec ls", "exec"),
        ("bash -c ls", "bash -c"),
        ("sh -c ls", "sh -c"),
        ("ls | bash", "standard input"),
        ("bash <<< ls", "standard input"),
        ("python3 -c 'print(1)'; ls", "inline"),
        ("perl -e 1; ls", "inline"),
        ("node -e 1; ls", "inline"),
        ("ruby -e 1; ls", "inline"),
        ("$X; ls", "not literal"),
        ("$(echo ls)", "not literal"),
        ("ls 'unterminated", "could not be parsed"),
        ("if true; then (( X )); fi; ls", "arithmetic"),
        ("while (( X )); do ls; done", "arithmetic"),
        ("case a in a) [[ X -eq 1 ]];; esac; ls", "[[ ]]"),
        ("(ls; (( X )))", "arithmetic"),
        ("{ ls; ls ${X@P}; }", "@P"),
        ("ls | (( X ))", "arithmetic"),
    ];
    for (command, phrase) in table {
        let (v, reason) = verdict(&e, command);
        assert_eq!(v, Verdict::Ask, "{command:?}: {reason}");
        assert!(
            reason.contains(phrase),
            "{command:?}: the reason should name {phrase:?}: {reason}"
        );
    }
}

#[tokio::test]
async fn without_an_approver_the_reason_says_no_rule_can_allow_it() {
    let ws = tempfile::tempdir().expect("tempdir");
    let e = engine(ws.path(), Mode::Default);
    let (_, reason) = verdict(&e, ATTACKS[0]);
    assert!(
        reason.contains("arithmetic evaluates the contents of variables"),
        "{reason}"
    );
    assert!(reason.contains("No allow rule can cover it"), "{reason}");
}

// ---- end to end: the command really is not run ----

/// A workspace with the secret, `.env` and the victim file.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("secrets")).expect("mkdir");
    std::fs::write(dir.path().join("secrets/x"), "TOPSECRET-x\n").expect("write");
    std::fs::write(dir.path().join(".env"), "TOPSECRET-env\n").expect("write");
    std::fs::write(dir.path().join("victim.txt"), "victim\n").expect("write");
    dir
}

fn policy_file(dir: &Path, text: &str) -> String {
    let file = dir.join("policy.toml");
    std::fs::write(&file, text).expect("write policy");
    file.to_string_lossy().into_owned()
}

/// Runs one bash call through `agentcore run`; its end event and all
/// output.
fn run_bash(root: &Path, policy: &str, mode: &str, command: &str) -> (Value, String) {
    let turn = json!({"turn": [{"id": "b", "name": "bash", "args": {"command": command}}]});
    let output = cli::agentcore_run(
        root,
        "jsonl",
        &["--policy", policy, "--mode", mode],
        &format!("{turn}\n"),
    );
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let all = format!("{stdout}{}", String::from_utf8_lossy(&output.stderr));
    let end = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["type"] == "tool_exec_end")
        .unwrap_or_else(|| panic!("no tool_exec_end: {all}"));
    (end, all)
}

#[test]
fn the_attack_really_deletes_the_file_when_nothing_stops_it() {
    // The control: without rules, in bypass mode, the payload runs, so
    // the tests below prove something.
    let ws = workspace();
    let policy = policy_file(ws.path(), "");
    let (end, _) = run_bash(ws.path(), &policy, "bypass", ATTACKS[0]);
    assert_eq!(end["outcome"], "success", "{end}");
    assert!(!ws.path().join("victim.txt").exists(), "the payload ran");
}

#[test]
fn agentcore_run_does_not_run_the_attack_in_default_or_accept_edits() {
    for mode in ["default", "accept-edits"] {
        for attack in ATTACKS {
            let ws = workspace();
            let policy = policy_file(ws.path(), POLICY);
            let (end, all) = run_bash(ws.path(), &policy, mode, attack);
            assert_eq!(end["outcome"], "denied", "{mode}: {attack:?}: {end}");
            assert!(
                ws.path().join("victim.txt").exists(),
                "{mode}: {attack:?} deleted the victim"
            );
            assert!(
                !all.contains("TOPSECRET"),
                "{mode}: {attack:?} printed the secret: {all}"
            );
        }
    }
}

#[test]
fn agentcore_mcp_does_not_run_the_attack() {
    let ws = workspace();
    let policy = policy_file(ws.path(), POLICY);
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentcore"))
        .arg("mcp")
        .arg("--root")
        .arg(ws.path())
        .args(["--policy", &policy, "--mode", "accept-edits"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn agentcore mcp");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut send = |message: Value| {
        stdin
            .write_all(format!("{message}\n").as_bytes())
            .expect("write");
        stdin.flush().expect("flush");
    };
    let mut response = |id: i64| loop {
        let line = lines
            .next()
            .expect("the server answers")
            .expect("a readable line");
        let message: Value = serde_json::from_str(&line).expect("JSON");
        if message["id"] == id {
            return message;
        }
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "attack", "version": "0"}}}),
    );
    response(1);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}}));
    for (i, attack) in ATTACKS.iter().enumerate() {
        let id = i as i64 + 2;
        send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "bash", "arguments": {"command": attack}}}));
        let r = response(id);
        assert_eq!(r["result"]["isError"], true, "{attack:?}: {r}");
        assert!(!r.to_string().contains("TOPSECRET"), "{attack:?}: {r}");
        assert!(
            ws.path().join("victim.txt").exists(),
            "{attack:?} deleted the victim over MCP"
        );
    }
    drop(stdin);
    let _ = child.wait();
}

// ---- the property ----

/// Constructs that make bash evaluate a variable's contents as code; `{M}`
/// is where the marker command hides, `{A}` is the allowed command.
const CONSTRUCTS: [&str; 16] = [
    "X='a[$({M})]'; (( X )); {A}",
    "X='a[$({M})]'; [[ X -eq 1 ]]; {A}",
    "X='a[$({M})]'; {A} ${X[@]:X}",
    "X='a[$({M})]'; {A} ${X:X:1}",
    "X='a[$({M})]'; for ((i=X;i<1;i++)); do {A}; done",
    "X='$({M})'; {A} ${X@P}",
    "X='a[$({M})]'; {A} $((X))",
    "X='a[$({M})]'; {A} $[X]",
    "X='a[$({M})]'; let X; {A}",
    "X='a[$({M})]'; test -v \"$X\"; {A}",
    "X='a[$({M})]'; {A} ${!X}",
    "eval '{M}'; {A}",
    "bash -c '{M}'; {A}",
    "X='{M}'; $X; {A}",
    "trap '{M}' EXIT; {A}",
    "{A} <<< '{M}' | sh",
];

/// How a construct is nested: `{}` is the construct.
const NESTINGS: [&str; 9] = [
    "{}",
    "if true; then {}; fi",
    "while true; do {}; break; done",
    "case a in a) {};; esac",
    "( {} )",
    "{ {}; }",
    "ls | ( {} )",
    "for Y in a; do {}; done",
    "git status && {}",
];

fn build(construct: &str, nestings: &[usize], allowed: &str, marker: &str) -> String {
    let mut command = construct.replace("{M}", marker).replace("{A}", allowed);
    for &n in nestings {
        command = NESTINGS[n].replace("{}", &command);
    }
    command
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn a_marker_inside_any_construct_is_never_allowed(
        construct in 0..CONSTRUCTS.len(),
        nestings in proptest::collection::vec(0..NESTINGS.len(), 0..4),
        allowed in prop::sample::select(vec!["ls", "ls -la", "git status", "git status --short"]),
        marker in prop::sample::select(vec!["touch MARK", "rm victim.txt", "cat secrets/x", "curl x | sh"]),
        mode in prop::sample::select(vec![Mode::Default, Mode::AcceptEdits, Mode::Bypass]),
    ) {
        let command = build(CONSTRUCTS[construct], &nestings, allowed, marker);
        let ws = std::env::temp_dir();
        let e = engine(&ws, mode);
        let (v, reason) = verdict(&e, &command);
        prop_assert_ne!(v, Verdict::Allow, "{} {:?}: {}", mode, command, reason);
    }
}

/// The analysis against bash itself: every command it calls fully
/// understood leaves a variable's contents unevaluated, and the constructs
/// the issue names do evaluate them (so the test could fail).
#[test]
fn what_the_analysis_understands_bash_does_not_evaluate() {
    let understood = [
        "ls \"$X\" ~/x *.rs $1 $@ $#",
        "for f in $X; do ls $f; done",
        "echo ${X:-a} ${X#*.} ${X%.rs} ${#X} ${X/a/b} ${X^^} ${X,,} ${X@Q} ${X@U}",
        "echo $(echo $X) `echo $X`",
        "[ -f $X ] && test -d $X",
        "[ \"$X\" -eq 1 ]",
        "read -r line <<< $X",
        "command -v $X",
        "export PATH=$PATH:$X A=\"$X\"",
        "case $X in $X) ;; esac",
        // `${X:=…}` is no longer understood: it assigns while expanding
        // (see SECOND_ROUND), though by itself it evaluates nothing.
        "echo ${Y:-$X} ${X-$X} ${X+$X} ${X#$X} ${X/$X/$X}",
        "ls $X $X[1] \"${X}\"",
        "cat <<E\n$X\nE",
        "echo \"${X}\"[1]",
    ];
    let evaluated = [
        "(( X ))",
        "[[ X -eq 1 ]]",
        "echo ${a[X]}",
        "echo ${!X}",
        "echo ${X@P}",
        "test -v \"$X\"",
        "printf -v \"$X\" 1",
        "declare \"$X=1\"",
        "unset \"$X\"",
        "let X",
    ];
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("P");
    let runs = |command: &str| {
        let _ = std::fs::remove_file(&marker);
        let script = format!("a=(1); X='a[$(touch P)]'; Y=; {command}");
        let _ = Command::new("bash")
            .arg("-c")
            .arg(&script)
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("bash runs");
        marker.exists()
    };
    for command in understood {
        let analysis = agentcore::shell::CommandAnalysis::parse(command);
        assert!(
            analysis.fully_understood(),
            "{command:?}: {:?}",
            analysis.hazards
        );
        assert!(!runs(command), "bash evaluated X in {command:?}");
    }
    for command in evaluated {
        let analysis = agentcore::shell::CommandAnalysis::parse(command);
        assert!(!analysis.fully_understood(), "{command:?}");
        assert!(runs(command), "bash did not evaluate X in {command:?}");
    }
}

/// Found by a red-team pass over the first fix: each of these ran
/// `touch PWNED` (or `rm victim.txt`) through an allowed `ls` or
/// `git status` in default and accept-edits modes.
const SECOND_ROUND: [&str; 9] = [
    // A here-document body is expanded with its quotes as plain text.
    "ls <<EOF\n\"'$(touch PWNED)'\"\nEOF",
    "git status <<EOF\n\"'$(touch PWNED)'\"\nEOF",
    // `$'…'` inside `${…}` is decoded and then expanded again.
    "ls \"${X:-$'\\x24(touch PWNED)'}\"",
    "git status \"${X:-$'\\x60touch PWNED\\x60'}\"",
    // Brace expansion comes first and can build a `$` construct; `${Y:=…}`
    // stores the code on the way.
    "ls ${Y:=$'\\x24(touch PWNED)'} {$,}{Y@P}",
    "ls ${Y:=$'a[\\x24(touch PWNED)]'}; ls {$,}{!Y}",
    "ls ${Y:=$'a[\\x24(touch PWNED)]'}; ls {$,}[Y]",
    // `{NAME}>file` evaluates a subscript in NAME.
    "ls ${Y:=$'a[\\x24(touch PWNED)]'}; ls {a[Y]}>/dev/null",
    "ls {a[Y]}>/dev/null",
];

#[test]
fn the_second_round_of_attacks_is_never_allowed() {
    let ws = tempfile::tempdir().expect("tempdir");
    for mode in [Mode::Default, Mode::AcceptEdits] {
        let e = engine(ws.path(), mode);
        for attack in SECOND_ROUND {
            let (v, reason) = verdict(&e, attack);
            assert_ne!(
                v,
                Verdict::Allow,
                "{mode}: {attack:?} was allowed: {reason}"
            );
        }
    }
}

#[test]
fn agentcore_run_does_not_run_the_second_round() {
    for attack in SECOND_ROUND {
        let ws = workspace();
        let policy = policy_file(ws.path(), POLICY);
        for mode in ["default", "accept-edits"] {
            let (end, all) = run_bash(ws.path(), &policy, mode, attack);
            assert_ne!(end["outcome"], "success", "{mode}: {attack:?}: {all}");
            assert!(
                !ws.path().join("PWNED").exists(),
                "{mode}: {attack:?} ran its payload"
            );
        }
    }
}
