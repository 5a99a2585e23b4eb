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
    ("CI", "1"),
    ("DEBIAN_FRONTEND", "noninteractive"),
    ("PIP_NO_INPUT", "1"),
];

/// The ssh option that makes ssh fail rather than ask (a password, a
/// passphrase, whether to trust a host key): added to git's ssh command.
pub(crate) const SSH_BATCH_MODE: &str = "-o BatchMode=yes";

/// Parts of a variable's name (compared case-insensitively) that mark it as
/// a secret wherever they appear. `AUTH` is one too, except as part of
/// `AUTHOR` (`GIT_AUTHOR_NAME` is not a secret): see [`looks_secret`].
const SECRET_MARKERS: &[&str] = &[
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "PRIVATE",
    "COOKIE",
    "SESSION",
    // `DB_PASS`, `SSHPASS`, `GPG_PASSPHRASE`, `RABBITMQ_DEFAULT_PASS`.
    "PASS",
    "JWT",
    "CREDS",
    "KUBE_CONFIG",
    "SERVICE_ACCOUNT",
];

/// Parts of a name that mark a secret unless the value is a path
/// ([`is_path`]): `SIGNING_CERT_PEM` holding a certificate and its key is
/// one, `SSL_CERT_FILE=/etc/ssl/certs/ca.pem` (which TLS needs) is not.
const SECRET_UNLESS_PATH: &[&str] = &["CERT", "PEM"];

/// Endings of a variable's name (compared case-insensitively) that mark it
/// as a secret: a personal access token (`GITHUB_PAT`), a password
/// (`DB_PWD`, `DB_PW`, but not the shell's `PWD` and `OLDPWD`), a data
/// source name (`SENTRY_DSN`), a secret key (`STRIPE_SK`).
const SECRET_SUFFIXES: &[&str] = &["PAT", "PWD", "DSN", "_PW", "_SK"];

/// Names that end like a secret but are not one.
const NOT_SECRETS: &[&str] = &["PWD", "OLDPWD"];

/// The variable that marks every process of one call, inherited by all it
/// starts; agentcore finds the call's processes by it (see `procs`).
pub(crate) const CALL_MARKER: &str = "AGENTCORE_CALL_ID";

/// The environment variable `agentcore mcp --http` reads its bearer token
/// from. Processes agentcore starts (commands, hooks, mounted MCP servers)
/// never inherit it.
pub const TOKEN_ENV: &str = "AGENTCORE_MCP_TOKEN";

/// Git configuration every command gets through the environment, after any
/// the base environment already sets: protected settings that a file in the
/// workspace cannot override. `safe.bareRepository=explicit` keeps git from
/// using a bare repository it merely finds in the working directory (a
/// model could write one, with `core.fsmonitor` set to run anything).
pub(crate) const GIT_CONFIG: &[(&str, &str)] = &[("safe.bareRepository", "explicit")];

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
            .filter(|(name, value)| self.allowed.contains(name) || !is_secret(name, value))
            .filter(|(name, _)| !NON_INTERACTIVE.iter().any(|(n, _)| name == n))
            .filter(|(name, _)| name != CALL_MARKER)
            .collect();
        env.extend(
            NON_INTERACTIVE
                .iter()
                .map(|(n, v)| (OsString::from(n), OsString::from(v))),
        );
        add_git_config(&mut env);
        add_ssh_batch_mode(&mut env);
        env
    }
}

/// The environment a `bash` command of a session starts with, built from
/// this process's own: variables that look like secrets (and
/// [`TOKEN_ENV`]) removed, the non-interactive settings (`CI=1`,
/// `DEBIAN_FRONTEND=noninteractive`, …) and git's protected configuration
/// added. For a command started by hand the way the bash tool would start
/// it (`agentcore sandbox exec`).
pub fn command_environment() -> Vec<(OsString, OsString)> {
    EnvPolicy::default().build()
}

