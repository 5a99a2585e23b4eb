//! What a hook reads on stdin: the call as Claude Code describes it, with
//! Claude Code's tool names and absolute file paths.

use std::borrow::Cow;
use std::path::{Component, Path, PathBuf};

use serde_json::{Map, Value};

use super::config::HookEvent;
use crate::approval::Mode;
use crate::tools::set::Builtin;

/// The name a hook sees for one of our tools: Claude Code's for the
/// built-in tools (`bash` → `Bash`, `multi_edit` → `MultiEdit`, …), the
/// tool's own name for every other tool (custom, MCP).
///
/// ```
/// use agentcore::hooks::claude_tool_name;
/// assert_eq!(claude_tool_name("bash"), "Bash");
/// assert_eq!(claude_tool_name("kill_shell"), "KillShell");
/// assert_eq!(claude_tool_name("mcp__github__search"), "mcp__github__search");
/// ```
pub fn claude_tool_name(tool: &str) -> Cow<'_, str> {
    match Builtin::from_name(tool).and_then(|b| b.spec().claude_code) {
        Some(name) => Cow::Borrowed(name),
        None => Cow::Borrowed(tool),
    }
}

/// The arguments of the built-in tools that name a file or folder, made
/// absolute for hooks (as Claude Code's are): the tool's spec.
fn path_fields(tool: &str) -> &'static [&'static str] {
    Builtin::from_name(tool).map_or(&[], |b| b.spec().path_fields)
}

/// `tool_input`: the coerced arguments, with the built-in tools' file paths
/// made absolute against `root` and every symbolic link on them followed
/// to its final target, dangling ones included: a hook judges the file the
/// tool will act on, as the approval engine does (see [`crate::fs::judged`]),
/// not a link's name.
pub fn tool_input(tool: &str, args: &Value, root: &Path) -> Value {
    let mut input = args.clone();
    if let Value::Object(map) = &mut input {
        for field in path_fields(tool) {
            if let Some(Value::String(path)) = map.get_mut(*field) {
                let absolute = target(path, root);
                *path = absolute.to_string_lossy().into_owned();
            }
        }
    }
    input
}

/// Where `given` leads (absolute, links followed); the lexical form when it
/// cannot be resolved (the tool refuses such a path).
fn target(given: &str, root: &Path) -> PathBuf {
    let lexical = absolute(Path::new(given), root);
    crate::fs::judged::final_target(&lexical).unwrap_or(lexical)
}

/// The paths a hook was shown for a call (as [`tool_input`] gives them)
/// that are not where the approval engine found them to lead when it
/// judged the call: a link on them changed in between. Each is given as
/// the model wrote it.
pub(crate) fn moved_since_shown(
    tool: &str,
    args: &Value,
    shown: &Value,
    judged: &crate::fs::judged::JudgedPaths,
) -> Vec<String> {
    let mut moved = Vec::new();
    for field in path_fields(tool) {
        let (Some(Value::String(given)), Some(Value::String(seen))) =
            (args.get(*field), shown.get(*field))
        else {
            continue;
        };
        let Some(judgement) = judged.given(given) else {
            continue;
        };
        if judgement.target.as_deref() != Some(Path::new(seen)) {
            moved.push(given.clone());
        }
    }
    moved
}

/// `path` against `root`, `.` and `..` resolved by the letter.
pub(crate) fn absolute(path: &Path, root: &Path) -> PathBuf {
    let joined = root.join(path);
    let mut out = PathBuf::new();
    for part in joined.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Claude Code's name of the approval mode (`permission_mode`).
pub(crate) fn permission_mode(mode: Mode) -> &'static str {
    match mode {
        Mode::Default => "default",
        Mode::AcceptEdits => "acceptEdits",
        Mode::Plan => "plan",
        Mode::Bypass => "bypassPermissions",
    }
}

/// The fields every hook of a call gets.
pub(crate) struct HookInput<'a> {
    pub(crate) session_id: &'a str,
    pub(crate) cwd: &'a Path,
    pub(crate) permission_mode: &'a str,
    pub(crate) tool: &'a str,
    pub(crate) tool_input: &'a Value,
    pub(crate) tool_use_id: &'a str,
}

impl HookInput<'_> {
    /// The stdin object for `event`, with `extra` fields (`tool_response`,
    /// `error`).
    pub(crate) fn to_json(&self, event: HookEvent, extra: Map<String, Value>) -> Value {
        let mut map = Map::new();
        map.insert("session_id".into(), self.session_id.into());
        map.insert("transcript_path".into(), Value::Null);
        map.insert("cwd".into(), self.cwd.to_string_lossy().into_owned().into());
        map.insert("hook_event_name".into(), event.as_str().into());
        map.insert("permission_mode".into(), self.permission_mode.into());
        map.insert(
            "tool_name".into(),
            claude_tool_name(self.tool).into_owned().into(),
        );
        map.insert("tool_input".into(), self.tool_input.clone());
        map.insert("tool_use_id".into(), self.tool_use_id.into());
        map.extend(extra);
        Value::Object(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn file_paths_are_made_absolute_and_other_arguments_kept() {
        let root = Path::new("/work/ws");
        assert_eq!(
            tool_input(
                "edit",
                &json!({"file_path": "src/../a.rs", "old_string": "x"}),
                root
            ),
            json!({"file_path": "/work/ws/a.rs", "old_string": "x"})
        );
        assert_eq!(
            tool_input("read", &json!({"file_path": "/etc/hosts"}), root),
            json!({"file_path": "/etc/hosts"})
        );
        assert_eq!(
            tool_input("bash", &json!({"command": "ls src"}), root),
            json!({"command": "ls src"})
        );
        assert_eq!(
            tool_input("custom", &json!({"path": "x"}), root),
            json!({"path": "x"})
        );
    }
}
