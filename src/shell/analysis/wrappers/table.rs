//! Command wrappers as data: one row per wrapper in [`WRAPPERS`], read by
//! one interpreter ([`CommandAnalysis::wrapper`]).
//!
//! A row says which options take a value (so their value is not read as
//! the command), how many operands come before the command (`timeout
//! DURATION`, `chroot NEWROOT`), whether the wrapper is opaque in itself
//! (`exec`, `watch`), which leading options make it ask about a command
//! rather than run it (`command -v`), and what the words after all that
//! are: a command, shell code, or a command template. Four behaviours are
//! not data and are named functions in their rows: `env` (its own option
//! syntax, `-S`, and `NAME=VALUE` words), `sudo` (`-s`/`-i` turn the
//! command into shell code), `flock` (`flock LOCK -c CODE`) and
//! `script`/`su`/`runuser`/`sg` (a `-c` anywhere takes shell code).
//!
//! Anything the interpreter does not understand where an option or the
//! command belongs — a word that is not literal text, a long option it
//! does not know written without `=` — makes the command unknown.

use super::{CommandAnalysis, Hazard, Word, after_options_with, cluster, texts};

/// One wrapper: where the command it runs begins, and what it is.
#[derive(Debug)]
pub(super) struct Wrapper {
    /// The program names it goes by.
    names: &'static [&'static str],
    /// Short options that take a value, attached (`-n5`) or as the next
    /// word (`-n 5`), also at the end of a cluster (`-in 5`).
    short_value: &'static str,
    /// Long options that take the next word when written without `=`.
    long_value: &'static [&'static str],
    /// Long options that take no value. A long option written without `=`
    /// that is in neither list makes the command unknown: whether it takes
    /// the next word is unknown (`strace --output /dev/null rm x`).
    long_flag: &'static [&'static str],
    /// Operands between the options and the command.
    operands: usize,
    /// Why the wrapper is opaque in itself, if it is: a hazard named by its
    /// program name.
    opaque: Option<&'static str>,
    /// Letters that, anywhere in a leading option word (before `--`), make
    /// it describe the command instead of running it: no part then.
    queries: &'static [char],
    /// What the words after the options and operands are.
    inner: Inner,
}

