//! A pair of ring ends as a blocking byte stream (`io::Read` + `io::Write`), so the engine's
//! session code serves a shared-memory connection exactly as it serves a socket.

use crate::shm::ring::{Consumer, Producer, RingError};
use crate::shm::wait::{
    Closer, WaitPolicy, close_consumer, close_producer, notify_readable, notify_writable,
    wait_readable, wait_writable,
};
use std::io::{self, Read, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Whether the peer process is still there (its rendezvous socket open): asked while a wait
/// for it has lasted [`LIVENESS_EVERY`], so a peer that died without closing its rings fails
/// the wait within that time instead of leaving it to run for ever.
pub type Liveness = Arc<dyn Fn() -> bool + Send + Sync>;

/// How long an end waits for its peer before asking [`Liveness`] again.
pub const LIVENESS_EVERY: Duration = Duration::from_millis(100);

fn gone() -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionAborted,
        "the shared-memory peer is gone (its process closed the connection's socket)",
    )
}

/// The deadline of one wait: the caller's, cut to [`LIVENESS_EVERY`] when there is a liveness
/// check to make.
fn slice(deadline: Option<Instant>, alive: &Option<Liveness>) -> Option<Instant> {
    match alive {
        None => deadline,
        Some(_) => {
            let check = Instant::now() + LIVENESS_EVERY;
            Some(deadline.map_or(check, |d| d.min(check)))
        }
    }
}

fn invalid(e: RingError) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

fn timed_out(what: &str, after: Duration) -> io::Error {
    // `WouldBlock`, as a socket with SO_RCVTIMEO/SO_SNDTIMEO reports on Unix.
    io::Error::new(
        io::ErrorKind::WouldBlock,
        format!("shared-memory {what} timed out after {after:?}"),
    )
}

fn past(deadline: Option<Instant>) -> bool {
    deadline.is_some_and(|d| Instant::now() >= d)
}

fn check_timeout(t: Option<Duration>) -> io::Result<()> {
    if t.is_some_and(|t| t.is_zero()) {
        // As std's sockets: a zero timeout would mean "never block", which is not what it says.
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a zero timeout is not allowed",
        ));
    }
    Ok(())
}

/// The reading half: requests on the server, replies on the client. Dropping it closes its
/// ring, so the peer's writes fail instead of waiting for space forever.
pub struct ShmReader {
    rx: Consumer,
    policy: WaitPolicy,
    timeout: Option<Duration>,
    alive: Option<Liveness>,
}

/// The writing half. Dropping it closes its ring: the peer reads what is left, then EOF.
pub struct ShmWriter {
    tx: Producer,
    policy: WaitPolicy,
    timeout: Option<Duration>,
    alive: Option<Liveness>,
}

/// Both halves of a shared-memory connection.
pub struct ShmStream {
    reader: ShmReader,
    writer: ShmWriter,
}

impl ShmStream {
    /// A stream reading `rx` and writing `tx` (as `Segment::server_ends` or `client_ends`
    /// give them), waiting by the default [`WaitPolicy`], with no timeouts.
    pub fn new(rx: Consumer, tx: Producer) -> ShmStream {
        let policy = WaitPolicy::default();
        ShmStream {
            reader: ShmReader {
                rx,
                policy,
                timeout: None,
                alive: None,
            },
            writer: ShmWriter {
                tx,
                policy,
                timeout: None,
                alive: None,
            },
        }
    }

    /// How both halves wait for the peer.
    pub fn set_policy(&mut self, policy: WaitPolicy) {
        self.reader.policy = policy;
        self.writer.policy = policy;
    }

