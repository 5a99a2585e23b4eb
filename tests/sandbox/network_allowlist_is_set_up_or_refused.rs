//! `[sandbox] network = "allowlist"` as a session sets it up: the proxies'
//! variables in a command's environment, their counters at the end of the
//! run, what `sandbox check --toolchains` says, and the cases that fail
//! closed (a bad pattern, a machine without network namespaces).

use std::process::Command;

use crate::support::require::*;
use crate::support::sandbox::*;

/// An allow list mapping `registry.test` to loopback.
const ALLOWLIST: &str = "[sandbox]\nmode = \"required\"\nnetwork = \"allowlist\"\n\
                         allow_domains = [\"registry.test\"]\n\
                         resolve = { \"registry.test\" = \"127.0.0.1\" }\n";

#[test]
#[ignore = "needs the command sandbox"]
fn commands_get_the_proxy_variables_and_the_run_ends_with_the_counters() {
    require_sandbox();
    let s = scene(ALLOWLIST);
    let events = run(
        &s,
        "bypass",
        &[bash(
            "c",
            "for v in HTTP_PROXY HTTPS_PROXY ALL_PROXY NO_PROXY http_proxy https_proxy all_proxy \
             no_proxy; do echo \"$v=${!v}\"; done",
        )],
    );
    let (_, text) = end(&events, "c");
    for name in ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"] {
        assert!(
            text.contains(&format!("{name}=http://127.0.0.1:")),
            "{text}"
        );
    }
    for name in ["ALL_PROXY", "all_proxy"] {
        assert!(
            text.contains(&format!("{name}=socks5h://127.0.0.1:")),
            "{text}"
        );
    }
    assert!(text.contains("NO_PROXY=localhost,127.0.0.1,::1"), "{text}");
    let last = events.last().unwrap();
    assert_eq!(last["type"], "network", "{last}");
    assert_eq!(last["connections_refused"], 0, "{last}");
    let hello = &events[0];
    assert!(
        hello["sandbox"]
            .as_str()
            .unwrap()
            .contains("network: 1 allowed name through the session's proxies"),
        "{hello}"
    );
}

#[test]
#[ignore = "needs the command sandbox"]
fn a_refused_connection_is_the_last_line_and_counted() {
    require_sandbox();
    require_program("curl");
    let s = scene(ALLOWLIST);
    let events = run(
        &s,
        "bypass",
        &[bash(
            "c",
            "curl -sS -o /dev/null http://elsewhere.test:81/x",
        )],
    );
    let (_, text) = end(&events, "c");
    assert!(
        text.ends_with(
            "(sandboxed: connection to elsewhere.test:81 refused: not in allow_domains)"
        ),
        "{text}"
    );
    let last = events.last().unwrap();
    assert_eq!(last["connections_refused"], 1, "{last}");
}

#[test]
fn a_pattern_that_is_not_a_name_refuses_every_command_and_says_why() {
    let s = scene("[sandbox]\nmode = \"auto\"\nnetwork = \"allowlist\"\nallow_domains = [\"*\"]\n");
    let events = run(&s, "bypass", &[bash("c", "echo ran")]);
    let hello = events[0]["sandbox"].as_str().unwrap();
    assert!(
        hello.contains("could not be set up (allow_domains: \"*\" is not a host name"),
        "{hello}"
    );
    let (outcome, text) = end(&events, "c");
    assert_ne!(outcome, "success", "{text}");
    assert!(!text.contains("ran"), "{text}");
}

#[test]
#[ignore = "needs the command sandbox"]
fn without_network_namespaces_the_allow_list_fails_closed() {
    require_sandbox();
    let policy = "[sandbox]\nmode = \"auto\"\nnetwork = \"allowlist\"\n\
                  allow_domains = [\"registry.test\"]\nassume_missing = [\"network-namespace\"]\n";
    let s = scene(policy);
    let events = run(&s, "bypass", &[bash("c", "echo \"[$HTTP_PROXY]\"")]);
    let hello = events[0]["sandbox"].as_str().unwrap().to_owned();
    assert!(
        hello.contains("network: none (the allow list is unavailable:"),
        "{hello}"
    );
    let (_, text) = end(&events, "c");
    assert!(text.contains("[]"), "no proxy to point at: {text}");
    // `required` refuses every command instead.
    let s = scene(&policy.replace("\"auto\"", "\"required\""));
    let events = run(&s, "bypass", &[bash("c", "echo ran")]);
    let (outcome, text) = end(&events, "c");
    assert_ne!(outcome, "success", "{text}");
    assert!(!text.contains("ran"), "{text}");
}

#[test]
#[ignore = "needs the command sandbox"]
fn sandbox_check_lists_what_each_toolchain_adds() {
    require_sandbox();
    let s = scene(
        "[sandbox]\nnetwork = \"allowlist\"\nallow_domains = [\"registry.test\"]\n\
         toolchains = [\"npm\", \"pip\"]\n",
    );
    let out = Command::new(env!("CARGO_BIN_EXE_agentcore"))
        .args(["sandbox", "check", "--toolchains", "--policy"])
        .arg(&s.policy)
        .arg("--root")
        .arg(&s.root)
        .env("HOME", &s.home)
        .env_remove("npm_config_cache")
        .env_remove("PIP_CACHE_DIR")
        .env_remove("XDG_CACHE_HOME")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let npm_cache = s.home.join(".npm");
    let pip_cache = s.home.join(".cache/pip");
    assert!(
        text.contains(&format!("* npm    writable: {}", npm_cache.display())),
        "{text}"
    );
    assert!(text.contains("allowed:  registry.npmjs.org"), "{text}");
    assert!(text.contains("  cargo  writable:"), "{text}");
    // The listed toolchains' caches exist and are writable for commands,
    // their registries allowed.
    let writable = text.lines().find(|l| l.starts_with("writable:")).unwrap();
    assert!(
        writable.contains(&npm_cache.display().to_string()),
        "{writable}"
    );
    assert!(
        writable.contains(&pip_cache.display().to_string()),
        "{writable}"
    );
    assert!(npm_cache.is_dir() && pip_cache.is_dir());
    let network = text.lines().find(|l| l.starts_with("network:")).unwrap();
    for host in [
        "registry.test",
        "registry.npmjs.org",
        "pypi.org",
        "files.pythonhosted.org",
    ] {
        assert!(network.contains(host), "{network}");
    }
}

#[test]
#[ignore = "needs the command sandbox, root, setpriv and curl"]
fn the_allow_list_works_as_root_and_as_nobody() {
    require_sandbox();
    require_program("curl");
    for user in current_and_nobody() {
        let server = crate::support::registry::Server::start_as("registry.test");
        crate::support::registry::hello(&server);
        let s = scene(ALLOWLIST);
        let script = format!(
            "curl -sS --max-time 20 {url}; curl -sS --max-time 20 -x \"$ALL_PROXY\" {url}; curl -sS --max-time 5 --noproxy '*' {url} || echo direct-refused",
            url = server.url("/hello")
        );
        let events = run_as(&s, user, "bypass", &[bash("c", &script)]);
        let (_, text) = end(&events, "c");
        assert_eq!(
            text.matches(crate::support::registry::HELLO.trim_end())
                .count(),
            2,
            "{user:?}: {text}"
        );
        assert!(text.contains("direct-refused"), "{user:?}: {text}");
        server.assert_saw("GET", "/hello");
        let last = events.last().unwrap();
        assert_eq!(last["connections_allowed"], 2, "{user:?}: {last}");
    }
}
