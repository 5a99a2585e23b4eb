//! Shell commands judged by their parts.
//!
//! A command such as `git status && curl x | sh` is not one command but
//! three; an allow rule for `git status *` must not let the other two
//! through. [`CommandAnalysis::parse`] splits a command into the simple
//! commands it runs — across `;`, `&&`, `||`, `|`, `&`, newlines, subshells,
//! brace groups, `if` / `for` / `while` / `case` bodies, and into `$(…)` and
//! backtick substitutions — and records as a [`Hazard`] every construct
//! whose effect a command prefix cannot describe.
//!
//! # Only what is fully understood can be allowed
//!
//! The analysis is inverted: a command is covered by allow rules only when
//! it is *fully understood* — simple commands whose every word reduces to
//! literal text, or to expansions that cannot evaluate anything (`$X`,
//! `${X:-literal}`, `${X#pattern}`, a command substitution whose own parts
//! are analysed). Bash evaluates the *contents* of variables as code in
//! arithmetic, `[[ ]]`, array subscripts and `@P` expansions, so
//! `X='a[$(rm f)]'; (( X ))` runs `rm f` although no word shows it. Every
//! construct whose evaluation can run code the analysis cannot see is a
//! hazard that no allow rule covers ([`Hazard::hides_commands`]):
//! arithmetic of any kind, `[[ ]]`, `test -v`, array subscripts, evaluated
//! offsets and indices in parameter expansions, `${!X}`, `@P`/`@E`,
//! `printf -v`, `read -a`, `mapfile`, `eval`, `source`, `trap`, `alias`,
//! `exec`, `let`, `declare -i`/`-n`, shells and interpreters given inline
//! code or reading their program from standard input, a command word that
//! is not literal text, and anything the parser cannot parse.
//!
//! # Wrappers
//!
//! Commands that run another command — `env`, `command`, `builtin`,
//! `exec`, `nice`, `nohup`, `timeout`, `time`, `sudo`, `doas`, `setsid`,
//! `stdbuf`, `xargs`, `find -exec/-execdir/-ok/-okdir` — are unwrapped
//! (with their options): the inner command is one more part, which deny
//! rules see and allow rules must cover too. `find … -delete` removes
//! files, so it adds the part `rm <find's starting points>`: a deny rule on
//! `rm *` catches it. Shell code inside `bash -c`, `eval`, `trap` and
//! `git -c alias.x='!…'` is parsed for more parts as well, but stays
//! opaque: the analysis never vouches for it.
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

mod wrappers;

use std::panic::{AssertUnwindSafe, catch_unwind};

use brush_parser::ast::{
    self, AssignmentName, AssignmentValue, Command, CommandPrefixOrSuffixItem, CompoundCommand,
    CompoundList, IoFileRedirectKind, IoFileRedirectTarget, IoRedirect,
};
use brush_parser::word::{
    self, Parameter, ParameterExpr, ParameterTransformOp, WordPiece, WordPieceWithSource,
};
use brush_parser::{ParserOptions, parse_tokens, tokenize_str};

/// Commands longer than this are not parsed: they ask.
const MAX_COMMAND_BYTES: usize = 64 * 1024;
/// Bracket nesting (and substitutions, inline code and wrappers inside one
/// another) deeper than this is not parsed: they ask.
const MAX_NESTING: usize = 32;

