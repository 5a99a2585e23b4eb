//! The command sandbox, through `Sandbox` directly: each test runs
//! `bash -c` confined and checks what the kernel refused (or allowed), so
//! each fails if the sandbox were off. A test that needs a kernel feature
//! is ignored by a plain `cargo test`, saying which, and fails naming it
//! when run on a machine without it.
#![cfg(target_os = "linux")]

use std::io::{ErrorKind, Read};
use std::net::{TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use agentcore::sandbox::{Feature, Sandbox, SandboxError, SandboxMode};

use crate::support::require::{require_features, require_file, require_landlock_abi, require_root};

/// A workspace (writable) and a home with credentials (hidden), both fresh.
struct Fixture {
    workspace: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        let workspace = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        Fixture { workspace, home }
    }

    fn ws(&self) -> PathBuf {
        std::fs::canonicalize(self.workspace.path()).unwrap()
    }

    fn sandbox(&self, network: bool) -> Sandbox {
        self.builder().network(network).build().unwrap()
    }

    fn builder(&self) -> agentcore::sandbox::SandboxBuilder {
        Sandbox::builder()
            .writable([self.ws()])
            .home(self.home.path())
    }

    /// Without network: the default (a loopback shared by the sandbox's
    /// commands) and one network namespace per command.
    fn both_loopbacks(&self) -> [Sandbox; 2] {
        [
            self.sandbox(false),
            self.builder().per_command_loopback().build().unwrap(),
        ]
    }
}

/// What a write outside the roots says: the read-only tree's `EROFS` with
/// a mount namespace, Landlock's `EACCES` without.
fn refusal(sandbox: &Sandbox) -> &'static str {
    if sandbox.status().has(Feature::MountNamespace) {
        "Read-only file system"
    } else {
        "Permission denied"
    }
}

/// Runs `script` with `bash -c` in `cwd`, confined, with `TMPDIR` the
/// sandbox's and `env` added; returns the exit code and stdout+stderr.
async fn run(sandbox: &Sandbox, cwd: &Path, script: &str, env: &[(&str, &str)]) -> (i32, String) {
    let mut cmd = command(sandbox, cwd, script, env);
    let output = cmd.output().await.expect("spawn");
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    (output.status.code().unwrap_or(-1), text)
}

fn command(
    sandbox: &Sandbox,
    cwd: &Path,
    script: &str,
    env: &[(&str, &str)],
) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new("/bin/bash");
    cmd.arg("-c")
        .arg(script)
        .current_dir(cwd)
        .env("TMPDIR", sandbox.tmpdir())
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let confinement = sandbox.confine(&mut cmd).unwrap();
    assert_ne!(confinement.enforced(), "unconfined");
    cmd
}

#[tokio::test]
#[ignore = "needs Landlock"]
async fn a_write_outside_the_roots_fails_and_leaves_nothing() {
    let fx = Fixture::new();
    let sandbox = fx.sandbox(false);
    require_features(sandbox.status(), &[Feature::Landlock]);
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("escaped.txt");
    let script = format!("echo x > {0}; touch {0}2; mkdir {0}.d", target.display());
    let (code, out) = run(&sandbox, &fx.ws(), &script, &[]).await;
    assert_ne!(code, 0, "{out}");
    // The read-only tree refuses first (EROFS); Landlock (EACCES) without
    // a mount namespace.
    assert!(out.contains(refusal(&sandbox)), "{out}");
    assert_eq!(
        std::fs::read_dir(outside.path()).unwrap().count(),
        0,
        "{out}"
    );
}

