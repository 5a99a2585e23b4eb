//! What the terminal can take: whether the pretty output may draw (a
//! spinner redrawn in place) and whether it is coloured (`--color`,
//! `NO_COLOR`).

use std::ffi::OsString;
use std::io::IsTerminal;

use clap::ValueEnum;

/// `--color`: whether the output for people is coloured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Coloured when stdout is a terminal that can show it and `NO_COLOR`
    /// is unset or empty.
    #[default]
    Auto,
    /// Always coloured, even into a pipe or file.
    Always,
    /// Never coloured.
    Never,
}

/// The last `--color WHEN` or `--color=WHEN` in `args` (the program name
/// first) before a `--`, read ahead of clap so that clap's own help and
/// errors follow it too; `auto` when there is none or it is not a value.
pub fn color_in_args(args: &[OsString]) -> ColorChoice {
    let mut choice = ColorChoice::Auto;
    let mut args = args.iter().skip(1).map(|arg| arg.to_str());
    while let Some(arg) = args.next() {
        let value = match arg {
            Some("--") => break,
            Some("--color") => args.next().flatten(),
            Some(arg) => arg.strip_prefix("--color="),
            None => None,
        };
        if let Some(value) = value.and_then(|v| ColorChoice::from_str(v, false).ok()) {
            choice = value;
        }
    }
    choice
}

/// What the environment says about stdout, read once at start.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Screen {
    /// Whether stdout is a terminal.
    pub is_terminal: bool,
    /// `TERM`, when set and valid UTF-8.
    pub term: Option<String>,
    /// `NO_COLOR`, when set and valid UTF-8.
    pub no_color: Option<String>,
}

impl Screen {
    /// This process's stdout and environment.
    pub fn current() -> Self {
        Self {
            is_terminal: std::io::stdout().is_terminal(),
            term: std::env::var("TERM").ok(),
            no_color: std::env::var("NO_COLOR").ok(),
        }
    }

    /// Whether stdout is a terminal that can redraw a line in place (a
    /// spinner): not a pipe or file, and `TERM` neither unset, empty nor
    /// `dumb`. When it cannot, the pretty output is plain lines.
    pub fn can_draw(&self) -> bool {
        self.is_terminal && !matches!(self.term.as_deref(), None | Some("" | "dumb"))
    }

    /// Whether the output for people is coloured under `choice`: `always`
    /// and `never` say so; `auto` colours a terminal that can draw unless
    /// `NO_COLOR` has a non-empty value (<https://no-color.org>).
    pub fn colors(&self, choice: ColorChoice) -> bool {
        match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                self.can_draw() && self.no_color.as_deref().is_none_or(str::is_empty)
            }
        }
    }
}

/// Applies `choice` to every styled string this process prints (stdout and
/// stderr), read against `screen`.
pub fn apply(choice: ColorChoice, screen: &Screen) {
    let on = screen.colors(choice);
    console::set_colors_enabled(on);
    console::set_colors_enabled_stderr(on);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen(is_terminal: bool, term: Option<&str>, no_color: Option<&str>) -> Screen {
        Screen {
            is_terminal,
            term: term.map(str::to_owned),
            no_color: no_color.map(str::to_owned),
        }
    }

    #[test]
    fn a_dumb_or_unnamed_terminal_gets_plain_lines() {
        assert!(screen(true, Some("xterm-256color"), None).can_draw());
        assert!(!screen(true, Some("dumb"), None).can_draw());
        assert!(!screen(true, Some(""), None).can_draw());
        assert!(!screen(true, None, None).can_draw());
        assert!(!screen(false, Some("xterm"), None).can_draw());
    }

    #[test]
    fn auto_colours_only_a_drawing_terminal_without_no_color() {
        use ColorChoice::*;
        assert!(screen(true, Some("xterm"), None).colors(Auto));
        assert!(screen(true, Some("xterm"), Some("")).colors(Auto));
        assert!(!screen(true, Some("xterm"), Some("1")).colors(Auto));
        assert!(!screen(true, Some("dumb"), None).colors(Auto));
        assert!(!screen(false, Some("xterm"), None).colors(Auto));
    }

    #[test]
    fn color_is_read_ahead_from_either_spelling_before_a_double_dash() {
        let read = |args: &[&str]| {
            let args: Vec<OsString> = args.iter().map(OsString::from).collect();
            color_in_args(&args)
        };
        assert_eq!(read(&["agentcore", "--help"]), ColorChoice::Auto);
        assert_eq!(
            read(&["agentcore", "--color", "never", "run"]),
            ColorChoice::Never
        );
        assert_eq!(
            read(&["agentcore", "demo", "--color=always"]),
            ColorChoice::Always
        );
        assert_eq!(
            read(&["agentcore", "--color", "sometimes"]),
            ColorChoice::Auto
        );
        assert_eq!(read(&["agentcore", "--color"]), ColorChoice::Auto);
        assert_eq!(
            read(&["agentcore", "sandbox", "exec", "--", "ls", "--color=always"]),
            ColorChoice::Auto
        );
    }

    #[test]
    fn always_and_never_override_the_terminal_and_no_color() {
        use ColorChoice::*;
        assert!(screen(false, None, Some("1")).colors(Always));
        assert!(!screen(true, Some("xterm"), None).colors(Never));
    }
}
