//! A shared-memory connection on the server: the accepted rendezvous socket, the segment sent
//! over it, the session's reader and writer on its rings, and what shuts it down or finds its
//! client dead.

use crate::server::config::Config;
use crate::shm::{Closer, Segment, ShmReader, ShmStream, ShmWriter, peer_gone, send_segment};
use std::io::{self, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// One client's connection: its socket (kept open: its hang-up is the client's death) and,
/// once the segment is sent, the closer of its rings.
pub(super) struct ShmConn {
    socket: UnixStream,
    closer: Option<Closer>,
}

impl ShmConn {
    pub(super) fn accepted(socket: UnixStream) -> ShmConn {
        ShmConn {
            socket,
            closer: None,
        }
    }

    /// Creates the connection's segment, sends it to the client and returns the session's
    /// reader and writer on its rings. Replies wait at most `send_timeout` for ring space, as
    /// a socket's send timeout bounds a client that stops reading.
    pub(super) fn into_halves(
        mut self,
        config: &Config,
        send_timeout: Option<Duration>,
    ) -> io::Result<(ShmReader, ShmWriter, ShmConn)> {
        let (segment, fd) = Segment::create(config.shm_ring_capacity).map_err(io::Error::other)?;
        let (requests, replies) = segment.server_ends();
        let mut stream = ShmStream::new(requests, replies);
        stream.set_policy(config.shm_wait);
        stream.set_write_timeout(send_timeout)?;
        // The socket is blocking for the rest of its life only to be polled; the hello fits
        // any socket buffer, so this send never waits.
        send_segment(&self.socket, &fd).map_err(io::Error::other)?;
        self.closer = Some(stream.closer());
        let (reader, writer) = stream.split();
        Ok((reader, writer, self))
    }

    /// Refuses the client (the server is full): the frame goes over the socket, where the
    /// client reads it in place of a segment.
    pub(super) fn refuse(mut self, frame: &[u8]) {
        let _ = self.socket.write_all(frame);
    }

    /// Closes both rings (the session sees the end) and the socket.
    pub(super) fn shutdown(&self) {
        if let Some(closer) = &self.closer {
            closer.close();
        }
        let _ = self.socket.shutdown(std::net::Shutdown::Both);
    }

    /// True once the client has gone (closed its socket, or died and the kernel closed it).
    pub(super) fn peer_gone(&self) -> bool {
        peer_gone(&self.socket)
    }
}
