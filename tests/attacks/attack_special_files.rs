//! Issue 13 item 7: a FIFO, a socket or a device in the workspace must be
//! refused with a clear message by read, write and edit, and never hang
//! the session (each call here has a deadline it must beat by far).

use std::fs;
use std::time::Duration;

use agentcore::{Outcome, ToolResult};
use serde_json::json;

use crate::support::files::Env;

/// Every call must end long before this.
const DEADLINE: Duration = Duration::from_secs(20);

async fn within(call: impl std::future::Future<Output = ToolResult>) -> ToolResult {
    tokio::time::timeout(DEADLINE, call)
        .await
        .expect("the call hung on a special file")
}

fn refused(r: &ToolResult, message: &str) {
    assert_eq!(r.outcome, Outcome::Failed, "{}", r.text());
    assert_eq!(r.text(), message);
}

fn mkfifo(env: &Env, name: &str) {
    nix::unistd::mkfifo(
        &env.path(name),
        nix::sys::stat::Mode::from_bits_truncate(0o666),
    )
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_write_and_edit_refuse_a_fifo_without_hanging() {
    let env = Env::new();
    mkfifo(&env, "fifo");
    let r = within(env.call("read", json!({"file_path": "fifo"}))).await;
    refused(
        &r,
        "fifo is a FIFO (named pipe), not a regular file; read only regular files.",
    );
    let r = within(env.write("fifo", "data")).await;
    assert_eq!(r.error_code, Some(1), "{}", r.text());
    refused(
        &r,
        "fifo is a FIFO (named pipe), not a regular file; write only regular files.",
    );
    let r = within(env.edit("fifo", "a", "b")).await;
    assert_eq!(r.error_code, Some(1), "{}", r.text());
    refused(
        &r,
        "fifo is a FIFO (named pipe), not a regular file; edit only regular files.",
    );
    // Still a FIFO: nothing replaced it.
    use std::os::unix::fs::FileTypeExt;
    assert!(
        fs::symlink_metadata(env.path("fifo"))
            .unwrap()
            .file_type()
            .is_fifo()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_swapped_in_after_a_read_is_not_written_through() {
    let env = Env::new();
    env.put("a.txt", "hello\n");
    env.read("a.txt").await;
    fs::remove_file(env.path("a.txt")).unwrap();
    mkfifo(&env, "a.txt");
    let r = within(env.edit("a.txt", "hello", "bye")).await;
    assert_eq!(r.outcome, Outcome::Failed, "{}", r.text());
    assert!(r.text().contains("FIFO (named pipe)"), "{}", r.text());
    let r = within(env.write("a.txt", "bye\n")).await;
    assert_eq!(r.outcome, Outcome::Failed, "{}", r.text());
    assert!(r.text().contains("FIFO (named pipe)"), "{}", r.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sockets_are_refused() {
    let env = Env::new();
    let _listener = std::os::unix::net::UnixListener::bind(env.path("sock")).unwrap();
    let r = within(env.call("read", json!({"file_path": "sock"}))).await;
    refused(
        &r,
        "sock is a socket, not a regular file; read only regular files.",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs root (to make a device node)"]
async fn devices_are_refused() {
    crate::support::require::require_root();
    let env = Env::new();
    // The same device as /dev/zero (1, 5): reading it would never end.
    nix::sys::stat::mknod(
        &env.path("zero"),
        nix::sys::stat::SFlag::S_IFCHR,
        nix::sys::stat::Mode::from_bits_truncate(0o666),
        nix::sys::stat::makedev(1, 5),
    )
    .unwrap();
    let r = within(env.call("read", json!({"file_path": "zero"}))).await;
    refused(
        &r,
        "zero is a character device, not a regular file; read only regular files.",
    );
    let r = within(env.write("zero", "x")).await;
    refused(
        &r,
        "zero is a character device, not a regular file; write only regular files.",
    );
}
