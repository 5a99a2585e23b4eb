//! How the seven built-in tools describe their calls (arguments as in
//! `tools.md`).
//!
//! | tool | capability | paths / command |
//! |---|---|---|
//! | read | read | `file_path` |
//! | glob | read | `path` (default the root `.`) |
//! | grep | read | `path` (default the root `.`) |
//! | ls | read | `path` |
//! | edit | write | `file_path` |
//! | write | write | `file_path` |
//! | bash | exec | `command` |
//!
//! The arguments have passed the schema, but these functions still never
//! panic on a missing or mistyped field: a missing path is reported as the
//! root for searches and as nothing for the others.

use serde_json::Value;

use super::permissions::Access;

/// The describing function of built-in tool `name`.
pub(crate) fn describer(name: &str) -> Option<fn(&Value) -> Access> {
    Some(match name {
        "read" => read,
        "glob" => glob,
        "grep" => grep,
        "ls" => ls,
        "edit" => edit,
        "write" => write,
        "bash" => bash,
        _ => return None,
    })
}

fn string_field(args: &Value, key: &str) -> Option<String> {
    args.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// `read{file_path, offset, limit}`: reads `file_path`.
pub fn read(args: &Value) -> Access {
    Access::read(string_field(args, "file_path"))
}

/// `glob{pattern, path}`: a search rooted at `path` (default the root).
pub fn glob(args: &Value) -> Access {
    Access::read([string_field(args, "path").unwrap_or_else(|| ".".to_owned())])
}

/// `grep{pattern, path, glob, …}`: a search rooted at `path` (default the
/// root).
pub fn grep(args: &Value) -> Access {
    Access::read([string_field(args, "path").unwrap_or_else(|| ".".to_owned())])
}

/// `ls{path, ignore}`: lists `path`.
pub fn ls(args: &Value) -> Access {
    Access::read([string_field(args, "path").unwrap_or_else(|| ".".to_owned())])
}

/// `edit{file_path, old_string, new_string, replace_all}`: writes
/// `file_path`.
pub fn edit(args: &Value) -> Access {
    Access::write(string_field(args, "file_path"))
}

/// `write{file_path, content}`: writes `file_path`.
pub fn write(args: &Value) -> Access {
    Access::write(string_field(args, "file_path"))
}

/// `bash{command, timeout, description}`: runs `command`.
pub fn bash(args: &Value) -> Access {
    Access::command(string_field(args, "command").unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::approval::Capability;

    #[test]
    fn every_builtin_is_described() {
        for name in ["read", "glob", "grep", "ls", "edit", "write", "bash"] {
            assert!(describer(name).is_some(), "{name}");
        }
        assert!(describer("fetch").is_none());
    }

    #[test]
    fn searches_default_to_the_root() {
        let access = grep(&json!({"pattern": "fn"}));
        assert_eq!(access.capability, Capability::Read);
        assert_eq!(access.paths, ["."]);
    }

    #[test]
    fn mistyped_fields_do_not_panic() {
        assert!(read(&json!({"file_path": 3})).paths.is_empty());
        assert_eq!(bash(&json!(null)).command.as_deref(), Some(""));
    }
}
