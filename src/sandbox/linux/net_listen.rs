//! Listening sockets on the session's loopback, for the proxies that run in
//! this process: a forked child enters the session's user and network
//! namespaces (as each command does), binds two TCP sockets to
//! `127.0.0.1:0` there and hands them back over a socket pair. A socket
//! belongs to the namespace it was made in, so connections accepted on
//! them come from the session's commands, while what the proxies connect
//! to is reached from this process's network.
#![allow(unsafe_code)] // the fork of the helper; each block says why it is sound.

use std::io;
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::io::Errno;
use rustix::net::{AddressFamily, SocketFlags, SocketType};
use rustix::process::WaitOptions;
use rustix::thread::LinkNameSpaceType;

use super::SessionNet;
use super::{fd_pass, sys};

/// Two listening sockets on `127.0.0.1` of the session's network
/// namespace, each on a port the kernel picked.
///
/// # Errors
///
/// When the helper cannot be forked, cannot enter the namespaces or cannot
/// bind (its errno).
pub(in crate::sandbox) fn listeners(net: &SessionNet) -> io::Result<[TcpListener; 2]> {
    let (ours, theirs) = rustix::net::socketpair(
        AddressFamily::UNIX,
        SocketType::SEQPACKET,
        SocketFlags::CLOEXEC,
        None,
    )?;
    // SAFETY: the child runs `helper`, async-signal-safe calls on data
    // prepared before the fork, and leaves by `_exit`.
    let pid = unsafe { sys::fork() }?;
    let Some(pid) = pid else {
        // SAFETY: this is the child just forked.
        let code = unsafe { helper(net, theirs.as_fd()) };
        sys::exit_now(code);
    };
    drop(theirs);
    let received = fd_pass::receive_two(ours.as_fd());
    let status = loop {
        match rustix::process::waitpid(Some(pid), WaitOptions::empty()) {
            Err(Errno::INTR) => {}
            Ok(Some((_, status))) => break status.as_raw(),
            _ => break 0,
        }
    };
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) != 0 {
        return Err(io::Error::from_raw_os_error(libc::WEXITSTATUS(status)));
    }
    let [first, second] = received?;
    Ok([TcpListener::from(first), TcpListener::from(second)])
}

/// The helper, in the forked child: returns its exit code (0, or the errno
/// that stopped it).
///
/// # Safety
///
/// Only in the child [`listeners`] forked (single-threaded, ending by
/// `_exit`): it makes async-signal-safe calls only, allocating nothing.
unsafe fn helper(net: &SessionNet, end: BorrowedFd<'_>) -> i32 {
    let errno = |e: Errno| e.raw_os_error().clamp(1, 255);
    // The user namespace first: `nobody` may not enter the network
    // namespace from outside it.
    if let Err(e) =
        rustix::thread::move_into_link_name_space(net.user.as_fd(), Some(LinkNameSpaceType::User))
    {
        return errno(e);
    }
    if let Err(e) =
        rustix::thread::move_into_link_name_space(net.net.as_fd(), Some(LinkNameSpaceType::Network))
    {
        return errno(e);
    }
    let bound = || -> rustix::io::Result<OwnedFd> {
        let socket = rustix::net::socket_with(
            AddressFamily::INET,
            SocketType::STREAM,
            SocketFlags::CLOEXEC,
            None,
        )?;
        rustix::net::bind(&socket, &SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0))?;
        rustix::net::listen(&socket, 1024)?;
        Ok(socket)
    };
    let (first, second) = match (bound(), bound()) {
        (Ok(first), Ok(second)) => (first, second),
        (Err(e), _) | (_, Err(e)) => return errno(e),
    };
    match fd_pass::send_two(end, [first.as_fd(), second.as_fd()]) {
        Ok(()) => 0,
        Err(e) => errno(e),
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    /// The sockets are made in the session's namespace: on this process's
    /// loopback their ports are someone else's or no one's.
    #[test]
    #[ignore = "needs network namespaces"]
    fn the_listeners_are_not_on_the_hosts_loopback() {
        let status = crate::sandbox::check();
        assert!(
            status.has(crate::sandbox::Feature::NetworkNamespace),
            "needs network namespaces: {:?}",
            status.reason_missing(crate::sandbox::Feature::NetworkNamespace)
        );
        let net = SessionNet::new(None).unwrap();
        let [http, socks] = listeners(&net).unwrap();
        let port = http.local_addr().unwrap().port();
        assert_ne!(port, socks.local_addr().unwrap().port());
        http.set_nonblocking(true).unwrap();
        if let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) {
            let _ = stream.write_all(b"x");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(http.accept().is_err(), "reached from the host's loopback");
    }
}
