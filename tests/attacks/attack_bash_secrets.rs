//! Issue 13, item 9: secrets. A command read every scrubbed variable back
//! from `/proc/$PPID/environ`. Now the process that runs commands is
//! non-dumpable (made so by `BashTool::new`), and commands run without
//! `CAP_SYS_PTRACE`, so neither its environment nor its memory can be read
//! by a command, as root or as an unprivileged user (the test re-runs
//! itself as `nobody` when it runs as root). The names scrubbed by default
//! are wider, and the allow-by-name escape still works.
#![cfg(target_os = "linux")]

use std::sync::Arc;

use agentcore::TypedTool;
use agentcore::process::OutputDir;
use agentcore::tools::bash::BashTool;
use agentcore::{Call, Pipeline, ToolRegistry, ToolResult};
use serde_json::json;
use tower::ServiceExt;

use crate::support::procs::{copy_executable, is_root, path_and_home};
use crate::support::test_name;

/// Set in the environment of the run as `nobody`, so it does not recurse.
const INNER: &str = "AGENTCORE_TEST_SECRETS_INNER";

async fn run(tool: BashTool, command: &str) -> ToolResult {
    let registry = ToolRegistry::new().with(tool.into_dyn()).unwrap();
    Pipeline::builder()
        .registry(Arc::new(registry))
        .build()
        .service()
        .oneshot(Call::new("t", "bash", json!({"command": command})))
        .await
        .unwrap()
}