/// Why arithmetic is opaque, shared by every arithmetic construct.
const ARITHMETIC: &str = "arithmetic evaluates the contents of variables as expressions, and an array subscript inside them can run any command, which the analysis cannot see";
/// Why array subscripts are opaque.
const SUBSCRIPT: &str = "an array subscript is evaluated as arithmetic, which can run any command hidden in a variable's value, and the analysis cannot see it";

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
    /// A construct whose evaluation can run code the analysis cannot see:
    /// arithmetic, `[[ ]]`, array subscripts, `eval`, `bash -c`, …
    Opaque {
        /// The construct as written (or its name), e.g. `(( X ))`.
        construct: String,
        /// Why it is opaque, as a clause: "arithmetic evaluates …".
        why: String,
    },
    /// A command word that is not literal text (`$X`, `$(echo rm)`, a
    /// glob): which program runs is unknown until it runs.
    UnknownCommand(String),
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
            Hazard::Unparsable(message) => {
                format!("could not be parsed ({message}), so what it runs is unknown")
            }
            Hazard::Opaque { construct, why } => format!("uses `{construct}`: {why}"),
            Hazard::UnknownCommand(word) => format!(
                "runs a command named by `{word}`, which is not literal text, so which program runs is unknown until it runs"
            ),
        }
    }

    /// Whether the construct can run commands the analysis cannot see.
    /// Such a command is never covered by allow rules, and where a `bash`
    /// deny rule exists it is never allowed without a person.
    pub fn hides_commands(&self) -> bool {
        matches!(
            self,
            Hazard::Opaque { .. }
                | Hazard::UnknownCommand(_)
                | Hazard::Unparsable(_)
                | Hazard::NestedExpansion(_)
        )
    }

    /// The hazard of a command run in a terminal session (`bash` with
    /// `tty`): whatever is typed into it runs too.
    pub fn terminal_session() -> Self {
        Hazard::opaque(
            "tty",
            "it runs in a terminal session, where whatever is typed into it with write_stdin runs too, which no rule can see",
        )
    }

    fn opaque(construct: impl Into<String>, why: impl Into<String>) -> Self {
        Hazard::Opaque {
            construct: construct.into(),
            why: why.into(),
        }
    }
}

/// A command line split into its parts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CommandAnalysis {
    /// Every simple command it runs, outermost first: after each command
    /// the commands it wraps (`timeout 5 rm x` → `rm x`), then the
    /// substitutions in its words.
    pub parts: Vec<CommandPart>,
    /// Constructs no prefix rule can vouch for.
    pub hazards: Vec<Hazard>,
}

/// One word as the analysis sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Word {
    /// After quote removal, expansions as written.
    pub(crate) text: String,
    /// Whether the word is exactly `text` when bash runs it: no expansion,
    /// substitution, unquoted glob or brace expansion.
    pub(crate) literal: bool,
    /// As written.
    pub(crate) source: String,
}

impl Word {
    /// A literal word made by the analysis (`rm` for `find -delete`).
    pub(crate) fn literal(text: &str) -> Self {
        Self {
            text: text.to_owned(),
            literal: true,
            source: text.to_owned(),
        }
    }
}

impl CommandAnalysis {
    /// Splits `command` into its parts. Never panics.
    pub fn parse(command: &str) -> Self {
        let mut analysis = Self::default();
        analysis.program(command, 0);
        analysis
    }

    /// Whether allow rules may vouch for the command at all: no construct
    /// in it can run code the analysis cannot see.
    pub fn fully_understood(&self) -> bool {
        !self.hazards.iter().any(Hazard::hides_commands)
    }

    /// The hazards that hide commands.
    pub fn opaque_hazards(&self) -> impl Iterator<Item = &Hazard> {
        self.hazards.iter().filter(|h| h.hides_commands())
    }

