//! `agentcore mcp --http`: one agentcore session per MCP session id, and a
//! session that is DELETEd, idle too long or open at SIGTERM ends like a
//! stdio session: its background jobs killed, its output folder removed,
//! other sessions untouched.

use serde_json::json;

use crate::support::http::{eventually, result_text, running, start_job};
use crate::support::procs::{Leftovers, alive_with_arg};

#[test]
fn each_mcp_session_has_its_own_session_and_ledger() {
    let server = running("127.0.0.1:0", &[], &[]);
    std::fs::write(server.root.path().join("a.txt"), "alpha\n").unwrap();
    let one = server.open(&[]);
    let two = server.open(&[]);
    assert_ne!(one, two);
    let edit = json!({"file_path": "a.txt", "old_string": "alpha", "new_string": "beta"});
    let read = server.call(&one, &[], 1, "read", json!({"file_path": "a.txt"}));
    assert!(result_text(&read).contains("alpha"), "{read:#}");
    // The second session has not read the file: read-before-write holds
    // per session.
    let refused = server.call(&two, &[], 2, "edit", edit.clone());
    assert_eq!(refused["result"]["isError"], true, "{refused:#}");
    let edited = server.call(&one, &[], 3, "edit", edit);
    assert_eq!(edited["result"]["isError"], false, "{edited:#}");
    assert_eq!(
        std::fs::read_to_string(server.root.path().join("a.txt")).unwrap(),
        "beta\n"
    );
    assert_eq!(server.output_dirs(), 2);
}

#[test]
fn delete_ends_that_session_its_jobs_and_its_output_folder_only() {
    let server = running("127.0.0.1:0", &[], &[]);
    let one = server.open(&[]);
    let two = server.open(&[]);
    let job_one = start_job(&server, &one, &[], 1);
    let job_two = start_job(&server, &two, &[], 2);
    let _left = Leftovers(vec![job_one.clone(), job_two.clone()]);
    assert_eq!(server.output_dirs(), 2);

    let deleted = server.delete(&one, &[]);
    assert_eq!(deleted.status, 200, "{deleted:?}");
    // The DELETE is answered once the session has ended.
    assert_eq!(alive_with_arg(&job_one), Vec::<u32>::new());
    eventually("the deleted session's output folder is removed", || {
        server.output_dirs() == 1
    });
    assert!(
        !alive_with_arg(&job_two).is_empty(),
        "the other session's job lives"
    );

    // The ended session is gone for good; the other one goes on.
    let after = server.post(
        Some(&one),
        &[],
        &json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}),
    );
    assert_eq!(after.status, 404, "{after:?}");
    let listed = server.call(&two, &[], 6, "bash", json!({"command": "echo still here"}));
    assert!(result_text(&listed).contains("still here"), "{listed:#}");
}

#[test]
fn an_idle_session_ends_with_its_jobs_and_folder() {
    let server = running("127.0.0.1:0", &["--idle-timeout", "2s"], &[]);
    let id = server.open(&[]);
    let job = start_job(&server, &id, &[], 1);
    let _left = Leftovers(vec![job.clone()]);
    assert_eq!(server.output_dirs(), 1);
    eventually("the idle session's job is killed", || {
        alive_with_arg(&job).is_empty()
    });
    eventually("the idle session's output folder is removed", || {
        server.output_dirs() == 0
    });
    let after = server.post(
        Some(&id),
        &[],
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    );
    assert_eq!(after.status, 404, "{after:?}");
    // The server itself goes on.
    let again = server.open(&[]);
    assert_ne!(again, id);
}

#[test]
fn sigterm_ends_every_session_then_the_server() {
    let mut server = running("127.0.0.1:0", &[], &[]);
    let one = server.open(&[]);
    let two = server.open(&[]);
    let job_one = start_job(&server, &one, &[], 1);
    let job_two = start_job(&server, &two, &[], 2);
    let _left = Leftovers(vec![job_one.clone(), job_two.clone()]);
    assert_eq!(server.output_dirs(), 2);
    let status = server.terminate();
    assert!(status.success(), "{status} {}", server.stderr());
    assert_eq!(alive_with_arg(&job_one), Vec::<u32>::new());
    assert_eq!(alive_with_arg(&job_two), Vec::<u32>::new());
    assert_eq!(server.output_dirs(), 0, "{}", server.stderr());
    assert!(
        server.stderr().contains("stopped; every session ended"),
        "{}",
        server.stderr()
    );
    // Nothing listens any more.
    assert!(std::net::TcpStream::connect(server.connect).is_err());
}

#[test]
fn a_session_id_never_given_out_is_not_found() {
    let server = running("127.0.0.1:0", &[], &[]);
    let real = server.open(&[]);
    for made_up in [
        "00000000-0000-0000-0000-000000000000".to_owned(),
        format!("{real}x"),
        real.to_uppercase(),
    ] {
        if made_up == real {
            continue;
        }
        let reply = server.post(
            Some(&made_up),
            &[],
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        );
        assert_eq!(reply.status, 404, "{made_up}: {reply:?}");
        // Deleting an unknown session ends nothing.
        let _ = server.delete(&made_up, &[]);
    }
    let listed = server.post(
        Some(&real),
        &[],
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    );
    assert_eq!(listed.status, 200, "{listed:?}");
    assert_eq!(server.output_dirs(), 1);
}

#[test]
fn a_delete_whose_client_hangs_up_at_once_still_ends_the_session_and_sigterm_exits() {
    use std::io::Write;
    let mut server = running("127.0.0.1:0", &[], &[]);
    let session = server.open(&[]);
    let job = start_job(&server, &session, &[], 1);
    let _left = Leftovers(vec![job.clone()]);
    let mut stream = std::net::TcpStream::connect(server.connect).unwrap();
    write!(
        stream,
        "DELETE /mcp HTTP/1.1\r\nHost: {}\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-06-18\r\nContent-Length: 0\r\n\r\n",
        server.connect
    )
    .unwrap();
    // Hang up once the server is ending the session, before it answers.
    std::thread::sleep(std::time::Duration::from_millis(30));
    drop(stream);
    eventually("the deleted session's job is gone", || {
        alive_with_arg(&job).is_empty()
    });
    eventually("its output folder is removed", || server.output_dirs() == 0);
    let status = server.terminate();
    assert!(status.success(), "{status} {}", server.stderr());
}