#[tokio::test]
#[ignore = "needs Landlock and mount namespaces"]
async fn writes_inside_the_roots_and_tmpdir_succeed_and_the_exit_code_passes_through() {
    let fx = Fixture::new();
    // With `tmp_size` off, $TMPDIR and /dev/shm are the host's folders,
    // which this test reads (a bounded tmpfs lives in the session's mount
    // namespace; resource_limits_hold tests it).
    let sandbox = fx
        .builder()
        .limits(agentcore::sandbox::SandboxLimits::default().tmp_size(None))
        .build()
        .unwrap();
    require_features(
        sandbox.status(),
        &[Feature::Landlock, Feature::MountNamespace],
    );
    let script = "echo hi > a.txt && mkdir -p d/e && echo t > d/e/t && mv a.txt d/ \
                  && echo tmp > \"$TMPDIR/t\" && cat \"$TMPDIR/t\" && echo ok > /dev/null \
                  && echo shm > /dev/shm/agentcore-sandbox-test && exit 3";
    let (code, out) = run(&sandbox, &fx.ws(), script, &[]).await;
    assert_eq!(code, 3, "{out}");
    assert_eq!(out, "tmp\n");
    assert_eq!(
        std::fs::read_to_string(fx.ws().join("d/a.txt")).unwrap(),
        "hi\n"
    );
    assert_eq!(
        std::fs::read_to_string(sandbox.tmpdir().join("t")).unwrap(),
        "tmp\n"
    );
    // /dev/shm is the sandbox's own.
    assert!(!Path::new("/dev/shm/agentcore-sandbox-test").exists());
    let shm = sandbox
        .tmpdir()
        .parent()
        .unwrap()
        .join("shm/agentcore-sandbox-test");
    assert_eq!(std::fs::read_to_string(shm).unwrap(), "shm\n");
}

#[tokio::test]
#[ignore = "needs mount namespaces"]
async fn git_config_and_env_files_cannot_be_changed() {
    let fx = Fixture::new();
    let ws = fx.ws();
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(ws.join(".env"), "SECRET=1\n").unwrap();
    let sandbox = fx.sandbox(false);
    require_features(sandbox.status(), &[Feature::MountNamespace]);
    let script = "echo x >> .git/config; echo y > .git/hooks/pre-commit; echo z >> .env; \
                  echo fine > other.txt";
    let (_, out) = run(&sandbox, &ws, script, &[]).await;
    assert_eq!(out.matches("Read-only file system").count(), 3, "{out}");
    assert_eq!(
        std::fs::read_to_string(ws.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert!(!ws.join(".git/hooks/pre-commit").exists());
    assert_eq!(
        std::fs::read_to_string(ws.join(".env")).unwrap(),
        "SECRET=1\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("other.txt")).unwrap(),
        "fine\n"
    );
}

#[tokio::test]
#[ignore = "needs mount namespaces"]
async fn hidden_credential_files_read_empty() {
    let fx = Fixture::new();
    let home = fx.home.path();
    std::fs::create_dir(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), "PRIVATE-KEY-MATERIAL").unwrap();
    std::fs::write(home.join(".netrc"), "machine x password NETRC-SECRET").unwrap();
    let sandbox = fx.sandbox(false);
    require_features(sandbox.status(), &[Feature::MountNamespace]);
    let script = format!(
        "ls -A {h}/.ssh; cat {h}/.ssh/id_ed25519; cat {h}/.netrc; wc -c < {h}/.netrc",
        h = home.display()
    );
    let (_, out) = run(&sandbox, &fx.ws(), &script, &[]).await;
    assert!(!out.contains("PRIVATE-KEY-MATERIAL"), "{out}");
    assert!(!out.contains("NETRC-SECRET"), "{out}");
    assert!(out.contains("No such file or directory"), "{out}");
    assert!(out.starts_with("0\n"), "{out}"); // stdout (wc) comes first
}

#[tokio::test]
#[ignore = "needs mount namespaces"]
async fn mcp_oauth_tokens_are_hidden_even_when_written_after_the_sandbox_started() {
    let fx = Fixture::new();
    let home = fx.home.path();
    // No token folder yet: the sandbox makes it (empty, 0700) so that what
    // a sign-in writes later is under the cover too.
    let sandbox = fx.sandbox(false);
    require_features(sandbox.status(), &[Feature::MountNamespace]);
    let dir = home.join(".local/state/agentcore/mcp-oauth");
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&dir).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o700);
    std::fs::write(dir.join("github-0123.json"), "OAUTH-ACCESS-TOKEN").unwrap();
    let script = format!(
        "ls -A {d} | wc -l; cat {d}/github-0123.json; echo end",
        d = dir.display()
    );
    let (_, out) = run(&sandbox, &fx.ws(), &script, &[]).await;
    assert!(!out.contains("OAUTH-ACCESS-TOKEN"), "{out}");
    assert!(out.starts_with("0\nend"), "{out}"); // the folder is empty inside
    assert!(out.contains("No such file or directory"), "{out}");
}

