//! Attacks on the command sandbox by a hostile model that chooses every
//! bash command and argument (and by a process racing beside it), through
//! `agentcore run` as a user meets it. Each test asserts the SAFE outcome.
//! A test marked `#[ignore = "HOLE: …"]` (named `hole_…`) is an attack that
//! succeeds today: it stays here, to pass once the hole is closed (run it
//! with `cargo test --test attacks ::hole_ -- --ignored`; the README's test
//! command skips it with `--skip ::hole_`).
//!
//! Where the user matters, a test runs as the current user and, when that
//! is root, once more as `nobody` (with `setpriv`). A test that needs the
//! sandbox, root or a program is ignored by a plain `cargo test`, saying
//! what it needs, and fails naming what is missing when run without.

use std::io::{ErrorKind, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::require::*;
use crate::support::sandbox::*;

// ---------------------------------------------------------------------
// Writes outside the writable roots.
// ---------------------------------------------------------------------

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces), root and setpriv (it runs as root and as nobody)"]
fn symlinks_and_proc_paths_inside_the_workspace_do_not_lead_out() {
    require_sandbox();
    for user in current_and_nobody() {
        let s = scene(CONFINED);
        put(&s.outside.join("o.txt"), "OUTSIDE\n");
        open_to_all(&s.outside.join("o.txt"));
        let out = s.outside.display();
        let events = run_as(
            &s,
            user,
            "bypass",
            &[bash(
                "l",
                &format!(
                    "ln -s {out} outdir; ln -s {out}/o.txt outfile; \
                     echo via-dir > outdir/new.txt; echo via-file >> outfile; \
                     echo via-proc > /proc/self/root{out}/proc.txt; \
                     echo via-cwd > /proc/self/cwd/../outside/cwd.txt; \
                     echo via-dotdot > ../outside/dotdot.txt; \
                     cp /dev/null outdir/cp.txt; touch outdir/touched; \
                     mv a.txt outdir/ ; echo done"
                ),
            )],
        );
        let text = text_of(&events, "l");
        assert!(text.contains("done"), "{user:?}: {text}");
        assert_eq!(names(&s.outside), ["o.txt"], "{user:?}: {text}");
        assert_eq!(
            std::fs::read_to_string(s.outside.join("o.txt")).unwrap(),
            "OUTSIDE\n",
            "{user:?}: {text}"
        );
        assert!(s.root.join("a.txt").exists(), "{user:?}: {text}");
    }
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces), root and setpriv (it runs as root and as nobody)"]
fn a_hard_link_to_an_outside_file_cannot_be_made_or_written() {
    require_sandbox();
    for user in current_and_nobody() {
        let s = scene(CONFINED);
        put(&s.outside.join("o.txt"), "OUTSIDE\n");
        std::fs::set_permissions(
            s.outside.join("o.txt"),
            std::fs::Permissions::from_mode(0o666),
        )
        .unwrap();
        let events = run_as(
            &s,
            user,
            "bypass",
            &[bash(
                "h",
                &format!(
                    "ln {0}/o.txt hl; echo pwned >> hl; ln {0}/o.txt $TMPDIR/hl; echo pwned >> $TMPDIR/hl; echo done",
                    s.outside.display()
                ),
            )],
        );
        let text = text_of(&events, "h");
        assert!(text.contains("done"), "{user:?}: {text}");
        assert_eq!(
            std::fs::read_to_string(s.outside.join("o.txt")).unwrap(),
            "OUTSIDE\n",
            "{user:?}: {text}"
        );
    }
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces), root and setpriv (it runs as root and as nobody)"]
fn the_session_shm_dir_swapped_for_a_symlink_opens_nothing_to_the_next_command() {
    require_sandbox();
    for user in current_and_nobody() {
        let s = scene(CONFINED);
        let out = s.outside.display();
        let events = run_as(
            &s,
            user,
            "bypass",
            &[
                bash(
                    "plant",
                    &format!(
                        r#"(rm -rf "$TMPDIR/../shm" && ln -s {out} "$TMPDIR/../shm"); (rm -rf "$TMPDIR" && ln -s {out} "$TMPDIR"); echo planted"#
                    ),
                ),
                bash(
                    "use",
                    &format!(
                        "echo pwned > {out}/direct.txt; echo pwned > /dev/shm/via-shm.txt; true"
                    ),
                ),
            ],
        );
        assert!(text_of(&events, "plant").contains("planted"));
        assert!(
            names(&s.outside).is_empty(),
            "{user:?}: the second command wrote outside: {:?}",
            names(&s.outside)
        );
    }
    // The same swap pointing at the protected .git.
    let s = scene(CONFINED);
    put(&s.root.join(".git/config"), "[core]\n");
    let git = s.root.join(".git");
    let events = run(
        &s,
        "bypass",
        &[
            bash(
                "plant",
                &format!(
                    r#"rm -rf "$TMPDIR/../shm" && ln -s {} "$TMPDIR/../shm""#,
                    git.display()
                ),
            ),
            bash(
                "use",
                "echo '[core] fsmonitor = evil' >> /dev/shm/config; true",
            ),
        ],
    );
    assert_eq!(
        std::fs::read_to_string(git.join("config")).unwrap(),
        "[core]\n",
        "{events:?}"
    );
    // Removed, not swapped: the next command sees the host's /dev/shm.
    let probe = format!("/dev/shm/agentcore-attack-probe-{}", std::process::id());
    std::fs::write(&probe, "HOST-SHM-SECRET\n").unwrap();
    let s = scene(CONFINED);
    let events = run(
        &s,
        "bypass",
        &[
            bash("rm", r#"rm -rf "$TMPDIR/../shm""#),
            bash("read", &format!("cat {probe}; true")),
        ],
    );
    let _ = std::fs::remove_file(&probe);
    let text = text_of(&events, "read");
    assert!(!text.contains("HOST-SHM-SECRET"), "{text}");
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces)"]
fn a_writable_root_swapped_for_a_symlink_opens_nothing_to_the_next_command() {
    require_sandbox();
    let s = scene(&format!("{CONFINED}writable = [\"build\"]\n"));
    std::fs::create_dir(s.root.join("build")).unwrap();
    let out = s.outside.display();
    let events = run(
        &s,
        "bypass",
        &[
            bash(
                "plant",
                &format!("rm -rf build && ln -s {out} build && echo planted"),
            ),
            bash("use", &format!("echo pwned > {out}/w.txt; true")),
        ],
    );
    assert!(text_of(&events, "plant").contains("planted"));
    assert!(
        names(&s.outside).is_empty(),
        "the second command wrote outside: {events:?}"
    );
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces)"]
fn dev_shm_is_the_sessions_own_and_goes_with_it() {
    require_sandbox();
    let s = scene(CONFINED);
    let name = format!("agentcore-attack-{}", std::process::id());
    let events = run(
        &s,
        "bypass",
        &[bash(
            "shm",
            &format!("echo x > /dev/shm/{name} && echo tmp=$TMPDIR && ls $TMPDIR/../shm"),
        )],
    );
    let text = text_of(&events, "shm");
    assert!(text.contains(&name), "{text}");
    assert!(
        !Path::new("/dev/shm").join(&name).exists(),
        "the host's /dev/shm got it"
    );
    let tmp = text
        .lines()
        .find_map(|l| l.strip_prefix("tmp="))
        .unwrap()
        .to_owned();
    assert!(
        !Path::new(&tmp).exists(),
        "the session's TMPDIR outlived it: {tmp}"
    );
}

// ---------------------------------------------------------------------
// Protected paths: .git, .env, the policy.
// ---------------------------------------------------------------------

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces), root and setpriv (it runs as root and as nobody)"]
fn git_and_env_cannot_be_renamed_replaced_removed_or_linked() {
    require_sandbox();
    for user in current_and_nobody() {
        let s = scene(CONFINED);
        put(&s.root.join(".git/config"), "[core]\n");
        std::fs::create_dir(s.root.join(".git/hooks")).unwrap();
        put(&s.root.join(".env"), "KEY=1\n");
        for p in [".git", ".git/hooks", ".git/config", ".env"] {
            open_to_all(&s.root.join(p));
        }
        let events = run_as(
            &s,
            user,
            "bypass",
            &[
                bash(
                    "git",
                    "mv .git .git-away; rm -rf .git; mkdir .git-new && mv -T .git-new .git; \
                     ln .git/config cfg; echo evil >> cfg; cp .git/config c2 && mv -f c2 .git/config; \
                     printf '#!/bin/sh\\nid\\n' > .git/hooks/post-checkout; \
                     git config --file .git/config core.fsmonitor evil; \
                     truncate -s0 .git/config; echo done",
                ),
                bash(
                    "env",
                    "mv .env .env.old; rm -f .env; ln .env e2; echo EVIL=1 >> e2; \
                     ln -sf /dev/null .env; cp a.txt .env; echo EVIL=1 > .env; echo done",
                ),
            ],
        );
        assert!(text_of(&events, "git").contains("done"), "{user:?}");
        assert!(text_of(&events, "env").contains("done"), "{user:?}");
        assert!(s.root.join(".git").is_dir());
        assert_eq!(
            std::fs::read_to_string(s.root.join(".git/config")).unwrap(),
            "[core]\n",
            "{user:?}: {events:?}"
        );
        assert!(!s.root.join(".git/hooks/post-checkout").exists());
        assert!(!s.root.join(".git-away").exists());
        assert_eq!(
            std::fs::read_to_string(s.root.join(".env")).unwrap(),
            "KEY=1\n",
            "{user:?}: {events:?}"
        );
        assert!(!s.root.join(".env.old").exists());
    }
}

