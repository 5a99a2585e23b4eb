//! Commits inside the sandbox: `git add`, `commit`, `checkout -b` and
//! `stash` work in a confined command, as root and as `nobody`, while what
//! makes git run code (the config, `config.worktree`, `hooks/`, `info/`,
//! the submodules' and worktrees' repositories and pointers) stays
//! read-only: after every attack, what an unconfined git runs is what it
//! ran before.

use std::path::Path;
use std::process::Command;

use crate::support::require::*;
use crate::support::sandbox::*;

const GIT_ENV: &str = "export GIT_AUTHOR_NAME=agent GIT_AUTHOR_EMAIL=agent@example.test \
                       GIT_COMMITTER_NAME=agent GIT_COMMITTER_EMAIL=agent@example.test";

/// A repository at the scene's root with one commit, and a submodule
/// `sub` whose repository lives in `.git/modules/sub`.
fn repository(s: &Scene) {
    let upstream = s.outside.join("upstream");
    std::fs::create_dir(&upstream).unwrap();
    git(&upstream, &["init", "-q", "-b", "main"]);
    std::fs::write(upstream.join("lib.txt"), "lib\n").unwrap();
    git(&upstream, &["add", "lib.txt"]);
    git(&upstream, &["commit", "-q", "-m", "lib"]);
    git(&s.root, &["init", "-q", "-b", "main"]);
    git(&s.root, &["add", "a.txt"]);
    git(&s.root, &["commit", "-q", "-m", "first"]);
    git(
        &s.root,
        &["submodule", "add", "-q", upstream.to_str().unwrap(), "sub"],
    );
    git(&s.root, &["commit", "-q", "-m", "submodule"]);
}

/// Everything that decides what an unconfined git runs in the repository:
/// the config files' text and the listings of the guarded folders.
fn what_git_runs(root: &Path) -> String {
    let git_dir = root.join(".git");
    let mut out = String::new();
    for file in [
        "config",
        "config.worktree",
        "modules/sub/config",
        "modules/sub/config.worktree",
    ] {
        let text = std::fs::read_to_string(git_dir.join(file)).unwrap_or_default();
        out.push_str(&format!("== {file}\n{text}"));
    }
    for dir in [
        "hooks",
        "info",
        "modules",
        "worktrees",
        "modules/sub/hooks",
        "modules/sub/info",
    ] {
        let mut names: Vec<String> = std::fs::read_dir(git_dir.join(dir))
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        out.push_str(&format!("== {dir}/: {names:?}\n"));
    }
    out.push_str(&git(root, &["config", "--list", "--show-origin"]));
    out
}

/// A scene with [`repository`], owned by `user`, and [`what_git_runs`]
/// in it before any command.
fn repository_for(user: User) -> (Scene, String) {
    let s = scene(CONFINED);
    repository(&s);
    if user == User::Nobody {
        give_to_nobody(&s);
    }
    let before = what_git_runs(&s.root);
    (s, before)
}

