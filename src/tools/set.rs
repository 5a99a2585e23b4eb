//! Which built-in tools a session registers, and so which tools the model
//! sees: a [`ToolSet`], chosen by the harness ([`SessionConfig::tools`])
//! or on the command line (`--tools read,grep,glob,ls,edit,bash`).
//!
//! [`SessionConfig::tools`]: crate::session::SessionConfig::tools
//!
//! ```
//! use agentcore::tools::set::{Builtin, ToolSet};
//!
//! let set: ToolSet = "read, ls,edit".parse().unwrap();
//! assert_eq!(set.to_string(), "read,ls,edit");
//! assert!(!set.contains(Builtin::Bash));
//! assert!(ToolSet::default().contains(Builtin::MultiEdit));
//! assert!(!ToolSet::default().contains(Builtin::ApplyPatch));
//! assert!(!ToolSet::default().contains(Builtin::EditLines));
//! let more: ToolSet = "default,edit_lines".parse().unwrap();
//! assert!(more.contains(Builtin::EditLines) && more.contains(Builtin::Edit));
//! assert!(!ToolSet::default().contains(Builtin::Rewind));
//! let err = "read,cat".parse::<ToolSet>().unwrap_err();
//! assert!(err.to_string().starts_with("unknown tool \"cat\""));
//! ```

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use super::spec::ToolSpec;

/// A built-in tool, by the name the model calls it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Builtin {
    /// `read`.
    Read,
    /// `glob`.
    Glob,
    /// `grep`.
    Grep,
    /// `ls`.
    Ls,
    /// `edit`.
    Edit,
    /// `multi_edit`.
    MultiEdit,
    /// `write`.
    Write,
    /// `apply_patch` (offered only on request).
    ApplyPatch,
    /// `edit_lines` (offered only on request; `read` then shows each
    /// line's anchor).
    EditLines,
    /// `bash`.
    Bash,
    /// `bash_output` (reads bash's background jobs; needs `bash`).
    BashOutput,
    /// `kill_shell` (stops bash's background jobs; needs `bash`).
    KillShell,
    /// `write_stdin` (types into bash's terminal sessions; needs `bash`).
    WriteStdin,
    /// `checkpoints` (lists the session's checkpoints; offered only on
    /// request, in a session with checkpoints on).
    Checkpoints,
    /// `rewind` (puts files back to a checkpoint; offered only on request,
    /// in a session with checkpoints on).
    Rewind,
}

impl Builtin {
    /// Every built-in tool, in the order `--tools` documents them.
    pub const ALL: [Builtin; 15] = [
        Builtin::Read,
        Builtin::Glob,
        Builtin::Grep,
        Builtin::Ls,
        Builtin::Edit,
        Builtin::MultiEdit,
        Builtin::Write,
        Builtin::ApplyPatch,
        Builtin::EditLines,
        Builtin::Bash,
        Builtin::BashOutput,
        Builtin::KillShell,
        Builtin::WriteStdin,
        Builtin::Checkpoints,
        Builtin::Rewind,
    ];

    /// What identifies the tool outside its own file: its name, label,
    /// the name Claude Code's hooks know it by, and which of its arguments
    /// name a file or folder. Each tool's file holds its own
    /// ([`ToolSpec`]); the tool sets and the hooks read it here
    /// (`session::tests::every_spec_matches_its_tool` checks it against
    /// each registered tool's name, label and schema).
    pub const fn spec(self) -> &'static ToolSpec {
        use super::{
            apply_patch, bash, checkpoints, edit, edit_lines, glob, grep, ls, read, write,
        };
        match self {
            Builtin::Read => &read::SPEC,
            Builtin::Glob => &glob::SPEC,
            Builtin::Grep => &grep::SPEC,
            Builtin::Ls => &ls::SPEC,
            Builtin::Edit => &edit::SPEC,
            Builtin::MultiEdit => &edit::multi_edit::SPEC,
            Builtin::Write => &write::SPEC,
            Builtin::ApplyPatch => &apply_patch::SPEC,
            Builtin::EditLines => &edit_lines::SPEC,
            Builtin::Bash => &bash::SPEC,
            Builtin::BashOutput => &bash::bash_output::SPEC,
            Builtin::KillShell => &bash::kill_shell::SPEC,
            Builtin::WriteStdin => &bash::write_stdin::SPEC,
            Builtin::Checkpoints => &checkpoints::SPEC,
            Builtin::Rewind => &checkpoints::rewind::SPEC,
        }
    }

    /// The tool's name, as the model calls it.
    pub const fn name(self) -> &'static str {
        self.spec().name
    }

    /// The tool of that name, if it is a built-in one.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|b| b.name() == name)
    }

    /// Whether a session registers it when nothing is chosen: not
    /// `apply_patch` (models trained on it use it instead of `edit`), nor
    /// `edit_lines` (it puts an anchor beside every line `read` shows,
    /// which costs tokens a model that edits by quoting does not need),
    /// nor `checkpoints` and `rewind` (a model should not undo the user's
    /// work unasked).
    fn by_default(self) -> bool {
        !matches!(
            self,
            Builtin::ApplyPatch | Builtin::EditLines | Builtin::Checkpoints | Builtin::Rewind
        )
    }

    /// Whether it works only in a session with checkpoints on.
    pub const fn needs_checkpoints(self) -> bool {
        matches!(self, Builtin::Checkpoints | Builtin::Rewind)
    }

    /// The tool it works with, which must be in the set too.
    fn needs(self) -> Option<Builtin> {
        match self {
            Builtin::BashOutput | Builtin::KillShell | Builtin::WriteStdin => Some(Builtin::Bash),
            _ => None,
        }
    }
}