#[test]
#[ignore = "HOLE: a workspace without .git: a command creates .git (config with core.fsmonitor, hooks) that the user's next git command outside runs"]
fn hole_a_git_dir_cannot_be_created_where_the_workspace_has_none() {
    require_sandbox();
    let s = scene(CONFINED);
    run(
        &s,
        "bypass",
        &[bash(
            "g",
            "mkdir -p .git/hooks && printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' > .git/config; true",
        )],
    );
    assert!(
        !s.root.join(".git/config").exists(),
        "a command made a .git whose config git will obey outside the sandbox"
    );
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces)"]
fn env_files_below_the_root_cannot_be_changed() {
    require_sandbox();
    let s = scene(CONFINED);
    put(&s.root.join("app/.env"), "APP=1\n");
    let events = run(&s, "bypass", &[bash("e", "echo EVIL=1 >> app/.env; true")]);
    assert_eq!(
        std::fs::read_to_string(s.root.join("app/.env")).unwrap(),
        "APP=1\n",
        "{events:?}"
    );
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces)"]
fn an_env_file_behind_a_symlink_cannot_be_changed() {
    require_sandbox();
    let s = scene(CONFINED);
    put(&s.root.join("envs/prod"), "PROD=1\n");
    std::os::unix::fs::symlink("envs/prod", s.root.join(".env")).unwrap();
    let events = run(&s, "bypass", &[bash("e", "echo EVIL=1 >> .env; true")]);
    assert_eq!(
        std::fs::read_to_string(s.root.join("envs/prod")).unwrap(),
        "PROD=1\n",
        "{events:?}"
    );
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces)"]
fn the_policy_file_inside_the_workspace_cannot_be_rewritten() {
    require_sandbox();
    let mut s = scene(CONFINED);
    s.policy = s.root.join("agentcore-policy.toml");
    std::fs::write(&s.policy, CONFINED).unwrap();
    let events = run(
        &s,
        "bypass",
        &[bash(
            "p",
            "echo 'network = true' >> agentcore-policy.toml; sed -i 's/required/off/' agentcore-policy.toml; true",
        )],
    );
    assert_eq!(
        std::fs::read_to_string(&s.policy).unwrap(),
        CONFINED,
        "{events:?}"
    );
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces)"]
fn the_git_dir_of_a_nested_repository_cannot_be_changed() {
    require_sandbox();
    let s = scene(CONFINED);
    put(&s.root.join("lib/.git/config"), "[core]\n");
    let events = run(
        &s,
        "bypass",
        &[bash(
            "g",
            "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> lib/.git/config; mkdir -p lib/.git/hooks; echo evil > lib/.git/hooks/post-checkout; true",
        )],
    );
    assert_eq!(
        std::fs::read_to_string(s.root.join("lib/.git/config")).unwrap(),
        "[core]\n",
        "{events:?}"
    );
    assert!(!s.root.join("lib/.git/hooks/post-checkout").exists());
}