/// A TCP listener and a UDP socket on the host's loopback, outside the
/// command.
struct Listeners {
    tcp: TcpListener,
    udp: UdpSocket,
}

impl Listeners {
    fn new() -> Self {
        let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
        tcp.set_nonblocking(true).unwrap();
        let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
        udp.set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        Listeners { tcp, udp }
    }

    fn script(&self) -> String {
        format!(
            "echo tcp > /dev/tcp/127.0.0.1/{}; echo udp > /dev/udp/127.0.0.1/{}; true",
            self.tcp.local_addr().unwrap().port(),
            self.udp.local_addr().unwrap().port()
        )
    }

    /// What reached the listeners: the TCP payload, the UDP datagram.
    fn received(&self) -> (Option<String>, Option<String>) {
        let tcp = match self.tcp.accept() {
            Ok((mut stream, _)) => {
                stream.set_nonblocking(false).unwrap();
                let mut text = String::new();
                stream.read_to_string(&mut text).unwrap();
                Some(text)
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => None,
            Err(e) => panic!("accept: {e}"),
        };
        let mut buf = [0u8; 64];
        let udp = match self.udp.recv(&mut buf) {
            Ok(n) => Some(String::from_utf8_lossy(&buf[..n]).into_owned()),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => None,
            Err(e) => panic!("recv: {e}"),
        };
        (tcp, udp)
    }
}

#[tokio::test]
#[ignore = "needs network namespaces"]
async fn tcp_and_udp_to_a_listener_outside_fail_without_network() {
    let fx = Fixture::new();
    for sandbox in fx.both_loopbacks() {
        require_features(sandbox.status(), &[Feature::NetworkNamespace]);
        let listeners = Listeners::new();
        let (_, out) = run(&sandbox, &fx.ws(), &listeners.script(), &[]).await;
        assert!(out.contains("Connection refused"), "{out}");
        assert_eq!(listeners.received(), (None, None), "{out}");
    }
}

#[tokio::test]
#[ignore = "needs user namespaces"]
async fn tcp_and_udp_to_a_listener_outside_work_with_network() {
    let fx = Fixture::new();
    let sandbox = fx.sandbox(true);
    require_features(sandbox.status(), &[Feature::UserNamespace]);
    let listeners = Listeners::new();
    let (code, out) = run(&sandbox, &fx.ws(), &listeners.script(), &[]).await;
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        listeners.received(),
        (Some("tcp\n".to_owned()), Some("udp\n".to_owned())),
        "{out}"
    );
}

#[tokio::test]
#[ignore = "needs network namespaces and /usr/bin/python3"]
async fn a_server_and_a_client_in_one_command_talk_over_its_own_loopback() {
    let fx = Fixture::new();
    for sandbox in fx.both_loopbacks() {
        require_features(sandbox.status(), &[Feature::NetworkNamespace]);
        loopback_in_one_command(&fx, &sandbox).await;
    }
}

