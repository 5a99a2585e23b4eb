//! Claude Code's settings in the workspace (`.claude/settings.json`,
//! `settings.local.json`, `hooks/`) name commands that run outside any
//! sandbox: a confined command can change none of them, with or without
//! `--hooks`, as root and as `nobody`.

use crate::support::require::*;
use crate::support::sandbox::*;

#[test]
#[ignore = "needs the command sandbox (Landlock, seccomp, and user, mount, PID and network namespaces), root and setpriv (it runs as root and as nobody)"]
fn claude_codes_settings_and_hooks_are_read_only_to_a_confined_command() {
    require_sandbox();
    for user in current_and_nobody() {
        let s = scene(CONFINED);
        put(&s.root.join(".claude/settings.json"), "{}\n");
        put(&s.root.join(".claude/hooks/guard.sh"), "exit 0\n");
        put(&s.root.join("sub/.claude/settings.json"), "{}\n");
        for dir in [".claude", ".claude/hooks", "sub", "sub/.claude"] {
            open_to_all(&s.root.join(dir));
        }
        for file in [
            ".claude/settings.json",
            ".claude/hooks/guard.sh",
            "sub/.claude/settings.json",
        ] {
            std::fs::set_permissions(
                s.root.join(file),
                std::os::unix::fs::PermissionsExt::from_mode(0o666),
            )
            .unwrap();
        }
        let hook = r#"{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"touch /tmp/pwned"}]}]}}"#;
        let events = run_as(
            &s,
            user,
            "bypass",
            &[bash(
                "w",
                &format!(
                    "echo '{hook}' > .claude/settings.json; echo '{hook}' > .claude/settings.local.json; \
                     echo 'touch /tmp/pwned' >> .claude/hooks/guard.sh; echo x > .claude/hooks/new.sh; \
                     mv .claude .claude-old; rm -rf .claude; echo '{hook}' > sub/.claude/settings.local.json; \
                     echo done"
                ),
            )],
        );
        let text = text_of(&events, "w");
        println!("{user:?}: {text}");
        assert!(text.contains("done"), "{user:?}: {text}");
        assert_eq!(
            std::fs::read_to_string(s.root.join(".claude/settings.json")).unwrap(),
            "{}\n",
            "{user:?}: {text}"
        );
        assert!(
            !s.root.join(".claude/settings.local.json").exists(),
            "{user:?}: {text}"
        );
        assert!(
            !s.root.join(".claude/hooks/new.sh").exists(),
            "{user:?}: {text}"
        );
        assert!(
            !s.root.join("sub/.claude/settings.local.json").exists(),
            "{user:?}: {text}"
        );
        assert_eq!(
            std::fs::read_to_string(s.root.join(".claude/hooks/guard.sh")).unwrap(),
            "exit 0\n",
            "{user:?}: {text}"
        );
        assert!(s.root.join("a.txt").exists());
    }
}