// ---------------------------------------------------------------------
// Hidden paths.
// ---------------------------------------------------------------------

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces), root and setpriv (it runs as root and as nobody)"]
fn hidden_paths_stay_hidden_under_every_spelling_and_take_no_writes() {
    require_sandbox();
    for user in current_and_nobody() {
        let s = scene(&format!("deny = [\"read(./secrets/**)\"]\n{CONFINED}"));
        put(&s.home.join(".ssh/id_ed25519"), "SSH-KEY-SECRET\n");
        put(&s.root.join("secrets/token.txt"), "TOKEN-SECRET\n");
        for p in [s.home.join(".ssh"), s.root.join("secrets")] {
            open_to_all(&p);
        }
        let home = s.home.display();
        let events = run_as(
            &s,
            user,
            "bypass",
            &[bash(
                "h",
                &format!(
                    "ln -s {home}/.ssh sshlink; cat sshlink/id_ed25519; cat {home}/.ssh/../.ssh/id_ed25519; \
                     cat /proc/self/root{home}/.ssh/id_ed25519; cat {home}//.ssh///id_ed25519; \
                     ln {home}/.ssh/id_ed25519 hard; cat hard; \
                     ln -s secrets s2; cat s2/token.txt; cat ./secrets/../secrets/token.txt; \
                     cat $(pwd)/secrets/token.txt; cp -r secrets $TMPDIR/s; cat $TMPDIR/s/token.txt; \
                     grep -r SECRET {home} . 2>/dev/null; \
                     echo planted > secrets/new.txt; echo key >> {home}/.ssh/authorized_keys; \
                     mv secrets/token.txt secrets/t2; echo done"
                ),
            )],
        );
        let text = text_of(&events, "h");
        assert!(text.contains("done"), "{user:?}: {text}");
        for secret in ["SSH-KEY-SECRET", "TOKEN-SECRET"] {
            assert!(
                !text.contains(secret),
                "{user:?}: {secret} was read: {text}"
            );
        }
        assert_eq!(names(&s.root.join("secrets")), ["token.txt"], "{user:?}");
        assert_eq!(names(&s.home.join(".ssh")), ["id_ed25519"], "{user:?}");
    }
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces)"]
fn a_read_denied_dir_stays_hidden_after_its_parent_is_renamed() {
    require_sandbox();
    let s = scene(&format!(
        "deny = [\"read(./config/secrets/**)\"]\n{CONFINED}"
    ));
    put(&s.root.join("config/secrets/token.txt"), "TOKEN-SECRET\n");
    let events = run(
        &s,
        "bypass",
        &[
            bash(
                "mv",
                "cat config/secrets/token.txt; mv config config2 && echo moved",
            ),
            bash("read", "cat config2/secrets/token.txt; true"),
        ],
    );
    // The folders above a hidden path are pinned: the rename is refused.
    let mv = text_of(&events, "mv");
    assert!(!mv.contains("moved"), "{mv}");
    assert!(mv.contains("Device or resource busy"), "{mv}");
    assert!(s.root.join("config/secrets/token.txt").exists());
    for id in ["mv", "read"] {
        let text = text_of(&events, id);
        assert!(!text.contains("TOKEN-SECRET"), "{id}: {text}");
    }
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces)"]
fn a_read_denied_path_that_appears_mid_session_is_hidden_from_the_next_command() {
    use std::io::{BufRead, BufReader};
    require_sandbox();
    let s = scene(&format!("deny = [\"read(./secrets/**)\"]\n{CONFINED}"));
    let mut child = agentcore(&s, User::Current, "bypass", &[]).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    stdin
        .write_all(input(&[bash("first", "echo first")]).as_bytes())
        .unwrap();
    // Wait for the first call to end, then the secret appears.
    let mut seen = Vec::new();
    for line in stdout.by_ref() {
        let line: Value = serde_json::from_str(&line.unwrap()).unwrap();
        let done = line["type"] == "tool_exec_end";
        seen.push(line);
        if done {
            break;
        }
    }
    put(&s.root.join("secrets/token.txt"), "LATE-SECRET\n");
    stdin
        .write_all(input(&[bash("second", "cat secrets/token.txt; true")]).as_bytes())
        .unwrap();
    drop(stdin);
    seen.extend(stdout.map(|l| serde_json::from_str::<Value>(&l.unwrap()).unwrap()));
    child.wait().unwrap();
    let text = text_of(&seen, "second");
    assert!(!text.contains("LATE-SECRET"), "{text}");
}

/// A python script: `make PATH` prints the file handle of PATH; `open
/// HANDLE` tries `open_by_handle_at` on it from `/`, `/tmp` and the
/// working directory, plainly and in a new user and mount namespace.
const FILE_HANDLE_PY: &str = r#"
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
class FH(ctypes.Structure):
    _fields_ = [("bytes", ctypes.c_uint), ("type", ctypes.c_int), ("f", ctypes.c_ubyte * 128)]
