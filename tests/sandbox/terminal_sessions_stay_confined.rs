//! Issue 30, items 1 and 4: a terminal session started in the sandbox
//! stays in it, through `agentcore run`, as root and as `nobody`: the
//! program waits for input and gets the answer typed with write_stdin,
//! its terminal is one of the sandbox's own (`/dev/pts/0` of a fresh
//! devpts), and a shell typed into cannot write outside the workspace.

use serde_json::{Value, json};

use crate::support::sandbox::*;

fn call(id: &str, name: &str, args: Value) -> Value {
    json!({"turn": [{"id": id, "name": name, "args": args}]})
}

#[test]
fn a_session_in_the_sandbox_takes_input_and_stays_confined() {
    for user in current_and_nobody() {
        let s = scene(CONFINED);
        let escaped = s.outside.join("escaped");
        let made = s.root.join("made-here");
        let lines = [
            call(
                "ask",
                "bash",
                json!({"command": "python3 -c 'n = input(\"name? \"); print(\"hello \" + n)'", "tty": true, "yield_ms": 20_000}),
            ),
            call(
                "answer",
                "write_stdin",
                json!({"session_id": "job-1", "text": "bob\n", "yield_ms": 20_000}),
            ),
            call(
                "shell",
                "bash",
                json!({"command": "bash --norc --noprofile -i", "tty": true, "yield_ms": 20_000}),
            ),
            call(
                "typed",
                "write_stdin",
                json!({"session_id": "job-2", "yield_ms": 20_000, "text": format!(
                    "touch {} ; echo outside=$? ; touch {} ; echo inside=$? ; tty ; ls /dev/pts\n",
                    escaped.display(),
                    made.display()
                )}),
            ),
        ];
        let events = run_as(&s, user, "bypass", &lines);
        let (outcome, text) = end(&events, "ask");
        assert_eq!(outcome, "success", "{user:?}: {text}");
        assert!(text.contains("name? "), "{user:?}: {text}");
        assert!(
            text.contains("Status: running, waiting for input"),
            "{user:?}: {text}"
        );
        let text = text_of(&events, "answer");
        assert!(text.contains("hello bob"), "{user:?}: {text}");
        assert!(
            text.ends_with("Status: exited with code 0"),
            "{user:?}: {text}"
        );
        let text = text_of(&events, "typed");
        assert!(text.contains("outside=1"), "{user:?}: {text}");
        assert!(text.contains("inside=0"), "{user:?}: {text}");
        assert!(text.contains("/dev/pts/0"), "{user:?}: {text}");
        assert!(!escaped.exists(), "{user:?}: a typed command wrote outside");
        assert!(made.exists(), "{user:?}: {text}");
    }
}