    /// As [`ShmReader::set_read_timeout`].
    pub fn set_read_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        self.reader.set_read_timeout(timeout)
    }

    /// As [`ShmWriter::set_write_timeout`].
    pub fn set_write_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        self.writer.set_write_timeout(timeout)
    }

    /// Asks `alive` whenever a wait for the peer has lasted [`LIVENESS_EVERY`]; once it says
    /// no, reads and writes fail with `ConnectionAborted`. Without it a wait ends only by the
    /// peer closing its rings, or by a timeout.
    pub fn set_liveness(&mut self, alive: Liveness) {
        self.reader.alive = Some(Arc::clone(&alive));
        self.writer.alive = Some(alive);
    }

    /// A handle that closes both rings from anywhere (see [`Closer`]).
    pub fn closer(&self) -> Closer {
        Closer::new(&self.reader.rx, &self.writer.tx)
    }

    /// The halves, for a reader and a writer owned apart (as the session takes them).
    pub fn split(self) -> (ShmReader, ShmWriter) {
        (self.reader, self.writer)
    }
}

impl ShmReader {
    /// How long a read waits for a first byte before failing with `WouldBlock`; `None` waits
    /// for ever (the peer closing still ends the wait). A zero timeout is refused.
    pub fn set_read_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        check_timeout(timeout)?;
        self.timeout = timeout;
        Ok(())
    }

    fn take(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.rx.read(buf).map_err(invalid)?;
        if n > 0 {
            notify_writable(&self.rx);
        }
        Ok(n)
    }
}

impl Read for ShmReader {
    /// Blocks until at least one byte is there, then returns what is; `Ok(0)` once the ring is
    /// closed and drained.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        // Bytes already there cost no clock read.
        let n = self.take(buf)?;
        if n > 0 {
            return Ok(n);
        }
        let deadline = self.timeout.map(|t| Instant::now() + t);
        loop {
            if self.rx.is_closed() {
                // The peer's last bytes were published before its close, so seeing the close
                // makes them visible: drain them before reporting the end.
                return self.take(buf);
            }
            let until = slice(deadline, &self.alive);
            if !wait_readable(&self.rx, self.policy, until).map_err(invalid)? {
                if past(deadline) {
                    return Err(timed_out("read", self.timeout.unwrap_or_default()));
                }
                if self.alive.as_ref().is_some_and(|alive| !alive()) {
                    // Bytes it published before it went are still ours to read.
                    let n = self.take(buf)?;
                    return if n > 0 { Ok(n) } else { Err(gone()) };
                }
            }
            let n = self.take(buf)?;
            if n > 0 {
                return Ok(n);
            }
        }
    }
}

impl Drop for ShmReader {
    fn drop(&mut self) {
        close_consumer(&self.rx);
    }
}

impl ShmWriter {
    /// How long a write waits for space before failing with `WouldBlock` (or returning what
    /// it wrote so far); `None` waits for ever. A zero timeout is refused.
    pub fn set_write_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        check_timeout(timeout)?;
        self.timeout = timeout;
        Ok(())
    }
}

impl ShmWriter {
    /// Writes all of `parts` (`total` bytes), in pieces as the peer frees space, each piece
    /// published with one index store. Fails with `BrokenPipe` once the ring is closed.
    fn send<P: std::ops::Deref<Target = [u8]>>(
        &mut self,
        parts: &[P],
        total: usize,
    ) -> io::Result<usize> {
        let mut deadline = None;
        let mut done = 0;
        while done < total {
            if self.tx.is_closed() {
                break;
            }
            let n = self.tx.write_parts(parts, done).map_err(invalid)?;
            if n > 0 {
                done += n;
                notify_readable(&self.tx);
                continue;
            }
            // Only a full ring costs a clock read.
            let deadline =
                *deadline.get_or_insert_with(|| self.timeout.map(|t| Instant::now() + t));
            if !wait_writable(&self.tx, self.policy, slice(deadline, &self.alive))
                .map_err(invalid)?
            {
                let dead = !past(deadline) && self.alive.as_ref().is_some_and(|alive| !alive());
                if !past(deadline) && !dead {
                    continue;
                }
                if done > 0 {
                    return Ok(done);
                }
                return Err(if dead {
                    gone()
                } else {
                    timed_out("write", self.timeout.unwrap_or_default())
                });
            }
        }
        if done == 0 && total > 0 {
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the shared-memory peer closed the connection",
            ));
        }
        Ok(done)
    }
}

