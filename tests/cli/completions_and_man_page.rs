//! `agentcore completions SHELL` prints a completion script for each
//! shell, and `agentcore man` a roff manual page.

use crate::support::cli::agentcore_output as agentcore;

#[test]
fn bash_completion_completes_agentcore_and_its_subcommands() {
    let out = agentcore(&["completions", "bash"]);
    assert!(out.status.success());
    let script = String::from_utf8_lossy(&out.stdout);
    assert!(script.contains("agentcore"), "{script}");
    for word in [
        "run",
        "demo",
        "tools",
        "mcp",
        "sandbox",
        "completions",
        "man",
    ] {
        assert!(script.contains(word), "{word} missing");
    }
    assert!(script.contains("complete -F"), "a bash `complete` line");
}

#[test]
fn every_shell_gets_a_script_naming_agentcore() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = agentcore(&["completions", shell]);
        assert!(out.status.success(), "{shell}");
        let script = String::from_utf8_lossy(&out.stdout);
        assert!(
            script.contains("agentcore") && script.contains("run"),
            "{shell}: {script}"
        );
    }
}

#[test]
fn man_prints_a_roff_page_with_a_title_and_the_subcommands() {
    let out = agentcore(&["man"]);
    assert!(out.status.success());
    let page = String::from_utf8_lossy(&out.stdout);
    // clap_mangen starts with the `Aq` string definition (`.ie \n(.g …`),
    // then the title line; no section comes before it.
    let title = page
        .lines()
        .position(|l| l.starts_with(".TH agentcore"))
        .expect(".TH agentcore");
    assert!(title <= 2, "{page}");
    assert!(page.lines().take(title).all(|l| !l.starts_with(".SH")));
    assert!(
        page.contains(".SH NAME") && page.contains(".SH SUBCOMMANDS"),
        "{page}"
    );
    assert!(page.contains("Exit status"), "{page}");
}