    pub(crate) fn program(&mut self, source: &str, depth: usize) {
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
                self.hazards.push(Hazard::opaque(
                    "[[ … ]]",
                    "[[ ]] evaluates the contents of variables as arithmetic in comparisons such as -eq, and an array subscript inside them can run any command, which the analysis cannot see",
                ));
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
            CompoundCommand::Arithmetic(a) => {
                self.hazards.push(Hazard::opaque(
                    format!("(( {} ))", a.expr.value.trim()),
                    ARITHMETIC,
                ));
                self.arithmetic_text(&a.expr.value, depth);
            }
            CompoundCommand::ArithmeticForClause(f) => {
                self.hazards.push(Hazard::opaque(
                    "for (( … ))",
                    format!("a C-style for loop is arithmetic: {ARITHMETIC}"),
                ));
                for e in [&f.initializer, &f.condition, &f.updater]
                    .into_iter()
                    .flatten()
                {
                    self.arithmetic_text(&e.value, depth);
                }
                self.compound_list(&f.body.list, depth);
            }
            CompoundCommand::BraceGroup(g) => self.compound_list(&g.list, depth),
            CompoundCommand::Subshell(s) => self.compound_list(&s.list, depth),
            CompoundCommand::ForClause(f) => {
                if !is_name(&f.variable_name) {
                    self.hazards.push(Hazard::opaque(
                        format!("for {}", f.variable_name),
                        SUBSCRIPT,
                    ));
                }
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

    fn extended_test(&mut self, expr: &ast::ExtendedTestExpr, depth: usize) {
        use ast::ExtendedTestExpr as E;
        match expr {
            E::And(a, b) | E::Or(a, b) => {
                self.extended_test(a, depth);
                self.extended_test(b, depth);
            }
            E::Not(a) | E::Parenthesized(a) => self.extended_test(a, depth),
            E::UnaryTest(_, w) => {
                self.word(&w.value, depth);
            }
            E::BinaryTest(_, a, b) => {
                self.word(&a.value, depth);
                self.word(&b.value, depth);
            }
        }
    }

    fn simple(&mut self, simple: &ast::SimpleCommand, depth: usize) {
        // The part is pushed before the commands it wraps and the
        // substitutions in its words, so the outer command comes first;
        // collect them aside.
        let mut words: Vec<Word> = Vec::new();
        let mut leading_assignments = 0;
        let mut nested = CommandAnalysis::default();
        let prefix = simple
            .prefix
            .iter()
            .flat_map(|p| p.0.iter())
            .map(|i| (true, i));
        let suffix = simple
            .suffix
            .iter()
            .flat_map(|s| s.0.iter())
            .map(|i| (false, i));
        let items = prefix
            .map(Some)
            .chain(std::iter::once(None))
            .chain(suffix.map(Some));
        for item in items {
            match item {
                None => {
                    if let Some(w) = &simple.word_or_name {
                        words.push(nested.word(&w.value, depth));
                    }
                }
                Some((_, CommandPrefixOrSuffixItem::Word(w))) => {
                    words.push(nested.word(&w.value, depth));
                }
                Some((in_prefix, CommandPrefixOrSuffixItem::AssignmentWord(a, w))) => {
                    nested.assignment(a, &w.value);
                    words.push(nested.word(&w.value, depth));
                    if in_prefix {
                        leading_assignments += 1;
                    }
                }
                Some((_, CommandPrefixOrSuffixItem::IoRedirect(r))) => nested.redirect(r, depth),
                Some((_, CommandPrefixOrSuffixItem::ProcessSubstitution(_, sub))) => {
                    nested.hazards.push(Hazard::ProcessSubstitution);
                    nested.compound_list(&sub.list, depth + 1);
                }
            }
        }
        let redirects = simple
            .prefix
            .iter()
            .flat_map(|p| p.0.iter())
            .chain(simple.suffix.iter().flat_map(|s| s.0.iter()))
            .any(|i| matches!(i, CommandPrefixOrSuffixItem::IoRedirect(_)));
        if redirects
            && let Some(w) = words
                .iter()
                .find(|w| w.source.starts_with('{') && w.source.ends_with('}'))
        {
            // `{NAME}>file` stores the descriptor in NAME, and a subscript
            // there (`{a[X]}`) is arithmetic.
            nested.hazards.push(Hazard::opaque(
                format!("{}>…", w.source),
                "a {NAME} before a redirection assigns the descriptor to NAME, evaluating any subscript in it, which can run a command hidden in a variable",
            ));
        }
        if words.is_empty() {
            self.absorb(nested);
            return;
        }
        self.parts.push(CommandPart {
            words: words.iter().map(|w| w.text.clone()).collect(),
        });
        let command = words.split_off(leading_assignments.min(words.len()));
        self.judge(command, depth);
        self.absorb(nested);
    }

    fn absorb(&mut self, mut other: CommandAnalysis) {
        self.parts.append(&mut other.parts);
        self.hazards.append(&mut other.hazards);
    }

    fn assignment(&mut self, assignment: &ast::Assignment, raw: &str) {
        match &assignment.name {
            AssignmentName::ArrayElementName(..) => {
                self.hazards.push(Hazard::opaque(raw, SUBSCRIPT));
                return;
            }
            AssignmentName::VariableName(name) => {
                if let Some(why) = wrappers::code_variable(name) {
                    self.hazards.push(Hazard::opaque(raw, why));
                }
            }
        }
        if let AssignmentValue::Array(_) = &assignment.value {
            self.hazards.push(Hazard::opaque(
                raw,
                "an array assignment evaluates its subscripts as arithmetic, which can run any command hidden in a variable's value",
            ));
        }
    }

    fn redirect(&mut self, redirect: &IoRedirect, depth: usize) {
        match redirect {
            IoRedirect::File(_, kind, target) => match target {
                IoFileRedirectTarget::Filename(w) => {
                    let target = self.word(&w.value, depth).text;
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
                    let target = self.word(&w.value, depth).text;
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
                let body = &doc.doc.value;
                if doc.requires_expansion
                    && ["${", "$(", "$[", "`"].iter().any(|c| body.contains(c))
                {
                    // The body is expanded with its quotes taken as plain
                    // text, which no word form reproduces; what it would
                    // expand is not vouched for.
                    self.hazards.push(Hazard::opaque(
                        "a here-document whose delimiter is not quoted",
                        "its body expands $ and backquote constructs, with quotes in it taken as plain text, so it can run commands the analysis cannot see; quote the delimiter (<<'EOF') to pass the text as written",
                    ));
                }
                if doc.requires_expansion {
                    // Quotes are plain text in a body; read it as a
                    // double-quoted word with them taken out of play.
                    self.word(&format!("\"{}\"", body.replace(['"', '\''], "_")), depth);
                }
            }
            IoRedirect::HereString(_, w) => {
                self.word(&w.value, depth);
            }
            IoRedirect::OutputAndError(w, _) => {
                let target = self.word(&w.value, depth).text;
                if target != "/dev/null" {
                    self.hazards.push(Hazard::Redirection(target));
                }
            }
        }
    }

    /// The text of an arithmetic expression: the substitutions written in
    /// it are parts too (the expression itself is already opaque).
    fn arithmetic_text(&mut self, text: &str, depth: usize) {
        if hides_command(text) {
            self.hazards.push(Hazard::NestedExpansion(text.to_owned()));
            self.word(&format!("\"{}\"", text.replace('"', "")), depth);
        }
    }

    /// Parses one word: records the substitutions in it as parts and the
    /// opaque expansions as hazards.
    pub(crate) fn word(&mut self, raw: &str, depth: usize) -> Word {
        if depth > MAX_NESTING {
            self.hazards
                .push(Hazard::Unparsable("words nested too deeply".to_owned()));
            return Word {
                text: raw.to_owned(),
                literal: false,
                source: raw.to_owned(),
            };
        }
        let mut out = Word {
            text: String::new(),
            literal: true,
            source: raw.to_owned(),
        };
        match catch_unwind(|| word::parse(raw, &ParserOptions::default())) {
            Ok(Ok(pieces)) => {
                self.pieces(raw, &pieces, depth, false, &mut out);
                let (glob, brace) = spans_quotes(raw);
                if glob || brace {
                    // A bracket or brace pair whose parts lie in different
                    // pieces of the word (`{r'',x}m`, `/bin/r[''m]`).
                    out.literal = false;
                }
                if brace && raw.contains('$') {
                    self.hazards.push(Hazard::opaque(
                        raw,
                        "brace expansion happens before parameter expansion, so braces beside a $ can build an expansion (${X@P}, ${!X}, a subscript) that the analysis cannot see",
                    ));
                }
            }
            Ok(Err(e)) => {
                self.hazards.push(Hazard::Unparsable(e.to_string()));
                out.text = raw.to_owned();
                out.literal = false;
            }
            Err(_) => {
                self.hazards
                    .push(Hazard::Unparsable("the word parser failed".to_owned()));
                out.text = raw.to_owned();
                out.literal = false;
            }
        }
        out
    }

    fn pieces(
        &mut self,
        raw: &str,
        pieces: &[WordPieceWithSource],
        depth: usize,
        quoted: bool,
        out: &mut Word,
    ) {
        for p in pieces {
            let source = raw.get(p.start_index..p.end_index).unwrap_or_default();
            match &p.piece {
                WordPiece::Text(t) => {
                    if t.contains("$[") {
                        self.hazards.push(Hazard::opaque(
                            "$[ … ]",
                            format!("$[ ] is the old form of arithmetic expansion: {ARITHMETIC}"),
                        ));
                        out.literal = false;
                    }
                    if !quoted && expands_unquoted(t) {
                        out.literal = false;
                    }
                    out.text.push_str(t);
                }
                WordPiece::SingleQuotedText(t) => out.text.push_str(t),
                WordPiece::AnsiCQuotedText(t) => match decode_ansi_c(t) {
                    Some(decoded) => out.text.push_str(&decoded),
                    None => {
                        out.literal = false;
                        out.text.push_str(t);
                    }
                },
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    self.pieces(raw, inner, depth, true, out);
                }
                WordPiece::EscapeSequence(s) => {
                    out.text.push_str(s.strip_prefix('\\').unwrap_or(s))
                }
                WordPiece::TildeExpansion(_) => out.text.push_str(source),
                WordPiece::ParameterExpansion(expr) => {
                    if hides_command(source) {
                        self.hazards
                            .push(Hazard::NestedExpansion(source.to_owned()));
                    }
                    self.parameter(expr, source, depth);
                    out.literal = false;
                    out.text.push_str(source);
                }
                WordPiece::ArithmeticExpression(e) => {
                    self.hazards.push(Hazard::opaque(
                        source,
                        format!("arithmetic expansion: {ARITHMETIC}"),
                    ));
                    self.arithmetic_text(&e.value, depth + 1);
                    out.literal = false;
                    out.text.push_str(source);
                }
                WordPiece::CommandSubstitution(inner)
                | WordPiece::BackquotedCommandSubstitution(inner) => {
                    self.program(inner, depth + 1);
                    out.literal = false;
                    out.text.push_str(source);
                }
            }
        }
    }

    /// A parameter expansion: plain ones (`$X`, `${X:-word}`, `${X#pat}`)
    /// only substitute text; the words inside are parsed like any word.
    fn parameter(&mut self, expr: &ParameterExpr, source: &str, depth: usize) {
        use ParameterExpr as P;
        let mut inner_words: Vec<&str> = Vec::new();
        let (parameter, indirect) = match expr {
            P::Parameter {
                parameter,
                indirect,
            }
            | P::ParameterLength {
                parameter,
                indirect,
            } => (parameter, *indirect),
            P::UseDefaultValues {
                parameter,
                indirect,
                default_value: value,
                ..
            }
            | P::AssignDefaultValues {
                parameter,
                indirect,
                default_value: value,
                ..
            }
            | P::IndicateErrorIfNullOrUnset {
                parameter,
                indirect,
                error_message: value,
                ..
            }
            | P::UseAlternativeValue {
                parameter,
                indirect,
                alternative_value: value,
                ..
            }
            | P::RemoveSmallestSuffixPattern {
                parameter,
                indirect,
                pattern: value,
            }
            | P::RemoveLargestSuffixPattern {
                parameter,
                indirect,
                pattern: value,
            }
            | P::RemoveSmallestPrefixPattern {
                parameter,
                indirect,
                pattern: value,
            }
            | P::RemoveLargestPrefixPattern {
                parameter,
                indirect,
                pattern: value,
            }
            | P::UppercaseFirstChar {
                parameter,
                indirect,
                pattern: value,
            }
            | P::UppercasePattern {
                parameter,
                indirect,
                pattern: value,
            }
            | P::LowercaseFirstChar {
                parameter,
                indirect,
                pattern: value,
            }
            | P::LowercasePattern {
                parameter,
                indirect,
                pattern: value,
            } => {
                inner_words.extend(value.as_deref());
                (parameter, *indirect)
            }
            P::ReplaceSubstring {
                parameter,
                indirect,
                pattern,
                replacement,
                ..
            } => {
                inner_words.push(pattern);
                inner_words.extend(replacement.as_deref());
                (parameter, *indirect)
            }
            P::Substring { offset, length, .. } => {
                self.hazards.push(Hazard::opaque(
                    source,
                    format!(
                        "the offset and length of ${{X:offset:length}} are arithmetic: {ARITHMETIC}"
                    ),
                ));
                self.arithmetic_text(&offset.value, depth + 1);
                if let Some(l) = length {
                    self.arithmetic_text(&l.value, depth + 1);
                }
                return;
            }
            P::Transform {
                parameter,
                indirect,
                op,
            } => {
                if matches!(
                    op,
                    ParameterTransformOp::PromptExpand
                        | ParameterTransformOp::ExpandEscapeSequences
                ) {
                    self.hazards.push(Hazard::opaque(
                        source,
                        "the @P and @E transformations expand the variable's value again, and prompt expansion runs the command substitutions in it, which the analysis cannot see",
                    ));
                }
                (parameter, *indirect)
            }
            P::VariableNames { .. } | P::MemberKeys { .. } => {
                self.hazards.push(Hazard::opaque(
                    source,
                    "it expands names chosen at run time (an indirect expansion), which the analysis cannot see",
                ));
                return;
            }
        };
        if indirect {
            self.hazards.push(Hazard::opaque(
                source,
                "${!X} expands the variable whose name is X's value, which may be an array element whose subscript runs any command",
            ));
        }
        if matches!(
            parameter,
            Parameter::NamedWithIndex { .. } | Parameter::NamedWithAllIndices { .. }
        ) {
            self.hazards.push(Hazard::opaque(source, SUBSCRIPT));
        }
        if matches!(expr, P::AssignDefaultValues { .. }) {
            self.hazards.push(Hazard::opaque(
                source,
                "${X:=word} assigns X while the command is expanded, so later expansions see a value the analysis cannot follow",
            ));
        }
        for w in inner_words {
            if w.contains("$'") {
                self.hazards.push(Hazard::opaque(
                    source,
                    "a $'…' string inside ${…} is decoded and then expanded again, so escapes in it can spell a command substitution the analysis cannot see",
                ));
            }
            self.word(w, depth + 1);
        }
    }
}

/// The words of a rule's command pattern (`cargo test *`): exactly one
/// simple command with no operators, substitutions or redirections, and
/// nothing the analysis would call a hazard; `None` otherwise. Wrappers
/// are not unwrapped: a rule names the command as written.
pub(crate) fn pattern_words(spec: &str) -> Option<Vec<String>> {
    precheck(spec, 0).ok()?;
    let program = catch_unwind(AssertUnwindSafe(|| {
        let tokens = tokenize_str(spec).ok()?;
        parse_tokens(&tokens, &ParserOptions::default()).ok()
    }))
    .ok()??;
    let [complete] = program.complete_commands.as_slice() else {
        return None;
    };
    let [item] = complete.0.as_slice() else {
        return None;
    };
    if !item.0.additional.is_empty() {
        return None;
    }
    let [Command::Simple(simple)] = item.0.first.seq.as_slice() else {
        return None;
    };
    let mut raw = Vec::new();
    for i in simple.prefix.iter().flat_map(|p| p.0.iter()) {
        match i {
            CommandPrefixOrSuffixItem::AssignmentWord(_, w)
            | CommandPrefixOrSuffixItem::Word(w) => raw.push(w.value.clone()),
            _ => return None,
        }
    }
    raw.extend(simple.word_or_name.iter().map(|w| w.value.clone()));
    for i in simple.suffix.iter().flat_map(|s| s.0.iter()) {
        match i {
            CommandPrefixOrSuffixItem::AssignmentWord(_, w)
            | CommandPrefixOrSuffixItem::Word(w) => raw.push(w.value.clone()),
            _ => return None,
        }
    }
    let mut analysis = CommandAnalysis::default();
    let words: Vec<String> = raw.iter().map(|w| analysis.word(w, 0).text).collect();
    (analysis.parts.is_empty() && analysis.hazards.is_empty() && !words.is_empty()).then_some(words)
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

/// Whether a whole word, read with its quotes, may be changed by pathname
/// expansion (an unquoted `[` with a `]` after it) or brace expansion (an
/// unquoted `{`, not `${`, with a `,` or `..` and a `}` after it), even when
/// the parts of the pair lie in differently quoted pieces.
fn spans_quotes(raw: &str) -> (bool, bool) {
    let bytes = raw.as_bytes();
    let (mut single, mut double, mut i) = (false, false, 0);
    let (mut glob, mut brace) = (false, false);
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'\\' if !single => i += 1,
            b'\'' if !double => single = !single,
            b'"' if !single => double = !double,
            b'[' if !single && !double => {
                glob |= raw[i + 1..].contains(']');
            }
            b'{' if !single && !double && (i == 0 || bytes[i - 1] != b'$') => {
                if let Some(close) = raw[i + 1..].rfind('}') {
                    let inside = &raw[i + 1..i + 1 + close];
                    brace |= inside.contains(',') || inside.contains("..");
                }
            }
            _ => {}
        }
        i += 1;
    }
    (glob, brace)
}

/// Whether unquoted text is changed by pathname or brace expansion.
fn expands_unquoted(text: &str) -> bool {
    if text.contains(['*', '?']) {
        return true;
    }
    if let (Some(open), Some(close)) = (text.find('['), text.rfind(']'))
        && open < close
    {
        return true;
    }
    match (text.find('{'), text.rfind('}')) {
        (Some(open), Some(close)) if open < close => {
            let inside = &text[open..close];
            inside.contains(',') || inside.contains("..")
        }
        _ => false,
    }
}

/// The text of `$'…'` after bash decodes its escapes; `None` for an
/// escape this decoder does not know (the word is then not literal).
fn decode_ansi_c(raw: &str) -> Option<String> {
    /// Up to `max` digits of `radix`: their value and how many were read.
    fn digits(
        chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
        radix: u32,
        max: usize,
    ) -> (u32, usize) {
        let mut value = 0u32;
        let mut n = 0;
        while n < max {
            match chars.peek().and_then(|c| c.to_digit(radix)) {
                Some(d) => {
                    value = value * radix + d;
                    chars.next();
                    n += 1;
                }
                None => break,
            }
        }
        (value, n)
    }
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let e = chars.next()?;
        let decoded = match e {
            'a' => '\u{7}',
            'b' => '\u{8}',
            'e' | 'E' => '\u{1b}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\u{b}',
            '\\' | '\'' | '"' | '?' => e,
            'x' | 'u' | 'U' => {
                let max = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let (value, n) = digits(&mut chars, 16, max);
                if n == 0 {
                    return None;
                }
                char::from_u32(value)?
            }
            '0'..='7' => {
                let (rest, n) = digits(&mut chars, 8, 2);
                let first = e.to_digit(8)?;
                char::from_u32((first * 8u32.pow(n as u32) + rest) & 0xff)?
            }
            _ => return None,
        };
        if decoded == '\0' {
            // Bash cuts the word at a NUL; what it then runs is not the
            // text written.
            return None;
        }
        out.push(decoded);
    }
    Some(out)
}

