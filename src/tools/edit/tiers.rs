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
//! assert_eq!(place.replacement("    let x = 2;\n").unwrap(), "\tlet x = 2;\n");
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
    /// Every place found, in order of their start. Places may overlap, in
    /// every tier (each counts: two overlapping places are two places).
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
    /// [`Tier::Indentation`], where every line's indentation is moved to
    /// the file's. When the quote's lines are indented relative to each
    /// other as the file's are, by one shift (scaled when they indent by
    /// different steps, written with tabs when the file's lines there are
    /// indented with tabs); when they are not, each line of `new` takes
    /// the indentation of the file's line it stands for (the same line of
    /// `old_string`, or the one it replaces line for line), or of the lines
    /// the quote indents as it does; [`IndentationUnclear`] when some line
    /// has none of these, rather than a guess.
    pub fn replacement<'a>(&self, new: &'a str) -> Result<Cow<'a, str>, IndentationUnclear> {
        match &self.reindent {
            None => Ok(Cow::Borrowed(new)),
            Some(r) => r.apply(new).map(Cow::Owned),
        }
    }
}

/// A place found after normalising indentation whose `old_string` is
/// indented, line to line, otherwise than the file, where a line of
/// `new_string` stands for no line of the file: re-indenting it would be
/// a guess.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndentationUnclear;

/// Columns a tab counts for when indentation widths are compared.
const TAB: usize = 4;

/// How to move a `new_string`'s indentation to the file's.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Reindent {
    /// The quote's relative indentation is the file's: one shift.
    Shift(Shift),
    /// It is not: line by line.
    Lines(Box<LineMap>),
}

/// A line indented `w` columns in the quote becomes
/// `to + (w - from) * num / den` columns.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Shift {
    from: usize,
    to: usize,
    num: usize,
    den: usize,
    tabs: bool,
}

impl Shift {
    fn cols(&self, w: usize) -> usize {
        let (w, from, to) = (w as i128, self.from as i128, self.to as i128);
        let (num, den) = (self.num as i128, self.den as i128);
        let moved = to + ((w - from) * num).div_euclid(den);
        usize::try_from(moved.max(0)).unwrap_or(0)
    }
}

/// The quote's lines and the file's indentation of each.
#[derive(Clone, Debug, PartialEq, Eq)]
struct LineMap {
    /// Each quoted line without its indentation, and its width.
    quoted: Vec<(String, usize)>,
    /// The file's indentation of each (`None` for a blank line).
    file: Vec<Option<String>>,
    tabs: bool,
}

fn push_indent(out: &mut String, cols: usize, tabs: bool) {
    if tabs {
        out.extend(std::iter::repeat_n('\t', cols / TAB));
        out.extend(std::iter::repeat_n(' ', cols % TAB));
    } else {
        out.extend(std::iter::repeat_n(' ', cols));
    }
}