impl fmt::Display for Builtin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A choice of built-in tools: at least one, each tool's companions
/// included. The default is every built-in tool but `apply_patch`,
/// `edit_lines`, `checkpoints` and `rewind`, which are offered on request
/// (models trained on `apply_patch` use it instead of `edit`;
/// `edit_lines` is for models that fail string edits; a model should not
/// undo the user's work unasked).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolSet {
    /// In the order first named.
    tools: Vec<Builtin>,
}

impl Default for ToolSet {
    fn default() -> Self {
        Self {
            tools: Builtin::ALL
                .into_iter()
                .filter(|b| b.by_default())
                .collect(),
        }
    }
}

/// Why a choice of tools cannot be used. `Display` says how to fix it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolSetError {
    /// A name that is no built-in tool.
    #[error("unknown tool \"{0}\"; the built-in tools are {names}", names = all_names())]
    Unknown(String),
    /// No tool at all.
    #[error("no tools chosen; name at least one of {names}", names = all_names())]
    Empty,
    /// A tool without the tool it works with.
    #[error("{0} works only beside {1}: add {1} to the tools, or leave {0} out")]
    Needs(Builtin, Builtin),
}

fn all_names() -> String {
    Builtin::ALL.map(Builtin::name).join(", ")
}

impl ToolSet {
    /// The tools named, in that order (repeats ignored); refused when
    /// empty or when a tool's companion is missing.
    pub fn new(tools: impl IntoIterator<Item = Builtin>) -> Result<Self, ToolSetError> {
        let mut seen = BTreeSet::new();
        let tools: Vec<Builtin> = tools.into_iter().filter(|b| seen.insert(*b)).collect();
        if tools.is_empty() {
            return Err(ToolSetError::Empty);
        }
        for tool in &tools {
            if let Some(needed) = tool.needs()
                && !seen.contains(&needed)
            {
                return Err(ToolSetError::Needs(*tool, needed));
            }
        }
        Ok(Self { tools })
    }

    /// Whether `tool` is chosen.
    pub fn contains(&self, tool: Builtin) -> bool {
        self.tools.contains(&tool)
    }

    /// The chosen tools, in the order first named.
    pub fn iter(&self) -> impl Iterator<Item = Builtin> + '_ {
        self.tools.iter().copied()
    }
}

/// A comma-separated list of names, as `--tools` takes it (spaces around
/// names and empty items are ignored); `default` stands for the default
/// tools, so `default,edit_lines` adds one to them.
impl FromStr for ToolSet {
    type Err = ToolSetError;

    fn from_str(s: &str) -> Result<Self, ToolSetError> {
        let mut tools = Vec::new();
        for name in s.split(',').map(str::trim).filter(|name| !name.is_empty()) {
            if name == DEFAULT_NAME {
                tools.extend(ToolSet::default().iter());
                continue;
            }
            tools.push(Builtin::from_name(name).ok_or_else(|| ToolSetError::Unknown(name.into()))?);
        }
        Self::new(tools)
    }
}

/// The name that stands for the default tools in a list of names.
const DEFAULT_NAME: &str = "default";

/// The names, comma-separated: what [`FromStr`] reads back.
impl fmt::Display for ToolSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, tool) in self.tools.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            f.write_str(tool.name())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back() {
        for tool in Builtin::ALL {
            assert_eq!(Builtin::from_name(tool.name()), Some(tool));
        }
        let all: ToolSet = all_names().parse().unwrap();
        assert_eq!(all.iter().collect::<Vec<_>>(), Builtin::ALL);
        assert_eq!(all.to_string().parse::<ToolSet>().unwrap(), all);
    }

    #[test]
    fn bad_choices_say_how_to_fix_them() {
        let err = "read,Read".parse::<ToolSet>().unwrap_err();
        assert_eq!(err, ToolSetError::Unknown("Read".into()));
        assert!(err.to_string().ends_with(&all_names()), "{err}");
        assert_eq!(" , ".parse::<ToolSet>(), Err(ToolSetError::Empty));
        assert_eq!(
            "read,kill_shell"
                .parse::<ToolSet>()
                .unwrap_err()
                .to_string(),
            "kill_shell works only beside bash: add bash to the tools, or leave kill_shell out"
        );
    }

    #[test]
    fn default_stands_for_the_default_tools() {
        let set: ToolSet = "default, edit_lines".parse().unwrap();
        let mut expected: Vec<Builtin> = ToolSet::default().iter().collect();
        expected.push(Builtin::EditLines);
        assert_eq!(set.iter().collect::<Vec<_>>(), expected);
        let set: ToolSet = "apply_patch,default".parse().unwrap();
        assert_eq!(set.iter().next(), Some(Builtin::ApplyPatch));
        assert_eq!(set.iter().count(), ToolSet::default().iter().count() + 1);
        assert_eq!("default".parse::<ToolSet>().unwrap(), ToolSet::default());
    }

    #[test]
    fn repeats_are_ignored() {
        let set: ToolSet = "ls,read,ls".parse().unwrap();
        assert_eq!(set.to_string(), "ls,read");
    }
}
