//! A confined command cannot change the metadata of files outside its
//! writable roots (mode, owner, times, extended attributes, size), as root
//! and as `nobody`, while the same operations inside a writable root still
//! work; it cannot plant a set-id file or change its owner inside either.
//! Landlock (up to ABI 7) does not govern metadata: the read-only mount of
//! `/` and the dropped capabilities do.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use crate::support::require::*;
use crate::support::sandbox::*;

/// The seven attempts, each printed as `name:ok` or `name:ERRNO`.
const BATTERY_PY: &str = r#"
import errno, os, sys
target = sys.argv[1]
uid, gid = os.getuid(), os.getgid()
def attempt(name, f):
    try:
        f()
        print(name + ":ok")
    except OSError as e:
        print(name + ":" + errno.errorcode.get(e.errno, str(e.errno)))
attempt("chmod", lambda: os.chmod(target, 0o666 if (os.stat(target).st_mode & 0o777) != 0o666 else 0o644))
attempt("chown", lambda: os.chown(target, uid, gid))
attempt("chgrp", lambda: os.chown(target, -1, gid))
attempt("utimes", lambda: os.utime(target, (86400, 86400)))
attempt("touch", lambda: os.utime(target, None))
attempt("setxattr", lambda: os.setxattr(target, "user.agentcore", b"x"))
attempt("truncate", lambda: os.truncate(target, 0))
"#;

const ATTEMPTS: [&str; 7] = [
    "chmod", "chown", "chgrp", "utimes", "touch", "setxattr", "truncate",
];

/// Runs the battery on `target` as `user`; the result of each attempt.
fn battery(s: &Scene, user: User, target: &Path) -> Vec<(String, String)> {
    let script = s.dir.join("battery.py");
    put(&script, BATTERY_PY);
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).unwrap();
    let events = run_as(
        s,
        user,
        "bypass",
        &[bash(
            "b",
            &format!(
                "/usr/bin/python3 {} {}; true",
                script.display(),
                target.display()
            ),
        )],
    );
    let text = text_of(&events, "b");
    let results: Vec<(String, String)> = text
        .lines()
        .filter_map(|l| l.split_once(':'))
        .filter(|(name, _)| ATTEMPTS.contains(name))
        .map(|(a, b)| (a.to_owned(), b.trim().to_owned()))
        .collect();
    assert_eq!(results.len(), ATTEMPTS.len(), "{user:?}: {text}");
    results
}

