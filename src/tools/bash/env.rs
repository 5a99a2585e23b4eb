//! The command's environment: non-interactive, and without secrets unless
//! the harness allows them by name.

use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};

/// Set for every command so that nothing waits for a terminal or a person.
pub(crate) const NON_INTERACTIVE: &[(&str, &str)] = &[
    ("TERM", "dumb"),
    ("NO_COLOR", "1"),
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_EDITOR", "true"),
];

/// Parts of a variable's name (compared case-insensitively) that mark it as
/// a secret.
const SECRET_MARKERS: &[&str] = &["KEY", "TOKEN", "SECRET", "PASSWORD"];

/// Where a command's environment starts, and which secrets may pass.
#[derive(Clone, Debug, Default)]
pub(crate) struct EnvPolicy {
    /// The variables to start from; `None` inherits the process's.
    pub(crate) base: Option<Vec<(OsString, OsString)>>,
    /// Names (exact) let through although they look like secrets.
    pub(crate) allowed: BTreeSet<OsString>,
}

impl EnvPolicy {
    /// The full environment of a command, in a stable order.
    pub(crate) fn build(&self) -> Vec<(OsString, OsString)> {
        let base = match &self.base {
            Some(vars) => vars.clone(),
            None => std::env::vars_os().collect(),
        };
        let mut env: Vec<(OsString, OsString)> = base
            .into_iter()
            .filter(|(name, _)| self.allowed.contains(name) || !looks_secret(name))
            .filter(|(name, _)| !NON_INTERACTIVE.iter().any(|(n, _)| name == n))
            .collect();
        env.extend(
            NON_INTERACTIVE
                .iter()
                .map(|(n, v)| (OsString::from(n), OsString::from(v))),
        );
        env
    }
}

/// Whether a variable's name says it holds a secret.
pub(crate) fn looks_secret(name: &OsStr) -> bool {
    let upper = name.to_string_lossy().to_ascii_uppercase();
    SECRET_MARKERS.iter().any(|m| upper.contains(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(n, v)| (OsString::from(n), OsString::from(v)))
            .collect()
    }

    fn get<'a>(env: &'a [(OsString, OsString)], name: &str) -> Option<&'a OsString> {
        env.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    #[test]
    fn secrets_are_scrubbed_unless_allowed() {
        let policy = EnvPolicy {
            base: Some(vars(&[
                ("PATH", "/bin"),
                ("OPENAI_API_KEY", "k"),
                ("github_token", "t"),
                ("DB_PASSWORD", "p"),
                ("MY_SECRET_THING", "s"),
                ("ALLOWED_TOKEN", "ok"),
                ("MONKEY", "looks like KEY, scrubbed too"),
            ])),
            allowed: [OsString::from("ALLOWED_TOKEN")].into_iter().collect(),
        };
        let env = policy.build();
        assert_eq!(get(&env, "PATH").unwrap(), "/bin");
        assert_eq!(get(&env, "ALLOWED_TOKEN").unwrap(), "ok");
        for name in [
            "OPENAI_API_KEY",
            "github_token",
            "DB_PASSWORD",
            "MY_SECRET_THING",
            "MONKEY",
        ] {
            assert!(get(&env, name).is_none(), "{name} leaked");
        }
    }

    #[test]
    fn non_interactive_values_override_the_base() {
        let policy = EnvPolicy {
            base: Some(vars(&[("TERM", "xterm-256color"), ("PAGER", "less")])),
            allowed: BTreeSet::new(),
        };
        let env = policy.build();
        for (name, value) in NON_INTERACTIVE {
            let found: Vec<_> = env.iter().filter(|(n, _)| n == name).collect();
            assert_eq!(found.len(), 1);
            assert_eq!(found[0].1, *value);
        }
    }
}