impl Reindent {
    fn apply(&self, new: &str) -> Result<String, IndentationUnclear> {
        let map = match self {
            Reindent::Shift(shift) => {
                let mut out = String::with_capacity(new.len() + 16);
                for line in new.split_inclusive('\n') {
                    let body = line.trim_start_matches([' ', '\t']);
                    if body.trim().is_empty() {
                        out.push_str(line);
                        continue;
                    }
                    let w = width(&line[..line.len() - body.len()]);
                    push_indent(&mut out, shift.cols(w), shift.tabs);
                    out.push_str(body);
                }
                return Ok(out);
            }
            Reindent::Lines(map) => map,
        };
        let lines: Vec<&str> = new.split_inclusive('\n').collect();
        let keys: Vec<&str> = lines.iter().map(|l| l.trim()).collect();
        let old_keys: Vec<&str> = map.quoted.iter().map(|(k, _)| k.as_str()).collect();
        // Which quoted line each line of `new` stands for: the same text,
        // or the one it replaces in a block of as many lines.
        let mut counterpart: Vec<Option<usize>> = vec![None; lines.len()];
        for op in similar::capture_diff_slices(similar::Algorithm::Myers, &old_keys, &keys) {
            let (tag, old, new) = op.as_tag_tuple();
            let paired = match tag {
                similar::DiffTag::Equal => true,
                similar::DiffTag::Replace => old.len() == new.len(),
                _ => false,
            };
            if paired {
                for (o, n) in old.zip(new) {
                    counterpart[n] = Some(o);
                }
            }
        }
        let mut out = String::with_capacity(new.len() + 16);
        for (i, line) in lines.iter().enumerate() {
            let body = line.trim_start_matches([' ', '\t']);
            if body.trim().is_empty() {
                out.push_str(line);
                continue;
            }
            let w = width(&line[..line.len() - body.len()]);
            let by_line = counterpart[i].and_then(|o| {
                let file = map.file[o].as_ref()?;
                let q = map.quoted[o].1;
                Some(width(file).saturating_add(w).saturating_sub(q))
            });
            let cols = match by_line {
                Some(cols) => cols,
                None => {
                    // The file's indentation of the quoted lines indented
                    // as this one is, if they all agree.
                    let mut seen = map
                        .quoted
                        .iter()
                        .zip(&map.file)
                        .filter(|((_, q), f)| *q == w && f.is_some())
                        .filter_map(|(_, f)| f.as_deref().map(width));
                    let first = seen.next().ok_or(IndentationUnclear)?;
                    if seen.any(|other| other != first) {
                        return Err(IndentationUnclear);
                    }
                    first
                }
            };
            push_indent(&mut out, cols, map.tabs);
            out.push_str(body);
        }
        Ok(out)
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
/// when it is not empty). Overlapping places all count, in every tier.
pub fn locate(text: &str, needle: &str, tiers: &[Tier]) -> Option<Match> {
    let tier = first_tier(text, needle, tiers)?;
    Some(Match {
        tier,
        places: places(text, needle, tier).collect(),
    })
}

/// The first of `tiers` that finds `needle` anywhere in `text`, without
/// collecting its places.
pub(crate) fn first_tier(text: &str, needle: &str, tiers: &[Tier]) -> Option<Tier> {
    if needle.is_empty() {
        return None;
    }
    tiers
        .iter()
        .copied()
        .find(|&tier| places(text, needle, tier).next().is_some())
}

/// Every place one tier finds, found as the iteration goes (in text order,
/// overlapping ones too), so that a million places never sit in memory.
pub(crate) fn places<'a>(text: &'a str, needle: &'a str, tier: Tier) -> Places<'a> {
    if needle.is_empty() {
        return Places::None;
    }
    match tier {
        Tier::Exact => Places::Exact(Occurrences::new(text.as_bytes(), needle.as_bytes())),
        _ if needle.trim().is_empty() => Places::None,
        Tier::TrailingWhitespace | Tier::Indentation => {
            LinePlaces::new(text, needle, tier).map_or(Places::None, Places::Lines)
        }
        Tier::LookAlikes => Folded::new(text, needle).map_or(Places::None, Places::Folded),
    }
}

/// The places of one tier, lazily ([`places`]).
pub(crate) enum Places<'a> {
    /// None at all.
    None,
    /// [`Tier::Exact`].
    Exact(Occurrences<'a>),
    /// The two line tiers.
    Lines(LinePlaces<'a>),
    /// [`Tier::LookAlikes`].
    Folded(Box<Folded<'a>>),
}

impl Iterator for Places<'_> {
    type Item = Place;

    fn next(&mut self) -> Option<Place> {
        match self {
            Places::None => None,
            Places::Exact(o) => o.next().map(Place::exact),
            Places::Lines(l) => l.next(),
            Places::Folded(f) => f.next(),
        }
    }
}

/// Every occurrence of a needle in a haystack, overlapping ones too, in
/// time linear in both: a substring search when the needle cannot overlap
/// itself, Knuth–Morris–Pratt over the bytes when it can (`end\nend`).
pub(crate) struct Occurrences<'a> {
    hay: Cow<'a, [u8]>,
    needle: Cow<'a, [u8]>,
    at: usize,
    how: Search,
}

enum Search {
    /// The needle has no border: occurrences never overlap.
    Substring(Box<memchr::memmem::Finder<'static>>),
    /// The needle's failure function, and how much of it is matched.
    Kmp { fail: Vec<usize>, k: usize },
}

impl<'a> Occurrences<'a> {
    pub(crate) fn new(hay: impl Into<Cow<'a, [u8]>>, needle: impl Into<Cow<'a, [u8]>>) -> Self {
        let (hay, needle) = (hay.into(), needle.into());
        let fail = failure(&needle);
        let how = if fail.last().copied().unwrap_or(0) == 0 {
            Search::Substring(Box::new(memchr::memmem::Finder::new(&needle).into_owned()))
        } else {
            Search::Kmp { fail, k: 0 }
        };
        Self {
            hay,
            needle,
            at: 0,
            how,
        }
    }
}

impl Iterator for Occurrences<'_> {
    type Item = Range<usize>;

    fn next(&mut self) -> Option<Range<usize>> {
        let n = self.needle.len();
        if n == 0 {
            return None;
        }
        match &mut self.how {
            Search::Substring(finder) => {
                let rest = self.hay.get(self.at..)?;
                // `at` only grows: a needle found is searched for after it.
                let i = self.at + finder.find(rest)?;
                self.at = i + n;
                Some(i..i + n)
            }
            Search::Kmp { fail, k } => {
                while let Some(&b) = self.hay.get(self.at) {
                    self.at += 1;
                    while *k > 0 && self.needle[*k] != b {
                        *k = fail[*k - 1];
                    }
                    if self.needle[*k] == b {
                        *k += 1;
                    }
                    if *k == n {
                        *k = fail[n - 1];
                        return Some(self.at - n..self.at);
                    }
                }
                None
            }
        }
    }
}

/// The Knuth–Morris–Pratt failure function of `items`.
fn failure<T: PartialEq>(items: &[T]) -> Vec<usize> {
    let mut fail = vec![0usize; items.len()];
    let mut k = 0;
    for i in 1..items.len() {
        while k > 0 && items[i] != items[k] {
            k = fail[k - 1];
        }
        if items[i] == items[k] {
            k += 1;
        }
        fail[i] = k;
    }
    fail
}

/// What a line tier compares of a line.
fn line_key(line: &str, tier: Tier) -> &str {
    match tier {
        Tier::TrailingWhitespace => line.trim_end(),
        _ => line.trim(),
    }
}

/// The places of a line tier, found line by line: Knuth–Morris–Pratt over
/// the lines' keys, every window (overlapping ones too), in time linear in
/// the lines however repetitive they are, holding only the last lines of
/// one window.
pub(crate) struct LinePlaces<'a> {
    text: &'a str,
    tier: Tier,
    quoted: Vec<&'a str>,
    keys: Vec<&'a str>,
    fail: Vec<usize>,
    wants_newline: bool,
    /// Where the next line starts.
    pos: usize,
    k: usize,
    /// The last `quoted.len()` lines: start, end of the body, newline.
    window: std::collections::VecDeque<(usize, usize, bool)>,
}

impl<'a> LinePlaces<'a> {
    fn new(text: &'a str, needle: &'a str, tier: Tier) -> Option<Self> {
        let (body, wants_newline) = match needle.strip_suffix('\n') {
            Some(body) => (body, true),
            None => (needle, false),
        };
        let quoted: Vec<&str> = body.split('\n').collect();
        if quoted.is_empty() {
            return None;
        }
        let keys: Vec<&str> = quoted.iter().map(|q| line_key(q, tier)).collect();
        let fail = failure(&keys);
        Some(Self {
            text,
            tier,
            window: std::collections::VecDeque::with_capacity(quoted.len()),
            quoted,
            keys,
            fail,
            wants_newline,
            pos: 0,
            k: 0,
        })
    }
}

impl Iterator for LinePlaces<'_> {
    type Item = Place;

