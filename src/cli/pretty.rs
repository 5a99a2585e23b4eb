//! `--format pretty`: a line per call with label, activity, outcome and
//! duration, coloured diffs, and a spinner while a call runs.
//!
//! Everything shown that came from outside (file contents, command output,
//! arguments, tool names and ids, the user's text, paths) is escaped
//! ([`escape_controls`]), so terminal control sequences in it are shown,
//! not obeyed. That holds by construction: a line reaches the terminal only
//! as a [`Shown`], and a `Shown` is made only by escaping outside text
//! ([`Shown::escaped`]) or by the [`shown!`] macro, whose arguments must be
//! [`Safe`]: a `Shown`, text written in this program (`&'static str`), a
//! number, or one of those styled. A `String` of unknown origin does not
//! compile there. Only this output for people is escaped; `--format jsonl`
//! carries the exact text.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use agentcore::stages::coerce::parse_and_coerce;
use agentcore::{Content, Event, Outcome, RawArgs, ToolRegistry, UpdateKind};
use console::{Style, style};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Deserialize as _;
use serde_json::Value;

use agentcore::hooks::HookReport;
use agentcore::session::Session;
use agentcore::tools::bash::BashProgress;

use super::out;
use super::term::Screen;

/// Text fit for the terminal: outside text escaped, or this program's own.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Shown(String);

impl Shown {
    /// Outside text (file contents, output, arguments, names, paths) with
    /// its control characters escaped.
    pub fn escaped(text: &str) -> Self {
        Self(escape_controls(text).into_owned())
    }

    /// The text, for an API that takes a `String` (a spinner's message).
    fn into_string(self) -> String {
        self.0
    }

    fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Shown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

mod sealed {
    pub trait Sealed {}
}

/// What [`shown!`] may put into a line: nothing that could carry
/// unescaped outside text.
pub trait Safe: std::fmt::Display + sealed::Sealed {}

macro_rules! safe {
    ($($t:ty),*) => {$(impl sealed::Sealed for $t {} impl Safe for $t {})*};
}
safe!(
    Shown,
    &'static str,
    u64,
    usize,
    u32,
    i64,
    console::StyledObject<&'static str>
);
impl sealed::Sealed for console::StyledObject<Shown> {}
impl Safe for console::StyledObject<Shown> {}
impl sealed::Sealed for console::StyledObject<&Shown> {}
impl Safe for console::StyledObject<&Shown> {}
impl<T: Safe> sealed::Sealed for &T {}
impl<T: Safe> Safe for &T {}

/// Only lets [`Safe`] values through (the check of [`shown!`]).
fn safe<T: Safe>(value: T) -> T {
    value
}

/// `format!` for the terminal: every argument must be [`Safe`], given
/// positionally. The format string is passed through `concat!`, so
/// `format!` cannot capture a variable by name (`{title}` does not
/// compile), which would let an unchecked value through.
macro_rules! shown {
    ($fmt:literal $(, $arg:expr)* $(,)?) => {
        Shown::from_checked(format!(concat!($fmt) $(, safe($arg))*))
    };
}

impl Shown {
    /// Made by [`shown!`] only, from [`Safe`] pieces.
    fn from_checked(text: String) -> Self {
        Self(text)
    }
}

/// Renders a run for people.
pub struct Pretty {
    registry: Arc<ToolRegistry>,
    /// Spinners when stdout is a terminal that can draw them; plain lines
    /// otherwise (a pipe, a file, `TERM=dumb`).
    multi: Option<MultiProgress>,
    running: HashMap<String, Running>,
}

struct Running {
    bar: Option<ProgressBar>,
    title: Shown,
}

impl std::fmt::Debug for Pretty {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pretty")
            .field("running", &self.running.len())
            .finish_non_exhaustive()
    }
}

impl Pretty {
    /// A renderer that looks labels and activities up in `registry`, with
    /// spinners when `screen` can draw them ([`Screen::can_draw`]).
    pub fn new(registry: Arc<ToolRegistry>, screen: &Screen) -> Self {
        // Drawn on stdout, where every other line of this output goes.
        let multi = screen
            .can_draw()
            .then(|| MultiProgress::with_draw_target(ProgressDrawTarget::stdout()));
        Self {
            registry,
            multi,
            running: HashMap::new(),
        }
    }

    /// The only way out to the terminal: a [`Shown`] line.
    fn println(&self, line: Shown) {
        match &self.multi {
            Some(multi) => {
                let _ = multi.println(line.as_str());
            }
            None => {
                out::line(line);
            }
        }
    }

