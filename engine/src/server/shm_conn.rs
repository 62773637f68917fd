//! A shared-memory connection on the server: the accepted rendezvous socket, the segment sent
//! over it, the session's reader and writer on its rings, and what shuts it down, times it out
//! or finds its client dead.

use crate::server::config::Config;
use crate::shm::{Closer, Segment, ShmReader, ShmStream, ShmWriter, peer_gone, send_segment};
use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The error frame of a connection the accept loop timed out, for the connection's thread to
/// write: the reply ring has one producer, the session's writer, so the accept loop cannot
/// write into it as it writes into a socket. Once set, the session's next read fails, and so
/// does a read already waiting for the client, within
/// [`LIVENESS_EVERY`](crate::shm::LIVENESS_EVERY); the thread then writes the frame and closes
/// the rings, and only after that the socket, so the client reads the frame, then the end.
pub(super) type Farewell = Arc<OnceLock<Vec<u8>>>;

/// The session's reader: the request ring's, until the accept loop times the connection out.
/// Checked before every read, so a client whose bytes keep coming (a hello trickled byte by
/// byte) is stopped as a socket's shutdown stops it, not only one the session waits for.
pub(super) struct SessionReader {
    rx: ShmReader,
    farewell: Farewell,
}

impl Read for SessionReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.farewell.get().is_some() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the server timed this connection out",
            ));
        }
        self.rx.read(buf)
    }
}

/// One client's connection: its socket (kept open: its hang-up is the client's death) and,
/// once the segment is sent, the closer of its rings.
pub(super) struct ShmConn {
    socket: UnixStream,
    closer: Option<Closer>,
    farewell: Farewell,
}

impl ShmConn {
    pub(super) fn accepted(socket: UnixStream) -> ShmConn {
        ShmConn {
            socket,
            closer: None,
            farewell: Farewell::default(),
        }
    }

    /// Creates the connection's segment, sends it to the client and returns the session's
    /// reader and writer on its rings. Replies wait at most `send_timeout` for ring space, as
    /// a socket's send timeout bounds a client that stops reading.
    pub(super) fn into_halves(
        mut self,
        config: &Config,
        send_timeout: Option<Duration>,
    ) -> io::Result<(SessionReader, ShmWriter, ShmConn)> {
        let (segment, fd) = Segment::create(config.shm_ring_capacity).map_err(io::Error::other)?;
        let (requests, replies) = segment.server_ends();
        let mut stream = ShmStream::new(requests, replies);
        stream.set_policy(config.shm_wait);
        stream.set_write_timeout(send_timeout)?;
        // The session goes on while the accept loop has not timed it out: a wait for the
        // client then fails, and the thread writes the farewell (see `Farewell`).
        let farewell = Arc::clone(&self.farewell);
        stream.set_liveness(Arc::new(move || farewell.get().is_none()));
        // The socket is blocking for the rest of its life only to be polled; the hello fits
        // any socket buffer, so this send never waits.
        send_segment(&self.socket, &fd).map_err(io::Error::other)?;
        self.closer = Some(stream.closer());
        let (rx, writer) = stream.split();
        let reader = SessionReader {
            rx,
            farewell: Arc::clone(&self.farewell),
        };
        Ok((reader, writer, self))
    }

    /// Refuses the client (the server is full): the frame goes over the socket, where the
    /// client reads it in place of a segment.
    pub(super) fn refuse(mut self, frame: &[u8]) {
        let _ = self.socket.write_all(frame);
    }

    /// Times the connection out with `frame`: hands it to the connection's thread, which stops
    /// waiting for the client, writes it and closes the rings (see `Farewell`). Never waits.
    pub(super) fn time_out(&self, frame: &[u8]) {
        let _ = self.farewell.set(frame.to_vec());
    }

    /// The frame the connection's thread is to write as it ends, once the accept loop has
    /// timed the connection out.
    pub(super) fn farewell(&self) -> Farewell {
        Arc::clone(&self.farewell)
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
