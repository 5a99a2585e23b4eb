//! What one simple command runs besides itself: the commands it wraps, the
//! code it is given inline, and the builtins that evaluate text as code.
//!
//! [`CommandAnalysis::judge`] looks at a command's words after its leading
//! assignments. A command word that is not literal text is unknown. A
//! wrapper (`env`, `timeout`, `xargs`, `find -exec`, …) adds the command it
//! runs as one more part, judged the same way; which commands are
//! wrappers, and where the command each runs begins, is the table in
//! [`table`]. Builtins that evaluate their arguments or variables as code,
//! and shells and interpreters given inline code, are opaque hazards; shell
//! code given inline is parsed for more parts as well, so a deny rule
//! catches `bash -c 'rm x'` outright.

mod table;

use super::{ARITHMETIC, CommandAnalysis, CommandPart, Hazard, MAX_NESTING, SUBSCRIPT, Word};

/// Shells whose `-c` takes shell code.
const SHELLS: [&str; 14] = [
    "sh", "bash", "rbash", "dash", "ash", "zsh", "ksh", "ksh93", "mksh", "pdksh", "yash", "fish",
    "csh", "tcsh",
];

/// Variables whose value names code or a program that a command may run.
const CODE_VARIABLES: [&str; 22] = [
    "BASH_ENV",
    "ENV",
    "PROMPT_COMMAND",
    "PS4",
    "SHELLOPTS",
    "BASHOPTS",
    "LD_PRELOAD",
    "LD_AUDIT",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_PAGER",
    "GIT_EDITOR",
    "GIT_EXTERNAL_DIFF",
    "GIT_ASKPASS",
    "GIT_EXEC_PATH",
    "PAGER",
    "EDITOR",
    "VISUAL",
    "NODE_OPTIONS",
    "PERL5OPT",
];

/// Why assigning `name` is opaque, if it is.
pub(super) fn code_variable(name: &str) -> Option<&'static str> {
    let code = CODE_VARIABLES.contains(&name)
        || name.starts_with("GIT_CONFIG_KEY_")
        || name.starts_with("GIT_CONFIG_VALUE_")
        || name.starts_with("BASH_FUNC_");
    code.then_some(
        "this variable names code or a program that bash or the command runs, which the analysis cannot see",
    )
}

/// The arguments after a command's options. `short_arg` lists the short
/// options that take an argument (attached, `-n5`, or the next word, `-n
/// 5`); `long_arg` the long ones that take the next word when written
/// without `=`. A word that is not literal where an option or the command
/// belongs is returned as the error: it may be the command. So is a long
/// option written without `=` that is in neither `long_arg` nor the
/// wrapper's known flags ([`after_options_with`]): whether it takes the
/// next word is unknown, so the command is too (`strace --output
/// /dev/null rm x` must not read as the command `/dev/null`).
fn after_options<'w>(
    args: &'w [Word],
    short_arg: &str,
    long_arg: &[&str],
) -> Result<&'w [Word], &'w Word> {
    after_options_with(args, short_arg, long_arg, &[])
}

/// [`after_options`] for a wrapper whose long options in `long_flag` take
/// no value.
fn after_options_with<'w>(
    args: &'w [Word],
    short_arg: &str,
    long_arg: &[&str],
    long_flag: &[&str],
) -> Result<&'w [Word], &'w Word> {
    let mut i = 0;
    while let Some(w) = args.get(i) {
        if !w.literal {
            return Err(w);
        }
        let t = w.text.as_str();
        if t == "--" {
            return Ok(args.get(i + 1..).unwrap_or_default());
        }
        if let Some(long) = t.strip_prefix("--") {
            if long.contains('=') || long_flag.contains(&long) {
                i += 1;
            } else if long_arg.contains(&long) {
                i += 2;
            } else {
                return Err(w);
            }
            continue;
        }
        if t.len() > 1 && t.starts_with('-') {
            let mut skip = 1;
            let letters = &t[1..];
            for (k, c) in letters.char_indices() {
                if short_arg.contains(c) {
                    if k + c.len_utf8() == letters.len() {
                        skip = 2;
                    }
                    break;
                }
            }
            i += skip;
            continue;
        }
        return Ok(&args[i..]);
    }
    Ok(&[])
}

/// The letters of a single-dash option cluster (`-lc` → `lc`), if `t` is
/// one.
fn cluster(t: &str) -> Option<&str> {
    let letters = t.strip_prefix('-')?;
    (!letters.is_empty() && !letters.starts_with('-')).then_some(letters)
}

fn texts(words: &[Word]) -> Vec<String> {
    words.iter().map(|w| w.text.clone()).collect()
}