    fn next(&mut self) -> Option<Place> {
        let n = self.quoted.len();
        let bytes = self.text.as_bytes();
        // `split_inclusive` gives no line for an empty text, nor after a
        // final newline.
        while self.pos < bytes.len() {
            let start = self.pos;
            let (end, newline) = match memchr::memchr(b'\n', &bytes[start..]) {
                Some(i) => (start + i, true),
                None => (bytes.len(), false),
            };
            self.pos = end + usize::from(newline);
            if self.window.len() == n {
                self.window.pop_front();
            }
            self.window.push_back((start, end, newline));
            let key = line_key(&self.text[start..end], self.tier);
            while self.k > 0 && key != self.keys[self.k] {
                self.k = self.fail[self.k - 1];
            }
            if key == self.keys[self.k] {
                self.k += 1;
            }
            if self.k < n {
                continue;
            }
            self.k = self.fail[n - 1];
            let (first, _, _) = self.window[0];
            let (_, last_end, last_newline) = self.window[n - 1];
            if self.wants_newline && !last_newline {
                continue;
            }
            let end = last_end + usize::from(self.wants_newline);
            let reindent = (self.tier == Tier::Indentation).then(|| {
                let bodies: Vec<&str> = self
                    .window
                    .iter()
                    .map(|&(s, e, _)| &self.text[s..e])
                    .collect();
                reindent(&bodies, &self.quoted)
            });
            return Some(Place {
                range: first..end,
                reindent,
            });
        }
        None
    }
}

