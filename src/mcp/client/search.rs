//! Many mounted tools without a flood of definitions: past a budget of
//! tokens ([`ToolSearchConfig`]), the mounted tools are listed to the model
//! by name and one line ([`agentcore_stages::Tool::summary_only`]), and the
//! `tool_search` tool ([`ToolSearchTool`]) returns their full definitions
//! on demand. Calls are still coerced and validated against each tool's
//! full schema, listed or not.

use std::sync::{Arc, Mutex};

use agentcore_stages::{CallContext, Content, Tool, ToolError, ToolOutput, TypedTool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::access::{Access, Permissions};

/// The name of the search tool.
pub const TOOL_SEARCH: &str = "tool_search";

/// When mounted tools are listed by summary only (`[tool_search]` in a
/// policy).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[non_exhaustive]
pub struct ToolSearchConfig {
    /// Whether mounted tools may be listed by summary only (default true).
    pub enabled: bool,
    /// The estimated tokens of the mounted tools' full definitions past
    /// which they are listed by summary only (default 10,000; 0 lists them
    /// so always). A token is estimated as four characters of a
    /// definition's JSON.
    pub after_tokens: u64,
}

impl Default for ToolSearchConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            after_tokens: 10_000,
        }
    }
}

impl ToolSearchConfig {
    /// Whether tools whose full definitions take `tokens` are listed by
    /// summary only.
    pub fn lists_by_summary(&self, tokens: u64) -> bool {
        self.enabled && tokens > self.after_tokens
    }
}

/// The estimated tokens of `tool`'s full definition: a quarter of the
/// characters of its name, description and schema as JSON, rounded up.
pub fn definition_tokens(tool: &dyn Tool) -> u64 {
    let chars = tool.name().chars().count()
        + tool.description().chars().count()
        + tool.schema().to_string().chars().count();
    (chars as u64).div_ceil(4)
}

/// The tools `tool_search` searches, shared with the session that updates
/// it when a server's tool list changes.
#[derive(Clone, Default)]
pub struct Catalog(Arc<Mutex<Vec<Arc<dyn Tool>>>>);

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl Catalog {
    /// Replaces the tools searched.
    pub fn set(&self, tools: Vec<Arc<dyn Tool>>) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = tools;
    }

    /// The names of the tools searched, in order.
    pub fn names(&self) -> Vec<String> {
        self.tools().iter().map(|t| t.name().to_owned()).collect()
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// Arguments of `tool_search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolSearchArgs {
    /// Words to look for in the listed tools' names and descriptions, or `select:NAME,NAME` for the full definitions of the tools named.
    pub query: String,
    /// How many definitions to return at most (default 5, at most 20).
    #[schemars(range(min = 1, max = 20))]
    pub max_results: Option<u32>,
}

/// Definitions returned when the call gives no `max_results`.
const DEFAULT_RESULTS: usize = 5;
/// The most definitions one call returns.
const MAX_RESULTS: usize = 20;
/// Names listed at most when nothing matches.
const NAMES_SHOWN: usize = 50;

/// `tool_search`: the full definitions of tools listed by summary only.
#[derive(Debug, Clone)]
pub struct ToolSearchTool {
    catalog: Catalog,
}

impl ToolSearchTool {
    /// A search over `catalog`.
    pub fn new(catalog: Catalog) -> Self {
        Self { catalog }
    }
}

const DESCRIPTION: &str = "Returns the full definitions (description and input schema) of tools that are listed by name and one line only. \
Call it before calling such a tool: with `select:NAME` (or several, comma-separated) for tools you know by name, \
or with words describing what you need to find matching tools. \
The definitions come back as JSON; then call the tool by its name as usual.";

impl TypedTool for ToolSearchTool {
    type Args = ToolSearchArgs;

    fn name(&self) -> &str {
        TOOL_SEARCH
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn label(&self) -> Option<&str> {
        Some("Search Tools")
    }

    fn read_only(&self, _args: &ToolSearchArgs) -> bool {
        true
    }

    fn extensions(&self) -> agentcore_stages::Extensions {
        // It reads the session's own tool list: nothing of the world.
        Permissions::typed(|_: &ToolSearchArgs| Access::nothing()).into_extensions()
    }

    async fn execute(
        &self,
        args: ToolSearchArgs,
        _cx: &CallContext,
    ) -> Result<ToolOutput, ToolError> {
        let tools = self.catalog.tools();
        let max = args
            .max_results
            .map_or(DEFAULT_RESULTS, |n| (n as usize).clamp(1, MAX_RESULTS));
        let query = args.query.trim();
        if query.is_empty() {
            return Err(ToolError::new(
                "query is empty. Give words describing the tool you need, or select:NAME for a tool you know by name.",
            ));
        }
        let (found, unknown) = match query.strip_prefix("select:") {
            Some(names) => select(&tools, names, max),
            None => (matching(&tools, query, max), Vec::new()),
        };
        if found.is_empty() {
            return Err(ToolError::new(nothing_found(&tools, query, &unknown)));
        }
        let mut header = format!(
            "{} of the {} tools listed by name only:",
            found.len(),
            tools.len()
        );
        if !unknown.is_empty() {
            header.push_str(&format!(
                " ({} not among them: {})",
                if unknown.len() == 1 {
                    "this one is"
                } else {
                    "these are"
                },
                unknown.join(", ")
            ));
        }
        let mut blocks = vec![Content::text(header)];
        blocks.extend(found.iter().map(|tool| {
            Content::json(json!({
                "name": tool.name(),
                "description": tool.description(),
                "input_schema": tool.schema(),
            }))
        }));
        Ok(ToolOutput::blocks(blocks))
    }
}

/// The tools named in `names` (comma-separated), at most `max`, and the
/// names that are not listed.
fn select(tools: &[Arc<dyn Tool>], names: &str, max: usize) -> (Vec<Arc<dyn Tool>>, Vec<String>) {
    let mut found: Vec<Arc<dyn Tool>> = Vec::new();
    let mut unknown = Vec::new();
    for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        match tools.iter().find(|t| t.name() == name) {
            Some(tool) if !found.iter().any(|f| f.name() == name) => {
                if found.len() < max {
                    found.push(tool.clone());
                }
            }
            Some(_) => {}
            None => unknown.push(format!("{name:?}")),
        }
    }
    (found, unknown)
}

