//! `--format pretty`: a line per call with label, activity, outcome and
//! duration, coloured diffs, and a spinner while a call runs.
//!
//! Everything shown that came from outside (file contents, command output,
//! arguments, tool names and ids, the user's text, paths) passes through
//! [`escape_controls`] first, so terminal control sequences in it are shown,
//! not obeyed. Only this output for people is escaped; `--format jsonl`
//! carries the exact text.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Duration;

use agentcore::stages::coerce::parse_and_coerce;
use agentcore::{Content, Event, Outcome, RawArgs, ToolRegistry, UpdateKind};
use console::{Style, style};
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use serde_json::Value;

use agentcore::session::Session;

/// Renders a run for people.
pub struct Pretty {
    registry: Arc<ToolRegistry>,
    /// Spinners when stdout is a terminal; plain lines otherwise.
    multi: Option<MultiProgress>,
    running: HashMap<String, Running>,
}

struct Running {
    bar: Option<ProgressBar>,
    title: String,
}

impl std::fmt::Debug for Pretty {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pretty")
            .field("running", &self.running.len())
            .finish_non_exhaustive()
    }
}

impl Pretty {
    /// A renderer that looks labels and activities up in `registry`.
    pub fn new(registry: Arc<ToolRegistry>) -> Self {
        let multi = std::io::stdout().is_terminal().then(MultiProgress::new);
        Self {
            registry,
            multi,
            running: HashMap::new(),
        }
    }

    fn println(&self, line: impl AsRef<str>) {
        match &self.multi {
            Some(multi) => {
                let _ = multi.println(line.as_ref());
            }
            None => println!("{}", line.as_ref()),
        }
    }

    pub(crate) fn hello(&mut self, session: &Session) {
        self.println(format!(
            "{} {} · workspace {} · mode {}",
            style("agentcore").bold(),
            env!("CARGO_PKG_VERSION"),
            escape_controls(&session.workspace().root().display().to_string()),
            session.approval().mode(),
        ));
        self.println(format!(
            "{}",
            style(format!("sandbox {}", session.sandbox_summary())).dim()
        ));
    }

    pub(crate) fn user(&mut self, text: &str) {
        self.println("");
        self.println(format!(
            "{} {}",
            style("›").cyan().bold(),
            style(escape_controls(text)).bold()
        ));
    }

    pub(crate) fn note(&mut self, text: &str) {
        self.println("");
        self.println(format!(
            "{}",
            style(format!("# {}", escape_controls(text))).dim().italic()
        ));
    }

    pub(crate) fn input_error(&mut self, line: u64, message: &str) {
        self.println(format!(
            "{} line {line}: {}",
            style("input error").red().bold(),
            escape_controls(message)
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
                self.println(format!("  {} {title}", style("diff").dim()));
                if let Some(diff) = payload.as_str() {
                    for line in diff.lines() {
                        self.println(format!("    {}", diff_line(&escape_controls(line))));
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
                    bar.set_message(format!("{title}  {}", style(last).dim()));
                }
            }
            Event::ToolExecUpdate {
                call_id,
                kind: UpdateKind::Hook,
                payload,
            } => {
                let title = self.title(call_id);
                let field = |k: &str| {
                    payload.get(k).map(|v| match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    })
                };
                let line = format!(
                    "{} {} exit {} {} ms: {}",
                    field("hook_event_name").unwrap_or_default(),
                    cut(&field("hook").unwrap_or_default(), 60),
                    field("exit").unwrap_or_default(),
                    field("duration_ms").unwrap_or_default(),
                    field("effect").unwrap_or_default(),
                );
                self.println(format!(
                    "  {} {title}  {}",
                    style("hook").dim(),
                    style(escape_controls(&line)).dim()
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
                self.println(format!(
                    "  {icon} {title}  {word}  {}",
                    style(format!("{duration_ms} ms")).dim()
                ));
                for c in coercions {
                    self.println(format!(
                        "      {} {} {} → {}",
                        style("coerced").magenta(),
                        escape_controls(&c.path),
                        escape_controls(&c.from),
                        escape_controls(&c.to)
                    ));
                }
                let text = content_text(content);
                let shown: Vec<&str> = text
                    .lines()
                    .take(if outcome.is_error() { 4 } else { 2 })
                    .collect();
                for line in shown {
                    let line = escape_controls(&cut(line, 110)).into_owned();
                    let styled = if outcome.is_error() {
                        style(line).yellow()
                    } else {
                        style(line).dim()
                    };
                    self.println(format!("      {styled}"));
                }
            }
            Event::MessageStart { .. } | Event::MessageEnd { .. } => {}
            Event::JobExit {
                job_id,
                status,
                command,
            } => {
                self.println(format!(
                    "  {} {}: {} ({})",
                    style("job").dim(),
                    escape_controls(job_id),
                    escape_controls(status),
                    escape_controls(command)
                ));
            }
            Event::ModelResponse { tool_results } => {
                self.println(format!(
                    "  {}",
                    style(format!(
                        "↳ {} tool result(s) go back to the model",
                        tool_results.len()
                    ))
                    .dim()
                ));
            }
        }
    }

    fn start(&mut self, call_id: &str, tool: &str, label: Option<&str>, args: &Value) {
        let name = escape_controls(label.unwrap_or(tool));
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
            .map(|a| escape_controls(&cut(&a, 70)).into_owned())
            .unwrap_or_default();
        let title = if activity.is_empty() {
            format!("{}", style(name).bold())
        } else {
            format!("{}  {activity}", style(name).bold())
        };
        let bar = self.multi.as_ref().map(|multi| {
            let bar = multi.add(ProgressBar::new_spinner());
            bar.set_style(
                ProgressStyle::with_template("  {spinner:.cyan} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.set_message(title.clone());
            bar.enable_steady_tick(Duration::from_millis(80));
            bar
        });
        self.running
            .insert(call_id.to_owned(), Running { bar, title });
    }

    fn title(&self, call_id: &str) -> String {
        self.running
            .get(call_id)
            .map(|r| r.title.clone())
            .unwrap_or_else(|| escape_controls(call_id).into_owned())
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

fn diff_line(line: &str) -> console::StyledObject<&str> {
    if line.starts_with("+++") || line.starts_with("---") {
        style(line).bold()
    } else if line.starts_with('+') {
        style(line).green()
    } else if line.starts_with('-') {
        style(line).red()
    } else if line.starts_with("@@") {
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

fn progress_text(payload: &Value) -> String {
    let text = match payload {
        Value::String(s) => s.clone(),
        Value::Object(map) => map
            .get("text")
            .or_else(|| map.get("output"))
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| payload.to_string()),
        other => other.to_string(),
    };
    let last = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    escape_controls(&cut(last, 60)).into_owned()
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
    fn progress_text_is_escaped_after_it_is_cut() {
        let payload = serde_json::json!({"output": "step 1\nstep 2\u{1b}]0;x\u{7}"});
        assert_eq!(progress_text(&payload), "step 2\\e]0;x\\u{7}");
    }
}
