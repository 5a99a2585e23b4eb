//! The hooks' configuration: the `hooks` section of a Claude Code settings
//! file (`--hooks FILE`) and the `[hooks]` table of the policy TOML, which
//! have the same content.
//!
//! ```json
//! {"hooks": {"PreToolUse": [{"matcher": "Bash",
//!   "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 5}]}]}}
//! ```
//!
//! ```toml
//! [hooks]
//! fail_closed = true          # agentcore's: a hook that fails blocks
//! [[hooks.PreToolUse]]
//! matcher = "Bash"
//! [[hooks.PreToolUse.hooks]]
//! type = "command"
//! command = "./guard.sh"
//! timeout = 5
//! unconfined = false          # agentcore's: true runs it outside the sandbox
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use regex::Regex;
use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::limits::hooks::DEFAULT_HOOK_TIMEOUT;

/// The events agentcore runs hooks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HookEvent {
    /// Before the approval engine, in the gate: may deny, ask, allow or
    /// rewrite the arguments.
    PreToolUse,
    /// After a call that succeeded: may block its result or add context.
    PostToolUse,
    /// After a call whose tool failed: may add to what the model reads.
    PostToolUseFailure,
}

impl HookEvent {
    /// Every event, in the order a call meets them.
    pub const ALL: [HookEvent; 3] = [
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::PostToolUseFailure,
    ];

    /// The name Claude Code gives it (`hook_event_name`).
    pub const fn as_str(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::PostToolUseFailure => "PostToolUseFailure",
        }
    }

    /// The event of that name, if agentcore runs it.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.as_str() == name)
    }
}

impl fmt::Display for HookEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which tools a matcher group applies to, by their Claude Code names
/// (`Bash`, `Edit`, …): `*` or empty matches every tool; a name or names
/// joined by `|` (letters, digits, `_`) match exactly; anything else is a
/// regular expression searched in the name (`Notebook.*`, `mcp__.*`).
#[derive(Clone)]
pub struct Matcher {
    text: String,
    kind: MatcherKind,
}

#[derive(Clone)]
enum MatcherKind {
    All,
    Names(Vec<String>),
    Regex(Regex),
}

impl Matcher {
    /// Parses a matcher; an invalid regular expression is an error.
    pub fn new(text: &str) -> Result<Self, regex::Error> {
        let trimmed = text.trim();
        let kind = if trimmed.is_empty() || trimmed == "*" {
            MatcherKind::All
        } else if trimmed
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '|')
        {
            MatcherKind::Names(
                trimmed
                    .split('|')
                    .filter(|n| !n.is_empty())
                    .map(str::to_owned)
                    .collect(),
            )
        } else {
            MatcherKind::Regex(Regex::new(trimmed)?)
        };
        Ok(Self {
            text: text.to_owned(),
            kind,
        })
    }

    /// Whether the tool of this Claude Code name is matched.
    pub fn matches(&self, tool_name: &str) -> bool {
        match &self.kind {
            MatcherKind::All => true,
            MatcherKind::Names(names) => names.iter().any(|n| n == tool_name),
            MatcherKind::Regex(re) => re.is_match(tool_name),
        }
    }

    /// The matcher as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl Default for Matcher {
    fn default() -> Self {
        Self {
            text: String::new(),
            kind: MatcherKind::All,
        }
    }
}

impl fmt::Debug for Matcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Matcher({:?})", self.text)
    }
}

impl Serialize for Matcher {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Matcher {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Matcher::new(&text).map_err(|e| {
            de::Error::custom(format!(
                "matcher {text:?} is not a valid regular expression ({}); write tool names joined by | (\"Edit|Write\") or a valid regex",
                last_line(&e.to_string())
            ))
        })
    }
}

fn last_line(text: &str) -> &str {
    text.lines().last().unwrap_or(text).trim()
}

/// What a hook that fails (exits other than 0 or 2, times out, or prints
/// JSON that does not parse) does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnFailure {
    /// Claude Code's behaviour: a non-blocking error, the call goes on
    /// (unless `[hooks] fail_closed = true`).
    #[default]
    Continue,
    /// The call is blocked, and the result says so.
    Block,
}

/// One entry of a matcher group's `hooks`: a command hook, or a hook of a
/// type agentcore does not run (kept to name it in the notice).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawHook", into = "RawHook")]
pub enum HookEntry {
    /// `{"type": "command", "command": …}`.
    Command(CommandHook),
    /// Any other `type` (`prompt`, `agent`, …): ignored.
    Other(String),
}