const PROBE: &str = r#"echo "ppid=$PPID"
test -r /proc/$$/environ && echo own-environ-readable
test -e /proc/$PPID/cmdline && echo parent-visible
if tr '\0' '\n' < /proc/$PPID/environ; then echo environ-read; else echo environ-refused; fi
for t in /proc/$PPID/task/*; do
  if tr '\0' '\n' < $t/environ; then echo task-environ-read; else echo task-environ-refused; fi
done
if exec 3< /proc/$PPID/mem; then echo mem-opened; else echo mem-refused; fi"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_cannot_read_the_environment_or_memory_of_agentcore() {
    let root = tempfile::tempdir().unwrap();
    let output_dir = Arc::new(OutputDir::new().unwrap());
    let tool = BashTool::new(root.path().to_owned(), output_dir).base_env(path_and_home());
    let result = run(tool, PROBE).await;
    let text = result.text();
    let whoami = if is_root() { "root" } else { "unprivileged" };
    // The probe looks at this very process.
    assert!(
        text.contains(&format!("ppid={}\n", std::process::id())),
        "{whoami}: {text}"
    );
    // Reading /proc works in general, and the parent is there to be seen.
    assert!(text.contains("own-environ-readable\n"), "{whoami}: {text}");
    assert!(text.contains("parent-visible\n"), "{whoami}: {text}");
    // Its memory is not open to the command, as root (the command has no
    // CAP_SYS_PTRACE) or not.
    assert!(text.contains("mem-refused\n"), "{whoami}: {text}");
    assert!(!text.contains("mem-opened\n"), "{whoami}: {text}");
    if is_root() {
        // What holds as root for a library: a root command may still read
        // the initial environment block of a non-dumpable root process on
        // some kernels (6.18 allows it while refusing `mem`). The
        // `agentcore` binary wipes that block at startup (see
        // `the_binary_shows_its_commands_no_environment`); a library keeps
        // secrets out of it by not having them in its own environment.
        println!("as root: /proc/PPID/environ of a library process: {}", {
            if text.contains("environ-refused\n") {
                "refused"
            } else {
                "readable"
            }
        });
        return;
    }
    // Unprivileged, its environment and its threads' environments are
    // refused too.
    for line in ["environ-refused\n", "task-environ-refused\n"] {
        assert!(text.contains(line), "{whoami}: no {line:?} in {text}");
    }
    for line in ["environ-read\n", "task-environ-read\n"] {
        assert!(!text.contains(line), "{whoami}: {line:?} in {text}");
    }
    // Nothing of this process's environment came through.
    let path = std::env::var("PATH").unwrap_or_default();
    assert!(!text.contains(&format!("PATH={path}")), "{whoami}: {text}");
}

/// Runs the `agentcore` binary on one bash call, as the current user or
/// (with `setpriv`) as `nobody`, with a secret in its environment; returns
/// the JSON Lines it printed.
fn run_binary(as_nobody: Option<&str>, command: &str) -> String {
    let dir = tempfile::Builder::new()
        .prefix("agentcore-secrets-bin-")
        .tempdir_in("/tmp")
        .unwrap();
    use std::os::unix::fs::PermissionsExt;
    let exe = dir.path().join("agentcore");
    copy_executable(env!("CARGO_BIN_EXE_agentcore"), &exe);
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    let input = serde_json::to_string(&json!({
        "turn": [{"id": "s", "name": "bash", "args": {"command": command}}]
    }))
    .unwrap();
    let input_file = dir.path().join("in.jsonl");
    std::fs::write(&input_file, input + "\n").unwrap();
    std::fs::set_permissions(&input_file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let mut cmd = match as_nobody {
        Some(setpriv) => {
            let mut c = std::process::Command::new(setpriv);
            c.args(["--reuid", "nobody", "--regid", "nogroup", "--clear-groups"])
                .arg(&exe);
            c
        }
        None => std::process::Command::new(&exe),
    };
    cmd.args(["run", "--format", "jsonl", "--mode", "bypass", "--root"])
        .arg(dir.path())
        .arg(&input_file)
        .current_dir(dir.path())
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", "/tmp")
        .env("TMPDIR", "/tmp")
        .env("SUPER_SECRET_TOKEN", "hunter2-value");
    // The copy's write descriptor can still be open in a child that another
    // test of this process forked meanwhile (it closes at that child's
    // exec), and exec of a file open for writing fails with ETXTBSY. That
    // window is short: try again until it has passed.
    let mut attempts = 0;
    let out = loop {
        match cmd.output() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && attempts < 50 => {
                attempts += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            // Under setpriv the busy exec is setpriv's own, reported on stderr.
            Ok(out)
                if attempts < 50
                    && String::from_utf8_lossy(&out.stderr).contains("Text file busy") =>
            {
                attempts += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => break other.unwrap(),
        }
    };
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        stdout.contains("tool_exec_end"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn the_binary_shows_its_commands_no_environment() {
    if std::env::var_os(INNER).is_some() {
        return;
    }
    let command = "echo ppid=$PPID; tr '\\0' '\\n' < /proc/$PPID/environ; \
                   for t in /proc/$PPID/task/*; do tr '\\0' '\\n' < $t/environ; done; \
                   x=READ; head -c 64 /proc/$PPID/mem >/dev/null && echo mem-was-$x; echo \"path=$PATH\"";
    let mut runs = vec![("this user", run_binary(None, command))];
    if is_root() {
        // As root the run as nobody is part of the proof: without setpriv
        // this fails rather than skipping it.
        let setpriv = crate::support::require::require_root_and_setpriv();
        runs.push(("nobody", run_binary(Some(setpriv), command)));
    }
    for (who, out) in runs {
        assert!(
            !out.contains("hunter2-value"),
            "{who}: the secret leaked: {out}"
        );
        assert!(
            !out.contains("SUPER_SECRET_TOKEN"),
            "{who}: the name leaked: {out}"
        );
        assert!(
            !out.contains("PATH=/usr"),
            "{who}: the environment leaked: {out}"
        );
        assert!(
            !out.contains("mem-was-READ"),
            "{who}: memory was read: {out}"
        );
        // The binary's own environment still works: the command got PATH.
        assert!(
            out.contains("path=/usr/local/bin:/usr/bin:/bin"),
            "{who}: {out}"
        );
    }
}

#[test]
fn the_same_holds_for_an_unprivileged_user() {
    if std::env::var_os(INNER).is_some() {
        return;
    }
    if !is_root() {
        println!("this run is already unprivileged: the test above is the proof");
        return;
    }
    let setpriv = crate::support::require::require_root_and_setpriv();
    // A copy of this test binary that `nobody` may run, in a folder of its
    // own under /tmp.
    let dir = tempfile::Builder::new()
        .prefix("agentcore-secrets-")
        .tempdir_in("/tmp")
        .unwrap();
    let exe = dir.path().join("probe");
    copy_executable(std::env::current_exe().unwrap(), &exe);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = std::process::Command::new(setpriv)
        .args(["--reuid", "nobody", "--regid", "nogroup", "--clear-groups"])
        .arg(&exe)
        .args([
            "--exact",
            &test_name(
                module_path!(),
                "a_command_cannot_read_the_environment_or_memory_of_agentcore",
            ),
            "--test-threads",
            "1",
        ])
        .current_dir("/tmp")
        .env_clear()
        .env(INNER, "1")
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", "/tmp")
        .env("TMPDIR", "/tmp")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "as nobody:\n{stdout}\n{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn widened_secret_names_and_urls_with_passwords_do_not_reach_the_command() {
    let root = tempfile::tempdir().unwrap();
    let output_dir = Arc::new(OutputDir::new().unwrap());
    let mut env = path_and_home();
    let secrets = [
        ("DATABASE_URL", "postgres://app:hunter2@db/app"),
        ("HTTPS_PROXY", "http://u:p@proxy:3128"),
        ("GITHUB_PAT", "ghp_1"),
        ("BASIC_AUTH", "a:b"),
        ("MYSQL_PWD", "pw"),
        ("SMTP_PASSWD", "pw"),
        ("AWS_CREDENTIALS", "c"),
        ("SSH_PRIVATE_PEM", "k"),
        ("SENTRY_DSN", "https://k@sentry.example/1"),
        ("BROWSER_COOKIE", "c"),
        ("WEB_SESSION", "s"),
    ];
    let kept = [
        ("PWD", "/somewhere"),
        ("OLDPWD", "/"),
        ("GIT_AUTHOR_NAME", "A"),
        ("REPO_URL", "https://example.com/a.git"),
        ("ALLOWED_PAT", "let through by name"),
    ];
    env.extend(
        secrets
            .iter()
            .chain(&kept)
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    let tool = BashTool::new(root.path().to_owned(), output_dir)
        .base_env(env)
        .allow_env(["ALLOWED_PAT"]);
    // `env` (not the shell's own variables, which set PWD itself).
    let result = run(tool, "env | sort").await;
    let text = result.text();
    let vars: Vec<&str> = text.lines().skip(1).collect();
    for (name, _) in secrets {
        assert!(
            !vars.iter().any(|v| v.starts_with(&format!("{name}="))),
            "{name} leaked:\n{text}"
        );
    }
    for (name, value) in kept {
        if name == "PWD" {
            // bash sets it itself; it is present either way.
            assert!(
                vars.iter().any(|v| v.starts_with(&format!("{name}="))),
                "{name}"
            );
            continue;
        }
        assert!(
            vars.contains(&format!("{name}={value}").as_str()),
            "{name} missing:\n{text}"
        );
    }
}
