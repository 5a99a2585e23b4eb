//! Reading a rule from its text: `tool` or `tool(specifier)`, the
//! specifier read by the grammar of the tool named (a command pattern for
//! `bash`, a path pattern for the file tools, whichever parses for any
//! other), and the errors that say how to write it.

use std::str::FromStr;

use super::{CommandPattern, PathPattern, Rule, RuleTarget, Specifier};

/// Why a rule could not be read. The text says how to write it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid rule {rule:?}: {message}")]
pub struct RuleError {
    /// The rule as written.
    pub rule: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// How a rule's specifier is read, by the name it is written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Grammar {
    /// `bash(cargo test *)`: a command pattern.
    Command,
    /// `read(./secrets/**)` and the other file tools: a path glob.
    Path,
    /// Any other tool: whichever of the two parses, and applies to the
    /// call.
    Either,
}

impl Grammar {
    fn of(name: &str) -> Self {
        match name {
            "bash" => Grammar::Command,
            "read" | "glob" | "grep" | "ls" | "edit" | "write" => Grammar::Path,
            _ => Grammar::Either,
        }
    }
}

impl FromStr for Rule {
    type Err = RuleError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let error = |message: &str| RuleError {
            rule: text.to_owned(),
            message: message.to_owned(),
        };
        let trimmed = text.trim();
        let (tool, specifier) = match trimmed.find('(') {
            None => (trimmed, None),
            Some(open) => {
                let Some(inner) = trimmed[open + 1..].strip_suffix(')') else {
                    return Err(error(
                        "the specifier is not closed; write `tool(specifier)`, e.g. `bash(cargo test *)`",
                    ));
                };
                (&trimmed[..open], Some(inner.trim()))
            }
        };
        if tool.is_empty() {
            return Err(error(
                "the tool name is missing; write `tool` or `tool(specifier)`, e.g. `write(src/**)`",
            ));
        }
        if tool.contains(|c: char| c.is_whitespace() || c == ')') {
            return Err(error(
                "a tool name has no spaces or parentheses; write `tool(specifier)`, e.g. `read(./secrets/**)`",
            ));
        }
        let specifier = match specifier {
            None => None,
            Some("") | Some("*") | Some("**") => None,
            Some(spec) => Some(match Grammar::of(tool) {
                Grammar::Command => {
                    Specifier::Command(CommandPattern::parse(spec).map_err(|m| error(&m))?)
                }
                Grammar::Path => Specifier::Path(PathPattern::build(spec).map_err(|m| error(&m))?),
                Grammar::Either => {
                    let c = CommandPattern::parse(spec);
                    let p = PathPattern::build(spec);
                    match (c, p) {
                        (Err(m), Err(_)) => return Err(error(&m)),
                        (c, p) => Specifier::Either(c.ok(), p.ok()),
                    }
                }
            }),
        };
        Ok(Self {
            text: trimmed.to_owned(),
            tool: tool.to_owned(),
            target: RuleTarget::of(tool),
            specifier,
            outside_sandbox: false,
        })
    }
}

impl serde::Serialize for Rule {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> serde::Deserialize<'de> for Rule {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints() {
        let rule: Rule = " write(src/**) ".parse().unwrap();
        assert_eq!(rule.to_string(), "write(src/**)");
        assert!("grep".parse::<Rule>().unwrap().is_bare());
        assert!("bash()".parse::<Rule>().unwrap().is_bare());
    }

    #[test]
    fn bad_rules_say_how_to_fix_them() {
        for bad in [
            "bash(cargo",
            "(x)",
            "ba sh(x)",
            "bash(a; b)",
            "read(!x)",
            "read()x",
        ] {
            let err = bad.parse::<Rule>().unwrap_err();
            assert!(err.to_string().contains("invalid rule"), "{err}");
        }
    }
}