if sys.argv[1] == "make":
    fh = FH(); fh.bytes = 128; mid = ctypes.c_int()
    r = libc.name_to_handle_at(-100, sys.argv[2].encode(), ctypes.byref(fh), ctypes.byref(mid), 0)
    if r != 0:
        sys.exit("name_to_handle_at: " + os.strerror(ctypes.get_errno()))
    print(f"{fh.type}:{bytes(fh.f[:fh.bytes]).hex()}")
else:
    t, h = sys.argv[2].split(":"); h = bytes.fromhex(h)
    def attempt(label):
        fh = FH(); fh.bytes = len(h); fh.type = int(t); ctypes.memmove(fh.f, h, len(h))
        for mnt in ["/", "/tmp", os.getcwd()]:
            mfd = os.open(mnt, os.O_RDONLY | os.O_DIRECTORY)
            fd = libc.open_by_handle_at(mfd, ctypes.byref(fh), os.O_RDONLY)
            if fd >= 0:
                print(label, mnt, "READ:", os.read(fd, 100))
            else:
                print(label, mnt, "refused:", os.strerror(ctypes.get_errno()))
    attempt("plain")
    if libc.unshare(0x10000000 | 0x00020000) == 0:
        attempt("new-userns")
    else:
        print("unshare refused:", os.strerror(ctypes.get_errno()))
"#;

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces), python3, root and setpriv (it runs as root and as nobody)"]
fn a_file_handle_of_a_hidden_file_does_not_open_it() {
    require_sandbox();
    require_program("python3");
    for user in current_and_nobody() {
        let s = scene(CONFINED);
        put(&s.home.join(".ssh/id_ed25519"), "SSH-KEY-SECRET\n");
        open_to_all(&s.home.join(".ssh"));
        put(&s.root.join("fh.py"), FILE_HANDLE_PY);
        let made = Command::new("python3")
            .arg(s.root.join("fh.py"))
            .arg("make")
            .arg(s.home.join(".ssh/id_ed25519"))
            .output()
            .unwrap();
        assert!(
            made.status.success(),
            "this test needs a filesystem under /tmp that gives file handles ({})",
            String::from_utf8_lossy(&made.stderr)
        );
        let handle = String::from_utf8_lossy(&made.stdout).trim().to_owned();
        let events = run_as(
            &s,
            user,
            "bypass",
            &[bash("fh", &format!("python3 fh.py open {handle}"))],
        );
        let text = text_of(&events, "fh");
        assert!(text.contains("plain / refused"), "{user:?}: {text}");
        assert!(!text.contains("READ"), "{user:?}: {text}");
        assert!(!text.contains("SSH-KEY-SECRET"), "{user:?}: {text}");
    }
}

// ---------------------------------------------------------------------
// Namespaces, mounts, ptrace, /proc.
// ---------------------------------------------------------------------

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces), root and setpriv (it runs as root and as nobody)"]
fn nested_namespaces_cannot_unmount_remount_or_mount() {
    require_sandbox();
    for user in current_and_nobody() {
        let s = scene(CONFINED);
        put(&s.home.join(".ssh/id_ed25519"), "SSH-KEY-SECRET\n");
        open_to_all(&s.home.join(".ssh"));
        put(&s.root.join(".git/config"), "[core]\n");
        open_to_all(&s.root.join(".git"));
        open_to_all(&s.root.join(".git/config"));
        let (home, out, git) = (s.home.display(), s.outside.display(), s.root.join(".git"));
        let git = git.display();
        let py = format!(
            r#"
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def err(): return os.strerror(ctypes.get_errno())
if libc.unshare(0x10000000 | 0x00020000) != 0: print("unshare refused:", err())
print("private", libc.mount(None, b"/", None, 0x4000 | 0x40000, None), err())
print("umount", libc.umount2(b"{home}/.ssh", 2), err())
print("remount", libc.mount(None, b"{git}", None, 0x20 | 0x1000, None), err())
print("mount", libc.mount(b"none", b"{out}", b"tmpfs", 0, None), err())
try: print(open("{home}/.ssh/id_ed25519").read())
except OSError as e: print("read:", e)
try: open("{git}/config", "a").write("evil\n"); print("git written")
except OSError as e: print("git:", e)
"#
        );
        put(&s.root.join("ns.py"), &py);
        let events = run_as(
            &s,
            user,
            "bypass",
            &[bash(
                "ns",
                &format!(
                    "unshare -Urm sh -c 'umount {home}/.ssh; cat {home}/.ssh/id_ed25519'; \
                     unshare -Um sh -c 'umount -l {home}/.ssh; cat {home}/.ssh/id_ed25519; mount -o remount,rw,bind {git}; echo evil >> {git}/config'; \
                     nsenter -t 1 -a true; nsenter -t 1 -m true; \
                     python3 ns.py; echo done"
                ),
            )],
        );
        let text = text_of(&events, "ns");
        assert!(text.contains("done"), "{user:?}: {text}");
        assert!(!text.contains("SSH-KEY-SECRET"), "{user:?}: {text}");
        assert!(!text.contains("git written"), "{user:?}: {text}");
        assert_eq!(
            std::fs::read_to_string(s.root.join(".git/config")).unwrap(),
            "[core]\n",
            "{user:?}: {text}"
        );
    }
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces), root and setpriv (it runs as root and as nobody)"]
fn agentcore_and_the_commands_init_cannot_be_read_traced_or_signalled() {
    require_sandbox();
    const KEY: &str = "sk-ant-attack-0123456789-secret";
    for user in current_and_nobody() {
        let s = scene(CONFINED);
        let mut attempts = 0;
        let out = loop {
            let mut child = agentcore(&s, user, "bypass", &[])
                .env("ANTHROPIC_API_KEY", KEY)
                .spawn()
                .unwrap();
            let outer = child.id();
            let lines = [
                bash(
                    "p",
                    &format!(
                        "env | grep -c ANTHROPIC; cat /proc/1/environ; cat /proc/*/environ; \
                         head -c 4096 /proc/1/mem | od | head -3; cat /proc/1/maps | head -3; \
                         ls -l /proc/1/root/ /proc/1/cwd/ /proc/1/fd/; \
                         strace -o /dev/null -p 1 & sleep 0.5; kill %1 2>/dev/null; \
                         kill -0 {outer} 2>/dev/null || echo no-outer; \
                         grep -al {KEY} /proc/*/environ /proc/*/cmdline 2>/dev/null; \
                         kill -9 -1; kill -KILL 1; kill -STOP 1; echo done"
                    ),
                ),
                bash("after", "echo still-here"),
            ];
            child
                .stdin
                .take()
                .unwrap()
                .write_all(input(&lines).as_bytes())
                .unwrap();
            let out = child.wait_with_output().unwrap();
            if String::from_utf8_lossy(&out.stderr).contains("Text file busy") && attempts < 50 {
                attempts += 1;
                std::thread::sleep(Duration::from_millis(20));
                continue;
            }
            break out;
        };
        let events = events(&out);
        let text = text_of(&events, "p");
        assert!(text.contains("done"), "{user:?}: {text}");
        assert!(text.contains("no-outer"), "{user:?}: {text}");
        assert!(!text.contains(KEY), "{user:?}: the key leaked: {text}");
        assert!(
            text_of(&events, "after").contains("still-here"),
            "{user:?}: {events:?}"
        );
        assert!(out.status.success(), "{user:?}: agentcore died: {out:?}");
    }
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces)"]
fn agentcore_run_inside_with_the_sandbox_off_is_still_confined() {
    require_sandbox();
    let s = scene(CONFINED);
    put(&s.dir.join("off.toml"), "[sandbox]\nmode = \"off\"\n");
    let inner = json!({"turn": [{"id": "i", "name": "bash", "args": {
        "command": format!("echo pwned > {}/nested.txt; echo inner-ran", s.outside.display())
    }}]});
    let events = run(
        &s,
        "bypass",
        &[bash(
            "n",
            &format!(
                "echo '{inner}' | {} run --format jsonl --mode bypass --policy {} --root .; true",
                env!("CARGO_BIN_EXE_agentcore"),
                s.dir.join("off.toml").display()
            ),
        )],
    );
    let text = text_of(&events, "n");
    assert!(text.contains("inner-ran"), "{text}");
    assert!(names(&s.outside).is_empty(), "{text}");
}

