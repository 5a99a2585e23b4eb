//! Where an edit's `old_string` lands in a text: exactly, or, when it has no
//! exact match, by the tolerant tiers of issues 17 and 31, tried in order,
//! the strictest first (a tier never comes before one whose matches it
//! takes in, so a looser tier cannot decide where a stricter one would):
//!
//! 1. [`Tier::TrailingWhitespace`]: whole lines, trailing whitespace of
//!    every line ignored;
//! 2. [`Tier::Indentation`]: whole lines, leading indentation ignored too
//!    (tabs or spaces, any depth); the place remembers how the file indents
//!    so that `new_string` can be re-indented ([`Place::replacement`]);
//! 3. [`Tier::InnerWhitespace`]: runs of spaces and tabs inside a line
//!    compared as one space (never as none), trailing whitespace ignored,
//!    indentation compared exactly, anywhere in a line;
//! 4. [`Tier::LookAlikes`]: Unicode look-alikes folded (curly quotes,
//!    non-breaking and other spaces, dashes, the ellipsis, zero-width
//!    characters), anywhere in a line;
//! 5. [`Tier::Escaped`]: backslash escapes written literally in
//!    `old_string` (`\n`, `\t`, `\"`, `\'`, `\\`, by a model that escaped
//!    its JSON twice) read as the characters they stand for, then found
//!    exactly; `new_string` is read the same way.
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
//!
//! let text = "const   x    =  5;\n";
//! let found = locate(text, "x = 5", &Tier::ALL).unwrap();
//! assert_eq!(found.tier, Tier::InnerWhitespace);
//! assert_eq!(&text[found.places[0].range.clone()], "x    =  5");
//!
//! let text = "say(\"hi\");\nend();\n";
//! let found = locate(text, r#"say(\"hi\");\nend();"#, &Tier::ALL).unwrap();
//! assert_eq!(found.tier, Tier::Escaped);
//! let place = &found.places[0];
//! assert_eq!(&text[place.range.clone()], "say(\"hi\");\nend();");
//! assert_eq!(place.replacement(r#"say(\"bye\");"#).unwrap(), "say(\"bye\");");
//! ```

use std::borrow::Cow;
use std::ops::Range;

/// How an `old_string` was found. The order of [`Tier::ALL`] is the order
/// in which they are tried: the strictest first, and never a tier before
/// one whose matches it takes in (see the module documentation).
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
    /// Runs of spaces and tabs inside a line compared as one space (a run
    /// never matches no run), trailing whitespace ignored, indentation
    /// compared exactly; `new_string` is written as given.
    InnerWhitespace,
    /// Unicode look-alike characters folded to their ASCII forms.
    LookAlikes,
    /// Backslash escapes written literally in `old_string` (`\n`, `\t`,
    /// `\"`, `\'`, `\\`) read as the characters they stand for, then found
    /// exactly; `new_string` is read the same way. Tried last, only when
    /// reading the escapes changes `old_string`. An `old_string` with a
    /// raw newline, tab or double quote was not escaped throughout: then
    /// only `\"` and `\'` are read, and not at all when it also holds
    /// `\n`, `\t` or `\\` (which might be the code's own escapes).
    Escaped,
}

impl Tier {
    /// Every tier, in the order they are tried: exactly first; trailing
    /// whitespace before indentation (whose matches take its own in);
    /// inner whitespace after both (it ignores trailing whitespace too, and
    /// compares indentation exactly, so a quote off only in indentation is
    /// re-indented by its tier rather than landed unindented); look-alikes
    /// after the whitespace tiers; escapes last, since reading them
    /// rewrites `new_string`, only when nothing else finds the quote.
    pub const ALL: [Tier; 6] = [
        Tier::Exact,
        Tier::TrailingWhitespace,
        Tier::Indentation,
        Tier::InnerWhitespace,
        Tier::LookAlikes,
        Tier::Escaped,
    ];

    /// The note the success text ends with (none for an exact match).
    pub fn note(self) -> Option<&'static str> {
        match self {
            Tier::Exact => None,
            Tier::TrailingWhitespace => Some("(matched ignoring trailing whitespace)"),
            Tier::Indentation => {
                Some("(matched after normalising indentation; new_string re-indented)")
            }
            Tier::InnerWhitespace => {
                Some("(matched with runs of spaces and tabs inside lines compared as one space)")
            }
            Tier::LookAlikes => Some("(matched after folding look-alike characters)"),
            Tier::Escaped => Some(
                "(matched after reading backslash escapes in old_string as the characters they stand for; new_string read the same way)",
            ),
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
    rewrite: Rewrite,
}

/// What a place does to `new_string` before writing it.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Rewrite {
    /// Nothing: written as given.
    None,
    /// [`Tier::Indentation`]: re-indented to the file.
    Reindent(Reindent),
    /// [`Tier::Escaped`]: its escapes read as `old_string`'s were.
    Unescape(Reading),
}

