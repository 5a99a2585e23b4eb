//! Commands that only read: a `bash` call whose every part is one of them
//! may run side by side with other concurrency-safe calls.
//!
//! The judgement uses the approval engine's command analysis
//! ([`CommandAnalysis`]) and fails closed: any hazard (a redirection to or
//! from a file, a process substitution, anything opaque), any part whose
//! program is not on the list below, or an option of a listed program that
//! writes or runs something (`sort -o`, `find -delete`, `rg --pre`, `git
//! -c`, `git diff --output`, `date -s`), and the call stays exclusive.
//! Substitutions are parts too, so `echo $(ls)` is read-only and
//! `echo $(rm x)` is not.

use crate::shell::CommandAnalysis;

/// Programs that read and print and never write or run anything else
/// (whatever their arguments, apart from those [`writes`] names).
const READERS: &[&str] = &[
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "find",
    "pwd",
    "echo",
    "which",
    "file",
    "stat",
    "du",
    "df",
    "true",
    "false",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "tree",
    "uname",
    "whoami",
    "id",
    "date",
    "sort",
    "cut",
    "nl",
    "diff",
    "cmp",
    "comm",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "cd",
    "type",
    "git",
];

/// `git` subcommands that only read.
const GIT_READERS: &[&str] = &["status", "log", "diff", "show", "branch"];

/// Whether every part of `command` only reads (see the module docs).
pub(crate) fn is_read_only(command: &str) -> bool {
    let analysis = CommandAnalysis::parse(command);
    if !analysis.hazards.is_empty() || analysis.parts.is_empty() {
        return false;
    }
    analysis.parts.iter().all(|part| {
        let words = part.without_assignments();
        match words.split_first() {
            Some((program, args)) => READERS.contains(&program.as_str()) && !writes(program, args),
            // A bare assignment: not a reader (and nothing worth running
            // side by side).
            None => false,
        }
    })
}

/// Whether `program` with `args` writes or runs something.
fn writes(program: &str, args: &[String]) -> bool {
    let any = |bad: &[&str]| {
        args.iter().any(|a| {
            bad.iter()
                .any(|b| a == b || (b.starts_with("--") && a.starts_with(&format!("{b}="))))
        })
    };
    match program {
        "find" => args.iter().any(|a| {
            matches!(
                a.as_str(),
                "-exec"
                    | "-execdir"
                    | "-ok"
                    | "-okdir"
                    | "-delete"
                    | "-fprint"
                    | "-fprint0"
                    | "-fprintf"
                    | "-fls"
            )
        }),
        "sort" => {
            any(&["--output", "--compress-program"])
                || args
                    .iter()
                    .any(|a| a.starts_with("-o") && !a.starts_with("--"))
        }
        "rg" => any(&["--pre", "--search-zip", "-z"]),
        "date" => {
            any(&["--set"])
                || args
                    .iter()
                    .any(|a| a.starts_with("-s") && !a.starts_with("--"))
        }
        "git" => !git_reads(args),
        // `tree -o FILE` writes its listing to FILE.
        "tree" => args
            .iter()
            .any(|a| a.starts_with("-o") || a.starts_with("--output")),
        // `file -C` compiles a magic file, written beside it.
        "file" => any(&["--compile"]) || args.iter().any(|a| short_flag(a, 'C')),
        _ => false,
    }
}

/// Whether `arg` is a bundle of short options holding `flag` (`-bC`).
fn short_flag(arg: &str, flag: char) -> bool {
    arg.strip_prefix('-')
        .is_some_and(|rest| !rest.starts_with('-') && rest.contains(flag))
}

/// Whether `git ARGS` is `status`, `log`, `diff`, `show` or `branch`
/// (listing only), with no `-c` setting and no `--output` file.
fn git_reads(args: &[String]) -> bool {
    let mut rest = args.iter();
    // Global options before the subcommand: only `-C DIR`, `--no-pager`
    // and `--no-optional-locks` are taken; `-c` can set a pager or an
    // alias that runs anything.
    let sub = loop {
        match rest.next().map(String::as_str) {
            Some("-C") => {
                rest.next();
            }
            Some("--no-pager" | "--no-optional-locks") => {}
            Some(word) => break word,
            None => return false,
        }
    };
    if !GIT_READERS.contains(&sub) {
        return false;
    }
    let args: Vec<&str> = rest.map(String::as_str).collect();
    if args
        .iter()
        .any(|a| *a == "--output" || a.starts_with("--output=") || a.starts_with("--ext-diff"))
    {
        return false;
    }
    if sub == "branch" {
        // Without arguments it lists; with any, only `--list` (and its
        // patterns) is known to read.
        return args.is_empty() || args.first() == Some(&"--list") || args == ["-l"];
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_and_their_combinations_are_read_only() {
        for command in [
            "ls -la",
            "cat a.txt | grep foo | wc -l",
            "git status && git log --oneline -5",
            "git -C sub diff HEAD~1",
            "git branch --list 'feat/*'",
            "git branch",
            "find . -name '*.rs' -type f",
            "echo $(ls)",
            "head -n 5 a 2>&1",
            "grep -r x . 2>/dev/null",
            "cd src && ls",
            "rg TODO src",
            "du -sh . ; df -h",
            "sort a.txt | cut -d, -f1",
        ] {
            assert!(is_read_only(command), "{command}");
        }
    }

    #[test]
    fn writers_and_runners_are_not() {
        for command in [
            "cat a > b",
            "cat a >> b",
            "ls | tee out",
            "find . -delete",
            "find . -exec rm {} \\;",
            "find . -fprint out",
            "echo $(rm x)",
            "sort -o out a",
            "sort --output=out a",
            "rg --pre ./run x",
            "git -c core.pager=evil log",
            "git diff --output=patch",
            "git branch new-branch",
            "git commit -m x",
            "git push",
            "date -s now",
            "tree -o listing.txt",
            "file -C -m magic",
            "file -bC -m magic",
            "xargs rm < list",
            "cat <(rm x)",
            "rm -rf target",
            "npm test",
            "eval ls",
            "$CMD",
            "X=1",
            "",
            "cat a; touch b",
        ] {
            assert!(!is_read_only(command), "{command}");
        }
    }
}