/// Makes git's ssh batch-mode: `GIT_SSH_COMMAND` is `ssh -o BatchMode=yes`,
/// or gets that option appended when the base sets one. A base that names
/// an ssh program through `GIT_SSH` alone keeps it (`GIT_SSH_COMMAND` would
/// replace it); that program gets no input either way, stdin being empty.
fn add_ssh_batch_mode(env: &mut Vec<(OsString, OsString)>) {
    if let Some((_, command)) = env.iter_mut().find(|(n, _)| n == "GIT_SSH_COMMAND") {
        if !command.to_string_lossy().contains("BatchMode") {
            command.push(" ");
            command.push(SSH_BATCH_MODE);
        }
        return;
    }
    if env.iter().any(|(n, _)| n == "GIT_SSH") {
        return;
    }
    env.push((
        "GIT_SSH_COMMAND".into(),
        format!("ssh {SSH_BATCH_MODE}").into(),
    ));
}

/// Appends [`GIT_CONFIG`] as `GIT_CONFIG_KEY_n` / `GIT_CONFIG_VALUE_n` after
/// the pairs already counted by `GIT_CONFIG_COUNT`, and raises the count.
/// A count git would refuse (not a number) is replaced, with the pairs it
/// claimed: git would have stopped on it anyway, and ours must hold.
fn add_git_config(env: &mut Vec<(OsString, OsString)>) {
    let count = env
        .iter()
        .find(|(n, _)| n == "GIT_CONFIG_COUNT")
        .map(|(_, v)| v.to_str().and_then(|v| v.trim().parse::<usize>().ok()));
    let first = match count {
        None => 0,
        Some(Some(n)) => n,
        Some(None) => {
            env.retain(|(n, _)| {
                let n = n.to_string_lossy();
                n != "GIT_CONFIG_COUNT"
                    && !n.starts_with("GIT_CONFIG_KEY_")
                    && !n.starts_with("GIT_CONFIG_VALUE_")
            });
            0
        }
    };
    let mut ours: Vec<(OsString, OsString)> = Vec::new();
    for (i, (key, value)) in GIT_CONFIG.iter().enumerate() {
        ours.push((format!("GIT_CONFIG_KEY_{}", first + i).into(), key.into()));
        ours.push((
            format!("GIT_CONFIG_VALUE_{}", first + i).into(),
            value.into(),
        ));
    }
    ours.push((
        "GIT_CONFIG_COUNT".into(),
        (first + GIT_CONFIG.len()).to_string().into(),
    ));
    env.retain(|(n, _)| !ours.iter().any(|(o, _)| o == n));
    env.extend(ours);
}

/// Whether a variable's name says it holds a secret (`GIT_CONFIG_KEY_<n>`
/// never does): its name contains `KEY`, `TOKEN`, `SECRET`, `PASS` (so
/// `PASSWORD`, `PASSWD`, `PASSPHRASE`), `CREDENTIAL`, `CREDS`, `PRIVATE`,
/// `COOKIE`, `SESSION`, `JWT`, `KUBE_CONFIG`, `SERVICE_ACCOUNT` or `AUTH`
/// (not as part of `AUTHOR`), or ends with `PAT`, `PWD` (except `PWD` and
/// `OLDPWD` themselves), `_PW`, `_SK` or `DSN`; case is ignored.
pub(crate) fn looks_secret(name: &OsStr) -> bool {
    let upper = name.to_string_lossy().to_ascii_uppercase();
    if is_git_config_key(&upper) {
        return false;
    }
    if SECRET_MARKERS.iter().any(|m| upper.contains(m)) {
        return true;
    }
    // `AUTH` anywhere, but `AUTHOR` (`GIT_AUTHOR_NAME`) is not a secret;
    // `AUTHORIZATION` and `AUTHORITY` count as one.
    if upper
        .match_indices("AUTH")
        .any(|(i, _)| !upper[i..].starts_with("AUTHOR") || upper[i..].starts_with("AUTHORI"))
    {
        return true;
    }
    !NOT_SECRETS.contains(&upper.as_str()) && SECRET_SUFFIXES.iter().any(|s| upper.ends_with(s))
}

