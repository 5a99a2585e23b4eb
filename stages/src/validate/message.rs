//! The schema-validation message of `docs/semantics.md` §4: every issue at once,
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

/// One step of a location, ordered so that `edits[2]` precedes `edits[10]`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    Index(usize),
    Name(String),
}

/// One line of the message, with what it is sorted by.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Issue {
    group: Group,
    path: Vec<Step>,
    line: String,
}

/// The full message if `args` fails `validator`, `None` if it passes.
pub fn schema_issues(tool: &str, validator: &Validator, args: &Value) -> Option<String> {
    // Most calls are valid; `is_valid` is much cheaper than collecting errors.
    if validator.is_valid(args) {
        return None;
    }
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
    let steps = steps(error.instance_path());
    let issue = |group, path: Vec<Step>, line| Issue { group, path, line };
    let subject = subject(&format_steps(&steps));
    match error.kind() {
        ValidationErrorKind::Required { property } => {
            let name = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_owned);
            let full = child(&steps, name);
            let line = format!(
                "The required parameter `{}` is missing",
                format_steps(&full)
            );
            vec![issue(Group::Missing, full, line)]
        }
        ValidationErrorKind::Type { kind } => {
            let expected = match kind {
                TypeKind::Single(t) => t.as_str().to_owned(),
                TypeKind::Multiple(set) => type_set(set.iter()),
            };
            let actual = json_type_name(error.instance());
            let line =
                format!("{subject} type is expected as `{expected}` but provided as `{actual}`");
            vec![issue(Group::Type, steps, line)]
        }
        ValidationErrorKind::Enum { options } => {
            let options = serde_json::to_string(&**options).unwrap_or_default();
            let given = serde_json::to_string(&**error.instance()).unwrap_or_default();
            let line = format!("{subject} value must be one of {options} but provided as {given}");
            vec![issue(Group::Value, steps, line)]
        }
        ValidationErrorKind::AdditionalProperties { unexpected }
        | ValidationErrorKind::UnevaluatedProperties { unexpected } => unexpected
            .iter()
            .map(|name| {
                let full = child(&steps, name.clone());
                let line = format!("The parameter `{}` is not allowed", format_steps(&full));
                issue(Group::NotAllowed, full, line)
            })
            .collect(),
        // `"colour": false` under `properties`: the member is not allowed.
        ValidationErrorKind::FalseSchema if !steps.is_empty() => {
            let line = format!("{subject} is not allowed");
            vec![issue(Group::NotAllowed, steps, line)]
        }
        _ => {
            let line = format!("{subject} {error}");
            vec![issue(Group::Other, steps, line)]
        }
    }
}

/// How a line names a location: the parameter, or the arguments as a whole.
fn subject(path: &str) -> String {
    if path.is_empty() {
        "The arguments".to_owned()
    } else {
        format!("The parameter `{path}`")
    }
}

fn steps(location: &Location) -> Vec<Step> {
    location
        .iter()
        .map(|segment| match segment {
            LocationSegment::Property(name) => Step::Name(name.to_string()),
            LocationSegment::Index(i) => Step::Index(i),
        })
        .collect()
}

fn child(steps: &[Step], name: String) -> Vec<Step> {
    let mut full = steps.to_vec();
    full.push(Step::Name(name));
    full
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

/// A location written `edits[1].old_string`: names joined by `.`, indices
/// in brackets, the empty string for the arguments as a whole.
fn format_steps(steps: &[Step]) -> String {
    let mut out = String::new();
    for step in steps {
        match step {
            Step::Name(name) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(name);
            }
            Step::Index(i) => {
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use jsonschema::paths::Location;

    use super::*;

    #[test]
    fn locations_are_written_with_dots_and_brackets() {
        let location = Location::new()
            .join("edits")
            .join(1usize)
            .join("old_string");
        assert_eq!(format_steps(&steps(&location)), "edits[1].old_string");
    }
}