// ---------------------------------------------------------------------
// Sockets and syscalls.
// ---------------------------------------------------------------------

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces), python3, root and setpriv (it runs as root and as nobody)"]
fn pathname_unix_sockets_of_host_services_are_unreachable() {
    require_sandbox();
    require_program("python3");
    for user in current_and_nobody() {
        let s = scene(CONFINED);
        let path = s.outside.join("host.sock");
        let listener = UnixListener::bind(&path).unwrap();
        listener.set_nonblocking(true).unwrap();
        open_to_all(&path);
        let events = run_as(
            &s,
            user,
            "bypass",
            &[bash(
                "u",
                &format!(
                    "python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect(\"{}\"); s.sendall(b\"hi\"); print(\"CONNECTED\")'; true",
                    path.display()
                ),
            )],
        );
        let text = text_of(&events, "u");
        let accepted = listener.accept();
        assert!(
            matches!(&accepted, Err(e) if e.kind() == ErrorKind::WouldBlock),
            "{user:?}: a host socket took a connection from inside: {text}"
        );
        assert!(!text.contains("CONNECTED"), "{user:?}: {text}");
    }
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces), python3, root and setpriv (it runs as root and as nobody)"]
fn abstract_unix_sockets_of_the_host_are_unreachable() {
    require_sandbox();
    require_program("python3");
    use std::os::linux::net::SocketAddrExt;
    let name = format!("agentcore-attack-{}", std::process::id());
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let listener = UnixListener::bind_addr(&addr).unwrap();
    listener.set_nonblocking(true).unwrap();
    for user in current_and_nobody() {
        let s = scene(CONFINED);
        let events = run_as(
            &s,
            user,
            "bypass",
            &[bash(
                "a",
                &format!(
                    "python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect(\"\\0{name}\"); print(\"CONNECTED\")'; true"
                ),
            )],
        );
        let text = text_of(&events, "a");
        assert!(
            matches!(listener.accept(), Err(e) if e.kind() == ErrorKind::WouldBlock),
            "{user:?}: {text}"
        );
        assert!(!text.contains("CONNECTED"), "{user:?}: {text}");
    }
}

/// Tries socket families and syscalls the filter refuses; prints `OPENED`
/// for each that worked.
const SOCKETS_PY: &str = r#"
import ctypes, os, socket
libc = ctypes.CDLL(None, use_errno=True)
def sc(nr, *a):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(x) for x in a])
    return r, (os.strerror(ctypes.get_errno()) if r < 0 else "ok")
def show(name, res):
    print(("OPENED " if res[0] >= 0 else "refused ") + name, res[1])
for name, fam, typ in [("packet", 17, 3), ("vsock", 40, 1), ("alg", 38, 5), ("bluetooth", 31, 1),
                       ("can", 29, 3), ("key", 15, 3), ("rds", 21, 5), ("xdp", 44, 3), ("tipc", 30, 5),
                       ("llc", 26, 2), ("x25", 9, 5), ("ax25", 3, 2), ("qipcrtr", 42, 2)]:
    show(name, sc(41, fam, typ, 0))
show("x32-socket-vsock", sc(0x40000000 | 41, 40, 1, 0))
show("x32-io_uring_setup", sc(0x40000000 | 425, 8, 0))
show("io_uring_setup", sc(425, 8, 0))
show("raw-inet", sc(41, 2, 3, 1))
show("raw-inet6", sc(41, 10, 3, 58))
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP)
    s.sendto(b"\x08\0\0\0\0\0\0\0", ("192.0.2.1", 0)); print("OPENED ping-sent")