async fn loopback_in_one_command(fx: &Fixture, sandbox: &Sandbox) {
    let python = "/usr/bin/python3";
    require_file(python);
    let script = format!(
        r#"readlink /proc/self/ns/net; rm -f port.tmp
{python} -c 'import socket
s = socket.socket(); s.settimeout(20); s.bind(("127.0.0.1", 0)); s.listen()
open("port.tmp", "w").write(str(s.getsockname()[1]))
c, _ = s.accept(); c.sendall(b"pong\n"); c.close()' &
for i in $(seq 100); do [ -s port.tmp ] && break; sleep 0.05; done
exec 3<>/dev/tcp/127.0.0.1/$(cat port.tmp); cat <&3; wait"#
    );
    let (code, out) = run(sandbox, &fx.ws(), &script, &[]).await;
    assert_eq!(code, 0, "{out}");
    let outside = std::fs::read_link("/proc/self/ns/net").unwrap();
    let mut lines = out.lines();
    assert_ne!(lines.next(), Some(outside.to_str().unwrap()), "{out}");
    assert_eq!(lines.next(), Some("pong"), "{out}");
}

#[tokio::test]
#[ignore = "needs network namespaces and /usr/bin/python3"]
async fn a_server_started_by_one_command_answers_the_next_over_the_shared_loopback() {
    let fx = Fixture::new();
    let sandbox = fx.sandbox(false);
    require_features(sandbox.status(), &[Feature::NetworkNamespace]);
    assert!(
        sandbox
            .status()
            .enforced()
            .contains("loopback shared by the session"),
        "{}",
        sandbox.status()
    );
    let python = "/usr/bin/python3";
    require_file(python);
    let server = format!(
        r#"exec {python} -c 'import socket
s = socket.socket(); s.settimeout(20); s.bind(("127.0.0.1", 0)); s.listen()
open("port.tmp", "w").write(str(s.getsockname()[1]))
c, _ = s.accept(); c.sendall(b"pong\n"); c.close()'"#
    );
    let mut server = command(&sandbox, &fx.ws(), &server, &[]);
    let mut server = server.spawn().unwrap();
    let port_file = fx.ws().join("port.tmp");
    let start = Instant::now();
    let port = loop {
        if let Ok(port) = std::fs::read_to_string(&port_file)
            && !port.is_empty()
        {
            break port;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the server never started"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    // Not from the host: the server listens on the sandbox's loopback.
    assert!(std::net::TcpStream::connect(("127.0.0.1", port.parse::<u16>().unwrap())).is_err());
    let client = format!("exec 3<>/dev/tcp/127.0.0.1/{port}; cat <&3");
    let (code, out) = run(&sandbox, &fx.ws(), &client, &[]).await;
    assert_eq!((code, out.as_str()), (0, "pong\n"));
    assert!(server.wait().await.unwrap().success());
}

/// The host pids of the processes whose environment holds `marker`
/// and whose command line is `sleep 300`.
fn marked_sleepers(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if cmdline == b"sleep\x00300\x00"
            && environ
                .split(|b| *b == 0)
                .any(|var| var == marker.as_bytes())
        {
            found.push(pid);
        }
    }
    found
}

/// Polls until `marked_sleepers` is empty, for up to five seconds.
fn gone(marker: &str) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(5) {
        if marked_sleepers(marker).is_empty() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

fn new_marker() -> String {
    let dir = tempfile::tempdir().unwrap();
    let name = dir
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    format!("SANDBOX_TEST_MARK={name}-{}", std::process::id())
}

#[tokio::test]
#[ignore = "needs PID namespaces"]
async fn a_setsid_double_forked_sleeper_is_gone_when_the_command_exits() {
    let fx = Fixture::new();
    let sandbox = fx.sandbox(false);
    require_features(sandbox.status(), &[Feature::PidNamespace]);
    let marker = new_marker();
    let (key, value) = marker.split_once('=').unwrap();
    let mut cmd = command(
        &sandbox,
        &fx.ws(),
        "(setsid sleep 300 &); sleep 1",
        &[(key, value)],
    );
    let mut child = cmd.spawn().unwrap();
    let start = Instant::now();
    while marked_sleepers(&marker).is_empty() && start.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        !marked_sleepers(&marker).is_empty(),
        "the sleeper never started"
    );
    let status = child.wait().await.unwrap();
    assert!(status.success(), "{status}");
    assert!(gone(&marker), "the sleeper outlived the command");
}

/// What the bash tool relies on to skip its look through `/proc` after a
/// confined command: once M has exited with a code, every process of the
/// command is already gone (M waits for G, whose death the kernel makes
/// wait for every process of the namespace), not merely dying.
#[tokio::test]
#[ignore = "needs PID namespaces"]
async fn every_process_is_gone_the_moment_m_exits_with_a_code() {
    let fx = Fixture::new();
    let sandbox = fx.sandbox(false);
    require_features(sandbox.status(), &[Feature::PidNamespace]);
    for _ in 0..3 {
        let marker = new_marker();
        let (key, value) = marker.split_once('=').unwrap();
        // A double-forked `setsid` sleeper, one that ignores TERM and HUP,
        // and the shell's own child, all still running when it exits.
        let mut cmd = command(
            &sandbox,
            &fx.ws(),
            // Exit code 3 only once all three run (9: they never did).
            "(setsid sleep 300 &); (trap '' TERM HUP; exec sleep 300) & sleep 300 & \
             i=0; until [ \"$(pgrep -c -x sleep)\" = 3 ]; do \
             i=$((i+1)); [ $i -gt 2000 ] && exit 9; sleep 0.01; done; exit 3",
            &[(key, value)],
        );
        let mut child = cmd.spawn().unwrap();
        let status = child.wait().await.unwrap();
        assert_eq!(status.code(), Some(3), "{status}");
        let left = marked_sleepers(&marker);
        assert!(left.is_empty(), "alive after M exited: {left:?}");
    }
}

#[tokio::test]
#[ignore = "needs PID namespaces"]
async fn a_setsid_double_forked_sleeper_is_gone_when_m_is_killed() {
    let fx = Fixture::new();
    let sandbox = fx.sandbox(false);
    require_features(sandbox.status(), &[Feature::PidNamespace]);
    let marker = new_marker();
    let (key, value) = marker.split_once('=').unwrap();
    let mut cmd = command(
        &sandbox,
        &fx.ws(),
        "(setsid sleep 300 &); sleep 300",
        &[(key, value)],
    );
    let mut child = cmd.spawn().unwrap();
    let start = Instant::now();
    while marked_sleepers(&marker).len() < 2 && start.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        marked_sleepers(&marker).len(),
        2,
        "the sleepers never started"
    );
    let m = nix::unistd::Pid::from_raw(child.id().unwrap() as i32);
    nix::sys::signal::kill(m, nix::sys::signal::Signal::SIGKILL).unwrap();
    child.wait().await.unwrap();
    assert!(gone(&marker), "a sleeper outlived M");
}