/// `GIT_CONFIG_KEY_<n>` holds the name of a git setting, not a secret
/// (`KEY` is part of the protocol's name); dropping it would leave
/// `GIT_CONFIG_COUNT` pointing at a missing key, which git refuses.
fn is_git_config_key(upper: &str) -> bool {
    upper
        .strip_prefix("GIT_CONFIG_KEY_")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether a variable holds a secret: its name says so ([`looks_secret`]),
/// or its value is a URL carrying a password (`scheme://user:pass@host`),
/// whatever its name (`DATABASE_URL`, `HTTPS_PROXY`).
pub(crate) fn is_secret(name: &OsStr, value: &OsStr) -> bool {
    let value = value.to_string_lossy();
    if looks_secret(name) || value_looks_secret(&value) {
        return true;
    }
    let upper = name.to_string_lossy().to_ascii_uppercase();
    SECRET_UNLESS_PATH.iter().any(|m| upper.contains(m)) && !is_path(&value)
}

/// Whether a value is one file's path (absolute, one line, no spaces), as
/// `SSL_CERT_FILE` holds, rather than the thing itself.
fn is_path(value: &str) -> bool {
    value.starts_with('/') && !value.contains(|c: char| c.is_whitespace())
}

/// Whether a value holds a secret whatever its name: a URL with a user or
/// a password in it ([`has_url_credentials`]), a storage connection
/// string's key (`AccountKey=`, `SharedAccessKey=`,
/// `SharedAccessSignature=`, a SAS URL's `sig=`), a webhook URL (its path
/// is the credential), a PEM block, or an HTTP authorization header
/// (`Authorization: Basic …`, as `GIT_CONFIG_PARAMETERS` may carry for
/// `http.extraHeader`; a value that starts `Bearer ` or `Basic ` and a
/// token).
fn value_looks_secret(value: &str) -> bool {
    if has_url_credentials(value) {
        return true;
    }
    let lower = value.to_ascii_lowercase();
    const MARKS: &[&str] = &[
        "accountkey=",
        "sharedaccesskey=",
        "sharedaccesssignature=",
        "-----begin ",
        "hooks.slack.com/",
        "authorization:",
        "authorization=",
        "x-api-key:",
        "private-token:",
        "x-auth-token:",
    ];
    if MARKS.iter().any(|m| lower.contains(m)) {
        return true;
    }
    if lower.contains("://")
        && (lower.contains("webhook") || lower.contains("?sig=") || lower.contains("&sig="))
    {
        return true;
    }
    let trimmed = lower.trim_start_matches(['\'', '"', ' ']);
    ["bearer ", "basic ", "token "].iter().any(|scheme| {
        trimmed.strip_prefix(scheme).is_some_and(|token| {
            let token: String = token
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || "-._~+/=".contains(*c))
                .collect();
            token.len() >= 8
        })
    })
}

