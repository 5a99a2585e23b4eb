//! `[sandbox.limits]` through `agentcore run`, as root and as `nobody`: a
//! fork bomb, an unbounded allocation, a CPU spinner, a file too big and a
//! full `$TMPDIR` each stop at their limit, the command's result says
//! which limit (never guessed from an exit code), and the session's next
//! command runs normally. Background jobs are bounded each on their own.

use serde_json::{Value, json};

use crate::support::require::*;
use crate::support::sandbox::*;

/// A `required` sandbox with these `[sandbox.limits]` lines.
fn limited(limits: &str) -> Scene {
    scene(&format!("{CONFINED}\n[sandbox.limits]\n{limits}\n"))
}

/// The end of call `id`: its text, after checking that its outcome is a
/// failure (a command killed at a limit did not succeed).
fn killed(events: &[Value], id: &str, user: User) -> String {
    let (outcome, text) = end(events, id);
    assert_eq!(outcome, "failed", "{user:?}: {id}: {text}");
    text
}

/// The last line of a result's text.
fn last_line(text: &str) -> &str {
    text.trim_end().lines().last().unwrap_or_default()
}

/// Runs `lines` in one session as `user`; the events.
fn session(s: &Scene, user: User, lines: &[Value]) -> Vec<Value> {
    events(&output_of(|| agentcore(s, user, "bypass", &[]), lines))
}

const AFTER: &str = "echo the-session-goes-on";

