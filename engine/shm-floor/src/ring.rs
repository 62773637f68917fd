//! The engine's own shared-memory layer, raw: a `hullsweep_engine::shm` segment (two SPSC byte
//! rings on a sealed memfd) read and written as an `ShmStream` with `WaitPolicy::Busy`, the
//! server echoing every message back. No session, no protocol frames: only the transport.

use std::fs::File;
use std::hint::black_box;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::time::Instant;

use hullsweep_engine::shm::{MIN_RING_CAPACITY, Segment, ShmStream, WaitPolicy};

use crate::poll::{Result, STALL};
use crate::shm::nanos;

/// One end of the ring pair, as a busy-polling byte stream.
pub struct Rings {
    stream: ShmStream,
}

/// Each ring's capacity: one page, or the largest message rounded up to a power of two.
fn capacity(max_payload: usize) -> u64 {
    (max_payload as u64)
        .next_power_of_two()
        .max(MIN_RING_CAPACITY)
}

/// A stream that busy-polls and, like `poll::spin`, gives up on a peer silent for `STALL`.
fn stream(segment: Segment, client: bool) -> Result<ShmStream> {
    let (rx, tx) = if client {
        segment.client_ends()
    } else {
        segment.server_ends()
    };
    let mut stream = ShmStream::new(rx, tx);
    stream.set_policy(WaitPolicy::Busy);
    stream.set_read_timeout(Some(STALL))?;
    stream.set_write_timeout(Some(STALL))?;
    Ok(stream)
}

impl Rings {
    /// The parent's side: creates the segment for messages up to `max_payload` bytes and takes
    /// the client ends. Also returns a duplicate of the segment's fd without `FD_CLOEXEC` (the
    /// segment's own is close-on-exec), for the child to inherit; close it once it has spawned.
    pub fn create(max_payload: usize) -> Result<(Rings, OwnedFd)> {
        let (segment, fd) = Segment::create(capacity(max_payload))?;
        // dup(2) never sets FD_CLOEXEC on the new descriptor.
        let inheritable = rustix::io::dup(&fd)?;
        drop(fd);
        let stream = stream(segment, true)?;
        Ok((Rings { stream }, inheritable))
    }

    /// The child's side: opens (and checks) the segment inherited as `fd`, through a fresh open
    /// of `/proc/self/fd/<fd>` as the floor's memfd is, and takes the server ends.
    pub fn open_inherited(fd: i32) -> Result<Rings> {
        let path = format!("/proc/self/fd/{fd}");
        let file = File::options().read(true).write(true).open(&path)?;
        let segment = Segment::open(&file).map_err(|e| format!("{path}: {e}"))?;
        Ok(Rings {
            stream: stream(segment, false)?,
        })
    }

    /// Client side: `warmup + trips` round trips of `payload` bytes each (written whole, then
    /// read back exactly); the timed ones are pushed to `out`. Each message carries its trip
    /// number and is checked against the echo outside the timing.
    pub fn client(
        &mut self,
        payload: usize,
        warmup: usize,
        trips: usize,
        out: &mut Vec<u64>,
    ) -> Result<()> {
        let mut src = vec![0xA5u8; payload];
        let mut dst = vec![0u8; payload];
        let stamp = payload.min(8);
        for i in 0..warmup + trips {
            src[..stamp].copy_from_slice(&(i as u64).to_le_bytes()[..stamp]);
            let t0 = Instant::now();
            self.stream.write_all(&src)?;
            self.stream.read_exact(&mut dst)?;
            let dt = t0.elapsed();
            black_box(&dst);
            if dst != src {
                return Err(format!("trip {i}: the echo is not the request").into());
            }
            if i >= warmup {
                out.push(nanos(dt));
            }
        }
        Ok(())
    }

    /// Server side: echoes `total` messages of `payload` bytes through a local buffer.
    pub fn server(&mut self, payload: usize, total: usize) -> Result<()> {
        let mut buf = vec![0u8; payload];
        for _ in 0..total {
            self.stream.read_exact(&mut buf)?;
            self.stream.write_all(&buf)?;
        }
        Ok(())
    }
}
