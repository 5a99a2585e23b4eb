//! The MCP client over streamable HTTP: an `agentcore run` session mounts
//! `agentcore mcp --http` through `[[mcp_servers]] url` (with the bearer
//! token in `headers`) and edits a file through it, read-before-write
//! holding across the boundary; a wrong token or a dead address fails the
//! mount by name, and the run goes on; plain http:// reaches only this
//! machine unless the entry allows it.

use serde_json::json;

use crate::support::cli::{end, run_with_policy as run, text, turn};
use crate::support::http::{self, TOKEN, running};

fn policy(url: &str, token: &str) -> String {
    format!(
        "allow = [\"mcp__remote__*\"]\n[[mcp_servers]]\nname = \"remote\"\nurl = {}\nheaders = {{ Authorization = {} }}\nstartup_timeout_secs = 20\n",
        json!(url),
        json!(format!("Bearer {token}")),
    )
}

#[test]
fn a_run_mounts_agentcore_over_http_and_edits_through_it() {
    let server = running("0.0.0.0:0", &[], &[("AGENTCORE_MCP_TOKEN", TOKEN)]);
    std::fs::write(server.root.path().join("notes.txt"), "one\ntwo\n").unwrap();
    let url = format!("http://{}/mcp", server.connect);
    let edit = json!({"file_path": "notes.txt", "old_string": "two", "new_string": "deux"});
    let input = [
        turn(&[("e1", "mcp__remote__edit", edit.clone())]),
        turn(&[("r1", "mcp__remote__read", json!({"file_path": "notes.txt"}))]),
        turn(&[("e2", "mcp__remote__edit", edit)]),
    ]
    .concat();
    let (events, output) = run(&policy(&url, TOKEN), &input);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let refused = end(&events, "e1");
    assert_eq!(refused["outcome"], "failed", "{refused:#} {stderr}");
    assert!(
        text(refused).contains("File has not been read yet. Read it first"),
        "{refused:#}"
    );
    assert_eq!(end(&events, "r1")["outcome"], "success");
    let edited = end(&events, "e2");
    assert_eq!(edited["outcome"], "success", "{edited:#}");
    assert_eq!(
        std::fs::read_to_string(server.root.path().join("notes.txt")).unwrap(),
        "one\ndeux\n"
    );
    // The run's end closed its MCP session: the server's session ended.
    http::eventually("the run's session ends on the server", || {
        server.output_dirs() == 0
    });
}

#[test]
fn a_wrong_token_or_a_dead_address_fails_the_mount_by_name() {
    let server = running("0.0.0.0:0", &[], &[("AGENTCORE_MCP_TOKEN", TOKEN)]);
    let url = format!("http://{}/mcp", server.connect);
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead_url = format!("http://{}/mcp", dead.local_addr().unwrap());
    drop(dead);
    for (url, token) in [
        (url.as_str(), "wrong-token-0123456789abcdef"),
        (dead_url.as_str(), TOKEN),
    ] {
        let input = turn(&[("r", "mcp__remote__read", json!({"file_path": "x"}))])
            + &turn(&[("b", "glob", json!({"pattern": "*"}))]);
        let (events, output) = run(&policy(url, token), &input);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{stderr}");
        assert!(stderr.contains("MCP server \"remote\""), "{stderr}");
        if url.starts_with(&format!("http://{}", server.connect)) {
            // Refused for its token: the message says what to do.
            assert!(
                stderr.contains("The server refused the Authorization in the entry's `headers`: replace the token with one it accepts, or remove the header to sign in with OAuth"),
                "{stderr}"
            );
        }
        assert_eq!(end(&events, "r")["outcome"], "failed");
        let other = end(&events, "b");
        assert_eq!(other["outcome"], "success", "{other:#}");
        assert!(!stderr.contains(TOKEN), "{stderr}");
    }
}

#[test]
fn plain_http_to_another_machine_or_an_odd_url_is_refused_with_the_fix() {
    for (url, expected) in [
        (
            "http://example.com/mcp",
            "which is not this machine: what is sent (tokens too) could be read or changed on the way. Use https://, or set `allow_insecure = true`",
        ),
        ("ftp://example.com/mcp", "not an https:// or http:// URL"),
    ] {
        let input = turn(&[("b", "ls", json!({}))]);
        let (_, output) = run(&policy(url, TOKEN), &input);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(expected), "{url}: {stderr}");
    }
}
