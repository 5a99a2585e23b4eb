//! Laws of the tolerant tiers, on random files made of lines that differ in
//! indentation, trailing whitespace and look-alike characters, and quotes
//! taken from them and perturbed the way models perturb them:
//!
//! - a tiered edit never changes a byte outside the place it matched (on
//!   text, and on CRLF, BOM and UTF-16 files);
//! - the place it matched is the quote up to that tier's tolerance, never
//!   some other text;
//! - an exact match always wins over a tier;
//! - a tier that finds two places never applies without `replace_all`.

use agentcore::tools::edit::{
    EditError, Tier, apply_edit, apply_edit_tiered, edit_bytes_tiered, locate,
};
use proptest::prelude::*;

use crate::support::files::utf16le;

const INDENTS: [&str; 6] = ["", "  ", "    ", "\t", "\t\t", "        "];
const BODIES: [&str; 8] = [
    "a",
    "b()",
    "c = 1",
    "say(\u{201C}q\u{201D})",
    "say(\"q\")",
    "x\u{00A0}y",
    "}",
    "it\u{2019}s \u{2014} ok",
];
const TRAILING: [&str; 4] = ["", " ", "\t", "  "];

#[derive(Clone, Debug)]
struct Line {
    indent: usize,
    body: usize,
    trailing: usize,
}

fn line() -> impl Strategy<Value = Line> {
    (0..INDENTS.len(), 0..BODIES.len(), 0..TRAILING.len()).prop_map(|(indent, body, trailing)| {
        Line {
            indent,
            body,
            trailing,
        }
    })
}

fn render(lines: &[Line]) -> String {
    lines
        .iter()
        .map(|l| {
            format!(
                "{}{}{}\n",
                INDENTS[l.indent], BODIES[l.body], TRAILING[l.trailing]
            )
        })
        .collect()
}

/// How a model misquotes a line.
#[derive(Clone, Debug)]
enum Perturb {
    Keep,
    Trailing(usize),
    Indent(usize),
    Fold,
}

fn perturb() -> impl Strategy<Value = Perturb> {
    prop_oneof![
        Just(Perturb::Keep),
        (0..TRAILING.len()).prop_map(Perturb::Trailing),
        (0..INDENTS.len()).prop_map(Perturb::Indent),
        Just(Perturb::Fold),
    ]
}

fn fold(s: &str) -> String {
    s.replace(['\u{201C}', '\u{201D}'], "\"")
        .replace('\u{2019}', "'")
        .replace('\u{00A0}', " ")
        .replace('\u{2014}', "-")
}

/// A file, and a quote of a window of its lines, perturbed.
fn file_and_quote() -> impl Strategy<Value = (String, String)> {
    proptest::collection::vec(line(), 1..12)
        .prop_flat_map(|lines| {
            let n = lines.len();
            (Just(lines), 0..n, 1..=3usize, any::<bool>())
        })
        .prop_flat_map(|(lines, start, len, newline)| {
            let len = len.min(lines.len() - start);
            (
                Just(lines),
                Just(start..start + len),
                proptest::collection::vec(perturb(), len),
                Just(newline),
            )
        })
        .prop_map(|(lines, window, perturbs, newline)| {
            let text = render(&lines);
            let mut quote = String::new();
            for (l, p) in lines[window].iter().zip(perturbs) {
                let (mut indent, body, mut trailing) = (
                    INDENTS[l.indent],
                    BODIES[l.body].to_owned(),
                    TRAILING[l.trailing],
                );
                let body = match p {
                    Perturb::Keep => body,
                    Perturb::Trailing(t) => {
                        trailing = TRAILING[t];
                        body
                    }
                    Perturb::Indent(i) => {
                        indent = INDENTS[i];
                        body
                    }
                    Perturb::Fold => fold(&body),
                };
                quote.push_str(&format!("{indent}{body}{trailing}\n"));
            }
            if !newline {
                quote.pop();
            }
            (text, quote)
        })
}

fn new_string() -> impl Strategy<Value = String> {
    proptest::string::string_regex("( {0,4}|\t)[NEW()x]{0,6}\n?( {0,4}|\t)[z]{0,3}").unwrap()
}