/// What a wrapper does with the words after its options and operands.
#[derive(Debug)]
enum Inner {
    /// Runs them as a command: one more part. Options it cannot read make
    /// the command unknown.
    Command,
    /// Joins them into shell code, parsed for its parts when every word is
    /// literal. The row is opaque already, so options it cannot read add
    /// nothing.
    Shell,
    /// The words before the first one starting with this marker are a
    /// command template (`parallel rm ::: a b`), one more part. The row is
    /// opaque already, so options it cannot read add nothing.
    Template(&'static str),
    /// Behaviour that is not data, given the row and the call.
    Own(fn(&mut CommandAnalysis, &Wrapper, &Call<'_>)),
}

/// One call of a wrapper.
#[derive(Debug)]
pub(super) struct Call<'w> {
    /// The program name (`/usr/bin/env` → `env`).
    pub(super) name: &'w str,
    /// The words after the program.
    pub(super) args: &'w [Word],
    /// Every word, joined by spaces: how hazards name the whole command.
    pub(super) whole: &'w str,
    pub(super) depth: usize,
}

/// A wrapper with no options that take values, no operands, and a plain
/// command after its options.
const PLAIN: Wrapper = Wrapper {
    names: &[],
    short_value: "",
    long_value: &[],
    long_flag: &[],
    operands: 0,
    opaque: None,
    queries: &[],
    inner: Inner::Command,
};

/// Every wrapper the analysis unwraps.
pub(super) static WRAPPERS: &[Wrapper] = &[
    Wrapper {
        names: &["exec"],
        short_value: "a",
        opaque: Some(
            "exec replaces the shell, and with redirections alone it changes where every later command reads and writes",
        ),
        ..PLAIN
    },
    Wrapper {
        names: &["command"],
        queries: &['v', 'V'],
        ..PLAIN
    },
    Wrapper {
        names: &["builtin", "nohup", "setsid", "busybox"],
        ..PLAIN
    },
    Wrapper {
        names: &["env"],
        short_value: "uC",
        long_value: &["unset", "chdir"],
        inner: Inner::Own(env),
        ..PLAIN
    },
    Wrapper {
        names: &["nice"],
        short_value: "n",
        long_value: &["adjustment"],
        ..PLAIN
    },
    Wrapper {
        names: &["timeout"],
        short_value: "sk",
        long_value: &["signal", "kill-after"],
        long_flag: &["preserve-status", "foreground", "verbose"],
        operands: 1,
        ..PLAIN
    },
    Wrapper {
        names: &["time"],
        short_value: "fo",
        long_value: &["format", "output"],
        long_flag: &["append", "verbose", "portability", "quiet"],
        ..PLAIN
    },
    Wrapper {
        names: &["sudo"],
        short_value: "ugCDprtTUR",
        long_value: &[
            "user",
            "group",
            "close-from",
            "chdir",
            "prompt",
            "role",
            "type",
            "command-timeout",
            "other-user",
            "chroot",
            "host",
        ],
        inner: Inner::Own(sudo),
        ..PLAIN
    },
    Wrapper {
        names: &["doas"],
        short_value: "uC",
        ..PLAIN
    },
    Wrapper {
        names: &["stdbuf"],
        short_value: "ioe",
        long_value: &["input", "output", "error"],
        ..PLAIN
    },
    Wrapper {
        names: &["ionice"],
        short_value: "cnpPu",
        long_value: &["class", "classdata", "pid", "pgid", "uid"],
        ..PLAIN
    },
    Wrapper {
        names: &["chroot"],
        long_value: &["userspec", "groups"],
        operands: 1,
        ..PLAIN
    },
    Wrapper {
        names: &["flock"],
        short_value: "wE",
        long_value: &["timeout", "conflict-exit-code"],
        operands: 1,
        inner: Inner::Own(flock),
        ..PLAIN
    },
    Wrapper {
        names: &["watch"],
        short_value: "nd",
        long_value: &["interval", "differences"],
        opaque: Some("watch runs its arguments as shell code"),
        inner: Inner::Shell,
        ..PLAIN
    },
    Wrapper {
        names: &["strace"],
        short_value: "abeEIoOpPsSuUX",
        long_value: &[
            "output",
            "attach",
            "user",
            "trace",
            "signal",
            "status",
            "expr",
            "string-limit",
            "columns",
            "env",
            "summary-sort-by",
            "trace-path",
            "quiet",
            "silence",
            "decode-fds",
            "inject",
            "fault",
            "kvm",
        ],
        long_flag: &[
            "follow-forks",
            "output-separately",
            "summary-only",
            "summary",
            "no-abbrev",
            "verbose",
            "raw",
            "timestamps",
            "relative-timestamps",
            "syscall-times",
            "instruction-pointer",
            "stack-traces",
            "daemonize",
            "seccomp-bpf",
        ],
        ..PLAIN
    },
    Wrapper {
        names: &["setpriv"],
        long_value: &[
            "ruid",
            "euid",
            "rgid",
            "egid",
            "reuid",
            "regid",
            "groups",
            "inh-caps",
            "ambient-caps",
            "bounding-set",
            "securebits",
            "pdeathsig",
            "selinux-label",
            "apparmor-profile",
            "landlock-access",
            "landlock-rule",
        ],
        long_flag: &[
            "clear-groups",
            "keep-groups",
            "init-groups",
            "nnp",
            "no-new-privs",
            "reset-env",
            "dump",
        ],
        ..PLAIN
    },
    Wrapper {
        names: &["unshare"],
        short_value: "S",
        long_value: &[
            "propagation",
            "setuid",
            "setgid",
            "wd",
            "root",
            "map-user",
            "map-group",
            "map-users",
            "map-groups",
            "setgroups",
            "keep-caps",
        ],
        long_flag: &[
            "mount",
            "uts",
            "ipc",
            "net",
            "pid",
            "user",
            "cgroup",
            "time",
            "fork",
            "mount-proc",
            "map-root-user",
            "map-current-user",
            "map-auto",
            "kill-child",
        ],
        ..PLAIN
    },
    Wrapper {
        names: &["ltrace"],
        short_value: "aAeEnopsuwxXlL",
        ..PLAIN
    },
    Wrapper {
        names: &[
            "valgrind",
            "unbuffer",
            "fakeroot",
            "firejail",
            "chronic",
            "catchsegv",
            "xvfb-run",
            "torsocks",
            "proxychains",
            "proxychains4",
            "systemd-run",
            "dbus-run-session",
        ],
        ..PLAIN
    },
    Wrapper {
        names: &["nsenter"],
        short_value: "tSGw",
        ..PLAIN
    },
    Wrapper {
        names: &["prlimit"],
        short_value: "p",
        ..PLAIN
    },
    Wrapper {
        names: &["taskset", "chrt"],
        short_value: "p",
        operands: 1,
        ..PLAIN
    },
    Wrapper {
        names: &["script", "su", "runuser"],
        inner: Inner::Own(shell_option),
        ..PLAIN
    },
    Wrapper {
        // sg GROUP COMMAND
        names: &["sg"],
        operands: 1,
        inner: Inner::Own(shell_option),
        ..PLAIN
    },
    Wrapper {
        names: &["parallel"],
        short_value: "jSa",
        opaque: Some(
            "parallel builds commands from its arguments and input, which the analysis cannot see",
        ),
        inner: Inner::Template(":::"),
        ..PLAIN
    },
    Wrapper {
        names: &["xargs"],
        short_value: "adEILnPs",
        long_value: &[
            "arg-file",
            "delimiter",
            "max-args",
            "max-procs",
            "max-chars",
            "process-slot-var",
        ],
        ..PLAIN
    },
];

/// The row of the wrapper called `name`, if it is one.
pub(super) fn wrapper(name: &str) -> Option<&'static Wrapper> {
    WRAPPERS.iter().find(|w| w.names.contains(&name))
}

impl Wrapper {
    /// The words after the options, or the word that may be the command
    /// and is not understood.
    fn options<'w>(&self, args: &'w [Word]) -> Result<&'w [Word], &'w Word> {
        after_options_with(args, self.short_value, self.long_value, self.long_flag)
    }

