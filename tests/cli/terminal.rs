//! Runs the `agentcore` binary on a pseudo-terminal, through util-linux
//! `script` (the tests' `nix` has no pty feature), for the tests of what a
//! terminal gets.

use std::process::{Command, Output, Stdio};

/// util-linux `script`. A test needing it fails when it is missing (every
/// Linux distribution installs it), rather than pass without running.
pub fn script() -> &'static str {
    ["/usr/bin/script", "/bin/script"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .expect("this test needs util-linux `script` (in /usr/bin or /bin), and there is none")
}

/// Runs `agentcore ARGS…` with its stdin, stdout and stderr on a
/// pseudo-terminal whose `TERM` is `term`, with `env` set, feeding `input`
/// (then end of file). What the terminal showed comes back in `stdout`
/// (stdout and stderr mixed, lines ended by CRLF).
pub fn on_terminal(
    script: &str,
    term: &str,
    env: &[(&str, &str)],
    args: &[&str],
    input: &str,
) -> Output {
    let mut line = shell_quote(env!("CARGO_BIN_EXE_agentcore"));
    for arg in args {
        line.push(' ');
        line.push_str(&shell_quote(arg));
    }
    let mut cmd = Command::new(script);
    cmd.args(["-qec", &line, "/dev/null"])
        .env("TERM", term)
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE");
    for (name, value) in env {
        cmd.env(name, value);
    }
    cmd.stdin(Stdio::piped());
    crate::support::cli::spawn_with_input(&mut cmd, input)
        .wait_with_output()
        .expect("script ends")
}

fn shell_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\\''"))
}

/// How many SGR (colour and style) escapes `text` holds.
pub fn colour_escapes(text: &[u8]) -> usize {
    let text = String::from_utf8_lossy(text);
    text.match_indices("\u{1b}[")
        .filter(|(at, _)| {
            text[at + 2..]
                .chars()
                .find(|c| !(c.is_ascii_digit() || *c == ';'))
                == Some('m')
        })
        .count()
}