#[test]
fn required_with_a_missing_feature_fails_naming_it() {
    let error = Sandbox::builder()
        .mode(SandboxMode::Required)
        .assume_missing(Feature::Landlock)
        .build()
        .unwrap_err();
    assert!(matches!(
        error,
        SandboxError::Unavailable {
            feature: Feature::Landlock,
            ..
        }
    ));
    assert_eq!(error.to_string(), "Landlock is not available (simulated)");

    let error = Sandbox::builder()
        .mode(SandboxMode::Required)
        .assume_missing(Feature::UserNamespace)
        .build()
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "user namespaces are not available (simulated)"
    );

    // Auto builds, and says what it lacks.
    let sandbox = Sandbox::builder()
        .assume_missing(Feature::PidNamespace)
        .build()
        .unwrap();
    assert!(!sandbox.is_fully_confining());
    assert!(
        sandbox
            .status()
            .to_string()
            .ends_with("not fully confined: PID namespaces are not available (simulated)"),
        "{}",
        sandbox.status()
    );
}

#[tokio::test]
#[ignore = "needs Landlock ABI ≥ 4 and seccomp"]
async fn auto_without_user_namespaces_still_refuses_writes_and_tcp_by_landlock() {
    let fx = Fixture::new();
    let sandbox = Sandbox::builder()
        .writable([fx.ws()])
        .home(fx.home.path())
        .assume_missing(Feature::UserNamespace)
        .build()
        .unwrap();
    require_features(sandbox.status(), &[Feature::Landlock, Feature::Seccomp]);
    require_landlock_abi(sandbox.status(), 4);
    let outside = tempfile::tempdir().unwrap();
    let listeners = Listeners::new();
    let script = format!(
        "{}; echo x > {}/f; echo in > in.txt",
        listeners.script(),
        outside.path().display()
    );
    let (_, out) = run(&sandbox, &fx.ws(), &script, &[]).await;
    assert!(out.contains("connect: Permission denied"), "{out}");
    assert!(out.contains("socket: Network is unreachable"), "{out}");
    let denied = format!("{}/f: Permission denied", outside.path().display());
    assert!(out.contains(&denied), "{out}");
    assert_eq!(listeners.received(), (None, None), "{out}");
    assert!(!outside.path().join("f").exists());
    assert_eq!(
        std::fs::read_to_string(fx.ws().join("in.txt")).unwrap(),
        "in\n"
    );
}