    /// The words after the options and the operands: the command.
    fn command<'w>(&self, args: &'w [Word]) -> Result<&'w [Word], &'w Word> {
        self.options(args)
            .map(|rest| rest.get(self.operands..).unwrap_or_default())
    }
}

/// The option words before the first operand or `--`.
fn leading(args: &[Word]) -> impl Iterator<Item = &Word> {
    args.iter()
        .take_while(|w| w.text.starts_with('-') && w.text != "--")
}

impl CommandAnalysis {
    /// Judges a call of the wrapper `row`.
    pub(super) fn wrapper(&mut self, row: &Wrapper, call: &Call<'_>) {
        if let Some(why) = row.opaque {
            self.opaque(call.name, why);
        }
        if leading(call.args).any(|w| w.text.contains(row.queries)) {
            return;
        }
        match row.inner {
            Inner::Command => self.wrapped(row.command(call.args), call.depth),
            Inner::Shell => self.wrapped_shell(row.command(call.args), call.depth),
            Inner::Template(end) => {
                if let Ok(rest) = row.command(call.args) {
                    let command: Vec<Word> = rest
                        .iter()
                        .take_while(|w| !w.text.starts_with(end))
                        .cloned()
                        .collect();
                    self.derived(command, call.depth);
                }
            }
            Inner::Own(own) => own(self, row, call),
        }
    }

