//! A server TLS session as a byte stream: one rustls session shared by its connection's reader
//! and writer and by the accept loop, which still writes (encrypted) timeout frames.

use crate::tls::TlsAcceptor;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex, MutexGuard};

/// A fresh server session over an accepted TCP stream; the handshake runs on first read.
pub(super) fn accept(acceptor: &TlsAcceptor, sock: TcpStream) -> io::Result<Arc<ServerTls>> {
    let conn =
        rustls::ServerConnection::new(Arc::clone(acceptor.config())).map_err(io::Error::other)?;
    Ok(Arc::new(ServerTls {
        conn: Mutex::new(conn),
        sock,
    }))
}

/// One server TLS session, shared by its connection's reader and writer and the accept loop.
///
/// The lock is never held across a blocking socket read, so the accept loop can still write an
/// encrypted timeout frame to a connection whose thread waits for bytes.
pub(super) struct ServerTls {
    conn: Mutex<rustls::ServerConnection>,
    sock: TcpStream,
}

impl ServerTls {
    fn lock(&self) -> MutexGuard<'_, rustls::ServerConnection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The plaintext reader and writer of this session.
    pub(super) fn split(self: &Arc<Self>) -> (TlsReader, TlsWriter) {
        let reader = TlsReader {
            tls: Arc::clone(self),
            // One full TLS record (16 KiB of data plus header and tag) per socket read.
            raw: vec![0; 16 * 1024 + 512],
            start: 0,
            end: 0,
        };
        (reader, TlsWriter(Arc::clone(self)))
    }

    /// The TCP socket under the session (to shut it down).
    pub(super) fn socket(&self) -> &TcpStream {
        &self.sock
    }

    /// Encrypts `bytes` and sends what the socket takes without waiting; if the session is busy
    /// (its thread mid-write) or not yet established, nothing is sent. For the accept loop.
    pub(super) fn send_best_effort(&self, bytes: &[u8]) {
        let Ok(mut conn) = self.conn.try_lock() else {
            return;
        };
        if conn.is_handshaking() {
            return;
        }
        let _ = conn.writer().write_all(bytes);
        let mut out = NoWait(&self.sock);
        while conn.wants_write() {
            if conn.write_tls(&mut out).is_err() {
                break;
            }
        }
    }
}

/// A socket writer that never blocks: a full send buffer is an error.
struct NoWait<'a>(&'a TcpStream);

impl Write for NoWait<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        use rustix::net::{SendFlags, send};
        Ok(send(
            self.0,
            buf,
            SendFlags::DONTWAIT | SendFlags::NOSIGNAL,
        )?)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Sends every TLS record the session has queued (handshake messages, alerts, data).
fn flush_tls(conn: &mut rustls::ServerConnection, mut sock: &TcpStream) -> io::Result<()> {
    while conn.wants_write() {
        conn.write_tls(&mut sock)?;
    }
    Ok(())
}

/// The plaintext side of a server session for reading: decrypts as bytes arrive, and drives the
/// handshake on first use. A TLS protocol error (a plaintext client, a bad record) is an
/// [`io::ErrorKind::InvalidData`] error, which ends that connection only.
pub(super) struct TlsReader {
    tls: Arc<ServerTls>,
    /// Bytes read from the socket and not yet given to rustls.
    raw: Vec<u8>,
    start: usize,
    end: usize,
}

impl Read for TlsReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            {
                let mut conn = self.tls.lock();
                loop {
                    match conn.reader().read(buf) {
                        Ok(n) => return Ok(n),
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                        Err(e) => return Err(e),
                    }
                    if self.start == self.end {
                        break;
                    }
                    let mut pending = &self.raw[self.start..self.end];
                    let taken = conn.read_tls(&mut pending)?;
                    self.start += taken;
                    if let Err(e) = conn.process_new_packets() {
                        // Tell the peer why (an alert), then end the connection.
                        let _ = flush_tls(&mut conn, &self.tls.sock);
                        return Err(io::Error::new(io::ErrorKind::InvalidData, e));
                    }
                    flush_tls(&mut conn, &self.tls.sock)?;
                    if taken == 0 && self.start < self.end {
                        return Err(io::Error::new(
                            io::ErrorKind::InvalidData,
                            "TLS session takes no more bytes",
                        ));
                    }
                }
            }
            // Nothing decrypted is waiting: wait for the socket without holding the session.
            let n = (&self.tls.sock).read(&mut self.raw)?;
            self.start = 0;
            self.end = n;
            if n == 0 {
                // End of stream: rustls then reports a clean close or an unexpected EOF.
                let mut conn = self.tls.lock();
                conn.read_tls(&mut io::empty())?;
                if let Err(e) = conn.process_new_packets() {
                    return Err(io::Error::new(io::ErrorKind::InvalidData, e));
                }
                return match conn.reader().read(buf) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(0),
                    other => other,
                };
            }
        }
    }
}

/// The plaintext side of a server session for writing: each write is encrypted and sent
/// before it returns (the socket's send timeout bounds a client that does not read).
pub(super) struct TlsWriter(Arc<ServerTls>);

impl Write for TlsWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut conn = self.0.lock();
        let n = conn.writer().write(buf)?;
        flush_tls(&mut conn, &self.0.sock)?;
        Ok(n)
    }

    /// A reply's head and body go out in the same records, as one send where they fit.
    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        let mut conn = self.0.lock();
        let n = conn.writer().write_vectored(bufs)?;
        flush_tls(&mut conn, &self.0.sock)?;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        let mut conn = self.0.lock();
        flush_tls(&mut conn, &self.0.sock)
    }
}