#[tokio::test]
#[ignore = "needs seccomp and /usr/bin/python3"]
async fn odd_socket_families_are_refused_and_no_capability_is_left() {
    let fx = Fixture::new();
    let sandbox = fx.sandbox(false);
    require_features(sandbox.status(), &[Feature::Seccomp]);
    let python = "/usr/bin/python3";
    require_file(python);
    let script = format!(
        "grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status; \
         {python} -c 'import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW)' 2>&1 \
         | tail -1"
    );
    let (_, out) = run(&sandbox, &fx.ws(), &script, &[]).await;
    // Root keeps dac_override and dac_read_search only (no chown, no
    // fowner: issue 25, item 2).
    let user = sandbox.status().has(Feature::UserNamespace);
    let caps = if user && nix::unistd::geteuid().is_root() {
        "0000000000000006"
    } else {
        "0000000000000000"
    };
    assert!(out.contains(&format!("CapEff:\t{caps}")), "{out}");
    assert!(out.contains(&format!("CapPrm:\t{caps}")), "{out}");
    assert!(out.contains(&format!("CapBnd:\t{caps}")), "{out}");
    assert!(
        out.contains("[Errno 97] Address family not supported by protocol"),
        "{out}"
    );
}

#[tokio::test]
#[ignore = "needs root and user namespaces"]
async fn root_keeps_access_to_files_of_other_users() {
    require_root();
    let fx = Fixture::new();
    let sandbox = fx.sandbox(false);
    require_features(sandbox.status(), &[Feature::UserNamespace]);
    let file = fx.ws().join("theirs.txt");
    std::fs::write(&file, "owned by 1000\n").unwrap();
    std::os::unix::fs::chown(&file, Some(1000), Some(1000)).unwrap();
    std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let (code, out) = run(
        &sandbox,
        &fx.ws(),
        "id -u; stat -c %u theirs.txt; cat theirs.txt && echo more >> theirs.txt",
        &[],
    )
    .await;
    assert_eq!((code, out.as_str()), (0, "0\n1000\nowned by 1000\n"));
}