/// A file the battery may try, owned by whoever runs agentcore (so that
/// only the sandbox can refuse), with an extended attribute-capable home.
fn victim(path: &Path, user: User) {
    put(path, "keep me\n");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644)).unwrap();
    if user == User::Nobody {
        std::os::unix::fs::chown(path, Some(65534), Some(65534)).unwrap();
    }
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces), /usr/bin/python3, root and setpriv (it runs as root and as nobody)"]
fn metadata_outside_the_writable_roots_cannot_be_changed() {
    require_sandbox();
    require_file("/usr/bin/python3");
    for user in current_and_nobody() {
        let s = scene(CONFINED);
        let target = s.outside.join("victim.txt");
        victim(&target, user);
        let before = std::fs::metadata(&target).unwrap();
        let results = battery(&s, user, &target);
        println!("{user:?} outside: {results:?}");
        for (name, result) in &results {
            assert!(
                result == "EROFS" || result == "EPERM" || result == "EACCES",
                "{user:?}: {name} outside the roots gave {result}: {results:?}"
            );
        }
        let after = std::fs::metadata(&target).unwrap();
        assert_eq!(before.mode(), after.mode(), "{user:?}");
        assert_eq!(before.uid(), after.uid(), "{user:?}");
        assert_eq!(before.mtime(), after.mtime(), "{user:?}");
        assert_eq!(after.len(), 8, "{user:?}");
        assert!(xattr_absent(&target), "{user:?}: an xattr was set");
    }
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces), /usr/bin/python3, root and setpriv (it runs as root and as nobody)"]
fn metadata_inside_a_writable_root_still_changes() {
    require_sandbox();
    require_file("/usr/bin/python3");
    for user in current_and_nobody() {
        let s = scene(CONFINED);
        let target = s.root.join("mine.txt");
        // Created by the command itself, so owned by its user.
        let events = run_as(
            &s,
            user,
            "bypass",
            &[bash("m", "echo 'keep me' > mine.txt && echo made")],
        );
        assert!(text_of(&events, "m").contains("made"), "{events:?}");
        let results = battery(&s, user, &target);
        println!("{user:?} inside: {results:?}");
        for (name, result) in &results {
            assert_eq!(
                result, "ok",
                "{user:?}: {name} inside the root: {results:?}"
            );
        }
        let meta = std::fs::metadata(&target).unwrap();
        assert_eq!(meta.len(), 0);
        assert_eq!(meta.mode() & 0o777, 0o666);
    }
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces) and chmod"]
fn metadata_of_system_files_and_devices_cannot_be_changed_by_root_inside() {
    require_sandbox();
    require_program("chmod");
    // Each attempt would change nothing if it succeeded (same mode, owner,
    // times), so that a regression cannot damage the machine it runs on.
    let s = scene(CONFINED);
    let events = run(
        &s,
        "bypass",
        &[bash(
            "sys",
            "chmod 666 /dev/null && echo CHANGED-null; \
             chmod --reference=/etc/hostname /etc/hostname && echo CHANGED-mode; \
             chown --reference=/etc/hostname /etc/hostname && echo CHANGED-owner; \
             touch -r /etc/hostname /etc/hostname && echo CHANGED-times; echo done",
        )],
    );
    let text = text_of(&events, "sys");
    assert!(text.contains("done"), "{text}");
    assert!(!text.contains("CHANGED"), "{text}");
}

fn xattr_absent(path: &Path) -> bool {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    let mut buf = [0u8; 8];
    // SAFETY: getxattr with a NUL-terminated path, a literal name and a
    // local buffer of the length given.
    #[allow(unsafe_code)]
    let n = unsafe {
        libc::getxattr(
            c.as_ptr(),
            c"user.agentcore".as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    n < 0
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces), /usr/bin/python3, root and setpriv (it runs as root and as nobody)"]
fn a_set_id_file_cannot_be_created_and_ownership_cannot_be_given_away_inside() {
    require_sandbox();
    require_file("/usr/bin/python3");
    for user in current_and_nobody() {
        let s = scene(CONFINED);
        let events = run_as(
            &s,
            user,
            "bypass",
            &[bash(
                "sid",
                r#"/usr/bin/python3 -c '
import os
for name, mode in [("suid", 0o4755), ("sgid", 0o2755)]:
    try:
        fd = os.open(name, os.O_CREAT | os.O_WRONLY, mode); os.close(fd); print(name, "created")
    except OSError as e:
        print(name, "refused", e.strerror)
try:
    fd = os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o4755); print("tmpfile created")
except OSError as e:
    print("tmpfile refused", e.strerror)
try:
    os.mknod("node", 0o100000 | 0o4755); print("mknod created")
except OSError as e:
    print("mknod refused", e.strerror)
open("plain", "w").close()
for name, f in [("chmod", lambda: os.chmod("plain", 0o4755)), ("chown", lambda: os.chown("plain", 1, 1))]:
    try:
        f(); print(name, "done")
    except OSError as e:
        print(name, "refused", e.strerror)
'; ls -l"#,
            )],
        );
        let text = text_of(&events, "sid");
        println!("{user:?}: {text}");
        assert!(text.contains("chown refused"), "{user:?}: {text}");
        assert!(text.contains("chmod refused"), "{user:?}: {text}");
        for entry in std::fs::read_dir(&s.root).unwrap().flatten() {
            let mode = entry.metadata().unwrap().mode();
            assert_eq!(
                mode & 0o6000,
                0,
                "{user:?}: {:?} is set-id: {text}",
                entry.file_name()
            );
        }
    }
}