except OSError as e:
    print("refused ping", e)
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b"x", ("192.0.2.1", 53)); print("OPENED udp-sent")
except OSError as e:
    print("refused udp", e)
try:
    s = socket.create_connection(("192.0.2.1", 80), timeout=2); print("OPENED tcp")
except OSError as e:
    print("refused tcp", e)
print("done")
"#;

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces), python3, root and setpriv (it runs as root and as nobody)"]
fn odd_socket_families_raw_icmp_udp_and_io_uring_are_refused() {
    require_sandbox();
    require_program("python3");
    for user in current_and_nobody() {
        let s = scene(CONFINED);
        put(&s.root.join("socks.py"), SOCKETS_PY);
        let events = run_as(&s, user, "bypass", &[bash("s", "python3 socks.py")]);
        let text = text_of(&events, "s");
        assert!(text.contains("done"), "{user:?}: {text}");
        assert!(!text.contains("OPENED"), "{user:?}: {text}");
    }
}

/// An i386 program (`int 0x80`) that opens an AF_VSOCK socket and sets up
/// io_uring: the compat syscall table, which a filter written for x86_64
/// numbers would not cover.
const I386_C: &str = r#"
#include <stdio.h>
int main(void) {
    long ret;
    __asm__ volatile ("int $0x80" : "=a"(ret) : "a"(359), "b"(40), "c"(1), "d"(0) : "memory");
    printf(ret >= 0 ? "OPENED vsock %ld\n" : "refused vsock %ld\n", ret);
    __asm__ volatile ("int $0x80" : "=a"(ret) : "a"(425), "b"(8), "c"(0) : "memory");
    printf(ret >= 0 ? "OPENED io_uring %ld\n" : "refused io_uring %ld\n", ret);
    fflush(stdout);
    return 0;
}
"#;

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces), x86_64, cc, root and setpriv (it runs as root and as nobody)"]
fn i386_compat_syscalls_do_not_slip_past_the_filter() {
    require_sandbox();
    if !cfg!(target_arch = "x86_64") {
        panic!("this test needs x86_64 (it builds an i386 program with int 0x80)");
    }
    require_program("cc");
    let s = scene(CONFINED);
    put(&s.root.join("i386.c"), I386_C);
    let built = Command::new("cc")
        .arg("-o")
        .arg(s.root.join("i386"))
        .arg(s.root.join("i386.c"))
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "this test needs a cc that builds an i386 program: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    let outside = Command::new(s.root.join("i386")).output().unwrap();
    println!(
        "i386 unconfined: {}",
        String::from_utf8_lossy(&outside.stdout)
    );
    for user in current_and_nobody() {
        let events = run_as(&s, user, "bypass", &[bash("i", "./i386; echo code=$?")]);
        let text = text_of(&events, "i");
        assert!(text.contains("code="), "{user:?}: {text}");
        assert!(!text.contains("OPENED"), "{user:?}: {text}");
    }
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces)"]
fn inherited_file_descriptors_carry_no_authority_into_the_sandbox() {
    require_sandbox();
    use nix::fcntl::{FcntlArg, FdFlag, fcntl};
    use std::os::fd::AsRawFd;
    let s = scene(CONFINED);
    put(&s.outside.join("secret.txt"), "FD-SECRET\n");
    put(&s.outside.join("log.txt"), "");
    let log = std::fs::OpenOptions::new()
        .append(true)
        .open(s.outside.join("log.txt"))
        .unwrap();
    let secret = std::fs::File::open(s.outside.join("secret.txt")).unwrap();
    for f in [&log, &secret] {
        fcntl(f.as_fd(), FcntlArg::F_SETFD(FdFlag::empty())).unwrap();
    }
    let (w, r) = (log.as_raw_fd(), secret.as_raw_fd());
    let events = run(
        &s,
        "bypass",
        &[bash("fd", &format!("echo pwned >&{w}; cat <&{r}; true"))],
    );
    drop((log, secret));
    let text = text_of(&events, "fd");
    assert!(!text.contains("FD-SECRET"), "{text}");
    assert_eq!(
        std::fs::read_to_string(s.outside.join("log.txt")).unwrap(),
        "",
        "{text}"
    );
}

/// A python helper holding a pseudo-terminal (the user's terminal): prints
/// the slave's name, waits for a line on stdin, then prints what reached
/// the master (written to the terminal) and the slave's input queue
/// (typed into it).
const PTY_PY: &str = r#"
import os, pty, sys, tty
m, s = pty.openpty()
tty.setraw(s)
os.chmod(os.ttyname(s), 0o666)
print(os.ttyname(s), flush=True)
sys.stdin.readline()
os.set_blocking(m, False); os.set_blocking(s, False)
try: print("MASTER", os.read(m, 1000))
except BlockingIOError: print("MASTER nothing")
try: print("SLAVE", os.read(s, 1000))
except BlockingIOError: print("SLAVE nothing")
"#;

