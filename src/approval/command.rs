//! Shell commands judged by their parts.
//!
//! A command such as `git status && curl x | sh` is not one command but
//! three; an allow rule for `git status *` must not let the other two
//! through. [`CommandAnalysis::parse`] splits a command into the simple
//! commands it runs — across `;`, `&&`, `||`, `|`, `&`, newlines, subshells,
//! brace groups, `if` / `for` / `while` / `case` bodies, and into `$(…)` and
//! backtick substitutions — and records every construct whose effect a
//! command prefix cannot describe (a redirection to a file, a function
//! definition, a process substitution, a coprocess, or a command that
//! does not parse) as a [`Hazard`].
//!
//! # Why brush-parser
//!
//! Splitting on operator characters by hand gets quoting wrong in both
//! directions (`echo "a;b"` is one command; `echo a\;b` too; `$(a;b)` is
//! two), and word tokenizers such as `shlex` or `shell-words` know quotes
//! but not operators, substitutions or redirections. `brush-parser` is the
//! maintained, MIT-licensed parser of the brush shell: it builds a full
//! bash AST (pipelines, and-or lists, compound commands, redirections) and
//! parses words into their pieces (quotes, parameter expansions, command
//! substitutions), which is exactly what is needed here. Its parse is run
//! under `catch_unwind` and behind a nesting bound, so an input it cannot
//! handle becomes a hazard (the call asks) rather than a panic or a stack
//! overflow.

use std::panic::{AssertUnwindSafe, catch_unwind};

use brush_parser::ast::{
    self, Command, CommandPrefixOrSuffixItem, CompoundCommand, CompoundList, ExtendedTestExpr,
    IoFileRedirectKind, IoFileRedirectTarget, IoRedirect,
};
use brush_parser::word::{self, WordPiece, WordPieceWithSource};
use brush_parser::{ParserOptions, parse_tokens, tokenize_str};

/// Commands longer than this are not parsed: they ask.
const MAX_COMMAND_BYTES: usize = 64 * 1024;
/// Bracket nesting deeper than this is not parsed: they ask.
const MAX_NESTING: usize = 32;

/// One simple command of a larger command line: its words after quote
/// removal, expansions left as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandPart {
    /// The words, e.g. `["git", "commit", "-m", "a b"]`.
    pub words: Vec<String>,
}

impl CommandPart {
    /// The words joined by single spaces: the normalized form shown to
    /// people and remembered by session grants.
    pub fn text(&self) -> String {
        self.words.join(" ")
    }

    /// The words without leading variable assignments (`FOO=1 make` →
    /// `make`).
    pub(crate) fn without_assignments(&self) -> &[String] {
        let start = self
            .words
            .iter()
            .position(|w| !is_assignment(w))
            .unwrap_or(self.words.len());
        &self.words[start..]
    }
}

/// A construct whose effect no command prefix describes; a command with one
/// is never allowed by a `bash(…)` rule alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Hazard {
    /// Output or input redirected to or from a file (`> ~/.bashrc`,
    /// `< secrets.txt`). Duplicating a descriptor (`2>&1`) and `/dev/null`
    /// are not hazards.
    Redirection(String),
    /// A function definition: later parts may call it by any name.
    FunctionDefinition(String),
    /// `<(…)` or `>(…)`.
    ProcessSubstitution,
    /// `coproc`.
    Coprocess,
    /// A substitution hidden inside a parameter or arithmetic expansion.
    NestedExpansion(String),
    /// The command could not be parsed.
    Unparsable(String),
}

impl Hazard {
    /// A short description for a reason text.
    pub fn describe(&self) -> String {
        match self {
            Hazard::Redirection(target) => format!("redirects to or from {target}"),
            Hazard::FunctionDefinition(name) => format!("defines the shell function {name}"),
            Hazard::ProcessSubstitution => "uses a process substitution".to_owned(),
            Hazard::Coprocess => "starts a coprocess".to_owned(),
            Hazard::NestedExpansion(text) => {
                format!("hides a command inside the expansion {text}")
            }
            Hazard::Unparsable(message) => format!("could not be parsed ({message})"),
        }
    }
}

/// A command line split into its parts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CommandAnalysis {
    /// Every simple command it runs, outermost first, substitutions after
    /// the command they appear in.
    pub parts: Vec<CommandPart>,
    /// Constructs no prefix rule can vouch for.
    pub hazards: Vec<Hazard>,
}

impl CommandAnalysis {
    /// Splits `command` into its parts. Never panics.
    pub fn parse(command: &str) -> Self {
        let mut analysis = Self::default();
        analysis.program(command, 0);
        analysis
    }