/// The text of a region under a tier's tolerance, line by line.
fn tolerant(s: &str, tier: Tier) -> Vec<String> {
    let s = s.strip_suffix('\n').unwrap_or(s);
    s.split('\n')
        .map(|l| match tier {
            Tier::TrailingWhitespace => l.trim_end().to_owned(),
            Tier::Indentation => l.trim().to_owned(),
            _ => l.to_owned(),
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn a_tiered_edit_changes_nothing_outside_its_place((text, quote) in file_and_quote(), new in new_string()) {
        prop_assume!(!quote.trim().is_empty() && quote != new);
        let Some(found) = locate(&text, &quote, &Tier::ALL) else {
            let got = apply_edit_tiered(&text, &quote, &new, false);
            let missed = matches!(got, Err(EditError::NotFound(_) | EditError::NotFoundNear { .. }));
            prop_assert!(missed, "{:?}", got);
            return Ok(());
        };
        if found.places.len() > 1 {
            return Ok(());
        }
        let place = &found.places[0];
        let Ok(replacement) = place.replacement(&new) else {
            // A re-indentation that would be a guess is refused, never
            // landed.
            prop_assert_eq!(found.tier, Tier::Indentation);
            prop_assert_eq!(
                apply_edit_tiered(&text, &quote, &new, false),
                Err(EditError::IndentationUnclear)
            );
            return Ok(());
        };
        let edit = apply_edit_tiered(&text, &quote, &new, false).unwrap();
        prop_assert_eq!(edit.tier, found.tier);
        prop_assert_eq!(edit.replaced, 1);
        let want = format!(
            "{}{}{}",
            &text[..place.range.start],
            replacement,
            &text[place.range.end..]
        );
        prop_assert_eq!(&edit.text, &want);
        // The place is the quote up to the tier's tolerance: never
        // another text.
        let region = &text[place.range.clone()];
        match found.tier {
            Tier::Exact => prop_assert_eq!(region, quote.as_str()),
            Tier::LookAlikes => prop_assert_eq!(fold(region).replace('\u{200B}', ""), fold(&quote)),
            tier => prop_assert_eq!(tolerant(region, tier), tolerant(&quote, tier)),
        }
        // Only the indentation tier rewrites new_string.
        if found.tier != Tier::Indentation {
            prop_assert_eq!(replacement.as_ref(), new.as_str());
        }
    }

    #[test]
    fn on_file_bytes_the_bytes_outside_the_place_are_kept(
        (text, quote) in file_and_quote(),
        new in new_string(),
        form in 0..4u8,
    ) {
        prop_assume!(!quote.trim().is_empty() && quote != new);
        let Some(found) = locate(&text, &quote, &Tier::ALL) else { return Ok(()); };
        prop_assume!(found.places.len() == 1);
        let place = &found.places[0];
        let (before, after) = (&text[..place.range.start], &text[place.range.end..]);
        let encode = |s: &str| -> Vec<u8> {
            match form {
                0 => s.as_bytes().to_vec(),
                1 => s.replace('\n', "\r\n").into_bytes(),
                2 => [b"\xEF\xBB\xBF".as_slice(), s.as_bytes()].concat(),
                _ => utf16le(&s.replace('\n', "\r\n")),
            }
        };
        let bytes = encode(&text);
        let quote_sent = if form == 1 { quote.replace('\n', "\r\n") } else { quote.clone() };
        let (out, tier) = match edit_bytes_tiered(&bytes, &quote_sent, &new, false) {
            Ok(done) => done,
            // Issue 25 item 11(a): refused, so nothing is written at all.
            Err(EditError::IndentationUnclear) if found.tier == Tier::Indentation => return Ok(()),
            Err(e) => return Err(TestCaseError::fail(format!("{e:?}"))),
        };
        prop_assert_eq!(tier, found.tier);
        let head = encode(before);
        let tail = encode(after);
        // UTF-16's BOM is in `head` and the tail's own BOM is not written.
        let tail = if form == 3 { tail[2..].to_vec() } else { tail };
        let tail = if form == 2 { tail[3..].to_vec() } else { tail };
        prop_assert!(out.starts_with(&head), "head changed");
        prop_assert!(out.ends_with(&tail), "tail changed");
    }

    #[test]
    fn an_exact_match_always_wins(
        lines in proptest::collection::vec(line(), 1..10),
        from in any::<prop::sample::Index>(),
        len in 1..30usize,
        new in new_string(),
        replace_all in any::<bool>(),
    ) {
        let text = render(&lines);
        // A substring of the text on char boundaries.
        let chars: Vec<(usize, char)> = text.char_indices().collect();
        let a = from.index(chars.len());
        let b = (a + len).min(chars.len());
        let end = chars.get(b).map_or(text.len(), |&(i, _)| i);
        let quote = &text[chars[a].0..end];
        prop_assume!(!quote.trim().is_empty() && quote != new);
        let found = locate(&text, quote, &Tier::ALL).unwrap();
        prop_assert_eq!(found.tier, Tier::Exact);
        match (apply_edit(&text, quote, &new, replace_all), apply_edit_tiered(&text, quote, &new, replace_all)) {
            (Ok(want), Ok(got)) => {
                prop_assert_eq!(got.text, want);
                prop_assert_eq!(got.tier, Tier::Exact);
            }
            (Err(want), Err(got)) => prop_assert_eq!(got, want),
            (a, b) => prop_assert!(false, "exact {:?} vs tiered {:?}", a, b),
        }
    }

    #[test]
    fn a_tier_with_two_places_never_applies_without_replace_all(
        (text, quote) in file_and_quote(),
        copy in perturb(),
        new in new_string(),
    ) {
        // Append a second, differently perturbed copy of the quoted lines
        // so that tiers often find two places.
        let second = match copy {
            Perturb::Indent(i) => quote.lines().map(|l| format!("{}{}\n", INDENTS[i], l.trim_start())).collect(),
            Perturb::Trailing(t) => quote.lines().map(|l| format!("{}{}\n", l, TRAILING[t])).collect(),
            _ => quote.lines().map(|l| format!("{l}\n")).collect::<String>(),
        };
        let text = format!("{text}{second}");
        prop_assume!(!quote.trim().is_empty() && quote != new);
        let Some(found) = locate(&text, &quote, &Tier::ALL) else { return Ok(()); };
        let got = apply_edit_tiered(&text, &quote, &new, false);
        if found.places.len() > 1 {
            prop_assert_eq!(got, Err(if found.tier == Tier::Exact {
                EditError::Ambiguous(found.places.len())
            } else {
                EditError::AmbiguousTolerant(found.places.len(), found.tier)
            }));
        } else if found.tier == Tier::Indentation && got == Err(EditError::IndentationUnclear) {
            // Issue 25 item 11(a): a quote indented otherwise than the file,
            // with a new line that stands for no line of it, is refused
            // rather than re-indented by a guess.
        } else {
            prop_assert!(got.is_ok(), "{got:?}");
        }
    }
}