/// Runs `command` (with `{pty}` replaced by the terminal's path) confined,
/// and returns what the terminal's holder saw.
fn at_a_terminal(user: User, command: &str) -> (String, String) {
    use std::io::{BufRead, BufReader};
    require_program("python3");
    let s = scene(CONFINED);
    put(&s.dir.join("terminal_holder.py"), PTY_PY);
    let mut holder = Command::new("python3")
        .arg(s.dir.join("terminal_holder.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(holder.stdout.take().unwrap()).lines();
    let pty = lines.next().unwrap().unwrap();
    let events = run_as(
        &s,
        user,
        "bypass",
        &[bash("t", &command.replace("{pty}", &pty))],
    );
    holder.stdin.take().unwrap().write_all(b"go\n").unwrap();
    let seen: Vec<String> = lines.map_while(Result::ok).collect();
    holder.wait().unwrap();
    (text_of(&events, "t"), seen.join("\n"))
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces), python3, root and setpriv (it runs as root and as nobody)"]
fn the_users_terminals_cannot_be_written() {
    require_sandbox();
    for user in current_and_nobody() {
        let (text, seen) = at_a_terminal(
            user,
            "printf 'INJECTED-BY-SANDBOX\\033]52;c;ZXZpbA==\\a' > {pty}; true",
        );
        assert!(seen.contains("MASTER nothing"), "{user:?}: {seen} / {text}");
    }
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces), python3, root and setpriv (it runs as root and as nobody)"]
fn tiocsti_cannot_push_input_into_a_terminal() {
    require_sandbox();
    for user in current_and_nobody() {
        let (text, seen) = at_a_terminal(
            user,
            "python3 -c \"import fcntl, termios, os; fd = os.open('{pty}', os.O_RDWR | os.O_NOCTTY); [fcntl.ioctl(fd, termios.TIOCSTI, bytes([c])) for c in b'id\\n']; print('PUSHED')\"; \
             python3 -c \"import fcntl, termios, os; fd = os.open('{pty}', os.O_RDWR); fcntl.ioctl(fd, termios.TIOCSCTTY, 1); [fcntl.ioctl(fd, termios.TIOCSTI, bytes([c])) for c in b'id\\n']; print('PUSHED')\"; true",
        );
        assert!(!text.contains("PUSHED"), "{user:?}: {text}");
        assert!(seen.contains("SLAVE nothing"), "{user:?}: {seen} / {text}");
    }
}

/// Joins a new session keyring, adds a `user` key `agentcore-attack` to
/// it, and runs the rest of its arguments (`plant`); or looks the key up
/// from the session, user and user-session keyrings and prints it
/// (`read`).
const KEYS_PY: &str = r#"
import ctypes, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
def keyctl(*a):
    r = libc.syscall(250, *[ctypes.c_long(x) if isinstance(x, int) else x for x in a])
    if r < 0: raise OSError(ctypes.get_errno(), "keyctl")
    return r
if sys.argv[1] == "plant":
    keyctl(1, b"agentcore-attack")
    if libc.syscall(248, b"user", b"agentcore-attack", b"KEYRING-SECRET", 14, ctypes.c_long(-3)) < 0:
        sys.exit("add_key failed")
    sys.exit(subprocess.run(sys.argv[2:]).returncode)
for ring in (-3, -4, -5):
    try:
        kid = keyctl(10, ring, b"user", b"agentcore-attack", 0)
        buf = ctypes.create_string_buffer(100)
        n = keyctl(11, kid, buf, 100)
        print("READ", ring, buf.raw[:n])
    except OSError as e:
        print("refused", ring, e)
"#;

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces) and python3"]
fn the_session_keyring_is_not_readable_inside() {
    require_sandbox();
    require_program("python3");
    let s = scene(CONFINED);
    put(&s.dir.join("keys.py"), KEYS_PY);
    let keys = s.dir.join("keys.py").display().to_string();
    let out = output_of(
        || agentcore(&s, User::Current, "bypass", &["python3", &keys, "plant"]),
        &[bash("k", &format!("python3 {keys} read"))],
    );
    let events = events(&out);
    let text = text_of(&events, "k");
    assert!(!text.contains("KEYRING-SECRET"), "{text}");
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces) and root (only a command run by root can make a setuid-root file)"]
fn root_inside_cannot_leave_a_setuid_executable_behind() {
    use std::os::unix::fs::MetadataExt;
    require_sandbox();
    require_root();
    let s = scene(CONFINED);
    let events = run(
        &s,
        "bypass",
        &[bash(
            "s",
            "cp /bin/sh rootsh && chmod 4755 rootsh; cp /bin/sh groupsh && chmod 2755 groupsh; \
             install -m 4755 /bin/sh installed; true",
        )],
    );
    for name in ["rootsh", "groupsh", "installed"] {
        if let Ok(meta) = std::fs::metadata(s.root.join(name)) {
            assert_eq!(
                meta.mode() & 0o6000,
                0,
                "{name} is set-id {:o}: {events:?}",
                meta.mode()
            );
        }
    }
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces)"]
fn kernel_settings_and_the_hostname_cannot_be_changed_even_as_root() {
    require_sandbox();
    let s = scene(CONFINED);
    // Each write puts back the value it read: harmless should it land.
    let events = run(
        &s,
        "bypass",
        &[bash(
            "k",
            "v=$(cat /proc/sys/vm/swappiness); echo $v > /proc/sys/vm/swappiness && echo SWAPPINESS-WRITTEN; \
             h=$(hostname); hostname \"$h\" && echo HOSTNAME-SET; \
             v=$(cat /proc/sys/kernel/randomize_va_space); echo $v > /proc/sys/kernel/randomize_va_space && echo ASLR-WRITTEN; \
             echo done",
        )],
    );
    let text = text_of(&events, "k");
    assert!(text.contains("done"), "{text}");
    for landed in ["SWAPPINESS-WRITTEN", "HOSTNAME-SET", "ASLR-WRITTEN"] {
        assert!(!text.contains(landed), "{text}");
    }
}

// ---------------------------------------------------------------------
// Approval: dangerously_disable_sandbox and auto_allow.
// ---------------------------------------------------------------------

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces)"]
fn dangerously_disable_sandbox_cannot_be_smuggled_past_approval() {
    require_sandbox();
    let s = scene(CONFINED);
    let marker = s.outside.join("free.txt");
    let command = format!("touch {} && echo RAN-OUTSIDE", marker.display());
    let variants = [
        json!(true),
        json!("true"),
        json!("True"),
        json!("TRUE"),
        json!(1),
        json!("1"),
        json!("yes"),
        json!([true]),
        json!({"value": true}),
    ];
    for mode in ["default", "accept-edits"] {
        for v in &variants {
            let args = json!({"command": command, "dangerously_disable_sandbox": v});
            let events = run(&s, mode, &[bash_args("d", args)]);
            let (outcome, text) = end(&events, "d");
            assert_ne!(outcome, "success", "{mode} {v}: {text}");
            assert!(!marker.exists(), "{mode} {v}: ran outside: {text}");
        }
        for key in [
            "Dangerously_Disable_Sandbox",
            "dangerouslyDisableSandbox",
            "disable_sandbox",
        ] {
            let args = json!({"command": command, key: true});
            let events = run(&s, mode, &[bash_args("d", args)]);
            assert!(!marker.exists(), "{mode} {key}: {events:?}");
        }
        // Duplicate keys in arguments sent as a JSON string.
        let raw = format!(
            "{{\"command\":{},\"dangerously_disable_sandbox\":false,\"dangerously_disable_sandbox\":true}}",
            json!(command)
        );
        let events = run(&s, mode, &[bash_args("d", json!(raw))]);
        let (outcome, text) = end(&events, "d");
        assert_ne!(outcome, "success", "{mode} duplicate: {text}");
        assert!(!marker.exists(), "{mode} duplicate: {text}");
    }
}