    /// The command a wrapper runs, or the word that makes it unknown.
    fn wrapped(&mut self, inner: Result<&[Word], &Word>, depth: usize) {
        match inner {
            Ok(rest) => self.derived(rest.to_vec(), depth),
            Err(w) => self.hazards.push(Hazard::UnknownCommand(w.source.clone())),
        }
    }

    /// Words a wrapper joins into shell code: parsed when all are literal.
    fn wrapped_shell(&mut self, inner: Result<&[Word], &Word>, depth: usize) {
        if let Ok(rest) = inner
            && rest.iter().all(|w| w.literal)
        {
            self.program(&texts(rest).join(" "), depth + 1);
        }
    }
}

/// `sudo`: `-s` and `-i` run the command through a shell, so the words
/// after the options are shell code.
fn sudo(a: &mut CommandAnalysis, row: &Wrapper, call: &Call<'_>) {
    let shell =
        leading(call.args).any(|w| cluster(&w.text).is_some_and(|c| c.contains(['s', 'i'])));
    if shell {
        a.opaque(call.whole, "sudo -s and -i run the command through a shell");
        a.wrapped_shell(row.command(call.args), call.depth);
    } else {
        a.wrapped(row.command(call.args), call.depth);
    }
}

/// `flock LOCK COMMAND`, but `flock LOCK -c CODE` runs shell code: an
/// option after the operand decides what the rest is.
fn flock(a: &mut CommandAnalysis, row: &Wrapper, call: &Call<'_>) {
    match row.options(call.args) {
        Ok([_lock, flag, code, ..]) if flag.text == "-c" || flag.text == "--command" => {
            a.opaque(call.whole, "flock -c runs shell code");
            a.inline_shell(code, call.depth);
        }
        rest => a.wrapped(
            rest.map(|rest| rest.get(row.operands..).unwrap_or_default()),
            call.depth,
        ),
    }
}

/// `script`, `su`, `runuser` and `sg` run a command only as shell code:
/// the word after a `-c` (or `--command`) anywhere, or for a row with an
/// operand (`sg GROUP COMMAND`) the word after it. Without one they run no
/// command the analysis sees.
fn shell_option(a: &mut CommandAnalysis, row: &Wrapper, call: &Call<'_>) {
    let args = call.args;
    let code = args
        .iter()
        .position(|w| w.text == "--command" || cluster(&w.text).is_some_and(|c| c.ends_with('c')))
        .and_then(|i| args.get(i + 1))
        .or_else(|| (row.operands > 0).then(|| args.get(row.operands)).flatten());
    if let Some(code) = code {
        a.opaque(
            call.whole,
            format!("{} runs its command through a shell", call.name),
        );
        a.inline_shell(code, call.depth);
    }
}

/// `env`: options, then `NAME=VALUE` words, then the command. Its options
/// are read its own way: a long option it does not know takes no value,
/// and a value follows only a lone `-u` or `-C` (the row's short options)
/// or `--unset`/`--chdir` (its long ones). `-S` splits a string into a
/// command line, and an assignment to a variable that names code is
/// opaque.
fn env(a: &mut CommandAnalysis, row: &Wrapper, call: &Call<'_>) {
    let (args, depth) = (call.args, call.depth);
    let mut i = 0;
    while let Some(w) = args.get(i) {
        if !w.literal {
            a.hazards.push(Hazard::UnknownCommand(w.source.clone()));
            return;
        }
        let t = w.text.as_str();
        if t == "-S"
            || t.starts_with("--split-string")
            || cluster(t).is_some_and(|c| c.starts_with('S') || c.contains("S"))
        {
            a.opaque(
                call.whole,
                "env -S splits a string into a command line, which the analysis does not vouch for",
            );
            let code = match t
                .strip_prefix("--split-string=")
                .or_else(|| t.strip_prefix("-S").filter(|s| !s.is_empty()))
            {
                Some(inline) => std::iter::once(inline.to_owned())
                    .chain(args[i + 1..].iter().map(|w| w.text.clone()))
                    .collect::<Vec<_>>(),
                None => texts(args.get(i + 1..).unwrap_or_default()),
            };
            a.program(&code.join(" "), depth + 1);
            return;
        }
        if t == "--" {
            i += 1;
            break;
        }
        if t == "-" {
            // `env -` is `env -i`: an empty environment.
            i += 1;
            continue;
        }
        if let Some(long) = t.strip_prefix("--") {
            i += if !long.contains('=') && row.long_value.contains(&long) {
                2
            } else {
                1
            };
            continue;
        }
        if let Some(c) = cluster(t) {
            i += if c.len() == 1 && row.short_value.contains(c) {
                2
            } else {
                1
            };
            continue;
        }
        break;
    }
    while let Some(w) = args.get(i) {
        if !w.text.contains('=') || w.text.starts_with('=') {
            break;
        }
        let name = w.text.split('=').next().unwrap_or_default();
        if let Some(why) = super::code_variable(name) {
            a.opaque(w.text.clone(), why);
        }
        i += 1;
    }
    let rest = args.get(i..).unwrap_or_default().to_vec();
    a.derived(rest, depth);
}

