//! Telling a command that timed out waiting for input from one that was
//! merely slow: its last output line looks like a question.

use super::output::{Collector, Shown};

/// Characters of the last line quoted in the notice.
const QUOTED_CHARS: usize = 200;

/// Markers that make a line a question wherever they appear (compared
/// case-insensitively).
const ASKING: &[&str] = &[
    "[y/n]",
    "(y/n)",
    "[yes/no]",
    "(yes/no)",
    "(yes/no/[fingerprint])",
    "password:",
    "passphrase",
    "press enter",
    "press any key",
];

/// The command's last non-blank output line, when it looks like a
/// question: it ends with `?` or `:` (spaces aside), or holds `[y/N]`,
/// `(yes/no)`, `Password:` and the like.
pub(crate) fn waiting_line(collector: &Collector) -> Option<String> {
    let Shown { head, tail, .. } = collector.shown();
    let text = if tail.trim().is_empty() { head } else { tail };
    let line = text.lines().rev().find(|l| !l.trim().is_empty())?.trim();
    asks(line).then(|| line.chars().take(QUOTED_CHARS).collect())
}

/// Whether `line` (trimmed) reads as a question.
fn asks(line: &str) -> bool {
    let lower = line.to_lowercase();
    line.ends_with('?') || line.ends_with(':') || ASKING.iter().any(|m| lower.contains(m))
}

/// The sentence added to a timed-out result whose last line is `line`.
pub(crate) fn notice(line: &str) -> String {
    format!(
        "The command seems to be waiting for input (\"{line}\"); it gets none. Run it \
         non-interactively (for example with --yes) or in the background."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn last(output: &str) -> Option<String> {
        let mut c = Collector::default();
        c.push(output.as_bytes());
        waiting_line(&c)
    }

    #[test]
    fn questions_are_recognised() {
        for prompt in [
            "Continue? [y/N] ",
            "Are you sure you want to continue connecting (yes/no)? ",
            "Password: ",
            "Enter passphrase for key '/root/.ssh/id_rsa': ",
            "Proceed ([y]/n)?",
            "Name:",
            "Do it [Y/n]",
        ] {
            let output = format!("building\n{prompt}");
            assert_eq!(last(&output).as_deref(), Some(prompt.trim()), "{prompt}");
        }
    }

    #[test]
    fn other_endings_are_not() {
        assert_eq!(last("Compiling foo\nCompiling bar\n"), None);
        assert_eq!(last(""), None);
        assert_eq!(last("\n\n"), None);
        assert_eq!(last("Listening on http://localhost:3000\n"), None);
    }

    #[test]
    fn the_notice_quotes_the_line_and_says_what_to_do() {
        assert_eq!(
            notice("Continue? [y/N]"),
            "The command seems to be waiting for input (\"Continue? [y/N]\"); it gets none. \
             Run it non-interactively (for example with --yes) or in the background."
        );
    }
}
