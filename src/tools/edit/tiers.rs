//! Where an edit's `old_string` lands in a text: exactly, or, when it has no
//! exact match, by the tolerant tiers of issue 17, tried in order:
//!
//! 1. [`Tier::TrailingWhitespace`]: whole lines, trailing whitespace of
//!    every line ignored;
//! 2. [`Tier::Indentation`]: whole lines, leading indentation ignored too
//!    (tabs or spaces, any depth); the place remembers how the file indents
//!    so that `new_string` can be re-indented ([`Place::replacement`]);
//! 3. [`Tier::LookAlikes`]: Unicode look-alikes folded (curly quotes,
//!    non-breaking and other spaces, dashes, the ellipsis, zero-width
//!    characters), anywhere in a line.
//!
//! [`locate`] is pure and shared by every tool that quotes text to change
//! (`edit`, `multi_edit` and `apply_patch`): the first tier that
//! finds any place decides, and the caller refuses when it found several
//! places and the call does not replace them all.
//!
//! ```
//! use agentcore::tools::edit::{Tier, locate};
//!
//! let text = "fn a() {\n\tlet x = 1;   \n}\n";
//! let found = locate(text, "    let x = 1;\n", &Tier::ALL).unwrap();
//! assert_eq!(found.tier, Tier::Indentation);
//! assert_eq!(found.places.len(), 1);
//! let place = &found.places[0];
//! assert_eq!(&text[place.range.clone()], "\tlet x = 1;   \n");
//! assert_eq!(place.replacement("    let x = 2;\n"), "\tlet x = 2;\n");
//! ```

use std::borrow::Cow;
use std::ops::Range;

/// How an `old_string` was found. The order of [`Tier::ALL`] is the order
/// in which they are tried.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Tier {
    /// Byte for byte, anywhere in the text.
    Exact,
    /// Whole lines, trailing whitespace of each line ignored.
    TrailingWhitespace,
    /// Whole lines, leading and trailing whitespace of each line ignored;
    /// `new_string` is re-indented to the file's indentation.
    Indentation,
    /// Unicode look-alike characters folded to their ASCII forms.
    LookAlikes,
}

impl Tier {
    /// Every tier, in the order they are tried.
    pub const ALL: [Tier; 4] = [
        Tier::Exact,
        Tier::TrailingWhitespace,
        Tier::Indentation,
        Tier::LookAlikes,
    ];

    /// The note the success text ends with (none for an exact match).
    pub fn note(self) -> Option<&'static str> {
        match self {
            Tier::Exact => None,
            Tier::TrailingWhitespace => Some("(matched ignoring trailing whitespace)"),
            Tier::Indentation => {
                Some("(matched after normalising indentation; new_string re-indented)")
            }
            Tier::LookAlikes => Some("(matched after folding look-alike characters)"),
        }
    }
}

/// The places one tier found, in text order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Match {
    /// The tier that found them.
    pub tier: Tier,
    /// Every place found, in order of their start. Places of the line tiers
    /// may overlap (each counts: two overlapping places are two places).
    pub places: Vec<Place>,
}

/// One place an `old_string` was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    /// The byte range of the text that the replacement takes the place of.
    pub range: Range<usize>,
    reindent: Option<Reindent>,
}

impl Place {
    /// A place found exactly: its replacement is `new` as given.
    pub fn exact(range: Range<usize>) -> Self {
        Self {
            range,
            reindent: None,
        }
    }

    /// `new` as it is to be written at this place: as given, except after
    /// [`Tier::Indentation`], where every line's indentation is moved by
    /// the difference between the `old_string` and the file (scaled when
    /// they indent by different steps, written with tabs when the file's
    /// lines there are indented with tabs).
    pub fn replacement<'a>(&self, new: &'a str) -> Cow<'a, str> {
        match &self.reindent {
            None => Cow::Borrowed(new),
            Some(r) => Cow::Owned(r.apply(new)),
        }
    }
}

/// Columns a tab counts for when indentation widths are compared.
const TAB: usize = 4;

/// How to move a `new_string`'s indentation to the file's: a line indented
/// `w` columns in the quote becomes `to + (w - from) * num / den` columns.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Reindent {
    from: usize,
    to: usize,
    num: usize,
    den: usize,
    tabs: bool,
}

