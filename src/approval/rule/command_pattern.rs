//! Command patterns: `bash(cargo test *)`, matched word by word against
//! each part of a command; the session grants of one part or of one
//! whole command line; and the `*` wildcard of a word.

use super::{Rule, RuleTarget, Specifier};
use crate::shell::CommandPart;

impl Rule {
    /// A rule matching one command part word for word, for session grants.
    pub(crate) fn exact_part(tool: &str, part: &CommandPart) -> Self {
        let words: Vec<WordPattern> = part
            .words
            .iter()
            .map(|w| WordPattern::Literal(w.clone()))
            .collect();
        Self {
            text: format!("{tool}({})", part.text()),
            tool: tool.to_owned(),
            target: RuleTarget::of(tool),
            specifier: Some(Specifier::Command(CommandPattern { words, rest: false })),
            outside_sandbox: false,
        }
    }

    /// A rule matching one whole command line exactly, for session grants.
    pub(crate) fn exact_command(tool: &str, command: &str) -> Self {
        let normalized = normalize_command(command);
        Self {
            text: format!("{tool}({normalized})"),
            tool: tool.to_owned(),
            target: RuleTarget::of(tool),
            specifier: Some(Specifier::ExactCommand(normalized)),
            outside_sandbox: false,
        }
    }

    /// Whether the rule's command pattern matches a part. `loose` also
    /// tries the part without leading assignments and with the program's
    /// directory stripped (`/bin/rm` as `rm`): used for deny and ask rules,
    /// where matching more is the safe side.
    pub(crate) fn matches_part(&self, part: &CommandPart, loose: bool) -> Option<bool> {
        let pattern = match &self.specifier {
            None => return Some(true),
            Some(Specifier::Command(c)) | Some(Specifier::Either(Some(c), _)) => c,
            Some(Specifier::ExactCommand(_)) => return Some(false),
            _ => return None,
        };
        if pattern.matches(&part.words) {
            return Some(true);
        }
        if loose {
            let bare = part.without_assignments();
            if pattern.matches(bare) {
                return Some(true);
            }
            if let Some((first, rest)) = bare.split_first() {
                let base = first.rsplit('/').next().unwrap_or(first);
                if base != first {
                    let mut words = vec![base.to_owned()];
                    words.extend(rest.iter().cloned());
                    return Some(pattern.matches(&words));
                }
            }
        }
        Some(false)
    }

    /// Whether the rule is a whole-command grant matching `command`.
    pub(crate) fn matches_whole_command(&self, command: &str) -> bool {
        match &self.specifier {
            Some(Specifier::ExactCommand(c)) => !c.is_empty() && *c == normalize_command(command),
            _ => false,
        }
    }
}

/// A command pattern: words, `*` wildcards.
#[derive(Clone, Debug)]
pub(crate) struct CommandPattern {
    words: Vec<WordPattern>,
    /// A trailing `*` word: any further words.
    rest: bool,
}

#[derive(Clone, Debug)]
enum WordPattern {
    Literal(String),
    Wildcard(Vec<String>),
}

impl CommandPattern {
    pub(crate) fn parse(spec: &str) -> Result<Self, String> {
        let spec = match spec.strip_suffix(":*") {
            Some(prefix) => format!("{prefix} *"),
            None => spec.to_owned(),
        };
        // Parse with the same parser as commands, so a rule and a command
        // are normalized alike (quotes removed, spaces collapsed).
        let Some(pattern_words) = crate::shell::pattern_words(&spec) else {
            return Err(
                "a command rule names one simple command with no `;`, `&&`, `|`, substitutions or redirections; write one rule per command, e.g. `bash(cargo test *)`"
                    .to_owned(),
            );
        };
        let mut words: Vec<WordPattern> = pattern_words
            .iter()
            .map(|w| {
                if w.contains('*') {
                    WordPattern::Wildcard(w.split('*').map(str::to_owned).collect())
                } else {
                    WordPattern::Literal(w.clone())
                }
            })
            .collect();
        let rest = matches!(words.last(), Some(WordPattern::Wildcard(pieces)) if pieces.iter().all(String::is_empty));
        if rest {
            words.pop();
        }
        Ok(Self { words, rest })
    }

    fn matches(&self, words: &[String]) -> bool {
        if words.len() < self.words.len() || (!self.rest && words.len() != self.words.len()) {
            return false;
        }
        self.words.iter().zip(words).all(|(p, w)| p.matches(w))
    }
}

impl WordPattern {
    fn matches(&self, word: &str) -> bool {
        match self {
            WordPattern::Literal(l) => l == word,
            WordPattern::Wildcard(pieces) => wildcard(pieces, word),
        }
    }
}

/// `pieces` are the literal text between `*`s.
pub(crate) fn wildcard(pieces: &[String], word: &str) -> bool {
    let Some((first, rest)) = pieces.split_first() else {
        return word.is_empty();
    };
    let Some(mut remaining) = word.strip_prefix(first.as_str()) else {
        return false;
    };
    let Some((last, middle)) = rest.split_last() else {
        return remaining.is_empty();
    };
    for piece in middle {
        match remaining.find(piece.as_str()) {
            Some(i) => remaining = &remaining[i + piece.len()..],
            None => return false,
        }
    }
    remaining.len() >= last.len() && remaining.ends_with(last.as_str())
}

/// Whitespace runs collapsed, ends trimmed.
pub(crate) fn normalize_command(command: &str) -> String {
    command.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(s: &str) -> CommandPart {
        CommandPart {
            words: s.split(' ').map(str::to_owned).collect(),
        }
    }

    #[test]
    fn command_patterns() {
        let rule: Rule = "bash(cargo test *)".parse().unwrap();
        assert_eq!(rule.matches_part(&part("cargo test"), false), Some(true));
        assert_eq!(
            rule.matches_part(&part("cargo test --release"), false),
            Some(true)
        );
        assert_eq!(rule.matches_part(&part("cargo testx"), false), Some(false));
        assert_eq!(rule.matches_part(&part("cargo build"), false), Some(false));
        let colon: Rule = "bash(npm run test:*)".parse().unwrap();
        assert_eq!(
            colon.matches_part(&part("npm run test x"), false),
            Some(true)
        );
        let inner: Rule = "bash(git log --format=*)".parse().unwrap();
        assert_eq!(
            inner.matches_part(&part("git log --format=%H"), false),
            Some(true)
        );
        assert_eq!(
            inner.matches_part(&part("git log --format=%H x"), false),
            Some(false)
        );
    }

    #[test]
    fn loose_matching_for_deny() {
        let rule: Rule = "bash(rm *)".parse().unwrap();
        assert_eq!(
            rule.matches_part(&part("/bin/rm -rf x"), false),
            Some(false)
        );
        assert_eq!(rule.matches_part(&part("/bin/rm -rf x"), true), Some(true));
        assert_eq!(rule.matches_part(&part("X=1 rm -rf x"), true), Some(true));
    }

    #[test]
    fn wildcards() {
        let w =
            |p: &str, s: &str| wildcard(&p.split('*').map(str::to_owned).collect::<Vec<_>>(), s);
        assert!(w("a*c", "abc"));
        assert!(w("a*c", "ac"));
        assert!(!w("a*c", "ab"));
        assert!(w("*", ""));
        assert!(w("a*b*c", "aXbYc"));
        assert!(!w("ab*ba", "aba"));
    }
}