/// Whether `value` holds a URL with credentials anywhere: a userinfo part
/// (before the first `/`, `?` or `#` of the authority) that holds a `:`
/// (`scheme://user:password@`), or any userinfo at all but a login name of
/// an ssh URL (`https://ghp_…@github.com` carries a token as the user;
/// `ssh://git@github.com` a login name).
fn has_url_credentials(value: &str) -> bool {
    let mut rest = value;
    while let Some(at) = rest.find("://") {
        let scheme = &rest[..at];
        let scheme_ok = scheme
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
        let after = &rest[at + 3..];
        let authority_end = after
            .find(|c: char| "/?#".contains(c) || c.is_whitespace())
            .unwrap_or(after.len());
        let authority = &after[..authority_end];
        if scheme_ok && let Some(userinfo_end) = authority.rfind('@') {
            let userinfo = &authority[..userinfo_end];
            let scheme_name = scheme
                .rsplit(|c: char| !(c.is_ascii_alphanumeric() || "+-.".contains(c)))
                .next()
                .unwrap_or_default()
                .to_ascii_lowercase();
            let ssh = matches!(
                scheme_name.as_str(),
                "ssh" | "git+ssh" | "ssh+git" | "sftp" | "scp"
            );
            if userinfo.contains(':') || (!ssh && !userinfo.is_empty()) {
                return true;
            }
        }
        rest = after;
    }
    false
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

    /// The environment built from `pairs` with nothing allowed through.
    fn built(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        EnvPolicy {
            base: Some(vars(pairs)),
            allowed: BTreeSet::new(),
        }
        .build()
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
    #[test]
    fn each_secret_pattern_is_scrubbed() {
        let secrets = [
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "CLIENT_SECRET",
            "DB_PASSWORD",
            "GITHUB_PAT",
            "gitlab_pat",
            "AUTH_HEADER",
            "HTTP_AUTHORIZATION",
            "CERT_AUTHORITY",
            "GIT_CONFIG_KEYS",
            "BASIC_AUTH",
            "OAUTH_STATE",
            "DB_PWD",
            "mysql_pwd",
            "SMTP_PASSWD",
            "PASSWD_FILE",
            "AWS_CREDENTIALS",
            "GOOGLE_APPLICATION_CREDENTIAL_JSON",
            "SSH_PRIVATE",
            "PRIVATE_REGISTRY",
            "SENTRY_DSN",
            "dsn",
            "BROWSER_COOKIE",
            "COOKIE_JAR",
            "DBUS_SESSION_BUS_ADDRESS",
            "SESSION",
        ];
        for name in secrets {
            assert!(looks_secret(OsStr::new(name)), "{name} not scrubbed");
        }
    }

    #[test]
    fn look_alikes_that_are_not_secrets_pass() {
        for name in [
            "PATH",
            "PWD",
            "OLDPWD",
            "pwd",
            "HOME",
            "GIT_AUTHOR_NAME",
            "GIT_AUTHOR_EMAIL",
            "CARGO_PKG_AUTHORS",
            "PATCH_LEVEL",
            "DSN_COUNT",
            "LANG",
            "DATABASE_URL",
            "GIT_CONFIG_KEY_0",
            "GIT_CONFIG_KEY_12",
        ] {
            assert!(!looks_secret(OsStr::new(name)), "{name} scrubbed");
        }
    }

    #[test]
    fn urls_carrying_a_password_are_scrubbed_whatever_the_name() {
        for (name, value) in [
            ("DATABASE_URL", "postgres://app:hunter2@db:5432/app"),
            ("REDIS_URL", "redis://:pw@localhost:6379"),
            ("HTTPS_PROXY", "http://user:pass@proxy:3128"),
            ("MIRRORS", "https://a.example https://u:p@b.example/x"),
        ] {
            assert!(
                is_secret(OsStr::new(name), OsStr::new(value)),
                "{name}={value} not scrubbed"
            );
        }
        for (name, value) in [
            ("DATABASE_URL", "postgres://db:5432/app"),
            ("REPO_URL", "ssh://git@github.com/a/b.git"),
            ("DOCS_URL", "https://example.com/a:b@c"),
            ("NOTE", "see http://a.example and ask x:y@z"),
            ("PLAIN", "no url here: a@b"),
        ] {
            assert!(
                !is_secret(OsStr::new(name), OsStr::new(value)),
                "{name}={value} scrubbed"
            );
        }
    }

    /// The names and values that passed the scrub when agentcore was
    /// attacked (issue 25, item 5), each scrubbed now.
    #[test]
    fn the_secrets_that_passed_before_are_scrubbed() {
        for name in [
            "DB_PASS",
            "SMTP_PASS",
            "RABBITMQ_DEFAULT_PASS",
            "GPG_PASSPHRASE",
            "ADMIN_PASSPHRASE",
            "DB_PW",
            "SSHPASS",
            "STRIPE_SK",
            "CI_JOB_JWT",
            "GOOGLE_CREDS",
            "CREDS_JSON",
            "KUBE_CONFIG_DATA",
            "OP_SERVICE_ACCOUNT",
        ] {
            assert!(
                is_secret(OsStr::new(name), OsStr::new("v")),
                "{name} passed"
            );
        }
        for (name, value) in [
            ("SIGNING_CERT_PEM", "-----BEGIN CERTIFICATE-----\nMIIB\n"),
            ("SIGNING_CERT_PEM", "MIIBszCCAVmgAwIBAgIU"),
            ("PRIVATE_PEM_B64", "LS0tLS1CRUdJTi"),
            ("KEYLESS", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl"),
            (
                "AZURE_STORAGE",
                "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=Zm9vYmFy==;EndpointSuffix=core.windows.net",
            ),
            (
                "BUS",
                "Endpoint=sb://x.servicebus.windows.net/;SharedAccessKeyName=R;SharedAccessKey=abc=",
            ),
            (
                "BLOB",
                "BlobEndpoint=https://a.blob.core.windows.net/;SharedAccessSignature=sv=2020&sig=abc",
            ),
            (
                "SAS_URL",
                "https://a.blob.core.windows.net/c?sv=2020-08-04&sig=abc%3D",
            ),
            (
                "NOTIFY",
                "https://hooks.slack.com/services/T000/B000/XXXXXXXX",
            ),
            ("DISCORD", "https://discord.com/api/webhooks/123/abc"),
            ("TEAMS", "https://x.webhook.office.com/webhookb2/abc"),
            ("REPO", "https://ghp_abcdefghijklmnop@github.com/o/r.git"),
            ("REPO", "https://x-access-token@github.com/o/r.git"),
            ("MIRROR", "git+https://gldt-abc@gitlab.com/o/r"),
            (
                "GIT_CONFIG_PARAMETERS",
                "'http.https://github.com/.extraheader'='AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hw'",
            ),
            ("HEADER", "Authorization: Bearer abc.def.ghi"),
            ("HDR", "Bearer eyJhbGciOiJIUzI1NiJ9.e30.x"),
            ("HDR", "Basic dXNlcjpwYXNzd29yZA=="),
            ("CURL_HEADERS", "X-Api-Key: 0123456789"),
            ("GL", "PRIVATE-TOKEN: glpat-xxxx"),
        ] {
            assert!(
                is_secret(OsStr::new(name), OsStr::new(value)),
                "{name}={value} passed"
            );
        }
    }

    /// `SSH_AUTH_SOCK` is not among them: the agent's socket is authority
    /// (`AUTH` scrubs it; a confined command could not reach it anyway).
    #[test]
    fn harmless_variables_still_pass() {
        assert!(looks_secret(OsStr::new("SSH_AUTH_SOCK")));
        for (name, value) in [
            ("PATH", "/usr/local/bin:/usr/bin:/bin"),
            ("HOME", "/home/me"),
            ("LANG", "en_US.UTF-8"),
            ("PWD", "/home/me/project"),
            ("TERM", "xterm-256color"),
            ("CARGO_HOME", "/home/me/.cargo"),
            ("UPSTREAM", "https://github.com/o/r.git"),
            ("PROXY", "http://proxy.internal:3128"),
            ("REPO_URL", "ssh://git@github.com/a/b.git"),
            ("SSL_CERT_FILE", "/etc/ssl/certs/ca-certificates.crt"),
            ("SSL_CERT_DIR", "/etc/ssl/certs"),
            ("NODE_EXTRA_CA_CERTS", "/usr/local/share/ca.pem"),
            ("DESCRIPTION", "basic usage of the tool"),
            ("COMPOSE", "docker compose up"),
            ("RUSTFLAGS", "-C target-cpu=native"),
        ] {
            assert!(
                !is_secret(OsStr::new(name), OsStr::new(value)),
                "{name}={value} scrubbed"
            );
        }
    }

    #[test]
    fn the_allow_by_name_escape_covers_every_pattern() {
        let names = [
            "GITHUB_PAT",
            "DB_PWD",
            "SENTRY_DSN",
            "SESSION_ID",
            "DATABASE_URL",
        ];
        let mut base = vars(&[("DATABASE_URL", "postgres://a:b@h/db")]);
        base.extend(vars(&[
            ("GITHUB_PAT", "p"),
            ("DB_PWD", "p"),
            ("SENTRY_DSN", "d"),
            ("SESSION_ID", "s"),
        ]));
        let policy = EnvPolicy {
            base: Some(base.clone()),
            allowed: names.iter().map(OsString::from).collect(),
        };
        let env = policy.build();
        for name in names {
            assert!(get(&env, name).is_some(), "{name} was not let through");
        }
        let scrubbed = EnvPolicy {
            base: Some(base),
            allowed: BTreeSet::new(),
        }
        .build();
        for name in names {
            assert!(get(&scrubbed, name).is_none(), "{name} leaked");
        }
    }

    #[test]
    fn git_config_is_added_after_the_users_own() {
        let env = built(&[("PATH", "/bin")]);
        assert_eq!(get(&env, "GIT_CONFIG_COUNT").unwrap(), "1");
        assert_eq!(
            get(&env, "GIT_CONFIG_KEY_0").unwrap(),
            "safe.bareRepository"
        );
        assert_eq!(get(&env, "GIT_CONFIG_VALUE_0").unwrap(), "explicit");

        let env = built(&[
            ("GIT_CONFIG_COUNT", "2"),
            ("GIT_CONFIG_KEY_0", "user.name"),
            ("GIT_CONFIG_VALUE_0", "A"),
            ("GIT_CONFIG_KEY_1", "user.email"),
            ("GIT_CONFIG_VALUE_1", "a@b"),
        ]);
        assert_eq!(get(&env, "GIT_CONFIG_COUNT").unwrap(), "3");
        assert_eq!(get(&env, "GIT_CONFIG_KEY_1").unwrap(), "user.email");
        assert_eq!(
            get(&env, "GIT_CONFIG_KEY_2").unwrap(),
            "safe.bareRepository"
        );
        assert_eq!(get(&env, "GIT_CONFIG_VALUE_2").unwrap(), "explicit");
        assert_eq!(
            env.iter().filter(|(n, _)| n == "GIT_CONFIG_COUNT").count(),
            1
        );

        // A stale pair at our index is overwritten, not doubled.
        let env = built(&[
            ("GIT_CONFIG_COUNT", "0"),
            ("GIT_CONFIG_KEY_0", "safe.bareRepository"),
            ("GIT_CONFIG_VALUE_0", "all"),
        ]);
        assert_eq!(get(&env, "GIT_CONFIG_VALUE_0").unwrap(), "explicit");
        assert_eq!(
            env.iter()
                .filter(|(n, _)| n == "GIT_CONFIG_VALUE_0")
                .count(),
            1
        );

        // A count git would refuse is replaced.
        let env = built(&[
            ("GIT_CONFIG_COUNT", "many"),
            ("GIT_CONFIG_KEY_0", "core.fsmonitor"),
            ("GIT_CONFIG_VALUE_0", "x"),
        ]);
        assert_eq!(get(&env, "GIT_CONFIG_COUNT").unwrap(), "1");
        assert_eq!(
            get(&env, "GIT_CONFIG_KEY_0").unwrap(),
            "safe.bareRepository"
        );
    }

    #[test]
    fn an_inherited_call_marker_is_dropped() {
        let env = built(&[(CALL_MARKER, "someone-else")]);
        assert!(get(&env, CALL_MARKER).is_none());
    }

    #[test]
    fn nothing_waits_for_a_person() {
        let env = built(&[]);
        assert_eq!(get(&env, "CI").unwrap(), "1");
        assert_eq!(get(&env, "DEBIAN_FRONTEND").unwrap(), "noninteractive");
        assert_eq!(get(&env, "PIP_NO_INPUT").unwrap(), "1");
        assert_eq!(
            get(&env, "GIT_SSH_COMMAND").unwrap(),
            "ssh -o BatchMode=yes"
        );
        // A command of the user's own keeps its options and gets ours.
        let env = built(&[("GIT_SSH_COMMAND", "ssh -i key")]);
        assert_eq!(
            get(&env, "GIT_SSH_COMMAND").unwrap(),
            "ssh -i key -o BatchMode=yes"
        );
        let env = built(&[("GIT_SSH", "/usr/bin/plink")]);
        assert_eq!(get(&env, "GIT_SSH_COMMAND"), None);
    }
}