impl Write for ShmWriter {
    /// Writes all of `buf`, in pieces as the peer frees space, so any size streams through a
    /// ring of any capacity. Fails with `BrokenPipe` once the ring is closed.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.send(&[buf], buf.len())
    }

    /// As `write`, over all of `bufs`: a frame's head and body are published together, so the
    /// peer wakes once for the whole frame.
    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        let total = bufs.iter().map(|b| b.len()).sum();
        self.send(bufs, total)
    }

    /// Nothing to do: every write publishes its bytes before returning.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for ShmWriter {
    fn drop(&mut self) {
        close_producer(&self.tx);
    }
}

impl Read for ShmStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.reader.read(buf)
    }
}

impl Write for ShmStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer.write(buf)
    }

    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        self.writer.write_vectored(bufs)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer.flush()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::shm::ring::ring_pair;
    use std::thread;

    /// Two connected streams over heap rings.
    fn pair(cap: u64) -> (ShmStream, ShmStream) {
        let (a_tx, b_rx) = ring_pair(cap).unwrap();
        let (b_tx, a_rx) = ring_pair(cap).unwrap();
        (ShmStream::new(a_rx, a_tx), ShmStream::new(b_rx, b_tx))
    }

    #[test]
    fn a_write_larger_than_the_ring_streams_through() {
        let (mut a, mut b) = pair(16);
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 31 % 251) as u8).collect();
        let want = data.clone();
        let t = thread::spawn(move || a.write_all(&data).unwrap());
        let mut got = vec![0u8; want.len()];
        b.read_exact(&mut got).unwrap();
        t.join().unwrap();
        assert_eq!(got, want);
    }

    #[test]
    fn a_vectored_write_larger_than_the_ring_streams_through_in_order() {
        let (mut a, mut b) = pair(16);
        let head = 10_000u32.to_le_bytes();
        let body: Vec<u8> = (0..10_000u32).map(|i| (i * 17 % 253) as u8).collect();
        let want: Vec<u8> = [&head[..], &body].concat();
        let t = thread::spawn(move || {
            let bufs = [io::IoSlice::new(&head), io::IoSlice::new(&body)];
            a.write_vectored(&bufs).unwrap()
        });
        let mut got = vec![0u8; want.len()];
        b.read_exact(&mut got).unwrap();
        assert_eq!(t.join().unwrap(), want.len(), "all of it, as `write` does");
        assert_eq!(got, want);
    }

    #[test]
    fn eof_after_the_last_bytes_and_broken_pipe_after_a_close() {
        let (mut a, mut b) = pair(16);
        a.write_all(b"last").unwrap();
        let (a_reader, a_writer) = a.split();
        drop(a_writer);
        let mut got = Vec::new();
        b.read_to_end(&mut got).unwrap();
        assert_eq!(got, b"last");
        drop(a_reader);
        let e = b.write(b"x").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::BrokenPipe);
    }

    #[test]
    fn timeouts_fail_like_a_socket() {
        let (mut a, mut b) = pair(16);
        b.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        let e = b.read(&mut [0; 4]).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
        a.set_write_timeout(Some(Duration::from_millis(20)))
            .unwrap();
        assert_eq!(
            a.write(&[1; 40]).unwrap(),
            16,
            "a partial write, then the timeout"
        );
        assert_eq!(a.write(&[1]).unwrap_err().kind(), io::ErrorKind::WouldBlock);
        assert!(b.set_read_timeout(Some(Duration::ZERO)).is_err());
    }

    #[test]
    fn a_corrupt_index_is_invalid_data() {
        let (a_tx, b_rx) = ring_pair(16).unwrap();
        let (b_tx, _a_rx) = ring_pair(16).unwrap();
        let tail = &a_tx.header().tail.0;
        tail.store(1 << 40, crate::shm::sync::Ordering::SeqCst);
        let mut b = ShmStream::new(b_rx, b_tx);
        let e = b.read(&mut [0; 4]).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert!(e.to_string().contains("tail 1099511627776"), "{e}");
    }
}