impl Reindent {
    fn apply(&self, new: &str) -> String {
        let mut out = String::with_capacity(new.len() + 16);
        for line in new.split_inclusive('\n') {
            let body = line.trim_start_matches([' ', '\t']);
            if body.trim().is_empty() {
                out.push_str(line);
                continue;
            }
            let w = width(&line[..line.len() - body.len()]) as i128;
            let (from, to) = (self.from as i128, self.to as i128);
            let (num, den) = (self.num as i128, self.den as i128);
            let moved = to + ((w - from) * num).div_euclid(den);
            let cols = usize::try_from(moved.max(0)).unwrap_or(0);
            if self.tabs {
                out.extend(std::iter::repeat_n('\t', cols / TAB));
                out.extend(std::iter::repeat_n(' ', cols % TAB));
            } else {
                out.extend(std::iter::repeat_n(' ', cols));
            }
            out.push_str(body);
        }
        out
    }
}

/// The columns of an indentation, a tab counting [`TAB`].
fn width(indent: &str) -> usize {
    indent
        .chars()
        .map(|c| if c == '\t' { TAB } else { 1 })
        .sum()
}

fn indent_of(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// Finds `needle` in `text` with the first of `tiers` that finds any place
/// (tried in the order given); `None` when none does. An empty needle, or
/// one of whitespace only, is found by no tolerant tier (and exactly only
/// when it is not empty).
pub fn locate(text: &str, needle: &str, tiers: &[Tier]) -> Option<Match> {
    if needle.is_empty() {
        return None;
    }
    tiers.iter().find_map(|&tier| {
        let places = match tier {
            Tier::Exact => text
                .match_indices(needle)
                .map(|(i, _)| Place {
                    range: i..i + needle.len(),
                    reindent: None,
                })
                .collect(),
            _ if needle.trim().is_empty() => Vec::new(),
            Tier::TrailingWhitespace | Tier::Indentation => by_lines(text, needle, tier),
            Tier::LookAlikes => folded(text, needle),
        };
        (!places.is_empty()).then_some(Match { tier, places })
    })
}

/// A line of the text: content `start..end`, and whether a `\n` follows.
struct Line<'a> {
    start: usize,
    body: &'a str,
    newline: bool,
}

fn lines_of(text: &str) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut start = 0;
    for piece in text.split_inclusive('\n') {
        let newline = piece.ends_with('\n');
        let body = piece.strip_suffix('\n').unwrap_or(piece);
        out.push(Line {
            start,
            body,
            newline,
        });
        start += piece.len();
    }
    out
}

/// What a line tier compares of a line.
fn line_key(line: &str, tier: Tier) -> &str {
    match tier {
        Tier::TrailingWhitespace => line.trim_end(),
        _ => line.trim(),
    }
}

fn by_lines(text: &str, needle: &str, tier: Tier) -> Vec<Place> {
    let (body, wants_newline) = match needle.strip_suffix('\n') {
        Some(body) => (body, true),
        None => (needle, false),
    };
    let quoted: Vec<&str> = body.split('\n').collect();
    let file = lines_of(text);
    let n = quoted.len();
    if n == 0 || file.len() < n {
        return Vec::new();
    }
    let quoted_keys: Vec<&str> = quoted.iter().map(|q| line_key(q, tier)).collect();
    let file_keys: Vec<&str> = file.iter().map(|f| line_key(f.body, tier)).collect();
    // Knuth–Morris–Pratt over the lines' keys: every window, overlapping
    // ones too, in time linear in the lines, however repetitive they are.
    let mut fail = vec![0usize; n];
    let mut k = 0;
    for i in 1..n {
        while k > 0 && quoted_keys[i] != quoted_keys[k] {
            k = fail[k - 1];
        }
        if quoted_keys[i] == quoted_keys[k] {
            k += 1;
        }
        fail[i] = k;
    }
    let mut places = Vec::new();
    let mut k = 0;
    for (j, line_key) in file_keys.iter().enumerate() {
        while k > 0 && *line_key != quoted_keys[k] {
            k = fail[k - 1];
        }
        if *line_key == quoted_keys[k] {
            k += 1;
        }
        if k < n {
            continue;
        }
        k = fail[n - 1];
        let window = &file[j + 1 - n..=j];
        let last = &window[n - 1];
        if wants_newline && !last.newline {
            continue;
        }
        let end = last.start + last.body.len() + usize::from(wants_newline);
        let reindent = (tier == Tier::Indentation).then(|| reindent(window, &quoted));
        places.push(Place {
            range: window[0].start..end,
            reindent,
        });
    }
    places
}

