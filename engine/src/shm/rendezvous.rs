//! How a client finds a shared-memory server and gets its connection's segment: `shm:NAME` is a
//! Unix socket, mode 0600, in the shm directory; the server answers each connect with a fresh
//! memfd passed as `SCM_RIGHTS`, and the socket stays open so either side sees the other die.
//!
//! The memfd is anonymous: no segment is ever visible in a file system, nothing outlives the two
//! processes that map it, and no client can open another's. The socket is the only file.

use crate::shm::error::ShmError;
use rustix::event::{PollFd, PollFlags, poll};
use rustix::net::{
    RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags, recvmsg, sendmsg,
};
use std::io::{IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;

/// The bytes that come with the segment's descriptor: a peer that sends anything else is no
/// shared-memory server (or is refusing the connection with an error frame instead).
pub const HELLO: &[u8; 8] = b"HSWPSHM1";

/// The longest NAME: the socket path must fit the 108 bytes of `sun_path` with the directory.
pub const MAX_NAME: usize = 64;

/// Overrides the directory of the rendezvous sockets (default `/dev/shm`, present on every
/// Linux and on a memory file system): for tests, or a host that mounts it elsewhere.
pub const DIR_ENV: &str = "HULLSWEEP_SHM_DIR";

/// Checks a server NAME: 1 to [`MAX_NAME`] characters of `A-Z a-z 0-9 . _ -`, not starting
/// with a dot. A NAME is one word, not a path.
pub fn check_name(name: &str) -> Result<(), ShmError> {
    let bad = |why: &str| Err(ShmError::Name(format!("shm name {name:?} {why}")));
    if name.is_empty() {
        return bad("is empty");
    }
    if name.len() > MAX_NAME {
        return bad(&format!("is {} bytes long; at most {MAX_NAME}", name.len()));
    }
    if name.contains('/') {
        return bad(
            "contains '/': a NAME is one word (letters, digits, '.', '_', '-'), not a path",
        );
    }
    if name.starts_with('.') {
        return bad("starts with '.'");
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        return bad(&format!(
            "contains {c:?}; allowed: letters, digits, '.', '_', '-'"
        ));
    }
    Ok(())
}

/// The rendezvous socket of server `name`: `$HULLSWEEP_SHM_DIR/hullsweep-NAME.sock`, by default
/// in `/dev/shm`.
pub fn socket_path(name: &str) -> Result<PathBuf, ShmError> {
    check_name(name)?;
    let dir = std::env::var_os(DIR_ENV)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/dev/shm"));
    Ok(dir.join(format!("hullsweep-{name}.sock")))
}

/// Sends [`HELLO`] and the segment's descriptor over a just-accepted connection.
pub fn send_segment(socket: &UnixStream, segment: impl AsFd) -> Result<(), ShmError> {
    let fds = [segment.as_fd()];
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    if !control.push(SendAncillaryMessage::ScmRights(&fds)) {
        return Err(ShmError::Rendezvous("no room for the descriptor".into()));
    }
    let sent = sendmsg(
        socket,
        &[IoSlice::new(HELLO)],
        &mut control,
        SendFlags::NOSIGNAL | SendFlags::DONTWAIT,
    )
    .map_err(|e| ShmError::Rendezvous(format!("sending the segment: {e}")))?;
    if sent != HELLO.len() {
        return Err(ShmError::Rendezvous(format!(
            "sent {sent} of {} hello bytes",
            HELLO.len()
        )));
    }
    Ok(())
}

/// What the server said first on a shared-memory connection.
pub enum Answer {
    /// The segment: [`HELLO`] came with exactly one descriptor.
    Segment(OwnedFd),
    /// No descriptor: the first bytes of whatever the server wrote instead (an error frame when
    /// it refuses the connection, e.g. when it is full), for the caller to read on.
    Refused(Vec<u8>),
}

/// Receives the server's first message: the segment's descriptor, or the bytes of a refusal.
/// Blocks until the server answers or closes; set a read timeout on `socket` to bound it.
pub fn recv_segment(socket: &UnixStream) -> Result<Answer, ShmError> {
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let mut buf = [0u8; 64];
    let got = recvmsg(
        socket,
        &mut [IoSliceMut::new(&mut buf)],
        &mut control,
        RecvFlags::CMSG_CLOEXEC,
    )
    .map_err(|e| {
        ShmError::Rendezvous(if e == rustix::io::Errno::AGAIN {
            "no segment came within the socket's read timeout: not a hullsweep shared-memory \
             server, or a wedged one"
                .into()
        } else {
            format!("waiting for the server's segment: {e}")
        })
    })?;
    let mut fds: Vec<OwnedFd> = Vec::new();
    for message in control.drain() {
        if let RecvAncillaryMessage::ScmRights(received) = message {
            fds.extend(received);
        }
    }
    let bytes = &buf[..got.bytes.min(buf.len())];
    if got.bytes == 0 && fds.is_empty() {
        return Err(ShmError::Rendezvous(
            "the server closed the connection before sending its segment".into(),
        ));
    }
    match (bytes == HELLO, fds.len()) {
        (true, 1) => Ok(Answer::Segment(fds.pop().expect("one descriptor"))),
        (false, 0) => Ok(Answer::Refused(bytes.to_vec())),
        (hello, n) => Err(ShmError::Rendezvous(format!(
            "expected {HELLO:?} with one descriptor, got {} bytes{} and {n} descriptors: not a \
             hullsweep shared-memory server",
            bytes.len(),
            if hello { " (the hello)" } else { "" }
        ))),
    }
}

/// True once the peer of `socket` has gone: it closed its end or died (the kernel closes the
/// sockets of a killed process). Never blocks. After the rendezvous neither side writes to the
/// socket, so any readable state (end of file, or bytes a hostile peer sent) counts as gone.
pub fn peer_gone(socket: &UnixStream) -> bool {
    let mut fds = [PollFd::new(socket, PollFlags::IN)];
    match poll(&mut fds, Some(&rustix::time::Timespec::default())) {
        Ok(0) => false,
        Ok(_) => !fds[0].revents().is_empty(),
        Err(rustix::io::Errno::INTR) => false,
        Err(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_one_word() {
        assert!(check_name("sweeps-1.a_b").is_ok());
        for (name, why) in [
            ("", "empty"),
            ("a/b", "contains '/'"),
            (".hidden", "starts with '.'"),
            ("sp ace", "contains ' '"),
            (&"x".repeat(65), "65 bytes long"),
        ] {
            let e = check_name(name).unwrap_err().to_string();
            assert!(e.contains(why) && e.contains("shm name"), "{name:?}: {e}");
        }
    }

    #[test]
    fn a_descriptor_crosses_and_a_hangup_is_seen() {
        let (server, client) = UnixStream::pair().unwrap();
        let (segment, fd) = crate::shm::Segment::create(crate::shm::MIN_RING_CAPACITY).unwrap();
        drop(segment);
        assert!(!peer_gone(&server));
        send_segment(&server, &fd).unwrap();
        match recv_segment(&client).unwrap() {
            Answer::Segment(got) => assert!(crate::shm::Segment::open(got).is_ok()),
            Answer::Refused(b) => panic!("refused: {b:?}"),
        }
        drop(client);
        assert!(peer_gone(&server));
    }

    #[test]
    fn bytes_without_a_descriptor_are_a_refusal_and_a_close_an_error() {
        let (server, client) = UnixStream::pair().unwrap();
        use std::io::Write;
        (&server).write_all(b"\x00\x00\x00\x05oops!").unwrap();
        assert!(matches!(recv_segment(&client).unwrap(), Answer::Refused(b) if b.len() == 9));
        drop(server);
        let e = recv_segment(&client).err().unwrap().to_string();
        assert!(e.contains("closed the connection"), "{e}");
    }
}