/// A command hook: run with `bash -c` at the workspace root.
#[derive(Clone, Debug, PartialEq)]
pub struct CommandHook {
    /// The command, as written (also how results name the hook).
    pub command: String,
    /// How long it may run before its process group is killed.
    pub timeout: Duration,
    /// What its failure does (`"onFailure": "block"`).
    pub on_failure: OnFailure,
    /// `"unconfined": true`: the hook runs outside the session's sandbox,
    /// with the user's authority and the session's whole environment, as
    /// Claude Code runs hooks. By default (`false`) a hook runs confined by
    /// the session's sandbox, as a confined `bash` command does, whenever
    /// the session has one; only a hook that needs more (the network, a
    /// write outside the workspace) should say this, since whatever it
    /// runs from the workspace (a script, a formatter from
    /// `node_modules`, a `Makefile`) was possibly written by the model.
    pub unconfined: bool,
}

impl CommandHook {
    /// A hook running `command` with the default timeout, failing open.
    pub fn new(command: impl Into<String>) -> Self {
        Self {
            command: command.into(),
            timeout: DEFAULT_HOOK_TIMEOUT,
            on_failure: OnFailure::Continue,
            unconfined: false,
        }
    }

    /// This hook, run outside the session's sandbox (`"unconfined": true`).
    #[must_use]
    pub fn unconfined(mut self) -> Self {
        self.unconfined = true;
        self
    }
}

/// The serde shape of a hook entry.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct RawHook {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    command: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timeout: Option<f64>,
    #[serde(default, rename = "onFailure", skip_serializing_if = "Option::is_none")]
    on_failure: Option<OnFailure>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    unconfined: Option<bool>,
}

impl TryFrom<RawHook> for HookEntry {
    type Error = String;

    fn try_from(raw: RawHook) -> Result<Self, String> {
        if raw.kind != "command" {
            return Ok(HookEntry::Other(raw.kind));
        }
        let command = match raw.command {
            Some(c) if !c.trim().is_empty() => c,
            _ => return Err("a hook of type \"command\" needs a non-empty `command`".to_owned()),
        };
        let timeout = match raw.timeout {
            None => DEFAULT_HOOK_TIMEOUT,
            Some(t) if t.is_finite() && t > 0.0 && t <= 86_400.0 => Duration::from_secs_f64(t),
            Some(t) => {
                return Err(format!(
                    "hook timeout {t} is not a number of seconds between 0 and 86400"
                ));
            }
        };
        Ok(HookEntry::Command(CommandHook {
            command,
            timeout,
            on_failure: raw.on_failure.unwrap_or_default(),
            unconfined: raw.unconfined.unwrap_or(false),
        }))
    }
}

impl From<HookEntry> for RawHook {
    fn from(entry: HookEntry) -> Self {
        match entry {
            HookEntry::Command(hook) => RawHook {
                kind: "command".to_owned(),
                command: Some(hook.command),
                timeout: (hook.timeout != DEFAULT_HOOK_TIMEOUT)
                    .then_some(hook.timeout.as_secs_f64()),
                on_failure: (hook.on_failure == OnFailure::Block).then_some(OnFailure::Block),
                unconfined: hook.unconfined.then_some(true),
            },
            HookEntry::Other(kind) => RawHook {
                kind,
                command: None,
                timeout: None,
                on_failure: None,
                unconfined: None,
            },
        }
    }
}

/// A matcher and the hooks that run for the tools it matches.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct MatcherGroup {
    /// Which tools (absent, `""` or `"*"`: all).
    #[serde(default)]
    pub matcher: Matcher,
    /// The hooks.
    #[serde(default)]
    pub hooks: Vec<HookEntry>,
}

/// The hooks of a session: each event's matcher groups, and whether a
/// failing hook blocks.
///
/// ```
/// use agentcore::hooks::{HookConfig, HookEvent};
///
/// let config = HookConfig::from_settings_json(r#"{
///   "hooks": {"PreToolUse": [{"matcher": "Bash",
///     "hooks": [{"type": "command", "command": "./guard.sh"}]}]}
/// }"#).unwrap();
/// assert_eq!(config.matching(HookEvent::PreToolUse, "Bash").len(), 1);
/// assert!(config.matching(HookEvent::PreToolUse, "Edit").is_empty());
/// ```
#[derive(Clone, Debug, Default)]
pub struct HookConfig {
    /// A hook that fails (exits other than 0 or 2, times out, prints JSON
    /// that does not parse) blocks the call, as if each hook said
    /// `"onFailure": "block"`.
    pub fail_closed: bool,
    /// Event name → matcher groups, as written (events agentcore does not
    /// run are kept to be named in [`HookConfig::notice`]).
    pub events: BTreeMap<String, Vec<MatcherGroup>>,
}