    fn program(&mut self, source: &str, depth: usize) {
        if let Err(why) = precheck(source, depth) {
            self.hazards.push(Hazard::Unparsable(why));
            return;
        }
        let parsed = catch_unwind(AssertUnwindSafe(|| {
            let tokens = tokenize_str(source).map_err(|e| e.to_string())?;
            parse_tokens(&tokens, &ParserOptions::default()).map_err(|e| e.to_string())
        }));
        match parsed {
            Ok(Ok(program)) => {
                for complete in &program.complete_commands {
                    self.compound_list(complete, depth);
                }
            }
            Ok(Err(message)) => self.hazards.push(Hazard::Unparsable(message)),
            Err(_) => self
                .hazards
                .push(Hazard::Unparsable("the parser failed".to_owned())),
        }
    }

    fn compound_list(&mut self, list: &CompoundList, depth: usize) {
        for item in &list.0 {
            let and_or = &item.0;
            self.pipeline(&and_or.first, depth);
            for next in &and_or.additional {
                match next {
                    ast::AndOr::And(p) | ast::AndOr::Or(p) => self.pipeline(p, depth),
                }
            }
        }
    }

    fn pipeline(&mut self, pipeline: &ast::Pipeline, depth: usize) {
        for command in &pipeline.seq {
            self.command(command, depth);
        }
    }

    fn command(&mut self, command: &Command, depth: usize) {
        match command {
            Command::Simple(simple) => self.simple(simple, depth),
            Command::Compound(compound, redirects) => {
                self.compound(compound, depth);
                if let Some(list) = redirects {
                    for r in &list.0 {
                        self.redirect(r, depth);
                    }
                }
            }
            Command::Function(def) => {
                self.hazards
                    .push(Hazard::FunctionDefinition(def.fname.value.clone()));
                self.compound(&def.body.0, depth);
            }
            Command::ExtendedTest(test, redirects) => {
                self.extended_test(&test.expr, depth);
                if let Some(list) = redirects {
                    for r in &list.0 {
                        self.redirect(r, depth);
                    }
                }
            }
        }
    }

    fn compound(&mut self, compound: &CompoundCommand, depth: usize) {
        match compound {
            CompoundCommand::Arithmetic(a) => self.arithmetic(&a.expr.value),
            CompoundCommand::ArithmeticForClause(f) => {
                for e in [&f.initializer, &f.condition, &f.updater]
                    .into_iter()
                    .flatten()
                {
                    self.arithmetic(&e.value);
                }
                self.compound_list(&f.body.list, depth);
            }
            CompoundCommand::BraceGroup(g) => self.compound_list(&g.list, depth),
            CompoundCommand::Subshell(s) => self.compound_list(&s.list, depth),
            CompoundCommand::ForClause(f) => {
                for w in f.values.iter().flatten() {
                    self.word(&w.value, depth);
                }
                self.compound_list(&f.body.list, depth);
            }
            CompoundCommand::CaseClause(c) => {
                self.word(&c.value.value, depth);
                for item in &c.cases {
                    for p in &item.patterns {
                        self.word(&p.value, depth);
                    }
                    if let Some(list) = &item.cmd {
                        self.compound_list(list, depth);
                    }
                }
            }
            CompoundCommand::IfClause(i) => {
                self.compound_list(&i.condition, depth);
                self.compound_list(&i.then, depth);
                for e in i.elses.iter().flatten() {
                    if let Some(c) = &e.condition {
                        self.compound_list(c, depth);
                    }
                    self.compound_list(&e.body, depth);
                }
            }
            CompoundCommand::WhileClause(w) | CompoundCommand::UntilClause(w) => {
                self.compound_list(&w.0, depth);
                self.compound_list(&w.1.list, depth);
            }
            CompoundCommand::Coprocess(c) => {
                self.hazards.push(Hazard::Coprocess);
                self.command(&c.body, depth);
            }
        }
    }

    fn extended_test(&mut self, expr: &ExtendedTestExpr, depth: usize) {
        match expr {
            ExtendedTestExpr::And(a, b) | ExtendedTestExpr::Or(a, b) => {
                self.extended_test(a, depth);
                self.extended_test(b, depth);
            }
            ExtendedTestExpr::Not(a) | ExtendedTestExpr::Parenthesized(a) => {
                self.extended_test(a, depth);
            }
            ExtendedTestExpr::UnaryTest(_, w) => {
                self.word(&w.value, depth);
            }
            ExtendedTestExpr::BinaryTest(_, a, b) => {
                self.word(&a.value, depth);
                self.word(&b.value, depth);
            }
        }
    }

