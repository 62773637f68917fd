//! A raw byte connection to a running server over any transport, for tests that send malformed,
//! partial or slow frames: a socket, or a shared-memory stream split into its two halves so that
//! one can be closed (a half-close) or moved to another thread.

use hullsweep_engine::shm::{ShmReader, ShmWriter};
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::unix::net::UnixStream;

/// One raw connection. Reads and writes time out (the `Running` that makes it sets
/// [`TIMEOUT`](super::TIMEOUT)), so no test can hang on one.
pub enum Raw {
    Unix(UnixStream),
    Tcp(TcpStream),
    /// The halves of an `ShmStream`; `writer` is `None` once half-closed. Each half keeps the
    /// rendezvous socket open (its liveness check holds it), so the server sees no hang-up
    /// until both are dropped.
    Shm {
        reader: ShmReader,
        writer: Option<ShmWriter>,
    },
}

impl Raw {
    /// Closes the sending direction only: the server reads the end of the stream, and its
    /// replies still arrive. A socket's `shutdown(Write)`; shared memory closes the request
    /// ring and keeps the reply ring.
    pub fn half_close(&mut self) {
        match self {
            Raw::Unix(s) => s.shutdown(Shutdown::Write).unwrap(),
            Raw::Tcp(s) => s.shutdown(Shutdown::Write).unwrap(),
            Raw::Shm { writer, .. } => drop(writer.take()),
        }
    }

    /// The reading and the writing direction apart, e.g. to write on another thread. Dropping
    /// the writing one half-closes the connection.
    pub fn split(self) -> (Box<dyn Read + Send>, Box<dyn Write + Send>) {
        match self {
            Raw::Unix(s) => (
                Box::new(s.try_clone().unwrap()),
                Box::new(SocketWriter(Raw::Unix(s))),
            ),
            Raw::Tcp(s) => (
                Box::new(s.try_clone().unwrap()),
                Box::new(SocketWriter(Raw::Tcp(s))),
            ),
            Raw::Shm { reader, writer } => {
                (Box::new(reader), Box::new(writer.expect("not half-closed")))
            }
        }
    }
}

/// A socket's writing direction that half-closes when dropped, as dropping an `ShmWriter` does.
struct SocketWriter(Raw);

impl Write for SocketWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl Drop for SocketWriter {
    fn drop(&mut self) {
        // The peer may have closed already; there is nothing left to tell it then.
        let _ = match &self.0 {
            Raw::Unix(s) => s.shutdown(Shutdown::Write),
            Raw::Tcp(s) => s.shutdown(Shutdown::Write),
            Raw::Shm { .. } => Ok(()),
        };
    }
}

impl Read for Raw {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Raw::Unix(s) => s.read(buf),
            Raw::Tcp(s) => s.read(buf),
            Raw::Shm { reader, .. } => reader.read(buf),
        }
    }
}

impl Write for Raw {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Raw::Unix(s) => s.write(buf),
            Raw::Tcp(s) => s.write(buf),
            Raw::Shm {
                writer: Some(w), ..
            } => w.write(buf),
            Raw::Shm { writer: None, .. } => Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "this connection was half-closed",
            )),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Raw::Unix(s) => s.flush(),
            Raw::Tcp(s) => s.flush(),
            Raw::Shm { writer, .. } => writer.as_mut().map_or(Ok(()), |w| w.flush()),
        }
    }
}