/// The indentation map of one place: anchored at its first non-blank line,
/// scaled by the first pair of lines that indent differently from it.
fn reindent(window: &[Line<'_>], quoted: &[&str]) -> Reindent {
    let pairs: Vec<(usize, usize)> = window
        .iter()
        .zip(quoted)
        .filter(|(f, _)| !f.body.trim().is_empty())
        .map(|(f, q)| (width(indent_of(q)), width(indent_of(f.body))))
        .collect();
    let tabs = window.iter().any(|f| indent_of(f.body).contains('\t'));
    let (from, to) = pairs.first().copied().unwrap_or((0, 0));
    let (num, den) = pairs
        .iter()
        .find(|&&(q, f)| q > from && f > to)
        .map(|&(q, f)| (f - to, q - from))
        .unwrap_or((1, 1));
    Reindent {
        from,
        to,
        num,
        den,
        tabs,
    }
}

/// The ASCII form of a look-alike character: `Some("")` for the zero-width
/// characters, `None` for a character that is not a look-alike.
fn fold_char(c: char) -> Option<&'static str> {
    Some(match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' | '\u{02BC}' => "'",
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' | '\u{00AB}'
        | '\u{00BB}' => "\"",
        '\u{00A0}'
        | '\u{1680}'
        | '\u{2000}'..='\u{200A}'
        | '\u{202F}'
        | '\u{205F}'
        | '\u{3000}' => " ",
        '\u{2010}'..='\u{2015}' | '\u{2212}' => "-",
        '\u{2026}' => "...",
        '\u{200B}' | '\u{200C}' | '\u{200D}' | '\u{2060}' | '\u{FEFF}' => "",
        _ => return None,
    })
}

fn fold(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| fold_char(c).is_some()) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match fold_char(c) {
            Some(ascii) => out.push_str(ascii),
            None => out.push(c),
        }
    }
    Cow::Owned(out)
}