/// The indentation map of one place: anchored at its first non-blank line,
/// scaled by the first pair of lines that indent differently from it; line
/// by line when that shift does not give every line of the window the
/// file's indentation.
fn reindent(window: &[&str], quoted: &[&str]) -> Reindent {
    let pairs: Vec<(usize, usize)> = window
        .iter()
        .zip(quoted)
        .filter(|(f, _)| !f.trim().is_empty())
        .map(|(f, q)| (width(indent_of(q)), width(indent_of(f))))
        .collect();
    let tabs = window.iter().any(|f| indent_of(f).contains('\t'));
    let (from, to) = pairs.first().copied().unwrap_or((0, 0));
    let (num, den) = pairs
        .iter()
        .find(|&&(q, f)| q > from && f > to)
        .map(|&(q, f)| (f - to, q - from))
        .unwrap_or((1, 1));
    let shift = Shift {
        from,
        to,
        num,
        den,
        tabs,
    };
    if pairs.iter().all(|&(q, f)| shift.cols(q) == f) {
        return Reindent::Shift(shift);
    }
    Reindent::Lines(Box::new(LineMap {
        quoted: quoted
            .iter()
            .map(|q| (q.trim().to_owned(), width(indent_of(q))))
            .collect(),
        file: window
            .iter()
            .map(|f| (!f.trim().is_empty()).then(|| indent_of(f).to_owned()))
            .collect(),
        tabs,
    }))
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

/// The places of [`Tier::LookAlikes`]: the needle's occurrences in the
/// folded text (overlapping ones too), mapped back to the text as they are
/// found: a place starts at the first character whose folded form it
/// starts in, and ends after the last character whose folded form it ends
/// in. Holds the folded text, not the places.
pub(crate) struct Folded<'a> {
    text: &'a str,
    /// The needle's occurrences in the folded text (which it holds).
    found: Occurrences<'static>,
    starts: Cursor<'a>,
    ends: Cursor<'a>,
}

/// A walk over the text's characters with the folded offset each starts
/// at; zero-width characters are skipped.
struct Cursor<'a> {
    chars: std::str::CharIndices<'a>,
    /// The current character: where it is, its length, and the folded
    /// range it covers.
    current: Option<(usize, usize, Range<usize>)>,
    cum: usize,
}

impl<'a> Cursor<'a> {
    fn new(text: &'a str) -> Self {
        let mut cursor = Self {
            chars: text.char_indices(),
            current: None,
            cum: 0,
        };
        cursor.advance();
        cursor
    }

    fn advance(&mut self) {
        self.current = None;
        for (at, c) in self.chars.by_ref() {
            let out = fold_char(c).map_or(c.len_utf8(), str::len);
            if out == 0 {
                continue;
            }
            let covers = self.cum..self.cum + out;
            self.cum += out;
            self.current = Some((at, c.len_utf8(), covers));
            return;
        }
    }

    /// The character whose folded form satisfies `hit`, moving forward.
    fn find(&mut self, hit: impl Fn(&Range<usize>) -> bool) -> Option<(usize, usize)> {
        loop {
            let (at, len, covers) = self.current.clone()?;
            if hit(&covers) {
                return Some((at, len));
            }
            self.advance();
        }
    }
}

impl<'a> Folded<'a> {
    fn new(text: &'a str, needle: &str) -> Option<Box<Self>> {
        let (text_f, needle_f) = (fold(text), fold(needle));
        let unchanged = matches!((&text_f, &needle_f), (Cow::Borrowed(_), Cow::Borrowed(_)));
        if needle_f.is_empty() || unchanged {
            return None;
        }
        Some(Box::new(Self {
            text,
            found: Occurrences::new(
                text_f.into_owned().into_bytes(),
                needle_f.into_owned().into_bytes(),
            ),
            starts: Cursor::new(text),
            ends: Cursor::new(text),
        }))
    }
}

impl Iterator for Folded<'_> {
    type Item = Place;

    fn next(&mut self) -> Option<Place> {
        let found = self.found.next()?;
        let (start, _) = self
            .starts
            .find(|covers| covers.contains(&found.start))
            .unwrap_or((self.text.len(), 0));
        let (at, len) = self
            .ends
            .find(|covers| found.end > covers.start && found.end <= covers.end)
            .unwrap_or((self.text.len(), 0));
        Some(Place {
            range: start..at + len,
            reindent: None,
        })
    }
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
            place
                .replacement("fn f() {\n    g();\n    h();\n\n}\n")
                .unwrap(),
            "\tfn f() {\n\t\tg();\n\t\th();\n\n\t}\n"
        );
        // Two-space quote of a four-space file: scaled.
        let text = "x:\n    if a:\n        b()\n";
        let m = locate(text, "if a:\n  b()\n", &Tier::ALL).unwrap();
        assert_eq!(m.tier, Tier::Indentation);
        assert_eq!(
            m.places[0]
                .replacement("if a:\n  c()\n  if d:\n    e()\n")
                .unwrap(),
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