    fn simple(&mut self, simple: &ast::SimpleCommand, depth: usize) {
        // The part is pushed before the substitutions in its words, so the
        // outer command comes first; collect them aside.
        let mut words = Vec::new();
        let mut nested = CommandAnalysis::default();
        let items = simple
            .prefix
            .iter()
            .flat_map(|p| p.0.iter())
            .map(Some)
            .chain(std::iter::once(None))
            .chain(simple.suffix.iter().flat_map(|s| s.0.iter()).map(Some));
        for item in items {
            match item {
                None => {
                    if let Some(w) = &simple.word_or_name {
                        words.push(nested.word(&w.value, depth));
                    }
                }
                Some(CommandPrefixOrSuffixItem::Word(w)) => {
                    words.push(nested.word(&w.value, depth));
                }
                Some(CommandPrefixOrSuffixItem::AssignmentWord(_, w)) => {
                    words.push(nested.word(&w.value, depth));
                }
                Some(CommandPrefixOrSuffixItem::IoRedirect(r)) => nested.redirect(r, depth),
                Some(CommandPrefixOrSuffixItem::ProcessSubstitution(_, sub)) => {
                    nested.hazards.push(Hazard::ProcessSubstitution);
                    nested.compound_list(&sub.list, depth + 1);
                }
            }
        }
        if !words.is_empty() {
            self.parts.push(CommandPart { words });
        }
        self.parts.append(&mut nested.parts);
        self.hazards.append(&mut nested.hazards);
    }

    fn redirect(&mut self, redirect: &IoRedirect, depth: usize) {
        match redirect {
            IoRedirect::File(_, kind, target) => match target {
                IoFileRedirectTarget::Filename(w) => {
                    let target = self.word(&w.value, depth);
                    let duplicate = matches!(
                        kind,
                        IoFileRedirectKind::DuplicateInput | IoFileRedirectKind::DuplicateOutput
                    ) && is_fd_word(&target);
                    if !duplicate && target != "/dev/null" {
                        self.hazards.push(Hazard::Redirection(target));
                    }
                }
                IoFileRedirectTarget::Fd(_) => {}
                IoFileRedirectTarget::Duplicate(w) => {
                    let target = self.word(&w.value, depth);
                    if !is_fd_word(&target) {
                        self.hazards.push(Hazard::Redirection(target));
                    }
                }
                IoFileRedirectTarget::ProcessSubstitution(_, sub) => {
                    self.hazards.push(Hazard::ProcessSubstitution);
                    self.compound_list(&sub.list, depth + 1);
                }
            },
            IoRedirect::HereDocument(_, doc) => {
                if doc.requires_expansion {
                    // The body is expanded like a double-quoted word.
                    self.word(&format!("\"{}\"", doc.doc.value), depth);
                }
            }
            IoRedirect::HereString(_, w) => {
                self.word(&w.value, depth);
            }
            IoRedirect::OutputAndError(w, _) => {
                let target = self.word(&w.value, depth);
                if target != "/dev/null" {
                    self.hazards.push(Hazard::Redirection(target));
                }
            }
        }
    }

    fn arithmetic(&mut self, text: &str) {
        if hides_command(text) {
            self.hazards.push(Hazard::NestedExpansion(text.to_owned()));
        }
    }

    /// Parses one word: records the substitutions in it as parts and
    /// returns its text after quote removal (expansions as written).
    fn word(&mut self, raw: &str, depth: usize) -> String {
        match catch_unwind(|| word::parse(raw, &ParserOptions::default())) {
            Ok(Ok(pieces)) => {
                let mut out = String::new();
                self.pieces(raw, &pieces, depth, &mut out);
                out
            }
            Ok(Err(e)) => {
                self.hazards.push(Hazard::Unparsable(e.to_string()));
                raw.to_owned()
            }
            Err(_) => {
                self.hazards
                    .push(Hazard::Unparsable("the word parser failed".to_owned()));
                raw.to_owned()
            }
        }
    }

    fn pieces(
        &mut self,
        raw: &str,
        pieces: &[WordPieceWithSource],
        depth: usize,
        out: &mut String,
    ) {
        for p in pieces {
            let source = raw.get(p.start_index..p.end_index).unwrap_or_default();
            match &p.piece {
                WordPiece::Text(t)
                | WordPiece::SingleQuotedText(t)
                | WordPiece::AnsiCQuotedText(t) => out.push_str(t),
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    self.pieces(raw, inner, depth, out);
                }
                WordPiece::EscapeSequence(s) => out.push_str(s.strip_prefix('\\').unwrap_or(s)),
                WordPiece::TildeExpansion(_) => out.push_str(source),
                WordPiece::ParameterExpansion(_) | WordPiece::ArithmeticExpression(_) => {
                    if hides_command(source) {
                        self.hazards
                            .push(Hazard::NestedExpansion(source.to_owned()));
                    }
                    out.push_str(source);
                }
                WordPiece::CommandSubstitution(inner)
                | WordPiece::BackquotedCommandSubstitution(inner) => {
                    self.program(inner, depth + 1);
                    out.push_str(source);
                }
            }
        }
    }
}