/// Opens the scene to `nobody` as its owner: git refuses a repository
/// another user owns.
fn give_to_nobody(s: &Scene) {
    let status = Command::new("chown")
        .args(["-R", "nobody:nogroup"])
        .arg(&s.dir)
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
#[ignore = "needs the command sandbox, root, setpriv and git"]
fn commits_branches_and_stashes_work_confined_as_root_and_as_nobody() {
    require_sandbox();
    require_program("git");
    for user in current_and_nobody() {
        let (s, before) = repository_for(user);
        let script = format!(
            "set -e; {GIT_ENV}; echo change >> a.txt; git add a.txt; git commit -q -m inside; \
             git checkout -q -b feature; echo more >> a.txt; git stash -q; \
             (cd sub && echo s >> lib.txt && git commit -q -am in-submodule); \
             git add sub; git commit -q -m bump; echo all-done"
        );
        let events = run_as(&s, user, "bypass", &[bash("c", &script)]);
        let (outcome, text) = end(&events, "c");
        assert!(text.contains("all-done"), "{user:?}: {outcome} {text}");
        assert!(!text.contains("sandboxed:"), "{user:?}: {text}");
        let log = git(&s.root, &["log", "--format=%s", "feature"]);
        assert_eq!(log, "bump\ninside\nsubmodule\nfirst\n", "{user:?}");
        assert_eq!(git(&s.root, &["branch", "--show-current"]), "feature\n");
        assert!(
            git(&s.root, &["stash", "list"]).contains("feature"),
            "{user:?}"
        );
        assert_eq!(
            git(&s.root.join("sub"), &["log", "-1", "--format=%s"]),
            "in-submodule\n"
        );
        assert_eq!(what_git_runs(&s.root), before, "{user:?}");
    }
}

#[test]
#[ignore = "needs the command sandbox, root, setpriv and git"]
fn nothing_a_confined_command_does_changes_what_an_unconfined_git_runs() {
    require_sandbox();
    require_program("git");
    for user in current_and_nobody() {
        let (s, before) = repository_for(user);
        // Each attack on a line of its own, none stopping the next.
        let attacks = [
            "git config core.hooksPath /tmp/evil",
            "git config --worktree core.fsmonitor evil",
            "git config -f .git/config.worktree core.fsmonitor evil",
            "printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit",
            "echo '* filter=evil' > .git/info/attributes",
            "echo '[core] fsmonitor = evil' >> .git/modules/sub/config",
            "echo evil > .git/modules/sub/hooks/post-checkout",
            "mkdir -p .git/modules/evil/hooks",
            "mkdir -p .git/worktrees/evil",
            "git worktree add -q wt2",
            "mv .git .git-moved && mkdir .git && echo '[core] fsmonitor = evil' > .git/config",
            "mv .git/config .git/config.moved",
            "mv .git/hooks .git/hooks.moved && mkdir .git/hooks",
            "mv .git/modules/sub .git/modules/sub.moved",
            "rm -rf .git/hooks .git/info",
            "ln -s ../../config .git/refs/heads/evil && echo '[core] fsmonitor = evil' > .git/refs/heads/evil",
            "ln -sf config .git/link && git config -f .git/link core.fsmonitor evil && cat .git/link",
            "git update-ref refs/heads/../../config HEAD",
            "git branch '../config'",
            "git -c core.hooksPath=/tmp/evil commit -q --allow-empty -m with-dash-c",
            "echo 'gitdir: /tmp/evil' > sub/.git",
        ]
        .map(|a| format!("{GIT_ENV}; ( {a} ) 2>&1; echo \"== $?\""))
        .join("\n");
        let events = run_as(&s, user, "bypass", &[bash("c", &attacks)]);
        let (_, text) = end(&events, "c");
        assert!(text.contains("Read-only file system"), "{user:?}: {text}");
        assert_eq!(what_git_runs(&s.root), before, "{user:?}: {text}");
        assert!(!s.root.join(".git-moved").exists(), "{text}");
        assert!(!s.root.join("wt2/.git").exists(), "{text}");
        let pointer = std::fs::read_to_string(s.root.join("sub/.git")).unwrap();
        assert!(pointer.contains("modules/sub"), "{pointer}");
        // The commit made with `-c` ran in the sandbox, under its own
        // flag only.
        let log = git(&s.root, &["log", "-1", "--format=%s"]);
        assert_eq!(log, "with-dash-c\n", "{text}");
    }
}

#[test]
#[ignore = "needs the command sandbox and git"]
fn a_repository_without_hooks_cannot_be_given_one() {
    require_sandbox();
    require_program("git");
    let s = scene(CONFINED);
    git(&s.root, &["init", "-q", "-b", "main"]);
    std::fs::remove_dir_all(s.root.join(".git/hooks")).unwrap();
    let _ = std::fs::remove_dir_all(s.root.join(".git/info"));
    let script = "mkdir -p .git/hooks .git/info; echo evil > .git/hooks/pre-commit; \
                  echo '* filter=x' > .git/info/attributes; echo '[core]' > .git/config.worktree; \
                  git add a.txt && echo staged";
    let events = run(&s, "bypass", &[bash("c", script)]);
    let (_, text) = end(&events, "c");
    assert!(text.contains("staged"), "{text}");
    assert!(text.contains("Read-only file system"), "{text}");
    assert!(!s.root.join(".git/hooks/pre-commit").exists());
    assert!(!s.root.join(".git/info/attributes").exists());
    assert_eq!(
        std::fs::read_to_string(s.root.join(".git/config.worktree")).unwrap(),
        ""
    );
}

#[test]
#[ignore = "needs the command sandbox and git"]
fn what_the_config_names_cannot_be_created_by_a_command() {
    require_sandbox();
    require_program("git");
    let s = scene(CONFINED);
    git(&s.root, &["init", "-q", "-b", "main"]);
    git(&s.root, &["config", "include.path", "extra.cfg"]);
    git(&s.root, &["config", "core.hooksPath", ".githooks"]);
    let marker = s.outside.join("ran");
    let script = format!(
        "printf '[core]\\n\\tfsmonitor = \"echo include >> {m}; false\"\\n' > .git/extra.cfg; \
         mkdir -p .githooks; printf '#!/bin/sh\\necho hook >> {m}\\n' > .githooks/pre-commit; \
         chmod +x .githooks/pre-commit; echo done",
        m = marker.display()
    );
    let events = run(&s, "bypass", &[bash("c", &script)]);
    let (_, text) = end(&events, "c");
    assert!(text.contains("Read-only file system"), "{text}");
    git(&s.root, &["status"]);
    git(&s.root, &["commit", "-q", "--allow-empty", "-m", "x"]);
    assert!(
        !marker.exists(),
        "{}",
        std::fs::read_to_string(&marker).unwrap_or_default()
    );
}

#[test]
#[ignore = "needs the command sandbox and git"]
fn a_repository_a_command_makes_and_stages_is_reported_and_then_protected() {
    require_sandbox();
    require_program("git");
    let s = scene(CONFINED);
    git(&s.root, &["init", "-q", "-b", "main"]);
    git(&s.root, &["add", "a.txt"]);
    git(&s.root, &["commit", "-q", "-m", "first"]);
    let plant = format!(
        "{GIT_ENV}; mkdir evil && cd evil && git init -q -b main && \
         git config core.fsmonitor 'echo ran; false' && git commit -q --allow-empty -m x && \
         cd .. && git add evil && git commit -q -m sub && echo planted"
    );
    let again = "echo '[core] hooksPath = /tmp/x' >> evil/.git/config; echo second";
    let events = run(&s, "bypass", &[bash("plant", &plant), bash("again", again)]);
    let (_, text) = end(&events, "plant");
    assert!(text.contains("planted"), "{text}");
    let git_dir = s.root.join("evil/.git");
    assert!(
        text.ends_with(&format!(
            "(sandboxed: this command made the git repository {} and staged it as a submodule; \
             git run outside the sandbox in this repository reads its config: check it before \
             running git unconfined)",
            git_dir.display()
        )),
        "{text}"
    );
    let (_, text) = end(&events, "again");
    assert!(text.contains("Read-only file system"), "{text}");
    assert!(
        !text.contains("made the git repository"),
        "reported once: {text}"
    );
    let config = std::fs::read_to_string(git_dir.join("config")).unwrap();
    assert!(!config.contains("hooksPath"), "{config}");
}
