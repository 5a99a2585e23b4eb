//! Two descriptors passed over a UNIX socket pair (`SCM_RIGHTS`), from a
//! forked helper to this process: the session's namespaces, the proxies'
//! listening sockets.

use std::io::{self, IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::{BorrowedFd, OwnedFd};

use rustix::io::Errno;
use rustix::net::{
    RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags,
};

/// Sends `fds` with one byte. Async-signal-safe (the control buffer is on
/// the stack): for forked helpers.
pub(super) fn send_two(end: BorrowedFd<'_>, fds: [BorrowedFd<'_>; 2]) -> Result<(), Errno> {
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(2))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    if !control.push(SendAncillaryMessage::ScmRights(&fds)) {
        return Err(Errno::NOBUFS);
    }
    match rustix::net::sendmsg(end, &[IoSlice::new(b"f")], &mut control, SendFlags::empty())? {
        1 => Ok(()),
        _ => Err(Errno::IO),
    }
}

/// The two descriptors [`send_two`] sent (close-on-exec).
pub(super) fn receive_two(end: BorrowedFd<'_>) -> io::Result<[OwnedFd; 2]> {
    let mut byte = [0u8; 1];
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(2))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let got = rustix::net::recvmsg(
        end,
        &mut [IoSliceMut::new(&mut byte)],
        &mut control,
        RecvFlags::CMSG_CLOEXEC,
    )?;
    if got.bytes != 1 {
        return Err(io::Error::other("the helper sent nothing"));
    }
    let mut fds = Vec::with_capacity(2);
    for message in control.drain() {
        if let RecvAncillaryMessage::ScmRights(rights) = message {
            fds.extend(rights);
        }
    }
    let mut fds = fds.into_iter();
    match (fds.next(), fds.next()) {
        (Some(first), Some(second)) => Ok([first, second]),
        _ => Err(io::Error::other("the helper sent too few descriptors")),
    }
}