/// The program name of a command word: `/usr/bin/python3` → `python3`.
fn program(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

fn is_python(name: &str) -> bool {
    let rest = name
        .strip_prefix("python")
        .or_else(|| name.strip_prefix("pypy"));
    rest.is_some_and(|r| r.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
}

impl CommandAnalysis {
    fn opaque(&mut self, construct: impl Into<String>, why: impl Into<String>) {
        self.hazards.push(Hazard::opaque(construct, why));
    }

    /// A command the analysis found inside another: one more part, judged
    /// like any command.
    fn derived(&mut self, words: Vec<Word>, depth: usize) {
        if words.is_empty() {
            return;
        }
        self.parts.push(CommandPart {
            words: texts(&words),
        });
        self.judge(words, depth + 1);
    }

    /// Shell code given as a word: parsed for its parts when literal.
    fn inline_shell(&mut self, code: &Word, depth: usize) {
        if code.literal {
            self.program(&code.text, depth + 1);
        }
    }

    /// Judges one simple command, `words` without leading assignments.
    pub(super) fn judge(&mut self, words: Vec<Word>, depth: usize) {
        if depth > MAX_NESTING {
            self.hazards
                .push(Hazard::Unparsable("commands wrapped too deeply".to_owned()));
            return;
        }
        let Some(first) = words.first() else { return };
        if !first.literal {
            self.hazards
                .push(Hazard::UnknownCommand(first.source.clone()));
            return;
        }
        let name = program(&first.text);
        let args = &words[1..];
        let whole = texts(&words).join(" ");
        if let Some(row) = table::wrapper(name) {
            let whole = whole.as_str();
            self.wrapper(
                row,
                &table::Call {
                    name,
                    args,
                    whole,
                    depth,
                },
            );
            return;
        }
        match name {
            "eval" => {
                self.opaque(
                    "eval",
                    "eval runs its arguments as shell code, which the analysis does not vouch for",
                );
                if args.iter().all(|w| w.literal) {
                    let code = texts(args).join(" ");
                    self.program(&code, depth + 1);
                }
            }
            "source" | "." => {
                self.opaque(
                    name,
                    "it runs the commands in a file, which the analysis cannot see",
                );
            }
            "trap" => {
                self.opaque(name, "trap stores shell code that runs later");
                if let Ok([code, ..]) = after_options(args, "", &[]) {
                    self.inline_shell(code, depth);
                }
            }
            "alias" if args.iter().any(|w| w.text.contains('=') || !w.literal) => {
                self.opaque(
                    whole,
                    "an alias makes a name run other commands, which the analysis cannot follow",
                );
            }
            "let" => {
                self.opaque(whole, format!("let is arithmetic: {ARITHMETIC}"));
            }
            "declare" | "typeset" | "local" | "export" | "readonly" => {
                self.declaration(&words, args);
            }
            "printf" => {
                if args
                    .iter()
                    .take_while(|w| w.text != "--")
                    .any(|w| cluster(&w.text).is_some_and(|c| c.starts_with('v')))
                {
                    self.opaque(
                        whole,
                        "printf -v assigns to a variable name that may be an array element, whose subscript is evaluated as arithmetic and can run any command",
                    );
                }
            }
            "read" => {
                let mut i = 0;
                while let Some(w) = args.get(i) {
                    let Some(c) = cluster(&w.text) else { break };
                    if c.contains('a') {
                        self.opaque(whole.clone(), "read -a assigns array elements, whose subscripts are evaluated as arithmetic");
                        return;
                    }
                    i += if c.ends_with(['d', 'i', 'n', 'N', 'p', 't', 'u']) && c.len() == 1 {
                        2
                    } else {
                        1
                    };
                }
                if args.iter().any(|w| w.text.contains('[') || !w.literal) {
                    self.opaque(whole, SUBSCRIPT);
                }
            }
            "mapfile" | "readarray" => {
                self.opaque(
                    name,
                    "it fills an array and can run a callback (-C) as shell code, which the analysis cannot see",
                );
            }
            "test" | "[" | "[[" => {
                if args.iter().any(|w| w.text == "-v" || w.text == "-R") {
                    self.opaque(
                        whole.clone(),
                        "test -v evaluates an array subscript in the variable name, which can run any command",
                    );
                }
                if name == "[[" {
                    self.opaque(whole, ARITHMETIC);
                }
            }
            "unset" | "getopts" | "wait" => {
                if args.iter().any(|w| w.text.contains('[') || !w.literal) {
                    self.opaque(whole, SUBSCRIPT);
                }
            }
            "enable" => {
                self.opaque(name, "enable can load a builtin from a shared library or re-enable a builtin that shadows a program");
            }
            "hash" if args.iter().any(|w| w.text.starts_with("-p") || !w.literal) => {
                self.opaque(whole, "hash -p makes a command name run another program");
            }
            "complete" | "compgen" | "bind" | "fc" => {
                self.opaque(name, "it can run shell code given as an argument or from the history, which the analysis cannot see");
            }
            "find" => {
                self.find(args, depth);
            }
            "git" => {
                self.git(args, depth);
            }
            n if SHELLS.contains(&n) => {
                self.shell(n, args, depth);
            }
            n => {
                self.interpreter(n, args);
            }
        }
    }

    fn declaration(&mut self, words: &[Word], args: &[Word]) {
        let whole = texts(words).join(" ");
        for w in args {
            if !w.literal && !w.text.contains('=') {
                self.opaque(whole.clone(), "it declares a variable whose name is not literal text and may be an array element, whose subscript runs any command");
                return;
            }
            if let Some(c) = cluster(&w.text) {
                if c.contains('i') {
                    self.opaque(
                        whole.clone(),
                        format!("declare -i makes every assignment arithmetic: {ARITHMETIC}"),
                    );
                    return;
                }
                if c.contains('n') {
                    self.opaque(whole.clone(), "a name reference (-n) can point at an array element, whose subscript runs any command");
                    return;
                }
                continue;
            }
            let name = w.text.split('=').next().unwrap_or_default();
            if !super::is_name(name.trim_end_matches('+')) || w.text.contains("=(") {
                // `declare "$X=1"` with X='a[$(…)]' evaluates the subscript.
                self.opaque(whole.clone(), SUBSCRIPT);
                return;
            }
            if let Some(why) = code_variable(name.trim_end_matches('+')) {
                self.opaque(whole.clone(), why);
                return;
            }
        }
    }

    /// `find`: `-exec`, `-execdir`, `-ok` and `-okdir` run commands;
    /// `-delete` is judged as `rm` of find's starting points; `-fprint`
    /// and friends write files.
    fn find(&mut self, args: &[Word], depth: usize) {
        let starts: Vec<Word> = args
            .iter()
            .take_while(|w| !w.text.starts_with('-') && w.text != "(" && w.text != "!")
            .cloned()
            .collect();
        if let Some(w) = args.iter().find(|w| !w.literal) {
            // A word find reads only at run time may turn out to be
            // `-delete` or `-exec` (`{-de''lete,}`, `$X`).
            self.hazards
                .push(Hazard::UnknownCommand(format!("find … {}", w.source)));
        }
        let mut i = starts.len();
        while let Some(w) = args.get(i) {
            match w.text.as_str() {
                "-exec" | "-execdir" | "-ok" | "-okdir" => {
                    let command: Vec<Word> = args[i + 1..]
                        .iter()
                        .take_while(|w| w.text != ";" && w.text != "+")
                        .cloned()
                        .collect();
                    i += command.len() + 2;
                    self.derived(command, depth);
                }
                "-delete" => {
                    let mut rm = vec![Word::literal("rm")];
                    if starts.is_empty() {
                        rm.push(Word::literal("."));
                    } else {
                        rm.extend(starts.iter().cloned());
                    }
                    self.derived(rm, depth);
                    i += 1;
                }
                "-fprint" | "-fprint0" | "-fls" | "-fprintf" => {
                    if let Some(file) = args.get(i + 1) {
                        self.hazards.push(Hazard::Redirection(file.text.clone()));
                    }
                    i += 2;
                }
                _ => i += 1,
            }
        }
    }

    /// `git`: `-c` and `--config-env` set configuration that can name
    /// programs to run (an alias starting with `!`, `core.fsmonitor`,
    /// `core.pager`, `core.sshCommand`, …); `--exec-path=` picks where git
    /// finds its commands.
    fn git(&mut self, args: &[Word], depth: usize) {
        let mut i = 0;
        while let Some(w) = args.get(i) {
            let t = w.text.as_str();
            if !w.literal {
                self.opaque(w.source.clone(), "git is given an option that is not literal text, which may set configuration that runs commands");
                return;
            }
            if t == "-c" || t == "--config-env" || t.starts_with("--config-env=") {
                let value = if t == "--config-env" || t == "-c" {
                    args.get(i + 1)
                } else {
                    Some(w)
                };
                let shown = value.map_or(t.to_owned(), |v| format!("{t} {}", v.text));
                self.opaque(
                    format!("git {shown}"),
                    "git -c sets configuration that can name commands to run (an alias starting with !, core.fsmonitor, core.pager, core.sshCommand)",
                );
                if let Some(v) = value
                    && let Some((key, code)) = v.text.split_once('=')
                    && key.to_ascii_lowercase().starts_with("alias.")
                    && let Some(code) = code.strip_prefix('!')
                {
                    self.program(code, depth + 1);
                }
                i += if t.contains('=') && t != "-c" { 1 } else { 2 };
                continue;
            }
            if t.starts_with("--exec-path=") {
                self.opaque(
                    t.to_owned(),
                    "git --exec-path= runs git's commands from another directory",
                );
                i += 1;
                continue;
            }
            if [
                "-C",
                "--git-dir",
                "--work-tree",
                "--namespace",
                "--super-prefix",
            ]
            .contains(&t)
            {
                i += 2;
                continue;
            }
            if t.starts_with('-') {
                i += 1;
                continue;
            }
            if t == "config" {
                self.git_config(&args[i + 1..], depth);
            }
            return;
        }
    }

    /// `git config KEY VALUE` for a key whose value names a command.
    fn git_config(&mut self, args: &[Word], depth: usize) {
        const RUNS: [&str; 16] = [
            "alias.",
            "core.fsmonitor",
            "core.pager",
            "core.sshcommand",
            "core.editor",
            "core.hookspath",
            "core.gitproxy",
            "credential.",
            "diff.",
            "merge.",
            "filter.",
            "pager.",
            "sequence.editor",
            "gpg.",
            "include",
            "uploadpack.",
        ];
        // Options may take values (`-f FILE`, `--type T`), so which operand
        // is the key is not known here: every pair of neighbouring words is
        // judged as a possible KEY VALUE.
        for pair in args.windows(2) {
            let [key, value] = pair else { continue };
            let lower = key.text.to_ascii_lowercase();
            if !key.literal || RUNS.iter().any(|r| lower.starts_with(r)) {
                self.opaque(
                    format!("git config {} {}", key.text, value.text),
                    "this git setting names a command that later git commands run, which the analysis cannot see",
                );
                if lower.starts_with("alias.")
                    && let Some(code) = value.text.strip_prefix('!')
                {
                    self.program(code, depth + 1);
                }
            }
        }
    }

    /// A shell: `-c` takes inline code; with no script operand (or `-s`)
    /// it reads its program from standard input.
    fn shell(&mut self, name: &str, args: &[Word], depth: usize) {
        let mut inline = false;
        let mut stdin = false;
        let mut i = 0;
        while let Some(w) = args.get(i) {
            let t = w.text.as_str();
            if !w.literal {
                self.opaque(w.source.clone(), format!("{name} is given an argument that is not literal text, which may be shell code"));
                return;
            }
            if t == "--" {
                i += 1;
                break;
            }
            if t.starts_with("--") {
                i += if ["--rcfile", "--init-file"].contains(&t) {
                    2
                } else {
                    1
                };
                continue;
            }
            if t.len() > 1 && (t.starts_with('-') || t.starts_with('+')) {
                let letters = &t[1..];
                if letters == "o" || letters == "O" {
                    i += 2;
                    continue;
                }
                if t.starts_with('-') {
                    inline |= letters.contains('c');
                    stdin |= letters.contains('s');
                }
                i += 1;
                continue;
            }
            break;
        }
        let operand = args.get(i);
        if inline {
            self.opaque(
                format!("{name} -c"),
                format!("{name} -c runs the shell code given inline, which the analysis does not vouch for"),
            );
            if let Some(code) = operand {
                self.inline_shell(code, depth);
            }
        } else if stdin || operand.is_none() || operand.is_some_and(|o| o.text == "-") {
            self.opaque(
                name,
                format!("{name} with no script file reads its program from standard input (a pipe, here-document or here-string), which the analysis cannot see"),
            );
        }
    }

    /// Interpreters: inline code (`python -c`, `perl -e`, `node -e`, …) or
    /// a program read from standard input is opaque; a script file is not.
    fn interpreter(&mut self, name: &str, args: &[Word]) {
        // (inline option letters, letters whose argument follows, inline long options)
        let (inline, with_arg, long_inline): (&str, &str, &[&str]) = match name {
            n if is_python(n) => ("c", "WXQ", &[]),
            "perl" | "perl5" => ("eE", "", &[]),
            "ruby" | "jruby" => ("e", "", &[]),
            "node" | "nodejs" | "bun" => ("ep", "r", &["--eval", "--print"]),
            "deno" => ("", "", &[]),
            "php" => ("rBRE", "dcz", &[]),
            "lua" | "luajit" => ("e", "l", &[]),
            "Rscript" | "R" => ("e", "", &[]),
            "osascript" => ("e", "", &[]),
            "pwsh" | "powershell" => ("cCeE", "", &["-command", "-encodedcommand"]),
            "tclsh" | "wish" | "expect" => ("c", "", &[]),
            "awk" | "gawk" | "mawk" | "nawk" => {
                self.awk(name, args);
                return;
            }
            _ => return,
        };
        if name == "deno" {
            if args.iter().any(|w| w.text == "eval" || w.text == "repl") || args.is_empty() {
                self.opaque(
                    "deno eval",
                    "deno eval runs code given inline, which the analysis does not vouch for",
                );
            }
            return;
        }
        let mut operand = None;
        let mut i = 0;
        while let Some(w) = args.get(i) {
            let t = w.text.as_str();
            if !w.literal {
                self.opaque(
                    w.source.clone(),
                    format!(
                        "{name} is given an argument that is not literal text, which may be code"
                    ),
                );
                return;
            }
            if ["--version", "-V", "--help", "-h", "-v"].contains(&t) && operand.is_none() {
                return;
            }
            if t == "--" {
                operand = args.get(i + 1);
                break;
            }
            let lower = t.to_ascii_lowercase();
            let long = long_inline.iter().any(|l| {
                lower == *l
                    || lower == format!("-{l}")
                    || lower.starts_with(&format!("{l}="))
                    || lower.starts_with(&format!("-{l}="))
            });
            if long {
                self.opaque(
                    format!("{name} {t}"),
                    format!(
                        "{name} {t} runs code given inline, which the analysis does not vouch for"
                    ),
                );
                return;
            }
            if t == "-m" && is_python(name) {
                return;
            }
            if let Some(letters) = cluster(t) {
                let mut chars = letters.char_indices().peekable();
                while let Some((k, c)) = chars.next() {
                    if inline.contains(c) {
                        self.opaque(
                            format!("{name} {t}"),
                            format!("{name} {t} runs code given inline, which the analysis does not vouch for"),
                        );
                        return;
                    }
                    if is_python(name) && c == 'm' {
                        return;
                    }
                    if with_arg.contains(c) {
                        if k + c.len_utf8() == letters.len() {
                            i += 1;
                        }
                        break;
                    }
                    let perlish = matches!(name, "perl" | "perl5" | "ruby" | "jruby");
                    if perlish && (c == 'l' || c == '0') {
                        // Optional digits follow: the record separator.
                        if c == '0' && chars.next_if(|(_, d)| *d == 'x').is_some() {
                            while chars.next_if(|(_, d)| d.is_ascii_hexdigit()).is_some() {}
                        }
                        while chars.next_if(|(_, d)| ('0'..='7').contains(d)).is_some() {}
                        continue;
                    }
                    if perlish && "MmIdDxCiFTWKr".contains(c) {
                        // The rest of the cluster is the option's value;
                        // a bare one may take the next word.
                        let at_end = k + c.len_utf8() == letters.len();
                        if at_end
                            && "MmIr".contains(c)
                            && args.get(i + 1).is_some_and(|n| !n.text.starts_with('-'))
                        {
                            i += 1;
                        }
                        break;
                    }
                }
                i += 1;
                continue;
            }
            if t.starts_with("--") {
                i += 1;
                continue;
            }
            operand = Some(w);
            break;
        }
        if operand.is_none_or(|o| o.text == "-") {
            self.opaque(
                name,
                format!("{name} with no program file reads its program from standard input (a pipe, here-document or here-string), which the analysis cannot see"),
            );
        }
    }

    /// awk runs commands through `system()`, `| getline` and `print |`.
    fn awk(&mut self, name: &str, args: &[Word]) {
        let mut i = 0;
        while let Some(w) = args.get(i) {
            let t = w.text.as_str();
            if t == "--" {
                i += 1;
                break;
            }
            if t == "-f" || t.starts_with("--file") || t.starts_with("-f") {
                return;
            }
            if let Some(c) = cluster(t) {
                i += if c.len() == 1 && "vFE".contains(c) {
                    2
                } else {
                    1
                };
                continue;
            }
            if t.starts_with("--") {
                i += 1;
                continue;
            }
            break;
        }
        match args.get(i) {
            Some(program) if program.literal && !program.text.contains("system") && !program.text.contains('|') => {}
            Some(program) => self.opaque(
                format!("{name} {}", program.source),
                "an awk program can run commands with system() and pipes, which the analysis does not vouch for",
            ),
            None => self.opaque(name, "awk with no program reads nothing the analysis can see"),
        }
    }
}
