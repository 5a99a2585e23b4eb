//! `--format pretty` (and `demo`) on a terminal: plain lines where the
//! terminal cannot draw (`TERM=dumb`), colour as `--color` and `NO_COLOR`
//! say.

use std::process::Command;

use crate::terminal::{colour_escapes, on_terminal, script};

const READ_TURN: &str =
    "{\"turn\": [{\"id\": \"c1\", \"name\": \"read\", \"args\": {\"file_path\": \"a.txt\"}}]}\n";

#[test]
fn run_on_a_dumb_terminal_prints_plain_lines() {
    let script = script();
    let dir = crate::support::cli::workspace();
    let root = dir.path().to_str().expect("a UTF-8 temp path");
    let out = on_terminal(script, "dumb", &[], &["run", "--root", root], READ_TURN);
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{shown}");
    assert!(shown.contains("agentcore 0.1.0"), "{shown}");
    assert!(
        shown.contains("Read File") && shown.contains("success"),
        "{shown}"
    );
    assert!(
        !shown.contains('\u{1b}'),
        "a dumb terminal got escapes: {shown:?}"
    );
}

#[test]
fn demo_on_a_dumb_terminal_prints_plain_lines() {
    let script = script();
    let out = on_terminal(script, "dumb", &[], &["demo"], "");
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{shown}");
    assert!(shown.contains("# A user prompt starts a run."), "{shown}");
    assert!(
        shown.contains("Done. The scratch workspace is removed."),
        "{shown}"
    );
    assert!(
        !shown.contains('\u{1b}'),
        "a dumb terminal got escapes: {shown:?}"
    );
}

#[test]
fn a_terminal_that_can_draw_is_coloured_unless_no_color_or_color_never() {
    let script = script();
    let coloured = on_terminal(script, "xterm-256color", &[], &["demo"], "");
    assert!(coloured.status.success());
    assert!(
        colour_escapes(&coloured.stdout) > 0,
        "auto colours a terminal"
    );
    let no_color = on_terminal(
        script,
        "xterm-256color",
        &[("NO_COLOR", "1")],
        &["demo"],
        "",
    );
    assert!(no_color.status.success());
    assert_eq!(colour_escapes(&no_color.stdout), 0, "NO_COLOR=1");
    let never = on_terminal(
        script,
        "xterm-256color",
        &[],
        &["--color", "never", "demo"],
        "",
    );
    assert!(never.status.success());
    assert_eq!(colour_escapes(&never.stdout), 0, "--color never");
    // An empty NO_COLOR does not count (no-color.org).
    let empty = on_terminal(script, "xterm-256color", &[("NO_COLOR", "")], &["demo"], "");
    assert!(colour_escapes(&empty.stdout) > 0, "NO_COLOR=\"\"");
}

#[test]
fn color_always_colours_a_pipe_and_never_or_auto_do_not() {
    let demo = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_agentcore"))
            .args(args)
            .env_remove("NO_COLOR")
            .env_remove("CLICOLOR_FORCE")
            .output()
            .expect("agentcore demo")
    };
    let always = demo(&["demo", "--color", "always"]);
    assert!(always.status.success());
    assert!(colour_escapes(&always.stdout) > 0);
    for args in [&["demo", "--color", "never"][..], &["demo"]] {
        let out = demo(args);
        assert!(out.status.success());
        assert_eq!(colour_escapes(&out.stdout), 0, "{args:?}");
        assert!(!out.stdout.contains(&0x1b), "{args:?}");
    }
}

#[test]
fn help_and_usage_errors_follow_color_too() {
    let help = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_agentcore"))
            .args(args)
            .env_remove("NO_COLOR")
            .output()
            .expect("agentcore --help")
    };
    let always = help(&["--color", "always", "--help"]);
    assert!(always.status.success());
    assert!(colour_escapes(&always.stdout) > 0);
    let error = help(&["--color=always", "run", "--bogus"]);
    assert_eq!(error.status.code(), Some(2));
    assert!(colour_escapes(&error.stderr) > 0);
    let script = script();
    let never = on_terminal(
        script,
        "xterm-256color",
        &[],
        &["--color", "never", "--help"],
        "",
    );
    assert!(never.status.success());
    assert_eq!(colour_escapes(&never.stdout), 0);
    let auto = on_terminal(script, "xterm-256color", &[], &["--help"], "");
    assert!(
        colour_escapes(&auto.stdout) > 0,
        "auto colours a terminal's help"
    );
}