#[tokio::test]
#[ignore = "needs Landlock and PID namespaces"]
async fn confine_works_after_the_bash_tools_own_pre_exec_step() {
    let fx = Fixture::new();
    let sandbox = fx.sandbox(false);
    require_features(
        sandbox.status(),
        &[Feature::Landlock, Feature::PidNamespace],
    );
    let outside = tempfile::tempdir().unwrap();
    let mut cmd = tokio::process::Command::new("/bin/bash");
    cmd.arg("-c")
        .arg(format!("echo x > {}/f; exit 7", outside.path().display()))
        .current_dir(fx.ws())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: as src/tools/bash/process.rs: setsid and prctl only.
    unsafe {
        cmd.pre_exec(|| {
            nix::unistd::setsid().map_err(std::io::Error::from)?;
            nix::sys::prctl::set_child_subreaper(true).map_err(std::io::Error::from)?;
            Ok(())
        });
    }
    let confinement = sandbox.confine(&mut cmd).unwrap();
    assert!(confinement.is_full() && confinement.tree_dies_with_child());
    let output = cmd.output().await.unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(7), "{stderr}");
    assert!(stderr.contains(refusal(&sandbox)), "{stderr}");
    assert!(!outside.path().join("f").exists());
}

#[test]
fn the_status_of_this_machine_is_printed() {
    let status = agentcore::sandbox::check();
    eprintln!("sandbox status of this machine:\n{status}");
    assert!(status.to_string().contains("\nenforced: "), "{status}");
}

#[tokio::test]
#[ignore = "needs mount namespaces"]
async fn a_failed_setup_step_is_named_in_the_spawn_error() {
    let fx = Fixture::new();
    let secret = fx.ws().join("secret");
    std::fs::create_dir_all(secret.join("sub")).unwrap();
    let sandbox = fx.builder().hidden([&secret]).build().unwrap();
    require_features(sandbox.status(), &[Feature::MountNamespace]);
    // The working directory is inside a hidden directory: it is gone once
    // the tmpfs covers it.
    let cwd = secret.join("sub");
    let mut cmd = tokio::process::Command::new("/bin/bash");
    cmd.arg("-c").arg("true").current_dir(&cwd);
    let confinement = sandbox.confine(&mut cmd).unwrap();
    let error = cmd.spawn().map(drop).unwrap_err();
    assert_eq!(
        confinement.explain(error).to_string(),
        format!(
            "the sandbox could not enter the working directory {}: \
             No such file or directory (os error 2)",
            cwd.display()
        )
    );
}

/// System V IPC is the command's own: a host segment is invisible, and one
/// the command makes is gone with it (nothing outlives the command, uncounted
/// by any limit).
#[tokio::test]
#[ignore = "needs user namespaces, ipcmk and ipcs"]
async fn system_v_ipc_is_the_commands_own() {
    let fx = Fixture::new();
    let sandbox = fx.sandbox(false);
    require_features(sandbox.status(), &[Feature::UserNamespace]);
    crate::support::require::require_program("ipcmk");
    crate::support::require::require_program("ipcs");
    let made = std::process::Command::new("ipcmk")
        .args(["-M", "4096"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&made.stdout);
    let id = text.trim().rsplit(' ').next().unwrap().to_owned();
    let host_list = || {
        String::from_utf8_lossy(
            &std::process::Command::new("ipcs")
                .arg("-m")
                .output()
                .unwrap()
                .stdout,
        )
        .into_owned()
    };
    let host_key = host_list()
        .lines()
        .find(|l| l.split_whitespace().nth(1) == Some(id.as_str()))
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap();
    let (code, out) = run(
        &sandbox,
        &fx.ws(),
        "ipcs -m; ipcmk -M 8192 >/dev/null && ipcs -m | grep -c '^0x'",
        &[],
    )
    .await;
    let _ = std::process::Command::new("ipcrm")
        .args(["-m", &id])
        .status();
    assert_eq!(code, 0, "{out}");
    assert!(
        !out.contains(&host_key),
        "the host's segment is visible: {out}"
    );
    assert!(out.trim_end().ends_with('1'), "{out}");
    assert!(
        !host_list().lines().any(|l| l.contains(" 8192 ")),
        "the command's segment outlived it: {}",
        host_list()
    );
}