#[cfg(test)]
mod tests {
    use super::super::{SHELLS, program};
    use super::*;
    use proptest::prelude::*;

    /// Commands, the parts they run, and whether they have a hazard; every
    /// wrapper name in [`WRAPPERS`] starts at least one.
    const CASES: &[(&str, &[&str], bool)] = &[
        ("exec -a name rm x", &["rm x"], true),
        ("command rm x", &["rm x"], false),
        ("command -v rm", &[], false),
        ("command -V rm", &[], false),
        ("builtin cd x", &["cd x"], false),
        ("nohup rm x", &["rm x"], false),
        ("setsid -f rm x", &["rm x"], false),
        ("busybox rm x", &["rm x"], false),
        ("env -u HOME X=1 rm x", &["rm x"], false),
        ("env -iu HOME rm x", &["HOME rm x"], false),
        ("env --chdir /tmp rm x", &["rm x"], false),
        ("env --bogus rm x", &["rm x"], false),
        ("env LD_PRELOAD=x rm x", &["rm x"], true),
        ("env -S 'rm x'", &["rm x"], true),
        ("nice -n 5 rm x", &["rm x"], false),
        ("nice -n5 rm x", &["rm x"], false),
        ("nice --adjustment 5 rm x", &["rm x"], false),
        ("nice --adjustment=5 rm x", &["rm x"], false),
        ("nice $X rm x", &[], true),
        ("timeout -s KILL 5 rm x", &["rm x"], false),
        ("timeout --preserve-status -k 1 5 rm x", &["rm x"], false),
        ("timeout --bogus 5 rm x", &[], true),
        ("timeout 5", &[], false),
        // `time` alone is the shell's keyword.
        ("/usr/bin/time -f %e rm x", &["rm x"], false),
        ("sudo -u root rm x", &["rm x"], false),
        ("sudo -- rm x", &["rm x"], false),
        ("sudo -s rm x", &["rm x"], true),
        ("doas -u root rm x", &["rm x"], false),
        ("stdbuf -o L rm x", &["rm x"], false),
        ("ionice -c 3 rm x", &["rm x"], false),
        ("chroot /srv rm x", &["rm x"], false),
        ("flock /tmp/l rm x", &["rm x"], false),
        ("flock -w 5 /tmp/l -c 'rm x'", &["rm x"], true),
        ("watch -n 5 rm x", &["rm x"], true),
        ("strace -o /dev/null rm x", &["rm x"], false),
        ("strace --output /dev/null -f rm x", &["rm x"], false),
        ("strace --bogus /dev/null rm x", &[], true),
        ("setpriv --reuid 1000 --nnp rm x", &["rm x"], false),
        ("unshare --net -S 0 rm x", &["rm x"], false),
        ("ltrace -o f rm x", &["rm x"], false),
        ("valgrind rm x", &["rm x"], false),
        ("unbuffer rm x", &["rm x"], false),
        ("fakeroot rm x", &["rm x"], false),
        ("firejail rm x", &["rm x"], false),
        ("chronic rm x", &["rm x"], false),
        ("catchsegv rm x", &["rm x"], false),
        ("xvfb-run rm x", &["rm x"], false),
        ("torsocks rm x", &["rm x"], false),
        ("proxychains rm x", &["rm x"], false),
        ("proxychains4 rm x", &["rm x"], false),
        ("systemd-run rm x", &["rm x"], false),
        ("dbus-run-session rm x", &["rm x"], false),
        ("nsenter -t 1 rm x", &["rm x"], false),
        ("prlimit -p 1 rm x", &["rm x"], false),
        ("taskset 0x1 rm x", &["rm x"], false),
        ("chrt 10 rm x", &["rm x"], false),
        ("script -c 'rm x' log", &["rm x"], true),
        ("script log", &[], false),
        ("su -c 'rm x'", &["rm x"], true),
        ("runuser -u u -c 'rm x'", &["rm x"], true),
        ("sg wheel 'rm x'", &["rm x"], true),
        ("parallel rm ::: a b", &["rm"], true),
        ("xargs -n 1 rm", &["rm"], false),
        ("/usr/bin/xargs -0 rm", &["rm"], false),
    ];

