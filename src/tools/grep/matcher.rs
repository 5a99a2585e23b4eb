//! The matcher and its limits: the compiled size, the repetition count
//! and the lazy DFA's cache a pattern may take, and the refusals that say
//! how to simplify a pattern past them.

use agentcore_stages::ToolError;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};

use super::args::GrepArgs;

/// The largest compiled regular expression accepted, in bytes (the NFA's
/// approximate size, grep-regex's `size_limit`; the regex crate's default).
/// Patterns people write compile to a few KB; Unicode classes are large
/// (`\w{100}` is about 5 MB).
pub const REGEX_SIZE_LIMIT: usize = 10 << 20;
/// The largest repetition count accepted, nested counts multiplied (RE2's
/// and Go's limit). Search time grows with the count whatever the compiled
/// size: `a{30000}` compiles to under 1 MB and still took seconds per
/// 200 KB file.
pub const MAX_REPETITION: u64 = 1000;
/// The lazy DFA's cache per search thread, in bytes (grep-regex's
/// `dfa_size_limit`; ripgrep's default is 1,000 MB).
pub const REGEX_DFA_CACHE: usize = 64 << 20;

pub(crate) fn build_matcher(args: &GrepArgs, multiline: bool) -> Result<RegexMatcher, ToolError> {
    let mut builder = RegexMatcherBuilder::new();
    builder
        .case_insensitive(args.case_insensitive.unwrap_or(false))
        .multi_line(true)
        .dot_matches_new_line(multiline);
    if !multiline {
        builder.line_terminator(Some(b'\n'));
    }
    builder
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_DFA_CACHE);
    if let Some(count) = repetition_count(&args.pattern)
        && count > MAX_REPETITION
    {
        return Err(too_large(
            &args.pattern,
            &format!(
                "it repeats a part {count} times, nested counts multiplied; the limit is {MAX_REPETITION}"
            ),
            "",
        ));
    }
    builder.build(&args.pattern).map_err(|e| {
        let text = e.to_string();
        if text.contains("size limit") {
            return too_large(
                &args.pattern,
                text.trim(),
                "fewer alternatives, or narrower character classes, ",
            );
        }
        ToolError::new(format!(
            "Invalid regular expression \"{}\": {e}\nEscape special characters such as ( [ {{ with a backslash to match them literally.",
            args.pattern
        ))
    })
}

/// The refusal of a pattern too large once compiled: `why` it is, and the
/// ways to simplify it beyond smaller counts (`more`, ending in ", ").
fn too_large(pattern: &str, why: &str, more: &str) -> ToolError {
    ToolError::new(format!(
        "Invalid regular expression \"{pattern}\": the pattern is too large once compiled ({why}); simplify it: use smaller repetition counts (e.g. `a{{1,100}}` or `a+` instead of `a{{30000}}`), {more}or search for a shorter literal part of what you want."
    ))
}

/// The largest number of times the pattern repeats any part, nested
/// counted repetitions multiplied (`(a{10}){20}` is 200; `*` and `+` count
/// their minimum). `None` when the pattern does not parse (the matcher
/// then reports the syntax error).
fn repetition_count(pattern: &str) -> Option<u64> {
    use regex_syntax::hir::{Hir, HirKind};
    fn walk(hir: &Hir) -> u64 {
        match hir.kind() {
            HirKind::Repetition(rep) => {
                let count = u64::from(rep.max.unwrap_or(rep.min).max(1));
                count.saturating_mul(walk(&rep.sub))
            }
            HirKind::Capture(cap) => walk(&cap.sub),
            HirKind::Concat(subs) | HirKind::Alternation(subs) => {
                subs.iter().map(walk).max().unwrap_or(1)
            }
            _ => 1,
        }
    }
    let hir = regex_syntax::ParserBuilder::new()
        .utf8(false)
        .build()
        .parse(pattern)
        .ok()?;
    Some(walk(&hir))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_pattern_repeating_too_often_is_refused_with_the_fix() {
        let args: GrepArgs = serde_json::from_value(json!({"pattern": "a{30000}"})).unwrap();
        let Err(err) = build_matcher(&args, false) else {
            panic!("a{{30000}} compiled");
        };
        let text = err.content[0].as_text().unwrap_or_default().to_owned();
        assert_eq!(
            text,
            "Invalid regular expression \"a{30000}\": the pattern is too large once compiled (it repeats a part 30000 times, nested counts multiplied; the limit is 1000); simplify it: use smaller repetition counts (e.g. `a{1,100}` or `a+` instead of `a{30000}`), or search for a shorter literal part of what you want."
        );
        assert!(
            too_large("x", "why", "fewer alternatives, or narrower character classes, ")
                .content[0]
                .as_text()
                .unwrap_or_default()
                .ends_with("instead of `a{30000}`), fewer alternatives, or narrower character classes, or search for a shorter literal part of what you want.")
        );
    }
}