/// The tools best matching the words of `query`, at most `max`: a word in
/// a tool's name counts 3 (the whole name 10), in its description 1; ties
/// in name order.
fn matching(tools: &[Arc<dyn Tool>], query: &str, max: usize) -> Vec<Arc<dyn Tool>> {
    let words: Vec<String> = query
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let mut scored: Vec<(u32, &Arc<dyn Tool>)> = tools
        .iter()
        .filter_map(|tool| {
            let name = tool.name().to_lowercase();
            let description = tool.description().to_lowercase();
            let score: u32 = words
                .iter()
                .map(|w| {
                    if name == *w {
                        10
                    } else if name.contains(w.as_str()) {
                        3
                    } else if description.contains(w.as_str()) {
                        1
                    } else {
                        0
                    }
                })
                .sum();
            (score > 0).then_some((score, tool))
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.name().cmp(b.1.name())));
    scored
        .into_iter()
        .take(max)
        .map(|(_, t)| t.clone())
        .collect()
}

fn nothing_found(tools: &[Arc<dyn Tool>], query: &str, unknown: &[String]) -> String {
    let names: Vec<&str> = tools.iter().map(|t| t.name()).take(NAMES_SHOWN).collect();
    let more = tools.len().saturating_sub(NAMES_SHOWN);
    let listed = if names.is_empty() {
        "No tool is listed by name only.".to_owned()
    } else {
        format!(
            "The tools listed by name only are: {}{}.",
            names.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        )
    };
    if unknown.is_empty() {
        format!("No listed tool matches {query:?}. {listed} Try other words, or select:NAME.")
    } else {
        format!(
            "No listed tool is named {}. {listed} Use one of these names with select:NAME.",
            unknown.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentcore_stages::{BoxFuture, GatedArgs};
    use serde_json::Value;

    struct Fake {
        name: String,
        description: String,
        schema: Value,
    }

    impl Tool for Fake {
        fn name(&self) -> &str {
            &self.name
        }
        fn description(&self) -> &str {
            &self.description
        }
        fn schema(&self) -> &Value {
            &self.schema
        }
        fn execute<'a>(
            &'a self,
            _args: GatedArgs,
            _cx: &'a CallContext,
        ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
            Box::pin(async { Ok(ToolOutput::text("")) })
        }
    }

    fn fake(name: &str, description: &str) -> Arc<dyn Tool> {
        Arc::new(Fake {
            name: name.into(),
            description: description.into(),
            schema: json!({"type": "object", "properties": {"id": {"type": "integer"}}}),
        })
    }

    fn tools() -> Vec<Arc<dyn Tool>> {
        vec![
            fake("mcp__gh__create_issue", "Creates an issue in a repository."),
            fake("mcp__gh__list_issues", "Lists the issues of a repository."),
            fake("mcp__gh__merge_pull_request", "Merges a pull request."),
            fake("mcp__linear__issue", "Reads a Linear issue."),
        ]
    }

    fn names(found: &[Arc<dyn Tool>]) -> Vec<&str> {
        found.iter().map(|t| t.name()).collect()
    }

    #[test]
    fn words_in_names_count_more_than_in_descriptions() {
        let tools = tools();
        assert_eq!(
            names(&matching(&tools, "create issue", 5)),
            [
                "mcp__gh__create_issue",
                "mcp__gh__list_issues",
                "mcp__linear__issue",
            ]
        );
        assert_eq!(
            names(&matching(&tools, "pull", 5)),
            ["mcp__gh__merge_pull_request"]
        );
        assert_eq!(
            names(&matching(&tools, "REPOSITORY", 1)),
            ["mcp__gh__create_issue"]
        );
        assert!(matching(&tools, "weather", 5).is_empty());
    }

    #[test]
    fn select_takes_exact_names_once_and_names_the_unknown() {
        let tools = tools();
        let (found, unknown) = select(
            &tools,
            " mcp__gh__list_issues, nope ,mcp__gh__list_issues,",
            5,
        );
        assert_eq!(names(&found), ["mcp__gh__list_issues"]);
        assert_eq!(unknown, ["\"nope\""]);
    }

    #[test]
    fn the_budget_is_past_when_the_estimate_is_over_it() {
        let config = ToolSearchConfig::default();
        assert!(!config.lists_by_summary(10_000));
        assert!(config.lists_by_summary(10_001));
        let always = ToolSearchConfig {
            after_tokens: 0,
            ..config
        };
        assert!(always.lists_by_summary(1));
        let off = ToolSearchConfig {
            enabled: false,
            ..always
        };
        assert!(!off.lists_by_summary(u64::MAX));
        let tool = fake("abcd", "efgh");
        let schema_chars = tool.schema().to_string().len() as u64;
        assert_eq!(
            definition_tokens(tool.as_ref()),
            (8 + schema_chars).div_ceil(4)
        );
    }
}