fn folded(text: &str, needle: &str) -> Vec<Place> {
    let (text_f, needle_f) = (fold(text), fold(needle));
    let unchanged = matches!((&text_f, &needle_f), (Cow::Borrowed(_), Cow::Borrowed(_)));
    if needle_f.is_empty() || unchanged {
        return Vec::new();
    }
    let found: Vec<Range<usize>> = text_f
        .match_indices(needle_f.as_ref())
        .map(|(i, _)| i..i + needle_f.len())
        .collect();
    if found.is_empty() {
        return Vec::new();
    }
    // Map folded offsets back to the text: a place starts at the first
    // character whose folded form it starts in, and ends after the last
    // character whose folded form it ends in.
    let mut starts = vec![0usize; found.len()];
    let mut ends = vec![0usize; found.len()];
    let (mut si, mut ei) = (0usize, 0usize);
    let mut cum = 0usize;
    for (at, c) in text.char_indices() {
        let out = fold_char(c).map_or(c.len_utf8(), str::len);
        if out == 0 {
            continue;
        }
        let covers = cum..cum + out;
        while si < found.len() && covers.contains(&found[si].start) {
            starts[si] = at;
            si += 1;
        }
        while ei < found.len() && found[ei].end > covers.start && found[ei].end <= covers.end {
            ends[ei] = at + c.len_utf8();
            ei += 1;
        }
        cum += out;
    }
    starts
        .into_iter()
        .zip(ends)
        .map(|(s, e)| Place {
            range: s..e,
            reindent: None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str, needle: &str) -> (Tier, String) {
        let m = locate(text, needle, &Tier::ALL).expect("found");
        assert_eq!(m.places.len(), 1, "{m:?}");
        (m.tier, text[m.places[0].range.clone()].to_owned())
    }

    #[test]
    fn exact_wins_over_every_tier() {
        assert_eq!(one("a  \na\n", "a\n"), (Tier::Exact, "a\n".into()));
        let m = locate("x y x", "x", &Tier::ALL).unwrap();
        assert_eq!((m.tier, m.places.len()), (Tier::Exact, 2));
    }

    #[test]
    fn trailing_whitespace_is_ignored_per_line() {
        let text = "fn a() {   \n    b();\t\n}\n";
        assert_eq!(
            one(text, "fn a() {\n    b();\n"),
            (Tier::TrailingWhitespace, "fn a() {   \n    b();\t\n".into())
        );
        // Without the final newline the region stops before it.
        assert_eq!(
            one(text, "fn a() { \n    b();"),
            (Tier::TrailingWhitespace, "fn a() {   \n    b();\t".into())
        );
        // A quote ending in a newline needs a line ending in one.
        assert!(locate("a  \nb  ", "a\nb\n", &Tier::ALL).is_none());
    }

    #[test]
    fn indentation_is_normalised_and_new_string_reindented() {
        let text = "impl A {\n\tfn f() {\n\t\tg();\n\t}\n}\n";
        let m = locate(text, "fn f() {\n    g();\n}\n", &Tier::ALL).unwrap();
        assert_eq!(m.tier, Tier::Indentation);
        let place = &m.places[0];
        assert_eq!(&text[place.range.clone()], "\tfn f() {\n\t\tg();\n\t}\n");
        assert_eq!(
            place.replacement("fn f() {\n    g();\n    h();\n\n}\n"),
            "\tfn f() {\n\t\tg();\n\t\th();\n\n\t}\n"
        );
        // Two-space quote of a four-space file: scaled.
        let text = "x:\n    if a:\n        b()\n";
        let m = locate(text, "if a:\n  b()\n", &Tier::ALL).unwrap();
        assert_eq!(m.tier, Tier::Indentation);
        assert_eq!(
            m.places[0].replacement("if a:\n  c()\n  if d:\n    e()\n"),
            "    if a:\n        c()\n        if d:\n            e()\n"
        );
    }

    #[test]
    fn look_alikes_are_folded_anywhere_in_a_line() {
        let text = "say(\u{201C}hi\u{201D});\u{00A0}x \u{2014} y\u{200B}z\n";
        assert_eq!(
            one(text, "say(\"hi\");"),
            (Tier::LookAlikes, "say(\u{201C}hi\u{201D});".into())
        );
        assert_eq!(
            one(text, "x - yz"),
            (Tier::LookAlikes, "x \u{2014} y\u{200B}z".into())
        );
        // And the other way: the quote has the look-alike.
        assert_eq!(
            one("it's fine...\n", "it\u{2019}s fine\u{2026}"),
            (Tier::LookAlikes, "it's fine...".into())
        );
    }

    #[test]
    fn the_first_tier_with_a_place_decides_even_with_several() {
        let text = "a \nb\na\t\nb\n";
        let m = locate(text, "a\nb\n", &Tier::ALL).unwrap();
        assert_eq!((m.tier, m.places.len()), (Tier::TrailingWhitespace, 2));
        // Overlapping places both count.
        let m = locate("} \n} \n} \n", "}\n}\n", &Tier::ALL).unwrap();
        assert_eq!(m.places.len(), 2);
    }

    #[test]
    fn whitespace_needles_are_found_by_no_tolerant_tier() {
        assert!(locate("a  \n", " \n", &Tier::ALL[1..]).is_none());
        assert!(locate("a\u{200B}b", "\u{200B}", &[Tier::LookAlikes]).is_none());
        assert!(locate("abc", "", &Tier::ALL).is_none());
    }

    #[test]
    fn repetitive_lines_are_matched_in_linear_time_with_every_overlap() {
        // KMP over line keys: a quote of many equal lines against a file of
        // many more finds every (overlapping) window.
        let text = "a \n".repeat(2_000);
        let quote = "a\n".repeat(500);
        let m = locate(&text, &quote, &Tier::ALL).unwrap();
        assert_eq!(m.tier, Tier::TrailingWhitespace);
        assert_eq!(m.places.len(), 1_501);
        assert_eq!(m.places[1].range, 3..3 + 1_500);
        // A partial prefix before the real place does not hide it.
        let m = locate("x \nx \ny \n", "x\ny\n", &Tier::ALL).unwrap();
        assert_eq!(m.places.len(), 1);
        assert_eq!(m.places[0].range, 3..9);
    }
}