/// Why a hooks settings file could not be used. The text names the file
/// and the place.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HookConfigError {
    /// The file could not be read.
    #[error("cannot read hooks settings file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// The file is not valid JSON, or its `hooks` section is not shaped as
    /// Claude Code's.
    #[error("invalid hooks settings{}: {message}", path.as_ref().map(|p| format!(" file {}", p.display())).unwrap_or_default())]
    Parse {
        /// The file, when read from one.
        path: Option<PathBuf>,
        /// What is wrong and where (line and column).
        message: String,
    },
}

/// The part of a Claude Code settings file agentcore reads.
#[derive(Deserialize)]
struct Settings {
    #[serde(default)]
    hooks: Option<HookConfig>,
    #[serde(default, rename = "disableAllHooks")]
    disable_all_hooks: bool,
}

impl HookConfig {
    /// The hooks of a Claude Code settings file's text (a JSON object
    /// whose other keys are ignored; `"disableAllHooks": true` gives
    /// none).
    pub fn from_settings_json(text: &str) -> Result<Self, HookConfigError> {
        let settings: Settings =
            serde_json::from_str(text).map_err(|e| HookConfigError::Parse {
                path: None,
                message: e.to_string(),
            })?;
        if settings.disable_all_hooks {
            return Ok(Self::default());
        }
        Ok(settings.hooks.unwrap_or_default())
    }

    /// Reads a Claude Code settings file (`.claude/settings.json`).
    pub fn load_settings(path: impl AsRef<Path>) -> Result<Self, HookConfigError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| HookConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::from_settings_json(&text).map_err(|e| match e {
            HookConfigError::Parse { message, .. } => HookConfigError::Parse {
                path: Some(path.to_owned()),
                message,
            },
            other => other,
        })
    }

    /// Adds `other`'s hooks after these; either's `fail_closed` holds.
    pub fn merge(&mut self, other: HookConfig) {
        self.fail_closed |= other.fail_closed;
        for (event, groups) in other.events {
            self.events.entry(event).or_default().extend(groups);
        }
    }

    /// True when no command hook of an event agentcore runs is configured.
    pub fn is_empty(&self) -> bool {
        !HookEvent::ALL.into_iter().any(|event| {
            self.events.get(event.as_str()).is_some_and(|groups| {
                groups
                    .iter()
                    .any(|g| g.hooks.iter().any(|h| matches!(h, HookEntry::Command(_))))
            })
        })
    }

    /// The command hooks of `event` whose matcher matches the tool of this
    /// Claude Code name, in the order written; the same command matched
    /// twice runs once (as in Claude Code), with the first one's settings.
    pub fn matching(&self, event: HookEvent, tool_name: &str) -> Vec<CommandHook> {
        let mut hooks: Vec<CommandHook> = Vec::new();
        for hook in self
            .events
            .get(event.as_str())
            .into_iter()
            .flatten()
            .filter(|group| group.matcher.matches(tool_name))
            .flat_map(|group| &group.hooks)
            .filter_map(|entry| match entry {
                HookEntry::Command(hook) => Some(hook),
                HookEntry::Other(_) => None,
            })
        {
            if !hooks.iter().any(|h| h.command == hook.command) {
                hooks.push(hook.clone());
            }
        }
        hooks
    }

    /// Every command hook of the events agentcore runs.
    pub fn commands(&self) -> impl Iterator<Item = &CommandHook> {
        HookEvent::ALL
            .into_iter()
            .filter_map(|event| self.events.get(event.as_str()))
            .flatten()
            .flat_map(|group| &group.hooks)
            .filter_map(|entry| match entry {
                HookEntry::Command(hook) => Some(hook),
                HookEntry::Other(_) => None,
            })
    }

    /// The one notice to print (on stderr) about what is configured but
    /// not run: other events and hook types. `None` when all runs.
    pub fn notice(&self) -> Option<String> {
        let events: Vec<&str> = self
            .events
            .keys()
            .filter(|name| HookEvent::from_name(name).is_none())
            .map(String::as_str)
            .collect();
        let mut types: Vec<&str> = self
            .events
            .iter()
            .filter(|(name, _)| HookEvent::from_name(name).is_some())
            .flat_map(|(_, groups)| groups)
            .flat_map(|g| &g.hooks)
            .filter_map(|h| match h {
                HookEntry::Other(kind) => Some(kind.as_str()),
                HookEntry::Command(_) => None,
            })
            .collect();
        types.sort_unstable();
        types.dedup();
        if events.is_empty() && types.is_empty() {
            return None;
        }
        let mut parts = Vec::new();
        if !events.is_empty() {
            parts.push(format!("the events {}", events.join(", ")));
        }
        if !types.is_empty() {
            let quoted: Vec<String> = types.iter().map(|t| format!("{t:?}")).collect();
            parts.push(format!("hooks of type {}", quoted.join(", ")));
        }
        Some(format!(
            "hooks: ignoring {}; agentcore runs command hooks of PreToolUse, PostToolUse and PostToolUseFailure only",
            parts.join(" and ")
        ))
    }
}