    pub(crate) fn hello(&mut self, session: &Session) {
        self.println(shown!(
            "{} {} · workspace {} · mode {}",
            style("agentcore").bold(),
            env!("CARGO_PKG_VERSION"),
            Shown::escaped(&session.workspace().root().display().to_string()),
            Shown::escaped(session.approval().mode().as_str()),
        ));
        self.println(shown!(
            "{}",
            style(shown!(
                "sandbox {}",
                Shown::escaped(&session.sandbox_summary())
            ))
            .dim()
        ));
    }

    pub(crate) fn user(&mut self, text: &str) {
        self.println(Shown::default());
        self.println(shown!(
            "{} {}",
            style("›").cyan().bold(),
            style(Shown::escaped(text)).bold()
        ));
    }

    pub(crate) fn note(&mut self, text: &str) {
        self.println(Shown::default());
        self.println(shown!(
            "{}",
            style(shown!("# {}", Shown::escaped(text))).dim().italic()
        ));
    }

    pub(crate) fn input_error(&mut self, line: u64, message: &str) {
        self.println(shown!(
            "{} line {}: {}",
            style("input error").red().bold(),
            line,
            Shown::escaped(message)
        ));
    }

    pub(crate) fn event(&mut self, event: &Event) {
        match event {
            Event::ToolExecStart {
                call_id,
                tool,
                label,
                args,
            } => self.start(call_id, tool, label.as_deref(), args),
            Event::ToolExecUpdate {
                call_id,
                kind: UpdateKind::Preview,
                payload,
            } => {
                let title = self.title(call_id);
                self.println(shown!("  {} {}", style("diff").dim(), title));
                if let Some(diff) = payload.as_str() {
                    for line in diff.lines() {
                        self.println(shown!("    {}", diff_line(&Shown::escaped(line))));
                    }
                }
            }
            Event::ToolExecUpdate {
                call_id,
                kind: UpdateKind::Progress,
                payload,
            } => {
                if let Some(Running {
                    bar: Some(bar),
                    title,
                }) = self.running.get(call_id)
                {
                    let last = progress_text(payload);
                    bar.set_message(shown!("{}  {}", title, style(last).dim()).into_string());
                }
            }
            Event::ToolExecUpdate {
                call_id,
                kind: UpdateKind::Hook,
                payload,
            } => {
                let title = self.title(call_id);
                // The typed report; a payload of another shape is shown whole.
                let line = match serde_json::from_value::<HookReport>(payload.clone()) {
                    Ok(report) => format!(
                        "{} {} exit {} {} ms: {}",
                        report.hook_event_name,
                        cut(&report.hook, 60),
                        report
                            .exit
                            .map(|code| code.to_string())
                            .unwrap_or("null".into()),
                        report.duration_ms,
                        report.effect,
                    ),
                    Err(_) => payload.to_string(),
                };
                self.println(shown!(
                    "  {} {}  {}",
                    style("hook").dim(),
                    title,
                    style(Shown::escaped(&line)).dim()
                ));
            }
            Event::ToolExecEnd {
                call_id,
                outcome,
                content,
                duration_ms,
                coercions,
                ..
            } => {
                let title = self.title(call_id);
                if let Some(Running { bar: Some(bar), .. }) = self.running.remove(call_id) {
                    bar.finish_and_clear();
                }
                let (icon, word) = outcome_style(*outcome);
                self.println(shown!(
                    "  {} {}  {}  {}",
                    icon,
                    title,
                    word,
                    style(shown!("{} ms", *duration_ms)).dim()
                ));
                for c in coercions {
                    self.println(shown!(
                        "      {} {} {} → {}",
                        style("coerced").magenta(),
                        Shown::escaped(&c.path),
                        Shown::escaped(&c.from),
                        Shown::escaped(&c.to)
                    ));
                }
                let text = content_text(content);
                let shown: Vec<&str> = text
                    .lines()
                    .take(if outcome.is_error() { 4 } else { 2 })
                    .collect();
                for line in shown {
                    let line = Shown::escaped(&cut(line, 110));
                    let styled = if outcome.is_error() {
                        style(line).yellow()
                    } else {
                        style(line).dim()
                    };
                    self.println(shown!("      {}", styled));
                }
            }
            Event::MessageStart { .. } | Event::MessageEnd { .. } => {}
            Event::JobExit {
                job_id,
                status,
                command,
            } => {
                self.println(shown!(
                    "  {} {}: {} ({})",
                    style("job").dim(),
                    Shown::escaped(job_id),
                    Shown::escaped(status),
                    Shown::escaped(command)
                ));
            }
            Event::ModelResponse { tool_results } => {
                self.println(shown!(
                    "  {}",
                    style(shown!(
                        "↳ {} tool result(s) go back to the model",
                        tool_results.len()
                    ))
                    .dim()
                ));
            }
        }
    }