fn assert_goes_on(events: &[Value], user: User) {
    let text = text_of(events, "after");
    assert!(
        text.starts_with("Exit code: 0") && text.contains("the-session-goes-on"),
        "{user:?}: the next command did not run normally: {text}"
    );
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces), root and setpriv (it runs as root and as nobody)"]
fn a_fork_bomb_is_killed_at_the_process_limit_and_the_host_stays_responsive() {
    require_sandbox();
    for user in current_and_nobody() {
        let s = limited("processes = 64");
        // The shell sleeps on, so only the limit ends the bomb; as a job,
        // the next command runs while the bomb would still be going.
        let bomb = ":(){ :|:& };:; sleep 30";
        let events = session(
            &s,
            user,
            &[
                bash("bomb", bomb),
                bash("after", AFTER),
                bash_args(
                    "job",
                    json!({"command": format!("date +%s.%N; {bomb}"), "run_in_background": true}),
                ),
                bash("probe", "date +%s.%N"),
            ],
        );
        let text = killed(&events, "bomb", user);
        assert_eq!(
            last_line(&text),
            "(sandboxed: killed — process limit 64 reached)",
            "{user:?}: {text}"
        );
        assert_goes_on(&events, user);
        let job = text_of(&events, "job");
        let started: f64 = job
            .lines()
            .find_map(|l| l.trim().parse().ok())
            .unwrap_or_else(|| panic!("{user:?}: the job printed no start time: {job}"));
        let probe = text_of(&events, "probe");
        let answered: f64 = probe
            .lines()
            .find_map(|l| l.trim().parse().ok())
            .unwrap_or_else(|| panic!("{user:?}: the probe did not run: {probe}"));
        assert!(
            answered - started < 2.0,
            "{user:?}: the next command ran {:.2} s after the bomb started",
            answered - started
        );
        let exit = events
            .iter()
            .find(|e| e["type"] == "job_exit")
            .unwrap_or_else(|| panic!("{user:?}: the bomb job did not end: {events:?}"));
        assert_eq!(exit["status"], "killed by signal 9", "{user:?}: {exit}");
    }
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces), root and setpriv (it runs as root and as nobody), and python3"]
fn an_unbounded_allocation_is_killed_at_the_memory_limit() {
    require_sandbox();
    require_program("python3");
    for user in current_and_nobody() {
        let s = limited("memory = \"256M\"");
        // Touched memory (bytearray zeroes it), a few MiB at a time.
        let grow = "python3 -c 'import time\na = []\nwhile True:\n    a.append(bytearray(8 << 20))\n    time.sleep(0.02)'";
        let events = session(&s, user, &[bash("mem", grow), bash("after", AFTER)]);
        let text = killed(&events, "mem", user);
        assert_eq!(
            last_line(&text),
            "(sandboxed: killed — memory limit 256M reached)",
            "{user:?}: {text}"
        );
        assert_goes_on(&events, user);
    }
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces), root and setpriv (it runs as root and as nobody)"]
fn a_full_tmpdir_is_the_commands_own_no_space_left() {
    require_sandbox();
    for user in current_and_nobody() {
        let s = limited("tmp_size = \"16M\"\nfile_size = \"off\"");
        let events = session(
            &s,
            user,
            &[
                bash(
                    "fill",
                    "dd if=/dev/zero of=$TMPDIR/fill bs=1M count=64; rm $TMPDIR/fill; echo kept > $TMPDIR/small",
                ),
                bash("after", AFTER),
                bash("again", "cat $TMPDIR/small"),
            ],
        );
        let text = text_of(&events, "fill");
        assert!(text.contains("No space left on device"), "{user:?}: {text}");
        assert!(!text.contains("(sandboxed: killed"), "{user:?}: {text}");
        assert_goes_on(&events, user);
        // The session's $TMPDIR holds its files from one command to the next.
        let again = text_of(&events, "again");
        assert!(again.contains("kept"), "{user:?}: {again}");
    }
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces), root and setpriv (it runs as root and as nobody)"]
fn a_cpu_spinner_is_killed_at_the_cpu_limit() {
    require_sandbox();
    for user in current_and_nobody() {
        let s = limited("cpu_seconds = 1");
        // In a child of the shell, which the shell waits for: the limit is
        // the spinner's own.
        let events = session(
            &s,
            user,
            &[
                bash("spin", "bash -c 'while :; do :; done'; echo not-reached"),
                bash("after", AFTER),
            ],
        );
        let text = killed(&events, "spin", user);
        assert_eq!(
            last_line(&text),
            "(sandboxed: killed — CPU limit 1 s reached)",
            "{user:?}: {text}"
        );
        assert!(!text.contains("not-reached"), "{user:?}: {text}");
        assert_goes_on(&events, user);
    }
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces), root and setpriv (it runs as root and as nobody)"]
fn a_file_bigger_than_the_file_size_limit_cannot_be_written() {
    require_sandbox();
    for user in current_and_nobody() {
        let s = limited("file_size = \"1M\"");
        let events = session(
            &s,
            user,
            &[
                bash("big", "exec head -c 2M /dev/zero > big"),
                bash("after", AFTER),
            ],
        );
        let text = killed(&events, "big", user);
        assert_eq!(
            last_line(&text),
            "(sandboxed: killed — file size limit 1M reached)",
            "{user:?}: {text}"
        );
        let len = std::fs::metadata(s.root.join("big")).unwrap().len();
        assert_eq!(len, 1 << 20, "{user:?}: the file grew past the limit");
        assert_goes_on(&events, user);
    }
}

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces), root and setpriv (it runs as root and as nobody)"]
fn each_job_has_the_process_limit_of_its_own() {
    require_sandbox();
    for user in current_and_nobody() {
        let s = limited("processes = 64");
        // 40 processes each: over 64 together, under it one by one.
        let forty = "for i in $(seq 40); do sleep 20 & done; echo started; wait";
        let job = |id: &str| bash_args(id, json!({"command": forty, "run_in_background": true}));
        let events = session(
            &s,
            user,
            &[
                job("a"),
                job("b"),
                bash("after", AFTER),
                json!({"turn": [
                    {"id": "oa", "name": "bash_output", "args": {"job_id": "job-1"}},
                    {"id": "ob", "name": "bash_output", "args": {"job_id": "job-2"}},
                ]}),
            ],
        );
        for id in ["oa", "ob"] {
            let text = text_of(&events, id);
            assert!(
                text.contains("Status: running") && !text.contains("(sandboxed: killed"),
                "{user:?}: {id}: {text}"
            );
        }
        assert!(
            !events.iter().any(|e| e["type"] == "job_exit"
                && e["status"].as_str().is_some_and(|s| s.contains("signal"))),
            "{user:?}: a job was killed: {events:?}"
        );
        assert_goes_on(&events, user);
    }
}