    #[test]
    fn wrappers_find_the_command_they_run() {
        for (command, inner, hazard) in CASES {
            let a = CommandAnalysis::parse(command);
            let parts: Vec<String> = a.parts.iter().skip(1).map(|p| p.text()).collect();
            assert_eq!(parts, *inner, "{command}");
            assert_eq!(!a.hazards.is_empty(), *hazard, "{command}: {:?}", a.hazards);
        }
    }

    #[test]
    fn every_wrapper_in_the_table_is_exercised() {
        for row in WRAPPERS {
            for name in row.names {
                assert!(
                    CASES
                        .iter()
                        .any(|(c, _, _)| c.split(' ').next().map(program) == Some(name)),
                    "{name} has no case"
                );
                assert!(
                    std::ptr::eq(wrapper(name).unwrap(), row),
                    "{name} is in two rows"
                );
                assert!(!SHELLS.contains(name), "{name} is a shell");
            }
        }
    }

    /// Words a call of the row at `row` may have: its own options, with
    /// and without values, operands, assignments and a command.
    fn vocabulary(row: &Wrapper) -> Vec<String> {
        let mut words: Vec<String> = ["--", "-", "5", "x", "rm", "-rf", "X=1", ":::", "-c", "$X"]
            .map(str::to_owned)
            .to_vec();
        for c in row.short_value.chars().chain(row.queries.iter().copied()) {
            words.extend([format!("-{c}"), format!("-{c}5"), format!("-x{c}")]);
        }
        for long in row.long_value.iter().chain(row.long_flag) {
            words.extend([format!("--{long}"), format!("--{long}=v")]);
        }
        words
    }

    fn call() -> impl Strategy<Value = (usize, Vec<String>)> {
        (0..WRAPPERS.len()).prop_flat_map(|row| {
            let words = proptest::sample::select(vocabulary(&WRAPPERS[row]));
            (Just(row), proptest::collection::vec(words, 0..7))
        })
    }

    proptest! {
        /// Whatever the options, a call the analysis understands fully
        /// runs at most one command, and that command is the tail of its
        /// words: nothing before it is skipped into it or out of it.
        #[test]
        fn an_understood_command_is_the_tail_of_the_words((row, words) in call()) {
            let row = &WRAPPERS[row];
            for name in row.names {
                let command = format!("{name} {}", words.join(" "));
                let a = CommandAnalysis::parse(&command);
                if !a.hazards.is_empty() || matches!(row.inner, Inner::Template(_)) {
                    continue;
                }
                prop_assert!(a.parts.len() <= 2, "{command}: {:?}", a.parts);
                if let [whole, inner] = &a.parts[..] {
                    prop_assert!(whole.words.ends_with(&inner.words), "{command}: {:?}", a.parts);
                }
            }
        }
    }
}