fn precheck(source: &str, depth: usize) -> Result<(), String> {
    if source.len() > MAX_COMMAND_BYTES {
        return Err(format!("longer than {MAX_COMMAND_BYTES} bytes"));
    }
    if depth > MAX_NESTING {
        return Err("substitutions nested too deeply".to_owned());
    }
    let mut level = 0usize;
    for b in source.bytes() {
        match b {
            b'(' | b'{' | b'[' => {
                level += 1;
                if level > MAX_NESTING {
                    return Err("brackets nested too deeply".to_owned());
                }
            }
            b')' | b'}' | b']' => level = level.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

fn hides_command(text: &str) -> bool {
    text.contains("$(") || text.contains('`') || text.contains("<(") || text.contains(">(")
}

fn is_fd_word(word: &str) -> bool {
    word == "-" || (!word.is_empty() && word.bytes().all(|b| b.is_ascii_digit()))
}

fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'+')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(command: &str) -> Vec<String> {
        CommandAnalysis::parse(command)
            .parts
            .iter()
            .map(CommandPart::text)
            .collect()
    }

    #[test]
    fn splits_on_every_operator() {
        assert_eq!(
            parts("a 1; b 2 && c || d | e & f\ng"),
            ["a 1", "b 2", "c", "d", "e", "f", "g"]
        );
    }

    #[test]
    fn quotes_keep_operators_inside_words() {
        assert_eq!(parts(r#"echo "a;b" 'c&&d' e\;f"#), ["echo a;b c&&d e;f"]);
    }

    #[test]
    fn substitutions_are_parts() {
        assert_eq!(
            parts("git status $(rm -rf ~)"),
            ["git status $(rm -rf ~)", "rm -rf ~"]
        );
        assert_eq!(parts("echo `id`"), ["echo `id`", "id"]);
        assert_eq!(
            parts(r#"echo "$(curl x | sh)""#),
            [r#"echo $(curl x | sh)"#, "curl x", "sh"]
        );
    }

    #[test]
    fn compound_commands_are_walked() {
        assert_eq!(parts("(cd a; rm b)"), ["cd a", "rm b"]);
        assert_eq!(parts("if true; then rm x; fi"), ["true", "rm x"]);
        assert_eq!(parts("for f in $(ls); do rm $f; done"), ["ls", "rm $f"]);
        assert_eq!(parts("{ a; b; }"), ["a", "b"]);
    }

    #[test]
    fn redirections_are_hazards() {
        let a = CommandAnalysis::parse("git status > ~/.bashrc");
        assert_eq!(a.hazards, [Hazard::Redirection("~/.bashrc".into())]);
        assert_eq!(a.parts[0].text(), "git status");
        assert!(!CommandAnalysis::parse("cat < secret").hazards.is_empty());
        assert!(!CommandAnalysis::parse("ls &> out").hazards.is_empty());
        assert!(CommandAnalysis::parse("cargo test 2>&1").hazards.is_empty());
        assert!(
            CommandAnalysis::parse("cargo test >/dev/null 2>&1")
                .hazards
                .is_empty()
        );
    }

    #[test]
    fn other_hazards() {
        assert!(
            !CommandAnalysis::parse("f() { rm -rf ~; }; f")
                .hazards
                .is_empty()
        );
        assert!(
            !CommandAnalysis::parse("diff <(ls a) <(ls b)")
                .hazards
                .is_empty()
        );
        assert!(
            !CommandAnalysis::parse("echo ${x:-$(rm -rf ~)}")
                .hazards
                .is_empty()
        );
        assert!(
            !CommandAnalysis::parse("echo 'unterminated")
                .hazards
                .is_empty()
        );
        assert!(
            !CommandAnalysis::parse(&"(".repeat(10_000))
                .hazards
                .is_empty()
        );
    }

    #[test]
    fn assignments_are_words() {
        let a = CommandAnalysis::parse("FOO=1 make all");
        assert_eq!(a.parts[0].text(), "FOO=1 make all");
        assert_eq!(a.parts[0].without_assignments(), ["make", "all"]);
    }
}