impl Place {
    /// A place found exactly: its replacement is `new` as given.
    pub fn exact(range: Range<usize>) -> Self {
        Self {
            range,
            rewrite: Rewrite::None,
        }
    }

    /// `new` as it is to be written at this place: as given, except after
    /// [`Tier::Escaped`], where its backslash escapes are read as
    /// `old_string`'s were, and after [`Tier::Indentation`], where every
    /// line's indentation is moved to the file's. When the quote's lines are indented relative to each
    /// other as the file's are, by one shift (scaled when they indent by
    /// different steps, written with tabs when the file's lines there are
    /// indented with tabs); when they are not, each line of `new` takes
    /// the indentation of the file's line it stands for (the same line of
    /// `old_string`, or the one it replaces line for line), or of the lines
    /// the quote indents as it does; [`IndentationUnclear`] when some line
    /// has none of these, rather than a guess.
    pub fn replacement<'a>(&self, new: &'a str) -> Result<Cow<'a, str>, IndentationUnclear> {
        match &self.rewrite {
            Rewrite::None => Ok(Cow::Borrowed(new)),
            Rewrite::Reindent(r) => r.apply(new).map(Cow::Owned),
            Rewrite::Unescape(reading) => Ok(reading.read(new)),
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
        Tier::InnerWhitespace => {
            Folded::new(text, needle, Fold::InnerWhitespace).map_or(Places::None, Places::Folded)
        }
        Tier::LookAlikes => {
            Folded::new(text, needle, Fold::LookAlikes).map_or(Places::None, Places::Folded)
        }
        Tier::Escaped => Reading::of(needle)
            .and_then(|reading| {
                let read = reading.read(needle);
                // Unchanged, or blank once read: nothing to find.
                if read == needle || read.trim().is_empty() {
                    return None;
                }
                Some(Places::Escaped(
                    Occurrences::new(text.as_bytes(), read.into_owned().into_bytes()),
                    reading,
                ))
            })
            .unwrap_or(Places::None),
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
    /// [`Tier::InnerWhitespace`] and [`Tier::LookAlikes`].
    Folded(Box<Folded<'a>>),
    /// [`Tier::Escaped`]: the needle as read, found exactly.
    Escaped(Occurrences<'a>, Reading),
}

impl Iterator for Places<'_> {
    type Item = Place;

    fn next(&mut self) -> Option<Place> {
        match self {
            Places::None => None,
            Places::Exact(o) => o.next().map(Place::exact),
            Places::Lines(l) => l.next(),
            Places::Folded(f) => f.next(),
            Places::Escaped(o, reading) => o.next().map(|range| Place {
                range,
                rewrite: Rewrite::Unescape(*reading),
            }),
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
            let rewrite = if self.tier == Tier::Indentation {
                let bodies: Vec<&str> = self
                    .window
                    .iter()
                    .map(|&(s, e, _)| &self.text[s..e])
                    .collect();
                Rewrite::Reindent(reindent(&bodies, &self.quoted))
            } else {
                Rewrite::None
            };
            return Some(Place {
                range: first..end,
                rewrite,
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

/// How a folding tier writes a text before searching it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fold {
    /// [`Tier::InnerWhitespace`]: [`collapse`].
    InnerWhitespace,
    /// [`Tier::LookAlikes`]: [`fold`].
    LookAlikes,
}

/// What a run of spaces and tabs is, for [`Tier::InnerWhitespace`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Run {
    /// It ends its line: dropped.
    Trailing,
    /// It starts its line (and does not end it): kept as it is, so
    /// indentation is compared exactly.
    Leading,
    /// Between two characters of a line: one space.
    Inner,
}

fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// The end of the run of spaces and tabs that starts at `at`.
fn run_end(bytes: &[u8], at: usize) -> usize {
    at + bytes[at..].iter().take_while(|&&b| is_blank(b)).count()
}

/// What the run `at..end` of `s` is. `end_ends_line`: whether the end of
/// `s` ends a line (true of the file's text; not of a quote, which may
/// stop in the middle of one: a quote's last run is inner, so that `a `
/// never matches `ab`).
fn run_kind(bytes: &[u8], at: usize, end: usize, end_ends_line: bool) -> Run {
    let rest = &bytes[end..];
    if rest.starts_with(b"\n") || rest.starts_with(b"\r\n") || (rest.is_empty() && end_ends_line) {
        Run::Trailing
    } else if at == 0 || bytes[at - 1] == b'\n' {
        Run::Leading
    } else {
        Run::Inner
    }
}

/// `s` with every run of spaces and tabs inside a line written as one
/// space and every run that ends a line dropped; indentation is kept.
fn collapse(s: &str, end_ends_line: bool) -> Cow<'_, str> {
    let bytes = s.as_bytes();
    let mut out: Option<String> = None;
    let mut from = 0;
    let mut at = 0;
    while let Some(i) = bytes[at..].iter().position(|&b| is_blank(b)) {
        let start = at + i;
        let end = run_end(bytes, start);
        at = end;
        let keep = match run_kind(bytes, start, end, end_ends_line) {
            Run::Leading => continue,
            Run::Inner if end - start == 1 && bytes[start] == b' ' => continue,
            Run::Inner => " ",
            Run::Trailing => "",
        };
        let out = out.get_or_insert_with(|| String::with_capacity(s.len()));
        out.push_str(&s[from..start]);
        out.push_str(keep);
        from = end;
    }
    match out {
        None => Cow::Borrowed(s),
        Some(mut out) => {
            out.push_str(&s[from..]);
            Cow::Owned(out)
        }
    }
}

/// The places of a folding tier ([`Tier::InnerWhitespace`],
/// [`Tier::LookAlikes`]): the needle's occurrences in the folded text
/// (overlapping ones too), mapped back to the text as they are found: a
/// place starts at the first piece of the text whose folded form it
/// starts in, and ends after the last piece whose folded form it ends in
/// (a piece is a character, or a run of spaces and tabs folded as one).
/// Holds the folded text, not the places.
pub(crate) struct Folded<'a> {
    text: &'a str,
    /// The needle's occurrences in the folded text (which it holds).
    found: Occurrences<'static>,
    starts: Cursor<'a>,
    ends: Cursor<'a>,
}

/// A walk over the pieces of the text with the folded offsets each
/// covers; pieces folded to nothing are skipped.
struct Cursor<'a> {
    text: &'a str,
    fold: Fold,
    /// Where the next piece starts.
    at: usize,
    /// The end of the indentation being walked, a space or tab a piece.
    leading_until: usize,
    /// The current piece: where it is, its length, and the folded
    /// range it covers.
    current: Option<(usize, usize, Range<usize>)>,
    cum: usize,
}

impl<'a> Cursor<'a> {
    fn new(text: &'a str, fold: Fold) -> Self {
        let mut cursor = Self {
            text,
            fold,
            at: 0,
            leading_until: 0,
            current: None,
            cum: 0,
        };
        cursor.advance();
        cursor
    }

    /// The piece at `at`: its length and the length of its folded form.
    fn piece(&mut self, at: usize) -> Option<(usize, usize)> {
        let c = self.text[at..].chars().next()?;
        let len = c.len_utf8();
        let bytes = self.text.as_bytes();
        Some(match self.fold {
            Fold::LookAlikes => (len, fold_char(c).map_or(len, str::len)),
            Fold::InnerWhitespace if !is_blank(bytes[at]) || at < self.leading_until => (len, len),
            Fold::InnerWhitespace => {
                let end = run_end(bytes, at);
                match run_kind(bytes, at, end, true) {
                    Run::Trailing => (end - at, 0),
                    Run::Inner => (end - at, 1),
                    Run::Leading => {
                        self.leading_until = end;
                        (1, 1)
                    }
                }
            }
        })
    }

    fn advance(&mut self) {
        self.current = None;
        while let Some((len, out)) = self.piece(self.at) {
            let at = self.at;
            self.at += len;
            if out == 0 {
                continue;
            }
            let covers = self.cum..self.cum + out;
            self.cum += out;
            self.current = Some((at, len, covers));
            return;
        }
    }

    /// The piece whose folded form satisfies `hit`, moving forward.
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
    fn new(text: &'a str, needle: &str, how: Fold) -> Option<Box<Self>> {
        let (text_f, needle_f) = match how {
            Fold::LookAlikes => (fold(text), fold(needle)),
            Fold::InnerWhitespace => (collapse(text, true), collapse(needle, false)),
        };
        let unchanged = matches!((&text_f, &needle_f), (Cow::Borrowed(_), Cow::Borrowed(_)));
        if needle_f.trim().is_empty() || unchanged {
            return None;
        }
        Some(Box::new(Self {
            text,
            found: Occurrences::new(
                text_f.into_owned().into_bytes(),
                needle_f.into_owned().into_bytes(),
            ),
            starts: Cursor::new(text, how),
            ends: Cursor::new(text, how),
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
            rewrite: Rewrite::None,
        })
    }
}

/// How [`Tier::Escaped`] reads the backslash escapes of a quote (and of
/// its `new_string`), left to right, a backslash and the character after
/// it at a time; any other pair is kept as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reading {
    /// `\n`, `\t`, `\"`, `\'` and `\\` read: the quote was escaped
    /// throughout (no raw newline, tab or double quote in it), as a JSON
    /// string escaped twice is.
    Full,
    /// Only `\"` and `\'` read: the quote has a raw newline, tab or double
    /// quote, so it was not escaped throughout, and holds no `\n`, `\t`
    /// or `\\` (which might then be the code's own escapes).
    Quotes,
}

impl Reading {
    /// How `quote` is read, or `None` when it cannot be read without a
    /// guess (a quote not escaped throughout that holds `\n`, `\t` or
    /// `\\`) or holds no backslash.
    pub(crate) fn of(quote: &str) -> Option<Reading> {
        if !quote.contains('\\') {
            return None;
        }
        // Left to right, a backslash and the character after it at a time.
        let (mut raw, mut code_escapes) = (false, false);
        let mut chars = quote.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => code_escapes |= matches!(chars.next(), Some('n' | 't' | '\\')),
                '\n' | '\t' | '"' => raw = true,
                _ => {}
            }
        }
        match (raw, code_escapes) {
            (false, _) => Some(Reading::Full),
            (true, false) => Some(Reading::Quotes),
            (true, true) => None,
        }
    }

    /// `s` with its escapes read.
    pub(crate) fn read(self, s: &str) -> Cow<'_, str> {
        if !s.contains('\\') {
            return Cow::Borrowed(s);
        }
        let mut out = String::with_capacity(s.len());
        let mut chars = s.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            let read = match (self, chars.peek()) {
                (Reading::Full, Some('n')) => '\n',
                (Reading::Full, Some('t')) => '\t',
                (Reading::Full, Some('\\')) => '\\',
                (Reading::Quotes, Some('\\')) => {
                    // A pair kept as written, so that its second backslash
                    // starts no escape.
                    chars.next();
                    out.push_str("\\\\");
                    continue;
                }
                (_, Some('"')) => '"',
                (_, Some('\'')) => '\'',
                _ => {
                    out.push('\\');
                    continue;
                }
            };
            chars.next();
            out.push(read);
        }
        Cow::Owned(out)
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
    fn inner_runs_of_spaces_and_tabs_compare_as_one_space_either_way() {
        // The file has the wider runs, or the quote has.
        let text = "fn f() {\n    const   x    =  5;\n}\n";
        assert_eq!(
            one(text, "const x = 5;"),
            (Tier::InnerWhitespace, "const   x    =  5;".into())
        );
        assert_eq!(
            one("a = b;\n", "a  =\tb;"),
            (Tier::InnerWhitespace, "a = b;".into())
        );
        // Several lines: indentation compared exactly, trailing
        // whitespace dropped, the span ends where the quote ends.
        let text = "if a  {\n\tb(1,  2);  \n}\n";
        assert_eq!(
            one(text, "if a {\n\tb(1, 2);\n"),
            (Tier::InnerWhitespace, "if a  {\n\tb(1,  2);  \n".into())
        );
        assert_eq!(
            one(text, "if a {\n\tb(1, 2);"),
            (Tier::InnerWhitespace, "if a  {\n\tb(1,  2);".into())
        );
        // A quote that starts or ends in a run takes the file's whole run.
        assert_eq!(
            one("x   =  1\n", " = 1"),
            (Tier::InnerWhitespace, "   =  1".into())
        );
        assert_eq!(
            one("x \t = 1\n", "x  "),
            (Tier::InnerWhitespace, "x \t ".into())
        );
    }

    #[test]
    fn a_run_never_matches_no_run_and_indentation_is_not_forgiven() {
        for (text, quote) in [
            ("ab\n", "a b"),
            ("a b\n", "ab"),
            ("a+b\n", "a + b"),
            // A quote's last run is inside a line: it needs a run there.
            ("ab\n", "a "),
            ("a  \nb\n", "a b"),
            // Indentation (after the first line) is compared exactly.
            ("f  (x)\n\tg()\n", "f (x)\n    g()"),
            ("f  (x)\n    g()\n", "f (x)\n  g()"),
        ] {
            assert!(
                places(text, quote, Tier::InnerWhitespace).next().is_none(),
                "{text:?} {quote:?}"
            );
        }
        assert_eq!(collapse("  a \t b  \n  c\t", true), "  a b\n  c");
        assert_eq!(collapse("a \t", false), "a ");
    }

    #[test]
    fn two_places_with_runs_collapsed_are_both_found() {
        let m = locate("x  = 1\ny = 2\nx =   1\n", "x = 1", &Tier::ALL).unwrap();
        assert_eq!((m.tier, m.places.len()), (Tier::InnerWhitespace, 2)); // Overlapping places both count, each mapped to its own bytes.
        let m = locate("a  a\ta", "a a", &Tier::ALL).unwrap();
        let ranges: Vec<_> = m.places.iter().map(|p| p.range.clone()).collect();
        assert_eq!((m.tier, ranges), (Tier::InnerWhitespace, vec![0..4, 3..6]));
        // A long file of runs: one pass, every place.
        let text = "k  =  v;\n".repeat(20_000);
        let m = locate(&text, "k = v;\nk = v;", &Tier::ALL).unwrap();
        assert_eq!((m.tier, m.places.len()), (Tier::InnerWhitespace, 19_999));
        assert_eq!(m.places[1].range, 9..26);
    }

    #[test]
    fn escapes_written_literally_are_read_and_new_string_read_the_same_way() {
        let text = "fn main() {\n\tprintf(\"a\\n\");\n}\n";
        // Escaped throughout, as a JSON string escaped twice.
        let quote = r#"\tprintf(\"a\\n\");\n}"#;
        let m = locate(text, quote, &Tier::ALL).unwrap();
        assert_eq!((m.tier, m.places.len()), (Tier::Escaped, 1));
        let place = &m.places[0];
        assert_eq!(&text[place.range.clone()], "\tprintf(\"a\\n\");\n}");
        assert_eq!(
            place.replacement(r#"\tputs(\"b\\n\");\n}"#).unwrap(),
            "\tputs(\"b\\n\");\n}"
        );
        // Quotes only escaped, with raw newlines: only quotes are read.
        let text = "say(\"hi\")\nsay('it')\n";
        let quote = "say(\\\"hi\\\")\nsay(\\'it\\')";
        let m = locate(text, quote, &Tier::ALL).unwrap();
        assert_eq!(m.tier, Tier::Escaped);
        assert_eq!(
            m.places[0].replacement("say(\\\"a\\n\\\")\\\\").unwrap(),
            "say(\"a\\n\")\\\\"
        );
    }

    #[test]
    fn escapes_that_read_two_ways_or_change_nothing_find_nothing() {
        // Raw newline (not escaped throughout) with `\n` inside: the
        // code's own escape, or an escaped newline? Not guessed.
        let text = "printf(\"a\\n\");\nreturn 0;\nprintf(\"a\n\");\n";
        let quote = "printf(\\\"a\\n\\\");\nreturn 0;";
        assert!(places(text, quote, Tier::Escaped).next().is_none());
        assert_eq!(Reading::of(quote), None);
        assert_eq!(Reading::of("a\\\\b\tc"), None);
        assert_eq!(Reading::of("\"a\\tb\""), None);
        // No escape, an unknown one, or blank once read.
        assert!(places("a\nb", "a b", Tier::Escaped).next().is_none());
        assert!(places("C:\\dir", "C:\\dir", Tier::Escaped).next().is_none());
        assert!(places("x\n\t\n", "\\n\\t", Tier::Escaped).next().is_none());
        assert_eq!(Reading::Full.read("\\d\\\\n\\"), "\\d\\n\\");
        assert_eq!(Reading::Quotes.read("\\\\\"\\n"), "\\\\\"\\n");
    }

    #[test]
    fn a_literal_backslash_n_in_the_file_is_found_exactly_first() {
        // A C string holding backslash-n, quoted as the file has it.
        let text = "puts(\"a\\n\");\nputs(\"a\n\");\n";
        let m = locate(text, "puts(\"a\\n\");", &Tier::ALL).unwrap();
        assert_eq!((m.tier, m.places.len()), (Tier::Exact, 1));
        assert_eq!(m.places[0].range, 0..12);
        assert_eq!(m.places[0].replacement("x\\n").unwrap(), "x\\n");
    }

    #[test]
    fn escaped_text_at_two_places_is_two_places() {
        let m = locate("a\tb\nc\na\tb\n", "a\\tb", &Tier::ALL).unwrap();
        assert_eq!((m.tier, m.places.len()), (Tier::Escaped, 2));
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