    fn start(&mut self, call_id: &str, tool: &str, label: Option<&str>, args: &Value) {
        let name = Shown::escaped(label.unwrap_or(tool));
        // Parsed and coerced as the pipeline will ("10" → 10 where the schema
        // says integer), so a typed tool can read them.
        let raw = match args {
            Value::String(text) => RawArgs::Text(text.clone()),
            other => RawArgs::Value(other.clone()),
        };
        let activity = self
            .registry
            .get(tool)
            .and_then(|entry| {
                let (args, _) = parse_and_coerce(entry, &raw).ok()?;
                entry.tool().activity(&args)
            })
            .map(|a| Shown::escaped(&cut(&a, 70)))
            .unwrap_or_default();
        let title = if activity.as_str().is_empty() {
            shown!("{}", style(name).bold())
        } else {
            shown!("{}  {}", style(name).bold(), activity)
        };
        let bar = self.multi.as_ref().map(|multi| {
            let bar = multi.add(ProgressBar::new_spinner());
            bar.set_style(
                ProgressStyle::with_template("  {spinner:.cyan} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.set_message(title.clone().into_string());
            bar.enable_steady_tick(Duration::from_millis(80));
            bar
        });
        self.running
            .insert(call_id.to_owned(), Running { bar, title });
    }

    fn title(&self, call_id: &str) -> Shown {
        self.running
            .get(call_id)
            .map(|r| r.title.clone())
            .unwrap_or_else(|| Shown::escaped(call_id))
    }
}

fn outcome_style(
    outcome: Outcome,
) -> (
    console::StyledObject<&'static str>,
    console::StyledObject<&'static str>,
) {
    let (icon, color): (&str, Style) = match outcome {
        Outcome::Success => ("✓", Style::new().green()),
        Outcome::Failed => ("✗", Style::new().red()),
        Outcome::Denied => ("⊘", Style::new().yellow()),
        Outcome::Cancelled => ("■", Style::new().yellow()),
        Outcome::Skipped => ("↷", Style::new().yellow()),
        Outcome::Disabled => ("⚠", Style::new().red()),
    };
    (color.apply_to(icon), color.apply_to(outcome.as_str()))
}

fn diff_line(line: &Shown) -> console::StyledObject<&Shown> {
    let text = line.as_str();
    if text.starts_with("+++") || text.starts_with("---") {
        style(line).bold()
    } else if text.starts_with('+') {
        style(line).green()
    } else if text.starts_with('-') {
        style(line).red()
    } else if text.starts_with("@@") {
        style(line).cyan()
    } else {
        style(line).dim()
    }
}

fn content_text(content: &[Content]) -> String {
    let mut out = Vec::new();
    for block in content {
        match block {
            Content::Text { text } => out.push(text.clone()),
            Content::Json { value } => out.push(value.to_string()),
            Content::Image { media_type, data } => {
                out.push(format!("[image {media_type}, {} base64 bytes]", data.len()))
            }
        }
    }
    out.join("\n")
}

fn progress_text(payload: &Value) -> Shown {
    // Bash's typed update; another tool's payload: a string as is, an
    // object's `text` or `output` field, anything else as JSON.
    let text = match BashProgress::deserialize(payload) {
        Ok(update) => update.output,
        Err(_) => match payload {
            Value::String(s) => s.clone(),
            Value::Object(map) => map
                .get("text")
                .or_else(|| map.get("output"))
                .and_then(Value::as_str)
                .map(str::to_owned)
                .unwrap_or_else(|| payload.to_string()),
            other => other.to_string(),
        },
    };
    let last = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    Shown::escaped(&cut(last, 60))
}

/// `text` made safe to print on a terminal: control characters are shown
/// as escapes instead of being sent for the terminal to obey, so file
/// contents, command output and arguments cannot set the window title
/// (OSC), clear the screen (CSI), overwrite a line with a carriage return,
/// or reorder what is shown with bidirectional overrides.
///
/// Newlines and tabs are kept. ESC is shown as `\e`, CR as `\r`, and every
/// other C0 control, DEL, C1 control (U+0080–U+009F), bidirectional
/// embedding, override, isolate or mark, and the Unicode line and paragraph
/// separators as `\u{…}` with the code point in hex (`\u{9b}`, `\u{202e}`).
/// Text with none of them is returned as it is.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(shown_escaped) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\u{1b}' => out.push_str("\\e"),
            '\r' => out.push_str("\\r"),
            c if shown_escaped(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Whether [`escape_controls`] shows `c` as an escape.
fn shown_escaped(c: char) -> bool {
    matches!(
        c,
        '\0'..='\u{8}'
            | '\u{b}'..='\u{1f}'
            | '\u{7f}'..='\u{9f}'
            | '\u{61c}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
    )
}

/// At most `max` characters, with an ellipsis when cut.
fn cut(text: &str, max: usize) -> String {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(max).collect();
    if chars.next().is_some() {
        format!("{head}…")
    } else {
        head
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_newlines_and_tabs_pass_unchanged_and_unallocated() {
        let text = "fn main() {\n\tprintln!(\"héllo → 世界 \\e\");\n}\n";
        assert!(matches!(escape_controls(text), Cow::Borrowed(t) if t == text));
    }

    #[test]
    fn terminal_control_sequences_are_shown_not_obeyed() {
        for (raw, shown) in [
            // Window title (OSC 0, ended by BEL and by ST).
            ("\u{1b}]0;pwned\u{7}", "\\e]0;pwned\\u{7}"),
            ("\u{1b}]2;t\u{1b}\\", "\\e]2;t\\e\\"),
            // Clear screen and home the cursor (CSI).
            ("\u{1b}[2J\u{1b}[H", "\\e[2J\\e[H"),
            // A carriage return that would overwrite the line.
            ("ok: tests passed\rFAILED", "ok: tests passed\\rFAILED"),
            // CRLF line ends keep their newline; the CR is shown.
            ("a\r\nb", "a\\r\nb"),
            // 8-bit CSI and OSC (C1), DEL, NUL, backspace, other C0.
            ("\u{9b}2J\u{9d}0;x\u{9c}", "\\u{9b}2J\\u{9d}0;x\\u{9c}"),
            (
                "a\u{7f}\0\u{8}\u{b}\u{c}z",
                "a\\u{7f}\\u{0}\\u{8}\\u{b}\\u{c}z",
            ),
            // Bidirectional overrides, isolates and marks (Trojan Source).
            ("x\u{202e}gnp.exe", "x\\u{202e}gnp.exe"),
            (
                "\u{2066}a\u{2069}\u{200f}\u{61c}",
                "\\u{2066}a\\u{2069}\\u{200f}\\u{61c}",
            ),
            // Line and paragraph separators.
            ("a\u{2028}b\u{2029}", "a\\u{2028}b\\u{2029}"),
            // Newlines and tabs are kept.
            ("\tkeep\nthis\u{1b}[31m", "\tkeep\nthis\\e[31m"),
        ] {
            let escaped = escape_controls(raw);
            assert_eq!(escaped, shown, "{raw:?}");
            assert!(
                !escaped.chars().any(shown_escaped),
                "{escaped:?} still holds a control character"
            );
        }
    }

    #[test]
    fn every_control_character_is_escaped() {
        for c in (0u32..=0x9f)
            .chain(0x2000..=0x206f)
            .filter_map(char::from_u32)
        {
            let escaped = escape_controls(&c.to_string()).into_owned();
            let kept = c == '\n' || c == '\t' || !(c.is_control() || shown_escaped(c));
            if kept {
                assert_eq!(escaped, c.to_string(), "{c:?}");
            } else {
                assert!(escaped.starts_with('\\'), "{c:?} shown as {escaped:?}");
                assert!(escaped.chars().all(|e| !e.is_control()), "{c:?}");
            }
        }
    }

    #[test]
    fn progress_text_reads_bash_updates_typed() {
        let update = serde_json::json!({
            "output": "step 1\nstep 2\n",
            "omitted_bytes": 0,
            "total_bytes": 14,
            "total_lines": 2,
        });
        assert_eq!(progress_text(&update).as_str(), "step 2");
        let other = serde_json::json!({"text": "a", "output": "b", "total_lines": 1});
        assert_eq!(progress_text(&other).as_str(), "a");
    }

    #[test]
    fn progress_text_is_escaped_after_it_is_cut() {
        let payload = serde_json::json!({"output": "step 1\nstep 2\u{1b}]0;x\u{7}"});
        assert_eq!(progress_text(&payload).as_str(), "step 2\\e]0;x\\u{7}");
    }
}