#[test]
fn a_command_that_cannot_be_fully_confined_is_not_auto_allowed() {
    for feature in [
        "landlock",
        "user-namespace",
        "mount-namespace",
        "pid-namespace",
        "network-namespace",
        "seccomp",
    ] {
        let s = scene(&format!(
            "[sandbox]\nmode = \"auto\"\nassume_missing = [\"{feature}\"]\n"
        ));
        for mode in ["default", "accept-edits"] {
            let events = run(&s, mode, &[bash("t", "touch made.txt")]);
            let (outcome, text) = end(&events, "t");
            assert_eq!(outcome, "denied", "{feature} {mode}: {text}");
            assert!(!s.root.join("made.txt").exists(), "{feature} {mode}");
        }
    }
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces)"]
fn opaque_commands_under_a_deny_rule_are_not_auto_allowed() {
    require_sandbox();
    let s = scene(&format!("deny = [\"bash(rm *)\"]\n{CONFINED}"));
    put(&s.root.join("x.sh"), "rm a.txt\n");
    let attempts = [
        "eval rm a.txt",
        "$(echo rm) a.txt",
        "`echo rm` a.txt",
        "x=rm; $x a.txt",
        "bash -c 'rm a.txt'",
        "sh -c 'r''m a.txt'",
        "echo a.txt | xargs rm",
        "find . -name a.txt -exec rm {} \\;",
        "command rm a.txt",
        "env rm a.txt",
        "\\rm a.txt",
        "/bin/rm a.txt",
        "r''m a.txt",
        "$'\\x72m' a.txt",
        ". ./x.sh",
        "source x.sh",
        "python3 -c 'import os; os.remove(\"a.txt\")'",
        "busybox rm a.txt",
        "nice rm a.txt",
        "timeout 5 rm a.txt",
        "exec rm a.txt",
        "builtin eval rm a.txt",
        "alias r=rm\nr a.txt",
        "f() { rm \"$@\"; }; f a.txt",
        "bash <<< 'rm a.txt'",
        "echo 'rm a.txt' | sh",
        "PATH=/bin:$PATH rm a.txt",
        "IFS=_; c=rm_a.txt; $c",
        "sh < x.sh",
    ];
    for mode in ["default", "accept-edits"] {
        for attempt in attempts {
            let events = run(&s, mode, &[bash("o", attempt)]);
            let (outcome, text) = end(&events, "o");
            assert!(
                s.root.join("a.txt").exists(),
                "{mode}: `{attempt}` removed a.txt: {outcome}: {text}"
            );
            assert_eq!(outcome, "denied", "{mode}: `{attempt}`: {text}");
        }
    }
}

#[test]
#[ignore = "HOLE (low): under `deny = [\"bash(rm *)\"]`, a script the model wrote (`bash x.sh`, `./x.sh`) runs the denied command; auto_allow lets it through where default mode used to ask"]
fn hole_a_script_written_earlier_does_not_launder_a_denied_command() {
    require_sandbox();
    let s = scene(&format!("deny = [\"bash(rm *)\"]\n{CONFINED}"));
    for attempt in ["bash x.sh", "./x.sh"] {
        let events = run(
            &s,
            "default",
            &[
                bash("w", "printf 'rm a.txt\\n' > x.sh && chmod +x x.sh"),
                bash("o", attempt),
            ],
        );
        assert!(
            s.root.join("a.txt").exists(),
            "`{attempt}` removed a.txt: {events:?}"
        );
    }
}

// ---------------------------------------------------------------------
// Processes that outlive the command or the session.
// ---------------------------------------------------------------------

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces)"]
fn a_background_job_that_double_forks_dies_with_the_session() {
    require_sandbox();
    let s = scene(CONFINED);
    let n = sleeper_seconds();
    let job = json!({"turn": [{"id": "bg", "name": "bash", "args": {
        "command": format!(
            "(setsid sh -c 'sleep {n} & sleep {n}' &); (nohup setsid sleep {n} >/dev/null 2>&1 &); disown -a; sleep 300"
        ),
        "run_in_background": true
    }}]});
    // The session ends when its input does; the job was never killed.
    let probe = bash("probe", "sleep 1; echo probed");
    let mut child = agentcore(&s, User::Current, "bypass", &[]).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input(&[job, probe]).as_bytes()).unwrap();
    let started = Instant::now();
    let mut seen = false;
    while started.elapsed() < Duration::from_secs(20) {
        if sleeper_alive(n) {
            seen = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(seen, "the sleeper never ran: {out:?}");
    let gone_by = Instant::now() + Duration::from_secs(5);
    while sleeper_alive(n) {
        assert!(
            Instant::now() < gone_by,
            "sleep {n} survived the session: {out:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
