//! The arguments: [`GrepArgs`] as the model writes them, and what they
//! are read into: the lines of context, the glob's overrides and the
//! ripgrep file type.

use std::path::Path;

use agentcore_stages::ToolError;
use ignore::overrides::OverrideBuilder;
use ignore::types::TypesBuilder;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::fs::walk::Filters;
use crate::tools::schema::builtin_args;

/// The default `head_limit` as a literal, for the texts that name it.
macro_rules! default_head_limit {
    () => {
        250
    };
}

/// Output lines shown when the model gives no `head_limit`.
pub const DEFAULT_HEAD_LIMIT: usize = default_head_limit!();

/// Which output `grep` gives.
// The variants are described in `GrepArgs::output_mode`'s doc, which the
// model reads: a doc comment per variant would turn the schema's plain
// `enum` into a `oneOf`.
#[allow(missing_docs)]
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum OutputMode {
    #[default]
    FilesWithMatches,
    Content,
    Count,
}

/// The arguments of `grep`. The field docs are the descriptions the model
/// reads; the names of the flags are ripgrep's.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(transform = builtin_args)]
pub struct GrepArgs {
    /// The regular expression to search for (ripgrep syntax).
    pub pattern: String,
    /// The file or directory to search, absolute or relative to the workspace root. Omit it to search the whole workspace.
    pub path: Option<String>,
    /// Only search files matching this glob, e.g. "*.js" or "src/**/*.{ts,tsx}"; a leading ! excludes instead.
    pub glob: Option<String>,
    /// Only search files of this ripgrep file type, e.g. "rust", "py", "js" (a file extension such as "rs" also works). More efficient than glob for standard types.
    #[serde(rename = "type")]
    pub file_type: Option<String>,
    /// "files_with_matches" (default): matching file paths; "content": matching lines; "count": matching lines per file.
    #[serde(default)]
    pub output_mode: OutputMode,
    /// Case-insensitive search.
    #[serde(rename = "-i")]
    pub case_insensitive: Option<bool>,
    /// Show line numbers in content mode (default true).
    #[serde(rename = "-n")]
    pub line_numbers: Option<bool>,
    /// Lines of context after each match (content mode).
    #[serde(rename = "-A")]
    pub after: Option<usize>,
    /// Lines of context before each match (content mode).
    #[serde(rename = "-B")]
    pub before: Option<usize>,
    /// Lines of context before and after each match (content mode).
    #[serde(rename = "-C")]
    pub context: Option<usize>,
    /// Let the pattern span lines; `.` then matches newlines too (default false).
    pub multiline: Option<bool>,
    #[doc = concat!("Show at most this many output lines (paths, content lines or count lines); default ", default_head_limit!(), ", 0 for no limit.")]
    pub head_limit: Option<usize>,
    /// Skip this many output lines first, to page through long results (default 0).
    pub offset: Option<usize>,
}

impl GrepArgs {
    /// The lines of context before and after each match: in content mode
    /// only, `-B` and `-A` over `-C`.
    pub(crate) fn context_lines(&self) -> (usize, usize) {
        match self.output_mode {
            OutputMode::Content => (
                self.before.or(self.context).unwrap_or(0),
                self.after.or(self.context).unwrap_or(0),
            ),
            _ => (0, 0),
        }
    }

    /// What the walk from `start` leaves out: the files the glob does not
    /// match, and those not of the file type.
    pub(crate) fn filters(&self, start: &Path) -> Result<Filters, ToolError> {
        let overrides = match &self.glob {
            Some(glob) => Some(
                OverrideBuilder::new(start)
                    .add(glob)
                    .and_then(|b| b.build())
                    .map_err(|e| ToolError::new(format!("Invalid glob \"{glob}\": {e}")))?,
            ),
            None => None,
        };
        let types = match &self.file_type {
            Some(name) => Some(file_types(name)?),
            None => None,
        };
        Ok(Filters { overrides, types })
    }
}

/// The ripgrep file type `name` (any of its names: `py` or `python`,
/// `md` or `markdown`), or, for a name ripgrep does not know, the one
/// type whose globs include `*.NAME` (`rs` is `rust`, `yml` is `yaml`).
fn file_types(name: &str) -> Result<ignore::types::Types, ToolError> {
    let mut defaults = TypesBuilder::new();
    defaults.add_defaults();
    let known = defaults.definitions();
    let chosen = if known.iter().any(|d| d.name() == name) {
        Some(name.to_owned())
    } else {
        let glob = format!("*.{}", name.trim_start_matches('.'));
        let mut owners: Vec<&str> = known
            .iter()
            .filter(|d| d.globs().contains(&glob))
            .map(|d| d.name())
            .collect();
        owners.dedup();
        match owners.as_slice() {
            [one] => Some((*one).to_owned()),
            _ => None,
        }
    };
    let refused = |why: String| {
        ToolError::new(format!(
            "Unknown file type \"{name}\" ({why}); use a ripgrep type such as rust, py, js, ts, go, java, c, cpp, md (or a file extension such as rs), or use glob instead, e.g. \"*.{name}\"."
        ))
    };
    let Some(chosen) = chosen else {
        return Err(refused("ripgrep has no type of that name".to_owned()));
    };
    defaults
        .select(&chosen)
        .build()
        .map_err(|e| refused(e.to_string()))
}