impl Serialize for HookConfig {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        if self.fail_closed {
            map.serialize_entry("fail_closed", &true)?;
        }
        for (event, groups) in &self.events {
            map.serialize_entry(event, groups)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for HookConfig {
    // By hand, entry by entry, so that the parser's error points at the
    // place (a flattened map would be buffered first).
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ConfigVisitor;

        impl<'de> Visitor<'de> for ConfigVisitor {
            type Value = HookConfig;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map of hook event names (PreToolUse, …) to lists of matcher groups")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<HookConfig, A::Error> {
                let mut config = HookConfig::default();
                while let Some(key) = map.next_key::<String>()? {
                    if key == "fail_closed" {
                        config.fail_closed = map.next_value()?;
                        continue;
                    }
                    let groups: Vec<MatcherGroup> = map.next_value()?;
                    config.events.entry(key).or_default().extend(groups);
                }
                Ok(config)
            }
        }

        d.deserialize_map(ConfigVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matchers_match_names_exactly_and_regexes_by_search() {
        let m = Matcher::new("Edit|Write").unwrap();
        assert!(m.matches("Edit") && m.matches("Write"));
        assert!(!m.matches("MultiEdit"));
        let m = Matcher::new("Notebook.*").unwrap();
        assert!(m.matches("NotebookEdit"));
        let m = Matcher::new("^(Multi)?Edit$").unwrap();
        assert!(m.matches("MultiEdit") && m.matches("Edit") && !m.matches("Edited"));
        assert!(Matcher::new("").unwrap().matches("anything"));
        assert!(Matcher::new("*").unwrap().matches("anything"));
        assert!(Matcher::new("(").is_err());
    }

    #[test]
    fn a_settings_file_that_does_not_parse_names_the_place() {
        let err = HookConfig::from_settings_json("{\"hooks\": {\"PreToolUse\": [\n{\"hooks\": [{\"type\": \"command\", \"command\": 5}]}]}}")
            .unwrap_err();
        assert!(err.to_string().contains("line 2"), "{err}");
        let err = HookConfig::from_settings_json(
            r#"{"hooks": {"PreToolUse": [{"matcher": "(", "hooks": []}]}}"#,
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("not a valid regular expression"),
            "{err}"
        );
        let err = HookConfig::from_settings_json(
            r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "command"}]}]}}"#,
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("needs a non-empty `command`"),
            "{err}"
        );
    }

    #[test]
    fn the_same_command_matched_twice_runs_once() {
        let config = HookConfig::from_settings_json(
            r#"{"hooks": {"PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "a", "timeout": 3}]},
                {"matcher": "*", "hooks": [{"type": "command", "command": "a"}, {"type": "command", "command": "b"}]}
            ]}}"#,
        )
        .unwrap();
        let hooks = config.matching(HookEvent::PreToolUse, "Bash");
        let commands: Vec<&str> = hooks.iter().map(|h| h.command.as_str()).collect();
        assert_eq!(commands, ["a", "b"]);
        assert_eq!(hooks[0].timeout, Duration::from_secs(3));
    }

    #[test]
    fn other_events_and_types_are_named_in_one_notice() {
        let config = HookConfig::from_settings_json(
            r#"{"hooks": {
                "Stop": [{"hooks": [{"type": "command", "command": "x"}]}],
                "PreToolUse": [{"hooks": [{"type": "prompt", "prompt": "ok?"}]}]
            }}"#,
        )
        .unwrap();
        assert!(config.is_empty());
        assert_eq!(
            config.notice().unwrap(),
            "hooks: ignoring the events Stop and hooks of type \"prompt\"; agentcore runs command hooks of PreToolUse, PostToolUse and PostToolUseFailure only"
        );
    }

    #[test]
    fn the_toml_table_has_the_same_content() {
        #[derive(Deserialize)]
        struct Doc {
            hooks: HookConfig,
        }
        let doc: Doc = toml::from_str(
            r#"
            [hooks]
            fail_closed = true
            [[hooks.PreToolUse]]
            matcher = "Bash"
            [[hooks.PreToolUse.hooks]]
            type = "command"
            command = "./guard.sh"
            timeout = 5
            onFailure = "block"
            "#,
        )
        .unwrap();
        assert!(doc.hooks.fail_closed);
        let hooks = doc.hooks.matching(HookEvent::PreToolUse, "Bash");
        assert_eq!(hooks.len(), 1);
        assert_eq!(hooks[0].timeout, Duration::from_secs(5));
        assert_eq!(hooks[0].on_failure, OnFailure::Block);
    }
}