fn is_fd_word(word: &str) -> bool {
    word == "-" || (!word.is_empty() && word.bytes().all(|b| b.is_ascii_digit()))
}

/// A shell variable name.
fn is_name(word: &str) -> bool {
    !word.is_empty()
        && word.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !word.starts_with(|c: char| c.is_ascii_digit())
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

    fn opaque(command: &str) -> bool {
        !CommandAnalysis::parse(command).fully_understood()
    }

    #[test]
    fn plain_commands_are_fully_understood() {
        for ok in [
            "ls -la",
            "git status --short 2>&1",
            "ls \"$HOME\" ~/x *.rs $1 $@ $#",
            "for f in a b; do ls $f; done",
            "echo ${X:-a} ${X#*.} ${X%.rs} ${#X} ${X/a/b} ${X^^}",
            "echo $(ls) `ls`",
            "X=1 make",
            "export PATH=$PATH:/x A=\"$B\"",
            "local x=1; declare -r y=2",
            "[ -f x ] && test -d y",
            "read -r line",
            "command -v rm",
            "bash script.sh",
            "python3 script.py",
            "python3 -m pytest",
            "awk '{print $1}' f",
            "cat <<'EOF'\n$((X))\nEOF",
        ] {
            let a = CommandAnalysis::parse(ok);
            assert!(a.fully_understood(), "{ok:?}: {:?}", a.hazards);
        }
    }

    #[test]
    fn constructs_that_evaluate_variable_contents_are_opaque() {
        for bad in [
            "(( X ))",
            "((X))",
            "echo $((X))",
            "echo \"$((X))\"",
            "echo $[X]",
            "let X",
            "declare -i X",
            "local -n r=X",
            "for ((i=0;i<X;i++)); do :; done",
            "[[ X -eq 1 ]]",
            "test -v X",
            "[ -v X ]",
            "echo ${a[0]}",
            "echo ${a[@]}",
            "echo ${#a[0]}",
            "a[0]=1",
            "a=(1 2)",
            "declare 'a[$(x)]=1'",
            "declare \"$X=1\"",
            "export \"$X\"",
            "unset \"$X\"",
            "read \"$X\"",
            "echo ${X:1}",
            "echo ${X:1:2}",
            "echo ${!X}",
            "echo ${!X*}",
            "echo ${X@P}",
            "echo ${X@E}",
            "echo ${Y:-${X:1}}",
            "printf -v X %s 1",
            "read -a X",
            "read 'a[1]'",
            "mapfile X",
            "readarray X",
            "eval ls",
            "source x",
            ". x",
            "trap ls EXIT",
            "alias a=ls",
            "exec ls",
            "bash -c ls",
            "sh -ec ls",
            "bash",
            "echo ls | sh",
            "bash <<< ls",
            "python3 -c 1",
            "python3",
            "python3 - <<< 1",
            "perl -e 1",
            "perl -wle 1",
            "ruby -e 1",
            "node -e 1",
            "node --eval=1",
            "php -r 1",
            "$X",
            "\"$X\" a",
            "$(echo ls)",
            "/bin/l?",
            "{ls,a}",
            "git -c core.pager=x log",
            "PS4='$(x)' ls",
            "cat <<EOF\n$((X))\nEOF",
            "ls 'unterminated",
        ] {
            assert!(opaque(bad), "{bad:?} must be opaque");
        }
    }

    #[test]
    fn nested_constructs_are_found() {
        for wrap in [
            "if true; then {}; fi",
            "while true; do {}; done",
            "until false; do {}; done",
            "case a in a) {};; esac",
            "( {} )",
            "{ {}; }",
            "ls | {}",
            "ls && {}",
            "echo $({})",
            "echo `{}`",
            "for x in a; do {}; done",
            "f() { {}; }",
            "diff <({}) x",
        ] {
            let command = wrap.replace("{}", "(( X ))");
            assert!(opaque(&command), "{command:?} must be opaque");
        }
    }

    #[test]
    fn wrappers_are_unwrapped_into_parts() {
        for (command, inner) in [
            ("env -i A=1 rm x", "rm x"),
            ("command rm x", "rm x"),
            ("builtin command rm x", "rm x"),
            ("exec -a n rm x", "rm x"),
            ("timeout -s KILL 5 rm x", "rm x"),
            ("timeout --kill-after=1 5s rm x", "rm x"),
            ("nice -n 5 rm x", "rm x"),
            ("nice -n5 rm x", "rm x"),
            ("nohup rm x", "rm x"),
            ("time rm x", "rm x"),
            ("sudo -u root -- rm x", "rm x"),
            ("xargs -0 -n1 rm", "rm"),
            ("xargs -I {} rm {}", "rm {}"),
            ("find . -exec rm {} ;", "rm {}"),
            ("find a b -delete", "rm a b"),
            ("find -delete", "rm ."),
            ("bash -c 'rm x'", "rm x"),
            ("eval 'rm x'", "rm x"),
            ("git -c alias.x='!rm x' x", "rm x"),
            ("env -S 'rm x'", "rm x"),
            ("r\\m x", "rm x"),
            ("$'\\x72\\155' x", "rm x"),
        ] {
            let found = parts(command);
            assert!(found.iter().any(|p| p == inner), "{command:?}: {found:?}");
        }
        assert_eq!(parts("command -v rm"), ["command -v rm"]);
    }

    #[test]
    fn ansi_c_quotes_are_decoded() {
        assert_eq!(decode_ansi_c(r"r\x6d").as_deref(), Some("rm"));
        assert_eq!(decode_ansi_c(r"\162\155").as_deref(), Some("rm"));
        assert_eq!(decode_ansi_c(r"a\tb\u0041").as_deref(), Some("a\tbA"));
        assert_eq!(decode_ansi_c(r"\q"), None);
        assert!(!opaque("$'ls' -la"));
        assert!(opaque("$'\\q'"));
    }

    #[test]
    fn rule_patterns_are_one_simple_command() {
        assert_eq!(
            pattern_words("git status *"),
            Some(vec!["git".into(), "status".into(), "*".into()])
        );
        assert_eq!(
            pattern_words("timeout *"),
            Some(vec!["timeout".into(), "*".into()])
        );
        for bad in ["a; b", "a && b", "a | b", "a > f", "a $(b)", "(( x ))", ""] {
            assert_eq!(pattern_words(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn assignments_are_words() {
        let a = CommandAnalysis::parse("FOO=1 make all");
        assert_eq!(a.parts[0].text(), "FOO=1 make all");
        assert_eq!(a.parts[0].without_assignments(), ["make", "all"]);
    }
}
