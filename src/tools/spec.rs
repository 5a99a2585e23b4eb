//! What identifies a built-in tool, in one place: its [`ToolSpec`] (the
//! name the model calls, the label people see, the name Claude Code's
//! hooks know it by, and which arguments name a file or folder).
//!
//! Each tool's file holds its `SPEC`; the tool's `name()` and `label()`
//! return it, the tool sets find tools by it
//! ([`Builtin::spec`](super::set::Builtin::spec)) and the hooks read the
//! Claude Code name and the path fields from it. The path fields are
//! written with [`path_fields!`](crate::path_fields), which names fields of
//! the tool's `Args` type: a field that is renamed or removed stops the
//! build instead of drifting.
//!
//! Per-call behaviour (whether a call is read-only, how it is previewed,
//! what it does) stays in the tool's trait implementation.

/// A built-in tool's identity. Built with [`ToolSpec::new`] and the
/// `const` methods after it.
///
/// ```
/// use agentcore::tools::{read, set::Builtin};
///
/// assert_eq!(read::SPEC.name, "read");
/// assert_eq!(read::SPEC.claude_code, Some("Read"));
/// assert_eq!(read::SPEC.path_fields, ["file_path"]);
/// assert_eq!(Builtin::Read.spec(), &read::SPEC);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolSpec {
    /// The name the model calls it by.
    pub name: &'static str,
    /// A short human-readable label (`"Read File"`), for UIs.
    pub label: &'static str,
    /// The name Claude Code's hooks match (`"Bash"`, `"MultiEdit"`), for a
    /// tool Claude Code has; `None` otherwise (the hooks see `name`).
    pub claude_code: Option<&'static str>,
    /// The arguments that name a file or folder (made absolute for hooks,
    /// as Claude Code's are).
    pub path_fields: &'static [&'static str],
}

impl ToolSpec {
    /// A tool called `name`, shown as `label`, with no Claude Code name
    /// and no path arguments.
    pub const fn new(name: &'static str, label: &'static str) -> Self {
        Self {
            name,
            label,
            claude_code: None,
            path_fields: &[],
        }
    }

    /// The same tool, known to Claude Code's hooks as `name`.
    pub const fn claude_code(self, name: &'static str) -> Self {
        Self {
            claude_code: Some(name),
            ..self
        }
    }

    /// The same tool, whose arguments `fields` name a file or folder
    /// (write them with [`path_fields!`](crate::path_fields)).
    pub const fn path_fields(self, fields: &'static [&'static str]) -> Self {
        Self {
            path_fields: fields,
            ..self
        }
    }
}

/// The names of fields of an `Args` type that hold a path, checked by the
/// compiler: `path_fields!(ReadArgs: file_path)` is `&["file_path"]`, and
/// stops the build if `ReadArgs` has no field `file_path`. (That the field
/// is a string in the schema, under that name, is a test's to check:
/// `session::tests::every_spec_matches_its_tool`.)
///
/// ```
/// #[derive(serde::Deserialize)]
/// struct Args { file_path: String, limit: u32 }
///
/// const FIELDS: &[&str] = agentcore::path_fields!(Args: file_path);
/// assert_eq!(FIELDS, ["file_path"]);
/// ```
///
/// A field that does not exist does not compile:
///
/// ```compile_fail
/// struct Args { file_path: String }
/// const FIELDS: &[&str] = agentcore::path_fields!(Args: path);
/// ```
#[macro_export]
macro_rules! path_fields {
    ($args:ty: $($field:ident),* $(,)?) => {{
        // Never called: it only makes the compiler check each field.
        const _: fn(&$args) = |args| {
            $(let _ = &args.$field;)*
        };
        &[$(::core::stringify!($field)),*]
    }};
}

// Within the crate it is named by its module, so the layer check sees
// where it comes from.
pub(crate) use path_fields;
