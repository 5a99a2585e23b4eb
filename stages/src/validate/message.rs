//! The schema-validation message of `semantics.md` §4: every issue at once,
//! grouped and ordered so a model can fix them all in one retry.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::paths::{Location, LocationSegment};
use jsonschema::{JsonType, ValidationError, Validator};
use serde_json::Value;

use crate::coerce::json_type_name;

/// Issue groups in the order the message lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Group {
    Missing,
    Type,
    Value,
    NotAllowed,
    Other,
}

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Issue {
    group: Group,
    path: String,
    line: String,
}

/// The full message if `args` fails `validator`, `None` if it passes.
pub fn schema_issues(tool: &str, validator: &Validator, args: &Value) -> Option<String> {
    let mut issues: Vec<Issue> = validator.iter_errors(args).flat_map(issues_of).collect();
    if issues.is_empty() {
        return None;
    }
    issues.sort();
    issues.dedup();
    let mut message = format!("InputValidationError: {tool} failed due to the following issue(s):");
    for issue in issues {
        message.push('\n');
        message.push_str(&issue.line);
    }
    Some(message)
}

fn issues_of(error: ValidationError<'_>) -> Vec<Issue> {
    let base = error.instance_path();
    let path = format_path(base);
    match error.kind() {
        ValidationErrorKind::Required { property } => {
            let name = property.as_str().map_or_else(|| property.to_string(), str::to_owned);
            let full = join(&path, &name);
            vec![Issue {
                group: Group::Missing,
                line: format!("The required parameter `{full}` is missing"),
                path: full,
            }]
        }
        ValidationErrorKind::Type { kind } => {
            let expected = match kind {
                TypeKind::Single(t) => t.as_str().to_owned(),
                TypeKind::Multiple(set) => type_set(set.iter()),
            };
            let actual = json_type_name(error.instance());
            vec![Issue {
                group: Group::Type,
                line: format!(
                    "The parameter `{path}` type is expected as `{expected}` but provided as `{actual}`"
                ),
                path,
            }]
        }
        ValidationErrorKind::Enum { options } => {
            let options = serde_json::to_string(&**options).unwrap_or_default();
            let given = serde_json::to_string(&**error.instance()).unwrap_or_default();
            vec![Issue {
                group: Group::Value,
                line: format!(
                    "The parameter `{path}` value must be one of {options} but provided as {given}"
                ),
                path,
            }]
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => unexpected
            .iter()
            .map(|name| {
                let full = join(&path, name);
                Issue {
                    group: Group::NotAllowed,
                    line: format!("The parameter `{full}` is not allowed"),
                    path: full,
                }
            })
            .collect(),
        _ => {
            let line = if path.is_empty() {
                format!("The arguments {error}")
            } else {
                format!("The parameter `{path}` {error}")
            };
            vec![Issue {
                group: Group::Other,
                line,
                path,
            }]
        }
    }
}

/// `integer | null`: the types in the validator's order, null last.
fn type_set(types: impl Iterator<Item = JsonType>) -> String {
    let mut types: Vec<JsonType> = types.collect();
    types.sort_by_key(|t| (*t == JsonType::Null, *t));
    types
        .iter()
        .map(|t| t.as_str())
        .collect::<Vec<_>>()
        .join(" | ")
}

/// A location written `edits[1].old_string`.
pub fn format_path(location: &Location) -> String {
    let mut out = String::new();
    for segment in location.iter() {
        match segment {
            LocationSegment::Property(name) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&name);
            }
            LocationSegment::Index(i) => {
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
        }
    }
    out
}

fn join(base: &str, name: &str) -> String {
    if base.is_empty() {
        name.to_owned()
    } else {
        format!("{base}.{name}")
    }
}
