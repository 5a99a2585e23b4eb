//! `--format pretty`: a line per call with label, activity, outcome and
//! duration, coloured diffs, and a spinner while a call runs.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Duration;

use agentcore_stages::{Content, Event, Outcome, ToolRegistry, UpdateKind};
use console::{Style, style};
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use serde_json::Value;

use crate::session::Session;

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
            session.workspace().root().display(),
            session.approval().mode(),
        ));
    }

    pub(crate) fn user(&mut self, text: &str) {
        self.println("");
        self.println(format!(
            "{} {}",
            style("›").cyan().bold(),
            style(text).bold()
        ));
    }

    pub(crate) fn note(&mut self, text: &str) {
        self.println("");
        self.println(format!("{}", style(format!("# {text}")).dim().italic()));
    }

    pub(crate) fn input_error(&mut self, line: u64, message: &str) {
        self.println(format!(
            "{} line {line}: {message}",
            style("input error").red().bold()
        ));
    }

    pub(crate) fn event(&mut self, event: &Event) {
        match event {
            Event::ToolExecStart {
                tool_id,
                tool,
                label,
                args,
            } => self.start(tool_id, tool, label.as_deref(), args),
            Event::ToolExecUpdate {
                tool_id,
                kind: UpdateKind::Preview,
                payload,
            } => {
                let title = self.title(tool_id);
                self.println(format!("  {} {title}", style("diff").dim()));
                if let Some(diff) = payload.as_str() {
                    for line in diff.lines() {
                        self.println(format!("    {}", diff_line(line)));
                    }
                }
            }
            Event::ToolExecUpdate {
                tool_id,
                kind: UpdateKind::Progress,
                payload,
            } => {
                if let Some(Running {
                    bar: Some(bar),
                    title,
                }) = self.running.get(tool_id)
                {
                    let last = progress_text(payload);
                    bar.set_message(format!("{title}  {}", style(last).dim()));
                }
            }
            Event::ToolExecEnd {
                tool_id,
                outcome,
                content,
                duration_ms,
                coercions,
                ..
            } => {
                let title = self.title(tool_id);
                if let Some(Running { bar: Some(bar), .. }) = self.running.remove(tool_id) {
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
                        c.path,
                        c.from,
                        c.to
                    ));
                }
                let text = content_text(content);
                let shown: Vec<&str> = text
                    .lines()
                    .take(if outcome.is_error() { 4 } else { 2 })
                    .collect();
                for line in shown {
                    let line = cut(line, 110);
                    let styled = if outcome.is_error() {
                        style(line).yellow()
                    } else {
                        style(line).dim()
                    };
                    self.println(format!("      {styled}"));
                }
            }
            Event::MessageStart { .. } | Event::MessageEnd { .. } => {}
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

    fn start(&mut self, tool_id: &str, tool: &str, label: Option<&str>, args: &Value) {
        let name = label.unwrap_or(tool);
        let parsed = match args {
            Value::String(text) => serde_json::from_str(text).unwrap_or(Value::Null),
            other => other.clone(),
        };
        let activity = self
            .registry
            .get(tool)
            .and_then(|t| t.tool().activity(&parsed))
            .map(|a| cut(&a, 70))
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
            .insert(tool_id.to_owned(), Running { bar, title });
    }

    fn title(&self, tool_id: &str) -> String {
        self.running
            .get(tool_id)
            .map(|r| r.title.clone())
            .unwrap_or_else(|| tool_id.to_owned())
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
    cut(last, 60)
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
